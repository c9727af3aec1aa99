"""The skewed benchmark of Solstice and Eclipse: a few large and many small flows per port."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.workloads import register

__all__ = ["standard"]


@register("standard", unit="time", description="Solstice/Eclipse skewed benchmark: few large, many small flows per port")
def standard(
    *,
    n: int = 100,
    flows: int = 16,
    small_fraction: float = 0.75,
    large_share: float = 0.7,
    sigma: float = 0.003,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Return the standard skewed benchmark matrix, normalised so the largest line sum is 1.

    Each port has ``L = flows - round(flows * small_fraction)`` large flows sharing ``large_share``
    of its line rate and ``S = round(flows * small_fraction)`` small flows sharing the rest:

        D = sum_{t<L} (cL / L) P_t + sum_{t<S} ((1 - cL) / S) Q_t

    with independent uniform random permutations P_t, Q_t (collisions add, so a line may hold
    fewer than ``flows`` nonzeros; a fixed point i -> i is local traffic and is kept on the
    diagonal, where the scheduler drops it). Gaussian noise of standard deviation ``sigma`` is
    added to the nonzeros (scaled down where it would push an entry below half its value), the
    matrix is re-centred by alternately subtracting row and column mean deviations over the
    nonzeros (50 rounds) so line sums stay about 1, and finally divided by its largest line sum.
    Entries are in units of time at one link's line rate (the whole matrix fits in about 1).

    Parameters
    ----------
    n : int
        Number of ports.
    flows : int
        Flows per port (large + small).
    small_fraction : float
        Fraction of the flows that are small (0.75 gives 4 large + 12 small of 16).
    large_share : float
        Share cL of a port's traffic carried by its large flows.
    sigma : float
        Standard deviation of the noise.
    rng : Generator, int or None
        Source of randomness.

    Examples
    --------
    >>> d = standard(n=20, rng=0)
    >>> d.shape, int((d > 0).sum(axis=1).max()) <= 16
    ((20, 20), True)
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise InvalidInputError(f"`n` must be an integer >= 1; got {n!r}")
    if isinstance(flows, bool) or not isinstance(flows, int | np.integer) or flows < 1:
        raise InvalidInputError(f"`flows` must be an integer >= 1; got {flows!r}")
    if not 0 <= small_fraction <= 1:
        raise InvalidInputError(f"`small_fraction` must be in [0, 1]; got {small_fraction!r}")
    if not 0 <= large_share <= 1:
        raise InvalidInputError(f"`large_share` must be in [0, 1]; got {large_share!r}")
    if not (np.isfinite(sigma) and sigma >= 0):
        raise InvalidInputError(f"`sigma` must be a finite number >= 0; got {sigma!r}")
    gen = np.random.default_rng(rng)
    n_small = int(round(flows * small_fraction))
    n_large = flows - n_small
    if n_large == 0:
        large_share = 0.0
    if n_small == 0:
        large_share = 1.0
    d = np.zeros((n, n))
    rows = np.arange(n)
    for count, share in ((n_large, large_share), (n_small, 1.0 - large_share)):
        for _ in range(count):
            d[rows, gen.permutation(n)] += share / count
    support = d > 0
    noise = gen.normal(0.0, sigma, size=(n, n)) * support
    # Scale noise down where it would take an entry below half its value: keeps the support.
    too_low = d + noise < 0.5 * d
    noise[too_low] = -0.5 * d[too_low]
    d = d + noise
    rnnz = np.maximum(support.sum(axis=1), 1)
    cnnz = np.maximum(support.sum(axis=0), 1)
    for _ in range(50):
        d -= support * ((d.sum(axis=1) - 1.0) / rnnz)[:, None]
        d -= support * ((d.sum(axis=0) - 1.0) / cnnz)[None, :]
        np.maximum(d, 0.0, out=d)
    return d / max(d.sum(axis=1).max(), d.sum(axis=0).max())
