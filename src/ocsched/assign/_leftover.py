"""What an all-stop schedule cut at time ``at`` leaves to place, in one compiled pass (numba).

:func:`ocsched.reschedule.reschedule` keeps everything that ran before a failure (or that a switch
the failure leaves alone goes on running) and places the rest again. Under the all-stop model a
configuration holds every one of its circuits for its whole duration
(:func:`ocsched.timing.held_times`), so what the kept part served, and what the dropped part
would still have served, follow from each configuration's start, duration and rate alone. On
small matrices these few array passes cost less than the Python objects that would carry them,
so they run compiled; ``tests/model/test_fabric.py`` checks them against ``held_times``.
"""

from __future__ import annotations

import numpy as np

from ocsched._jit import jit
from ocsched._types import FloatArray, IntArray
from ocsched.assign._kernels import lay_out_pieces, uniform_pieces


@jit
def _row_hash(row: IntArray) -> int:
    """A hash of a permutation row: only a filter, rows with equal hashes are compared in full.

    Kept below 2**31 (mod a prime), so that no step overflows: interpreted, numpy would warn.
    """
    h = 0
    for x in row:
        h = (h * 1000003 + x + 1) % 2147483647
    return h


@jit
def leftover_all_stop(
    perms: IntArray,
    start: FloatArray,
    duration: FloatArray,
    rate: FloatArray,
    cut: FloatArray,
    rows: IntArray,
    cols: IntArray,
    values: FloatArray,
    rep: IntArray,
    weight: FloatArray,
) -> tuple[int, bool]:
    """Cut each configuration (``perms[k]`` held ``duration[k]`` from ``start[k]`` at ``rate[k]``).

    ``cut[k]`` is when its switch stops following the schedule (inf: never). Configurations that
    end by then are kept, the one running then is kept up to it, the rest are dropped. Returns
    ``(m, short)``: the distinct permutations of what was cut off or dropped, with the demand each
    would still have served summed (``perms[rep[t]]`` and ``weight[t]`` for t < m, in order of
    first appearance, weight > 0 only), and whether some demand entry (``rows``, ``cols``,
    ``values``: row-major, as in :class:`~ocsched.model.Demand`) is short of what the kept part
    served by more than 1e-12 of its larger line sum. Sums run in the order numpy's ``bincount``
    takes them, so the result equals the numpy formulation exactly.
    """
    k_all, n = perms.shape
    nnz = values.size
    served = np.zeros(nnz)
    ptr = np.zeros(n + 1, dtype=np.int64)  # row i's entries: ptr[i]:ptr[i + 1] (row-major)
    for e in range(nnz):
        ptr[rows[e] + 1] += 1
    for i in range(n):
        ptr[i + 1] += ptr[i]
    hashes = np.empty(k_all, dtype=np.int64)
    m = 0
    for k in range(k_all):
        end = start[k] + duration[k]
        at = cut[k]
        if end <= at:
            held, left = duration[k], 0.0
        elif start[k] < at:
            held, left = at - start[k], (end - at) * rate[k]
        else:
            held, left = 0.0, duration[k] * rate[k]
        if end <= at or start[k] < at:  # kept, whole or cut: what it served counts
            amount = rate[k] * held
            for i in range(n):
                j = perms[k, i]
                if j < 0:
                    continue
                lo, hi = ptr[i], ptr[i + 1]  # the entry (i, j): bisection on row i's columns
                while lo < hi:
                    mid = (lo + hi) // 2
                    if cols[mid] < j:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < ptr[i + 1] and cols[lo] == j:
                    served[lo] += amount
        if left <= 0.0:
            continue
        h = _row_hash(perms[k])
        t = 0
        while t < m:  # an earlier piece of the same permutation?
            if hashes[t] == h and np.array_equal(perms[rep[t]], perms[k]):
                break
            t += 1
        if t == m:
            rep[m], weight[m], hashes[m] = k, 0.0, h
            m += 1
        weight[t] += left
    row_sum = np.zeros(n)
    col_sum = np.zeros(n)
    for e in range(nnz):
        row_sum[rows[e]] += values[e]
        col_sum[cols[e]] += values[e]
    for e in range(nnz):
        if values[e] - served[e] > 1e-12 * max(row_sum[rows[e]], col_sum[cols[e]]):
            return m, True
    return m, False


@jit
def repair_on_identical(
    perms: IntArray,
    start: FloatArray,
    duration: FloatArray,
    rate: FloatArray,
    at: float,
    rows: IntArray,
    cols: IntArray,
    values: FloatArray,
    switches: int,
    delta: float,
    pack: bool,
) -> tuple[IntArray, IntArray, FloatArray, FloatArray, int, bool, bool]:
    """:func:`leftover_all_stop` placed and laid out from ``at`` on ``switches`` identical rate-1 switches.

    Placement is Spectra's (``pack=False``) or pack, exactly as :func:`~ocsched.assign.place_on_fabric`
    places and lays out the merged pieces. Returns the new configurations (live switch index,
    row of ``perms``, start, duration; switch by switch, in time order), the splits, whether
    equalization converged and whether any demand was short (nothing is placed if not).
    """
    k_all = perms.shape[0]
    rep = np.empty(k_all, dtype=np.int64)
    weight = np.empty(k_all)
    cut = np.full(k_all, at)
    m, short = leftover_all_stop(perms, start, duration, rate, cut, rows, cols, values, rep, weight)
    if not short or m == 0:
        none = np.empty(0, dtype=np.int64)
        return none, none, np.empty(0), np.empty(0), 0, True, short
    sw, perm, length, splits, converged = uniform_pieces(weight[:m], switches, delta, pack)
    idx, starts = lay_out_pieces(sw, length, switches, delta, at)
    return sw[idx], rep[perm[idx]], starts, length[idx], splits, converged, short
