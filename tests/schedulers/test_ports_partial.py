"""The partial model on bidirectional and multi-port switches: the pool rule, its bound, spectra-ports.

Under "partial" an endpoint's k ports on a switch are a pool (:mod:`ocsched.timing.pools`): a kept
circuit holds its ports, a new one takes a port that has been dark for delta. These tests check
the rule from both sides (hand cases; laid-out schedules are valid and any earlier start is not),
that it is the plain rule at k = 1 on a directed switch, that the bound stays below schedules the
rule allows (including ones built to beat the all-stop bound), and that spectra-ports, its
iterations and reschedule are valid there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import run
from ocsched import Fabric, Schedule, Switch, schedule, validate
from ocsched.bounds import lower_bound
from ocsched.model import Configuration
from ocsched.timing import check_switch, partial_starts
from ocsched.timing import switch as rules


def _switch(k: int, both: bool, delta: float = 0.5) -> Switch:
    return Switch(delta, bidirectional=both, ports_per_endpoint=k)


def _conf(start: float, duration: float, circuits: list[tuple[int, int]], n: int) -> Configuration:
    ins = np.array([i for i, _ in circuits], np.int64)
    outs = np.array([j for _, j in circuits], np.int64)
    return Configuration.sparse(start, duration, ins, outs, ports=n)


def _one_switch(fab: Fabric, n: int, confs: list[Configuration]) -> Schedule:
    return Schedule(ports=n, delta=fab.deltas[0], switches=(tuple(confs),), fabric=fab)


# -- the rule by hand ----------------------------------------------------------------------------


def _one_heavy_partner() -> np.ndarray:
    """Endpoint 0 sends 2.5 to 1 and 1 each to 2 and 3 (4 endpoints)."""
    d = np.zeros((4, 4))
    d[0, 1], d[0, 2], d[0, 3] = 2.5, 1.0, 1.0
    return d


def test_a_kept_circuit_frees_the_other_port_and_beats_the_all_stop_bound() -> None:
    """0 keeps {0, 1} on one port while its other port moves from 2 to 3: 3.0, below the
    all-stop bound of 3.25; the partial bound is exactly 3.0."""
    n = 4
    d = _one_heavy_partner()
    fab = Fabric((_switch(2, True),), model="partial")
    good = _one_switch(fab, n, [_conf(0.5, 1.0, [(0, 1), (0, 2)], n), _conf(2.0, 1.0, [(1, 0), (0, 3)], n)])
    assert validate(good, d, fabric=fab).ok
    assert lower_bound(d, fabric=fab) == pytest.approx(3.0, rel=1e-12)
    assert lower_bound(d, fabric=fab.with_model("all-stop")) == pytest.approx(3.25, rel=1e-12)
    assert not validate(good, d, fabric=fab.with_model("all-stop")).ok
    early = _one_switch(fab, n, [_conf(0.5, 1.0, [(0, 1), (0, 2)], n), _conf(1.9, 1.0, [(0, 1), (0, 3)], n)])
    report = validate(early, d, fabric=fab)
    assert [v.kind for v in report.violations][:1] == ["timing"]
    assert "endpoint 0" in report.violations[0].message and "\n" not in report.violations[0].message


def test_spectra_ports_reconfigures_one_port_while_the_other_stays_lit() -> None:
    """The same demand: spectra-ports under partial runs each port as a layer of its own and
    reaches the partial bound, 3.0, where all-stop needs more."""
    d = _one_heavy_partner()
    fab = Fabric((_switch(2, True),), model="partial")
    got = schedule(d, fabric=fab, algorithm="spectra-ports")
    assert validate(got, d, fabric=fab).ok
    assert got.makespan == pytest.approx(3.0, rel=1e-12) and got.gap == pytest.approx(0.0, abs=1e-12)
    assert schedule(d, fabric=fab.with_model("all-stop"), algorithm="spectra-ports").makespan > 3.2


def test_a_bidirectional_port_is_one_port_for_both_directions() -> None:
    """Directed, 0's output and input are separate ports; bidirectional, 0 -> 3 waits for the
    port {2, 0} held until 1.5."""
    c = [(0.5, 1.0, np.array([2]), np.array([0])), (1.5, 1.0, np.array([0]), np.array([3]))]
    assert check_switch(c, 0.5, model="partial")[0] == []
    found, _ = check_switch(c, 0.5, model="partial", bidirectional=True)
    assert [(k, kind) for k, kind, _ in found] == [(1, "timing")]


def test_a_bidirectional_circuit_is_kept_either_way_round_and_credited_the_gap() -> None:
    c = [(0.5, 1.0, np.array([0]), np.array([1])), (1.7, 1.0, np.array([1]), np.array([0]))]
    found, held = check_switch(c, 0.5, model="partial", bidirectional=True)
    assert found == []
    assert held[1].tolist() == pytest.approx([1.2])
    assert check_switch(c, 0.5, model="partial")[1][1].tolist() == [1.0]  # directed: 1 -> 0 is new


def test_a_down_window_darkens_every_port_and_keeps_nothing() -> None:
    c = [(0.5, 1.0, np.array([0]), np.array([1])), (1.7, 1.0, np.array([0]), np.array([1]))]
    kw = {"model": "partial", "windows": [(1.5, 1.6)], "ports_per_endpoint": 2, "bidirectional": True}
    found, held = check_switch(c, 0.5, **kw)  # type: ignore[arg-type]
    assert [(k, kind) for k, kind, _ in found] == [(1, "timing")] and held[1].tolist() == [1.0]
    later = [c[0], (2.1, 1.0, np.array([0]), np.array([1]))]
    assert check_switch(later, 0.5, **kw)[0] == []  # type: ignore[arg-type]


def test_parallel_circuits_are_kept_as_many_times_as_held_before() -> None:
    """Two circuits {0, 1} (both ports), then one (kept), then two again: the second is new and
    needs the port dropped at 1.5 dark for delta, so 1.8 is too early and 2.0 is not."""

    def run(third: float) -> tuple[list[tuple[int, str, str]], list[np.ndarray]]:
        c = [
            (0.5, 1.0, np.array([0, 0]), np.array([1, 1])),
            (1.5, 0.3, np.array([0]), np.array([1])),
            (third, 1.0, np.array([0, 0]), np.array([1, 1])),
        ]
        return check_switch(c, 0.5, model="partial", ports_per_endpoint=2, bidirectional=True)

    found, _ = run(1.8)
    assert [(k, kind) for k, kind, _ in found] == [(2, "timing")]
    found, held = run(2.0)
    assert found == []
    assert held[1].tolist() == [0.3] and sorted(held[2].tolist()) == pytest.approx([1.0, 1.2])


def test_fabrics_and_files_carry_the_partial_model_on_port_switches() -> None:
    fab = Fabric((_switch(2, True, 0.1),) * 2, model="partial")
    assert Fabric.from_dict(fab.to_dict()) == fab
    d = np.random.default_rng(3).random((5, 5)) * (1 - np.eye(5))
    sched = schedule(d, fabric=fab, algorithm="spectra-ports")
    back = Schedule.from_json(sched.to_json())
    assert back.on_fabric() == fab and validate(back, d).ok


def test_cli_schedules_and_validates_a_partial_port_fabric(tmp_path: Path) -> None:
    np.save(tmp_path / "d.npy", _one_heavy_partner())
    out = tmp_path / "s.json"
    cmd = ["schedule", tmp_path / "d.npy", "-s", "1", "-d", "0.5", "--bidirectional"]
    cmd += ["--ports-per-endpoint", "2", "--reconfiguration", "partial"]
    r = run(*cmd, "-a", "spectra-ports", "-o", out)
    assert r.exit_code == 0, r.output
    assert Schedule.from_json(out.read_text()).makespan == pytest.approx(3.0, rel=1e-12)
    r = run("validate", tmp_path / "d.npy", out)  # 0 holds two circuits at once (2 ports): read as such
    assert r.exit_code == 0 and "valid" in r.stdout, r.output
    r = run(*cmd, "-a", "exact-ports", "-o", tmp_path / "e.json")
    assert r.exit_code == 0, r.output


def test_exact_ports_under_partial_is_the_all_stop_optimum_or_better_unproved() -> None:
    """As ``exact``: valid, never later than spectra-ports or the all-stop optimum, and it claims
    no optimality and no dual bound (here spectra-ports' 3.0 beats the all-stop optimum)."""
    d = _one_heavy_partner()
    fab = Fabric((_switch(2, True),), model="partial")
    got = schedule(d, fabric=fab, algorithm="exact-ports")
    assert validate(got, d, fabric=fab).ok
    assert got.status == "heuristic" and got.dual_bound is None
    stop = schedule(d, fabric=fab.with_model("all-stop"), algorithm="exact-ports")
    assert stop.status == "optimal" and got.makespan == pytest.approx(3.0, rel=1e-12)
    assert got.makespan < stop.makespan


# -- the rule against itself and the plain rule --------------------------------------------------


@st.composite
def _timed(
    draw: st.DrawFn, k: int, both: bool
) -> tuple[int, list[tuple[np.ndarray, np.ndarray]], list[float]]:
    """Random configurations of a k-port switch (each endpoint in at most k circuits), with
    repeats of the previous configuration's circuits so that some are kept, and durations."""
    n = draw(st.integers(2, 6))
    confs: list[tuple[np.ndarray, np.ndarray]] = []
    for _ in range(draw(st.integers(1, 6))):
        use = np.zeros((2, n), np.int64)
        pairs: list[tuple[int, int]] = []
        prev = list(zip(*(x.tolist() for x in confs[-1]), strict=True)) if confs else []
        wanted = draw(st.lists(st.sampled_from(prev), max_size=len(prev))) if prev else []
        wanted += draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n))
        for i, j in wanted:
            if both and i == j:  # a bidirectional circuit joins two endpoints
                continue
            a, b = (0, 0) if both else (0, 1)  # the pools its ends take a port of
            if use[a, i] < k and use[b, j] < k:
                use[a, i] += 1
                use[b, j] += 1
                pairs.append((i, j))
        confs.append((np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)))
    durs = [draw(st.sampled_from([0.0, 0.05, 0.3, 1.0])) for _ in confs]
    return n, confs, durs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), k=st.integers(1, 3), both=st.booleans(), delta=st.sampled_from([0.0, 0.2, 1.0]))
