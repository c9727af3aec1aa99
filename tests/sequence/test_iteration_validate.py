"""The iteration validator is as strict as the single-matrix one: mutated valid schedules are rejected.

Valid iteration schedules at magnitudes 1e-12..1e12 are mutated (a phase moved into its compute
gap, a tight start moved earlier by more than the tolerance, a tight entry served a little less,
a forged delay, rate, model, switch count or gap) and every mutation must be reported; hand-made
cases cover the fabric rules (per-switch delay, down windows, failed links, the partial model's
kept circuits across a barrier). The CLI takes the fabric and the gaps as ``schedule`` does.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import ocsched
from ocsched.cli import app
from ocsched.errors import InfeasibleError
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.iteration import Iteration, IterationSchedule, Phase, persists
from ocsched.model import Configuration
from ocsched.sequence import schedule_iteration, validate_iteration
from ocsched.validation import validate
from strategies import demands, fabrics, iterations

MAGNITUDES = [1e-12, 1e-6, 1.0, 1e6, 1e12]
#: Far above the validator's tolerance (1e-9 of a delay or gap, a few ulps of the times) and far
#: below the times themselves, at every magnitude.
NUDGE = 1e-6


def scaled(mats: list[np.ndarray], gaps: list[float], m: float) -> Iteration:
    return Iteration.from_matrices([x * m for x in mats], gaps=[g * m for g in gaps])


def replaced(sched: IterationSchedule, b: int, idx: int, conf: Configuration) -> IterationSchedule:
    sw = list(sched.switches)
    sw[b] = (*sw[b][:idx], conf, *sw[b][idx + 1 :])
    return dataclasses.replace(sched, switches=tuple(sw))


def kinds(sched: IterationSchedule, it: Iteration, **kw: object) -> set[str]:
    return {v.kind for v in validate_iteration(sched, it, **kw).violations}  # type: ignore[arg-type]


def tight_starts(sched: IterationSchedule, it: Iteration, m: float) -> list[tuple[int, int]]:
    """The configurations that start exactly when the rule first allows (a reference check, uniform)."""
    out = []
    releases = sched.releases
    for b, (sw, ph) in enumerate(zip(sched.switches, sched.phase_of, strict=True)):
        prev = None
        for idx, (c, k) in enumerate(zip(sw, ph, strict=True)):
            after = 0.0 if prev is None else prev.end
            earliest = max(releases[k], after + (0.0 if persists(prev, c) else sched.delta))
            if c.start - earliest <= 1e-12 * m:
                out.append((b, idx))
            prev = c
    return out


@st.composite
def valid_schedules(draw: st.DrawFn) -> tuple[IterationSchedule, Iteration, float]:
    mats, gaps = draw(iterations(max_phases=3, max_n=4))
    m = draw(st.sampled_from(MAGNITUDES))
    it = scaled(mats, gaps, m)
    s = draw(st.integers(1, 3))
    delta = draw(st.sampled_from([0.0, 0.05, 0.5])) * m
    algorithm = draw(st.sampled_from(["spectra-seq", "independent"]))
    sched = schedule_iteration(it, switches=s, delta=delta, algorithm=algorithm)
    assert validate_iteration(sched, it, delta=delta, switches=s).ok
    return sched, it, m


@settings(max_examples=40)
@given(data=valid_schedules(), pick=st.randoms(use_true_random=False))
def test_mutated_schedules_are_rejected_at_every_magnitude(
    data: tuple[IterationSchedule, Iteration, float], pick: random.Random
) -> None:
    check_mutations(data, pick)


@pytest.mark.slow
@settings(max_examples=800)
@given(data=valid_schedules(), pick=st.randoms(use_true_random=False))
def test_mutated_schedules_are_rejected_at_every_magnitude_many(
    data: tuple[IterationSchedule, Iteration, float], pick: random.Random
) -> None:
    check_mutations(data, pick)


def check_mutations(data: tuple[IterationSchedule, Iteration, float], pick: random.Random) -> None:
    sched, it, m = data
    d = sched.delta
    # A tight start moved earlier: it breaks the delay rule, persistence or the barrier.
    for b, idx in pick.sample(tight := tight_starts(sched, it, m), min(3, len(tight))):
        c = sched.switches[b][idx]
        early = Configuration(c.start - NUDGE * m, c.duration, c.perm)
        assert kinds(replaced(sched, b, idx, early), it) & {"timing", "barrier"}
    # A phase moved into its compute gap: its first configuration starts before its release.
    for k, phase in enumerate(it.phases):
        starts = [
            c.start
            for sw, ph in zip(sched.switches, sched.phase_of, strict=True)
            for c, p in zip(sw, ph, strict=True)
            if p == k
        ]
        if phase.gap_before > 0 and starts:
            shift = min(starts) - sched.releases[k] + phase.gap_before / 2
            moved = tuple(
                tuple(
                    Configuration(c.start - shift, c.duration, c.perm) if p == k else c
                    for c, p in zip(sw, ph, strict=True)
                )
                for sw, ph in zip(sched.switches, sched.phase_of, strict=True)
            )
            assert "barrier" in kinds(dataclasses.replace(sched, switches=moved), it)
    # A tight entry served a little less.
    for k, phase in enumerate(it.phases):
        dem = phase.demand.to_dense()
        served = np.zeros_like(dem)
        holders: dict[tuple[int, int], tuple[int, int]] = {}
        for b, (sw, ph) in enumerate(zip(sched.switches, sched.phase_of, strict=True)):
            for idx, (c, p) in enumerate(zip(sw, ph, strict=True)):
                if p == k:
                    for i, j in c.circuits:
                        served[i, j] += c.duration
                        best = holders.get((i, j))
                        if best is None or sched.switches[best[0]][best[1]].duration < c.duration:
                            holders[(i, j)] = (b, idx)  # the longest configuration serving it
        tight = [
            (i, j) for i, j in zip(*np.nonzero(dem), strict=True) if served[i, j] - dem[i, j] <= 1e-12 * m
        ]
        if tight:
            b, idx = holders[tight[0]]
            c = sched.switches[b][idx]
            short = Configuration(c.start, max(0.0, c.duration - NUDGE * m), c.perm)
            assert "unserved" in kinds(replaced(sched, b, idx, short), it)
    # Claims: a smaller delay, another number of switches, other gaps, a higher rate, partial.
    s = sched.num_switches
    if d > 0:
        assert "delta" in kinds(dataclasses.replace(sched, delta=0.0), it, delta=d)
    assert "switches" in kinds(sched, it, switches=s + 1)
    if it.total_gap > 0:
        other = tuple(g * (1 + NUDGE) for g in sched.gaps)
        assert "gaps" in kinds(dataclasses.replace(sched, gaps=other), it)
    fast = Fabric((Switch(d, 2.0),) * s)
    assert "rate" in kinds(dataclasses.replace(sched, fabric=fast), it, fabric=Fabric.uniform(s, d))
    lenient = Fabric.uniform(s, d, model="partial")
    assert "model" in kinds(dataclasses.replace(sched, fabric=lenient), it, fabric=Fabric.uniform(s, d))


def test_no_delay_at_1e_minus_12_is_still_checked() -> None:
    # Two phases of 1e-12 s, no delay, no gap: overlapping by 1e-18 s is an overlap all the same.
    it = Iteration([Phase([[0, 1e-12], [0, 0]]), Phase([[0, 0], [1e-12, 0]])])
    a = Configuration.from_circuits(0.0, 1e-12, [(0, 1)], ports=2)
    b = Configuration.from_circuits(1e-12 - 1e-18, 1e-12, [(1, 0)], ports=2)
    sched = IterationSchedule(2, 0.0, ((a, b),), ((0, 1),), it.gaps, it.names)
    assert kinds(sched, it) == {"barrier", "timing"}
    ok = IterationSchedule(2, 0.0, ((a, Configuration(1e-12, 1e-12, b.perm)),), ((0, 1),), it.gaps, it.names)
    assert validate_iteration(ok, it).ok


# --- fabric rules, by hand -------------------------------------------------------------------------

SEND = [[0, 1], [0, 0]]


def one_switch(
    confs: list[tuple[float, float, int]], fabric: Fabric | None, gaps: tuple[float, ...]
) -> IterationSchedule:
    sw = tuple(Configuration.from_circuits(t, w, [(0, 1)], ports=2) for t, w, _ in confs)
    names = tuple(f"p{k}" for k in range(len(gaps)))
    delta = 0.0 if fabric is None else max(fabric.deltas)
    return IterationSchedule(2, delta, (sw,), (tuple(k for *_, k in confs),), gaps, names, fabric=fabric)


def test_a_down_window_between_phases_ends_persistence() -> None:
    it = Iteration([Phase(SEND), Phase(SEND, gap_before=0.5)])
    fab = Fabric((Switch(0.5),))
    ok = one_switch([(0.5, 1.0, 0), (2.0, 1.0, 1)], fab, it.gaps)  # persists across the gap
    assert validate_iteration(ok, it, fabric=fab).ok
    down = Fabric((Switch(0.5),), (SwitchDown(0, 1.6, 1.8),))  # the switch goes dark in the gap
    assert kinds(dataclasses.replace(ok, fabric=down), it) == {"timing"}
    assert kinds(ok, it, fabric=down) == {"timing"}  # the same against the real fabric
    late = one_switch([(0.5, 1.0, 0), (2.3, 1.0, 1)], down, it.gaps)  # a delay after the window
    assert validate_iteration(late, it).ok
    over = Fabric((Switch(0.5),), (SwitchDown(0, 2.5, 2.6),))
    assert "down" in kinds(ok, it, fabric=over)


def test_per_switch_delay_and_failed_links_are_checked_on_the_whole_timeline() -> None:
    it = Iteration([Phase(SEND), Phase([[0, 0], [1, 0]], gap_before=0.1)])
    a = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
    b = Configuration.from_circuits(2.1, 1.0, [(1, 0)], ports=2)  # 0.6 after a: delay 0.5 fits
    fab = Fabric.from_deltas([0.5, 0.5])
    sched = IterationSchedule(2, 0.5, ((a, b), ()), ((0, 1), ()), it.gaps, it.names, fabric=fab)
    assert validate_iteration(sched, it).ok
    assert {"delta", "timing"} <= kinds(sched, it, fabric=Fabric.from_deltas([0.7, 0.5]))
    assert kinds(sched, it, fabric=Fabric.from_deltas([0.5, 0.7])) == {"delta"}  # switch 1 holds nothing
    failing = fab.with_failures(failed_links=[LinkDown(1, 0, 2.5)])  # port 1's link fails mid-phase
    # The link is used past its failure, and that time is not credited: entry (1, 0) falls short too.
    assert kinds(sched, it, fabric=failing) == {"link", "unserved"}
    assert validate_iteration(sched, it, fabric=fab.with_failures(failed_links=[LinkDown(1, 0, 3.1)])).ok


def test_partial_kept_circuits_carry_the_next_phase_from_its_release_only() -> None:
    # Partial, delta 0.1: (0, 1) lit for phase a over [0.1, 1.1]; phase b (the same entry, 1) is
    # released at 1.6. A configuration keeping the circuit from 2.0 is credited 2.0 - 1.6 = 0.4:
    # 0.6 more is enough, 0.5 is not (crediting from 1.1, before the release, would make 0.2 do).
    it = Iteration([Phase(SEND), Phase(SEND, gap_before=0.5)])
    fab = Fabric.uniform(1, 0.1, model="partial")
    assert validate_iteration(one_switch([(0.1, 1.0, 0), (2.0, 0.6, 1)], fab, it.gaps), it).ok
    for short in (0.5, 0.2):
        assert kinds(one_switch([(0.1, 1.0, 0), (2.0, short, 1)], fab, it.gaps), it) == {"unserved"}
    # All-stop credits nothing across the gap: 0.6 is short there (and a delay would be owed).
    stop = Fabric.uniform(1, 0.1)
    assert "unserved" in kinds(one_switch([(0.1, 1.0, 0), (2.0, 0.6, 1)], fab, it.gaps), it, fabric=stop)
    # A window in the gap: the circuit goes dark, nothing is credited.
    dark = Fabric((Switch(0.1),), (SwitchDown(0, 1.7, 1.8),), model="partial")
    assert "unserved" in kinds(one_switch([(0.1, 1.0, 0), (2.0, 0.6, 1)], dark, it.gaps), it)


def test_schedule_of_another_iteration_is_reported_once() -> None:
    it = Iteration([Phase(SEND), Phase(SEND, gap_before=0.5)])
    sched = schedule_iteration(it, switches=2, delta=0.1)
    wider = Iteration([Phase(np.pad(np.array(SEND, float), (0, 1))), Phase(np.zeros((3, 3)))])
    assert [v.kind for v in validate_iteration(sched, wider).violations].count("ports") == 1
    forged = dataclasses.replace(sched, meta={**sched.meta, "switches": 3})
    assert kinds(forged, it) == {"switches"}


def test_validator_argument_errors() -> None:
    it = Iteration([Phase(SEND)])
    sched = schedule_iteration(it, switches=1, delta=0.1)
    with pytest.raises(Exception, match="either `fabric` or `delta`"):
        validate_iteration(sched, it, fabric=Fabric.uniform(1, 0.1), delta=0.1)
    with pytest.raises(Exception, match="port outside"):
        validate_iteration(
            sched, it, fabric=Fabric.uniform(1, 0.1).with_failures(failed_links=[LinkDown(7, 0)])
        )
    with pytest.raises(Exception, match="delta"):
        validate_iteration(sched, it, delta=-1.0)


# --- the CLI ---------------------------------------------------------------------------------------

runner = CliRunner()


def write_npy_iteration(tmp: Path) -> Path:
    path = tmp / "it.npy"
    ring = np.roll(np.eye(3), 1, axis=1)
    np.save(path, np.array([ring, ring * 2.0]))
    return path


def test_cli_validate_takes_the_fabric_and_gaps_as_schedule_does(tmp_path: Path) -> None:
    it = write_npy_iteration(tmp_path)
    out = tmp_path / "s.json"
    res = runner.invoke(app, ["schedule", str(it), "-s", "2", "-d", "0.5", "--gaps", "0,0.4", "-o", str(out)])
    assert res.exit_code == 0, res.output
    ok = ["validate", str(it), str(out), "--gaps", "0,0.4"]
    assert runner.invoke(app, ok).exit_code == 0
    assert runner.invoke(app, [*ok, "--delta", "0.5"]).exit_code == 0
    # Without --gaps a 3-D .npy has gaps 0: the schedule records others, which is reported.
    res = runner.invoke(app, ["validate", str(it), str(out)])
    assert res.exit_code == 1 and "gaps:" in res.output and "--gaps" in res.output
    # A forged delay passes no more against the real one; nor another number of switches.
    data = json.loads(out.read_text())
    data["delta"] = 0.0
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data))
    res = runner.invoke(app, ["validate", str(it), str(forged), "--gaps", "0,0.4", "--delta", "0.5"])
    assert res.exit_code == 1 and "delta: schedule assumes delta 0" in res.output
    res = runner.invoke(app, [*ok, "--switches", "3"])
    assert res.exit_code == 1 and "switches" in res.output
    fabric = tmp_path / "f.toml"
    fabric.write_text("[[switches]]\ndelta = 0.5\ncount = 2\n\n[[down]]\nswitch = 1\nstart = 0.0\n")
    res = runner.invoke(app, [*ok, "--fabric", str(fabric)])
    assert res.exit_code == 1 and "down" in res.output
    res = runner.invoke(app, ["validate", str(tmp_path / "s.json"), str(out), "--gaps", "1"])
    assert res.exit_code == 2 and "iteration" in res.output


def test_cli_phase_moved_into_its_gap_is_invalid(tmp_path: Path) -> None:
    it = write_npy_iteration(tmp_path)
    out = tmp_path / "s.json"
    assert (
        runner.invoke(
            app, ["schedule", str(it), "-s", "1", "-d", "0.1", "--gaps", "0,1", "-o", str(out)]
        ).exit_code
        == 0
    )
    data = json.loads(out.read_text())
    for conf in data["switches"][0]["configurations"]:
        if conf["phase"] == 1:
            conf["start"] -= 0.5
    data["makespan"] -= 0.5
    data["phases"][1]["gap_before"] = 0.0  # and claim there was no gap
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(data))
    res = runner.invoke(app, ["validate", str(it), str(moved), "--gaps", "0,1"])
    assert res.exit_code == 1 and "barrier" in res.output and "gaps" in res.output


def test_cli_schedules_and_validates_an_iteration_on_a_fabric_file(tmp_path: Path) -> None:
    it = write_npy_iteration(tmp_path)
    fabric = tmp_path / "f.toml"
    fabric.write_text(
        'model = "partial"\n[[switches]]\ndelta = 0.1\n[[switches]]\ndelta = 0.3\nrate = 2.0\n'
        "[[failed_links]]\nport = 2\nswitch = 1\nstart = 0.5\n"
    )
    out = tmp_path / "s.json"
    res = runner.invoke(app, ["schedule", str(it), "--fabric", str(fabric), "--gaps", "0.2", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["version"] == 2
    res = runner.invoke(app, ["validate", str(it), str(out), "--gaps", "0.2", "--fabric", str(fabric)])
    assert res.exit_code == 0, res.output


# --- as strict as the single-matrix validator ------------------------------------------------------


@st.composite
def one_phase(draw: st.DrawFn) -> tuple[np.ndarray, Fabric, int, float, str]:
    d = draw(demands(max_n=5, kinds=("dense", "sparse", "skewed", "perm_sum")))
    top = float(d.max(initial=0.0)) or 1.0
    fab = draw(fabrics(d.shape[0], top, max_switches=3))
    return (
        d,
        fab,
        draw(st.integers(0, 10**6)),
        draw(st.sampled_from([1e-7, 1e-3, 0.3])),
        draw(st.sampled_from(["earlier", "shorter", "later"])),
    )


@settings(max_examples=60)
@given(case=one_phase())
def test_one_phase_iterations_are_judged_as_single_schedules(
    case: tuple[np.ndarray, Fabric, int, float, str],
) -> None:
    check_one_phase(case)


@pytest.mark.slow
@settings(max_examples=1500)
@given(case=one_phase())
def test_one_phase_iterations_are_judged_as_single_schedules_many(
    case: tuple[np.ndarray, Fabric, int, float, str],
) -> None:
    check_one_phase(case)


def check_one_phase(case: tuple[np.ndarray, Fabric, int, float, str]) -> None:
    # A single-matrix schedule is a one-phase iteration schedule (no gap): both validators must
    # agree on it and on any mutation of it, on every fabric, unless the mutated configuration
    # persists or is persisted (identical to a neighbour: the iteration model skips that delay).
    d, fab, seed, size, how = case
    try:
        single = ocsched.schedule(d, fabric=fab, algorithm="spectra")
    except InfeasibleError:
        return
    it = Iteration([Phase(d)])
    sched = IterationSchedule(
        single.ports,
        single.delta,
        single.switches,
        tuple((0,) * len(sw) for sw in single.switches),
        (0.0,),
        ("p",),
        fabric=single.fabric,
    )
    assert validate(single, d, fabric=fab).ok and validate_iteration(sched, it, fabric=fab).ok
    where = [(b, i) for b, sw in enumerate(single.switches) for i in range(len(sw))]
    if not where:
        return
    b, i = where[seed % len(where)]
    c = single.switches[b][i]
    line = single.switches[b]
    if (i and persists(line[i - 1], c)) or (i + 1 < len(line) and persists(c, line[i + 1])):
        return  # a persisting pair: the iteration model lets the later one skip its delay
    step = size * (c.duration or 1.0)
    new = {
        "earlier": Configuration(c.start - step, c.duration, c.perm),
        "shorter": Configuration(c.start, max(0.0, c.duration - step), c.perm),
        "later": Configuration(c.start + step, c.duration, c.perm),
    }[how]
    sw = list(single.switches)
    sw[b] = (*sw[b][:i], new, *sw[b][i + 1 :])
    mutated_single = dataclasses.replace(single, switches=tuple(sw))
    mutated = dataclasses.replace(sched, switches=tuple(sw))
    assert validate(mutated_single, d, fabric=fab).ok == validate_iteration(mutated, it, fabric=fab).ok
