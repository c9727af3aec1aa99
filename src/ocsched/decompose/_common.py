"""Shared pieces of every decomposition: the result type, coverage, top-up and the LP refit."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ocsched.model import Demand

__all__ = ["Decomposition", "drop_empty", "incidence", "refit_weights", "top_up"]

log = logging.getLogger(__name__)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


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
    """Entry-by-permutation 0/1 matrix: A[e, l] = 1 if permutation l holds demand entry e."""
    m = perms.shape[0]
    if m == 0 or demand.nnz == 0:
        return sp.csr_array((demand.nnz, m))
    hit = perms[:, demand.rows] == demand.cols[None, :]  # (m, nnz)
    l_idx, e_idx = np.nonzero(hit)
    return sp.csr_array((np.ones(l_idx.size), (e_idx, l_idx)), shape=(demand.nnz, m))


def top_up(demand: Demand, perms: IntArray, weights: FloatArray) -> FloatArray:
    """Raise weights, permutation by permutation, until every demand entry is covered.

    Each permutation is raised by the largest shortfall left on its entries. Every demand entry
    must lie on some permutation.
    """
    a = incidence(demand, perms).tocsc()
    w = np.asarray(weights, dtype=np.float64).copy()
    short = demand.values - a @ w
    for l in range(w.size):
        col = a.indices[a.indptr[l] : a.indptr[l + 1]]
        if col.size:
            inc = float(short[col].max())
            if inc > 0:
                w[l] += inc
                short[col] -= inc
    if (short > 1e-12 * max(1.0, float(demand.values.max(initial=0.0)))).any():
        raise AssertionError("top_up: a demand entry lies on no permutation")
    return w


def refit_weights(demand: Demand, perms: IntArray, weights: FloatArray | None = None) -> FloatArray:
    """Re-fit permutation weights with one LP: minimise sum(w) s.t. sum_l w_l P_l >= D, w >= 0.

    Solved with HiGHS through :func:`scipy.optimize.linprog`. The LP's answer is topped up by
    its (tiny) feasibility slack so that coverage is exact; if the solver fails, ``weights``
    (a feasible start) is returned unchanged.
    """
    from scipy.optimize import linprog

    m = perms.shape[0]
    if m == 0:
        return np.zeros(0)
    a = incidence(demand, perms)
    # HiGHS takes a sparse A_ub; scipy-stubs only declare dense arrays.
    res = linprog(  # type: ignore[call-overload]
        np.ones(m), A_ub=-a, b_ub=-demand.values, bounds=(0, None), method="highs"
    )
    if res.status != 0 or res.x is None:
        log.warning("weight re-fit LP failed (%s); keeping the unrefined weights", res.message)
        if weights is None:
            raise RuntimeError(f"weight re-fit LP failed: {res.message}")
        return np.asarray(weights, dtype=np.float64)
    w = np.maximum(np.asarray(res.x, dtype=np.float64), 0.0)
    return top_up(demand, perms, w)


def drop_empty(dec: Decomposition, demand: Demand) -> Decomposition:
    """Remove permutations with no weight or no circuit."""
    scale = max(1.0, float(demand.values.max(initial=0.0)))
    keep = (dec.weights > 1e-15 * scale) & (dec.perms >= 0).any(axis=1)
    return Decomposition(dec.perms[keep], dec.weights[keep])
