"""Spectra's Delta matching rounds on the demand's support, one warm-started assignment solver.

Each round is a maximum-weight matching with gain ``residual + penalty * (critical endpoints)``
on uncovered entries (``residual`` on covered ones), solved by the compiled assignment solver of
:mod:`ocsched.decompose._assignment` (a min-cost perfect matching on an augmented bipartite graph:
a port may stay idle at no cost). The compiled driver (numba):

- keeps the dual prices from round to round (costs only rise, except on lines that just became
  critical, whose dual moves with them), frees only the ports whose matched entry changed, and
  re-matches them with auction steps (Jonker-Volgenant's augmenting row reduction) and Dijkstra
  shortest augmenting paths, so every round is solved exactly (but see the last point);
- works on the live entries only: an entry already covered on a critical line can never be
  chosen again (a critical line must take an uncovered entry) and is dropped, amortised;
- on dense input solves each round on a candidate graph (each row's 16 entries of least
  reduced cost, with their columns and costs kept beside them, copied into contiguous arrays so
  that the solver's scans stay in cache) and prices out every other live entry through per-line
  lower bounds that stay valid as prices fall, re-scanning a line only when its dual passes its
  bound;
- keeps each row's live entries in order of cost while that order lasts (on dense input every
  line is critical from the first round, so costs never change after it): a re-scan then reads
  the row in that order and stops at the first entry that cannot beat its current 16th best
  even at the highest column price, typically after a few dozen entries instead of the whole row;
- once every line is critical (from the first round on dense input), solves each round as a
  perfect matching without the dummies: every line keeps taking one uncovered entry, so the
  live graph stays regular and has one. Where the candidate graph has none (MoE: every row's
  best entries in the same few hot columns), the round prices every row and finishes on the
  live graph. On MoE the dummies were two thirds of the nodes the shortest paths settled. Such
  a round's only dead candidates are its matched entries: they leave the lists at its end, and
  no pass over the whole demand's arrays is left in a round;
- from 512 ports on (``_APPROX_AT``), stops those perfect rounds on the candidate graph at an
  eps-optimal matching: Bertsekas' auction (each bid lowers a price by eps more than the gap
  to the bidder's second choice) with no shortest augmenting path, pricing the entries left
  out with the same eps slack. Every round is still a perfect matching of live entries (so the
  decomposition is as valid and still has Delta permutations), within n * eps of the exact
  round's gain, eps = 3 x the mean entry / n. The permutations' weights barely notice: on
  dense input (line sums 1, s = 16, delta = 0.04, 8 seeds x 2 placements) the makespans differ
  from the exact rounds' by at most 5e-5 at n = 512 and 640, either sign (2e-4 at n = 256-300,
  which the exact rounds still do fast), while dense n = 512 / 1024 / 2048 take 0.55x / 0.5x /
  0.47x the time. Where the auction runs out of room (its free list, ``_MAX_PRICING`` passes)
  the rounds start over exactly; the first exact round after eps-optimal ones lowers the row
  duals to feasibility, as shortest augmenting paths need.

Measured (CPU s in these rounds, old and new code interleaved on a 2-core machine shared with
other jobs): dense uniform random n=512 / 1024 / 2048 from 0.69 / 4.4 / 36 s before the
contiguous candidate graph, the rows kept in order of cost and the pruned augmenting paths of
:mod:`~ocsched.decompose._assignment`, to 0.61 / 3.3 / 18 s after; the perfect rounds then took
``schedule()`` on dense n=1024 and MoE n=256 to 0.72x and 0.43x of that (same makespans).
Where the time of the exact rounds goes (wall clock around each part of a round, instrumented copy,
2026-12-01, dense n=1024): shortest augmenting paths 40% (about 15 a round, each settling about
390 nodes), auction steps 23% (about 5n a round: the free list's capacity; a larger list and
budget were measured not to help), pricing 19% (about 290 row re-scans a round: a row's dual
climbs past its bound every three or four rounds; bounds that move with the highest price were
tried and cut that by 3% only), the start of a round 6%, collecting the permutation 5%, the
rest 7%.

Memory is O(nnz + n): no n x n array.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched._jit import HAVE_NUMBA, jit
from ocsched.decompose._assignment import _by_column, _solve

__all__ = ["HAVE_NUMBA", "spectra_rounds"]

log = logging.getLogger(__name__)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


#: Entries per row in the candidate graph on dense input (more only where pricing asks).
_CANDIDATES = 16
#: Live entries per row (on average) above which a round is solved on the candidate graph
#: (measured in one process: 32 beats 64 by 4% on dense n=512 and 9% on MoE n=256).
_DENSE_AT = 32
#: Pricing passes per round before the round is finished on the whole live graph.
_MAX_PRICING = 32
#: Capacity of the free list per port: <= 2 free nodes, plus the auction steps it bounds.
_FREE_CAP = 6
#: Ports from which perfect rounds on dense input stop at an eps-optimal matching ...
_APPROX_AT = 512
#: ... with eps this many times the mean demand entry over n (a row's two best entries lie
#: about mean / n apart: a larger eps buys more pricing passes than it saves in auction steps;
#: measured: 2-4 best, 1 and 6 slower, 16 gives up) ...
_EPS_SHARE = 3.0
#: ... and this many candidates a row (measured on dense n=1024: 16 / 20 / 24 / 32 take
#: 1.75 / 1.62 / 1.59 / 1.68 s; the exact rounds are fastest with 16) ...
_APPROX_CANDIDATES = 24
#: ... and this capacity of the free list per port (every step of an eps-optimal round is one).
_APPROX_FREE_CAP = 32
#: Ports from which dense input with many equal entries has its ties broken ...
_TIE_BREAK_AT = 256
#: ... by scaling each entry by 1 + this x a fixed pseudo-random number in [0, 1).
_TIE_BREAK = 1e-7


@jit
def _keep_least(
    x: float, e: int, nb: int, cap: int, best_k: FloatArray, best_e: IntArray
) -> tuple[int, float]:
    """Insert entry ``e`` of key ``x`` into the sorted list of the ``cap`` least keys so far.

    Returns the new length and the key left out (``x`` itself, or the largest kept one pushed
    out; inf when nothing was).
    """
    if nb == cap and not x < best_k[nb - 1]:
        return nb, x
    out = np.inf
    if nb == cap:  # the largest of the kept is pushed out
        out = best_k[nb - 1]
        nb -= 1
    q = nb
    while q > 0 and best_k[q - 1] > x:
        best_k[q] = best_k[q - 1]
        best_e[q] = best_e[q - 1]
        q -= 1
    best_k[q] = x
    best_e[q] = e
    return nb + 1, out


@jit
def _rescan(i: int, vmax: float, scan: Any) -> None:
    """Row i's candidates: its cand_k live entries of least ``cost - v`` and its matched one.

    ``scan`` holds the driver's arrays ``(lptr, lent, cols, cost, v, edge_l, cand, ccount,
    cand_col, cand_cost, lb, order, best_k, best_e)`` (see :func:`_run_rounds`); ``cand_col``
    and ``cand_cost`` get each candidate's column and cost, so that the candidate graph is
    copied from contiguous rows, not gathered from the whole demand.

    ``lb[i]`` becomes a lower bound of ``cost - v`` on the entries left out. Where the row's live
    entries are still in order of cost (``order``: ``by_cost[sbeg[i]:send[i]]``, with their
    columns and costs, less ``shift[i]``), the scan stops at the first entry whose
    ``cost - vmax`` (``vmax`` >= every column price) cannot enter the list.
    """
    lptr, lent, cols, cost, v, edge_l, cand, ccount, cand_col, cand_cost, lb, order, best_k, best_e = scan
    by_cost, s_col, s_cost, shift, sbeg, send, sorted_ok, live = order
    cand_k = cand.shape[1] - 1
    nb = 0
    low = np.inf
    keep = edge_l[i]
    if sorted_ok[i]:
        t = sbeg[i]
        while t < send[i] and not live[by_cost[t]]:  # a dead prefix is never scanned again
            t += 1
        sbeg[i] = t
        s = shift[i]
        while t < send[i]:
            e = by_cost[t]
            if e == keep or not live[e]:
                t += 1
                continue
            c = s_cost[t] - s  # == cost[e], read in order
            if nb == cand_k and c - vmax >= best_k[nb - 1]:
                low = min(low, c - vmax)  # bounds this entry and every later one
                break
            # The list keeps positions in the order: its entries, columns and costs are then
            # read near each other, not gathered from the whole demand's arrays.
            nb, out = _keep_least(c - v[s_col[t]], t, nb, cand_k, best_k, best_e)
            low = min(low, out)
            t += 1
    else:
        for t in range(lptr[i], lptr[i + 1]):
            e = lent[t]
            if e == keep:
                continue
            nb, out = _keep_least(cost[e] - v[cols[e]], e, nb, cand_k, best_k, best_e)
            low = min(low, out)
    c = 0
    if keep >= 0:
        cand[i, c] = keep
        cand_col[i, c] = cols[keep]
        cand_cost[i, c] = cost[keep]
        c += 1
    for q in range(nb):
        t = best_e[q]
        if sorted_ok[i]:
            cand[i, c] = by_cost[t]
            cand_col[i, c] = s_col[t]
            cand_cost[i, c] = s_cost[t] - shift[i]
        else:
            cand[i, c] = t
            cand_col[i, c] = cols[t]
            cand_cost[i, c] = cost[t]
        c += 1
    ccount[i] = c
    lb[i] = low


@jit
def _find(cand: IntArray, ccount: IntArray, i: int, e: int) -> int:
    """Where entry ``e`` is in row i's candidates (-1 if it is not one)."""
    for q in range(ccount[i]):
        if cand[i, q] == e:
            return q
    return -1


