"""Largest-first grouped decomposition: exactly Delta permutations, entries of similar size together.

A permutation held for w costs w whatever else it carries, so the total length of a
decomposition into Delta permutations is ``sum_l max_{e in l} d_e``; it is at least
``sum_t max_L d_{L,(t)}`` (the t-th largest entries of the lines, summed over the ranks; see
:func:`ocsched.bounds.band_bound`), reached when permutation t holds the t-th largest entry of
every line. Spectra's rounds take the matching of largest *total* residual, which mixes large
and small entries in one permutation. Here each round weighs an entry by ``(d_e / M)^p`` (M the
largest uncovered entry), so the matching takes the largest uncovered entries first and fills
with the next largest: permutations come out sorted by size, close to that ideal.
"""

from __future__ import annotations

import numpy as np

from ocsched.decompose._common import Decomposition
from ocsched.decompose._kempe import kempe_regroup
from ocsched.model import Demand

__all__ = ["grouped_decompose"]


#: Weight of the entry's own size beside ``(d / M)^p``: it orders the entries that ``x^p``
#: rounds to zero (small against M), so they are still matched largest first.
_LINEAR = 1e-3


def grouped_decompose(demand: Demand, *, power: float = 8.0, sweeps: int = 4) -> Decomposition:
    """Decompose into exactly Delta permutations, grouping entries of similar size.

    Parameters
    ----------
    demand : Demand
        The demand (not all zero).
    power : float
        Exponent p of the round weights ``(d_e / M)^p``: 1 is Spectra's total-residual rule,
        larger values take the largest entries first.
    sweeps : int
        Sweeps of :func:`~ocsched.decompose._kempe.kempe_regroup` afterwards (0: none).

    Returns
    -------
    Decomposition
        Every entry on exactly one permutation, each weight the largest entry it holds.

    Notes
    -----
    Round l = 0 .. Delta-1 is Spectra's round (a line with ``Delta - l`` uncovered nonzeros is
    critical and must be matched to one of them, which König's theorem allows; see
    :func:`~ocsched.decompose.spectra.spectra_decompose`) with another objective: one dense
    assignment (:func:`scipy.optimize.linear_sum_assignment`) per round, O(Delta n^3) time and
    O(n^2) memory. Deterministic.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> dec = grouped_decompose(d)
    >>> len(dec), dec.weights.tolist()
    (2, [3.0, 1.0])
    """
    from scipy.optimize import linear_sum_assignment

    n, rows, cols = demand.n, demand.rows, demand.cols
    big_delta = demand.max_degree
    vals = demand.values / float(demand.values.max())
    index = np.full((n, n), -1, dtype=np.int64)
    index[rows, cols] = np.arange(demand.nnz)
    uncovered = np.ones(demand.nnz, dtype=bool)
    owner = np.full(demand.nnz, -1, dtype=np.int64)
    # Larger than any matching's total weight (each entry weighs at most 1 + _LINEAR).
    penalty = 4.0 * n
    for l in range(big_delta):
        left = big_delta - l
        urows, ucols, uvals = rows[uncovered], cols[uncovered], vals[uncovered]
        crit_r = np.bincount(urows, minlength=n) == left
        crit_c = np.bincount(ucols, minlength=n) == left
        x = uvals / float(uvals.max())
        cost = np.zeros((n, n))
        cost[urows, ucols] = -(x**power + _LINEAR * x)
        allowed = np.zeros((n, n), dtype=bool)
        allowed[urows, ucols] = True
        cost += penalty * ((crit_r[:, None] & ~allowed).astype(np.float64) + (crit_c[None, :] & ~allowed))
        r_idx, c_idx = linear_sum_assignment(cost)
        on = allowed[r_idx, c_idx]
        e = index[r_idx[on], c_idx[on]]
        owner[e] = l
        uncovered[e] = False
    # Invariant: the critical lines force every nonzero onto one of the Delta permutations.
    assert not uncovered.any()
    if sweeps > 0:
        owner = kempe_regroup(n, rows, cols, demand.values, owner, max_sweeps=sweeps)
    perms = np.full((big_delta, n), -1, dtype=np.int64)
    perms[owner, rows] = cols
    weights = np.zeros(big_delta)
    np.maximum.at(weights, owner, demand.values)
    keep = weights > 0
    return Decomposition(perms[keep], weights[keep])
