"""Circuit export: what each row says it serves is what the validator credits to its entry.

``served`` is the switch's rate times the time the circuit is lit, the partial model's kept
circuits lit through the gaps included; iteration schedules export with a phase column.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

import ocsched
from helpers import conf, run
from ocsched import io, schedule, validate
from ocsched.fabric import Fabric
from ocsched.iteration import Iteration, IterationSchedule, Phase
from ocsched.model import Schedule
from ocsched.schedulers import SCHEDULERS, fabric_features
from ocsched.sequence import schedule_iteration
from strategies import demands, fabrics


def _served(table: dict[str, NDArray[np.float64]], n: int) -> NDArray[np.float64]:
    """The exported ``served`` summed per entry (src, dst), as a dense n x n matrix."""
    out = np.zeros((n, n))
    np.add.at(out, (table["src"], table["dst"]), table["served"])
    return out


def assert_served_is_what_validate_credits(sched: Schedule) -> None:
    """The exported sums, taken as a demand, validate; any entry asking for more does not.

    The validator is the reference: it credits each entry rate x held time. A demand equal to
    the exported sums must be served exactly (so the export claims no more than is credited),
    and raising any one entry by 1e-6 of its line must leave it unserved (so it claims no less).
    """
    n = sched.ports
    got = _served(io.circuit_table(sched), n)
    np.fill_diagonal(got, 0.0)  # a port's circuit to itself serves no demand
    report = validate(sched, got)
    assert report.ok, report.violations[:3]
    lines = np.maximum(got.sum(axis=1)[:, None], got.sum(axis=0)[None, :])
    for i, j in zip(*np.nonzero(got), strict=True):
        more = got.copy()
        more[i, j] += 1e-6 * lines[i, j]
        bad = validate(sched, more)
        assert not bad.ok and any(v.kind == "unserved" for v in bad.violations), (i, j)


def test_served_counts_the_switch_rate() -> None:
    # Rate-2 switches: D = 3 is served by circuits held 0.75 each on two switches.
    fab = Fabric.from_deltas([0.1, 0.1], rates=[2.0, 2.0])
    sched = schedule([[0, 3], [0, 0]], fabric=fab)
    table = io.circuit_table(sched)
    assert table["served"].sum() == pytest.approx(3.0)
    assert table["served"].tolist() == pytest.approx(
        [2.0 * (e - s) for s, e in zip(table["start"], table["end"], strict=True)]
    )
    assert_served_is_what_validate_credits(sched)


def test_served_under_partial_includes_the_gap_a_kept_circuit_is_lit() -> None:
    # Circuit (0, 1) is kept from the first configuration to the second: lit 1 + 0.5 + 1.
    sw = (conf(0.5, 1.0, [1, -1]), conf(2.0, 1.0, [1, -1]))
    fab = Fabric.uniform(1, 0.5, model="partial")
    sched = Schedule(ports=2, delta=0.5, switches=(sw,), fabric=fab)
    table = io.circuit_table(sched)
    assert table["served"].tolist() == [1.0, 1.5]
    assert_served_is_what_validate_credits(sched)
    # All-stop: the same configurations serve their durations only.
    stop = Schedule(ports=2, delta=0.5, switches=(sw,), fabric=Fabric.uniform(1, 0.5))
    assert io.circuit_table(stop)["served"].tolist() == [1.0, 1.0]


@settings(max_examples=30)
@given(st.data())
def test_exported_served_is_what_each_entry_gets(data: st.DataObject) -> None:
    d = data.draw(demands(max_n=5, kinds=("dense", "sparse", "skewed", "perm_sum", "single", "ties")))
    fab = data.draw(fabrics(d.shape[0], float(d.max(initial=0.0))))
    features = fabric_features(fab)
    names = [a for a, s in SCHEDULERS.items() if features <= s.supports and s.requires <= features]
    shown = {"spectra", "spectra-pack", "spectra-partial"}
    algorithm = data.draw(st.sampled_from(sorted(set(names) & shown)))
    sched = schedule(d, fabric=fab, algorithm=algorithm, rng=0)
    assert validate(sched, d).ok
    # Every entry gets at least its demand, and exactly what the validator credits it.
    got = _served(io.circuit_table(sched), d.shape[0])
    assert np.all(got >= d * (1 - 1e-9) - 1e-12 * max(1.0, float(d.max(initial=0.0))))
    assert_served_is_what_validate_credits(sched)


def test_parquet_export_has_the_same_served(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    fab = Fabric.from_deltas([0.1, 0.2], rates=[2.0, 0.5])
    sched = schedule([[0, 3, 1], [1, 0, 2], [2, 2, 0]], fabric=fab)
    path = io.write_circuits(sched, tmp_path / "c.parquet", format="circuits-parquet")
    assert pq.read_table(path).to_pydict() == {k: v.tolist() for k, v in io.circuit_table(sched).items()}
    assert_served_is_what_validate_credits(sched)


# --------------------------------------------------------------------------- iteration schedules


def _iteration_schedule() -> tuple[Iteration, IterationSchedule]:
    ring = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    other = [[0, 0, 2], [2, 0, 0], [0, 2, 0]]
    it = Iteration([Phase(ring, name="a"), Phase(other, gap_before=0.3, name="b"), Phase(ring, name="c")])
    return it, schedule_iteration(it, switches=2, delta=0.1)


def test_iteration_schedule_exports_with_its_phases() -> None:
    it, sched = _iteration_schedule()
    table = io.circuit_table(sched)
    assert list(table) == [*io.CIRCUIT_COLUMNS, io.PHASE_COLUMN]
    # One row per circuit, tagged with its configuration's phase.
    tags = [
        k for sw, ph in zip(sched.switches, sched.phase_of, strict=True) for _, k in zip(sw, ph, strict=True)
    ]
    sizes = [len(c.circuits) for sw in sched.switches for c in sw]
    assert table["phase"].tolist() == [k for k, m in zip(tags, sizes, strict=True) for _ in range(m)]
    # Each phase's rows serve that phase's demand (uniform rate-1 switches: the durations).
    for k, phase in enumerate(it.phases):
        rows = table["phase"] == k
        got = np.zeros((it.n, it.n))
        np.add.at(got, (table["src"][rows], table["dst"][rows]), table["served"][rows])
        assert np.all(got >= phase.demand.to_dense() * (1 - 1e-9))
        assert table["served"][rows].tolist() == pytest.approx((table["end"] - table["start"])[rows].tolist())


def test_iteration_schedule_with_a_fabric_uses_its_rates() -> None:
    # IterationSchedule will carry a `fabric`; until then the export reads it when present.
    _, sched = _iteration_schedule()

    class WithFabric:
        def __init__(self, inner: object, fabric: Fabric) -> None:
            self.inner, self.fabric = inner, fabric

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

    fast = WithFabric(sched, Fabric.from_deltas([0.1, 0.1], rates=[2.0, 4.0]))
    assert io.schedule_fabric(fast).rates == (2.0, 4.0)  # type: ignore[arg-type]
    assert io.schedule_fabric(sched) == Fabric.uniform(2, 0.1)


def test_cli_exports_an_iteration_schedule(tmp_path: Path) -> None:
    _, sched = _iteration_schedule()
    path = io.write_iteration_schedule(sched, tmp_path / "it.json")
    res = run("export", path)
    assert res.exit_code == 0, res.output
    header, *lines = res.stdout.splitlines()
    assert header == "switch,start,end,src,dst,served,phase"
    assert len(lines) == sum(len(c.circuits) for sw in sched.switches for c in sw)
    assert {int(line.split(",")[-1]) for line in lines} == {0, 1, 2}
    written = run("export", path, "-f", "circuits-csv", "-o", tmp_path / "it.csv")
    assert written.exit_code == 0 and (tmp_path / "it.csv").read_text() == res.stdout


def test_cli_export_of_a_rate_2_schedule_sums_to_the_demand(tmp_path: Path) -> None:
    np.save(tmp_path / "d.npy", np.array([[0.0, 3.0], [0.0, 0.0]]))
    (tmp_path / "f.toml").write_text("[[switches]]\ndelta = 0.1\nrate = 2.0\ncount = 2\n")
    s = tmp_path / "s.json"
    assert run("schedule", tmp_path / "d.npy", "--fabric", tmp_path / "f.toml", "-o", s).exit_code == 0
    res = run("export", s)
    assert res.exit_code == 0
    served = [float(line.split(",")[5]) for line in res.stdout.splitlines()[1:]]
    assert sum(served) == pytest.approx(3.0)
    doc = json.loads(s.read_text())
    assert doc["version"] == 2  # the fabric (and its rates) travel with the schedule


def test_slice_fit_moves_past_a_window_ending_just_after_a_slice_boundary() -> None:
    """A down window ending within 1e-9 (relative) after a slice boundary: the fit once set the
    configuration's slice to the same value forever (the tolerant rounding stayed in the window)."""
    from ocsched import Fabric, Switch, SwitchDown
    from ocsched.io.exports.slices import fit_to_grid

    fab = Fabric((Switch(0.4),), down=(SwitchDown(0, 0.0, 0.3 * (1 + 3e-10)),))
    sched = ocsched.schedule(np.array([[0, 1.0], [1.0, 0]]), fabric=fab)
    fitted = fit_to_grid(sched, 0.1)[0]
    assert ocsched.validate(fitted, np.array([[0, 1.0], [1.0, 0]])).ok
    assert all(c.start - 0.4 >= 0.3 * (1 + 3e-10) for sw in fitted.switches for c in sw)