@jit
def _penalize(line: IntArray, unc: NDArray[np.bool_], cost: FloatArray, penalty: float) -> None:
    """Lower the cost of the uncovered entries among ``line`` (a newly critical line's) by ``penalty``."""
    for e in line:
        if unc[e]:
            cost[e] -= penalty


@jit
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


@jit
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


@jit
def _solve_live(
    n: int,
    lptr: IntArray,
    lent: IntArray,
    cols: IntArray,
    lcptr: IntArray,
    lcent: IntArray,
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
) -> None:
    """:func:`_solve` on every live entry, whose duals the caller keeps feasible.

    A perfect round cannot fail there: the live graph is regular, so it has a perfect matching.
    """
    if _solve(
        n, lptr, lent, cols, lcptr, lcent, rows, cost, u, v, match_l, match_r, edge_l,
        free, nf, queue, work, perfect,
    ):  # fmt: skip
        raise AssertionError("a regular bipartite graph without a perfect matching")


@jit
def _price_rows(
    n: int,
    tol: float,
    u: FloatArray,
    match_l: IntArray,
    match_r: IntArray,
    free: IntArray,
    nf: int,
    scan: Any,
) -> tuple[float, int]:
    """Pricing of the rows: re-scan each row whose dual passed its bound, re-match any violated.

    Returns the highest column price (the re-scans' ``vmax``) and the new count of free nodes.
    """
    _, _, _, _, v, edge_l, _, ccount, cand_col, cand_cost, lb, _, _, _ = scan
    vmax = -np.inf
    for j in range(n):
        vmax = max(vmax, v[j])
    for i in range(n):
        if u[i] > lb[i] + tol:
            _rescan(i, vmax, scan)
            m = lb[i]
            for q in range(ccount[i]):
                m = min(m, cand_cost[i, q] - v[cand_col[i, q]])
            if m < u[i] - tol:
                nf = _reprice(i, m, u, match_l, match_r, edge_l, free, nf)
    return vmax, nf


