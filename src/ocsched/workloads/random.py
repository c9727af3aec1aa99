"""Random tiny instances for the exact solver, the gap experiment and tests."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_int, check_number
from ocsched.errors import InvalidInputError

__all__ = ["random_instance"]


def random_instance(
    n: int, *, density: float = 0.5, rng: np.random.Generator | int | None = None
) -> NDArray[np.float64]:
    """Return a random sparse n x n demand: each off-diagonal entry nonzero with probability ``density``.

    Nonzeros are uniform on (0, 1]; the matrix is normalised so its largest line sum is 1. At
    least one entry is nonzero.

    Examples
    --------
    >>> d = random_instance(4, rng=0)
    >>> d.shape, bool(d.diagonal().any()), round(float(max(d.sum(0).max(), d.sum(1).max())), 9)
    ((4, 4), False, 1.0)
    """
    n = check_int(n, "n", minimum=2)
    if check_number(density, "density", high=1.0) == 0:
        raise InvalidInputError(f"`density` must be in (0, 1]; got {density!r}")
    gen = np.random.default_rng(rng)
    mask = gen.random((n, n)) < density
    np.fill_diagonal(mask, False)
    if not mask.any():
        i = int(gen.integers(n))
        mask[i, (i + 1 + int(gen.integers(n - 1))) % n] = True
    d = np.where(mask, 1.0 - gen.random((n, n)), 0.0)
    top = max(float(d.sum(axis=0).max()), float(d.sum(axis=1).max()))
    return d / top
