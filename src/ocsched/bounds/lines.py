"""Line bounds: each looks at one line (row or column) at a time.

For a line, ``r`` is its sum, ``k`` its number of nonzeros and ``d_e`` its entries. The bound of
the instance is the maximum over lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ocsched.bounds._exact import exact_sum, to_float
from ocsched.model import Demand
from ocsched.timing import busy

__all__ = ["bisect_bracket", "degree_bound", "line_bound", "refined_bound"]


def _lines(
    demand: Demand,
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Entry -> line index (rows 0..n-1, columns n..2n-1), entry values, line sums and counts."""
    line = np.concatenate([demand.rows, demand.cols + demand.n]).astype(np.int64)
    vals = np.concatenate([demand.values, demand.values]).astype(np.float64)
    sums = np.bincount(line, weights=vals, minlength=2 * demand.n).astype(np.float64)
    counts = np.bincount(line, minlength=2 * demand.n).astype(np.int64)
    return line, vals, sums, counts


#: Lines evaluated exactly at the end of a search (the ones whose float value is nearest the
#: maximum); any subset of lines gives a valid bound, so the cap only costs tightness in ulps
#: (when more lines tie within rounding, as on normalised matrices).
EXACT_LINES = 4


def _top_lines(values: NDArray[np.float64], used: NDArray[np.bool_]) -> list[int]:
    """The used lines whose float value is within rounding of the largest (at most EXACT_LINES)."""
    idx = np.nonzero(used)[0]
    if not idx.size:
        return []
    v = values[idx]
    top = float(v.max())
    # a line's float sum errs by at most (k - 1) ulps of it: 1e-12 covers lines of 4000 entries
    near = idx[(v == top) | (v >= top - 1e-12 * abs(top))]  # (v == top: an overflow to inf)
    if not near.size:  # NaN from an overflow: any line is a valid choice
        near = idx[:1]
    order = np.argsort(-values[near], kind="stable")[:EXACT_LINES]
    return [int(x) for x in near[order]]


def _exact_sums(line: NDArray[np.int64], vals: NDArray[np.float64], chosen: list[int]) -> dict[int, Fraction]:
    """The exact sum of each chosen line's entries."""
    if not chosen:
        return {}
    on = np.isin(line, chosen)
    sub_l, sub_v = line[on], vals[on]
    return {q: exact_sum(sub_v[sub_l == q]) for q in chosen}


