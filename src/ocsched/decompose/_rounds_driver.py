"""The driver of Spectra's matching rounds: one kernel, :func:`run_rounds` (see :mod:`._rounds`).

It keeps the round-to-round state (residuals, critical lines, live entries, the candidate
graph, the dual prices and the matching) and calls the steps of
:mod:`ocsched.decompose._rounds_steps` and the assignment solver of
:mod:`ocsched.decompose._assignment` (Jonker and Volgenant's shortest augmenting paths with
augmenting row reduction; Bertsekas' auction for the eps-optimal rounds).

References
----------
R. Jonker and A. Volgenant. A shortest augmenting path algorithm for dense and sparse linear
assignment problems. Computing 38, 325-340, 1987.

D. P. Bertsekas. The auction algorithm: a distributed relaxation method for the assignment
problem. Annals of Operations Research 14, 105-123, 1988.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ocsched._jit import jit
from ocsched._types import FloatArray, IntArray
from ocsched.decompose._assignment import _by_column, _solve
from ocsched.decompose._rounds_steps import find as _find
from ocsched.decompose._rounds_steps import free_stale as _free_stale
from ocsched.decompose._rounds_steps import penalize as _penalize
from ocsched.decompose._rounds_steps import price_rows as _price_rows
from ocsched.decompose._rounds_steps import reprice as _reprice
from ocsched.decompose._rounds_steps import rescan as _rescan
from ocsched.decompose._rounds_steps import solve_live as _solve_live

__all__ = ["rounds_work", "run_rounds"]


def rounds_work(n: int, big_delta: int, indptr0: IntArray, rows: IntArray, *rest: Any) -> int:
    """The work of :func:`run_rounds`: rounds x entries (interpreted, about 20 us each)."""
    return big_delta * rows.size


@jit(work=rounds_work, budget=50_000)
def run_rounds(
    n: int,
    big_delta: int,
    indptr0: IntArray,
    rows: IntArray,
    cols: IntArray,
    values: FloatArray,
    penalty: float,
    cand_k: int,
    dense_at: int,
    ent: IntArray,
    ent_ptr: IntArray,
    weights: FloatArray,
    eps: float,
    free_cap: int,
    max_pricing: int,
) -> int:
    """Run ``big_delta`` matching rounds on the n x n support ``(rows, cols, values)``.

    The entries are in row-major order, ``indptr0`` their row pointers. Round ``l`` writes its
    permutation's entries to ``ent[ent_ptr[l]:ent_ptr[l + 1]]`` and its weight to
    ``weights[l]``. ``penalty`` is the gain of covering an entry on a critical line (larger
    than any matching's residual); ``cand_k`` the candidates a row on dense input (more than
    ``dense_at`` live entries a row); ``eps`` > 0 lets perfect rounds on the candidate graph
    stop eps-optimal (Bertsekas' auction); ``free_cap`` bounds the free list per port and
    ``max_pricing`` the pricing passes a round.

    Returns the count of entries left uncovered (0 on success), or -1 where an eps-optimal
    round ran out of room (the caller starts over with exact rounds).
    """
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
    # The candidate graph is copied into contiguous arrays (each candidate's column, cost and,
    # by column, row): the solver's scans then stay in cache on large inputs.
    gsize = min(nnz, n * (cand_k + 1))
    gptr = np.zeros(n + 1, dtype=np.int64)
    gent = np.empty(gsize, dtype=np.int64)
    gidx = np.arange(gsize)
    gcol = np.empty(gsize, dtype=np.int64)
    gcost = np.empty(gsize)
    grow = np.empty(gsize, dtype=np.int64)
    gcptr = np.zeros(n + 1, dtype=np.int64)
    gcent = np.empty(gsize, dtype=np.int64)
    cand = np.empty((n, cand_k + 1), dtype=np.int64)
    ccount = np.zeros(n, dtype=np.int64)
    cand_col = np.empty((n, cand_k + 1), dtype=np.int64)
    cand_cost = np.empty((n, cand_k + 1))
    fresh = False  # cand_cost holds the costs (perfect rounds: costs no longer change)
    lb = np.full(n, inf)
    lbc = np.full(n, inf)
    # live[e]: not yet covered, or on no critical line (a dead entry is never chosen again).
    live = np.ones(nnz, dtype=np.bool_)
    by_cost = np.empty(nnz, dtype=np.int64)
    s_col = np.empty(nnz, dtype=np.int64)
    s_cost = np.empty(nnz)
    shift = np.zeros(n)
    sbeg = np.zeros(n, dtype=np.int64)
    send = np.zeros(n, dtype=np.int64)
    sorted_ok = np.zeros(n, dtype=np.bool_)
    rowmax = 0
    for i in range(n):
        rowmax = max(rowmax, indptr0[i + 1] - indptr0[i])
    order = (by_cost, s_col, s_cost, shift, sbeg, send, sorted_ok, live)
    sort_key = np.empty(rowmax)
    sort_ent = np.empty(rowmax, dtype=np.int64)
    vmax = inf
    built = False
    best_k = np.empty(cand_k + 1)
    best_e = np.empty(cand_k + 1, dtype=np.int64)
    u = np.zeros(2 * n)
    v = np.zeros(2 * n)
    match_l = np.full(2 * n, -1, dtype=np.int64)
    match_r = np.full(2 * n, -1, dtype=np.int64)
    edge_l = np.full(2 * n, -1, dtype=np.int64)
    scan = (lptr, lent, cols, cost, v, edge_l, cand, ccount, cand_col, cand_cost, lb, order, best_k, best_e)
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
    free = np.empty(free_cap * n + 8, dtype=np.int64)
    queue = np.empty(free_cap * n + 8, dtype=np.int64)
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
    perfect = False  # every line critical: rounds are perfect matchings, solved without dummies
    was_perfect = False  # the previous round was
    approx = False  # the duals are eps-feasible only: an eps-optimal round ran since the last exact one
    for l in range(big_delta):
        left = big_delta - l
        # The previous permutation's entries changed (less residual, now covered): new costs.
        for t in range(prev_start, prev_end):
            e = ent[t]
            if cost[e] != -residual[e]:
                cost[e] = -residual[e]
                if live[e]:
                    sorted_ok[rows[e]] = False  # its order of cost may be broken
        # Newly critical lines gain `penalty` on their uncovered entries; the dual moves with it.
        for i in range(n):
            if not crit_r[i] and cnt_r[i] == left:
                crit_r[i] = True
                for t in range(lptr[i], lptr[i + 1]):
                    e = lent[t]
                    if not unc[e]:
                        live[e] = False
                # Now every live entry of row i is uncovered: the penalty keeps their order.
                shift[i] += penalty
                u[i] -= penalty
                lb[i] -= penalty  # its uncovered entries' costs fell by the penalty
                _penalize(lent[lptr[i] : lptr[i + 1]], unc, cost, penalty)
                nf = _free_stale(i, match_l[i], unc, match_l, match_r, edge_l, free, nf)
        for j in range(n):
            if not crit_c[j] and cnt_c[j] == left:
                crit_c[j] = True
                for t in range(lcptr[j], lcptr[j + 1]):
                    e = lcent[t]
                    if not unc[e]:
                        live[e] = False
                    elif live[e]:
                        sorted_ok[rows[e]] = False  # only this entry of the row gets the penalty
                v[j] -= penalty
                _penalize(lcent[lcptr[j] : lcptr[j + 1]], unc, cost, penalty)
                nf = _free_stale(match_r[j], j, unc, match_l, match_r, edge_l, free, nf)
        # Once every line is critical (at once on dense input), each later round is a perfect
        # matching (every line takes one uncovered entry, so all stay critical): the solver then
        # leaves the dummies out, which on MoE input were most of the nodes its paths settled.
        if not perfect:
            perfect = True
            for i in range(n):
                if not (crit_r[i] and crit_c[i]):
                    perfect = False
                    break
            if perfect:  # from now on no port stays idle: undo the matches with dummies
                for i in range(n):
                    if match_l[i] >= n:
                        match_r[match_l[i]] = -1
                        match_l[i] = -1
                        edge_l[i] = -1
                        free[nf] = i
                        nf += 1
                for j in range(n):
                    if match_r[j] >= n:
                        match_l[match_r[j]] = -1
                        match_r[j] = -1
        # Rows matched on the previous permutation's entries are no longer tight (after a
        # perfect round: every row, each on its entry of it).
        if was_perfect:
            for i in range(n):
                if match_l[i] >= 0:
                    match_r[match_l[i]] = -1
                match_l[i] = -1
                edge_l[i] = -1
                free[nf] = i
                nf += 1
        else:
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
        dense = lptr[n] > dense_at * n
        if dense:
            if not built:
                # Invariant: lbc[j] <= -v[n + i] for every live entry (i, j), at some past prices:
                # prices only fall, so the bound stays valid whatever the candidates become.
                for j in range(n):
                    m = inf
                    for t in range(lcptr[j], lcptr[j + 1]):
                        m = min(m, -v[n + rows[lcent[t]]])
                    lbc[j] = m
                # Each row's live entries in order of cost: rescans stop early while it lasts.
                vmax = -inf
                for j in range(n):
                    vmax = max(vmax, v[j])
                for i in range(n):
                    b = indptr0[i]
                    k = 0
                    for t in range(lptr[i], lptr[i + 1]):
                        e = lent[t]
                        if live[e]:
                            sort_key[k] = cost[e]
                            sort_ent[k] = e
                            k += 1
                    perm = np.argsort(sort_key[:k], kind="mergesort")
                    for q in range(k):
                        e = sort_ent[perm[q]]
                        by_cost[b + q] = e
                        s_col[b + q] = cols[e]
                        s_cost[b + q] = cost[e]
                    shift[i] = 0.0
                    sbeg[i] = b
                    send[i] = b + k
                    sorted_ok[i] = True
                for i in range(n):
                    _rescan(i, vmax, scan)
                built = True
            else:  # drop dead candidates; a row left with few gets a fresh list
                prune = not (perfect and fresh)  # a perfect round's dead entries left at its end
                for i in range(n):
                    if prune:
                        c = 0
                        for q in range(ccount[i]):
                            e = cand[i, q]
                            if unc[e] or not (crit_r[rows[e]] or crit_c[cols[e]]):
                                cand[i, c] = e
                                c += 1
                        ccount[i] = c
                    if 2 * ccount[i] < cand_k:
                        _rescan(i, vmax, scan)
        else:
            built = False
        passes = 0
        # Perfect rounds on the candidate graph may stop at an eps-optimal matching (below).
        e_round = eps if (dense and perfect) else 0.0
        if approx and e_round == 0.0:
            # Shortest augmenting paths need reduced costs >= 0: lower each row's dual to its
            # least reduced cost (every row is free: the previous round was perfect).
            for i in range(n):
                m = inf
                for t in range(lptr[i], lptr[i + 1]):
                    e = lent[t]
                    m = min(m, cost[e] - v[cols[e]])
                if m < u[i]:
                    u[i] = m
            approx = False
        approx = approx or e_round > 0.0
        while True:
            if dense:
                if not (perfect and fresh):  # costs may have changed since the rows' scans
                    for i in range(n):
                        for q in range(ccount[i]):
                            e = cand[i, q]
                            cand_col[i, q] = cols[e]
                            cand_cost[i, q] = cost[e]
                    fresh = perfect
                k = 0
                for i in range(n):
                    gptr[i] = k
                    for q in range(ccount[i]):
                        gent[k] = cand[i, q]
                        gcol[k] = cand_col[i, q]
                        gcost[k] = cand_cost[i, q]
                        k += 1
                gptr[n] = k
                if not perfect:  # the column lists serve the column dummies only
                    _by_column(n, gptr, gidx, gcol, gcptr, gcent)
                    for t in range(k):
                        grow[t] = rows[gent[gcent[t]]]
                # The solver sees candidate positions: matched edges are translated there and back.
                for i in range(n):
                    e = edge_l[i]
                    if e >= 0:
                        q = _find(cand, ccount, i, e)
                        if q < 0:  # Invariant: a matched entry is one of its row's candidates.
                            raise AssertionError("a matched entry is not in the candidate graph")
                        edge_l[i] = gptr[i] + q
                failed = _solve(
                    n, gptr, gidx, gcol, gcptr, gidx, grow, gcost, u, v, match_l, match_r, edge_l,
                    free, nf, queue, work, perfect, e_round,
                )  # fmt: skip
                for i in range(n):
                    if edge_l[i] >= 0:
                        edge_l[i] = gent[edge_l[i]]
            else:
                failed = 0
                _solve_live(
                    n, lptr, lent, cols, lcptr, lcent, rows, cost, u, v, match_l, match_r, edge_l,
                    free, nf, queue, work, perfect,
                )  # fmt: skip
            if failed and e_round == 0.0:
                # The candidate graph has no perfect matching (MoE: every row's best entries
                # in the same few columns). Make the duals feasible on every live entry (the
                # pricing below, rows only: a perfect round has no dummy), then finish the
                # round on the live graph, which is regular, so has one.
                nf = 0
                for t in range(failed):
                    free[nf] = queue[t]
                    nf += 1
                vmax, nf = _price_rows(n, tol, u, match_l, match_r, free, nf, scan)
                _solve_live(
                    n, lptr, lent, cols, lcptr, lcent, rows, cost, u, v, match_l, match_r, edge_l,
                    free, nf, queue, work, perfect,
                )  # fmt: skip
                nf = 0
                for i in range(n):  # Invariant: a matched entry is one of its row's candidates.
                    if _find(cand, ccount, i, edge_l[i]) < 0:
                        _rescan(i, vmax, scan)
                break
            nf = 0
            if not dense:
                break
            # Pricing. Off the candidate graph, reduced costs only grow (prices v only fall), so
            # lb[i] (row i's entries left out) and lbc[j] (every live mirror of column j, in the
            # graph or not: the graph keeps its own feasible) stay lower bounds; a line is
            # re-scanned only when its dual passes its bound. A violated dual is lowered to
            # feasibility and its node re-matched.
            vmax, nf = _price_rows(n, tol + e_round, u, match_l, match_r, free, nf, scan)
            # The rows an eps-optimal auction left free (the candidate graph may have no perfect
            # matching) bid again after pricing gave them fresh candidates.
            for t in range(failed):
                free[nf] = queue[t]
                nf += 1
            for j in range(0 if perfect else n):  # no column dummy in a perfect round
                a = n + j
                if u[a] > lbc[j] + tol:
                    m = inf
                    for t in range(lcptr[j], lcptr[j + 1]):
                        e = lcent[t]
                        if unc[e] or not (crit_r[rows[e]] or crit_c[j]):
                            m = min(m, -v[n + rows[e]])
                    lbc[j] = m
                    if m < u[a] - tol:
                        nf = _reprice(a, m, u, match_l, match_r, edge_l, free, nf)
            if nf == 0:
                break
            passes += 1
            if passes >= max_pricing:
                if e_round > 0.0:
                    return -1
                # Safety net: finish this round on every live entry (the duals are feasible).
                _solve_live(
                    n, lptr, lent, cols, lcptr, lcent, rows, cost, u, v, match_l, match_r, edge_l,
                    free, nf, queue, work, perfect,
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
        if perfect:  # row i took uncovered entry ent[start + i] in column match_l[i]
            for i in range(n):
                e = ent[start + i]
                residual[e] = max(residual[e] - w, 0.0)
                unc[e] = False
                live[e] = False
                cnt_r[i] -= 1
                cnt_c[match_l[i]] -= 1
            covered_since += n
        else:
            for t in range(start, nent):
                e = ent[t]
                residual[e] = max(residual[e] - w, 0.0)
                if unc[e]:
                    unc[e] = False
                    if crit_r[rows[e]] or crit_c[cols[e]]:
                        live[e] = False
                    covered_since += 1
                    cnt_r[rows[e]] -= 1
                    cnt_c[cols[e]] -= 1
        if perfect and fresh and built:  # the entries just covered are dead: out of the candidates
            for i in range(n):
                q = _find(cand, ccount, i, edge_l[i])
                if q >= 0:
                    for t in range(q + 1, ccount[i]):
                        cand[i, t - 1] = cand[i, t]
                        cand_col[i, t - 1] = cand_col[i, t]
                        cand_cost[i, t - 1] = cand_cost[i, t]
                    ccount[i] -= 1
        weights[l] = w
        ent_ptr[l + 1] = nent
        was_perfect = perfect
        prev_start = start
        prev_end = nent
    left_over = 0
    for e in range(nnz):
        if unc[e]:
            left_over += 1
    return left_over
