"""Kempe swaps between two permutations: regroup the entries so that similar sizes share one.

A permutation held for w serves every entry it holds for w, so its cost is its largest entry;
the total ``sum_l max_{e in l} d_e`` is what a decomposition pays beyond the line sums. Two
permutations a and b, restricted to their entries, form disjoint alternating paths and cycles
(each port has at most one edge of each); exchanging a and b along any set of these components
leaves two valid permutations that hold the same entries between them. :func:`kempe_regroup`
chooses, pair by pair, the components to exchange that minimise ``max(a) + max(b)`` exactly,
and sweeps over all pairs until no exchange helps.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched._jit import jit
from ocsched._types import FloatArray, IntArray

__all__ = ["kempe_regroup"]


@jit
def _best_split(ma: FloatArray, mb: FloatArray, r: int, flip: NDArray[np.bool_]) -> float:
    """Flip components to minimise max(a side) + max(b side); write the choice, return the cost."""
    best = np.inf
    best_t = -1.0
    for c in range(2 * r):
        t = ma[c] if c < r else mb[c - r]  # a cap on a's largest entry
        wa = 0.0
        wb = 0.0
        ok = True
        for i in range(r):
            keep_ok = ma[i] <= t
            flip_ok = mb[i] <= t
            if keep_ok and (not flip_ok or mb[i] <= ma[i]):
                # keep: a takes ma, b takes mb (flipping would give b the larger ma)
                wa = max(wa, ma[i])
                wb = max(wb, mb[i])
            elif flip_ok:
                wa = max(wa, mb[i])
                wb = max(wb, ma[i])
            else:
                ok = False
                break
        if ok and wa + wb < best:
            best = wa + wb
            best_t = t
    for i in range(r):
        keep_ok = ma[i] <= best_t
        flip_ok = mb[i] <= best_t
        flip[i] = not (keep_ok and (not flip_ok or mb[i] <= ma[i]))
    return best


@jit
def _regroup(
    n: int,
    rows: IntArray,
    cols: IntArray,
    vals: FloatArray,
    owner: IntArray,
    m: int,
    max_sweeps: int,
    rtol: float,
) -> int:
    """Improve ``owner`` (entry -> permutation) in place; return the number of exchanges made."""
    at_row = np.full((m, n), -1, np.int64)  # at_row[l, i]: the entry permutation l holds in row i
    at_col = np.full((m, n), -1, np.int64)
    top = np.zeros(m)
    for e in range(rows.size):
        l = owner[e]
        at_row[l, rows[e]] = e
        at_col[l, cols[e]] = e
        top[l] = max(top[l], vals[e])
    seen_e = np.zeros(rows.size, np.int64)
    ecomp = np.zeros(rows.size, np.int64)
    seen_r = np.zeros(n, np.int64)
    seen_c = np.zeros(n, np.int64)
    stack = np.empty(2 * n + 1, np.int64)
    ma = np.empty(n + 1)
    mb = np.empty(n + 1)
    flip = np.zeros(n + 1, np.bool_)
    members = np.empty(2 * n + 1, np.int64)
    stamp = 0
    moves = 0
    for _ in range(max_sweeps):
        changed = False
        for a in range(m):
            for b in range(a + 1, m):
                if top[a] == 0.0 or top[b] == 0.0:
                    continue
                stamp += 1
                r = 0
                k = 0
                # Components of the union of a and b, grown from every row either one touches.
                for i0 in range(n):
                    if seen_r[i0] == stamp or (at_row[a, i0] < 0 and at_row[b, i0] < 0):
                        continue
                    ma[r] = 0.0
                    mb[r] = 0.0
                    sp = 0
                    stack[sp] = i0  # row i as i, column j as n + j
                    sp += 1
                    seen_r[i0] = stamp
                    while sp > 0:
                        sp -= 1
                        v = stack[sp]
                        for side in range(2):
                            l = a if side == 0 else b
                            e = at_row[l, v] if v < n else at_col[l, v - n]
                            if e < 0 or seen_e[e] == stamp:
                                continue
                            seen_e[e] = stamp
                            ecomp[e] = r
                            members[k] = e
                            k += 1
                            if side == 0:
                                ma[r] = max(ma[r], vals[e])
                            else:
                                mb[r] = max(mb[r], vals[e])
                            if v < n:
                                u = cols[e]
                                if seen_c[u] != stamp:
                                    seen_c[u] = stamp
                                    stack[sp] = n + u
                                    sp += 1
                            else:
                                u = rows[e]
                                if seen_r[u] != stamp:
                                    seen_r[u] = stamp
                                    stack[sp] = u
                                    sp += 1
                    r += 1
                if r < 2:
                    continue
                cur = top[a] + top[b]
                new = _best_split(ma, mb, r, flip)
                if not new < cur * (1.0 - rtol):
                    continue
                for idx in range(k):
                    e = members[idx]
                    at_row[owner[e], rows[e]] = -1
                    at_col[owner[e], cols[e]] = -1
                top[a] = 0.0
                top[b] = 0.0
                for idx in range(k):
                    e = members[idx]
                    if flip[ecomp[e]]:
                        owner[e] = b if owner[e] == a else a
                    at_row[owner[e], rows[e]] = e
                    at_col[owner[e], cols[e]] = e
                    top[owner[e]] = max(top[owner[e]], vals[e])
                moves += 1
                changed = True
        if not changed:
            break
    return moves


def kempe_regroup(
    n: int, rows: IntArray, cols: IntArray, vals: FloatArray, owner: IntArray, *, max_sweeps: int = 4
) -> IntArray:
    """Return a new entry -> permutation map with ``sum_l max_{e in l} d_e`` no larger.

    ``owner[e]`` is the permutation holding entry e (rows, cols, vals: the entries); each
    permutation must hold at most one entry per row and per column. At most ``max_sweeps``
    sweeps over all pairs of permutations; deterministic.
    """
    out = np.array(owner, dtype=np.int64)
    m = int(out.max()) + 1 if out.size else 0
    if m >= 2:
        _regroup(
            n,
            rows.astype(np.int64),
            cols.astype(np.int64),
            vals.astype(np.float64),
            out,
            m,
            max_sweeps,
            1e-12,
        )
    return out
