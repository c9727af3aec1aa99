"""Tests of the exact solvers: hand-derived optima, references against heuristics and bounds, errors, CLI."""

from __future__ import annotations

import itertools
import logging
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.optimize import linprog
from typer.testing import CliRunner, Result

from cases import CASES
from ocsched import InvalidInputError, lower_bound, schedule, validate
from ocsched.assign import equalize, greedy, loads
from ocsched.cli import app
from ocsched.decompose import spectra_decompose
from ocsched.exact import DEFAULT_NODE_LIMIT, maximal_matchings, optimal_split, solve_exact
from ocsched.model import Demand, Schedule
from ocsched.schedulers import SCHEDULERS, algorithms
from ocsched.workloads.random import random_instance

# The MILP is solved to HiGHS's tolerances (relative gap 1e-9; absolute gap and feasibility
# tolerances act at about 1e-8 relative after scaling), so "optimal" means optimal to 1e-7.
RTOL = 1e-7


def heuristics() -> list[str]:
    algorithms()  # load the peer modules
    # "exact" is the reference; schedulers that require fabric features need another fabric.
    return [a for a, sch in SCHEDULERS.items() if a != "exact" and not sch.requires]


def tiny_instances(
    count: int, *, ns: tuple[int, ...], seed: int
) -> list[tuple[NDArray[np.float64], int, float]]:
    """Seeded (demand, switches, delta) triples: random sparse supports, s in 1..4, several delta."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.choice(ns))
        d = random_instance(n, density=float(rng.choice([0.3, 0.5, 0.8])), rng=rng)
        out.append((d, int(rng.integers(1, 5)), float(rng.choice([0.0, 0.01, 0.05, 0.2, 1.0]))))
    return out


def check_against_heuristics(
    d: NDArray[np.float64], s: int, delta: float, *, time_limit: float, node_limit: int = DEFAULT_NODE_LIMIT
) -> bool:
    """lower_bound <= dual <= exact <= every heuristic; the exact schedule validates. Returns optimality."""
    res = solve_exact(d, switches=s, delta=delta, time_limit=time_limit, node_limit=node_limit)
    assert validate(res.schedule, d).ok
    assert res.schedule.algorithm == "exact"
    assert res.makespan == res.schedule.makespan
    lb = lower_bound(d, switches=s, delta=delta)
    assert lb <= res.dual_bound * (1 + 1e-12) + 1e-15
    strong = lower_bound(d, switches=s, delta=delta, strong=True)
    assert strong <= res.dual_bound * (1 + 1e-12) + 1e-15
    if res.optimal:
        assert strong <= res.makespan * (1 + RTOL)
    assert res.dual_bound <= res.makespan
    assert res.gap >= 0
    for name in heuristics():
        h = schedule(d, switches=s, delta=delta, algorithm=name, rng=0)
        assert validate(h, d).ok, name
        # The proved bound is below every feasible schedule, optimal or not.
        assert res.dual_bound <= h.makespan * (1 + RTOL), name
        if res.optimal:
            assert res.makespan <= h.makespan * (1 + RTOL), (name, res.makespan, h.makespan)
    return res.optimal


# ---------------------------------------------------------------------------------------------
# Hand-derived optima
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("s", [1, 2, 3])
@pytest.mark.parametrize(("a", "b", "delta"), [(1.0, 0.5, 0.1), (0.3, 2.0, 1.0), (1.0, 0.0, 0.25)])
def test_n2_one_matching_split_over_all_switches(a: float, b: float, delta: float, s: int) -> None:
    # n = 2: the only off-diagonal entries form one matching; split it evenly over s switches.
    res = solve_exact([[0, a], [b, 0]], switches=s, delta=delta)
    assert res.status == "optimal"
    assert res.makespan == pytest.approx(delta + max(a, b) / s, rel=RTOL)


@pytest.mark.parametrize("delta", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("s", [1, 2, 3])
def test_one_row_two_entries(s: int, delta: float) -> None:
    # Two unit entries of one row. s=1: both in sequence. s=2: one per switch. s=3: either one
    # per switch (1 + delta) or 4 configurations, one switch holding both entries' tails:
    # (2 + 4 delta) / 3; 5 or more configurations cost at least (2 + 5 delta) / 3.
    want = {1: 2 + 2 * delta, 2: 1 + delta, 3: min(1 + delta, (2 + 4 * delta) / 3)}[s]
    res = solve_exact([[0, 1, 1], [0, 0, 0], [0, 0, 0]], switches=s, delta=delta)
    assert res.status == "optimal"
    assert res.makespan == pytest.approx(want, rel=RTOL)


@pytest.mark.parametrize("delta", [0.25, 0.5, 1.0, 2.0])
def test_six_cycle_one_switch(delta: float) -> None:
    # The support is a 6-cycle (2, 1, 1, 2, 1, 1 around it); its maximal matchings are the two
    # perfect ones and three 2-matchings. With 2 configurations they must be the perfect ones:
    # 2 + 2 + 2 delta. With >= 3, the time is >= the line sum 3: 3 + 3 delta, reached by
    # {e1, e4} for 2 and the other two 2-matchings for 1. The lower bound, 3 + 2 delta, is not tight.
    d = [[0, 2, 1], [2, 0, 1], [1, 1, 0]]
    res = solve_exact(d, switches=1, delta=delta)
    assert res.status == "optimal"
    assert res.makespan == pytest.approx(min(4 + 2 * delta, 3 + 3 * delta), rel=RTOL)
    assert lower_bound(d, switches=1, delta=delta) == pytest.approx(3 + 2 * delta)


@pytest.mark.parametrize("case", [c for c in CASES if c.optimum is not None], ids=lambda c: c.name)
def test_shared_cases(case: object) -> None:
    res = solve_exact(case.demand, switches=case.switches, delta=case.delta)  # type: ignore[attr-defined]
    assert res.status == "optimal"
    assert res.makespan == pytest.approx(case.optimum, rel=RTOL, abs=1e-12)  # type: ignore[attr-defined]
    assert validate(res.schedule, case.demand).ok  # type: ignore[attr-defined]


def test_zero_demand() -> None:
    res = solve_exact(np.zeros((3, 3)), switches=2, delta=0.5)
    assert (res.status, res.makespan, res.gap, res.schedule.num_configurations) == ("optimal", 0.0, 0.0, 0)


# ---------------------------------------------------------------------------------------------
# Reference tests: bounds <= exact <= heuristics
# ---------------------------------------------------------------------------------------------


def test_exact_between_bound_and_heuristics_sample() -> None:
    # 24 seeded instances, n <= 4: all must be solved to optimality (hundreds more under -m slow).
    for d, s, delta in tiny_instances(24, ns=(2, 3, 4), seed=2026):
        assert check_against_heuristics(d, s, delta, time_limit=60)


@pytest.mark.slow
def test_exact_between_bound_and_heuristics_sweep() -> None:
    # Hundreds of instances with n <= 4 (all optimal), then n = 5 (time-limited: bounds still hold).
    for d, s, delta in tiny_instances(300, ns=(2, 3, 4), seed=7):
        # One of them needs 5,230 nodes (the others at most 250): more than DEFAULT_NODE_LIMIT.
        assert check_against_heuristics(d, s, delta, time_limit=60, node_limit=10_000)
    for d, s, delta in tiny_instances(30, ns=(5,), seed=8):
        check_against_heuristics(d, s, delta, time_limit=10)


def test_beats_spectra_somewhere() -> None:
    # The exact solver must find strictly better schedules than Spectra on some instance.
    better = 0
    for d, s, delta in tiny_instances(15, ns=(4,), seed=3):
        res = solve_exact(d, switches=s, delta=delta)
        better += res.makespan < schedule(d, switches=s, delta=delta).makespan * (1 - 1e-6)
    assert better > 0


def test_registered_scheduler_matches_solve_exact() -> None:
    d = random_instance(4, rng=11)
    sched = schedule(d, switches=3, delta=0.05, algorithm="exact")
    assert validate(sched, d).ok
    assert sched.algorithm == "exact"
    assert sched.makespan == pytest.approx(solve_exact(d, switches=3, delta=0.05).makespan, rel=RTOL)


# ---------------------------------------------------------------------------------------------
# Limits: nodes by default, seconds only when asked
# ---------------------------------------------------------------------------------------------

# Not solved to optimality within 20 s on the development machine (n = 5, 35 maximal matchings).
HARD = (random_instance(5, density=0.6, rng=101), 2, 0.04)
# Proved optimal after about 60 nodes (half a second), not at the root.
SMALL = (random_instance(4, density=0.8, rng=6), 2, 0.2)


def test_time_limit_is_a_status() -> None:
    d, s, delta = HARD
    res = solve_exact(d, switches=s, delta=delta, time_limit=0.2)
    assert res.status == "time_limit"
    assert validate(res.schedule, d).ok
    assert lower_bound(d, switches=s, delta=delta) <= res.dual_bound <= res.makespan
    assert res.gap == pytest.approx((res.makespan - res.dual_bound) / res.makespan)
    assert res.makespan <= schedule(d, switches=s, delta=delta).makespan


def test_registered_scheduler_warns_at_node_limit(caplog: pytest.LogCaptureFixture) -> None:
    d, s, delta = SMALL
    with caplog.at_level(logging.WARNING, logger="ocsched.schedulers"):
        sched = schedule(d, switches=s, delta=delta, algorithm="exact", options={"node_limit": 1})
    assert validate(sched, d).ok
    # The solver's status and dual bound survive into the Schedule (and its JSON).
    assert sched.status == "node_limit"
    assert sched.dual_bound is not None and lower_bound(d, switches=s, delta=delta) <= sched.dual_bound
    assert sched.dual_bound <= sched.makespan
    back = Schedule.from_json(sched.to_json())
    assert (back.status, back.dual_bound) == (sched.status, sched.dual_bound)
    assert any(
        "node_limit" in r.getMessage() and "best schedule found" in r.getMessage() for r in caplog.records
    )


# ---------------------------------------------------------------------------------------------
# optimal_split
# ---------------------------------------------------------------------------------------------


def brute_force_split(w: NDArray[np.float64], s: int, delta: float) -> float:
    """Try every nonempty set of switches per weight; an LP sets the piece lengths."""
    m = w.size
    subsets = [c for r in range(1, s + 1) for c in itertools.combinations(range(s), r)]
    best = np.inf
    for choice in itertools.product(subsets, repeat=m):
        pairs = [(l, b) for l in range(m) for b in choice[l]]
        nv = len(pairs) + 1  # piece lengths, then T
        c = np.zeros(nv)
        c[-1] = 1
        a_ub = np.zeros((s, nv))
        b_ub = np.zeros(s)
        for k, (_, b) in enumerate(pairs):
            a_ub[b, k] = 1
            b_ub[b] -= delta
        a_ub[:, -1] = -1
        a_eq = np.zeros((m, nv))
        for k, (l, _) in enumerate(pairs):
            a_eq[l, k] = 1
        r = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=w, bounds=(0, None), method="highs")
        assert r.status == 0
        best = min(best, float(r.fun))
    return best


@pytest.mark.parametrize(
    ("w", "s", "delta", "want"),
    [
        ([3.0, 1.0], 2, 0.5, 2.75),  # 3 split 2.25 / 0.75, 1 whole with the 0.75
        ([1.0], 2, 0.2, 0.7),  # one weight halved
        ([1.0, 1.0], 3, 0.1, 0.8),  # (2 + 4 delta) / 3 beats 1 + delta
        ([1.0, 1.0], 3, 2.0, 3.0),  # 1 + delta beats (2 + 4 delta) / 3
        ([2.0, 1.0, 1.0], 1, 0.5, 5.5),  # one switch: everything in sequence
        ([0.0, 1.0], 2, 0.1, 0.6),  # a zero weight needs no piece
    ],
)
def test_optimal_split_hand_cases(w: list[float], s: int, delta: float, want: float) -> None:
    r = optimal_split(w, s, delta)
    assert r.status == "optimal"
    assert r.makespan == pytest.approx(want, rel=RTOL)


@pytest.mark.parametrize("seed", range(6))
def test_optimal_split_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.05, 1.0, size=int(rng.integers(1, 4)))
    s = int(rng.integers(2, 4))
    delta = float(rng.choice([0.02, 0.1, 0.4]))
    r = optimal_split(w, s, delta)
    assert r.status == "optimal"
    assert r.makespan == pytest.approx(brute_force_split(w, s, delta), rel=RTOL)


def test_optimal_split_below_spectra_placement() -> None:
    # Spectra's own permutations: the optimal split is never above greedy + equalize, and its
    # proved bound is below that feasible value; the assignment serves every weight exactly.
    strict = 0
    for d, s, delta in tiny_instances(40, ns=(4, 6, 8), seed=5):
        dec = spectra_decompose(Demand.from_matrix(d))
        heur, _ = equalize(greedy(dec.weights, s, delta), delta)
        heur_ms = float(loads(heur, delta).max())
        r = optimal_split(dec.weights, s, delta)
        assert r.dual_bound <= heur_ms * (1 + RTOL)
        assert r.makespan <= heur_ms
        assert r.makespan == pytest.approx(float(loads(r.assignment, delta).max()), rel=1e-12)
        served = np.zeros(len(dec))
        for sw in r.assignment:
            perms_here = [l for l, _ in sw]
            assert len(perms_here) == len(set(perms_here))  # at most one piece per switch
            for l, x in sw:
                assert x > 0
                served[l] += x
        np.testing.assert_allclose(served, dec.weights, rtol=1e-12)
        strict += r.makespan < heur_ms * (1 - 1e-6)
    assert strict > 0  # the MILP improves on greedy + equalize somewhere


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def brute_force_maximal_matchings(dem: Demand) -> set[tuple[int, ...]]:
    edges = list(zip(dem.rows.tolist(), dem.cols.tolist(), strict=True))
    found = set()
    for mask in range(1 << len(edges)):
        chosen = [edges[k] for k in range(len(edges)) if mask >> k & 1]
        rows, cols = {i for i, _ in chosen}, {j for _, j in chosen}
        if len(rows) < len(chosen) or len(cols) < len(chosen):
            continue
        if any(i not in rows and j not in cols for i, j in edges):
            continue
        perm = [-1] * dem.n
        for i, j in chosen:
            perm[i] = j
        found.add(tuple(perm))
    return found


@pytest.mark.parametrize("seed", range(8))
def test_maximal_matchings_match_brute_force(seed: int) -> None:
    dem = Demand.from_matrix(random_instance(4, density=0.6, rng=seed))
    got = maximal_matchings(dem)
    assert {tuple(p) for p in got.tolist()} == brute_force_maximal_matchings(dem)
    assert len({tuple(p) for p in got.tolist()}) == got.shape[0]


def test_random_instance_is_seeded_and_normalised() -> None:
    a, b = random_instance(5, density=0.4, rng=3), random_instance(5, density=0.4, rng=3)
    np.testing.assert_array_equal(a, b)
    assert not np.diag(a).any()
    assert max(a.sum(0).max(), a.sum(1).max()) == pytest.approx(1.0)
    assert (random_instance(3, density=1e-9, rng=0) > 0).sum() == 1  # never all zero


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


def test_schedule_refuses_large_inputs() -> None:
    with pytest.raises(InvalidInputError, match="at most 6 ports; `demand` has 7"):
        schedule(random_instance(7, rng=0), switches=2, delta=0.1, algorithm="exact")


def test_too_many_matchings() -> None:
    dem = Demand.from_matrix(np.ones((4, 4)) - np.eye(4))
    with pytest.raises(InvalidInputError, match="more than 5 maximal matchings"):
        maximal_matchings(dem, limit=5)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": [1.0, -1.0]}, r"weights\[1\] = -1.0"),
        ({"weights": [[1.0]]}, "must be 1-D"),
        ({"weights": [np.nan]}, "finite"),
        ({"switches": 0}, "`switches` must be an integer >= 1"),
        ({"delta": -0.1}, "`delta` must be a finite number >= 0"),
        ({"time_limit": 0}, "`time_limit` must be a number > 0"),
    ],
)
def test_optimal_split_errors(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"weights": [1.0], "switches": 2, "delta": 0.1} | kwargs
    with pytest.raises(InvalidInputError, match=match):
        optimal_split(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"demand": [[0, -1], [1, 0]]}, r"demand\[0, 1\] = -1"),
        ({"switches": 1.5}, "`switches`"),
        ({"delta": float("inf")}, "`delta`"),
        ({"time_limit": -5}, "`time_limit`"),
    ],
)
def test_solve_exact_errors(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"demand": [[0, 1], [1, 0]], "switches": 2, "delta": 0.1} | kwargs
    with pytest.raises(InvalidInputError, match=match):
        solve_exact(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"n": 1}, "`n` must be an integer >= 2"), ({"n": 3, "density": 0}, "`density`")]
)
def test_random_instance_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        random_instance(**kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def test_schedule_command_exact(tmp_path: Path) -> None:
    small, large = tmp_path / "small.npy", tmp_path / "large.npy"
    np.save(small, random_instance(3, rng=1))
    np.save(large, random_instance(7, rng=1))
    r = run("schedule", small, "--switches", "2", "--delta", "0.05", "--algorithm", "exact")
    assert r.exit_code == 0, r.output
    assert "exact" in r.stdout
    r = run("schedule", large, "--switches", "2", "--delta", "0.05", "--algorithm", "exact")
    assert r.exit_code == 2
    assert "supports at most 6 ports" in r.stderr


def test_repairs_never_undo_each_other() -> None:
    # The MILP's point was short on entries 0 and 2 by its tolerance; repairing entry 0 also
    # covered entry 3, whose (now negative) shortfall used to be "added", undoing entry 0's repair.
    d = [
        [0, 0.5406245777967653, 0.6082205173821813, 0],
        [1.1488450951789466, 0, 0, 0.99999],
        [0, 0, 0, 0.6082205173821813],
        [0, 1.6082105173821812, 0, 0],
    ]
    for alg in ("spectra-opt", "exact"):
        sched = schedule(d, switches=2, delta=0.08041052586910907, algorithm=alg)
        assert validate(sched, d).ok, alg
