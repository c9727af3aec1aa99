"""Helpers shared by the workload families."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_int

__all__ = ["block_diagonal", "normalize"]


def normalize(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """Divide by the largest row or column sum (the paper's convention); zero stays zero.

    >>> normalize(np.array([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [[0.0, 1.0], [0.5, 0.0]]
    """
    m = np.asarray(matrix, dtype=np.float64)
    top = max(float(m.sum(axis=0).max(initial=0.0)), float(m.sum(axis=1).max(initial=0.0)))
    return m / top if top > 0 else m


def block_diagonal(block: NDArray[np.float64], copies: int) -> NDArray[np.float64]:
    """Place ``copies`` copies of the square ``block`` on the diagonal of a larger zero matrix.

    >>> block_diagonal(np.array([[0.0, 1.0], [2.0, 0.0]]), 2).astype(int).tolist()
    [[0, 1, 0, 0], [2, 0, 0, 0], [0, 0, 0, 1], [0, 0, 2, 0]]
    """
    c = check_int(copies, "copies")
    return np.asarray(np.kron(np.eye(c), np.asarray(block, dtype=np.float64)), dtype=np.float64)
