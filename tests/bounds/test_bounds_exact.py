"""The bounds' searches end on the exact threshold: compared with exact rational references."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

import ocsched
from cases import CASES, Case
from ocsched import Fabric, LinkDown, Switch, SwitchDown
from ocsched.bounds import (
    fabric_entry_bound,
    fabric_line_bound,
    line_bound,
    line_packing_bound,
    line_slot_bound,
    refined_bound,
)
from ocsched.bounds.fabric import tolerant_fabric
from ocsched.bounds.packing import _passes_exact
from ocsched.bounds.slots import SLOT_LARGE, SLOT_WEIGHTS
from ocsched.model import Demand
from strategies import demands, hostile_fabrics, line_entries


def _exact_lines(d: NDArray[np.float64]) -> list[list[Fraction]]:
    """Every nonempty row and column of d as exact fractions."""
    out = [[Fraction(float(x)) for x in v if x > 0] for v in (*d, *d.T)]
    return [v for v in out if v]


def _ceil(q: Fraction) -> int:
    return -((-q.numerator) // q.denominator)


def refined_reference(d: NDArray[np.float64], s: int, delta: float) -> Fraction:
    """The refined bound's threshold T* in exact arithmetic, by enumerating breakpoints.

    T* is at least the line bound, which is at least delta + d_e / s for every entry, so each
    entry has at most s configurations there: the breakpoints delta + d_e / j, j <= s, cut
    [line bound, inf) into segments of constant counts; on each, T is feasible iff it is at
    least max_l c_l(K_l). The first segment holding its own candidate gives T*.
    """
    lines = _exact_lines(d)
    dd = Fraction(delta)

    def counts(t: Fraction) -> list[int]:
        return [sum(_ceil(x / (t - dd)) for x in v) for v in lines]

    def c(t: Fraction) -> Fraction:
        return max(
            max((sum(v) + dd * max(k, s)) / s, dd * _ceil(Fraction(k, s)))
            for v, k in zip(lines, counts(t), strict=True)
        )

    start = max(
        max((sum(v) + dd * max(len(v), s)) / s for v in lines), dd * _ceil(Fraction(max(map(len, lines)), s))
    )
    cuts = sorted({dd + x / j for v in lines for x in v for j in range(1, s + 1)} | {start})
    ends: list[Fraction | None] = [t for t in cuts if t >= start]
    for a, b in itertools.pairwise([*ends, None]):
        assert a is not None
        x = max(a, c(a))
        if b is None or x < b:
            return x
    raise AssertionError("unreachable: the last segment is unbounded")


def check_refined(d: NDArray[np.float64], s: int, delta: float) -> None:
    dem = Demand.from_matrix(d)
    if dem.nnz:
        assert refined_bound(dem, switches=s, delta=delta) == float(refined_reference(d, s, delta))


DELTAS = st.sampled_from([0.0, 1e-3, 0.01, 0.1, 0.2, 0.5, 2.0, 1 / 3, 7.0])


@settings(max_examples=60, deadline=None)
@given(d=demands(max_n=5), s=st.integers(1, 4), delta=DELTAS)
def test_refined_bound_is_the_exact_threshold(d: NDArray[np.float64], s: int, delta: float) -> None:
    check_refined(d, s, delta)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(d=demands(max_n=7), s=st.integers(1, 6), delta=DELTAS | st.floats(0.0, 10.0))
def test_refined_bound_is_the_exact_threshold_slow(d: NDArray[np.float64], s: int, delta: float) -> None:
    check_refined(d, s, delta)


def test_readme_example_bound_is_the_optimum_exactly() -> None:
    d = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]
    sched = ocsched.schedule(d, switches=2, delta=0.5)
    assert ocsched.lower_bound(d, switches=2, delta=0.5) == 2.75
    assert sched.makespan == sched.lower_bound == 2.75


@pytest.mark.parametrize("case", [c for c in CASES if c.optimum == c.bound], ids=lambda c: c.name)
def test_cases_bound_equals_an_optimal_makespan(case: Case) -> None:
    # The optimum of each case is attained by one of these; its makespan equals the bound exactly.
    lb = ocsched.lower_bound(case.demand, switches=case.switches, delta=case.delta)
    spans = {
        a: ocsched.schedule(case.demand, switches=case.switches, delta=case.delta, algorithm=a).makespan
        for a in ("spectra", "spectra-pack", "spectra-opt")
    }
    assert lb in spans.values(), (lb, spans)
    assert all(lb <= m for m in spans.values())


# --- fabric bounds: the same, against exact rational bisection -----------------------------------


def _avail(fab: Fabric, b: int, fails: float, t: Fraction) -> Fraction:
    """The measure of [0, min(t, fails)] outside the union of switch b's down windows."""
    end = min(t, Fraction(fails)) if math.isfinite(fails) else t
    if end <= 0:
        return Fraction(0)
    cut: list[tuple[Fraction, Fraction]] = []
    for a, z in sorted(fab.windows(b)):
        lo, hi = max(Fraction(a), Fraction(0)), end if math.isinf(z) else min(Fraction(z), end)
        if hi <= lo:
            continue
        if cut and lo <= cut[-1][1]:
            cut[-1] = (cut[-1][0], max(cut[-1][1], hi))
        else:
            cut.append((lo, hi))
    return end - sum((z - a for a, z in cut), Fraction(0))


