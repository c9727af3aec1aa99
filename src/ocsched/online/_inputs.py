"""The arguments a plan and its fit take: the demand as a dense matrix, the error limit.

:func:`_dense` turns a predicted or actual demand into a dense float64 matrix with a zero
diagonal, with a fast path that takes a clean ndarray as it is (:func:`_clean` says which), and
:func:`_check_limit` checks ``max_error``; malformed input raises ``InvalidInputError``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ocsched._checks import check_number
from ocsched._types import FloatArray
from ocsched.errors import InvalidInputError
from ocsched.model import Demand, as_demand

if TYPE_CHECKING:  # scipy.sparse is loaded only when a sparse demand is given
    import scipy.sparse as sp

    DemandLike = ArrayLike | sp.sparray | sp.spmatrix | Demand


def _check_limit(max_error: object) -> float:
    """``max_error`` >= 0; ``math.inf`` (never fall back) allowed."""
    if isinstance(max_error, float) and max_error == math.inf:
        return math.inf
    return check_number(max_error, "max_error", low=0.0)


def _clean(a: NDArray[np.float64], n: int | None) -> bool:
    """A square float64 ndarray (n x n if given), finite and non-negative: no conversion needed."""
    if (
        a.dtype != np.float64
        or a.ndim != 2
        or a.shape[0] != a.shape[1]
        or (n is not None and a.shape[0] != n)
    ):
        return False
    return a.size == 0 or (math.isfinite(float(a.sum())) and float(a.min()) >= 0.0)


def _dense(demand: DemandLike, n: int | None, name: str) -> FloatArray:
    """The demand as a dense float64 matrix with a zero diagonal; the fast path for a clean ndarray."""
    if isinstance(demand, np.ndarray) and _clean(demand, n):
        if not demand.diagonal().any():
            return demand  # fit() only reads it
        out = demand.copy()
        np.fill_diagonal(out, 0.0)
        return out
    dem = as_demand(demand, name=name)
    if n is not None and dem.n != n:
        raise InvalidInputError(
            f"`{name}` must be {n} x {n} like the plan's prediction; got {dem.n} x {dem.n}"
        )
    return dem.to_dense()
