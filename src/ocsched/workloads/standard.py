"""The skewed benchmark of Solstice and Eclipse: a few large and many small flows per port."""

from __future__ import annotations

from typing import Final

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_bool, check_int, check_number
from ocsched.errors import InvalidInputError
from ocsched.workloads.options import Option

__all__ = ["MAX_N", "MAX_SIGMA", "standard"]

#: Most ports: the matrix is dense and each disjoint flow solves an n x n assignment problem.
MAX_N = 4096  # the largest standard instance of the performance benchmark
#: Largest noise level (far beyond useful; larger values overflow to NaN).
MAX_SIGMA = 1e6


def standard(
    *,
    n: int = 100,
    flows: int = 16,
    small_fraction: float = 0.75,
    large_share: float = 0.7,
    sigma: float = 0.003,
    disjoint: bool = True,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Return the standard skewed benchmark matrix, normalised so the largest line sum is 1.

    Each port has ``L = flows - round(flows * small_fraction)`` large flows sharing ``large_share``
    of its line rate and ``S = round(flows * small_fraction)`` small flows sharing the rest:

        D = sum_{t<L} (cL / L) P_t + sum_{t<S} ((1 - cL) / S) Q_t

    with random permutations P_t, Q_t. With ``disjoint=True`` (the default) the permutations avoid
    each other and the diagonal, so every line has exactly ``flows`` nonzeros; each is a random
    perfect matching of the pairs still free (a min-cost assignment on random costs: it always
    exists, since the free pairs form a regular bipartite graph). With ``disjoint=False`` they are
    independent uniform permutations: collisions add (a line may hold fewer nonzeros) and fixed
    points i -> i, which would be local traffic, are removed.

    Gaussian noise of standard deviation ``sigma`` is added to the nonzeros (scaled down where it
    would push an entry below half its value, so the support is kept), the matrix is re-centred
    by alternately subtracting row and column mean deviations over the nonzeros (50 rounds) so
    line sums stay about 1, and finally divided by its largest line sum. Entries are in units of
    time at one link's line rate.

    Parameters
    ----------
    n : int
        Number of ports.
    flows : int
        Flows per port (large + small); at most ``n - 1`` when ``disjoint``.
    small_fraction : float
        Fraction of the flows that are small (0.75 gives 4 large + 12 small of 16).
    large_share : float
        Share cL of a port's traffic carried by its large flows.
    sigma : float
        Standard deviation of the noise.
    disjoint : bool
        Draw permutations that never collide nor touch the diagonal (see above).
    rng : Generator, int or None
        Source of randomness.

    Notes
    -----
    The disjoint form reproduces the published Spectra numbers on this benchmark (n=100, s=16:
    makespan 0.086, 0.104, 0.139, 0.209 for delta 0.01 ... 0.08); the colliding form is a harder
    instance (about 0.107 ... 0.223), because lines with fewer than Delta flows let the
    decomposition mix large and small flows in one permutation.

    Examples
    --------
    >>> d = standard(n=20, rng=0)
    >>> d.shape, sorted(set((d > 0).sum(axis=1).tolist())), float(d.trace())
    ((20, 20), [16], 0.0)
    """
    from scipy.optimize import linear_sum_assignment

    n = check_int(n, "n", maximum=MAX_N)
    flows = check_int(flows, "flows", maximum=MAX_N)
    disjoint = check_bool(disjoint, "disjoint")
    if disjoint and flows > n - 1:
        raise InvalidInputError(f"`flows` must be at most n - 1 = {n - 1} when `disjoint`; got {flows}")
    small_fraction = check_number(small_fraction, "small_fraction", high=1.0)
    large_share = check_number(large_share, "large_share", high=1.0)
    sigma = check_number(sigma, "sigma", high=MAX_SIGMA)
    gen = np.random.default_rng(rng)
    n_small = round(flows * small_fraction)
    n_large = flows - n_small
    if n_large == 0:
        large_share = 0.0
    if n_small == 0:
        large_share = 1.0
    d = np.zeros((n, n))
    rows = np.arange(n)
    taken = np.eye(n, dtype=bool)
    for count, share in ((n_large, large_share), (n_small, 1.0 - large_share)):
        for _ in range(count):
            if disjoint:
                cols = linear_sum_assignment(gen.random((n, n)) + n * taken)[1]
                taken[rows, cols] = True
            else:
                cols = gen.permutation(n)
            d[rows, cols] += share / count
    np.fill_diagonal(d, 0.0)
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
    top = max(d.sum(axis=1).max(), d.sum(axis=0).max())
    return d / top if top > 0 else d


#: The options of :func:`standard`.
STANDARD_OPTIONS: Final = (
    Option("n", int, 100, "Number of ports."),
    Option("flows", int, 16, "Flows per port (large + small); at most n - 1 when disjoint."),
    Option(
        "small_fraction",
        float,
        0.75,
        "Fraction of the flows that are small (0.75 gives 4 large + 12 small of 16).",
    ),
    Option("large_share", float, 0.7, "Share cL of a port's traffic carried by its large flows."),
    Option("sigma", float, 0.003, "Standard deviation of the noise."),
    Option("disjoint", bool, True, "Draw permutations that never collide nor touch the diagonal."),
)