def test_laid_out_schedules_are_valid_and_no_start_can_be_earlier(
    data: st.DataObject, k: int, both: bool, delta: float
) -> None:
    """partial_starts gives the earliest starts the validator accepts: each is valid, and moving
    any configuration whose start its ports set (not the previous end) earlier breaks the rule."""
    _, circ, durs = data.draw(_timed(k, both))
    starts = partial_starts(circ, durs, delta, ports_per_endpoint=k, bidirectional=both)
    confs = [(t, w, i, j) for t, w, (i, j) in zip(starts, durs, circ, strict=True)]
    found, _ = check_switch(confs, delta, model="partial", ports_per_endpoint=k, bidirectional=both)
    assert found == []
    for t in range(1, len(confs)):
        prev_end = starts[t - 1] + durs[t - 1]
        if delta and starts[t] > prev_end + 0.01 * delta:
            moved = list(confs)
            moved[t] = (starts[t] - 0.01 * delta, *confs[t][1:])
            found, _ = check_switch(moved, delta, model="partial", ports_per_endpoint=k, bidirectional=both)
            assert any(kk == t and kind == "timing" for kk, kind, _ in found), (t, found)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), jitter=st.lists(st.sampled_from([-0.3, -0.05, 0.0, 0.1, 0.5]), min_size=6, max_size=6))
