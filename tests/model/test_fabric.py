"""Fabrics: the model, its timing rule, v2 schedule files, scheduling, bounds and rescheduling on them."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ocsched
from helpers import D3_SKEWED as D3
from ocsched import schedule, validate
from ocsched.assign import bff_timeline, order_for_partial
from ocsched.bounds import fabric_line_bound, line_bound, lower_bound
from ocsched.errors import InfeasibleError, InvalidInputError
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.io import fabric_from_options, read_fabric, read_schedule, write_schedule
from ocsched.model import Configuration, Demand, Schedule
from ocsched.reschedule import LinkFailure, SwitchFailure, reschedule
from ocsched.schedulers import SCHEDULERS, fabric_features
from ocsched.timing import partial_starts, switch_violations
from strategies import demands, fabrics

DATA = Path(__file__).parents[1] / "data" / "schedules"
HETERO = Fabric.from_deltas([0.1, 0.1, 1.0, 1.0], rates=[1.0, 2.0, 1.0, 0.5])


def conf(start: float, duration: float, circuits: list[tuple[int, int]], ports: int = 3) -> Configuration:
    return Configuration.from_circuits(start, duration, circuits, ports=ports)


def kinds(report: ocsched.ValidationReport) -> list[str]:
    return [v.kind for v in report.violations]


# --- the model ---


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (lambda: Switch(-1.0), "switch delta"),
        (lambda: Switch(0.1, rate=0.0), "switch rate"),
        (lambda: Switch(float("nan")), "switch delta"),
        (lambda: SwitchDown(0, 2.0, 1.0), "must end after it starts"),
        (lambda: LinkDown(-1, 0), "failed link port"),
        (lambda: LinkDown(0, 0, start=-1.0), "failed link start"),
        (lambda: Fabric(()), "non-empty"),
        (lambda: Fabric((Switch(0.1),), down=(SwitchDown(1, 0.0),)), "outside 0..0"),
        (lambda: Fabric((Switch(0.1),), failed_links=(LinkDown(0, 2),)), "outside 0..0"),
        (lambda: Fabric((Switch(0.1),), model="sometimes"), "model"),
        (lambda: Fabric.from_dict({"switches": [{"delta": 0.1, "speed": 2}]}), "unknown key 'speed'"),
        (lambda: Fabric.from_dict({"switches": []}), "at least one switch"),
        (lambda: Fabric.from_dict({"switches": [{"rate": 2}]}), "delta` is missing"),
    ],
)
def test_bad_fabrics_are_refused(make: Any, pattern: str) -> None:
    with pytest.raises(InvalidInputError, match=pattern):
        make()


def test_fabric_dict_round_trip_and_features() -> None:
    f = Fabric(
        (Switch(0.1), Switch(0.2, rate=2.0)),
        (SwitchDown(1, 0.5, 1.0), SwitchDown(0, 3.0)),
        (LinkDown(2, 0, start=0.25),),
        model="partial",
    )
    assert Fabric.from_dict(json.loads(json.dumps(f.to_dict()))) == f
    assert fabric_features(f) == {"heterogeneous", "failures", "partial"}
    assert f.windows(0) == [(3.0, math.inf)]
    assert f.failed_ports(0) == {2: 0.25}


def test_read_fabric_and_cli_options(tmp_path: Path) -> None:
    p = tmp_path / "fabric.toml"
    p.write_text(
        'model = "partial"\n[[switches]]\ndelta = 0.01\ncount = 2\n[[switches]]\ndelta = 0.1\nrate = 2.0\n'
        "[[down]]\nswitch = 1\nstart = 0.5\n[[failed_links]]\nport = 3\nswitch = 0\n"
    )
    f = read_fabric(p)
    assert f.deltas == (0.01, 0.01, 0.1) and f.rates == (1.0, 1.0, 2.0) and f.model == "partial"
    assert f.down == (SwitchDown(1, 0.5),) and f.failed_links == (LinkDown(3, 0),)
    assert fabric_from_options(fabric=p, switches=3) == f
    assert fabric_from_options(fabric=p, reconfiguration="all-stop").model == "all-stop"
    assert fabric_from_options(delta="0.01,0.01,0.04,0.04", switches=4).deltas == (0.01, 0.01, 0.04, 0.04)
    assert fabric_from_options(switches=3, delta="0.5") == Fabric.uniform(3, 0.5)
    with pytest.raises(InvalidInputError, match="`--switches` = 2 but the fabric file has 3"):
        fabric_from_options(fabric=p, switches=2)
    with pytest.raises(InvalidInputError, match="lists 2 delays"):
        fabric_from_options(delta="0.1,0.2", switches=3)
    with pytest.raises(InvalidInputError, match="either `--fabric` or `--delta`"):
        fabric_from_options(fabric=p, delta="0.1")
    with pytest.raises(InvalidInputError, match="comma-separated"):
        fabric_from_options(delta="0.1,x")
    with pytest.raises(InvalidInputError, match="reconfiguration"):
        fabric_from_options(switches=2, delta=0.1, reconfiguration="some")
    (tmp_path / "bad.toml").write_text("switches = [")
    with pytest.raises(InvalidInputError, match="could not be read as TOML"):
        read_fabric(tmp_path / "bad.toml")


# --- the timing rule ---


def c4(t: float, w: float, circ: list[tuple[int, int]]) -> tuple[float, float, Any, Any]:
    return (t, w, np.array([i for i, _ in circ], np.int64), np.array([j for _, j in circ], np.int64))


def test_partial_rule_kept_circuits_and_dark_ports() -> None:
    a = c4(0.5, 1.0, [(0, 1), (1, 0)])
    # keeps 0->1, lights 2->3 (ports unused so far): may start right after a
    assert switch_violations([a, c4(1.5, 1.0, [(0, 1), (2, 3)])], 0.5, model="partial") == []
    # lights 1->2 although input 1 was lit until 1.5: needs 2.0
    bad = switch_violations([a, c4(1.5, 1.0, [(1, 2)])], 0.5, model="partial")
    assert [k for k, kind, _ in bad] == [1] and bad[0][1] == "timing"
    assert switch_violations([a, c4(2.0, 1.0, [(1, 2)])], 0.5, model="partial") == []
    # the same under all-stop always needs the delay
    assert switch_violations([a, c4(1.5, 1.0, [(0, 1), (2, 3)])], 0.5)
    # a down window in between resets every port, and nothing may run over it
    assert switch_violations([a, c4(1.5, 1.0, [(0, 1)])], 0.5, model="partial", windows=[(1.5, 1.6)])
    assert [x[1] for x in switch_violations([c4(0.5, 1.0, [(0, 1)])], 0.5, windows=[(1.0, 2.0)])] == ["down"]
    assert [x[1] for x in switch_violations([a], 0.5, failed_ports={1: 1.0})] == ["link"]
    assert switch_violations([a], 0.5, failed_ports={1: 1.5}) == []


def test_partial_starts_are_never_later_than_all_stop() -> None:
    rng = np.random.default_rng(0)
    perms = [rng.permutation(6)[: rng.integers(1, 7)] for _ in range(8)]
    circ = [(np.arange(p.size, dtype=np.int64), p.astype(np.int64)) for p in perms]
    durs = list(rng.uniform(0.1, 1.0, size=8))
    starts = partial_starts(circ, durs, 0.3)
    allstop = np.cumsum([0.3 + w for w in durs]) - np.array(durs)
    assert np.all(np.array(starts) <= allstop + 1e-12)
    confs = [(t, w, i, j) for t, w, (i, j) in zip(starts, durs, circ, strict=True)]
    assert switch_violations(confs, 0.3, model="partial") == []


def test_order_for_partial_keeps_shared_circuits_adjacent() -> None:
    perms = np.array([[1, 2, 0], [2, 0, 1], [1, 0, 2]])
    order = order_for_partial([(0, 3.0), (1, 2.0), (2, 1.0)], perms)
    assert [l for l, _ in order] == [0, 2, 1]  # 0 and 2 share 0->1


# --- schedule files ---

GOLDEN = sorted(DATA.glob("v1_*.json"))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_v1_files_written_before_fabrics_read_back_byte_for_byte(path: Path) -> None:
    text = path.read_text()
    s = Schedule.from_json(text)
    indent = None if "compact" in path.name else 1
    assert s.to_json(indent=indent) == text
    assert s.fabric is None and s.is_uniform


@pytest.mark.parametrize(
    ("name", "demand", "kw"),
    [
        ("v1_d3_pack.json", "v1_d3.npy", {"switches": 2, "delta": 0.5, "algorithm": "spectra-pack"}),
    ],
)
def test_uniform_schedules_still_write_version_1_as_before(
    name: str, demand: str, kw: dict[str, Any]
) -> None:
    old = json.loads((DATA / name).read_text())
    m = np.load(DATA / demand)
    new = schedule(m, rng=0 if kw["algorithm"] != "baseline" else 1, **kw)
    d = new.to_dict()
    d["meta"] = old["meta"]  # run time and version differ from run to run
    assert json.dumps(d, indent=1) == (DATA / name).read_text()


def test_v2_round_trip_and_schema(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schedule.schema.json").read_text())
    check = jsonschema.Draft202012Validator(schema)
    fab = Fabric(
        (Switch(0.1), Switch(0.5, rate=2.0)),
        (SwitchDown(0, 1.0, 2.0), SwitchDown(1, 9.0)),
        (LinkDown(1, 1, 0.5),),
        model="partial",
    )
    s = schedule(D3, fabric=fab)
    doc = s.to_dict()
    assert doc["version"] == 2 and "delta" not in doc and doc["model"] == "partial"
    assert doc["switches"][1]["rate"] == 2.0 and doc["down"][1]["end"] is None
    check.validate(doc)
    back = read_schedule(write_schedule(s, tmp_path / "s.json"))
    assert back.same_as(s) and back.on_fabric() == fab
    assert validate(back, D3).ok
    for path in GOLDEN:
        check.validate(json.loads(path.read_text()))
    check.validate(schedule(D3, switches=2, delta=0.1).to_dict())
    doc["delta"] = 0.1
    assert not check.is_valid(doc)


def test_v2_reader_errors() -> None:
    doc = schedule(D3, fabric=HETERO).to_dict()
    doc["switches"][0]["rate"] = -1
    with pytest.raises(InvalidInputError, match=r"switches\[0\].*switch rate"):
        Schedule.from_dict(doc)
    doc = schedule(D3, fabric=HETERO).to_dict()
    doc["model"] = "x"
    with pytest.raises(InvalidInputError, match="`model` must be one of"):
        Schedule.from_dict(doc)


def test_reader_and_validate_memory_is_proportional_to_circuits() -> None:
    confs = [{"start": 0.5 + 2 * k, "duration": 1.0, "circuits": [[k, k + 1]]} for k in range(300)]
    doc = {
        "format": "ocsched.schedule",
        "version": 1,
        "ports": 10**6,
        "delta": 0.5,
        "switches": [{"configurations": confs}],
    }
    text = json.dumps(doc)
    assert len(text) < 20_000
    tracemalloc.start()
    s = Schedule.from_json(text)
    r = validate(s, Demand(10**6, np.array([0]), np.array([1]), np.array([1.0])))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert r.ok
    assert peak < 50 * 2**20  # one ports-long array per configuration would be 2.4 GB


# --- validate: scale-free tolerances, switch counts, fabrics ---


def test_tiny_delta_with_back_to_back_configurations_is_reported() -> None:
    scale = 1e-12
    a, b = conf(scale, 2 * scale, [(0, 1), (1, 2), (2, 0)]), conf(3 * scale, scale, [(0, 2), (1, 0), (2, 1)])
    s = Schedule(ports=3, delta=scale, switches=((a, b),))
    assert kinds(validate(s, D3 * scale / 3)) == ["timing"]
    good = Schedule(ports=3, delta=scale, switches=((a, conf(4 * scale, scale, [(0, 2), (1, 0), (2, 1)])),))
    assert validate(good, D3 * scale / 3).ok


def test_delta_far_below_the_makespan_is_enforced() -> None:
    delta = 1e-10  # 1e-10 of a makespan near 1
    a = conf(delta, 1.0, [(0, 1), (1, 2), (2, 0)])
    tight = conf(a.end + delta, 0.5, [(0, 2), (1, 0), (2, 1)])
    early = conf(a.end + 0.5 * delta, 0.5, [(0, 2), (1, 0), (2, 1)])
    d = np.array([[0, 1, 0.5], [0.5, 0, 1], [1, 0.5, 0]])
    assert validate(Schedule(ports=3, delta=delta, switches=((a, tight),)), d).ok
    assert kinds(validate(Schedule(ports=3, delta=delta, switches=((a, early),)), d)) == ["timing"]


def test_overflowing_end_is_a_violation_not_an_infinite_makespan() -> None:
    s = Schedule(ports=3, delta=0.5, switches=((conf(1e308, 1e308, [(0, 1)]),),))
    assert "duration" in kinds(validate(s, [[0, 1, 0], [0, 0, 0], [0, 0, 0]]))


def test_unserved_tolerance_is_relative_to_the_line() -> None:
    d = np.array([[0, 1e-20, 0], [0, 0, 0], [0, 0, 0]])
    s = Schedule(ports=3, delta=0.0, switches=((conf(0.0, 0.5e-20, [(0, 1)]),),))
    assert kinds(validate(s, d)) == ["unserved"]


def test_switch_count_is_checked() -> None:
    s = schedule(D3, switches=3, delta=0.1)
    assert validate(s, D3).ok
    assert kinds(validate(s, D3, switches=2)) == ["switches"]
    assert kinds(validate(s, D3, fabric=Fabric.uniform(2, 0.1))) == ["switches"]
    lying = Schedule(ports=3, delta=0.1, switches=s.switches, meta={"switches": 2})
    assert kinds(validate(lying, D3)) == ["switches"]


def test_validate_against_a_stricter_fabric() -> None:
    s = schedule(D3, fabric=Fabric.from_deltas([0.1, 0.1], rates=[2.0, 1.0]))
    assert validate(s, D3).ok
    r = validate(s, D3, fabric=Fabric.from_deltas([0.5, 0.1], rates=[1.0, 1.0]))
    assert {"delta", "rate"} <= set(kinds(r)) and not r.ok
    p = schedule(D3, fabric=Fabric.uniform(2, 0.1, model="partial"))
    assert "model" in kinds(validate(p, D3, fabric=Fabric.uniform(2, 0.1)))
    down = Fabric.uniform(2, 0.1).with_failures([SwitchDown(0, 0.0)])
    assert "down" in kinds(validate(schedule(D3, switches=2, delta=0.1), D3, fabric=down))


# --- scheduling on fabrics ---


def test_peers_refuse_what_they_cannot_do() -> None:
    with pytest.raises(InvalidInputError, match=r"'naive' does not support heterogeneous .*it supports"):
        schedule(D3, fabric=HETERO, algorithm="naive")
    with pytest.raises(InvalidInputError, match=r"'baseline' does not support failures"):
        schedule(D3, fabric=Fabric.uniform(2, 0.1).with_failures([SwitchDown(0, 1.0)]), algorithm="baseline")
    with pytest.raises(InvalidInputError, match=r"'spectra-partial' needs a fabric with partial"):
        schedule(D3, switches=2, delta=0.1, algorithm="spectra-partial")


def test_nothing_runs_on_a_down_switch_or_over_a_failed_link() -> None:
    fab = Fabric.uniform(4, 0.1).with_failures([SwitchDown(1, 0.0)], [LinkDown(0, 0), LinkDown(2, 2)])
    for alg in ("spectra", "spectra-pack", "spectra-greedy", "eclipse"):
        s = schedule(D3, fabric=fab, algorithm=alg)
        assert validate(s, D3).ok
        assert s.switches[1] == ()
        assert all(0 not in (i, j) for c in s.switches[0] for i, j in c.circuits)
        assert all(2 not in (i, j) for c in s.switches[2] for i, j in c.circuits)


def test_a_port_cut_off_everywhere_is_infeasible() -> None:
    fab = Fabric.uniform(2, 0.1).with_failures(failed_links=[LinkDown(0, 0), LinkDown(0, 1)])
    with pytest.raises(InfeasibleError, match="failed link on every switch"):
        schedule(D3, fabric=fab)


def test_infeasible_names_why_no_switch_can_carry_a_circuit() -> None:
    every = Fabric.uniform(2, 0.1).with_failures([SwitchDown(0, 0.0), SwitchDown(1, 0.0)])
    with pytest.raises(InfeasibleError, match=r"every switch is down for good from t = 0"):
        schedule(D3, fabric=every)
    mixed = Fabric.uniform(2, 0.1).with_failures([SwitchDown(1, 0.0)], [LinkDown(0, 0)])
    with pytest.raises(InfeasibleError, match=r"failed link on every switch that is not down .*\[1\] are"):
        schedule(D3, fabric=mixed)


def test_faster_switches_get_more_work() -> None:
    s = schedule(np.ones((6, 6)) - np.eye(6), fabric=Fabric.from_deltas([0.01, 0.01], rates=[1.0, 4.0]))
    assert validate(s, np.ones((6, 6)) - np.eye(6)).ok
    work = [sum(c.duration * r for c in sw) for sw, r in zip(s.switches, (1.0, 4.0), strict=True)]
    assert work[1] > 2 * work[0]


def test_baseline_splits_by_capacity() -> None:
    m = np.ones((6, 6)) - np.eye(6)
    s = schedule(m, fabric=Fabric.from_deltas([0.01, 0.01], rates=[1.0, 3.0]), algorithm="baseline", rng=0)
    assert validate(s, m).ok
    assert s.makespan < schedule(m, switches=1, delta=0.01, algorithm="baseline").makespan / 3.0


def test_bff_timeline_is_valid_under_partial() -> None:
    rng = np.random.default_rng(3)
    m = rng.random((6, 6)) * (rng.random((6, 6)) < 0.6)
    confs = bff_timeline(m, 0.2)
    assert confs is not None
    s = Schedule(ports=6, delta=0.2, switches=(confs,), fabric=Fabric.uniform(1, 0.2, model="partial"))
    assert validate(s, m).ok
    s_all = Schedule(ports=6, delta=0.2, switches=(confs,))
    assert not validate(s_all, m).ok or len(confs) <= 1  # all-stop cannot host its back-to-back cuts


# --- properties: random fabrics, magnitudes, partial vs all-stop, bounds ---

# exact (a MILP) has its own, smaller random fabrics in tests/exact/test_opt_exact_fabrics.py.
FABRIC_SCHEDULERS = [
    a for a, sch in SCHEDULERS.items() if "failures" in sch.supports and sch.max_ports is None
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_schedules_on_random_fabrics_validate_and_beat_no_bound(data: st.DataObject) -> None:
    m = data.draw(demands(max_n=6, kinds=("dense", "sparse", "skewed", "single", "wide_range")))
    fab = data.draw(fabrics(m.shape[0], float(m.max(initial=0.0))))
    lb = lower_bound(m, fabric=fab)
    runs = [a for a in FABRIC_SCHEDULERS if fabric_features(fab) <= SCHEDULERS[a].supports]
    names = [*runs, "baseline"] if fabric_features(fab) <= {"heterogeneous"} else runs
    if fabric_features(fab) == {"partial"}:
        names = [*names, "spectra-partial"]
    for alg in names:
        s = schedule(m, fabric=fab, algorithm=alg, rng=0)
        r = validate(s, m)
        assert r.ok, (alg, fab, [str(v) for v in r.violations[:3]])
        assert s.makespan >= lb * (1 - 1e-9), (alg, s.makespan, lb)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_partial_is_never_worse_than_all_stop(data: st.DataObject) -> None:
    m = data.draw(demands(max_n=6))
    fab = data.draw(fabrics(m.shape[0], float(m.max(initial=0.0)), models=("all-stop",)))
    for alg in ("spectra", "spectra-pack"):
        a = schedule(m, fabric=fab, algorithm=alg)
        p = schedule(m, fabric=fab.with_model("partial"), algorithm=alg)
        assert validate(p, m).ok
        assert p.makespan <= a.makespan * (1 + 1e-12) + 1e-300


MAGNITUDES = [1e-18, 1e-12, 1e-6, 1.0, 1e6, 1e15]


@pytest.mark.parametrize("algorithm", [a for a in SCHEDULERS if a != "exact"])
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_every_scheduler_at_every_magnitude(algorithm: str, data: st.DataObject) -> None:
    m = data.draw(demands(max_n=5, kinds=("dense", "sparse", "single")))
    scale = data.draw(st.sampled_from(MAGNITUDES))
    dscale = data.draw(st.sampled_from([*MAGNITUDES, 0.0, 10.0 * scale]))
    d = m * scale
    model = "partial" if algorithm == "spectra-partial" else "all-stop"
    s = schedule(d, fabric=Fabric.uniform(2, dscale, model=model), algorithm=algorithm, rng=0)
    r = validate(s, d)
    assert r.ok, [str(v) for v in r.violations[:3]]
    assert s.makespan >= lower_bound(d, switches=2, delta=dscale) * (1 - 1e-9)


def test_mixed_real_units_of_a_100_gbps_fabric() -> None:
    rng = np.random.default_rng(1)
    d = rng.random((8, 8)) * 1e-6 * (rng.random((8, 8)) < 0.5)
    np.fill_diagonal(d, 0.0)
    for alg in ("spectra", "spectra-pack", "baseline", "spectra-greedy"):
        s = schedule(d, fabric=Fabric.from_deltas([1e-5, 1e-5, 2e-5]), algorithm=alg, rng=0)
        assert validate(s, d).ok and s.makespan >= lower_bound(d, fabric=s.on_fabric()) * (1 - 1e-9)


@settings(max_examples=40, deadline=None)
@given(m=demands(max_n=7), s=st.integers(1, 6), dscale=st.sampled_from([0.0, 1e-3, 0.1, 3.0]))
def test_fabric_bound_is_the_line_bound_on_uniform_fabrics(m: Any, s: int, dscale: float) -> None:
    dem = Demand.from_matrix(m)
    d = dscale * float(m.max(initial=1.0))
    ref = line_bound(dem, switches=s, delta=d)
    assert fabric_line_bound(dem, Fabric.uniform(s, d)) == pytest.approx(ref, rel=1e-9, abs=0.0)


def test_fabric_bound_sees_rates_and_lost_switches() -> None:
    dem = Demand.from_matrix(D3)
    base = fabric_line_bound(dem, Fabric.uniform(2, 0.1))
    assert fabric_line_bound(dem, Fabric.from_deltas([0.1, 0.1], rates=[2.0, 2.0])) < base
    lost = Fabric.uniform(2, 0.1).with_failures([SwitchDown(1, 0.0)])
    assert fabric_line_bound(dem, lost) == pytest.approx(lower_bound(D3, switches=1, delta=0.1), rel=1e-9)
    assert math.isinf(fabric_line_bound(dem, Fabric.uniform(1, 0.1).with_failures([SwitchDown(0, 0.0)])))


# --- reschedule ---


@pytest.mark.parametrize("fab", [Fabric.uniform(3, 0.1), HETERO, Fabric.uniform(3, 0.1, model="partial")])
def test_reschedule_after_a_switch_failure(fab: Fabric) -> None:
    rng = np.random.default_rng(0)
    m = rng.random((6, 6))
    np.fill_diagonal(m, 0.0)
    s = schedule(m, fabric=fab, algorithm="spectra-pack")
    at = s.makespan / 2
    new = reschedule(s, m, SwitchFailure(1, at))
    r = validate(new, m)
    assert r.ok, [str(v) for v in r.violations[:3]]
    assert all(c.end <= at for c in new.switches[1])
    kept = [c for c in s.switches[0] if c.end <= at]
    assert all(a.same_as(b) for a, b in zip(kept, new.switches[0], strict=False))
    assert new.meta["failure"] == {"kind": "switch", "at": at, "switch": 1}
    assert Schedule.from_json(new.to_json()).same_as(new)


def test_reschedule_after_a_link_failure() -> None:
    s = schedule(D3, switches=2, delta=0.1)
    new = reschedule(s, D3, LinkFailure(port=0, switch=0, at=0.5))
    assert validate(new, D3).ok
    assert all(c.end <= 0.5 for c in new.switches[0] if any(0 in ij for ij in c.circuits))


def test_reschedule_errors() -> None:
    s = schedule(D3, switches=2, delta=0.1)
    with pytest.raises(InvalidInputError, match=r"outside 0\.\.1"):
        reschedule(s, D3, SwitchFailure(2, 0.1))
    with pytest.raises(InvalidInputError, match="failure time"):
        SwitchFailure(0, -1.0)
    with pytest.raises(InvalidInputError, match="port 7 is outside"):
        reschedule(s, D3, LinkFailure(7, 0, 0.1))
    with pytest.raises(InvalidInputError, match="SwitchFailure or a LinkFailure"):
        reschedule(s, D3, "switch 1")  # type: ignore[arg-type]
    with pytest.raises(InfeasibleError):
        one = schedule(D3, switches=1, delta=0.1)
        reschedule(one, D3, SwitchFailure(0, 0.0))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_reschedule_on_random_fabrics_is_valid(data: st.DataObject) -> None:
    m = data.draw(demands(max_n=6, kinds=("dense", "sparse", "skewed", "single")))
    fab = data.draw(fabrics(m.shape[0], float(m.max(initial=0.0))))
    s = schedule(m, fabric=fab, algorithm="spectra-pack")
    at = data.draw(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.5])) * s.makespan
    b = data.draw(st.integers(0, fab.size - 1))
    failure: SwitchFailure | LinkFailure = data.draw(
        st.sampled_from([SwitchFailure(b, at), LinkFailure(data.draw(st.integers(0, m.shape[0] - 1)), b, at)])
    )
    try:
        new = reschedule(s, m, failure)
    except InfeasibleError:
        return  # the failure cut off every switch or every link of a port that still had demand
    r = validate(new, m)
    assert r.ok, (fab, failure, [str(v) for v in r.violations[:3]])
    assert all(
        a.same_as(c)
        for sw_old, sw_new in zip(s.switches, new.switches, strict=True)
        for a, c in zip([c for c in sw_old if c.end <= at], sw_new, strict=False)
    )


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_compiled_leftover_matches_held_times(data: st.DataObject) -> None:
    # Under all-stop, reschedule finds what is left in one compiled pass; it must equal the
    # residual from timing.held_times and the merged pieces, exactly (same sums, same order).
    from ocsched.model import as_demand
    from ocsched.reschedule import _kept, _leftover, _merge, _pieces, _residual

    dem = as_demand(data.draw(demands(max_n=6)))
    fab = data.draw(fabrics(dem.n, float(dem.values.max(initial=0.0)))).with_model("all-stop")
    sch = schedule(dem, fabric=fab, algorithm="spectra-pack")
    ends = [t for sw in sch.switches for c in sw for t in (c.start, c.end)]
    at = data.draw(st.sampled_from([*ends, 0.0]) | st.floats(0.0, 1.2).map(lambda x: x * sch.makespan))
    dec, short = _leftover(sch, dem, fab, at)
    want = _merge(_pieces(sch, fab, at), dem.n)
    np.testing.assert_array_equal(dec.perms, want.perms)
    np.testing.assert_array_equal(dec.weights, want.weights)
    assert short == (_residual(dem, _kept(sch, at), fab).nnz > 0)


@given(
    d=demands(max_n=6),
    s=st.integers(2, 5),
    rate=st.sampled_from([1.0, 0.5, 2.0]),
    cut=st.floats(0.0, 1.1),
    placement=st.sampled_from(["pack", "equalize"]),
)
@settings(max_examples=80, deadline=None)
def test_compiled_repair_on_identical_switches_matches_placement(
    d: np.ndarray, s: int, rate: float, cut: float, placement: str
) -> None:
    # A switch failure leaving identical switches takes one compiled call for what is left, its
    # placement and its layout; it must give exactly the configurations of the general path.
    from ocsched.assign import _identical_live, place_on_fabric
    from ocsched.model import as_demand
    from ocsched.reschedule import _leftover, _repair_on_identical, degrade

    dem = as_demand(d)
    fab = Fabric.from_deltas([0.1] * s, rates=[rate] + [1.0] * (s - 1))  # switch 0 fails: any rate
    sch = schedule(dem, fabric=fab, algorithm="spectra-pack")
    at = cut * sch.makespan
    degraded = degrade(fab, SwitchFailure(0, at))
    live = _identical_live(degraded, at)
    assert live == list(range(1, s))
    got, splits = _repair_on_identical(sch, dem, degraded, at, live, placement)
    dec, short = _leftover(sch, dem, degraded, at)
    want: tuple[tuple[Configuration, ...], ...] = ((),) * s
    want_splits = 0
    if short:
        want, want_splits = place_on_fabric(dec, degraded, method=placement, t0=at)
    assert [len(sw) for sw in got] == [len(sw) for sw in want] and splits == want_splits
    assert all(a.same_as(b) for x, y in zip(got, want, strict=True) for a, b in zip(x, y, strict=True))


@pytest.mark.parametrize("algorithm", ["spectra", "spectra-pack", "eclipse", "bvn", "solstice", "baseline"])
@pytest.mark.parametrize("value", [5e-324, 1.5e-323, 3e-320])
def test_subnormal_entries_get_their_time_at_any_rate(algorithm: str, value: float) -> None:
    # At rate 2 a subnormal entry's time value / 2 rounds to 0 (or loses a third of itself):
    # the schedule must still serve it, so the time is rounded up.
    d = np.zeros((3, 3))
    d[2, 0] = value
    fab = Fabric((Switch(0.0, rate=2.0), Switch(0.5, rate=0.25)))
    sched = schedule(d, fabric=fab, algorithm=algorithm)
    assert validate(sched, d).ok, validate(sched, d).violations


@pytest.mark.parametrize("algorithm", ["spectra-opt", "exact", "naive"])
@pytest.mark.parametrize("value", [5e-324, 1e-323])
def test_an_all_subnormal_demand_is_scheduled_without_a_traceback(algorithm: str, value: float) -> None:
    # The pieces' refit LP is posed in units of the largest entry: a delay of 0.1 in units of
    # 1e-323 overflows, so the refit is skipped (it only improves). naive's D/s rounds 5e-324
    # away: D's own weights over s, rounded up, are used.
    d = np.zeros((4, 4))
    d[2, 0] = value
    sched = schedule(d, switches=2, delta=0.1, algorithm=algorithm)
    assert validate(sched, d).ok
