"""Hypothesis strategies: demand matrices of every shape the schedulers must handle."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown

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
    """A demand matrix of a drawn kind and size; entries are drawn (not seeded), so failures shrink.

    Shapes mirror :func:`make_demand`: every kind keeps a zero diagonal and entries of order 1.
    """
    kind = draw(st.sampled_from(kinds))
    if kind == "one_by_one":
        return np.zeros((1, 1))
    n = draw(st.integers(2, max_n))
    shape = (n, n)
    unit = st.floats(0.001, 1.0, allow_nan=False, allow_infinity=False)
    if kind == "zero":
        d = np.zeros(shape)
    elif kind == "dense":
        d = draw(hnp.arrays(np.float64, shape, elements=unit))
    elif kind == "sparse":
        d = draw(hnp.arrays(np.float64, shape, elements=unit)) * draw(hnp.arrays(np.bool_, shape))
    elif kind == "skewed":
        # a few large flows and many small ones, like the standard benchmark
        d = 0.02 * draw(hnp.arrays(np.float64, shape, elements=unit)) * draw(hnp.arrays(np.bool_, shape))
        cells = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.floats(0.5, 1.0))
        for i, j, v in draw(st.lists(cells, min_size=1, max_size=max(1, n // 3))):
            d[i, j] += v
    elif kind == "perm_sum":
        d = np.zeros(shape)
        for p, w in draw(
            st.lists(st.tuples(st.permutations(range(n)), st.floats(0.1, 1.0)), min_size=1, max_size=n)
        ):
            d[np.arange(n), np.array(p)] += w
    elif kind == "single":
        i, j = draw(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda ij: ij[0] != ij[1]))
        d = np.zeros(shape)
        d[i, j] = draw(st.floats(0.1, 10.0))
    elif kind == "ties":
        d = draw(hnp.arrays(np.bool_, shape)).astype(np.float64)
    else:  # wide_range: entries spanning eight decades
        exponents = draw(hnp.arrays(np.float64, shape, elements=st.floats(-6.0, 2.0)))
        d = 10.0**exponents * draw(hnp.arrays(np.bool_, shape))
    np.fill_diagonal(d, 0.0)
    return d


def deltas_for(demand: NDArray[np.float64]) -> st.SearchStrategy[float]:
    """Delay 0, small, or large relative to the demand's largest entry."""
    top = float(demand.max(initial=0.0)) or 1.0
    return st.sampled_from([0.0, 1e-3 * top, 0.05 * top, 3.0 * top])


switches = st.integers(1, 8)


@st.composite
def line_entries(draw: st.DrawFn, max_k: int = 6) -> NDArray[np.float64]:
    """The positive entries of one line (1..max_k of them), equal ones likely (packing is hardest there)."""
    base = draw(st.floats(0.05, 1.0))
    k = draw(st.integers(1, max_k))
    scale = st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.1]) | st.floats(0.01, 3.0)
    return np.array([base * draw(scale) for _ in range(k)], dtype=np.float64)


@st.composite
def fabrics(
    draw: st.DrawFn,
    n: int,
    top: float,
    *,
    max_switches: int = 5,
    failures: bool = True,
    models: tuple[str, ...] = ("all-stop", "partial"),
    timed_links: bool = False,
) -> Fabric:
    """A fabric for an n-port demand whose largest entry is ``top``: mixed delays, rates in [0.25, 4],
    down windows and failed links (never every link of a port), either model. With ``timed_links``
    a link may also fail during the schedule (at 0.3, 1 or 2 times ``top``) instead of from 0."""
    s = draw(st.integers(1, max_switches))
    scale = top or 1.0
    deltas = [draw(st.sampled_from([0.0, 1e-3, 0.05, 0.5, 3.0])) * scale for _ in range(s)]
    rates = [draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0])) for _ in range(s)]
    down: list[SwitchDown] = []
    links: list[LinkDown] = []
    if failures and s > 1:
        for b in draw(st.lists(st.integers(0, s - 1), max_size=2, unique=True)):
            if b == 0:
                continue  # switch 0 stays up and fully linked, so every demand stays servable
            a = draw(st.sampled_from([0.0, 0.3, 1.0, 2.0])) * scale
            length = draw(st.sampled_from([0.1, 1.0, float("inf")]))
            down.append(SwitchDown(b, a, a + length * scale if np.isfinite(length) else float("inf")))
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.sampled_from([0.0, 0.3, 1.0, 2.0])) * scale if timed_links else 0.0
            links.append(LinkDown(draw(st.integers(0, n - 1)), draw(st.integers(1, s - 1)), at))
    model = draw(st.sampled_from(models))
    return Fabric(
        tuple(Switch(d, r) for d, r in zip(deltas, rates, strict=True)), tuple(down), tuple(links), model
    )


