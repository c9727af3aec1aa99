"""The steps of Spectra's matching rounds (:mod:`ocsched.decompose._rounds`), one kernel each.

Each is called by the round driver, :func:`ocsched.decompose._rounds_driver.run_rounds`:
keeping a row's least candidates (:func:`keep_least`), re-scanning a row (:func:`rescan`),
pricing the rows out against the candidate graph (:func:`price_rows`), and the small updates
of the matching (:func:`free_stale`, :func:`reprice`, :func:`penalize`). ``scan`` is the
driver's :class:`~ocsched.decompose._rounds_driver` tuple of arrays (see :func:`rescan`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched._jit import jit
from ocsched._types import FloatArray, IntArray
from ocsched.decompose._assignment import _solve

__all__ = ["find", "free_stale", "keep_least", "penalize", "price_rows", "reprice", "rescan", "solve_live"]


@jit
def keep_least(
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
def rescan(i: int, vmax: float, scan: Any) -> None:
    """Row i's candidates: its cand_k live entries of least ``cost - v`` and its matched one.

    ``scan`` holds the driver's arrays ``(lptr, lent, cols, cost, v, edge_l, cand, ccount,
    cand_col, cand_cost, lb, order, best_k, best_e)`` (see
    :func:`~ocsched.decompose._rounds_driver.run_rounds`); ``cand_col`` and ``cand_cost`` get
    each candidate's column and cost, so that the candidate graph is copied from contiguous
    rows, not gathered from the whole demand.

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
            nb, out = keep_least(c - v[s_col[t]], t, nb, cand_k, best_k, best_e)
            low = min(low, out)
            t += 1
    else:
        for t in range(lptr[i], lptr[i + 1]):
            e = lent[t]
            if e == keep:
                continue
            nb, out = keep_least(cost[e] - v[cols[e]], e, nb, cand_k, best_k, best_e)
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
def find(cand: IntArray, ccount: IntArray, i: int, e: int) -> int:
    """Where entry ``e`` is in row i's candidates (-1 if it is not one)."""
    for q in range(ccount[i]):
        if cand[i, q] == e:
            return q
    return -1


@jit
def penalize(line: IntArray, unc: NDArray[np.bool_], cost: FloatArray, penalty: float) -> None:
    """Lower the cost of the uncovered entries among ``line`` (a newly critical line's) by ``penalty``."""
    for e in line:
        if unc[e]:
            cost[e] -= penalty


@jit
def free_stale(
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
def reprice(
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
def solve_live(
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
def price_rows(
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
            rescan(i, vmax, scan)
            m = lb[i]
            for q in range(ccount[i]):
                m = min(m, cand_cost[i, q] - v[cand_col[i, q]])
            if m < u[i] - tol:
                nf = reprice(i, m, u, match_l, match_r, edge_l, free, nf)
    return vmax, nf
