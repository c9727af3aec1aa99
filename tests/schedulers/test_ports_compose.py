"""Bidirectional and multi-port fabrics compose: failures, reschedule and training iterations.

spectra-ports around down windows and failed links (valid, never worse than spectra-pack on
one-port switches with the same failures where a permutation is a configuration, InfeasibleError
in one line otherwise), ``reschedule`` of single-matrix and iteration schedules, both iteration
schedulers (valid, above their bound, spectra-seq never later than independent, persistence),
and the validator on hand-broken port iteration schedules.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import kept_prefix, run
from ocsched import (
    Fabric,
    InfeasibleError,
    Iteration,
    LinkDown,
    Phase,
    Switch,
    SwitchDown,
    reschedule,
    schedule,
    schedule_iteration,
    validate,
)
from ocsched.io import read_iteration_schedule, write_iteration_schedule
from ocsched.iteration import IterationSchedule
from ocsched.model import Configuration, Demand, Schedule
from ocsched.model.failures import LinkFailure, SwitchFailure
from ocsched.sequence import validate_iteration
from ocsched.timing.served import served_amounts
from ocsched.workloads.tpu_pod import tpu_pod, tpu_pod_fabric


def _random(rng: np.random.Generator, n: int, density: float = 0.6) -> np.ndarray:
    d = rng.random((n, n)) * (rng.random((n, n)) < density)
    np.fill_diagonal(d, 0.0)
    d[0, 1] = max(d[0, 1], 0.5)
    return d


def _switch(k: int, bidirectional: bool, delta: float = 0.1) -> Switch:
    return Switch(delta, bidirectional=bidirectional, ports_per_endpoint=k)


@st.composite
def _failing(draw: st.DrawFn, n: int) -> Fabric:
    """Identical port switches with down windows and failed links (switch 0 stays whole)."""
    s = draw(st.integers(1, 4))
    k = draw(st.integers(1, 3))
    bidirectional = draw(st.booleans())
    delta = draw(st.sampled_from([0.0, 0.01, 0.1, 0.5]))
    down, links = [], []
    for b in draw(st.lists(st.integers(1, max(1, s - 1)), max_size=2, unique=True)) if s > 1 else []:
        a = draw(st.sampled_from([0.0, 0.3, 1.0, 2.0]))
        length = draw(st.sampled_from([0.1, 1.0, float("inf")]))
        down.append(SwitchDown(b, a, a + length))
    for _ in range(draw(st.integers(0, 3)) if s > 1 else 0):
        at = draw(st.sampled_from([0.0, 0.0, 0.3, 1.0, 2.0]))
        links.append(LinkDown(draw(st.integers(0, n - 1)), draw(st.integers(1, s - 1)), at))
    model = draw(st.sampled_from(["all-stop", "partial"]))
    return Fabric((_switch(k, bidirectional, delta),) * s, tuple(down), tuple(links), model=model)


# -- spectra-ports around failures --------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), n=st.integers(2, 7), data=st.data())
def test_spectra_ports_around_failures_is_valid_and_never_worse_than_one_port(
    seed: int, n: int, data: st.DataObject
) -> None:
    d = _random(np.random.default_rng(seed), n)
    fab = data.draw(_failing(n))
    sched = schedule(d, fabric=fab, algorithm="spectra-ports")  # switch 0 never fails: servable
    report = validate(sched, d, fabric=fab)
    assert report.ok, report.violations[:3]
    assert sched.lower_bound is not None and sched.lower_bound <= sched.makespan * (1 + 1e-9)
    sw = fab.switches[0]
    if not sw.bidirectional or sw.ports_per_endpoint >= 2:
        one = Fabric((Switch(sw.delta),) * fab.size, fab.down, fab.failed_links)
        ref = schedule(d, fabric=one, algorithm="spectra-pack")
        assert sched.makespan <= ref.makespan
    if fab.reconfiguration.keeps_circuits:  # the all-stop schedule is valid there too
        assert (
            sched.makespan
            <= schedule(d, fabric=fab.with_model("all-stop"), algorithm="spectra-ports").makespan
        )
    again = schedule(d, fabric=fab, algorithm="spectra-ports")
    assert again.to_dict()["switches"] == sched.to_dict()["switches"]  # deterministic


def test_a_failed_link_removes_circuits_not_the_switch() -> None:
    d = tpu_pod(cubes=16, traffic="moe", rng=0)
    healthy = tpu_pod_fabric(delta_ms=1.0, switches=4)
    fab = healthy.with_failures(failed_links=[LinkDown(5, 1)])
    sched = schedule(d, fabric=fab, algorithm="spectra-ports")
    assert validate(sched, d).ok
    assert sched.switches[1], "the switch with the failed link still carries traffic"
    assert all(5 not in np.concatenate(c.circuit_arrays()) for c in sched.switches[1])
    whole = schedule(d, fabric=healthy, algorithm="spectra-ports")
    three = schedule(d, fabric=tpu_pod_fabric(delta_ms=1.0, switches=3), algorithm="spectra-ports")
    assert whole.makespan <= sched.makespan < three.makespan


def test_unservable_entries_are_refused_in_one_line_with_a_proof() -> None:
    d = np.zeros((3, 3))
    d[0, 1] = 1.0
    fab = Fabric((_switch(2, True),) * 2, (), (LinkDown(1, 0), LinkDown(0, 1)))
    with pytest.raises(InfeasibleError, match=r"demand\[0, 1\]") as info:
        schedule(d, fabric=fab, algorithm="spectra-ports")
    assert info.value.proved and "\n" not in str(info.value)


def test_down_windows_are_stepped_around() -> None:
    d = np.ones((4, 4)) - np.eye(4)
    fab = Fabric((_switch(2, True),) * 2, (SwitchDown(0, 0.5, 1.5),))
    sched = schedule(d, fabric=fab, algorithm="spectra-ports")
    assert validate(sched, d).ok
    assert not any(c.start < 1.5 + 0.1 and c.end > 0.5 for c in sched.switches[0])


def test_served_amounts_credit_both_directions_on_bidirectional_switches() -> None:
    rng = np.random.default_rng(3)
    for bidirectional in (False, True):
        fab = Fabric((_switch(2, bidirectional),) * 2)
        d = _random(rng, 6)
        sched = schedule(d, fabric=fab, algorithm="spectra-ports")
        dem = Demand.from_matrix(d)
        got = served_amounts(dem, sched.switches, fab)
        want = np.zeros((6, 6))
        for sw in sched.switches:
            for c in sw:
                for i, j in c.circuits:
                    want[i, j] += c.duration
                    if bidirectional and i != j:
                        want[j, i] += c.duration
        assert np.allclose(got, want[dem.rows, dem.cols], rtol=1e-12, atol=0)
        assert (got >= dem.values * (1 - 1e-9)).all()


# -- reschedule ---------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31),
    k=st.integers(1, 3),
    bidirectional=st.booleans(),
    kind=st.sampled_from(["switch", "link"]),
    frac=st.floats(0.0, 1.2),
    model=st.sampled_from(["all-stop", "partial"]),
)
def test_reschedule_on_port_fabrics_is_valid_and_keeps_the_past(
    seed: int, k: int, bidirectional: bool, kind: str, frac: float, model: str
) -> None:
    rng = np.random.default_rng(seed)
    n, s = int(rng.integers(3, 8)), int(rng.integers(2, 5))
    d = _random(rng, n)
    fab = Fabric((_switch(k, bidirectional),) * s, model=model)
    old = schedule(d, fabric=fab, algorithm="spectra-ports")
    at = frac * old.makespan
    b = int(rng.integers(0, s))
    failure = SwitchFailure(b, at) if kind == "switch" else LinkFailure(int(rng.integers(0, n)), b, at)
    new = reschedule(old, d, failure)
    report = validate(new, d, fabric=new.on_fabric())
    assert report.ok, report.violations[:3]
    assert new.on_fabric() != fab
    for a, z in zip(old.switches, new.switches, strict=True):
        assert kept_prefix(a, z, at)
    if at >= old.makespan:
        assert new.makespan == old.makespan


def test_reschedule_refuses_a_permutation_placement_on_port_fabrics() -> None:
    d = np.ones((3, 3)) - np.eye(3)
    old = schedule(d, fabric=Fabric((_switch(2, True),) * 2), algorithm="spectra-ports")
    with pytest.raises(Exception, match="placement 'greedy'") as info:
        reschedule(old, d, SwitchFailure(0, 0.5), placement="greedy")
    assert "\n" not in str(info.value)


def test_cli_reschedules_a_port_schedule(tmp_path: Path) -> None:
    d = np.ones((4, 4)) - np.eye(4)
    np.save(tmp_path / "d.npy", d)
    s = tmp_path / "s.json"
    r = run(
        "schedule",
        tmp_path / "d.npy",
        "-s",
        "2",
        "-d",
        "0.1",
        "--bidirectional",
        "-a",
        "spectra-ports",
        "-o",
        s,
    )
    assert r.exit_code == 0, r.output
    out = tmp_path / "r.json"
    r = run("reschedule", tmp_path / "d.npy", s, "--fail-switch", "1", "--at", "0.5", "-o", out)
    assert r.exit_code == 0, r.output
    new = Schedule.from_json(out.read_text())
    assert validate(new, d).ok and new.on_fabric().switches[0].bidirectional


# -- training iterations ------------------------------------------------------------------------


def _iteration(rng: np.random.Generator, n: int, phases: int) -> Iteration:
    out = []
    for p in range(phases):
        d = _random(rng, n)
        out.append(Phase(d, float(rng.choice([0.0, 0.05, 0.5])), f"p{p}"))
    return Iteration(out)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31),
    k=st.integers(1, 3),
    bidirectional=st.booleans(),
    failures=st.booleans(),
    model=st.sampled_from(["all-stop", "partial"]),
)
def test_iterations_on_port_fabrics_are_valid_and_seq_is_never_later(
    seed: int, k: int, bidirectional: bool, failures: bool, model: str
) -> None:
    rng = np.random.default_rng(seed)
    n, s = int(rng.integers(3, 7)), int(rng.integers(1, 4))
    it = _iteration(rng, n, int(rng.integers(1, 4)))
    down = (SwitchDown(s - 1, 0.5, 1.0),) if failures and s > 1 else ()
    links = (LinkDown(0, s - 1, 0.7),) if failures and s > 1 else ()
    fab = Fabric((_switch(k, bidirectional),) * s, down, links, model=model)
    ind = schedule_iteration(it, fabric=fab, algorithm="independent", base="spectra-ports")
    seq = schedule_iteration(it, fabric=fab, algorithm="spectra-seq", base="spectra-ports")
    for sched in (ind, seq):
        report = validate_iteration(sched, it, fabric=fab)
        assert report.ok, report.violations[:3]
        assert sched.lower_bound <= sched.makespan * (1 + 1e-9)
    assert seq.makespan <= ind.makespan * (1 + 1e-12)
    assert all(e <= f * (1 + 1e-12) for e, f in zip(seq.ends, ind.ends, strict=True))


def test_a_recurring_configuration_persists_on_a_bidirectional_fabric() -> None:
    d = np.zeros((4, 4))
    d[0, 1] = d[2, 3] = 1.0  # one bidirectional configuration serves it
    it = Iteration([Phase(d), Phase(d.T.copy(), gap_before=0.0)])
    fab = Fabric((_switch(1, True, delta=0.5),))
    ind = schedule_iteration(it, fabric=fab, algorithm="independent", base="spectra-ports")
    seq = schedule_iteration(it, fabric=fab, base="spectra-ports")
    assert validate_iteration(seq, it).ok
    assert seq.persisted == 1 and seq.makespan == pytest.approx(ind.makespan - 0.5, rel=1e-12)


def _port_iteration() -> tuple[Iteration, Fabric, IterationSchedule]:
    rng = np.random.default_rng(5)
    it = _iteration(rng, 5, 2)
    fab = Fabric((_switch(2, True),) * 2)
    return it, fab, schedule_iteration(it, fabric=fab, base="spectra-ports")


def _with(sched: IterationSchedule, b: int, j: int, conf: Configuration) -> IterationSchedule:
    switches = [list(sw) for sw in sched.switches]
    switches[b][j] = conf
    return IterationSchedule(
        ports=sched.ports,
        delta=sched.delta,
        switches=tuple(tuple(sw) for sw in switches),
        phase_of=sched.phase_of,
        gaps=sched.gaps,
        names=sched.names,
        algorithm=sched.algorithm,
        lower_bound=sched.lower_bound,
        meta=sched.meta,
        fabric=sched.fabric,
    )


def test_validate_iteration_rejects_broken_port_schedules() -> None:
    it, _fab, sched = _port_iteration()
    assert validate_iteration(sched, it).ok
    b = next(i for i, sw in enumerate(sched.switches) if len(sw) > 1)
    c = sched.switches[b][0]
    ins, outs = c.circuit_arrays()
    # Too many circuits at an endpoint: k = 2 bidirectional, endpoint 0 in three circuits.
    crowded = Configuration.sparse(c.start, c.duration, np.array([0, 0, 0]), np.array([1, 2, 3]), ports=5)
    kinds = {v.kind for v in validate_iteration(_with(sched, b, 0, crowded), it).violations}
    assert "matching" in kinds
    # Served too little: the first configuration held for half its time.
    short = Configuration.sparse(c.start, c.duration / 2, ins, outs, ports=5)
    assert not validate_iteration(_with(sched, b, 0, short), it).ok
    # A second configuration with other circuits started right at the first's end (no delay).
    nxt = sched.switches[b][1]
    other = Configuration.sparse(c.end, nxt.duration, *nxt.circuit_arrays(), ports=5)
    if not nxt.same_circuits(c):
        kinds = {v.kind for v in validate_iteration(_with(sched, b, 1, other), it).violations}
        assert "timing" in kinds


def test_port_iteration_schedules_round_trip_through_files(tmp_path: Path) -> None:
    it, fab, sched = _port_iteration()
    path = tmp_path / "it.json"
    write_iteration_schedule(sched, path)
    back = read_iteration_schedule(path)
    assert back.fabric == fab and validate_iteration(back, it).ok
    entry = json.loads(path.read_text())["switches"][0]
    assert entry["bidirectional"] is True and entry["ports_per_endpoint"] == 2


def test_rescheduled_port_iterations_are_valid() -> None:
    it, _fab, sched = _port_iteration()
    for failure in (SwitchFailure(1, sched.makespan / 3), LinkFailure(2, 0, sched.makespan / 2)):
        new = reschedule(sched, it, failure)
        assert validate_iteration(new, it, fabric=new.fabric).ok
        for a, z in zip(sched.switches, new.switches, strict=True):
            assert kept_prefix(a, z, failure.at)


def test_cli_schedules_an_iteration_on_a_port_fabric(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    np.save(tmp_path / "it.npy", np.stack([_random(rng, 6) for _ in range(3)]))
    out = tmp_path / "s.json"
    args = ("-s", "3", "-d", "0.1", "--gaps", "0.05", "--bidirectional", "--ports-per-endpoint", "2")
    r = run("schedule", tmp_path / "it.npy", *args, "-a", "spectra-ports", "-o", out)
    assert r.exit_code == 0, r.output
    r = run("validate", tmp_path / "it.npy", out, "--gaps", "0.05")
    assert r.exit_code == 0, r.output
    r = run("schedule", tmp_path / "it.npy", *args)
    assert r.exit_code == 2 and "spectra-ports" in r.stderr and "Traceback" not in r.output


def test_held_circuits_serve_the_next_phase_without_a_delay() -> None:
    # Two phases on the same pairs with other weights (and directions): the bidirectional
    # configuration held after the first serves the second whole, so spectra-seq holds it for
    # 3 more instead of paying another delay of 1 (independent: 1 + 2 + 0.1 + 1 + 3).
    d = np.zeros((4, 4))
    d[0, 1], d[2, 3] = 1.0, 2.0
    e = np.zeros((4, 4))
    e[1, 0], e[3, 2] = 3.0, 0.5
    it = Iteration([Phase(d), Phase(e, gap_before=0.1)])
    fab = Fabric((_switch(1, True, delta=1.0),))
    seq = schedule_iteration(it, fabric=fab, base="spectra-ports")
    ind = schedule_iteration(it, fabric=fab, algorithm="independent", base="spectra-ports")
    assert validate_iteration(seq, it).ok
    assert ind.makespan == pytest.approx(7.1, rel=1e-12)
    assert seq.persisted == 1 and seq.makespan == pytest.approx(6.1, rel=1e-12)


def test_reschedule_holds_the_surviving_circuits_instead_of_reconfiguring() -> None:
    # All-to-all on 5 cubes, 4 bidirectional ports each: one configuration (the complete graph)
    # per switch, half the time each. Switch 1 fails half-way: switch 0 holds its identical
    # circuits 0.25 longer (1.75) instead of reconfiguring (at least 1.25 + delta 1 + 0.25).
    d = np.ones((5, 5)) - np.eye(5)
    fab = Fabric((_switch(4, True, delta=1.0),) * 2)
    old = schedule(d, fabric=fab, algorithm="spectra-ports")
    assert old.makespan == pytest.approx(1.5, rel=1e-12)
    new = reschedule(old, d, SwitchFailure(1, 1.25))
    assert validate(new, d).ok
    assert new.makespan == pytest.approx(1.75, rel=1e-12)
    assert [len(sw) for sw in new.switches] == [1, 1]
