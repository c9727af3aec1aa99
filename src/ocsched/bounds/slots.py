"""Slot bound: a weighted count of one line's entries against what its switch groups can hold.

:mod:`ocsched.bounds.packing` shows that the entries of one line split into groups (the
components of the entry-switch graph), a group of entries A on m switches satisfying
``sum_A (d_e + delta) <= m T - (m - 1) delta``. Its test counts how many switches the groups
need from their sizes. This module counts *entries* instead, each weighted: when every switch
holds about q configurations, a line with more than ``q s`` entries cannot fit, and a large
entry, which leaves room for fewer small ones beside it, counts for more than one.
"""

from __future__ import annotations

import bisect
import itertools
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ocsched._jit import jit
from ocsched._types import FloatArray
from ocsched.bounds._exact import to_float
from ocsched.bounds.lines import _lines, bisect_bracket
from ocsched.model import Demand

__all__ = ["line_slot_bound", "slot_bound"]


#: Weights tried for a large entry (a small one weighs 1).
SLOT_WEIGHTS = (1.25, 1.5, 2.0)
#: Numbers of large entries tried (the j largest of the line), besides none.
SLOT_LARGE = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
#: Lines examined by :func:`slot_bound` (the heaviest by sum).
SLOT_LINES = 4
#: Relative width at which the bisection stops (the search then finishes on the exact step).
_RTOL = 1e-12
#: Relative generosity of the bisection's test: rounding must never rule out a feasible t.
_SLACK = 1e-12
#: At most this many steps are examined in the final bracket (past it, the bisection's value).
_MAX_STEPS = 256


def _ruled_out(
    d: FloatArray, t: float, s: int, delta: float, big: int, slack: float = _SLACK
) -> NDArray[np.bool_]:
    """Which of :data:`SLOT_WEIGHTS` rule out makespan t, given to the ``big`` largest entries (d ascending).

    With ``big = 0`` all entries weigh 1 and the first value is the answer. ``slack`` makes the
    test generous (rounding must never rule out a feasible t); 0 is the exact test, right
    wherever t is not within rounding of a step (see :func:`_slot_finish`).
    """
    return np.asarray(_ruled_out_kernel(d, t, s, delta, big, _WEIGHTS, slack))


_WEIGHTS = np.asarray(SLOT_WEIGHTS, dtype=np.float64)


@jit
def _ruled_out_kernel(
    d: FloatArray, t: float, s: int, delta: float, big: int, weights: FloatArray, slack: float
) -> NDArray[np.bool_]:
    """:func:`_ruled_out`, compiled (the bisection calls it some hundred times per line)."""
    k = d.size
    ps = np.zeros(k - big + 1)  # prefix sums of the small entries (+ delta), smallest first
    for i in range(k - big):
        ps[i + 1] = ps[i] + (d[i] + delta)
    pl = np.zeros(big + 1)  # prefix sums of the large entries (+ delta), smallest first
    for i in range(big):
        pl[i + 1] = pl[i] + (d[k - big + i] + delta)
    out = np.zeros(weights.size, dtype=np.bool_)
    for wi in range(weights.size):
        w = weights[wi]
        total = (k - big) + w * big
        ruled = True
        for m in range(1, s + 1):
            cap = (m * t - (m - 1) * delta) * (1 + slack)
            held = -np.inf  # U(m): the most weight m switches of one group can hold
            for i in range(big + 1):  # i large entries (the smallest ones), then small ones
                rest = cap - pl[i]
                if rest >= 0:
                    fits = np.searchsorted(ps, rest, side="right") - 1
                    held = max(held, w * i + fits)
            # total > s * U(m) / m for every m, compared as products: weights, counts and s are
            # small multiples of 1/4, so with no slack the comparison is exact.
            if not total * m > s * held * (1 + slack):
                ruled = False
                break
        out[wi] = ruled
    return out


