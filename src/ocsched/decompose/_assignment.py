"""The compiled assignment solver behind Spectra's rounds: warm-started min-cost perfect matching.

A maximum-weight matching on a bipartite support is solved as a min-cost perfect matching on an
augmented bipartite graph (rows and column dummies on the left, columns and row dummies on the
right: a port may stay idle at no cost). The kernels (numba) keep dual prices ``u``, ``v`` and a
partial matching between calls, so a caller that changes a few costs re-matches only the ports it
frees: auction steps (Jonker-Volgenant's augmenting row reduction) first, then Dijkstra shortest
augmenting paths, so every solve is exact.

The compiled kernels are cached in a directory named by a hash of every kernel module's source
(:mod:`ocsched._jit`): editing this file also renews the rounds' kernels that call it.

Memory is O(nnz + n): no n x n array.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched._jit import HAVE_NUMBA, jit
from ocsched._types import FloatArray, IntArray

__all__ = ["HAVE_NUMBA", "max_weight_matching"]


@jit
def _augment(
    a0: int,
    n: int,
    indptr: IntArray,
    rent: IntArray,
    cols: IntArray,
    cptr: IntArray,
    centry: IntArray,
    rows: IntArray,
    cost: FloatArray,
    u: FloatArray,
    v: FloatArray,
    match_l: IntArray,
    match_r: IntArray,
    edge_l: IntArray,
    dist: FloatArray,
    pred: IntArray,
    pred_e: IntArray,
    final: NDArray[np.bool_],
    heap_k: FloatArray,
    heap_v: IntArray,
    touched: IntArray,
    sr: IntArray,
    prune: bool,
    perfect: bool,
) -> bool:
    """One shortest augmenting path (Dijkstra on reduced costs) from the free left node ``a0``.

    Returns False, changing nothing, if ``perfect`` (no dummy edge) and no path exists.

    Left nodes: rows 0..n-1 and column dummies n..2n-1; right nodes: columns 0..n-1 and row
    dummies n..2n-1. Edges: demand (i, j) with ``cost[e]``; (i, n+i), (n+j, j) and the mirror
    (n+j, n+i) of every demand edge, all of cost 0.
    """
    inf = np.inf
    nt = 0
    ns = 0
    hs = 0
    cur = a0
    cur_d = 0.0
    sr[ns] = a0
    ns += 1
    sink = -1
    min_val = 0.0
    # With ``prune``, the least distance of a free right node seen so far: a node farther than
    # that is never settled before the sink, so it is not pushed (a smaller heap; the settled
    # nodes and their distances are the same, only ties may be settled in another order). The
    # rounds prune; Eclipse's max_weight_matching does not, so its matchings stay as they were.
    lim = inf
    while True:
        ucur = u[cur]
        if cur < n:
            for t in range(indptr[cur], indptr[cur + 1]):
                e = rent[t]
                r = cols[e]
                if final[r]:
                    continue
                nd = cur_d + cost[e] - ucur - v[r]
                if nd < dist[r] and (not prune or nd <= lim):
                    if match_r[r] < 0:
                        lim = nd
                    if dist[r] == inf:
                        touched[nt] = r
                        nt += 1
                    dist[r] = nd
                    pred[r] = cur
                    pred_e[r] = e
                    # push. This record-and-push step is written out for each of the three kinds
                    # of edge: a shared helper, even one numba inlines, measured 10-20 % slower
                    # on the rounds (dense n=512, MoE n=256; 2026-12-01).
                    k = hs
                    hs += 1
                    while k > 0:
                        p = (k - 1) >> 1
                        if heap_k[p] <= nd:
                            break
                        heap_k[k] = heap_k[p]
                        heap_v[k] = heap_v[p]
                        k = p
                    heap_k[k] = nd
                    heap_v[k] = r
            r = n + cur
            if not perfect and not final[r]:
                nd = cur_d - ucur - v[r]
                if nd < dist[r] and (not prune or nd <= lim):
                    if match_r[r] < 0:
                        lim = nd
                    if dist[r] == inf:
                        touched[nt] = r
                        nt += 1
                    dist[r] = nd
                    pred[r] = cur
                    pred_e[r] = -1
                    k = hs
                    hs += 1
                    while k > 0:
                        p = (k - 1) >> 1
                        if heap_k[p] <= nd:
                            break
                        heap_k[k] = heap_k[p]
                        heap_v[k] = heap_v[p]
                        k = p
                    heap_k[k] = nd
                    heap_v[k] = r
        else:
            j = cur - n
            for t in range(cptr[j] - 1, cptr[j + 1]):
                r = j if t < cptr[j] else n + rows[centry[t]]
                if final[r]:
                    continue
                nd = cur_d - ucur - v[r]
                if nd < dist[r] and (not prune or nd <= lim):
                    if match_r[r] < 0:
                        lim = nd
                    if dist[r] == inf:
                        touched[nt] = r
                        nt += 1
                    dist[r] = nd
                    pred[r] = cur
                    pred_e[r] = -1
                    k = hs
                    hs += 1
                    while k > 0:
                        p = (k - 1) >> 1
                        if heap_k[p] <= nd:
                            break
                        heap_k[k] = heap_k[p]
                        heap_v[k] = heap_v[p]
                        k = p
                    heap_k[k] = nd
                    heap_v[k] = r
        # pop the closest right node not yet final
        r = -1
        d = 0.0
        while hs > 0:
            d = heap_k[0]
            r = heap_v[0]
            hs -= 1
            lk = heap_k[hs]
            lv = heap_v[hs]
            k = 0
            while True:
                c = 2 * k + 1
                if c >= hs:
                    break
                if c + 1 < hs and heap_k[c + 1] < heap_k[c]:
                    c += 1
                if heap_k[c] >= lk:
                    break
                heap_k[k] = heap_k[c]
                heap_v[k] = heap_v[c]
                k = c
            if hs > 0:
                heap_k[k] = lk
                heap_v[k] = lv
            if not final[r] and d == dist[r]:
                break
            r = -1
        if r < 0:
            if not perfect:
                raise RuntimeError("no augmenting path (the augmented graph always has one)")
            for t in range(nt):
                r = touched[t]
                dist[r] = inf
                final[r] = False
            return False
        final[r] = True
        if match_r[r] < 0:
            sink = r
            min_val = d
            break
        cur = match_r[r]
        cur_d = d
        sr[ns] = cur
        ns += 1
    # Dual update keeps reduced costs >= 0 and every matched edge tight.
    u[a0] += min_val
    for t in range(1, ns):
        a = sr[t]
        u[a] += min_val - dist[match_l[a]]
    for t in range(nt):
        r = touched[t]
        if final[r]:
            v[r] -= min_val - dist[r]
    # Augment along the predecessor chain.
    r = sink
    while True:
        a = pred[r]
        prev = match_l[a]
        match_r[r] = a
        match_l[a] = r
        edge_l[a] = pred_e[r]
        if a == a0:
            break
        r = prev
    for t in range(nt):
        r = touched[t]
        dist[r] = inf
        final[r] = False
    return True


@jit
def _two_least(
    x: float, r: int, e: int, m1: float, m2: float, r1: int, e1: int
) -> tuple[float, float, int, int]:
    """Fold the reduced cost ``x`` of right node ``r`` (edge ``e``) into the least two so far.

    Returns the new ``(m1, m2, r1, e1)``: ``m1 <= m2`` the two least costs, ``r1``/``e1`` where ``m1`` is.
    """
    if x < m1:
        return x, m1, r, e
    if x < m2:
        return m1, x, r1, e1
    return m1, m2, r1, e1


@jit
def _reduce(
    a: int,
    n: int,
    indptr: IntArray,
    rent: IntArray,
    cols: IntArray,
    cptr: IntArray,
    centry: IntArray,
    rows: IntArray,
    cost: FloatArray,
    u: FloatArray,
    v: FloatArray,
    match_l: IntArray,
    match_r: IntArray,
    edge_l: IntArray,
    perfect: bool,
    eps: float,
) -> int:
    """One auction step (JV's augmenting row reduction) for the free left node ``a``.

    ``a`` takes its cheapest right node r1 and r1's price drops by the gap to the second
    cheapest, so every reduced cost stays >= 0 and every matched edge tight. With ``eps > 0``
    the price drops by ``eps`` more (Bertsekas' auction): no step then stalls on a tie, and
    reduced costs stay >= -eps only (eps-complementary slackness). Returns the left node
    displaced from r1 (-1 if r1 was free), or -2 if ``a`` is left to a full augmentation.
    """
    inf = np.inf
    m1 = inf
    m2 = inf
    r1 = -1
    e1 = -1
    if a < n:
        for t in range(indptr[a], indptr[a + 1]):
            e = rent[t]
            r = cols[e]
            m1, m2, r1, e1 = _two_least(cost[e] - v[r], r, e, m1, m2, r1, e1)
        if not perfect:
            r = n + a
            m1, m2, r1, e1 = _two_least(-v[r], r, -1, m1, m2, r1, e1)
    else:
        j = a - n
        for t in range(cptr[j] - 1, cptr[j + 1]):
            r = j if t < cptr[j] else n + rows[centry[t]]
            m1, m2, r1, e1 = _two_least(-v[r], r, -1, m1, m2, r1, e1)  # e1 stays -1: no demand edge
    old = match_r[r1]
    if old >= 0 and not m1 < m2 + eps:
        return -2  # a tie with a taken node: no progress possible by price alone
    if m2 < inf:
        v[r1] -= m2 - m1 + eps
        u[a] = m2 + eps
    else:
        u[a] = m1
    if old >= 0:
        match_l[old] = -1
        edge_l[old] = -1
    match_r[r1] = a
    match_l[a] = r1
    edge_l[a] = e1
    return int(old)


@jit
def _solve(
    n: int,
    indptr: IntArray,
    rent: IntArray,
    cols: IntArray,
    cptr: IntArray,
    centry: IntArray,
    rows: IntArray,
    cost: FloatArray,
    u: FloatArray,
    v: FloatArray,
    match_l: IntArray,
    match_r: IntArray,
    edge_l: IntArray,
    free: IntArray,
    nf: int,
    queue: IntArray,
    work: Any,
    perfect: bool,
    eps: float = 0.0,
) -> int:
    """Match every free left node: auction steps first, then shortest augmenting paths.

    With ``perfect`` the dummies are left out: rows must match columns, and free column dummies
    are skipped. Returns how many rows found no augmenting path then (0 without ``perfect``);
    they are left free, listed first in ``queue``. With ``eps > 0`` (``perfect`` only) the
    match is eps-optimal, by auction steps alone (shortest paths need reduced costs >= 0):
    those that the free list's capacity leaves unmatched count as failed.
    """
    dist, pred, pred_e, final, heap_k, heap_v, touched, sr = work
    # JV reduction: cheap on candidates; each step may free one node. An auction: every step.
    steps = free.size - nf - 1 if eps > 0.0 else min(8 * nf, free.size - nf - 1)
    nq = 0
    t = 0
    while t < nf:
        a = free[t]
        t += 1
        if match_l[a] >= 0 or (perfect and a >= n):
            continue
        if steps > 0:
            steps -= 1
            old = _reduce(
                a, n, indptr, rent, cols, cptr, centry, rows, cost, u, v, match_l, match_r, edge_l,
                perfect, eps,
            )  # fmt: skip
            if old >= 0:
                free[nf] = old
                nf += 1
                continue
            if old == -1:
                continue
        queue[nq] = a
        nq += 1
    failed = 0
    for t in range(nq):
        a = queue[t]
        if eps > 0.0:
            if match_l[a] == -1:  # once each: a row may sit in the free list more than once
                match_l[a] = -2
                queue[failed] = a
                failed += 1
        elif match_l[a] < 0 and not _augment(
            a, n, indptr, rent, cols, cptr, centry, rows, cost, u, v, match_l, match_r, edge_l,
            dist, pred, pred_e, final, heap_k, heap_v, touched, sr, True, perfect,
        ):  # fmt: skip
            queue[failed] = a  # t >= failed: the rows still to try are not overwritten
            failed += 1
    if eps > 0.0:
        for t in range(failed):
            match_l[queue[t]] = -1
    return failed


@jit
def _by_column(
    n: int, indptr: IntArray, rent: IntArray, cols: IntArray, cptr: IntArray, centry: IntArray
) -> None:
    """Fill the column lists (``cptr``, ``centry``) of the row lists (``indptr``, ``rent``)."""
    cptr[:] = 0
    for t in range(indptr[n]):
        cptr[cols[rent[t]] + 1] += 1
    for j in range(n):
        cptr[j + 1] += cptr[j]
    fill = cptr[:n].copy()
    for t in range(indptr[n]):
        e = rent[t]
        j = cols[e]
        centry[fill[j]] = e
        fill[j] += 1


@jit
def _max_weight(
    n: int,
    indptr: IntArray,
    cols: IntArray,
    cptr: IntArray,
    centry: IntArray,
    rows: IntArray,
    cost: FloatArray,
) -> IntArray:
    rent = np.arange(cost.size)
    u = np.zeros(2 * n)
    v = np.zeros(2 * n)
    match_l = np.full(2 * n, -1, dtype=np.int64)
    match_r = np.full(2 * n, -1, dtype=np.int64)
    edge_l = np.full(2 * n, -1, dtype=np.int64)
    dist = np.full(2 * n, np.inf)
    pred = np.full(2 * n, -1, dtype=np.int64)
    pred_e = np.full(2 * n, -1, dtype=np.int64)
    final = np.zeros(2 * n, dtype=np.bool_)
    cap = 2 * cost.size + 4 * n + 4
    heap_k = np.empty(cap)
    heap_v = np.empty(cap, dtype=np.int64)
    touched = np.empty(2 * n, dtype=np.int64)
    sr = np.empty(2 * n + 1, dtype=np.int64)
    free = np.empty(8 * n + 2, dtype=np.int64)
    for i in range(n):
        m = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            m = min(m, cost[e])
        u[i] = m
    nf = 0
    for a in range(2 * n):
        free[nf] = a
        nf += 1
    steps = 2 * nf
    t = 0
    while t < nf:
        a = free[t]
        t += 1
        if match_l[a] >= 0:
            continue
        if steps > 0:
            steps -= 1
            old = _reduce(
                a, n, indptr, rent, cols, cptr, centry, rows, cost, u, v, match_l, match_r, edge_l, False, 0.0
            )  # fmt: skip
            if old >= 0:
                free[nf] = old
                nf += 1
                continue
            if old == -1:
                continue
        _augment(
            a, n, indptr, rent, cols, cptr, centry, rows, cost, u, v, match_l, match_r, edge_l,
            dist, pred, pred_e, final, heap_k, heap_v, touched, sr, False, False,
        )  # fmt: skip
    return edge_l[:n].copy()


def max_weight_matching(n: int, rows: IntArray, cols: IntArray, weights: FloatArray) -> IntArray:
    """A maximum-weight matching on a row-major support: the matched entries' indices.

    Entries of weight <= 0 are never needed (leaving both ports idle is as good).
    """
    keep = np.nonzero(weights > 0)[0]
    r, c = rows[keep], cols[keep]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    centry = np.argsort(c, kind="stable").astype(np.int64)
    cptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(c, minlength=n), out=cptr[1:])
    edge = _max_weight(
        n,
        indptr,
        np.ascontiguousarray(c, dtype=np.int64),
        cptr,
        centry,
        np.ascontiguousarray(r, dtype=np.int64),
        -np.ascontiguousarray(weights[keep], dtype=np.float64),
    )
    return np.asarray(keep[edge[edge >= 0]], dtype=np.int64)
