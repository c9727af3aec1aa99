"""Solstice (Liu et al., CoNEXT 2015): QuickStuff, then perfect matchings on entries >= r, r halving."""

from __future__ import annotations

import math

from numpy.typing import ArrayLike

from ocsched._types import FloatArray, IntArray
from ocsched.decompose._common import Decomposition
from ocsched.decompose._slicing import decompose_stuffed, peel, stacked, support
from ocsched.decompose._stuffing import TOL, perfect_on
from ocsched.model import Demand

__all__ = ["solstice_decompose", "solstice_slices"]


def solstice_slices(stuffed: ArrayLike) -> tuple[IntArray, FloatArray]:
    """Slice a matrix with equal line sums into perfect matchings, Solstice's way.

    Parameters
    ----------
    stuffed : array_like, shape (n, n)
        A non-negative matrix with equal line sums (see :func:`quick_stuff`).

    Returns
    -------
    perms : ndarray of int64, shape (m, n)
        Perfect matchings, every circuit on an entry of ``stuffed``.
    weights : ndarray of float64, shape (m,)
        Their durations; ``sum_l weights[l] * P_l`` equals ``stuffed`` within round-off.

    Notes
    -----
    r starts as the largest power of two not above the largest entry. While something is left:
    take a perfect matching (:func:`scipy.sparse.csgraph.maximum_bipartite_matching`) using only
    entries >= r, hold it for its smallest entry and subtract; if there is none, halve r. A
    residual with equal line sums always has a perfect matching on its support (Birkhoff), so r
    stops halving once it is below the smallest entry. The loop stops when what is left is below
    1e-12 of the largest entry (round-off), or r falls below that.

    Examples
    --------
    >>> perms, w = solstice_slices([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> perms.tolist(), w.tolist()
    ([[1, 2, 0], [2, 0, 1]], [3.0, 1.0])
    """
    n, big, rows, cols, val = support(stuffed)
    perms: list[IntArray] = []
    weights: list[float] = []
    if big == 0:
        return stacked(n, perms, weights)
    tol = TOL * big
    r = 2.0 ** math.floor(math.log2(big))
    while val.max(initial=0.0) > tol and r >= tol:
        match = perfect_on(n, rows, cols, val >= r)
        if match is None:
            r /= 2
            continue
        perms.append(match)
        weights.append(peel(n, rows, cols, val, match, tol))
    return stacked(n, perms, weights)


def solstice_decompose(demand: Demand) -> Decomposition:
    """Solstice's decomposition of a demand: :func:`quick_stuff`, then :func:`solstice_slices`.

    Circuits on stuffing are dropped and the weights topped up so coverage is exact.

    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> solstice_decompose(d).weights.tolist()
    [3.0, 1.0]
    """
    return decompose_stuffed(demand, solstice_slices)