def test_the_pool_rule_at_one_port_is_the_plain_rule(data: st.DataObject, jitter: list[float]) -> None:
    """Directed, one port per endpoint: the pool check finds exactly the plain check's timing
    violations, on valid and on broken starts."""
    _, circ, durs = data.draw(_timed(1, False))
    starts = partial_starts(circ, durs, 0.5)
    confs = [
        (t + x, w, i, j) for t, w, (i, j), x in zip(starts, durs, circ, jitter[: len(circ)], strict=True)
    ]
    x = rules._Confs(confs)
    wins = rules._NO_WINDOWS
    fail = np.full(x.ins.size, np.inf)
    kept = rules._kept(x, wins, fail, "partial", False)
    plain: list[tuple[int, int, str, str]] = []
    pooled: list[tuple[int, int, str, str]] = []
    rules._check_partial(x, wins, kept, 0.5, 1e-9, plain)
    rules._check_pools(x, wins, kept, 0.5, 1e-9, 1, False, pooled)
    assert [(t, r) for t, r, _, _ in plain] == [(t, r) for t, r, _, _ in pooled]


# -- the bound and spectra-ports -----------------------------------------------------------------


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), k=st.integers(1, 3), both=st.booleans(), delta=st.sampled_from([0.05, 0.5, 2.0]))
def test_the_bound_is_below_every_laid_out_schedule_of_what_it_serves(
    data: st.DataObject, k: int, both: bool, delta: float
) -> None:
    """Any schedule the rule allows, on s copies of the switch, against the demand it serves:
    the bound never exceeds its makespan (and never the all-stop bound)."""
    s = data.draw(st.integers(1, 3))
    n = 6
    switches = []
    for _ in range(s):
        _, circ, durs = data.draw(_timed(k, both))
        starts = partial_starts(circ, durs, delta, ports_per_endpoint=k, bidirectional=both)
        switches.append(
            tuple(
                Configuration.sparse(t, w, i, j, ports=n)
                for t, w, (i, j) in zip(starts, durs, circ, strict=True)
            )
        )
    fab = Fabric((_switch(k, both, delta),) * s, model="partial")
    sched = Schedule(ports=n, delta=delta, switches=tuple(switches), fabric=fab)
    served = sched.served()
    assert validate(sched, served, fabric=fab).ok
    bound = lower_bound(served, fabric=fab)
    assert bound <= sched.makespan * (1 + 1e-9) + 1e-12
    assert bound <= lower_bound(served, fabric=fab.with_model("all-stop")) * (1 + 1e-12) + 1e-15


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), k=st.integers(1, 3), both=st.booleans(), s=st.integers(1, 4))
def test_spectra_ports_under_partial_is_valid_and_never_later_than_all_stop(
    seed: int, k: int, both: bool, s: int
) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    d = rng.random((n, n)) * (rng.random((n, n)) < 0.6)
    np.fill_diagonal(d, 0.0)
    d[0, 1] = max(d[0, 1], 0.3)
    fab = Fabric((_switch(k, both, float(rng.choice([0.01, 0.1, 1.0]))),) * s, model="partial")
    got = schedule(d, fabric=fab, algorithm="spectra-ports")
    assert validate(got, d, fabric=fab).ok
    assert lower_bound(d, fabric=fab) <= got.makespan * (1 + 1e-9)
    stop = schedule(d, fabric=fab.with_model("all-stop"), algorithm="spectra-ports")
    assert got.makespan <= stop.makespan * (1 + 1e-12)


def test_controller_orders_keep_what_the_rule_keeps_and_replay_parallel_circuits(tmp_path: Path) -> None:
    """oxc-orders: {0, 1} held twice then once (either way round) and {2, 3} kept, one more
    {2, 3} added: 3 circuits set up, then 1 deleted and 1 added; the replay rebuilds a valid schedule."""
    from ocsched.io import export, read_export
    from ocsched.model.recourse import recourse

    n = 4
    fab = Fabric((_switch(2, True),), model="partial")
    first = _conf(0.5, 1.0, [(0, 1), (0, 1), (2, 3)], n)
    second = _conf(1.5, 1.0, [(1, 0), (3, 2), (2, 3)], n)
    sched = _one_switch(fab, n, [first, second])
    served = sched.served()
    assert validate(sched, served, fabric=fab).ok
    assert recourse(sched) == 5
    result = export(sched, path=tmp_path / "orders.json", format="oxc-orders")
    assert result.info["recourse"] == 5
    back = read_export(tmp_path / "orders.json", format="oxc-orders")
    assert validate(back, served, fabric=fab).ok
    assert np.allclose(back.served(), served, rtol=1e-12, atol=0)
