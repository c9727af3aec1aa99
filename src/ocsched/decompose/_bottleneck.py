"""The bottleneck of a perfect matching, compiled: BvN's search without a solver call per probe.

:func:`bottleneck` returns the largest value t among the candidate entries such that the entries
>= t still hold a perfect matching. It runs the whole binary search in one compiled call, each
probe an augmenting-path matching warm-started from the previous probe's (a matching of the
graph at a higher threshold stays one at a lower threshold; at a higher one its lost edges are
dropped and their rows augmented again). Only existence is decided here: callers that need a
particular matching (BvN keeps scipy's, so its decomposition is unchanged) ask for it once, at t.
"""

from __future__ import annotations

import numpy as np

from ocsched._jit import jit
from ocsched._types import FloatArray, IntArray


@jit
def _augment(
    root: int,
    t: float,
    indptr: IntArray,
    cols: IntArray,
    val: FloatArray,
    match_row: IntArray,
    match_col: IntArray,
    seen: IntArray,
    stamp: int,
    stack_row: IntArray,
    stack_pos: IntArray,
) -> bool:
    """Find an augmenting path from free row ``root`` on the entries >= t (iterative DFS); flip it."""
    depth = 0
    stack_row[0], stack_pos[0] = root, indptr[root]
    while depth >= 0:
        i = stack_row[depth]
        p = stack_pos[depth]
        advanced = False
        while p < indptr[i + 1]:
            j = cols[p]
            p += 1
            if val[p - 1] < t or seen[j] == stamp:
                continue
            seen[j] = stamp
            stack_pos[depth] = p
            owner = match_col[j]
            if owner < 0:  # free column: flip the path root -> ... -> i -> j
                while depth >= 0:
                    ii = stack_row[depth]
                    prev = match_row[ii]
                    jj = cols[stack_pos[depth] - 1]
                    match_row[ii], match_col[jj] = jj, ii
                    depth -= 1
                    if prev < 0:
                        break
                return True
            depth += 1
            stack_row[depth], stack_pos[depth] = owner, indptr[owner]
            advanced = True
            break
        if not advanced:
            depth -= 1
    return False


@jit
def _perfect(
    n: int,
    t: float,
    indptr: IntArray,
    cols: IntArray,
    val: FloatArray,
    match_row: IntArray,
    match_col: IntArray,
    seen: IntArray,
    stamp: int,
    stack_row: IntArray,
    stack_pos: IntArray,
) -> tuple[bool, int]:
    """Whether the entries >= t hold a perfect matching, warm-started from ``match_row``/``match_col``."""
    for i in range(n):  # drop matched edges below t
        j = match_row[i]
        if j >= 0:
            ok = False
            for p in range(indptr[i], indptr[i + 1]):
                if cols[p] == j:
                    ok = val[p] >= t
                    break
            if not ok:
                match_row[i] = -1
                match_col[j] = -1
    for i in range(n):
        if match_row[i] < 0:
            stamp += 1
            if not _augment(i, t, indptr, cols, val, match_row, match_col, seen, stamp, stack_row, stack_pos):
                return False, stamp
    return True, stamp


@jit
def bottleneck_value(
    n: int, rows: IntArray, cols: IntArray, val: FloatArray, cap: float, warm: IntArray
) -> float:
    """The largest entry value t <= ``cap`` with a perfect matching on the entries >= t; -1 if none.

    ``rows``/``cols``/``val`` are a row-major support (rows sorted); entries of value 0 count as
    absent. ``warm`` (``warm[i]`` a column or -1) seeds the first probe: the previous step's
    matching, which lost only the entries a peel emptied.
    """
    # t is at most every line's largest entry: candidates above that need no probe.
    row_max = np.zeros(n)
    col_max = np.zeros(n)
    for p in range(val.size):
        row_max[rows[p]] = max(row_max[rows[p]], val[p])
        col_max[cols[p]] = max(col_max[cols[p]], val[p])
    top = min(cap, row_max.min(), col_max.min())
    cand = np.unique(val[(val > 0) & (val <= top)])
    if cand.size == 0:
        return -1.0
    indptr = np.zeros(n + 1, dtype=np.int64)
    for r in rows:
        indptr[r + 1] += 1
    for i in range(n):
        indptr[i + 1] += indptr[i]
    match_row = np.full(n, -1, dtype=np.int64)
    match_col = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        j = warm[i]
        if j >= 0 and match_col[j] < 0:
            match_row[i], match_col[j] = j, i
    seen = np.zeros(n, dtype=np.int64)
    stack_row = np.empty(n + 1, dtype=np.int64)
    stack_pos = np.empty(n + 1, dtype=np.int64)
    stamp = 0
    # Gallop down from the largest candidate (the bottleneck rarely falls far from one step to
    # the next), then bisect the bracket. good_*: a perfect matching at cand[lo], the warm start
    # after a failed probe (a matching at a higher threshold is one at a lower threshold too).
    good_row = match_row.copy()
    good_col = match_col.copy()
    hi, step, lo = cand.size - 1, 1, -1
    probe = hi
    while True:
        ok, stamp = _perfect(
            n, cand[probe], indptr, cols, val, match_row, match_col, seen, stamp, stack_row, stack_pos
        )
        if ok:
            lo = probe
            good_row[:] = match_row
            good_col[:] = match_col
            break
        hi = probe - 1
        if probe == 0:
            return -1.0
        probe = max(0, probe - step)
        step *= 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        ok, stamp = _perfect(
            n, cand[mid], indptr, cols, val, match_row, match_col, seen, stamp, stack_row, stack_pos
        )
        if ok:
            lo = mid
            good_row[:] = match_row
            good_col[:] = match_col
        else:
            hi = mid - 1
            match_row[:] = good_row
            match_col[:] = good_col
    return float(cand[lo])


def bottleneck(
    n: int, rows: IntArray, cols: IntArray, val: FloatArray, cap: float, warm: IntArray | None = None
) -> float | None:
    """:func:`bottleneck_value`, None where no candidate value admits a perfect matching.

    >>> rows, cols = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    >>> bottleneck(2, rows, cols, np.array([3.0, 1.0, 2.0, 5.0]), 10.0)
    3.0
    >>> bottleneck(2, rows, cols, np.array([3.0, 0.0, 0.0, 0.0]), 10.0) is None
    True
    """
    start = np.full(n, -1, dtype=np.int64) if warm is None else np.asarray(warm, dtype=np.int64)
    t = bottleneck_value(n, rows, cols, np.asarray(val, dtype=np.float64), float(cap), start)
    return None if t < 0 else float(t)
