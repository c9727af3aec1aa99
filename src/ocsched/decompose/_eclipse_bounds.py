"""Upper bounds on Eclipse's candidate scores, so that most candidates need no assignment.

Eclipse scores a duration alpha by ``W(alpha) / (alpha + delta)``, where ``W(alpha)`` is the
maximum-weight matching value on the capped residual ``min(R, alpha)``. :func:`search` solves
the assignment only for the candidates whose score might lie within ``window`` of the best; every
other candidate is proven below it by one of these bounds (R >= 0 on a fixed support):

- *Lines*: ``W(a) <= sum_i min(max_j R_ij, a)``, and the same over columns (a matching takes at
  most one entry per line).
- *Monotone*: ``W(a) <= W(b)`` for ``a <= b`` (capping lower never gains).
- *Slope*: ``W(a) <= W(b) + (a - b) * min(W(b) / b, nu(b))`` for ``a > b``, where ``nu(b)`` is the
  least of the numbers of rows and of columns holding an entry > b: raising the cap from b to a
  adds at most ``a - b`` per matched entry above b, and ``min(R, a) <= (a / b) min(R, b)``.
- *Chord*: for ``b1 < a < b2``, ``W(a) <= c1 + (a - b1) / (b2 - b1) * (c2 - c1)`` with
  ``c1 = W(b1) + E1`` and ``c2 = W(b2) + E2``. Split the entries between b1 and b2 at a: X1 with
  ``b1 < R < a``, X2 with ``a <= R < b2``. ``V(t) = max_M sum_M v_t``, where ``v_t`` is t on the
  entries >= a and R below, is a maximum of affine functions of t, so convex; ``V(a) = W(a)``,
  ``V(b1) <= W(b1) + E1`` and ``V(b2) <= W(b2) + E2``, where E1 (E2) is the least over rows and
  over columns of the sums of each line's largest ``R - b1`` on X1 (``b2 - R`` on X2): a
  matching gains at most that much from them.

Every bound holds for any upper bound of W at b, so values from earlier steps (the residual only
decreases) serve as well as this step's.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

import numpy as np

from ocsched._types import FloatArray, IntArray

__all__ = ["ScoreBounds", "search"]


#: Keys left to score at or below this many are scored without bounds (the bounds cost more).
_FEW = 2


class ScoreBounds:
    """Upper bounds on ``W(a)`` for the residual ``res`` on the support ``(rows, cols)``.

    Examples
    --------
    >>> b = ScoreBounds(2, np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([3.0, 1.0, 2.0]))
    >>> b.lines(np.array([1.0, 2.0, 3.0])).tolist()  # W is [2, 3, 3]
    [2.0, 3.0, 4.0]
    >>> b.slope(np.array([3.0]), 2.0, 3.0).tolist()  # one row has an entry > 2
    [4.0]
    """

    def __init__(self, n: int, rows: IntArray, cols: IntArray, res: FloatArray) -> None:
        self.n = n
        on = np.nonzero(res > 0)[0]
        self.rows, self.cols, self.res = rows[on], cols[on], res[on]
        order = np.argsort(self.res, kind="stable")
        self.rows, self.cols, self.res = self.rows[order], self.cols[order], self.res[order]
        self.line_max: list[FloatArray] = []
        self.line_sum: list[FloatArray] = []
        for line in (self.rows, self.cols):
            top = np.zeros(n)
            np.maximum.at(top, line, self.res)
            top = np.sort(top[top > 0])
            self.line_max.append(top)
            self.line_sum.append(np.concatenate([[0.0], np.cumsum(top)]))
        self._excess: dict[tuple[float, float], tuple[FloatArray, FloatArray, FloatArray]] = {}

    def lines(self, a: FloatArray) -> FloatArray:
        """The line bound at each cap in ``a``."""
        out = np.full(a.shape, np.inf)
        for top, csum in zip(self.line_max, self.line_sum, strict=True):
            k = np.searchsorted(top, a, side="right")
            out = np.minimum(out, csum[k] + a * (top.size - k))
        return out

    def nu(self, b: FloatArray) -> FloatArray:
        """The least of the numbers of rows and of columns with an entry > b, for each b."""
        r, c = (t.size - np.searchsorted(t, b, side="right") for t in self.line_max)
        return np.minimum(r, c).astype(np.float64)

    def slope(self, a: FloatArray, b: FloatArray, wb: FloatArray) -> FloatArray:
        """The monotone and slope bounds at each cap in ``a`` from all ``W(b) <= wb``, the least of them."""
        b, wb = (
            np.atleast_1d(np.asarray(b, dtype=np.float64)),
            np.atleast_1d(np.asarray(wb, dtype=np.float64)),
        )
        if b.size == 0:
            return np.full(a.shape, np.inf)
        rate = np.minimum(wb / b, self.nu(b))
        above = wb + (a[:, None] - b) * rate
        return np.asarray(np.where(a[:, None] <= b, wb, above).min(axis=1), dtype=np.float64)

    def excess(self, b1: float, b2: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """E1 and E2 of the chord bound on (b1, b2) for every split of the entries between them.

        Returns ``(r, e1, e2)``: r the entries' values with ``b1 < R < b2`` (sorted); for a cap
        a, with ``p = searchsorted(r, a)``, E1 is ``e1[p]`` (on ``r[:p]``) and E2 is ``e2[p]``.
        """
        key = (b1, b2)
        if key not in self._excess:
            p = np.searchsorted(self.res, b1, side="right")
            q = np.searchsorted(self.res, b2, side="left")
            r = self.res[p:q]
            e1 = np.full(r.size + 1, np.inf)
            e2 = np.full(r.size + 1, np.inf)
            for line in (self.rows[p:q], self.cols[p:q]):
                # A line's entries in order of value: its largest R - b1 on a prefix is its last
                # entry there, its largest b2 - R on a suffix its first, so both sums telescope.
                o = np.argsort(line, kind="stable")
                lo, ro = line[o], r[o]
                same = lo[1:] == lo[:-1]
                up = np.empty(r.size)
                up[o] = ro - np.where(np.concatenate([[False], same]), np.concatenate([[b1], ro[:-1]]), b1)
                down = np.empty(r.size)
                down[o] = np.where(np.concatenate([same, [False]]), np.concatenate([ro[1:], [b2]]), b2) - ro
                e1 = np.minimum(e1, np.concatenate([[0.0], np.cumsum(up)]))
                e2 = np.minimum(e2, np.concatenate([np.cumsum(down[::-1])[::-1], [0.0]]))
            self._excess[key] = (r, e1, e2)
        return self._excess[key]

    def chord(self, a: FloatArray, pa: FloatArray, pw: FloatArray) -> FloatArray:
        """The chord bound at each cap in ``a`` between the nearest points ``(pa, pw)`` around it.

        ``pa`` is sorted; caps outside ``(pa[0], pa[-1])`` or equal to a point get inf.
        """
        out = np.full(a.shape, np.inf)
        j = np.searchsorted(pa, a, side="left")
        for k in np.unique(j[(j > 0) & (j < pa.size)]).tolist():
            b1, b2 = float(pa[k - 1]), float(pa[k])
            idx = np.nonzero((j == k) & (a > b1) & (a < b2))[0]
            if idx.size == 0:
                continue
            x = a[idx]
            r, e1, e2 = self.excess(b1, b2)
            p = np.searchsorted(r, x, side="left")  # X1: b1 < R < x; X2: x <= R < b2
            c1, c2 = pw[k - 1] + e1[p], pw[k] + e2[p]
            out[idx] = c1 + (x - b1) / (b2 - b1) * (c2 - c1)
        return out


def search(
    keys: list[int],
    vals: FloatArray,
    delta: float,
    bounds: ScoreBounds,
    history: list[tuple[float, float]],
    exact: dict[int, tuple[float, IntArray]],
    score: Callable[[int], tuple[float, IntArray]],
    window: float,
) -> None:
    """Score (into ``exact``) every key whose score may be within ``window`` of the best of ``exact``.

    ``score(k)`` returns the score of the cap ``vals[k]`` and its matching; ``history`` holds
    ``(cap, upper bound of W)`` pairs from earlier steps. Keys left out have a score below
    ``(1 - window)`` times the best score found (a proof, up to round-off far below ``window``).
    Highest bound first, so the best is found early and proves the rest.
    """
    todo = np.array([k not in exact for k in keys], dtype=bool)
    if todo.sum() <= _FEW:
        exact.update((k, score(k)) for k in keys if k not in exact)
        return
    a = np.asarray(vals[keys], dtype=np.float64)
    pts = sorted((float(vals[k]), t[0] * (float(vals[k]) + delta)) for k, t in exact.items())
    pa = [p[0] for p in pts]
    pw = [p[1] for p in pts]
    old = np.array(history, dtype=np.float64).reshape(-1, 2)
    ub = np.minimum(
        bounds.lines(a), bounds.slope(a, np.concatenate([old[:, 0], pa]), np.concatenate([old[:, 1], pw]))
    )
    best = max((t[0] for t in exact.values()), default=0.0)
    while True:
        cap = np.minimum(ub, bounds.chord(a, np.array(pa), np.array(pw))) / (a + delta)
        live = todo & (cap >= best * (1 - window))
        if not live.any():
            return
        i = int(np.argmax(np.where(live, cap, -np.inf)))
        k = keys[i]
        exact[k] = score(k)
        todo[i] = False
        best = max(best, exact[k][0])
        b, wb = float(a[i]), exact[k][0] * (float(a[i]) + delta)
        ub = np.minimum(ub, bounds.slope(a, np.array([b]), np.array([wb])))
        q = bisect.bisect(pa, b)
        pa.insert(q, b)
        pw.insert(q, wb)
