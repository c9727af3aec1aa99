"""Small instances with hand-checked answers, shared by the test modules.

Each case: demand, switches, delta, the lower bound, and the optimal makespan where known.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class Case:
    name: str
    demand: NDArray[np.float64]
    switches: int
    delta: float
    bound: float
    optimum: float | None  # None where not hand-derived


def _m(rows: list[list[float]]) -> NDArray[np.float64]:
    return np.array(rows, dtype=np.float64)


CASES = [
    # One permutation, one switch: delta + w, and the bound is tight.
    Case("perm-s1", _m([[0, 2], [2, 0]]), 1, 0.5, 2.5, 2.5),
    # One flow split over two switches: each holds half after its own delta.
    Case("single-s2", _m([[0, 1], [0, 0]]), 2, 0.1, 0.6, 0.6),
    # Two unit flows of one row on 3 switches: 4 configurations needed (refined bound 0.8 > 0.7667).
    Case("row-s3", _m([[0, 1, 1], [0, 0, 0], [0, 0, 0]]), 3, 0.1, 0.8, 0.8),
    # Two permutations of weights 3 and 1 on two switches: 0.5+3 vs 0.5+1, equalized to 2.75.
    Case("two-perms", _m([[0, 3, 1], [1, 0, 3], [3, 1, 0]]), 2, 0.5, 2.75, 2.75),
    # All zero: nothing to do.
    Case("zero", np.zeros((3, 3)), 2, 0.3, 0.0, 0.0),
    # Delta 0: the bound is the largest line sum / s.
    Case("dense-delta0", _m([[0, 1, 2], [2, 0, 1], [1, 2, 0]]), 3, 0.0, 1.0, 1.0),
]
