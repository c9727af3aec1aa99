"""Packing bounds: how the entries of one line pack onto s switches, with splits paid in delay.

The line bounds of :mod:`ocsched.bounds.lines` count configurations and content, as if every
switch could be filled exactly. This module adds the integrality of the *packing*: a switch that
carries two pieces of a line loses two delays, so small entries waste room and large ones must be
split, and every split costs one more delay.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from ocsched._jit import jit
from ocsched._types import FloatArray
from ocsched.bounds._exact import to_float
from ocsched.bounds.lines import _lines, refined_bound
from ocsched.model import Demand

__all__ = ["line_packing_bound", "packing_bound"]


#: Relative tolerance of the bisection inside one segment.
_RTOL = 1e-10
#: Lines whose savings search would need more than this many groups use the coarser test only.
_MAX_NEED = 64


@jit
def _passes(d: FloatArray, f: FloatArray, t: float, s: int, delta: float) -> bool:
    """The packing test of :func:`line_packing_bound` at makespan t, with piece counts ``f`` fixed.

    Compiled: the search calls it a few hundred times per matrix.
    """
    c = t - delta
    if c <= 0:
        return False
    need = int(f.sum()) - s
    if need <= 0:
        return True
    eps = delta / c
    if eps >= 1.0:
        return False
    # Slack a singleton group leaves in its last switch, in switches; generous by 1e-9 so that
    # rounding never makes the test fail where the exact one passes.
    w = np.empty(d.size)
    for i in range(d.size):
        w[i] = min(max(f[i] - d[i] / c, 0.0), 1.0)
    w = np.sort(w)[::-1] + 1e-9
    pos = 0
    for i in range(w.size):
        pos += w[i] > eps
    if pos == 0:
        return False
    top = np.zeros(pos + 1)  # top[m] = sum of the m largest
    for m in range(1, pos + 1):
        top[m] = top[m - 1] + w[m - 1]
    # (a) Content: the groups use distinct items, so their savings add to at most
    # sum_U (w - eps) + eps * groups; groups <= items / (items a saving group needs).
    # gain[m] = top[m] - eps (m - 1): the best saving value of a group of m items (m >= 1).
    gain = np.empty(pos + 1)
    for m in range(pos + 1):
        gain[m] = top[m] - eps * (m - 1)
    if gain[1:].max() < 1.0:
        return False
    q1 = 1
    while gain[q1] < 1.0:
        q1 += 1
    groups = min(need, pos // q1)
    if top[pos] - eps * (pos - groups) < need:
        return False
    if need > _MAX_NEED:
        return True
    # (b) Count: a group saving j needs q_j items (fewest whose largest slacks reach it); the
    # fewest items for `need` savings is a min-plus sum of q over compositions of `need`.
    big = pos + 1
    q = np.full(need + 1, big, dtype=np.int64)
    for j in range(1, need + 1):
        m = 1
        while m <= pos and gain[m] < j:
            m += 1
        if m > pos:
            break
        q[j] = m
    fewest = np.full(need + 1, big, dtype=np.int64)
    fewest[0] = 0
    for sigma in range(1, need + 1):
        best = big
        for i in range(sigma):
            best = min(best, fewest[sigma - 1 - i] + q[i + 1])
        fewest[sigma] = best
    return bool(fewest[need] <= pos)


def _counts(d: FloatArray, t: float, delta: float) -> FloatArray:
    return np.ceil(d / (t - delta) * (1 - 1e-12))


def _passes_exact(d: list[Fraction], f: list[int], t: Fraction, s: int, delta: Fraction) -> bool:
    """:func:`_passes` in exact arithmetic and without its slack: the test of the proof itself."""
    c = t - delta
    if c <= 0:
        return False
    need = sum(f) - s
    if need <= 0:
        return True
    eps = delta / c
    if eps >= 1:
        return False
    w = sorted(
        (min(max(fe - de / c, Fraction(0)), Fraction(1)) for de, fe in zip(d, f, strict=True)), reverse=True
    )
    pos = sum(1 for x in w if x > eps)
    if pos == 0:
        return False
    top = [Fraction(0)]
    for x in w[:pos]:
        top.append(top[-1] + x)
    gain = [top[m] - eps * (m - 1) for m in range(pos + 1)]
    if max(gain[1:]) < 1:
        return False
    q1 = next(m for m in range(1, pos + 1) if gain[m] >= 1)
    groups = min(need, pos // q1)
    if top[pos] - eps * (pos - groups) < need:
        return False
    if need > _MAX_NEED:
        return True
    big = pos + 1
    q = [big] * (need + 1)
    for j in range(1, need + 1):
        m = next((m for m in range(1, pos + 1) if gain[m] >= j), None)
        if m is None:
            break
        q[j] = m
    fewest = [0] + [big] * need
    for sigma in range(1, need + 1):
        fewest[sigma] = min(fewest[sigma - 1 - i] + q[i + 1] for i in range(sigma))
    return fewest[need] <= pos


def _finish(
    de: list[Fraction], fe: list[int], a: float, b: float, end: Fraction, s: int, dd: Fraction
) -> float:
    """The exact threshold of a segment's test, from its float bracket ``[a, b]``.

    The exact test fails at a (the compiled one, generous, does) and holds at the segment's end:
    bisect it to two adjacent floats and return the float nearest the threshold (the exact test
    at their midpoint tells which).
    """

    def ok(t: float | Fraction) -> bool:
        return _passes_exact(de, fe, Fraction(t), s, dd)

    lo = a
    # hi: b, or else the first float at or past the end (the test with these counts only grows)
    past = float(end) if Fraction(float(end)) >= end else math.nextafter(float(end), math.inf)
    hi = b if ok(b) else past
    while True:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if ok(mid):
            hi = mid
        else:
            lo = mid
    # The threshold T* lies in (lo, hi]: it rounds to hi if the test fails at their midpoint, to
    # lo if it passes there, unless T* is the midpoint itself (a tie: rounded to even, as a
    # schedule's end would be). Every comparison of the test flips at a T with
    # (T - delta) y = D + delta x, D a sum of entries, x and y integers, 0 < y <= Y = sum f:
    # so T* is a multiple of 1 / (y 2^p), 2^p the inputs' common denominator, and two such
    # numbers differ by at least 1 / (Y^2 2^p). Passing at the midpoint (a multiple of 1 / 2^p)
    # and failing half that below it, T* is the midpoint.
    half = (Fraction(lo) + Fraction(hi)) / 2
    if not ok(half):
        return float(hi)
    unit = max(x.denominator for x in (*de, dd))
    if unit % half.denominator == 0 and not ok(half - Fraction(1, 2 * sum(fe) ** 2 * unit)):
        return float(half)  # the tie, rounded to even
    return float(lo)


def line_packing_bound(entries: FloatArray, *, switches: int, delta: float, start: float = 0.0) -> float:
    """Return a makespan below which the entries of one line cannot be packed on the switches.

    ``entries`` are the positive entries of one row or column; ``start`` a makespan already known
    to be a lower bound (the search starts there, and the result is never below it).

    Notes
    -----
    **The packing of a line.** Take a schedule of makespan T and one line with entries ``d_e``.
    Join entry e to switch b when a configuration of b serves e; call the graph G. A switch joined
    to ``c_b`` entries holds at least ``c_b`` configurations, so its load is at least
    ``c_b delta + sum_e a_{e,b}`` with ``a_{e,b}`` what it serves of e. A connected component of G
    with entry set A and switch set B has at least ``|A| + |B| - 1`` edges, so adding up the loads
    of B: ``|B| T >= S_A + delta (|A| + |B| - 1)``, that is
    ``|B| >= (S_A + delta (|A| - 1)) / C`` with ``C = T - delta``. Components partition the entries
    and use disjoint switches, hence

        ``s >= min over partitions {A} of sum_A ceil((S_A + delta (|A| - 1)) / C)``.    (*)

    **Counting savings.** With ``F_e = ceil(d_e / C)`` (the switches of e alone) and the slack
    ``w_e = F_e - d_e / C`` in [0, 1), a group A needs ``F_A - floor(sum_A w_e - eps (|A| - 1))``
    switches, ``eps = delta / C``: grouping *saves* ``floor(sum_A w_e - eps (|A| - 1))`` switches.
    Entries with ``w_e <= eps`` never raise a saving, so the groups worth forming hold only the
    ``p`` entries with ``w_e > eps``. (*) needs savings of at least ``need = sum_e F_e - s``, and
    the test below checks two consequences, so it never rejects a feasible T:

    (a) a group of m entries saves at most ``g(m) = top(m) - eps (m - 1)`` (``top(m)``, the sum
        of the m largest slacks); distinct groups use distinct entries, so ``k`` groups save at
        most ``top(p) - eps (p - k)`` in total, and ``k <= p / q_1`` where ``q_1`` is the
        fewest entries with ``g >= 1``;
    (b) a group saving j holds at least ``q_j = min {m : g(m) >= j}`` entries, so the savings
        need ``min over compositions need = j_1 + ... + j_k of sum q_{j_i} <= p`` entries.

    **Search.** Between consecutive breakpoints ``delta + d_e / j`` the counts ``F_e`` are
    constant, the slacks grow and eps shrinks as T grows, so the test is monotone inside each
    segment. Segments are scanned in increasing T: a segment is skipped when the test fails at
    its right end (its most favourable point), and the first segment that passes is bisected
    with the compiled test (generous by 1e-9, so rounding never rejects a feasible T), then with
    the test in exact arithmetic and no slack down to two adjacent floats; the float nearest
    its threshold is returned (no schedule's makespan is below it: see
    :mod:`ocsched.bounds._exact`). The true minimum of (*) is non-increasing in T, so no
    feasible makespan lies below the value returned. The search stops at the wrap-around makespan
    ``delta + (r + delta (k - 1)) / s``, where one group of all entries passes (*).

    Examples
    --------
    Seven equal entries on four switches: the line bound says ``(1 + 7 * 0.08) / 4 = 0.39``, but
    no switch can hold two whole entries below ``2 / 7 + 0.16``, and splitting three of them
    costs more.

    >>> round(line_packing_bound(np.full(7, 1 / 7), switches=4, delta=0.08), 4)
    0.4457
    """
    d = np.sort(np.asarray(entries, dtype=np.float64))[::-1]
    d = d[d > 0]
    k, s = d.size, switches
    if k == 0:
        return float(start)
    r = float(d.sum())
    hi = delta + (r + delta * (k - 1)) / s
    lo = max(float(start), delta + float(d[0]) / s if s > 0 else 0.0, delta)
    if lo >= hi:
        return float(max(float(start), min(lo, hi)))
    # Breakpoints delta + d_e / j inside (lo, hi), exactly.
    dd = Fraction(delta)
    pts: set[Fraction] = set()
    for x in d:
        j_hi = math.floor(x / (lo - delta)) if lo > delta else 0
        j_lo = max(1, math.ceil(x / (hi - delta)))
        pts.update(dd + Fraction(float(x)) / j for j in range(j_lo, j_hi + 1))
    edges = [Fraction(lo), *sorted(p for p in pts if lo < p < hi), Fraction(hi)]
    de = [Fraction(x) for x in d.tolist()]
    for ea, eb in itertools.pairwise(edges):
        a, b = float(ea), float(eb)
        f = _counts(d, 0.5 * (a + b), delta)
        # The compiled test is generous, so where it fails the exact one does; a segment is
        # skipped where the exact test fails at its end (its most favourable point).
        if not _passes(d, f, b, s, delta):
            continue
        fe = [int(x) for x in f.tolist()]
        if not _passes_exact(de, fe, eb, s, dd):
            continue
        if _passes_exact(de, fe, ea, s, dd):
            return to_float(ea)
        # Invariant: the compiled test fails at a (so does the exact one); the exact one holds at eb.
        while b - a > _RTOL * b:
            mid = 0.5 * (a + b)
            if _passes(d, f, mid, s, delta):
                b = mid
            else:
                a = mid
        return _finish(de, fe, a, b, eb, s, dd)
    return float(hi)


def packing_bound(demand: Demand, *, switches: int, delta: float) -> float:
    """Return the largest :func:`line_packing_bound` over all lines (and the refined bound).

    Notes
    -----
    Every line's entries must be packed on the s switches within the makespan, so each
    :func:`line_packing_bound` is a lower bound, and so is their maximum. The search starts at
    :func:`~ocsched.bounds.lines.refined_bound` and visits lines in decreasing order of their
    wrap-around makespan (the most a line can ask for); a line is skipped when that is no more
    than the best bound so far or when the packing test already passes at it, so most lines
    cost one test. Valid for delta > 0; with delta = 0 it returns the refined bound.

    >>> d = Demand.from_matrix(np.full((8, 8), 1 / 7) - np.eye(8) / 7)
    >>> round(packing_bound(d, switches=4, delta=0.08), 4)
    0.4457
    """
    best = refined_bound(demand, switches=switches, delta=delta)
    if demand.nnz == 0 or delta <= 0:
        return best
    s = switches
    line, vals, sums, counts = _lines(demand)
    wrap = delta + (sums + delta * (counts - 1)) / s
    order = np.argsort(-wrap, kind="stable")
    by_line = np.argsort(line, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(line, minlength=sums.size))])
    for l in order.tolist():
        if wrap[l] <= best:
            break
        if counts[l] == 0:
            continue
        d = np.sort(vals[by_line[bounds[l] : bounds[l + 1]]])[::-1]
        if best > delta and _passes(d, _counts(d, best, delta), best, s, delta):
            continue
        best = max(best, line_packing_bound(d, switches=s, delta=delta, start=best))
    return float(best)