def _conditions(
    d: NDArray[np.float64], fab: Fabric, *, circuits: bool
) -> list[tuple[list[Fraction], list[float]]]:
    """Every line (and circuit): its exact entries and, per switch, when its links fail."""
    n = d.shape[0]
    port = [[math.inf] * fab.size for _ in range(n)]
    for x in fab.failed_links:
        port[x.port][x.switch] = min(port[x.port][x.switch], x.start)
    out = []
    for i in range(n):
        out.append(([Fraction(float(v)) for v in d[i] if v > 0], port[i]))
        out.append(([Fraction(float(v)) for v in d[:, i] if v > 0], port[i]))
        for j in range(n):
            if circuits and d[i, j] > 0:
                out.append(
                    ([Fraction(float(d[i, j]))], [min(a, b) for a, b in zip(port[i], port[j], strict=True)])
                )
    return [c for c in out if c[0]]


def _line_ok(fab: Fabric, entries: list[Fraction], fails: list[float], t: Fraction) -> bool:
    rate = [Fraction(c) for c in fab.rates]
    delta = [Fraction(x) for x in fab.deltas]
    avail = [_avail(fab, b, fails[b], t) for b in range(fab.size)]
    gains = sorted((c * (a - x) for a, c, x in zip(avail, rate, delta, strict=True) if a > x), reverse=True)
    cost = min(c * x for c, x in zip(rate, delta, strict=True))
    k, best, acc = len(entries), Fraction(0), Fraction(0)
    for m, g in enumerate(gains, start=1):
        acc += g
        best = max(best, acc - max(k - m, 0) * cost)
    return best >= sum(entries)


def _entry_ok(fab: Fabric, entries: list[Fraction], fails: list[float], t: Fraction) -> bool:
    e = sorted(entries, reverse=True)
    k = len(e)
    prefix = [sum(e[:j], Fraction(0)) for j in range(k + 1)]
    lams = {
        Fraction(0),
        *e,
        *(Fraction(float(np.float64(c) * np.float64(x))) for c, x in zip(fab.rates, fab.deltas, strict=True)),
    }
    best = []
    for b in range(fab.size):
        a, c, x = _avail(fab, b, fails[b], t), Fraction(fab.rates[b]), Fraction(fab.deltas[b])
        f = [Fraction(0)] + [
            min(c * (a - x * j), prefix[j]) if c * (a - x * j) >= 0 else None for j in range(1, k + 1)
        ]
        best.append(f)
    return all(
        sum(max(v + lam * j for j, v in enumerate(f) if v is not None) for f in best) - lam * k >= prefix[-1]
        for lam in lams
    )


def _threshold(ok: Callable[[Fraction], bool]) -> tuple[float, float] | None:
    """Bisect an exact monotone condition to 1e-24; the nearest floats of the bracket's ends."""
    hi = Fraction(1)
    while not ok(hi):
        hi *= 2
        if hi > 2**80:
            return None
    lo = Fraction(0)
    while hi - lo > hi * Fraction(1, 10**24):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return float(lo), float(hi)


def _fabric_case(data: st.DataObject) -> tuple[NDArray[np.float64], Fabric]:
    d = data.draw(demands(max_n=4, kinds=("dense", "sparse", "single", "perm_sum", "ties")))
    return d, data.draw(hostile_fabrics(d.shape[0], float(d.max(initial=0.0)), max_switches=3))


