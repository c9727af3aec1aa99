"""Decompose a demand matrix into weighted permutations (matchings).

A decomposition is a list of partial permutations ``perms[l]`` (``perms[l, i] = j`` or -1) with
weights ``w[l] >= 0`` such that ``sum_l w[l] * P_l >= D`` entrywise. Each permutation becomes one
configuration (or several pieces) of a schedule, so fewer permutations mean fewer delays.

Methods are registered in :data:`DECOMPOSERS` and reached through :func:`decompose`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.model import Demand

__all__ = ["DECOMPOSERS", "Decomposition", "decompose", "refit_weights", "spectra_decompose", "top_up"]

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
        return _incidence(demand, self.perms) @ self.weights


def _incidence(demand: Demand, perms: IntArray) -> sp.csr_array:
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
    a = _incidence(demand, perms).tocsc()
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
    a = _incidence(demand, perms)
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


def spectra_decompose(demand: Demand) -> Decomposition:
    """Decompose into exactly Delta weighted permutations, Spectra's way.

    Delta, the most nonzeros in any row or column, is the fewest permutations that can cover the
    demand (a permutation holds one entry per line).

    Notes
    -----
    Round l = 0 .. Delta-1, with ``left = Delta - l`` rounds remaining: a line whose count of
    not-yet-covered nonzeros equals ``left`` is *critical* and must be matched to one of them, or
    some of its nonzeros would never be covered. Such a matching exists by König's edge-colouring
    theorem (the uncovered nonzeros form a bipartite graph of max degree <= left, and a bipartite
    graph has a matching covering all its max-degree vertices). Among those matchings the one
    carrying the most residual demand is found as a min-cost perfect assignment
    (:func:`scipy.optimize.linear_sum_assignment`) with cost ``-residual`` on demand entries, 0
    elsewhere, plus a penalty larger than any total residual for each critical line matched
    outside its uncovered nonzeros. The permutation's weight is its smallest positive residual;
    it is subtracted and the entries are marked covered.

    Invariant: after round l every line has at most ``Delta - l - 1`` uncovered nonzeros, so
    after Delta rounds all are covered. A top-up pass then makes ``sum w_l P_l >= D`` and
    :func:`refit_weights` re-fits all weights with one LP.

    Each round is one n x n assignment: O(Delta n^3) worst case.

    References
    ----------
    Liang, Qiao, Keslassy, Lin. Scheduling Parallel Optical Circuit Switches for AI Training.
    arXiv:2603.07373, 2026.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> dec = spectra_decompose(d)
    >>> len(dec), dec.weights.tolist()
    (2, [3.0, 1.0])
    """
    from scipy.optimize import linear_sum_assignment

    n, rows, cols = demand.n, demand.rows, demand.cols
    big_delta = demand.max_degree
    if big_delta == 0:
        return Decomposition(np.zeros((0, n), np.int64), np.zeros(0))
    index = np.full((n, n), -1, dtype=np.int64)  # dense entry index: demand entry e at (i, j)
    index[rows, cols] = np.arange(demand.nnz)
    residual = demand.values.copy()
    uncovered = np.ones(demand.nnz, dtype=bool)
    # Larger than any matching's total residual, so covering critical lines always wins.
    penalty = 2.0 * float(np.sort(demand.values)[-n:].sum()) + 1.0
    perms = np.full((big_delta, n), -1, dtype=np.int64)
    weights = np.zeros(big_delta)
    for l in range(big_delta):
        left = big_delta - l
        urows, ucols = rows[uncovered], cols[uncovered]
        crit_r = np.bincount(urows, minlength=n) == left
        crit_c = np.bincount(ucols, minlength=n) == left
        cost = np.zeros((n, n))
        cost[rows, cols] = -residual
        allowed = np.zeros((n, n), dtype=bool)
        allowed[urows, ucols] = True
        cost += penalty * ((crit_r[:, None] & ~allowed).astype(np.float64) + (crit_c[None, :] & ~allowed))
        r_idx, c_idx = linear_sum_assignment(cost)
        e = index[r_idx, c_idx]
        on = e >= 0
        # Invariant: every critical line is matched to one of its uncovered nonzeros.
        assert not (crit_r[r_idx] & ~allowed[r_idx, c_idx]).any()
        assert not (crit_c[c_idx] & ~allowed[r_idx, c_idx]).any()
        e = e[on]
        perms[l, r_idx[on]] = c_idx[on]
        pos = residual[e][residual[e] > 0]
        w = float(pos.min()) if pos.size else 0.0
        residual[e] = np.maximum(residual[e] - w, 0.0)
        uncovered[e] = False
        weights[l] = w
    assert not uncovered.any()
    weights = top_up(demand, perms, weights)
    weights = refit_weights(demand, perms, weights)
    return _drop_empty(Decomposition(perms, weights), demand)


def _drop_empty(dec: Decomposition, demand: Demand) -> Decomposition:
    """Remove permutations with no weight or no circuit."""
    scale = max(1.0, float(demand.values.max(initial=0.0)))
    keep = (dec.weights > 1e-15 * scale) & (dec.perms >= 0).any(axis=1)
    return Decomposition(dec.perms[keep], dec.weights[keep])


Decomposer = Callable[[Demand], Decomposition]

DECOMPOSERS: dict[str, tuple[Decomposer, str]] = {
    "spectra": (
        spectra_decompose,
        "Delta permutations (the fewest), max-residual matchings, LP-refit weights",
    ),
}


def decompose(demand: Demand, *, method: str = "spectra") -> Decomposition:
    """Decompose ``demand`` with the named method (a key of :data:`DECOMPOSERS`).

    >>> decompose(Demand.from_matrix([[0, 1], [1, 0]])).weights.tolist()
    [1.0]
    """
    if method not in DECOMPOSERS:
        raise InvalidInputError(
            f"unknown decomposition method {method!r}; choose one of {', '.join(DECOMPOSERS)}"
        )
    return DECOMPOSERS[method][0](demand)
