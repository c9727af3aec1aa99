"""Property tests over every registered scheduler: validity, bounds, determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.optimize import linprog

import ocsched
from ocsched.assign import equalize, greedy, loads
from ocsched.schedulers import SCHEDULERS
from strategies import KINDS, deltas_for, demands, make_demand, switches

HEURISTICS = sorted(name for name, a in SCHEDULERS.items() if a.max_ports is None and not a.requires)
REL = 1e-9  # float slack when comparing a makespan with a bound computed another way


@pytest.mark.parametrize("algorithm", HEURISTICS)
@given(data=st.data())
def test_every_schedule_validates_and_respects_the_bound(algorithm: str, data: st.DataObject) -> None:
    d = data.draw(demands())
    s = data.draw(switches)
    delta = data.draw(deltas_for(d))
    sched = ocsched.schedule(d, switches=s, delta=delta, algorithm=algorithm, rng=0)
    report = ocsched.validate(sched, d)
    assert report.ok, report.violations
    assert sched.num_switches == s
    assert sched.lower_bound is not None
    assert sched.makespan >= sched.lower_bound * (1 - REL)
    assert sched.makespan >= ocsched.lower_bound(d, switches=s, delta=delta) * (1 - REL)


@pytest.mark.parametrize("algorithm", HEURISTICS)
@pytest.mark.parametrize("kind", ["zero", "one_by_one", "single"])
def test_degenerate_inputs(algorithm: str, kind: str) -> None:
    d = make_demand(kind, 3, seed=1)
    for s, delta in itertools.product((1, 3), (0.0, 0.5)):
        sched = ocsched.schedule(d, switches=s, delta=delta, algorithm=algorithm, rng=0)
        assert ocsched.validate(sched, d).ok
        if not d.any():
            assert sched.makespan == 0.0 and sched.num_configurations == 0


@pytest.mark.parametrize("algorithm", HEURISTICS)
def test_same_seed_same_schedule(algorithm: str) -> None:
    d = make_demand("skewed", 6, seed=7)
    a = ocsched.schedule(d, switches=3, delta=0.05, algorithm=algorithm, rng=42)
    b = ocsched.schedule(d, switches=3, delta=0.05, algorithm=algorithm, rng=42)
    assert a.to_dict()["switches"] == b.to_dict()["switches"]


@given(
    weights=st.lists(st.floats(0.001, 10.0), min_size=0, max_size=20),
    s=switches,
    delta=st.sampled_from([0.0, 0.01, 0.5, 5.0]),
)
def test_equalize_never_raises_the_max_load(weights: list[float], s: int, delta: float) -> None:
    w = np.array(weights)
    before = greedy(w, s, delta)
    after, splits = equalize(before, delta)
    lb, la = loads(before, delta), loads(after, delta)
    assert la.max(initial=0.0) <= lb.max(initial=0.0) * (1 + 1e-12) + 1e-12
    # every permutation keeps its total length, and only splits add pieces
    tot_b = np.zeros(len(w))
    tot_a = np.zeros(len(w))
    for sw in before:
        for l, x in sw:
            tot_b[l] += x
    for sw in after:
        for l, x in sw:
            assert x > 0
            tot_a[l] += x
    np.testing.assert_allclose(tot_a, tot_b, rtol=1e-12, atol=1e-12)
    assert sum(len(sw) for sw in after) == sum(len(sw) for sw in before) + splits
    # Invariant: equalize stops with the loads within delta, or with no piece worth splitting
    # (equalize's documented stopping slack is 1e-9 of the max load; loads are re-summed here)
    if splits and la.max() - la.min() > delta + 2e-9 * la.max():
        a_sw = int(np.argmax(la))
        x = la.max() - (la.max() + la.min() + delta) / 2
        assert max(p for _, p in after[a_sw]) <= x * (1 + 1e-9)


def _restricted_optimum(d: NDArray[np.float64], s: int, delta: float, per_switch: int) -> float:
    """Brute force: the best makespan with at most ``per_switch`` full permutations per switch.

    Every assignment of permutation multisets to the (identical) switches is tried; for each,
    the best durations solve an LP (min T: each switch's delays + durations <= T, every entry
    covered). Any such schedule is valid, so this is >= the true optimum (equal when the limit
    is not binding).
    """
    n = d.shape[0]
    perms = list(itertools.permutations(range(n)))
    support = [(i, j) for i in range(n) for j in range(n) if d[i, j] > 0]
    multisets = [
        c
        for k in range(per_switch + 1)
        for c in itertools.combinations_with_replacement(range(len(perms)), k)
    ]
    best = np.inf
    for combo in itertools.combinations_with_replacement(range(len(multisets)), s):
        confs = [(b, p) for b, m in enumerate(combo) for p in multisets[m]]
        if not confs:
            continue
        m = len(confs)
        # variables: t_0..t_{m-1}, T ; minimise T
        c = np.zeros(m + 1)
        c[-1] = 1.0
        a_ub, b_ub = [], []
        for b in range(s):
            row = np.zeros(m + 1)
            k = 0
            for idx, (bb, _) in enumerate(confs):
                if bb == b:
                    row[idx] = 1.0
                    k += 1
            row[-1] = -1.0
            a_ub.append(row)
            b_ub.append(-delta * k)
        feasible = True
        for i, j in support:
            row = np.zeros(m + 1)
            for idx, (_, p) in enumerate(confs):
                if perms[p][i] == j:
                    row[idx] = -1.0
            if not row.any():
                feasible = False
                break
            a_ub.append(row)
            b_ub.append(-d[i, j])
        if not feasible:
            continue
        res = linprog(c, A_ub=np.array(a_ub), b_ub=np.array(b_ub), bounds=(0, None), method="highs")
        if res.status == 0:
            best = min(best, float(res.fun))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_brute_force_optimum_respects_the_bound(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 2 if seed % 2 else 3
    kind = KINDS[seed % 4]
    d = make_demand(kind, n, seed)
    if not d.any():
        d[0, 1] = 1.0
    s = int(rng.integers(1, 3))
    delta = float(rng.choice([0.0, 0.05, 0.5]))
    opt = _restricted_optimum(d, s, delta, per_switch=2 if n == 3 else 3)
    lb = ocsched.lower_bound(d, switches=s, delta=delta)
    assert opt >= lb * (1 - REL)
    spectra = ocsched.schedule(d, switches=s, delta=delta).makespan
    assert spectra >= lb * (1 - REL)


def test_the_refined_bound_on_one_row_of_two_flows() -> None:
    # One row with two unit flows on 3 switches: the refined bound is 0.8 (optimal: see below).
    d = np.zeros((3, 3))
    d[0, 1] = d[0, 2] = 1.0
    assert ocsched.lower_bound(d, switches=3, delta=0.1) == pytest.approx(0.8, rel=1e-9)


@pytest.mark.slow  # the brute force enumerates every placement (~40 s)
def test_brute_force_finds_the_refined_bound_tight() -> None:
    d = np.zeros((3, 3))
    d[0, 1] = d[0, 2] = 1.0
    opt = _restricted_optimum(d, 3, 0.1, per_switch=2)
    assert opt == pytest.approx(0.8, rel=1e-9)


@given(d=demands(), s=switches, data=st.data())
def test_spectra_pack_never_loses_to_spectra(d: NDArray[np.float64], s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    a = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra")
    b = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-pack")
    assert b.makespan <= a.makespan * (1 + 1e-12)
