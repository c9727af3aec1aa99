"""spectra-opt and exact: results independent of the clock, and both on every fabric feature."""

from __future__ import annotations

import itertools
import logging
import math
import time
from typing import Any

import numpy as np
import pytest
import scipy.optimize
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocsched import InvalidInputError, lower_bound, schedule, validate
from ocsched.exact import solve_exact
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.improve.structure import merged_phases
from ocsched.workloads.random import random_instance
from strategies import demands, fabrics

RTOL = 1e-7  # "optimal" is optimal to HiGHS's tolerances (see tests/exact/test_exact.py)

# n = 4 on 2 switches: proved optimal after about 60 branch-and-bound nodes (half a second), not
# at the root; the root's answer is 9% longer.
TINY = (random_instance(4, density=0.8, rng=6), 2, 0.2)
FAILING = Fabric((Switch(0.04), Switch(0.02, rate=2.0), Switch(0.04))).with_failures(
    [SwitchDown(2, 0.2, 0.3)], [LinkDown(0, 1, 0.25), LinkDown(3, 2, 0.0)]
)


# ---------------------------------------------------------------------------------------------
# No result depends on the clock
# ---------------------------------------------------------------------------------------------


class JumpingClock:
    """A clock that moves on by two hours at every reading, as on a machine stalled by its load."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 7200.0
        return self.now


@pytest.mark.parametrize("algorithm", ["spectra-opt", "exact"])
@pytest.mark.parametrize("where", ["uniform", "fabric"])
def test_same_schedule_whatever_the_clock_says(
    monkeypatch: pytest.MonkeyPatch, algorithm: str, where: str
) -> None:
    d, s, delta = TINY
    kw: dict[str, Any] = {"switches": s, "delta": delta} if where == "uniform" else {"fabric": FAILING}
    calm = schedule(d, algorithm=algorithm, **kw)
    monkeypatch.setattr(time, "perf_counter", JumpingClock())
    monkeypatch.setattr(time, "monotonic", JumpingClock())
    rushed = schedule(d, algorithm=algorithm, **kw)
    assert rushed.same_as(calm)
    assert validate(rushed, d).ok
    # Both the short MILP of spectra-opt (200 nodes) and exact prove the optimum here, however
    # slow the machine: no budget in seconds can cut them short.
    assert rushed.status == "optimal"


def test_no_time_limit_reaches_the_solver_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    real = scipy.optimize.milp

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(dict(kwargs.get("options") or {}))
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy.optimize, "milp", spy)
    d, s, delta = TINY
    schedule(d, switches=s, delta=delta, algorithm="exact")  # spectra-opt's MILP, then exact's
    schedule(d, fabric=FAILING, algorithm="spectra-opt")
    assert seen, "the MILPs ran"
    assert all("time_limit" not in o and "node_limit" in o for o in seen), seen
    seen.clear()
    solve_exact(d, switches=s, delta=delta, time_limit=30.0)
    assert any("time_limit" in o for o in seen)  # an explicit time limit is passed on


def test_node_limit_is_a_status_and_deterministic() -> None:
    d, s, delta = TINY
    a = solve_exact(d, switches=s, delta=delta, node_limit=1)
    b = solve_exact(d, switches=s, delta=delta, node_limit=1)
    assert a.status == "node_limit"
    assert a.schedule.same_as(b.schedule) and a.dual_bound == b.dual_bound
    full = solve_exact(d, switches=s, delta=delta)
    assert full.status == "optimal" and full.makespan <= a.makespan
    assert validate(a.schedule, d).ok
    assert lower_bound(d, switches=s, delta=delta) <= a.dual_bound <= a.makespan


# ---------------------------------------------------------------------------------------------
# exact on fabrics: hand-derived optima
# ---------------------------------------------------------------------------------------------


def one_entry_split(a: float, deltas: list[float], rates: list[float]) -> float:
    """One entry on switches (d_b, c_b): each used switch b holds it for T - d_b, sum c_b (T - d_b) = a."""
    best = math.inf
    for r in range(1, len(deltas) + 1):
        for sub in itertools.combinations(range(len(deltas)), r):
            t = (a + sum(rates[b] * deltas[b] for b in sub)) / sum(rates[b] for b in sub)
            if all(t >= deltas[b] for b in sub):
                best = min(best, t)
    return best


@pytest.mark.parametrize(
    ("deltas", "rates"),
    [
        ([0.1, 0.1], [1.0, 3.0]),
        ([0.05, 0.5], [1.0, 1.0]),
        ([0.2, 0.01, 0.01], [0.5, 1.0, 4.0]),
        ([1.0, 0.1], [4.0, 0.25]),
    ],
)
def test_one_entry_on_heterogeneous_switches(deltas: list[float], rates: list[float]) -> None:
    d = np.array([[0.0, 2.0], [0.0, 0.0]])
    res = solve_exact(d, fabric=Fabric.from_deltas(deltas, rates=rates))
    assert res.status == "optimal"
    assert res.makespan == pytest.approx(one_entry_split(2.0, deltas, rates), rel=RTOL)
    assert validate(res.schedule, d).ok


@pytest.mark.parametrize("fail_at", [0.0, 0.3, 0.6, 1.2, 5.0])
def test_a_link_failing_later_is_used_until_it_fails(fail_at: float) -> None:
    # Entry 0 -> 1 of 1.0, two switches of delay 0.1; port 0's link to switch 0 fails at f: switch 0
    # can hold the circuit for f - 0.1 at most, so T = 0.1 + max(1/2, 1 - max(f - 0.1, 0)).
    d = np.array([[0.0, 1.0], [0.0, 0.0]])
    fab = Fabric.uniform(2, 0.1).with_failures(failed_links=[LinkDown(0, 0, fail_at)])
    res = solve_exact(d, fabric=fab)
    assert res.status == "optimal"
    assert res.makespan == pytest.approx(0.1 + max(0.5, 1.0 - max(fail_at - 0.1, 0.0)), rel=RTOL)
    assert validate(res.schedule, d).ok


@pytest.mark.parametrize(("w0", "w1"), [(0.5, 0.8), (0.15, 2.0), (0.05, 0.3)])
def test_a_switch_that_comes_back_serves_before_and_after_its_window(w0: float, w1: float) -> None:
    # One switch, delay 0.1, entry 1.0, down [w0, w1): serve w0 - 0.1 before if positive, the rest
    # from w1 + 0.1 on.
    d = np.array([[0.0, 1.0], [0.0, 0.0]])
    fab = Fabric.uniform(1, 0.1).with_failures([SwitchDown(0, w0, w1)])
    res = solve_exact(d, fabric=fab)
    before = max(w0 - 0.1, 0.0)
    assert res.status == "optimal"
    assert res.makespan == pytest.approx(w1 + 0.1 + 1.0 - before, rel=RTOL)
    assert validate(res.schedule, d).ok


def test_a_switch_down_for_good_serves_until_it_goes_down() -> None:
    d = np.array([[0.0, 1.0], [0.0, 0.0]])
    fab = Fabric.uniform(2, 0.1).with_failures([SwitchDown(1, 0.3)])
    res = solve_exact(d, fabric=fab)
    assert res.status == "optimal"
    assert res.makespan == pytest.approx(0.1 + 1.0 - 0.2, rel=RTOL)  # switch 1 holds 0.2 before 0.3


def test_windows_merge_into_phases() -> None:
    assert merged_phases([(0.2, 0.3), (0.25, 0.35), (0.6, 0.7)]) == ((0.0, 0.2), (0.35, 0.6), (0.7, math.inf))
    assert merged_phases([(0.0, 0.5), (0.5, math.inf)]) == ()


@pytest.mark.parametrize("seed", range(6))
def test_fabric_model_agrees_with_the_uniform_model(seed: int) -> None:
    # A window and a link failure long after any schedule ends change nothing but which model is
    # built: the general one (phases, deadline classes) must find the same optimum.
    rng = np.random.default_rng(seed)
    d = random_instance(int(rng.integers(3, 5)), density=0.6, rng=rng)
    s, delta = int(rng.integers(1, 4)), float(rng.choice([0.01, 0.05, 0.2]))
    late = [LinkDown(1, s - 1, 5e3)] if s > 1 else []  # (the heuristics treat it as failed from 0)
    far = Fabric.uniform(s, delta).with_failures([SwitchDown(0, 1e3, 2e3)], late)
    a = solve_exact(d, switches=s, delta=delta)
    b = solve_exact(d, fabric=far)
    assert a.optimal and b.optimal
    assert b.makespan == pytest.approx(a.makespan, rel=RTOL)


def test_partial_model_returns_the_all_stop_optimum_unproved() -> None:
    d, s, delta = TINY
    part = Fabric.uniform(s, delta, model="partial")
    res = solve_exact(d, fabric=part)
    assert res.status == "heuristic"
    assert res.dual_bound == pytest.approx(lower_bound(d, fabric=part))
    assert validate(res.schedule, d).ok
    all_stop = solve_exact(d, switches=s, delta=delta)
    assert res.makespan <= all_stop.makespan * (1 + 1e-12)
    sched = schedule(d, fabric=part, algorithm="exact")
    assert sched.status == "heuristic" and validate(sched, d).ok


def test_invalid_incumbents_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    d, s, delta = TINY
    bogus = schedule(np.ones((4, 4)) - np.eye(4), switches=s, delta=delta).switches  # another demand
    short = tuple(tuple(c for c in sw[:1]) for sw in bogus)
    with caplog.at_level(logging.WARNING, logger="ocsched.exact.solve"):
        res = solve_exact(d, switches=s, delta=delta, incumbents=[short])
    assert validate(res.schedule, d).ok
    assert any("incumbent 0 is not a valid schedule" in r.getMessage() for r in caplog.records)


def test_fabric_and_switches_are_exclusive() -> None:
    with pytest.raises(InvalidInputError, match="either `fabric` or `switches`"):
        solve_exact([[0, 1], [1, 0]], switches=2, delta=0.1, fabric=Fabric.uniform(2, 0.1))
    with pytest.raises(InvalidInputError, match="give `switches` and `delta`"):
        solve_exact([[0, 1], [1, 0]], switches=2)


# ---------------------------------------------------------------------------------------------
# Properties on random fabrics: heterogeneous delays and rates, failed links (from 0 and later),
# down windows, either model
# ---------------------------------------------------------------------------------------------

KINDS = ("dense", "sparse", "skewed", "single", "wide_range")


def _draw(data: st.DataObject, max_n: int, max_switches: int) -> tuple[np.ndarray, Fabric]:
    m = data.draw(demands(max_n=max_n, kinds=KINDS))
    top = float(m.max(initial=0.0))
    fab = data.draw(fabrics(m.shape[0], top, max_switches=max_switches, timed_links=True))
    return m, fab


def _check_opt(m: np.ndarray, fab: Fabric) -> None:
    pack = schedule(m, fabric=fab, algorithm="spectra-pack")
    opt = schedule(m, fabric=fab, algorithm="spectra-opt")
    r = validate(opt, m)
    assert r.ok, (fab, [str(v) for v in r.violations[:3]])
    assert opt.makespan <= pack.makespan * (1 + 1e-12), (opt.makespan, pack.makespan)
    assert opt.makespan >= lower_bound(m, fabric=fab) * (1 - 1e-9)
    if opt.dual_bound is not None:
        assert opt.dual_bound <= opt.makespan * (1 + 1e-12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_spectra_opt_on_random_fabrics(data: st.DataObject) -> None:
    _check_opt(*_draw(data, max_n=6, max_switches=4))


def _check_exact(m: np.ndarray, fab: Fabric, heuristics: tuple[str, ...]) -> None:
    ex = schedule(m, fabric=fab, algorithm="exact")
    r = validate(ex, m)
    assert r.ok, (fab, [str(v) for v in r.violations[:3]])
    assert ex.makespan >= lower_bound(m, fabric=fab) * (1 - 1e-9)
    assert ex.dual_bound is not None and ex.dual_bound <= ex.makespan * (1 + 1e-12)
    opt = schedule(m, fabric=fab, algorithm="spectra-opt")
    assert ex.makespan <= opt.makespan * (1 + 1e-12)
    for name in heuristics:
        h = schedule(m, fabric=fab, algorithm=name, rng=0)
        # The proved bound is below every valid schedule; a proved optimum below every heuristic.
        assert ex.dual_bound <= h.makespan * (1 + RTOL), name
        if ex.status == "optimal":
            assert ex.makespan <= h.makespan * (1 + RTOL), (name, ex.makespan, h.makespan)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_exact_on_random_fabrics(data: st.DataObject) -> None:
    m, fab = _draw(data, max_n=4, max_switches=3)
    _check_exact(m, fab, ("spectra", "eclipse"))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_spectra_opt_on_random_fabrics_many(data: st.DataObject) -> None:
    _check_opt(*_draw(data, max_n=7, max_switches=5))


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_exact_on_random_fabrics_many(data: st.DataObject) -> None:
    m, fab = _draw(data, max_n=5, max_switches=4)
    _check_exact(m, fab, ("spectra", "spectra-pack", "spectra-greedy", "eclipse", "solstice", "bvn"))