def _rounds_work(n: int, big_delta: int, indptr0: IntArray, rows: IntArray, *rest: Any) -> int:
    """The work of :func:`_run_rounds`: rounds x entries (interpreted, about 20 us each)."""
    return big_delta * rows.size


@jit(work=_rounds_work, budget=50_000)
def _run_rounds(
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


def approx_eps(values: FloatArray, n: int) -> float:
    """The eps of eps-optimal rounds on entries ``values`` of an n x n demand."""
    return _EPS_SHARE * float(values.mean()) / n


def spectra_rounds(
    n: int, rows: IntArray, cols: IntArray, values: FloatArray, big_delta: int
) -> tuple[IntArray, IntArray, FloatArray]:
    """Run Spectra's Delta max-residual matching rounds on the support.

    Returns the entries of each round's permutation (``ent[ptr[l]:ptr[l+1]]``, indices into the
    demand's entries, row-major order assumed) and the round weights (of the values the rounds
    saw: see below; the caller refits them on the demand).

    From ``_TIE_BREAK_AT`` ports on, dense input (more than ``_DENSE_AT`` entries a row) with
    fewer distinct values than half its entries (integer counts, a uniform all-to-all) is
    matched on entries scaled by ``1 + 1e-7 u`` with ``u`` a fixed pseudo-random number per
    entry: each round is then optimal for the true entries to within 1e-7 of their sum, and the
    solver no longer searches among equal alternatives (measured at n = 512: entries in {1, 2,
    3} 9.3 s -> 0.9 s, all equal 5.3 s -> 0.6 s, the same total weight). Where a row holds
    more equal entries per distinct value than ``_APPROX_CANDIDATES`` (its candidates would all
    tie), the rounds stay exact: eps-optimal ones took 10 s on the entries in {1, 2, 3}.
    """
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    distinct = 1 + int(np.count_nonzero(np.diff(np.sort(values))))
    if n >= _TIE_BREAK_AT and values.size > _DENSE_AT * n and 2 * distinct < values.size:
        noise = np.random.default_rng(0).random(values.size)
        values = values * (1.0 + _TIE_BREAK * noise)
    # Larger than any matching's total residual, so covering critical lines always wins.
    # (The n largest entries, summed in ascending order.)
    penalty = 2.0 * float(np.sort(np.partition(values, max(values.size - n, 0))[-n:]).sum())
    ent = np.empty(big_delta * n, dtype=np.int64)
    ptr = np.zeros(big_delta + 1, dtype=np.int64)
    weights = np.zeros(big_delta)
    # Writeable copies: numba compiles (and caches) one signature, not one per read-only flag.
    arrays = (indptr, np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))
    values = np.array(values, dtype=np.float64)

    def run(cand_k: int, eps: float, free_cap: int) -> int:
        left: int = _run_rounds(
            n, big_delta, *arrays, values, penalty, cand_k, _DENSE_AT, ent, ptr, weights,
            eps, free_cap, _MAX_PRICING,
        )  # fmt: skip
        return left

    left = -1
    if n >= _APPROX_AT and _EPS_SHARE > 0.0 and values.size <= _APPROX_CANDIDATES * distinct * n:
        left = run(_APPROX_CANDIDATES, approx_eps(values, n), _APPROX_FREE_CAP)
        if left < 0:
            log.debug("eps-optimal rounds gave up: exact rounds from the start")
    if left < 0:  # exact rounds: small or tied input, or the eps-optimal auction ran out of room
        left = run(_CANDIDATES, 0.0, _FREE_CAP)
    if left:
        raise AssertionError(f"spectra rounds left {left} demand entries uncovered")
    return ent[: ptr[-1]], ptr, weights