def check_fabric(d: NDArray[np.float64], fab: Fabric) -> None:
    """The line bound over every line and circuit; the entry bound over every line (n <= 4: the
    eight lines it examines are all of them)."""
    dem = Demand.from_matrix(d)
    if dem.nnz == 0:
        return
    tolerant = tolerant_fabric(fab)  # the bounds' fabric: edges as the validator accepts them
    for bound, holds, circuits in (
        (fabric_line_bound, _line_ok, True),
        (fabric_entry_bound, _entry_ok, False),
    ):
        pool = _conditions(d, tolerant, circuits=circuits)
        ref = _threshold(lambda t, pool=pool, holds=holds: all(holds(tolerant, e, f, t) for e, f in pool))
        got = bound(dem, fab)
        if ref is None:
            assert math.isinf(got), bound.__name__
        elif ref[0] == ref[1]:  # the threshold's nearest float is known
            assert got == ref[0], (bound.__name__, got, ref)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_fabric_bounds_are_their_exact_thresholds(data: st.DataObject) -> None:
    check_fabric(*_fabric_case(data))


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(data=st.data())
def test_fabric_bounds_are_their_exact_thresholds_slow(data: st.DataObject) -> None:
    check_fabric(*_fabric_case(data))


# --- strong bounds: packing and slots ---------------------------------------------------------


