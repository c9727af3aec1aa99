"""Spectra's Delta matching rounds on the demand's support, one warm-started assignment solver.

Each round is a maximum-weight matching with gain ``residual + penalty * (critical endpoints)``
on uncovered entries (``residual`` on covered ones), solved by the compiled assignment solver of
:mod:`ocsched.decompose._assignment` (a min-cost perfect matching on an augmented bipartite graph:
a port may stay idle at no cost). The compiled driver (numba):

- keeps the dual prices from round to round (costs only rise, except on lines that just became
  critical, whose dual moves with them), frees only the ports whose matched entry changed, and
  re-matches them with auction steps (Jonker-Volgenant's augmenting row reduction) and Dijkstra
  shortest augmenting paths, so every round is solved exactly;
- works on the live entries only: an entry already covered on a critical line can never be
  chosen again (a critical line must take an uncovered entry) and is dropped, amortised;
- on dense input solves each round on a candidate graph (each row's 16 entries of least
  reduced cost) and prices out every other live entry through per-line lower bounds that stay
  valid as prices fall, re-scanning a line only when its dual passes its bound.

Memory is O(nnz + n): no n x n array.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from ocsched.decompose._assignment import HAVE_NUMBA, _by_column, _jit, _solve

__all__ = ["HAVE_NUMBA", "spectra_rounds"]

log = logging.getLogger(__name__)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


#: Entries per row in the candidate graph on dense input (more only where pricing asks).
_CANDIDATES = 16
#: Pricing passes per round before the round is finished on the whole live graph.
_MAX_PRICING = 32


@_jit
def _rescan(
    i: int,
    n: int,
    lptr: IntArray,
    lent: IntArray,
    cols: IntArray,
    cost: FloatArray,
    v: FloatArray,
    edge_l: IntArray,
    cand: IntArray,
    ccount: IntArray,
    incand: NDArray[np.bool_],
    lb: FloatArray,
    lbc: FloatArray,
    best_k: FloatArray,
    best_e: IntArray,
) -> None:
    """Row i's candidates: its cand_k live entries of least ``cost - v`` and its matched one.

    ``lb[i]`` becomes the least ``cost - v`` left out, and every entry left out lowers its
    column's mirror bound ``lbc`` to its current value.
    """
    cand_k = cand.shape[1] - 1
    for q in range(ccount[i]):
        incand[cand[i, q]] = False
    nb = 0
    low = np.inf
    keep = edge_l[i]
    for t in range(lptr[i], lptr[i + 1]):
        e = lent[t]
        if e == keep:
            continue
        x = cost[e] - v[cols[e]]
        out = e
        xo = x
        if nb < cand_k or x < best_k[nb - 1]:
            if nb == cand_k:  # the largest of the kept is pushed out
                out = best_e[nb - 1]
                xo = best_k[nb - 1]
                nb -= 1
            else:
                out = -1
            q = nb
            while q > 0 and best_k[q - 1] > x:
                best_k[q] = best_k[q - 1]
                best_e[q] = best_e[q - 1]
                q -= 1
            best_k[q] = x
            best_e[q] = e
            nb += 1
        if out >= 0:
            low = min(low, xo)
            j = cols[out]
            lbc[j] = min(lbc[j], -v[n + i])
    c = 0
    if keep >= 0:
        cand[i, c] = keep
        incand[keep] = True
        c += 1
    for q in range(nb):
        cand[i, c] = best_e[q]
        incand[best_e[q]] = True
        c += 1
    ccount[i] = c
    lb[i] = low


@_jit
def _penalize(line: IntArray, unc: NDArray[np.bool_], cost: FloatArray, penalty: float) -> None:
    """Lower the cost of the uncovered entries among ``line`` (a newly critical line's) by ``penalty``."""
    for e in line:
        if unc[e]:
            cost[e] -= penalty


@_jit
def _free_stale(
    a: int,
    r: int,
    unc: NDArray[np.bool_],
    match_l: IntArray,
    match_r: IntArray,
    edge_l: IntArray,
    free: IntArray,
    nf: int,
) -> int:
    """Unmatch left node ``a`` from right node ``r`` unless on an uncovered entry; queue ``a`` as free.

    Called for a line that just became critical (which must now take an uncovered entry); a
    negative ``a`` or ``r`` (the line is unmatched) does nothing. Returns the new count of free nodes.
    """
    if a >= 0 and r >= 0 and (edge_l[a] < 0 or not unc[edge_l[a]]):
        match_r[r] = -1
        match_l[a] = -1
        edge_l[a] = -1
        free[nf] = a
        nf += 1
    return nf


@_jit
def _reprice(
    a: int,
    m: float,
    u: FloatArray,
    match_l: IntArray,
    match_r: IntArray,
    edge_l: IntArray,
    free: IntArray,
    nf: int,
) -> int:
    """Lower left node ``a``'s dual to ``m`` (pricing found a cheaper entry), unmatch it, queue it.

    Returns the new count of free nodes.
    """
    u[a] = m
    if match_l[a] >= 0:
        match_r[match_l[a]] = -1
        match_l[a] = -1
        edge_l[a] = -1
    free[nf] = a
    return nf + 1


@_jit
def _run_rounds(
    n: int,
    big_delta: int,
    indptr0: IntArray,
    rows: IntArray,
    cols: IntArray,
    values: FloatArray,
    penalty: float,
    cand_k: int,
    ent: IntArray,
    ent_ptr: IntArray,
    weights: FloatArray,
) -> int:
    nnz = values.size
    inf = np.inf
    residual = values.copy()
    unc = np.ones(nnz, dtype=np.bool_)
    cnt_r = np.zeros(n, dtype=np.int64)
    cnt_c = np.zeros(n, dtype=np.int64)
    for e in range(nnz):
        cnt_r[rows[e]] += 1
        cnt_c[cols[e]] += 1
    crit_r = np.zeros(n, dtype=np.bool_)
    crit_c = np.zeros(n, dtype=np.bool_)
    cost = -values.copy()
    # Live entries, by row and by column. An entry already covered on a critical line is dead:
    # a critical line must take an uncovered entry, so no optimal matching uses it again.
    lptr = indptr0.copy()
    lent = np.arange(nnz)
    lcptr = np.zeros(n + 1, dtype=np.int64)
    lcent = np.empty(nnz, dtype=np.int64)
    _by_column(n, lptr, lent, cols, lcptr, lcent)
    covered_since = 0
    # The graph the solver sees: the live entries, or on dense input each row's cand_k entries
    # of least reduced cost (a candidate graph, priced out against every live entry).
    gptr = np.zeros(n + 1, dtype=np.int64)
    gent = np.empty(nnz, dtype=np.int64)
    gcptr = np.zeros(n + 1, dtype=np.int64)
    gcent = np.empty(nnz, dtype=np.int64)
    cand = np.empty((n, cand_k + 1), dtype=np.int64)
    ccount = np.zeros(n, dtype=np.int64)
    incand = np.zeros(nnz, dtype=np.bool_)
    lb = np.full(n, inf)
    lbc = np.full(n, inf)
    built = False
    best_k = np.empty(cand_k + 1)
    best_e = np.empty(cand_k + 1, dtype=np.int64)
    u = np.zeros(2 * n)
    v = np.zeros(2 * n)
    match_l = np.full(2 * n, -1, dtype=np.int64)
    match_r = np.full(2 * n, -1, dtype=np.int64)
    edge_l = np.full(2 * n, -1, dtype=np.int64)
    cap = 2 * nnz + 4 * n + 4
    work = (
        np.full(2 * n, inf),
        np.full(2 * n, -1, dtype=np.int64),
        np.full(2 * n, -1, dtype=np.int64),
        np.zeros(2 * n, dtype=np.bool_),
        np.empty(cap),
        np.empty(cap, dtype=np.int64),
        np.empty(2 * n, dtype=np.int64),
        np.empty(2 * n + 1, dtype=np.int64),
    )
    free = np.empty(6 * n + 8, dtype=np.int64)  # <= 2n + 1 free nodes, plus the reduction steps
    queue = np.empty(6 * n + 8, dtype=np.int64)
    tol = 1e-13 * penalty
    nf = 0
    for a in range(2 * n):
        free[nf] = a
        nf += 1
    for i in range(n):  # feasible start: u_i = the row's cheapest edge (the dummy costs 0)
        m = 0.0
        for e in range(indptr0[i], indptr0[i + 1]):
            m = min(m, cost[e])
        u[i] = m
    prev_start = 0
    prev_end = 0
    nent = 0
    for l in range(big_delta):
        left = big_delta - l
        # The previous permutation's entries changed (less residual, now covered): new costs.
        for t in range(prev_start, prev_end):
            e = ent[t]
            cost[e] = -residual[e]
        # Newly critical lines gain `penalty` on their uncovered entries; the dual moves with it.
        for i in range(n):
            if not crit_r[i] and cnt_r[i] == left:
                crit_r[i] = True
                u[i] -= penalty
                lb[i] -= penalty  # its uncovered entries' costs fell by the penalty
                _penalize(lent[lptr[i] : lptr[i + 1]], unc, cost, penalty)
                nf = _free_stale(i, match_l[i], unc, match_l, match_r, edge_l, free, nf)
        for j in range(n):
            if not crit_c[j] and cnt_c[j] == left:
                crit_c[j] = True
                v[j] -= penalty
                _penalize(lcent[lcptr[j] : lcptr[j + 1]], unc, cost, penalty)
                nf = _free_stale(match_r[j], j, unc, match_l, match_r, edge_l, free, nf)
        # Rows matched on the previous permutation's entries are no longer tight.
        for t in range(prev_start, prev_end):
            e = ent[t]
            i = rows[e]
            if edge_l[i] == e:
                match_r[cols[e]] = -1
                match_l[i] = -1
                edge_l[i] = -1
                free[nf] = i
                nf += 1
        # Drop dead entries from the live lists once enough were covered (amortised O(1) each).
        if 2 * covered_since > lptr[n]:
            covered_since = 0
            k = 0
            for i in range(n):
                s0 = lptr[i]
                lptr[i] = k
                for t in range(s0, lptr[i + 1]):
                    e = lent[t]
                    if unc[e] or not (crit_r[rows[e]] or crit_c[cols[e]]):
                        lent[k] = e
                        k += 1
            lptr[n] = k
            _by_column(n, lptr, lent, cols, lcptr, lcent)
        dense = lptr[n] > 4 * cand_k * n
        if dense:
            if not built:
                lbc[:] = inf
                for i in range(n):
                    _rescan(
                        i, n, lptr, lent, cols, cost, v, edge_l, cand, ccount, incand, lb, lbc, best_k, best_e
                    )
                built = True
            else:  # drop dead candidates; a row left with few gets a fresh list
                for i in range(n):
                    c = 0
                    for q in range(ccount[i]):
                        e = cand[i, q]
                        if unc[e] or not (crit_r[rows[e]] or crit_c[cols[e]]):
                            cand[i, c] = e
                            c += 1
                        else:
                            incand[e] = False
                    ccount[i] = c
                    if 2 * c < cand_k:
                        _rescan(
                            i,
                            n,
                            lptr,
                            lent,
                            cols,
                            cost,
                            v,
                            edge_l,
                            cand,
                            ccount,
                            incand,
                            lb,
                            lbc,
                            best_k,
                            best_e,
                        )
        else:
            built = False
        passes = 0
        while True:
            if dense:
                k = 0
                for i in range(n):
                    gptr[i] = k
                    for q in range(ccount[i]):
                        gent[k] = cand[i, q]
                        k += 1
                gptr[n] = k
                _by_column(n, gptr, gent, cols, gcptr, gcent)
                _solve(
                    n, gptr, gent, cols, gcptr, gcent, rows, cost, u, v, match_l, match_r, edge_l,
                    free, nf, queue, work,
                )  # fmt: skip
            else:
                _solve(
                    n, lptr, lent, cols, lcptr, lcent, rows, cost, u, v, match_l, match_r, edge_l,
                    free, nf, queue, work,
                )  # fmt: skip
            nf = 0
            if not dense:
                break
            # Pricing. Off the candidate graph, reduced costs only grow (prices v only fall), so
            # lb[i] (row i) and lbc[j] (the mirrors of column j) stay lower bounds of what is
            # left out; a line is re-scanned only when its dual passes its bound. A violated
            # dual is lowered to feasibility and its node re-matched.
            for i in range(n):
                if u[i] > lb[i] + tol:
                    _rescan(
                        i, n, lptr, lent, cols, cost, v, edge_l, cand, ccount, incand, lb, lbc, best_k, best_e
                    )
                    m = lb[i]
                    for q in range(ccount[i]):
                        e = cand[i, q]
                        m = min(m, cost[e] - v[cols[e]])
                    if m < u[i] - tol:
                        nf = _reprice(i, m, u, match_l, match_r, edge_l, free, nf)
            for j in range(n):
                a = n + j
                if u[a] > lbc[j] + tol:
                    m = inf
                    for t in range(lcptr[j], lcptr[j + 1]):
                        e = lcent[t]
                        if not incand[e] and (unc[e] or not (crit_r[rows[e]] or crit_c[j])):
                            m = min(m, -v[n + rows[e]])
                    lbc[j] = m
                    if m < u[a] - tol:
                        nf = _reprice(a, m, u, match_l, match_r, edge_l, free, nf)
            if nf == 0:
                break
            passes += 1
            if passes >= _MAX_PRICING:
                # Safety net: finish this round on every live entry (the duals are feasible).
                _solve(
                    n, lptr, lent, cols, lcptr, lcent, rows, cost, u, v, match_l, match_r, edge_l,
                    free, nf, queue, work,
                )  # fmt: skip
                nf = 0
                built = False
                break
        # Collect the permutation: matched demand entries, plus zero-gain entries joining two
        # otherwise idle ports (already served, they only give the weight refit more freedom).
        start = nent
        for i in range(n):
            e = edge_l[i]
            if e >= 0:
                ent[nent] = e
                nent += 1
        for i in range(n):
            if edge_l[i] < 0:
                for t in range(lptr[i], lptr[i + 1]):
                    e = lent[t]
                    j = cols[e]
                    if residual[e] == 0.0 and not unc[e] and match_r[j] >= n and edge_l[i] < 0:
                        # Invariant: a zero-gain edge between idle ports changes no cost.
                        edge_l[i] = -2 - e
                        match_r[j] = -2 - match_r[j]
                        ent[nent] = e
                        nent += 1
                        break
        for i in range(n):  # undo the marks of the extra entries
            if edge_l[i] <= -2:
                e = -2 - edge_l[i]
                edge_l[i] = -1
                j = cols[e]
                match_r[j] = -2 - match_r[j]
        w = inf
        for t in range(start, nent):
            x = residual[ent[t]]
            if 0.0 < x < w:
                w = x
        if w == inf:
            w = 0.0
        for t in range(start, nent):
            e = ent[t]
            residual[e] = max(residual[e] - w, 0.0)
            if unc[e]:
                unc[e] = False
                covered_since += 1
                cnt_r[rows[e]] -= 1
                cnt_c[cols[e]] -= 1
        weights[l] = w
        ent_ptr[l + 1] = nent
        prev_start = start
        prev_end = nent
    left_over = 0
    for e in range(nnz):
        if unc[e]:
            left_over += 1
    return left_over


def spectra_rounds(
    n: int, rows: IntArray, cols: IntArray, values: FloatArray, big_delta: int
) -> tuple[IntArray, IntArray, FloatArray]:
    """Run Spectra's Delta max-residual matching rounds on the support.

    Returns the entries of each round's permutation (``ent[ptr[l]:ptr[l+1]]``, indices into the
    demand's entries, row-major order assumed) and the round weights.
    """
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    top = np.sort(values)[-n:]
    # Larger than any matching's total residual, so covering critical lines always wins.
    penalty = 2.0 * float(top.sum())
    ent = np.empty(big_delta * n, dtype=np.int64)
    ptr = np.zeros(big_delta + 1, dtype=np.int64)
    weights = np.zeros(big_delta)
    left = _run_rounds(
        n,
        big_delta,
        indptr,
        # Writeable copies: numba compiles (and caches) one signature, not one per read-only flag.
        np.array(rows, dtype=np.int64),
        np.array(cols, dtype=np.int64),
        np.array(values, dtype=np.float64),
        penalty,
        _CANDIDATES,
        ent,
        ptr,
        weights,
    )
    if left:
        raise AssertionError(f"spectra rounds left {left} demand entries uncovered")
    return ent[: ptr[-1]], ptr, weights