def line_slot_bound(entries: FloatArray, *, switches: int, delta: float, start: float) -> float:
    """Return a makespan at least ``start`` below which the entries of one line cannot be scheduled.

    Parameters
    ----------
    entries : ndarray of float
        The positive entries of one row or column.
    switches : int
        Number of identical switches s.
    delta : float
        Reconfiguration delay.
    start : float
        A known lower bound; the search goes up from it, and it is returned when the test
        cannot rule it out.

    Returns
    -------
    float
        The bound.

    Notes
    -----
    **Groups.** In a schedule of makespan T, join entry e of the line to switch b when a
    configuration of b serves e. A connected component with entry set A and switch set B
    satisfies ``|B| T >= S_A + delta (|A| + |B| - 1)`` (proof in
    :func:`~ocsched.bounds.packing.line_packing_bound`), that is
    ``sum_{e in A} (d_e + delta) <= cap(|B|) = |B| T - (|B| - 1) delta``. Components partition the
    entries and use disjoint switches, so ``sum |B| <= s``.

    **Weighted count.** Give each entry a weight ``v_e >= 0`` and let
    ``U(m) = max {sum_{A'} v_e : A' a set of the line's entries, sum_{A'} (d_e + delta) <= cap(m)}``.
    Each component holds at most ``U(|B|)`` weight, so
    ``sum_e v_e <= sum_A U(|B_A|) <= s max_{1 <= m <= s} U(m) / m``. A T violating this is
    infeasible.

    **The weights tried.** The j largest entries weigh w > 1 and the others 1, for j in
    :data:`SLOT_LARGE` (and j = 0) and w in :data:`SLOT_WEIGHTS`. With two weights, ``U(m)`` is
    exact: a best set with i large entries takes the i smallest of them and then as many of the
    smallest others as fit (swapping an entry for a smaller one of its class keeps the weight
    and frees room), so U is a maximum over i of prefix sums found by binary search.

    **Search.** ``cap(m)`` grows with T, hence so do U and the right-hand side: each test fails
    on a half-line ``T < T*``. The bound is the largest T* over the weights, found by bisection
    from ``start`` over the weights that fail there (the others fail nowhere above it), then
    exactly: the tests are step functions of T, and the step where the last one stops ruling T
    out is found in exact arithmetic (:func:`_slot_finish`) and rounded to the nearest float
    (no schedule's makespan is below that, see :mod:`ocsched.bounds._exact`).

    Cost: O(s j) per test, one test per weight when nothing fails at ``start``.

    Examples
    --------
    Sixteen switches, delta = 0.04, 60 entries of 0.97 / 60 and three of 0.05. The line bound
    says 0.2275. But no switch holds five entries, one holding a large entry holds three more
    only from ``0.05 + 3 * 0.97 / 60 + 4 * 0.04 = 0.2585`` on, and cutting a large entry in two
    takes a fifth piece somewhere: below 0.2585, 63 entries need more than 64 places. (At
    0.2585 three switches hold a large and three small entries, the others four small ones.)

    >>> d = np.concatenate([np.full(60, (1.12 - 0.15) / 60), [0.05, 0.05, 0.05]])
    >>> round(float(d.sum() + 63 * 0.04) / 16, 4)
    0.2275
    >>> line_slot_bound(d, switches=16, delta=0.04, start=0.2275)  # 0.05 + 3 * 0.97 / 60 + 4 * 0.04
    0.2585
    """
    d = np.sort(np.asarray(entries, dtype=np.float64))
    d = d[d > 0]
    k, s = d.size, switches
    if k == 0 or delta <= 0 or start <= 0:
        return float(start)
    failing = [j for j in (0, *(j for j in SLOT_LARGE if j < k)) if _ruled_out(d, start, s, delta, j).any()]
    if not failing:
        return float(start)

    def ruled_out(t: float) -> bool:
        return any(bool(_ruled_out(d, t, s, delta, j).any()) for j in failing)

    # Every entry whole on its own switch fits: T = max(d) + delta with s >= k, else the
    # wrap-around makespan (one group of all the entries on all the switches).
    hi = max(float(start), delta + (float(d.sum()) + delta * (k - 1)) / s, float(d[-1]) + delta)
    while ruled_out(hi):  # pragma: no cover - the wrap-around makespan passes (one group)
        hi *= 2.0
    # Invariant: start is ruled out, hi is not.
    lo, hi = bisect_bracket(lambda t: not ruled_out(t), float(start), hi, _RTOL)
    exact = _slot_finish(d, s, delta, failing, lo, hi)
    return lo if exact is None else max(lo, exact)


