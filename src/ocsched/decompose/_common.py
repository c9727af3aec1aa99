"""Shared pieces of every decomposition: the result type, coverage, top-up and the LP refit."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ocsched._types import FloatArray, IntArray
from ocsched.model import Demand

__all__ = [
    "Decomposition",
    "cover_exactly",
    "drop_empty",
    "incidence",
    "incidence_from",
    "refit_weights",
    "top_up",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class Decomposition:
    """Weighted partial permutations covering a demand.

    Attributes
    ----------
    perms : ndarray of int64, shape (m, n)
        ``perms[l, i] = j`` if permutation l connects i -> j, else -1. Only demand entries are kept.
    weights : ndarray of float64, shape (m,)
        How long each permutation must be held, all > 0.
    """

    perms: IntArray
    weights: FloatArray

    def __len__(self) -> int:
        return int(self.weights.size)

    def coverage(self, demand: Demand) -> FloatArray:
        """Return ``sum_l w_l P_l`` at each demand entry (aligned with ``demand.values``)."""
        return incidence(demand, self.perms) @ self.weights


def incidence(demand: Demand, perms: IntArray) -> sp.csr_array:
    """Entry-by-permutation 0/1 matrix: A[e, l] = 1 if permutation l holds demand entry e.

    Built from the permutations' circuits looked up in the demand's sorted entry keys:
    O(m n log nnz) time, no m x nnz temporary.
    """
    perms = np.asarray(perms, dtype=np.int64).reshape(-1, demand.n)
    m = perms.shape[0]
    if m == 0 or demand.nnz == 0:
        return sp.csr_array((demand.nnz, m))
    l_idx, i_idx = np.nonzero(perms >= 0)
    keys = demand.rows * demand.n + demand.cols  # sorted: entries are row-major
    k = i_idx * demand.n + perms[l_idx, i_idx]
    pos = np.minimum(np.searchsorted(keys, k), demand.nnz - 1)
    hit = keys[pos] == k
    return incidence_from(demand.nnz, m, pos[hit], l_idx[hit])


def incidence_from(nnz: int, m: int, entries: IntArray, perm_of: IntArray) -> sp.csr_array:
    """:func:`incidence` from the (entry, permutation) pairs, when the caller knows them."""
    return sp.csr_array((np.ones(entries.size), (entries, perm_of)), shape=(nnz, m))


def top_up(
    demand: Demand, perms: IntArray, weights: FloatArray, *, inc: sp.csr_array | sp.csc_array | None = None
) -> FloatArray:
    """Raise weights, permutation by permutation, until every demand entry is covered.

    Each permutation is raised by the largest shortfall left on its entries. Every demand entry
    must lie on some permutation. ``inc`` is :func:`incidence` if the caller has it.
    """
    a = (incidence(demand, perms) if inc is None else inc).tocsc()
    w = np.asarray(weights, dtype=np.float64).copy()
    short = demand.values - a @ w
    for l in np.nonzero(np.diff(a.indptr))[0].tolist():
        col = a.indices[a.indptr[l] : a.indptr[l + 1]]
        inc_l = float(short[col].max())
        if inc_l > 0:
            w[l] += inc_l
            short[col] -= inc_l
    # Relative to each entry: no absolute floor, so demands of any magnitude are covered.
    if (short > 1e-12 * demand.values).any():
        raise AssertionError("top_up: a demand entry lies on no permutation")
    return w


def cover_exactly(inc: sp.csr_array, x: FloatArray, values: FloatArray) -> FloatArray:
    """Lengthen columns until ``inc @ x >= values`` holds exactly (after an LP's tolerance).

    Each short entry, in order, lengthens its longest column by what it still lacks. Lengthening
    only adds coverage, so an entry another repair already covered is skipped (never shortened
    back); every entry must lie on some column (``inc``: entries x columns, CSR).

    >>> inc = sp.csr_array(np.array([[1, 1], [0, 1]]))
    >>> cover_exactly(inc, np.array([1.0, 2.0]), np.array([3.5, 2.5])).tolist()
    [1.0, 2.5]
    """
    x = np.array(x, dtype=np.float64)
    short = values - inc @ x
    for e in np.nonzero(short > 0)[0].tolist():
        cols = inc.indices[inc.indptr[e] : inc.indptr[e + 1]]
        # Invariant: what entry e still lacks now, after the repairs of the entries before it.
        lack = float(values[e] - inc.data[inc.indptr[e] : inc.indptr[e + 1]] @ x[cols])
        if lack > 0:
            x[int(cols[np.argmax(x[cols])])] += lack
    return x


def presolve_cover(inc: sp.csr_array, b: FloatArray) -> tuple[FloatArray, IntArray]:
    """Exact presolve of the covering rows ``inc @ x >= b`` (entries x columns, ``x >= 0``).

    An entry held by one column only is a lower bound on that column; an entry those bounds
    already cover is redundant. Returns the lower bounds and the rows still needed.

    >>> inc = sp.csr_array(np.array([[1, 0], [1, 1], [0, 1]]))
    >>> lb, need = presolve_cover(inc, np.array([2.0, 5.0, 1.0]))
    >>> lb.tolist(), need.tolist()
    ([2.0, 1.0], [1])
    """
    count = np.diff(inc.indptr)
    single = count == 1
    lb = np.zeros(inc.shape[1])
    np.maximum.at(lb, inc.indices[inc.indptr[:-1][single]], b[single])
    multi = np.nonzero(count > 1)[0]
    need = multi[inc[multi] @ lb < b[multi]] if multi.size else multi
    return lb, need.astype(np.int64)


def cover_by_latest(
    inc: sp.csr_array, values: FloatArray, load: sp.csr_array, offsets: FloatArray
) -> FloatArray | None:
    """Solve min T s.t. ``inc @ x >= values``, ``load @ x - T <= -offsets``, ``x >= 0``, exactly covered.

    One LP (HiGHS) scaled by the largest value (its tolerances are absolute, 1e-7, so demands
    of 1e-18 or 1e15 would otherwise be all round-off or all error), with the exact presolve of
    :func:`presolve_cover` (only the entries on several columns that the single-column lower
    bounds do not already cover go to HiGHS), then :func:`cover_exactly`. Every entry must lie
    on some column with a coefficient of at least 1. None if the LP fails, or cannot be posed
    (offsets that overflow in units of the largest value: a demand below the normal range).

    >>> inc = sp.csr_array(np.array([[1.0, 1.0]]))
    >>> cover_by_latest(inc, np.array([3.0]), sp.csr_array(np.eye(2)), np.array([0.0, 1.0])).tolist()
    [2.0, 1.0]
    """
    from scipy.optimize import linprog

    m = inc.shape[1]
    scale = float(values.max())
    b = values / scale
    lb, need = presolve_cover(inc, b)
    # Variables: x (m), then T.
    cover = sp.hstack([-inc[need], sp.csr_array((need.size, 1))])
    rows = sp.hstack([load, sp.csr_array(-np.ones((load.shape[0], 1)))])
    a_ub = sp.vstack([cover, rows]).tocsr()
    with np.errstate(over="ignore"):
        b_ub = np.concatenate([-b[need], -offsets / scale])
    if not np.isfinite(b_ub).all():
        return None  # offsets beyond the float range in units of a subnormal demand: no LP
    c = np.zeros(m + 1)
    c[-1] = 1.0
    bounds = np.column_stack([np.append(lb, 0.0), np.full(m + 1, np.inf)])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")  # type: ignore[call-overload]
    if res.status != 0 or res.x is None:
        return None
    x = np.maximum(np.asarray(res.x[:m], dtype=np.float64), lb) * scale
    # Exact coverage: each short entry lengthens its longest serving column by the shortfall.
    return cover_exactly(inc, x, values)


def refit_weights(
    demand: Demand,
    perms: IntArray,
    weights: FloatArray | None = None,
    *,
    inc: sp.csr_array | None = None,
) -> FloatArray:
    """Re-fit permutation weights with one LP: minimise sum(w) s.t. sum_l w_l P_l >= D, w >= 0.

    Solved with HiGHS through :func:`scipy.optimize.linprog`. The LP's answer is topped up by
    its (tiny) feasibility slack so that coverage is exact; if the solver fails, ``weights``
    (a feasible start) is returned unchanged.

    Notes
    -----
    An exact presolve keeps the LP small: an entry held by one permutation only is a lower
    bound on that permutation's weight, and an entry already covered by those lower bounds is
    redundant. Only the remaining entries (on several permutations) go to HiGHS, with the lower
    bounds as variable bounds and the demand scaled by its largest entry, so any magnitude a
    float can hold is solved in the same well-conditioned form. The optimum is unchanged. On
    Spectra's dense decompositions almost every entry lies on one permutation and the LP
    vanishes.
    """
    from scipy.optimize import linprog

    m = np.asarray(perms).reshape(-1, demand.n).shape[0]
    if m == 0:
        return np.zeros(0)
    a = (incidence(demand, perms) if inc is None else inc).tocsr()
    if demand.nnz == 0:
        return np.zeros(m)
    scale = float(demand.values.max())
    b = demand.values / scale
    lb, need = presolve_cover(a, b)
    if need.size:
        sub = a[need]
        # HiGHS takes a sparse A_ub; scipy-stubs only declare dense arrays.
        res = linprog(  # type: ignore[call-overload]
            np.ones(m),
            A_ub=-sub,
            b_ub=-b[need],
            bounds=np.column_stack([lb, np.full(m, np.inf)]),
            method="highs",
        )
        if res.status != 0 or res.x is None:
            log.warning("weight re-fit LP failed (%s); keeping the unrefined weights", res.message)
            if weights is None:
                raise RuntimeError(f"weight re-fit LP failed: {res.message}")
            return np.asarray(weights, dtype=np.float64)
        x = np.maximum(np.asarray(res.x, dtype=np.float64), lb)
    else:
        x = lb
    return top_up(demand, perms, x * scale, inc=a)


def drop_empty(
    dec: Decomposition, demand: Demand, *, inc: sp.csr_array | sp.csc_array | None = None
) -> Decomposition:
    """Remove permutations with no circuit, no weight, or a negligible one, keeping coverage.

    A weight at most 1e-12 of every entry its permutation holds (LP round-off) would cost a
    whole reconfiguration for nothing: it is dropped and the others topped up, so the result
    still covers the demand. Every comparison is relative: demands of any magnitude behave alike.
    ``inc`` is :func:`incidence` if the caller has it.
    """
    if len(dec) == 0:
        return dec
    a = (incidence(demand, dec.perms) if inc is None else inc).tocsc()
    held = np.diff(a.indptr) > 0
    smallest = np.full(len(dec), np.inf)
    np.minimum.at(smallest, np.repeat(np.arange(len(dec)), np.diff(a.indptr)), demand.values[a.indices])
    keep = held & (dec.weights > 0) & ~(dec.weights <= 1e-12 * smallest)
    if keep.all():
        return dec
    perms = dec.perms[keep]
    return Decomposition(perms, top_up(demand, perms, dec.weights[keep], inc=a[:, keep]))