def _line_value(r: Fraction, k: int, s: int, d: Fraction) -> Fraction:
    """``max((r + delta max(k, s)) / s, ceil(k / s) delta)``: both line conditions with k configurations."""
    return max((r + d * max(k, s)) / s, d * (-(-k // s)))


def line_bound(demand: Demand, *, switches: int, delta: float) -> float:
    """Return ``max over lines of (r + delta * max(k, s)) / s``.

    Notes
    -----
    Proof: take a schedule of makespan T and a line with k nonzeros. A configuration is a
    matching, so it carries at most one entry of the line: the line needs K >= k configurations,
    each preceded by delta on its switch. Let m <= min(K, s) be the number of switches carrying
    any of them. Summing the time used on those m switches, ``m T >= r + delta K``. If K >= s,
    ``T >= (r + delta K) / s``; if K < s, ``T >= r / K + delta >= (r + delta s) / s``. Either way
    ``s T >= r + delta max(K, s) >= r + delta max(k, s)``.

    The maximum is evaluated exactly on the lines nearest it and rounded once, to the nearest
    float (no schedule's makespan is below that: see :mod:`ocsched.bounds._exact`).

    >>> line_bound(Demand.from_matrix([[0, 1], [1, 0]]), switches=2, delta=0.1)
    0.6
    """
    if demand.nnz == 0:
        return 0.0
    return _line_exact(*_lines(demand), switches, delta, {})


def _line_exact(
    line: NDArray[np.int64],
    vals: NDArray[np.float64],
    sums: NDArray[np.float64],
    counts: NDArray[np.int64],
    s: int,
    delta: float,
    exact: dict[int, Fraction],
) -> float:
    """:func:`line_bound` from :func:`_lines`, its exact line sums kept in ``exact``."""
    top = _top_lines(busy(sums, np.maximum(counts, s), delta) / s, counts > 0)
    exact.update(_exact_sums(line, vals, [q for q in top if q not in exact]))
    d = Fraction(delta)
    return to_float(max((exact[q] + d * max(int(counts[q]), s)) / s for q in top))


def degree_bound(demand: Demand, *, switches: int, delta: float) -> float:
    """Return ``ceil(Delta / s) * delta``, Delta the most nonzeros in a line.

    Notes
    -----
    Proof: the busiest line needs Delta distinct configurations (one entry per matching), so by
    pigeonhole some switch holds at least ``ceil(Delta / s)`` of them, each preceded by delta.

    >>> degree_bound(Demand.from_matrix([[0, 1, 1], [1, 0, 1], [1, 1, 0]]), switches=1, delta=0.5)
    1.0
    """
    return to_float(Fraction(delta) * math.ceil(demand.max_degree / switches))


def refined_bound(demand: Demand, *, switches: int, delta: float, rtol: float = 1e-12) -> float:
    """Return the smallest T > delta meeting both line bounds with ``K(T)`` configurations.

    ``K(T) = sum_e ceil(d_e / (T - delta))`` for each line; T must satisfy
    ``s T >= r + delta max(K(T), s)`` and ``T >= ceil(K(T) / s) delta`` on every line.

    Notes
    -----
    Proof: in a schedule of makespan T every configuration lasts at most ``T - delta`` (its
    delay precedes it and it ends by T). Entry ``d_e`` therefore needs at least
    ``ceil(d_e / (T - delta))`` configurations, and distinct entries of a line need distinct
    configurations, so the line has at least K(T) of them. The arguments of
    :func:`line_bound` and :func:`degree_bound` then hold with K(T) in place of k. Write
    ``c_l(K)`` for the larger of ``(r + delta max(K, s)) / s`` and ``ceil(K / s) delta``, non-
    decreasing in K: a makespan T is feasible when ``T >= c_l(K_l(T))`` on every line l.

    **The exact threshold.** K is non-increasing in T, so the feasible makespans form a
    half-line; bisection brackets its left end T* in ``(lo, hi]`` within ``rtol``, and the
    search then returns T* itself where it can. For any ``tau > delta`` and any ``T < tau``,
    ``d_e / (T - delta) > d_e / (tau - delta)``, so entry e has at least
    ``kappa_e(tau) = floor(d_e / (tau - delta)) + 1`` configurations (its count just below tau),
    and T is feasible only if ``T >= max_l c_l(sum_{e in l} kappa_e(tau))``. Hence

        ``T* >= min(tau, max_l c_l(K_l(tau-)))``     for every tau > delta,

    an inequality that needs no floating-point test. It is evaluated in exact rationals (the
    counts exactly wherever the float quotient is near an integer, c on the lines nearest the
    maximum) for ``tau = hi`` and for the breakpoints ``delta + d_e / j`` next to the bracket,
    and rounded to the nearest float, which no valid schedule's makespan is below (see
    :mod:`ocsched.bounds._exact`); the largest value is returned (or lo, if larger). If no
    breakpoint lies in ``(T*, tau]``, the counts below tau are those at T* and the value is
    ``c(K(T*)) = T*`` (when the conditions are tight at T*) or tau = T* (when T* is a
    breakpoint: they fail just below it, with the larger counts). So the value is ``fl(T*)``,
    the makespan of a schedule ending at T*.
    ``K(T) >= k``, so this dominates the two simpler bounds.

    >>> round(refined_bound(Demand.from_matrix([[0, 1], [1, 0]]), switches=2, delta=0.1), 9)
    0.6
    >>> refined_bound(Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]]), switches=2, delta=0.5)
    2.75
    """
    if demand.nnz == 0:
        return 0.0
    s, d = switches, delta
    line, vals, sums, counts = _lines(demand)
    used = counts > 0
    # The test runs some 40 times per bound: each entry's count once (it is in a row and a
    # column line), binned on the used lines only (each bin sums in the same order as before).
    once, lines_used = vals[: demand.nnz], int(used.sum())
    used_id = np.unique(line, return_inverse=True)[1]
    used_sums = sums[used]

    def feasible(t: float) -> bool:
        if not t > d:  # every configuration needs its delay first
            return False
        # (1 - 1e-12) keeps an exact fit (d_e == t - delta) from rounding up to 2 configurations,
        # and makes the count never exceed the true one.
        per_entry = np.ceil(once / (t - d) * (1 - 1e-12))
        k = np.bincount(used_id, weights=np.concatenate((per_entry, per_entry)), minlength=lines_used)
        # ceil(k / s) delta grows with k: the line with the most configurations decides.
        return bool(
            t >= busy(0.0, np.ceil(k.max() / s), d) and np.all(s * t >= busy(used_sums, np.maximum(k, s), d))
        )

    exact: dict[int, Fraction] = {}  # exact line sums, shared with the finish
    lo = max(_line_exact(line, vals, sums, counts, s, d, exact), degree_bound(demand, switches=s, delta=d), d)
    hi = max(lo, d + float(vals.max()))
    if lo > d and feasible(lo):
        # The float test can hold a few ulps early: lo, or the exact threshold just above it.
        return max(lo, _refined_finish(line, vals, sums, counts, s, d, lo, lo, exact))
    # Invariant: lo is infeasible (or equal to delta), hi is feasible.
    lo, hi = bisect_bracket(feasible, lo, hi, rtol)
    return max(lo, _refined_finish(line, vals, sums, counts, s, d, lo, hi, exact))


def _refined_finish(
    line: NDArray[np.int64],
    vals: NDArray[np.float64],
    sums: NDArray[np.float64],
    counts: NDArray[np.int64],
    s: int,
    d: float,
    lo: float,
    hi: float,
    exact: dict[int, Fraction],
) -> float:
    """The largest ``min(tau, max_l c_l(K_l(tau-)))`` over the candidate taus (see :func:`refined_bound`)."""
    used = counts > 0
    dd = Fraction(d)
    if not (hi > d and math.isfinite(hi * (1 + 1e-9))):  # overflowed: keep the bisection's value
        return -math.inf
    # Candidates: hi, and the breakpoints delta + d_e / j next to the bracket (the float test
    # rounds near a breakpoint, so look a little beyond it on both sides).
    x = vals / (hi - d)
    near = np.nonzero(np.abs(x - np.round(x)) <= 1e-9 * x * (1.0 + hi / (hi - d)))[0]
    # hi, and a little beyond it: near a breakpoint or in rounding the float test may hold a few
    # ulps before the threshold, and every tau gives a valid bound.
    taus = {Fraction(hi), Fraction(hi * (1 + 1e-9))}
    for e in near[np.unique(vals[near], return_index=True)[1]][:EXACT_LINES].tolist():
        for j in {math.floor(float(x[e])), math.ceil(float(x[e]))} - {0}:
            tau = dd + Fraction(float(vals[e])) / j
            # A breakpoint closer to delta than delta's ulp (an entry far below delta) is no
            # candidate: the counts below it need tau - delta > 0 in floats. Any tau is valid.
            if lo * (1 - 1e-9) <= tau <= hi * (1 + 1e-9) and float(tau) > d:
                taus.add(tau)
    best = -math.inf
    for tau in sorted(taus):
        k = np.bincount(line, weights=_counts_below(vals, d, tau), minlength=sums.size).astype(np.int64)
        value = np.maximum(busy(sums, np.maximum(k, s), d) / s, np.ceil(k / s) * d)
        top = _top_lines(value, used)
        exact.update(_exact_sums(line, vals, [q for q in top if q not in exact]))
        c = max(_line_value(exact[q], int(k[q]), s, dd) for q in top)
        best = max(best, to_float(min(tau, c)))
    return best


def _counts_below(vals: NDArray[np.float64], d: float, tau: Fraction) -> NDArray[np.float64]:
    """``floor(d_e / (tau - delta)) + 1`` per entry: its fewest configurations at any T < tau (exact)."""
    dd = Fraction(d)
    ft = float(tau)
    gap = ft - d
    if gap <= 0 or not tau > dd:
        raise ValueError("tau must exceed delta")
    x = vals / gap
    out = np.floor(x) + 1
    # The float quotient errs by a few ulps, amplified by tau / (tau - delta) (tau rounded, then
    # delta subtracted): decide exactly wherever that could cross an integer.
    margin = 1e-12 * x * (2.0 + ft / gap)
    width = tau - dd
    for e in np.nonzero(np.abs(x - np.round(x)) <= margin + 1e-300)[0].tolist():
        q = Fraction(float(vals[e])) / width
        out[e] = q.numerator // q.denominator + 1
    return out


def bisect_bracket(ok: Callable[[float], bool], lo: float, hi: float, rtol: float) -> tuple[float, float]:
    """Bisect ``[lo, hi]`` for the left end of the half-line where ``ok`` holds; return the last bracket.

    ``ok`` must be monotone (false, then true), ``lo`` fail (or be a known floor) and ``hi`` hold.
    Stops when ``hi - lo <= rtol * hi`` or after 200 halvings.

    >>> lo, hi = bisect_bracket(lambda t: t * t >= 2.0, 0.0, 2.0, 1e-12)
    >>> lo * lo < 2.0 <= hi * hi, hi - lo <= 2e-12
    (True, True)
    """
    for _ in range(200):
        if hi - lo <= rtol * hi:
            break
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi
