"""Every export format reads back into a schedule that validates (single and iteration, any fabric)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocsched import io, schedule, validate
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.iteration import Iteration, Phase
from ocsched.schedulers import SCHEDULERS, fabric_features
from ocsched.sequence import schedule_iteration
from strategies import demands, fabrics, iterations

FORMATS = sorted(io.EXPORTERS)


def _options(fmt: str, sched: object) -> dict[str, object]:
    if fmt == "slices":
        # A quarter of the smallest positive delay (or of the makespan on delay-free fabrics).
        f = io.schedule_fabric(sched)  # type: ignore[arg-type]
        positive = [d for d in f.deltas if d > 0]
        span = sched.makespan  # type: ignore[attr-defined]
        return {"slice_length": (min(positive) if positive else max(span, 1.0)) / 4}
    if fmt == "astra-sim":
        return {"link_rate": "100Gbps", "time_unit": "us"}
    return {}


def _path(tmp: Path, fmt: str, tag: str) -> Path:
    return tmp / f"{tag}-{fmt}{io.EXPORTERS[fmt].extension}"


def _round_trip(sched: object, demand: object, fmt: str, tmp: Path, tag: str) -> object:
    path = _path(tmp, fmt, tag)
    io.export(sched, format=fmt, path=path, **_options(fmt, sched))  # type: ignore[arg-type]
    back = io.read_export(path, format=fmt)
    report = validate(back, demand)
    assert report.ok, (fmt, report.violations[:3])
    return back


def _single(tmp: Path, data: st.DataObject) -> None:
    d = data.draw(demands(max_n=5, kinds=("dense", "sparse", "skewed", "perm_sum", "single")))
    fab = data.draw(fabrics(d.shape[0], float(d.max(initial=0.0))))
    features = fabric_features(fab)
    names = [a for a, s in SCHEDULERS.items() if features <= s.supports and s.requires <= features]
    shown = {"spectra", "spectra-pack", "spectra-partial"}
    algorithm = data.draw(st.sampled_from(sorted(set(names) & shown)))
    sched = schedule(d, fabric=fab, algorithm=algorithm, rng=0)
    for fmt in FORMATS:
        back = _round_trip(sched, d, fmt, tmp, "s")
        if fmt != "slices":  # the same configurations, times and fabric (slices: fitted to the grid)
            assert back.to_dict() == sched.to_dict(), fmt  # type: ignore[attr-defined]


def _iteration(tmp: Path, it: tuple[list[np.ndarray], list[float]], s: int, delta: float) -> None:
    mats, gaps = it
    iteration = Iteration(
        [Phase(m, gap_before=g, name=f"p{k}") for k, (m, g) in enumerate(zip(mats, gaps, strict=True))]
    )
    sched = schedule_iteration(iteration, switches=s, delta=delta)
    for fmt in FORMATS:
        back = _round_trip(sched, iteration, fmt, tmp, "i")
        if fmt != "slices":
            assert back.to_dict() == sched.to_dict(), fmt  # type: ignore[attr-defined]


_FIXTURE = [HealthCheck.function_scoped_fixture]
_ITERATIONS = (iterations(max_phases=3, max_n=5), st.integers(1, 3), st.sampled_from([0.0, 0.05, 0.5]))


@settings(max_examples=4, deadline=None, suppress_health_check=_FIXTURE)
@given(st.data())
def test_single_schedules_round_trip(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    _single(tmp_path_factory.mktemp("single"), data)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURE)
@given(st.data())
def test_single_schedules_round_trip_many(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    _single(tmp_path_factory.mktemp("single"), data)


@settings(max_examples=4, deadline=None, suppress_health_check=_FIXTURE)
@given(*_ITERATIONS)
def test_iteration_schedules_round_trip(
    tmp_path_factory: pytest.TempPathFactory, it: tuple[list[np.ndarray], list[float]], s: int, delta: float
) -> None:
    _iteration(tmp_path_factory.mktemp("iteration"), it, s, delta)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=_FIXTURE)
@given(*_ITERATIONS)
def test_iteration_schedules_round_trip_many(
    tmp_path_factory: pytest.TempPathFactory, it: tuple[list[np.ndarray], list[float]], s: int, delta: float
) -> None:
    _iteration(tmp_path_factory.mktemp("iteration"), it, s, delta)


def test_iteration_schedule_on_a_fabric_round_trips(tmp_path: Path) -> None:
    ring = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    iteration = Iteration([Phase(ring, name="a"), Phase(np.array(ring).T * 2.0, gap_before=0.3, name="b")])
    fab = Fabric.from_deltas([0.1, 0.2], rates=[2.0, 0.5])
    sched = schedule_iteration(iteration, fabric=fab)
    for fmt in FORMATS:
        _round_trip(sched, iteration, fmt, tmp_path, "f")


def test_oxc_orders_keep_circuits_and_count_recourse(tmp_path: Path) -> None:
    from ocsched.model.recourse import recourse

    ring = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    iteration = Iteration([Phase(ring, name="a"), Phase(ring, gap_before=0.3, name="b")])
    sched = schedule_iteration(iteration, switches=1, delta=0.1)
    res = io.export(sched, format="oxc-orders", path=tmp_path / "o.json")
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["recourse"] == res.info["recourse"] == recourse(sched)
    for order in doc["orders"][1:]:  # the same ring twice: nothing to change at the boundary
        assert order["delete"] == [] and order["add"] == []
    assert sum(len(o["delete"]) + len(o["add"]) for o in doc["orders"]) == doc["recourse"]


def test_chrome_trace_has_tracks_slices_and_microseconds(tmp_path: Path) -> None:
    from ocsched.fabric import LinkDown, Switch, SwitchDown

    fab = Fabric((Switch(0.5, 1.0), Switch(0.5, 2.0)), (SwitchDown(1, 0.0, 0.2),), (LinkDown(0, 1, 0.0),))
    d = [[0, 3, 1], [1, 0, 2], [2, 2, 0]]
    sched = schedule(d, fabric=fab)
    io.export(sched, format="chrome-trace", path=tmp_path / "t.json", time_unit="ms")
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    confs = [e for e in events if e.get("name", "").startswith("configuration")]
    assert len(confs) == sched.num_configurations
    c = confs[0]
    conf = sched.switches[c["tid"]][c["args"]["configuration"]]
    assert c["ts"] == pytest.approx(conf.start * 1e3) and c["dur"] == pytest.approx(conf.duration * 1e3)
    assert {e["name"] for e in events} >= {"reconfigure", "down", "link 0 fails", "thread_name"}
    # served in args is the validator's credit: rate 2 on switch 1.
    rate = fab.switches[c["tid"]].rate
    assert c["args"]["served"] == pytest.approx([rate * conf.duration] * len(c["args"]["circuits"]))


def test_chrome_trace_merges_a_profiler_trace(tmp_path: Path) -> None:
    kineto = {
        "traceEvents": [{"ph": "X", "name": "ncclKernel", "pid": 0, "tid": 7, "ts": 5000.0, "dur": 10.0}],
        "distributedInfo": {"rank": 0},
    }
    (tmp_path / "k.json").write_text(json.dumps(kineto))
    sched = schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    io.export(
        sched, format="chrome-trace", path=tmp_path / "m.json", merge=tmp_path / "k.json", time_unit="us"
    )
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["distributedInfo"] == {"rank": 0}
    assert doc["traceEvents"][0]["name"] == "ncclKernel"
    first = min(e["ts"] for e in doc["traceEvents"] if e.get("cat") == "ocsched")
    assert first == 5000.0  # the schedule starts where the profiler trace does
    assert validate(io.read_export(tmp_path / "m.json", format="chrome-trace"), [[0, 1], [1, 0]]).ok


def test_slices_grid_is_whole_slices_and_dark_while_reconfiguring(tmp_path: Path) -> None:
    d = np.array([[0, 1.3, 0.7], [0.6, 0, 1.1], [1.0, 0.9, 0]])
    sched = schedule(d, switches=2, delta=0.4)
    res = io.export(sched, format="slices", path=tmp_path / "g.txt", slice_length=0.1)
    lines = (tmp_path / "g.txt").read_text().splitlines()
    n, _, s, _ = (int(x) for x in lines[0].split())
    total = int(lines[1].split()[0])
    grid = np.array([ln.split() for ln in lines[2:]], dtype=np.int64).reshape(total, n, s)
    assert total == len(lines) - 2 and (grid[:4] == -1).all()  # 4 dark slices of 0.1 first
    back = io.read_export(tmp_path / "g.txt", format="slices")
    for sw in back.switches:  # type: ignore[attr-defined]
        for c in sw:
            assert (
                abs(c.start / 0.1 - round(c.start / 0.1)) < 1e-9
                and abs(c.duration / 0.1 - round(c.duration / 0.1)) < 1e-9
            )
    assert res.info["quantization_loss"] == pytest.approx(back.makespan / sched.makespan - 1)  # type: ignore[attr-defined]
    assert validate(back, d).ok


def test_fitting_loses_no_more_than_rounding_up() -> None:
    from ocsched.io.exports.slices import fit_to_grid

    rng = np.random.default_rng(3)
    d = rng.random((12, 12))
    np.fill_diagonal(d, 0)
    sched = schedule(d, switches=3, delta=0.2)
    _, fit = fit_to_grid(sched, 0.05)
    _, naive = fit_to_grid(sched, 0.05, method="round-up")
    assert fit["quantization_loss"] <= naive["quantization_loss"]


def test_bad_export_arguments_name_themselves(tmp_path: Path) -> None:
    sched = schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    with pytest.raises(InvalidInputError, match=r"`format` must be one of"):
        io.export(sched, format="pdf", path=tmp_path / "x")
    with pytest.raises(InvalidInputError, match=r"`slice_length` must be a positive"):
        io.export(sched, format="slices", path=tmp_path / "x", slice_length=-1.0)
    with pytest.raises(InvalidInputError, match="`merge` is not an option of format 'oxc-orders'"):
        io.export(sched, format="oxc-orders", path=tmp_path / "x", merge="k.json")
    with pytest.raises(InvalidInputError, match="link_rate"):
        io.export(sched, format="astra-sim", path=tmp_path / "x")
    with pytest.raises(InvalidInputError, match=r"not an ocsched\.oxc-orders file"):
        (tmp_path / "y.json").write_text("{}")
        io.read_export(tmp_path / "y.json", format="oxc-orders")
