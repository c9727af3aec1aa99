"""Birkhoff-von Neumann on the stuffed matrix, each step the maximum-bottleneck perfect matching."""

from __future__ import annotations

from numpy.typing import ArrayLike

from ocsched._types import FloatArray, IntArray
from ocsched.decompose._bottleneck import bottleneck
from ocsched.decompose._common import Decomposition
from ocsched.decompose._slicing import decompose_stuffed, peel, stacked, support
from ocsched.decompose._stuffing import TOL, perfect_on
from ocsched.model import Demand

__all__ = ["bvn_decompose", "bvn_slices"]


def bvn_slices(stuffed: ArrayLike) -> tuple[IntArray, FloatArray]:
    """Birkhoff-von Neumann decomposition with maximum-bottleneck perfect matchings.

    Parameters
    ----------
    stuffed : array_like, shape (n, n)
        A non-negative matrix with equal line sums (see :func:`quick_stuff`).

    Returns
    -------
    perms : ndarray of int64, shape (m, n)
        Perfect matchings, every circuit on an entry of ``stuffed``.
    weights : ndarray of float64, shape (m,)
        Their weights (each the matching's smallest residual entry).

    Notes
    -----
    Each step finds the perfect matching whose smallest entry is largest: a binary search over
    the distinct residual values t for the largest one where the entries >= t still hold a
    perfect matching (compiled, :func:`~ocsched.decompose._bottleneck.bottleneck`), then that
    matching from :func:`scipy.sparse.csgraph.maximum_bipartite_matching`. The bottleneck
    never increases (the residual only shrinks), which bounds the search from above. Each step
    zeroes at least one entry: at most nnz steps, each O(log nnz) matchings.

    Examples
    --------
    >>> perms, w = bvn_slices([[1, 2], [2, 1]])
    >>> perms.tolist(), w.tolist()
    ([[1, 0], [0, 1]], [2.0, 1.0])
    """
    n, big, rows, cols, val = support(stuffed)
    perms: list[IntArray] = []
    weights: list[float] = []
    if big == 0:
        return stacked(n, perms, weights)
    tol = TOL * big
    cap = big
    while val.max(initial=0.0) > tol:
        # The search runs compiled; scipy then gives the matching at the bottleneck, as each
        # probe of the search did before (the same decomposition, ~10x fewer solver calls).
        t = bottleneck(n, rows, cols, val, cap, warm=perms[-1] if perms else None)
        best = None if t is None else perfect_on(n, rows, cols, val >= t)
        if best is None:
            break  # only round-off is left
        w = peel(n, rows, cols, val, best, tol)
        cap = w
        perms.append(best)
        weights.append(w)
    return stacked(n, perms, weights)


def bvn_decompose(demand: Demand) -> Decomposition:
    """BvN decomposition of a demand: :func:`quick_stuff`, then :func:`bvn_slices`.

    Circuits on stuffing are dropped and the weights topped up so coverage is exact.

    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> bvn_decompose(d).weights.tolist()
    [3.0, 1.0]
    """
    return decompose_stuffed(demand, bvn_slices)
