"""Line bounds: each looks at one line (row or column) at a time.

For a line, ``r`` is its sum, ``k`` its number of nonzeros and ``d_e`` its entries. The bound of
the instance is the maximum over lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ocsched.model import Demand
from ocsched.timing import busy

__all__ = ["degree_bound", "line_bound", "refined_bound"]


def _lines(
    demand: Demand,
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Entry -> line index (rows 0..n-1, columns n..2n-1), entry values, line sums and counts."""
    line = np.concatenate([demand.rows, demand.cols + demand.n]).astype(np.int64)
    vals = np.concatenate([demand.values, demand.values]).astype(np.float64)
    sums = np.bincount(line, weights=vals, minlength=2 * demand.n).astype(np.float64)
    counts = np.bincount(line, minlength=2 * demand.n).astype(np.int64)
    return line, vals, sums, counts


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

    >>> line_bound(Demand.from_matrix([[0, 1], [1, 0]]), switches=2, delta=0.1)
    0.6
    """
    if demand.nnz == 0:
        return 0.0
    _, _, sums, counts = _lines(demand)
    return float((busy(sums, np.maximum(counts, switches), delta) / switches)[counts > 0].max())


def degree_bound(demand: Demand, *, switches: int, delta: float) -> float:
    """Return ``ceil(Delta / s) * delta``, Delta the most nonzeros in a line.

    Notes
    -----
    Proof: the busiest line needs Delta distinct configurations (one entry per matching), so by
    pigeonhole some switch holds at least ``ceil(Delta / s)`` of them, each preceded by delta.

    >>> degree_bound(Demand.from_matrix([[0, 1, 1], [1, 0, 1], [1, 1, 0]]), switches=1, delta=0.5)
    1.0
    """
    return float(busy(0.0, math.ceil(demand.max_degree / switches), delta))


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
    :func:`line_bound` and :func:`degree_bound` then hold with K(T) in place of k. K is
    non-increasing in T, so the set of T meeting both conditions is a half-line and bisection
    finds its left end; the value returned is on the infeasible side (within ``rtol``), so it is
    never above the true bound. ``K(T) >= k``, so this dominates the two simpler bounds.

    >>> round(refined_bound(Demand.from_matrix([[0, 1], [1, 0]]), switches=2, delta=0.1), 9)
    0.6
    """
    if demand.nnz == 0:
        return 0.0
    s, d = switches, delta
    line, vals, sums, counts = _lines(demand)
    used = counts > 0

    def feasible(t: float) -> bool:
        # (1 - 1e-12) keeps an exact fit (d_e == t - delta) from rounding up to 2 configurations.
        k = np.bincount(line, weights=np.ceil(vals / (t - d) * (1 - 1e-12)), minlength=sums.size)[used]
        return bool(
            np.all(s * t >= busy(sums[used], np.maximum(k, s), d))
            and np.all(t >= busy(0.0, np.ceil(k / s), d))
        )

    lo = max(line_bound(demand, switches=s, delta=d), degree_bound(demand, switches=s, delta=d), d)
    hi = max(lo, d + float(vals.max()))
    if lo > d and feasible(lo):
        return lo
    # Invariant: lo is infeasible (or equal to delta), hi is feasible.
    return bisect_threshold(feasible, lo, hi, rtol)


def bisect_threshold(ok: Callable[[float], bool], lo: float, hi: float, rtol: float) -> float:
    """Bisect ``[lo, hi]`` for the left end of the half-line where ``ok`` holds; return its ``lo`` side.

    ``ok`` must be monotone (false, then true), ``lo`` fail (or be a known floor) and ``hi`` hold.
    Stops when ``hi - lo <= rtol * hi`` or after 200 halvings; the value returned is on the failing
    side, so a bound computed this way is never above the true threshold.

    >>> bisect_threshold(lambda t: t * t >= 2.0, 0.0, 2.0, 1e-12)  # doctest: +ELLIPSIS
    1.41421356237...
    """
    for _ in range(200):
        if hi - lo <= rtol * hi:
            break
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return lo
