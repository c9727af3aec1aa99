"""Mixture-of-experts (expert-parallel) all-to-all traffic, with skew calibrated by a Gini target.

:func:`moe` samples token routing for a model shape; :func:`moe8` is the fixed 8-GPU instance of
the Spectra paper (and its block-diagonal copies MoE64 and MoE128). :func:`gini`,
:func:`zipf_gini`, :func:`dirichlet_expected_gini` and :func:`calibrate` relate the popularity
parameters to the routing skew.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ocsched._checks import check_bool, check_choice, check_int, check_number
from ocsched.errors import InvalidInputError
from ocsched.workloads._common import block_diagonal
from ocsched.workloads.drift import drift_step
from ocsched.workloads.options import Option

__all__ = [
    "MAX_GPUS",
    "MAX_GPU_EXPERTS",
    "MAX_SIZE",
    "MOE8",
    "POPULARITIES",
    "PRESETS",
    "calibrate",
    "dirichlet_expected_gini",
    "gini",
    "moe",
    "moe8",
    "zipf_gini",
]

#: Public MoE layer shapes: routed experts, experts per token, hidden size (from the models'
#: published configurations).
#: Most GPUs (ports) a generated MoE matrix may have: it is dense, G x G.
MAX_GPUS: Final = 4096
#: Most GPU x expert popularities drawn (one probability per GPU and expert).
MAX_GPU_EXPERTS: Final = 2**24
#: Largest size option (experts, top_k, hidden, tokens, bytes per element).
MAX_SIZE: Final = 10**9

PRESETS: Final[dict[str, dict[str, int]]] = {
    "mixtral-8x7b": {"experts": 8, "top_k": 2, "hidden": 4096},
    "qwen1.5-moe-a2.7b": {"experts": 60, "top_k": 4, "hidden": 2048},
    "olmoe-1b-7b": {"experts": 64, "top_k": 8, "hidden": 2048},
    "qwen3-30b-a3b": {"experts": 128, "top_k": 8, "hidden": 2048},
}

POPULARITIES: Final = ("uniform", "zipf", "dirichlet")

#: The paper's MoE8 matrix (time units; row i = GPU i's dispatch to the others).
MOE8: Final[tuple[tuple[float, ...], ...]] = (
    (0, 4.14, 3.21, 3.27, 3.21, 3.25, 3.25, 3.21),
    (3.20, 0, 4.10, 3.19, 3.17, 3.17, 3.20, 3.17),
    (3.21, 3.16, 0, 4.16, 3.15, 3.17, 3.20, 3.16),
    (3.27, 3.19, 3.22, 0, 4.16, 3.22, 3.25, 3.19),
    (3.21, 3.17, 3.15, 3.23, 0, 4.13, 3.22, 3.17),
    (3.25, 3.17, 3.17, 3.22, 3.19, 0, 4.17, 3.18),
    (3.25, 3.20, 3.20, 3.25, 3.22, 3.23, 0, 4.14),
    (4.15, 3.17, 3.16, 3.19, 3.17, 3.18, 3.20, 0),
)


def gini(x: ArrayLike) -> float:
    """Return the Gini coefficient of the non-negative vector ``x``.

    ``G = sum_i sum_j |x_i - x_j| / (2 n^2 mean(x))``: 0 when all entries are equal, at most
    ``(n - 1) / n`` when one entry holds everything. 0 for an all-zero vector.

    >>> gini([1, 1, 1, 1]), gini([0, 0, 0, 4])
    (0.0, 0.75)
    """
    v = np.sort(np.asarray(x, dtype=np.float64).ravel())
    n, total = v.size, float(v.sum())
    if n == 0 or total <= 0:
        return 0.0
    # Sorted form of the mean-difference definition: sum_i (2 i - n - 1) v_(i) / (n * total).
    ranks = np.arange(1, n + 1)
    return float(((2 * ranks - n - 1) * v).sum() / (n * total))


def zipf_gini(a: float, experts: int) -> float:
    """Return the Gini of the Zipf popularity ``p_r ∝ r^(-a)``, r = 1..experts (exact).

    >>> zipf_gini(0.0, 8)
    0.0
    """
    p = np.arange(1, experts + 1, dtype=np.float64) ** (-float(a))
    return gini(p)


def dirichlet_expected_gini(alpha: float, experts: int) -> float:
    """Return the expected Gini of a symmetric Dirichlet(alpha) popularity over ``experts``.

    Notes
    -----
    For ``p ~ Dir(alpha, ..., alpha)`` and i != j, ``p_i + p_j ~ Beta(2 alpha, (E - 2) alpha)``
    with mean 2/E, independent of ``B = p_i / (p_i + p_j) ~ Beta(alpha, alpha)``, whose mean
    absolute deviation is ``E|B - 1/2| = 1 / (alpha B(alpha, alpha) 4^alpha)``. Hence
    ``E|p_i - p_j| = 4 / (E alpha B(alpha, alpha) 4^alpha)`` and, summing the E(E - 1) ordered
    pairs in the Gini formula (mean 1/E),
    ``E[G] = 2 (E - 1) / (E alpha B(alpha, alpha) 4^alpha)``. It decreases from
    ``(E - 1)/E`` (alpha -> 0) to 0 (alpha -> infinity, like ``1/sqrt(pi alpha)``).

    >>> round(dirichlet_expected_gini(1.0, 2), 6)  # Beta(1, 1): E|2U - 1| / 2 = 1/4
    0.25
    """
    al = float(alpha)
    log_beta = 2.0 * math.lgamma(al) - math.lgamma(2.0 * al)
    return 2.0 * (experts - 1) / experts * math.exp(-(math.log(al) + log_beta + al * math.log(4.0)))


def calibrate(target: float, *, experts: int, popularity: str) -> float:
    """Return the Zipf exponent or Dirichlet concentration whose (expected) Gini is ``target``.

    Parameters
    ----------
    target : float
        Gini of the expert popularity, in ``[0, (E - 1)/E)`` for Zipf and ``(0, (E - 1)/E)`` for
        Dirichlet.
    experts : int
        Number of experts E (>= 2).
    popularity : {"zipf", "dirichlet"}
        Which family.

    Returns
    -------
    float
        For Zipf, the exponent a with ``zipf_gini(a, E) = target`` (Zipf's Gini is deterministic);
        for Dirichlet, the alpha with ``dirichlet_expected_gini(alpha, E) = target``.

    Raises
    ------
    InvalidInputError
        If ``target`` is out of range, ``experts < 2`` or ``popularity`` is not zipf/dirichlet.

    Notes
    -----
    Both Ginis are monotone in their parameter (Zipf's increases with a; Dirichlet's expected
    Gini decreases with alpha), so bisection (on a, and on log alpha) converges to the unique
    root; 200 halvings reach floating-point resolution.

    Examples
    --------
    >>> a = calibrate(0.3, experts=64, popularity="zipf")
    >>> round(zipf_gini(a, 64), 9)
    0.3
    """
    fam = check_choice(popularity, "popularity", ("zipf", "dirichlet"))
    e = check_int(experts, "experts", minimum=2)
    top = (e - 1) / e
    g = check_number(target, "gini", low=-np.inf)
    if not 0 <= g < top or (fam == "dirichlet" and g == 0):
        lo_br = "[" if fam == "zipf" else "("
        raise InvalidInputError(
            f"`gini` must be in {lo_br}0, {top:g}) for {fam} popularity over {e} experts; got {target!r}"
        )
    if fam == "zipf":
        if g == 0:
            return 0.0
        lo, hi = 0.0, 1.0
        while zipf_gini(hi, e) < g:
            lo, hi = hi, 2 * hi
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if zipf_gini(mid, e) < g:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)
    # Dirichlet: bisection on log alpha; E[G] is decreasing in alpha.
    lo, hi = -50.0, 50.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if dirichlet_expected_gini(math.exp(mid), e) > g:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


def moe_shape(
    preset: str, gpus: int, experts: int | None, top_k: int | None, hidden: int | None
) -> tuple[int, int, int, int]:
    """Checked ``(gpus, experts, top_k, hidden)``: the preset's shape with the given overrides.

    >>> moe_shape("olmoe-1b-7b", 8, None, None, None)
    (8, 64, 8, 2048)
    >>> moe_shape("olmoe-1b-7b", 256, None, None, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ocsched.errors.InvalidInputError: `gpus` must be at most `experts` = 64 (...give experts >= 256...
    """
    check_choice(preset, "preset", PRESETS)
    shape = dict(PRESETS[preset])
    for key, value in (("experts", experts), ("top_k", top_k), ("hidden", hidden)):
        if value is not None:
            shape[key] = check_int(value, key, maximum=MAX_SIZE)
    n_exp, k, h = shape["experts"], shape["top_k"], shape["hidden"]
    g = check_int(gpus, "gpus", maximum=MAX_GPUS)
    if g * n_exp > MAX_GPU_EXPERTS:
        raise InvalidInputError(
            f"`gpus` * `experts` must be at most {MAX_GPU_EXPERTS} (a popularity per GPU and expert); "
            f"got {g} * {n_exp}"
        )
    if g > n_exp:
        where = "" if experts is not None else f" (preset {preset!r}; give experts >= {g} for more GPUs)"
        raise InvalidInputError(f"`gpus` must be at most `experts` = {n_exp}{where}; got {g}")
    if k > n_exp:
        raise InvalidInputError(f"`top_k` must be at most `experts` = {n_exp}; got {k}")
    return g, n_exp, k, h


def moe(
    *,
    preset: str = "olmoe-1b-7b",
    gpus: int = 8,
    experts: int | None = None,
    top_k: int | None = None,
    hidden: int | None = None,
    tokens: int = 4096,
    bytes_per_element: int = 2,
    popularity: str = "zipf",
    gini: float = 0.25,
    zipf_a: float | None = None,
    dirichlet_alpha: float | None = None,
    shared_popularity: bool = False,
    combine: bool = False,
    drift: float = 0.0,
    step: int = 0,
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Return the bytes each GPU sends to each other GPU in one MoE layer's all-to-all.

    ``G = gpus`` GPUs host ``E = experts`` experts in contiguous balanced blocks: expert e lives
    on GPU ``owner(e) = floor(e * G / E)`` (E/G per GPU when G divides E). Each GPU holds
    ``T = tokens`` tokens, each routed to ``k = top_k`` experts. Source GPU i routes with expert
    popularity ``p_i`` (a probability vector over experts):

    - ``uniform``: ``p_i = 1/E``;
    - ``zipf``: ``p_i[pi_i(r)] ∝ r^(-a)``, ranks r = 1..E, with a uniformly random ranking
      ``pi_i`` of the experts per source;
    - ``dirichlet``: ``p_i ~ Dir(alpha, ..., alpha)``, drawn per source.

    With ``shared_popularity`` one vector is drawn and used by every source (globally hot
    experts) instead. The exponent a (``zipf_a``) and concentration alpha (``dirichlet_alpha``)
    are taken as given or, by default, calibrated by :func:`calibrate` so that the (expected)
    Gini of the popularity vector is ``gini``; published measurements of real MoE models report
    Ginis of roughly 0.1 to 0.4. The ``T * k`` routing slots of source i are then sampled
    ``c_i ~ Multinomial(T k, p_i)`` (the usual multinomial approximation of top-k routing: a
    token may draw an expert twice, which matters only when ``k * max(p)`` is large), and the
    dispatch volume is

        ``D[i, j] = h * e * sum_{e' : owner(e') = j} c_i[e']``  for i != j,

    with ``h = hidden`` and ``e = bytes_per_element``. Tokens a GPU routes to its own experts
    stay local: ``D[i, i] = 0``. With ``combine`` the expert outputs return to their sources,
    adding the transpose: ``D + D^T``.

    Parameters
    ----------
    preset : str
        Model shape, a key of :data:`PRESETS`; ``experts``, ``top_k``, ``hidden`` override it.
    gpus : int
        Number of GPUs G (<= experts).
    experts : int, optional
        Routed experts E.
    top_k : int, optional
        Experts per token k (<= E).
    hidden : int, optional
        Hidden size h (elements per token).
    tokens : int
        Tokens per GPU T in the layer's batch.
    bytes_per_element : int
        Bytes per activation element (2 for bf16).
    popularity : {"uniform", "zipf", "dirichlet"}
        Expert popularity family.
    gini : float
        Target Gini of each popularity vector (ignored for uniform, or when the family's
        parameter is given).
    zipf_a : float, optional
        Zipf exponent a >= 0 (popularity "zipf" only); overrides ``gini``.
    dirichlet_alpha : float, optional
        Dirichlet concentration alpha > 0 (popularity "dirichlet" only); overrides ``gini``.
    shared_popularity : bool
        One popularity vector for all sources instead of one per source.
    combine : bool
        Add the combine (return) traffic, the transpose of the dispatch.
    drift : float
        Relative L1 drift per step (:func:`ocsched.workloads.drift.drift_step`): with the same
        seed, ``step=t`` is step 0's matrix drifted t times, each step exactly ``drift`` (in
        L1, relative to the step before) from the one before. 0 (the default) or ``step=0``:
        the matrix is exactly the one without these options.
    step : int
        The step (iteration or layer) of the drifting sequence, >= 0.
    rng : Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray of float64, shape (G, G)
        ``D[i, j]`` = bytes GPU i sends to GPU j; zero diagonal.

    Raises
    ------
    InvalidInputError
        If an option is out of range, ``preset`` or ``popularity`` is unknown, or a family
        parameter is given for another family.

    Examples
    --------
    >>> d = moe(gpus=8, rng=0)
    >>> d.shape, float(np.trace(d)), int((d > 0).sum(axis=1).max())
    ((8, 8), 0.0, 7)
    >>> later = moe(gpus=8, rng=0, drift=0.1, step=1)
    >>> round(float(np.abs(later - d).sum() / d.sum()), 9)
    0.1
    >>> d2 = moe(gpus=8, popularity="uniform", rng=0)
    >>> bool(abs(d2.sum() / (2048 * 2) / (8 * 4096 * 8) - 7 / 8) < 0.01)  # 7/8 of slots leave
    True
    """
    g, n_exp, k, h = moe_shape(preset, gpus, experts, top_k, hidden)
    t = check_int(tokens, "tokens", maximum=MAX_SIZE)
    e = check_int(bytes_per_element, "bytes_per_element", maximum=MAX_SIZE)
    fam = check_choice(popularity, "popularity", POPULARITIES)
    for flag, fname in ((shared_popularity, "shared_popularity"), (combine, "combine")):
        check_bool(flag, fname)
    if zipf_a is not None and fam != "zipf":
        raise InvalidInputError(f"`zipf_a` applies to popularity 'zipf' only; popularity is {fam!r}")
    if dirichlet_alpha is not None and fam != "dirichlet":
        raise InvalidInputError(
            f"`dirichlet_alpha` applies to popularity 'dirichlet' only; popularity is {fam!r}"
        )
    param = 0.0
    if fam == "zipf":
        if zipf_a is not None:
            param = check_number(zipf_a, "zipf_a", low=0.0)
        elif n_exp > 1:
            param = calibrate(gini, experts=n_exp, popularity="zipf")
    elif fam == "dirichlet":
        if dirichlet_alpha is not None:
            param = check_number(dirichlet_alpha, "dirichlet_alpha", low=0.0, closed=False)
        elif n_exp > 1:
            param = calibrate(gini, experts=n_exp, popularity="dirichlet")
        else:
            param = 1.0
    gen = np.random.default_rng(rng)
    draws = 1 if shared_popularity else g
    if fam == "uniform":
        pop = np.full((draws, n_exp), 1.0 / n_exp)
    elif fam == "zipf":
        base = np.arange(1, n_exp + 1, dtype=np.float64) ** (-param)
        base /= base.sum()
        # Row i: expert perm[r] gets rank r + 1.
        pop = np.zeros((draws, n_exp))
        for row in range(draws):
            pop[row, gen.permutation(n_exp)] = base
    else:
        pop = gen.dirichlet(np.full(n_exp, param), size=draws)
    if not np.isfinite(pop).all():
        raise InvalidInputError(f"`dirichlet_alpha` = {param:g} is too small to sample; use a larger value")
    if shared_popularity:
        pop = np.repeat(pop, g, axis=0)
    counts = gen.multinomial(t * k, pop).astype(np.float64)
    owner = (np.arange(n_exp) * g) // n_exp
    per_gpu: NDArray[np.float64] = counts @ (owner[:, None] == np.arange(g)).astype(np.float64)  # (G,E)@(E,G)
    np.fill_diagonal(per_gpu, 0.0)
    out = per_gpu * float(h * e)
    if combine:
        out = out + out.T
    steps = check_int(step, "step", minimum=0, maximum=MAX_SIZE)
    if check_number(drift, "drift", low=0.0) > 0.0:
        for _ in range(steps):  # drawn after the routing: step 0 is the matrix without drift
            out = drift_step(out, drift, gen)
    return out


def moe8(*, copies: int = 1) -> NDArray[np.float64]:
    """Return ``copies`` copies of the paper's MoE8 matrix (:data:`MOE8`) on the block diagonal.

    The paper's MoE64 and MoE128 are ``copies=8`` and ``copies=16``. Entries are the paper's
    numbers, in time units (7 nonzeros per line, zero diagonal); divide by the largest line sum
    (``normalized=True``, CLI ``--normalize``) for the paper's convention. Deterministic.

    Parameters
    ----------
    copies : int
        Number of blocks (>= 1).

    Returns
    -------
    ndarray of float64, shape (8 * copies, 8 * copies)

    Raises
    ------
    InvalidInputError
        If ``copies`` is not an integer >= 1.

    Examples
    --------
    >>> d = moe8(copies=8)
    >>> d.shape, int((d > 0).sum(axis=1).max()), float(d[0, 1])
    ((64, 64), 7, 4.14)
    """
    return block_diagonal(
        np.array(MOE8, dtype=np.float64), check_int(copies, "copies", maximum=MAX_GPUS // 8)
    )


#: The options of :func:`moe`.
MOE_OPTIONS: Final = (
    Option(
        "preset",
        str,
        "olmoe-1b-7b",
        "Model shape; experts, top_k, hidden override it.",
        choices=tuple(PRESETS),
    ),
    Option("gpus", int, 8, "Number of GPUs G (<= experts)."),
    Option("experts", int, None, "Routed experts E (unset: the preset's)."),
    Option("top_k", int, None, "Experts per token k (<= E; unset: the preset's)."),
    Option("hidden", int, None, "Hidden size h, elements per token (unset: the preset's)."),
    Option("tokens", int, 4096, "Tokens per GPU T in the layer's batch."),
    Option("bytes_per_element", int, 2, "Bytes per activation element (2 for bf16).", unit="bytes"),
    Option("popularity", str, "zipf", "Expert popularity family.", choices=POPULARITIES),
    Option(
        "gini",
        float,
        0.25,
        "Target Gini of each popularity vector (not for uniform, nor with zipf_a / dirichlet_alpha).",
    ),
    Option("zipf_a", float, None, "Zipf exponent a >= 0 (popularity zipf only); overrides gini."),
    Option(
        "dirichlet_alpha",
        float,
        None,
        "Dirichlet concentration alpha > 0 (popularity dirichlet only); overrides gini.",
    ),
    Option(
        "shared_popularity", bool, False, "One popularity vector for all sources instead of one per source."
    ),
    Option("combine", bool, False, "Add the combine (return) traffic, the transpose of the dispatch."),
    Option(
        "drift",
        float,
        0.0,
        "Relative L1 drift per step: step t is step 0's matrix drifted t times, each by exactly this much.",
    ),
    Option("step", int, 0, "The step (iteration or layer) of the drifting sequence, >= 0."),
)
#: The options of :func:`moe8`.
MOE8_OPTIONS: Final = (Option("copies", int, 1, "Number of blocks on the diagonal (>= 1)."),)