def _slot_finish(
    d: FloatArray, s: int, delta: float, failing: list[int], lo: float, hi: float
) -> float | None:
    """The exact threshold: the first step of the test past lo at which it no longer rules out.

    Every test is a step function of T: ``U(m)`` changes only where ``cap(m)`` reaches a sum
    of entries plus delays, at ``T = (P + (m - 1) delta) / m`` with P a large prefix plus a
    small prefix. The steps in the bracket (slightly widened: the bisection's test is generous)
    are found exactly; between two consecutive steps the test is constant, so it is evaluated
    without slack at their midpoint, where rounding cannot change it. The first step after which
    it no longer rules out is the threshold (the test still rules out just before it, and at lo,
    the generous test having ruled out lo). None when unresolved (too many steps, or two closer
    than rounding).
    """
    k = d.size
    top = hi * (1 + 1e-9)
    dd = Fraction(delta)
    cum = [Fraction(0)]  # exact prefix sums of the ascending entries
    for x in d.tolist():
        cum.append(cum[-1] + Fraction(x))
    steps: set[Fraction] = set()
    for big in failing:
        small = np.concatenate([[0.0], np.cumsum(d[: k - big] + delta)])
        large = np.concatenate([[0.0], np.cumsum(d[k - big :] + delta)])
        for m in range(1, s + 1):
            margin = 1e-9 * (m * top + large[-1])
            low = np.searchsorted(small, m * lo - (m - 1) * delta - large - margin, side="left")
            up = np.searchsorted(small, m * top - (m - 1) * delta - large + margin, side="right")
            for i in np.nonzero(up > low)[0].tolist():
                p_large = cum[k - big + i] - cum[k - big] + i * dd
                for j in range(int(low[i]), int(up[i])):
                    t = (cum[j] + j * dd + p_large + (m - 1) * dd) / m
                    if lo < t <= top:
                        steps.add(t)
            if len(steps) > _MAX_STEPS:
                return None
    cuts = [Fraction(lo), *sorted(steps), Fraction(top)]
    # The float test errs by a few ulps of cap and of the prefix sums (k additions): where half
    # a gap between steps exceeds that, the midpoint's float value is the exact one; closer
    # steps are told apart in exact arithmetic.
    close = Fraction(4 * (k + 2) * float(np.finfo(np.float64).eps))
    for a, b in itertools.pairwise(cuts):
        if b - a > close * b:
            mid = float((a + b) / 2)
            ruled = any(bool(_ruled_out(d, mid, s, delta, j, 0.0).any()) for j in failing)
        else:
            ruled = any(_ruled_out_exact(cum, (a + b) / 2, s, dd, j) for j in failing)
        if not ruled:
            return None if a == cuts[0] else to_float(a)
    return None


def _ruled_out_exact(cum: list[Fraction], t: Fraction, s: int, delta: Fraction, big: int) -> bool:
    """:func:`_ruled_out_kernel` in exact arithmetic, no slack (any weight rules t out), from the
    exact prefix sums ``cum`` of the ascending entries."""
    k = len(cum) - 1
    small = [cum[j] + j * delta for j in range(k - big + 1)]
    large = [cum[k - big + i] - cum[k - big] + i * delta for i in range(big + 1)]
    for w in SLOT_WEIGHTS:
        weight = Fraction(w)
        total = (k - big) + weight * big
        ruled = True
        for m in range(1, s + 1):
            cap = m * t - (m - 1) * delta
            held = [
                weight * i + bisect.bisect_right(small, cap - p) - 1 for i, p in enumerate(large) if cap >= p
            ]
            if held and not total * m > s * max(held):
                ruled = False
                break
        if ruled:
            return True
    return False


def slot_bound(
    demand: Demand, *, switches: int, delta: float, start: float, lines: int = SLOT_LINES
) -> float:
    """Return the largest :func:`line_slot_bound` over the heaviest lines, never below ``start``.

    Notes
    -----
    Each line's bound holds for the whole schedule (its entries must all be served), so the
    maximum over any set of lines is a lower bound; the ``lines`` heaviest lines by sum are
    examined, each from the best bound so far.

    >>> d = Demand.from_matrix(np.full((4, 4), 1.0) - np.eye(4))
    >>> round(slot_bound(d, switches=2, delta=0.5, start=2.25), 4)  # the optimum (one split)
    2.5
    """
    if demand.nnz == 0 or delta <= 0:
        return float(start)
    line, vals, sums, _ = _lines(demand)
    order = np.argsort(-sums, kind="stable")[: max(1, lines)]
    by_line = np.argsort(line, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(line, minlength=sums.size))])
    best = float(start)
    for l in order.tolist():
        entries = vals[by_line[bounds[l] : bounds[l + 1]]]
        best = line_slot_bound(entries, switches=switches, delta=delta, start=best)
    return best
