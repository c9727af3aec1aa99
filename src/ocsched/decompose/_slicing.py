"""What BvN and Solstice share: the stuffed residual on its support, peeling a matching off it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ocsched._types import FloatArray, IntArray
from ocsched.decompose._common import Decomposition
from ocsched.decompose._stuffing import dense, entries_of, finish, quick_stuff, unit_scale
from ocsched.model import Demand

Slicer = Callable[[ArrayLike], tuple[IntArray, FloatArray]]


def support(stuffed: ArrayLike) -> tuple[int, float, IntArray, IntArray, FloatArray]:
    """Return n, the largest entry and the nonzero entries (row-major: rows, cols, values) of ``stuffed``.

    Working on the support only costs O(nnz) per matching and finds the same matchings as dense.

    >>> support([[0, 2], [1, 0]])
    (2, 2.0, array([0, 1]), array([1, 0]), array([2., 1.]))
    """
    res = dense(stuffed, "stuffed")
    rows, cols = np.nonzero(res)
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    return res.shape[0], float(res.max()), rows, cols, res[rows, cols]


def peel(n: int, rows: IntArray, cols: IntArray, val: FloatArray, match: IntArray, tol: float) -> float:
    """Subtract the smallest entry of ``val`` under ``match`` from its entries, in place; return it.

    Entries left at or below ``tol`` (round-off) are zeroed.

    >>> val = np.array([2.0, 1.0, 3.0])
    >>> peel(2, np.array([0, 1, 1]), np.array([1, 0, 1]), val, np.array([1, 0]), 1e-12), val.tolist()
    (1.0, [1.0, 0.0, 3.0])
    """
    on = entries_of(n, rows, cols, match)
    w = float(val[on].min())
    val[on] -= w
    val[val <= tol] = 0.0
    return w


def stacked(n: int, perms: list[IntArray], weights: list[float]) -> tuple[IntArray, FloatArray]:
    """Return the matchings as an (m, n) int64 array and their weights as an array (m = 0 allowed)."""
    return np.array(perms, dtype=np.int64).reshape(-1, n), np.array(weights)


def decompose_stuffed(demand: Demand, slices: Slicer) -> Decomposition:
    """Stuff ``demand`` (:func:`quick_stuff`), slice it with ``slices``, drop stuffing (:func:`finish`).

    The matrix is taken in units of a power of two near its largest entry: exact, and line sums
    cannot overflow.
    """
    scale = unit_scale(demand)
    perms, w = slices(quick_stuff(demand.to_dense() / scale))
    return finish(demand, perms, w * scale)
