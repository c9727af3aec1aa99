"""Drift between consecutive matrices of one workload (steps, iterations, layers).

:func:`drift_step` moves a matrix by exactly a given relative L1 distance, keeping its support
and non-negativity, so benchmarks and sweeps can set the prediction error a controller faces.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_number

__all__ = ["drift_step"]


def drift_step(matrix: NDArray[np.float64], drift: float, rng: np.random.Generator) -> NDArray[np.float64]:
    """Return ``matrix`` moved by relative L1 distance ``drift`` (``||out - m||_1 = drift * ||m||_1``).

    Each nonzero entry is multiplied by an independent log-normal factor ``exp(2 drift Z)``
    (the per-source, per-expert drift of a routing popularity), and the result mixed with the
    matrix, ``m + lam (noisy - m)``, with ``lam`` <= 1 the exact share that gives distance
    ``drift``; when even ``lam = 1`` falls short (very large ``drift``) the distance is smaller.
    Zeros stay zero and entries stay non-negative (a convex combination of two such matrices).

    Examples
    --------
    >>> m = np.arange(16, dtype=float).reshape(4, 4)
    >>> out = drift_step(m, 0.1, np.random.default_rng(0))
    >>> round(float(np.abs(out - m).sum() / m.sum()), 12), bool((out[m == 0] == 0).all())
    (0.1, True)
    """
    d = check_number(drift, "drift", low=0.0)
    total = float(np.abs(matrix).sum())
    if d == 0.0 or total == 0.0:
        return matrix.copy()
    noisy = matrix * np.exp(2.0 * d * rng.standard_normal(matrix.shape))
    moved = float(np.abs(noisy - matrix).sum()) / total
    lam = 1.0 if moved <= d else d / moved
    out: NDArray[np.float64] = matrix + lam * (noisy - matrix)
    return out