def test_packing_bound_hand_cases_are_exact() -> None:
    # Seven entries of 1/7 on four switches: the optimum 2/7 + 2 delta, to the last bit (the
    # bisection stopped 1.6e-10 below it before); three unit entries on two switches: 2.5.
    got = line_packing_bound(np.full(7, 1 / 7), switches=4, delta=0.08)
    assert got == float(2 * Fraction(1 / 7) + 2 * Fraction(0.08))
    d = Demand.from_matrix([[0, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert ocsched.lower_bound(d, switches=2, delta=0.5, strong=True) == 2.5


def test_slot_bound_hand_case_is_exact() -> None:
    # The bisection stopped a relative 1e-6 below the step (0.25849999999963).
    d = np.concatenate([np.full(60, (1.12 - 0.15) / 60), [0.05, 0.05, 0.05]])
    got = line_slot_bound(d, switches=16, delta=0.04, start=0.2275)
    assert got == float(Fraction(0.05) + 3 * Fraction(float(d[0])) + 4 * Fraction(0.04))


def _slot_reference(entries: NDArray[np.float64], s: int, delta: float, start: float) -> Fraction:
    """The slot test's threshold from ``start``, exactly: its first step where nothing rules T out."""
    e = sorted(Fraction(float(x)) for x in entries)
    k, dd = len(e), Fraction(delta)
    bigs = [0, *(j for j in SLOT_LARGE if j < k)]

    def prefix(v: list[Fraction]) -> list[Fraction]:
        out = [Fraction(0)]
        for x in v:
            out.append(out[-1] + x + dd)
        return out

    def ruled_out(t: Fraction) -> bool:
        for big in bigs:
            ps, pl = prefix(e[: k - big]), prefix(e[k - big :])
            for w in SLOT_WEIGHTS:
                total = (k - big) + Fraction(w) * big
                held = []
                for m in range(1, s + 1):
                    cap = m * t - (m - 1) * dd
                    fits = [
                        Fraction(w) * i + max(j for j, p in enumerate(ps) if p <= cap - pl[i])
                        for i in range(big + 1)
                        if cap - pl[i] >= 0
                    ]
                    held.append(max(fits, default=None))
                if all(h is None or total * m > s * h for m, h in enumerate(held, start=1)):
                    return True
        return False

    steps = set()
    for big in bigs:
        ps, pl = prefix(e[: k - big]), prefix(e[k - big :])
        steps |= {(p + q + (m - 1) * dd) / m for p in ps for q in pl for m in range(1, s + 1)}
    first = Fraction(start)
    if not ruled_out(first):
        return first
    return min(t for t in steps if t > first and not ruled_out(t))


def check_slots(d: NDArray[np.float64], s: int, delta: float) -> None:
    start = float(
        line_bound(
            Demand.from_matrix(np.vstack([np.concatenate([[0.0], d]), np.zeros((d.size, d.size + 1))])),
            switches=s,
            delta=delta,
        )
    )
    got = line_slot_bound(d, switches=s, delta=delta, start=start)
    assert got == float(_slot_reference(d, s, delta, start))


SLOT_DELTAS = st.sampled_from([0.01, 0.04, 0.05, 0.2, 1.0])


@settings(max_examples=25, deadline=None)
@given(d=line_entries(max_k=6), s=st.integers(1, 4), delta=SLOT_DELTAS)
def test_line_slot_bound_is_its_exact_threshold(d: NDArray[np.float64], s: int, delta: float) -> None:
    check_slots(d, s, delta)


@pytest.mark.slow
@settings(max_examples=800, deadline=None)
@given(d=line_entries(max_k=8), s=st.integers(1, 6), delta=SLOT_DELTAS)
def test_line_slot_bound_is_its_exact_threshold_slow(d: NDArray[np.float64], s: int, delta: float) -> None:
    check_slots(d, s, delta)


def _packing_reference(entries: NDArray[np.float64], s: int, delta: float) -> tuple[float, float] | None:
    """line_packing_bound's threshold by an exact segment scan: the nearest floats of its bracket."""
    d = np.sort(entries)[::-1]
    e, dd = [Fraction(float(x)) for x in d], Fraction(delta)
    k = len(e)
    hi = Fraction(delta + (float(d.sum()) + delta * (k - 1)) / s)
    lo = Fraction(max(delta + float(d[0]) / s, delta))
    if lo >= hi:
        return None
    cuts = {dd + x / j for x in e for j in range(1, 64 * k) if lo < dd + x / j < hi}
    for a, b in itertools.pairwise([lo, *sorted(cuts), hi]):
        mid = (a + b) / 2
        f = [_ceil(x / (mid - dd)) for x in e]
        if not _passes_exact(e, f, b, s, dd):
            continue
        if _passes_exact(e, f, a, s, dd):
            return float(a), float(a)
        while b - a > b / 2**80:
            mid = (a + b) / 2
            a, b = (a, mid) if _passes_exact(e, f, mid, s, dd) else (mid, b)
        return float(a), float(b)
    return float(hi), float(hi)


def check_packing(d: NDArray[np.float64], s: int, delta: float) -> None:
    ref = _packing_reference(d, s, delta)
    if ref is not None and ref[0] == ref[1]:
        assert line_packing_bound(d, switches=s, delta=delta) == ref[0]


PACK_DELTAS = st.sampled_from([0.01, 0.05, 0.08, 0.2, 1.0])


@settings(max_examples=25, deadline=None)
@given(d=line_entries(max_k=6), s=st.integers(1, 4), delta=PACK_DELTAS)
def test_line_packing_bound_is_its_exact_threshold(d: NDArray[np.float64], s: int, delta: float) -> None:
    check_packing(d, s, delta)


@pytest.mark.slow
@settings(max_examples=800, deadline=None)
@given(d=line_entries(max_k=8), s=st.integers(1, 6), delta=PACK_DELTAS)
def test_line_packing_bound_is_its_exact_threshold_slow(d: NDArray[np.float64], s: int, delta: float) -> None:
    check_packing(d, s, delta)


def test_exact_ends_where_the_float_test_holds_early() -> None:
    # The float test held 1 ulp before the threshold at the line bound (counts 4 there, not 3),
    # and two slot steps 5.6e-17 apart could not be told apart by a float midpoint.
    d = np.zeros((7, 7))
    d[4, 5] = d[5, 4] = 0.5
    d[5, 6] = d[6, 5] = 0.99999
    check_refined(d, 3, 2.220446049250313e-16)
    check_slots(np.array([1.0, 1.0, 1.0, 4 / 3]), 4, 1.0)


def test_fabric_bound_hand_cases_found_by_the_slow_references() -> None:
    # A kink of the entry bound's dual function at its threshold (another K takes over there:
    # the chord alone stopped 2.7e-13 short), and a line whose float test (16-ulp margin) holds
    # before its threshold (it was skipped: 0.9999999999999993).
    fab = Fabric(
        (Switch(0.5, 1.0), Switch(0.0, 0.5), Switch(0.05, 1.0)),
        down=(SwitchDown(0, 0.0, 0.05),),
        failed_links=(LinkDown(0, 1, 0.1),),
    )
    assert fabric_entry_bound(Demand.from_matrix(np.ones((4, 4)) - np.eye(4)), fab) == 2.05
    fab = Fabric((Switch(0.5, 0.25), Switch(0.0, 1.0)), (SwitchDown(0, 0.0, 0.5),), (LinkDown(1, 0),))
    assert fabric_entry_bound(Demand.from_matrix([[0, 1], [1, 0]]), fab) == 1.0
    # Two lines with equal float sums, 0.733377208647393 + 1.0 and 1.733377208647393, whose exact
    # sums differ: the one kept by dominance in floats (more entries) was the smaller (1 ulp low).
    d = np.zeros((4, 4))
    d[1, 2] = d[3, 1] = 0.733377208647393
    d[2, 3], d[3, 2] = 1.733377208647393, 1.0
    check_fabric(d, Fabric((Switch(0.0, 0.25), Switch(0.0, 0.5), Switch(0.0, 1.0))))
