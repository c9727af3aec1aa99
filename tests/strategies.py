"""Hypothesis strategies: demand matrices of every shape the schedulers must handle."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray

KINDS = ("dense", "sparse", "skewed", "perm_sum", "single", "zero", "one_by_one", "ties", "wide_range")


def make_demand(kind: str, n: int, seed: int) -> NDArray[np.float64]:
    """Build one demand matrix of the given kind (diagonal zero, max entry about 1)."""
    rng = np.random.default_rng(seed)
    if kind == "one_by_one":
        return np.zeros((1, 1))
    d = np.zeros((n, n))
    if kind == "dense":
        d = rng.random((n, n))
    elif kind == "sparse":
        d = rng.random((n, n)) * (rng.random((n, n)) < 0.3)
    elif kind == "skewed":
        # a few large flows and many small ones, like the standard benchmark
        d = rng.random((n, n)) * 0.02 * (rng.random((n, n)) < 0.6)
        for _ in range(max(1, n // 3)):
            d[rng.integers(n), rng.integers(n)] += rng.uniform(0.5, 1.0)
    elif kind == "perm_sum":
        for _ in range(int(rng.integers(1, n + 1))):
            d[np.arange(n), rng.permutation(n)] += rng.uniform(0.1, 1.0)
    elif kind == "single":
        d[rng.integers(n), rng.integers(n)] = rng.uniform(0.1, 10.0)
    elif kind == "ties":
        d = (rng.random((n, n)) < 0.5).astype(np.float64)
    elif kind == "wide_range":
        d = 10.0 ** rng.uniform(-6, 2, size=(n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(d, 0.0)
    if kind == "single" and not d.any() and n > 1:
        d[0, 1] = 1.0
    return d


@st.composite
def demands(draw: st.DrawFn, max_n: int = 7, kinds: tuple[str, ...] = KINDS) -> NDArray[np.float64]:
    """A demand matrix of a drawn kind and size."""
    kind = draw(st.sampled_from(kinds))
    n = draw(st.integers(2, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    return make_demand(kind, n, seed)


def deltas_for(demand: NDArray[np.float64]) -> st.SearchStrategy[float]:
    """Delay 0, small, or large relative to the demand's largest entry."""
    top = float(demand.max(initial=0.0)) or 1.0
    return st.sampled_from([0.0, 1e-3 * top, 0.05 * top, 3.0 * top])


switches = st.integers(1, 8)