@st.composite
def hostile_fabrics(
    draw: st.DrawFn,
    n: int,
    top: float,
    *,
    max_switches: int = 4,
    models: tuple[str, ...] = ("all-stop", "partial"),
) -> Fabric:
    """A fabric for an n-port demand whose largest entry is ``top``, with the failures a bound must
    not double count: per-switch delays and rates, down windows on any switch that overlap, repeat,
    nest, touch or last for good, and links failing at 0, mid-schedule or long after it. Such a
    fabric may lose a port for good (the instance is then infeasible)."""
    s = draw(st.integers(1, max_switches))
    scale = top or 1.0
    deltas = [draw(st.sampled_from([0.0, 1e-3, 0.05, 0.5, 3.0])) * scale for _ in range(s)]
    rates = [draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0])) for _ in range(s)]
    down: list[SwitchDown] = []
    for _ in range(draw(st.integers(0, 4))):
        b = draw(st.integers(0, s - 1))
        a = draw(st.sampled_from([0.0, 0.2, 0.25, 0.3, 1.0, 2.0])) * scale
        length = draw(st.sampled_from([0.05, 0.1, 0.5, 1.0, float("inf")]))
        window = SwitchDown(b, a, a + length * scale if np.isfinite(length) else float("inf"))
        down.extend([window] * draw(st.integers(1, 3)))  # identical copies too
    links: list[LinkDown] = []
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0, 3.0, 1000.0])) * scale
        links.append(LinkDown(draw(st.integers(0, n - 1)), draw(st.integers(0, s - 1)), at))
    model = draw(st.sampled_from(models))
    return Fabric(
        tuple(Switch(d, r) for d, r in zip(deltas, rates, strict=True)), tuple(down), tuple(links), model
    )


@st.composite
def iterations(
    draw: st.DrawFn, max_phases: int = 4, max_n: int = 6
) -> tuple[list[NDArray[np.float64]], list[float]]:
    """Phases of one size n with gaps: some repeat the previous matrix, gaps are 0, small or large."""
    n = draw(st.integers(2, max_n))
    k = draw(st.integers(1, max_phases))
    mats: list[NDArray[np.float64]] = []
    for _ in range(k):
        if mats and draw(st.booleans()):
            mats.append(mats[-1].copy())  # a recurring phase (TP ring, pipeline send)
        else:
            kind = draw(st.sampled_from([kd for kd in KINDS if kd != "one_by_one"]))
            mats.append(make_demand(kind, n, draw(st.integers(0, 2**32 - 1))))
    gaps = [draw(st.sampled_from([0.0, 0.0, 0.01, 0.3, 2.0])) for _ in range(k)]
    return mats, gaps


@st.composite
def dense_demands(draw: st.DrawFn, min_n: int = 34, max_n: int = 44) -> NDArray[np.float64]:
    """A dense demand large enough for the Spectra rounds' candidate graph (more than 32 entries a
    line): every entry present, or a few holes (lines then turn critical in different rounds), with
    continuous entries or few distinct values (ties)."""
    n = draw(st.integers(min_n, max_n))
    shape = (n, n)
    if draw(st.booleans()):
        d = draw(hnp.arrays(np.float64, shape, elements=st.floats(0.001, 1.0)))
    else:
        d = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.25, 0.5, 1.0])))
    if draw(st.booleans()):
        holes = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
        for i, j in draw(st.lists(holes, max_size=3 * n)):
            d[i, j] = 0.0
    np.fill_diagonal(d, 0.0)
    return d


@st.composite
def failing_links(
    draw: st.DrawFn,
    n: int,
    horizon: float,
    *,
    max_switches: int = 4,
    when: tuple[str, ...] = ("0", "mid", "late"),
) -> Fabric:
    """A fabric (mixed delays and rates, either model) with links failing at 0, mid-way or late.

    ``horizon`` is about when a schedule ends: "mid" failures fall in ``(0, horizon)``, "late" ones
    after ``100 horizon``. A port may lose every link (schedulers must then refuse or cope).
    """
    s = draw(st.integers(1, max_switches))
    scale = horizon or 1.0
    deltas = [draw(st.sampled_from([0.0, 1e-3, 0.05, 0.3])) * scale for _ in range(s)]
    rates = [draw(st.sampled_from([0.5, 1.0, 2.0])) for _ in range(s)]
    links = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(when))
        start = (
            0.0 if kind == "0" else draw(st.floats(0.05, 0.95)) * scale if kind == "mid" else 100.0 * scale
        )
        links.append(LinkDown(draw(st.integers(0, n - 1)), draw(st.integers(0, s - 1)), start))
    model = draw(st.sampled_from(("all-stop", "partial")))
    return Fabric(tuple(Switch(d, r) for d, r in zip(deltas, rates, strict=True)), (), tuple(links), model)
