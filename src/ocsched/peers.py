"""Peer schedulers that Spectra is compared with, registered in :data:`ocsched.algorithms.ALGORITHMS`.

========================  ============================================================================
``baseline``              the paper's baseline: balanced split into s sub-matrices, Spectra per switch
``baseline-eclipse``      the same split, Eclipse per switch
``naive``                 every switch carries D/s with the same single-switch Spectra schedule
``eclipse``               Eclipse's greedy decomposition, placed by Spectra's steps 2-3
``solstice``              Solstice (QuickStuff + power-of-two slicing), placed by Spectra's steps 2-3
``bvn``                   Birkhoff-von Neumann with max-bottleneck matchings, placed by Spectra's steps 2-3
========================  ============================================================================

Every peer returns schedules in the same model as Spectra. Circuits outside the demand's support
(stuffing, idle pairs of a matching) serve nothing and are dropped (``perm = -1``); a matching
left with no circuit at all is dropped with its duration.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched.algorithms import RngLike, Switches, register
from ocsched.assign import place, timeline
from ocsched.decompose import Decomposition, spectra_decompose, top_up
from ocsched.errors import InvalidInputError
from ocsched.model import Configuration, Demand, check_delta
from ocsched.split import Order, balanced_split, split_flows

__all__ = [
    "bvn_decompose",
    "bvn_slices",
    "eclipse_decompose",
    "quick_stuff",
    "solstice_decompose",
    "solstice_slices",
    "split_schedule",
]

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Residue below this fraction of the largest entry counts as served (float round-off).
_TOL = 1e-12
#: Eclipse tries every distinct residual value as the duration when there are at most this many.
_ECLIPSE_ALL = 64
#: Otherwise: this many rank quantiles of the distinct values, plus the values nearest a
#: geometric grid of ratio 2^(1/4), plus this many values between the best one's neighbours.
_ECLIPSE_QUANTILES = 32
_ECLIPSE_REFINE = 16


# --------------------------------------------------------------------------- helpers


def _single_switch(dec: Decomposition, delta: float) -> tuple[Configuration, ...]:
    """All of a decomposition on one switch, largest weight first."""
    return timeline([[(l, float(w)) for l, w in enumerate(dec.weights)]], dec.perms, delta)[0]


def _finish(demand: Demand, perms: IntArray, weights: FloatArray) -> Decomposition:
    """Keep only demand circuits, drop empty matchings, and make coverage exact.

    Round-off can leave a flow a hair short; :func:`~ocsched.decompose.top_up` raises the
    weights by the (tiny) shortfall. A flow that lies on no matching at all (only possible when
    round-off stopped a loop early) gets matchings of its own from Spectra's decomposition.
    """
    n = demand.n
    support = np.zeros((n, n), dtype=bool)
    support[demand.rows, demand.cols] = True
    perms = np.array(perms, dtype=np.int64).reshape(-1, n)
    weights = np.asarray(weights, dtype=np.float64)
    if perms.size:
        i = np.broadcast_to(np.arange(n), perms.shape)
        perms = np.where((perms >= 0) & support[i, np.maximum(perms, 0)], perms, -1)
    keep = (perms >= 0).any(axis=1) & (weights > 0)
    perms, weights = perms[keep], weights[keep]
    if demand.nnz == 0:
        return Decomposition(perms, weights)
    on_some = (perms[:, demand.rows] == demand.cols[None, :]).any(axis=0)
    if not on_some.all():
        rest = spectra_decompose(
            Demand(n, demand.rows[~on_some], demand.cols[~on_some], demand.values[~on_some])
        )
        perms = np.concatenate([perms, rest.perms])
        weights = np.concatenate([weights, rest.weights])
    return Decomposition(perms, top_up(demand, perms, weights))


def _is_perfect(mask: NDArray[np.bool_]) -> IntArray | None:
    """A perfect matching inside ``mask`` (``perm[i] = j``), or None if there is none."""
    from scipy.sparse.csgraph import maximum_bipartite_matching

    match = maximum_bipartite_matching(sp.csr_array(mask), perm_type="column")
    return None if (match < 0).any() else np.asarray(match, dtype=np.int64)


def _dense(matrix: ArrayLike, name: str) -> FloatArray:
    try:
        m = np.array(matrix, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"`{name}` must be a square numeric matrix; {exc}") from None
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise InvalidInputError(f"`{name}` must be a non-empty square matrix; got shape {m.shape}")
    bad = ~np.isfinite(m) | (m < 0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InvalidInputError(f"`{name}` must be finite and non-negative; {name}[{i}, {j}] = {m[i, j]}")
    return m


# --------------------------------------------------------------------------- stuffing


def quick_stuff(matrix: ArrayLike) -> FloatArray:
    """Raise a non-negative matrix to equal line sums, Solstice's QuickStuff.

    Every row and column sum becomes T, the largest line sum of the input.

    Parameters
    ----------
    matrix : array_like, shape (n, n)
        Non-negative finite matrix.

    Returns
    -------
    ndarray of float64, shape (n, n)
        The stuffed matrix, entrywise >= the input. The diagonal may be used.

    Raises
    ------
    InvalidInputError
        If ``matrix`` is not square, empty, negative or not finite.

    Notes
    -----
    First each nonzero, in row-major order, is raised by ``min(row slack, column slack)``, so the
    support grows as little as possible. Then, while slack is left, the row and the column with
    the most slack get an entry of ``min`` of the two slacks. The slacks of rows and of columns
    have equal totals, so every step exhausts at least one line: at most 2n steps. Every step
    sets the exhausted slack exactly to 0, so line sums are equal to within round-off.

    References
    ----------
    Liu, Mukerjee, Li, Feltman, Papen, Savage, Seshan, Voelker, Andersen, Kaminsky, Porter,
    Snoeren. Scheduling techniques for hybrid circuit/packet networks. CoNEXT 2015.

    Examples
    --------
    >>> quick_stuff([[0, 2, 0], [0, 0, 1], [1, 0, 0]]).tolist()
    [[0.0, 2.0, 0.0], [0.0, 0.0, 2.0], [2.0, 0.0, 0.0]]
    >>> quick_stuff([[0, 1], [0, 0]]).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    d = _dense(matrix, "matrix")
    top = max(float(d.sum(axis=1).max()), float(d.sum(axis=0).max()))
    if top == 0:
        return d
    tol = _TOL * top
    rs = (top - d.sum(axis=1)).tolist()
    cs = (top - d.sum(axis=0)).tolist()

    def add(i: int, j: int) -> None:
        a = min(rs[i], cs[j])
        d[i, j] += a
        if rs[i] <= cs[j]:
            cs[j] -= a
            rs[i] = 0.0
        else:
            rs[i] -= a
            cs[j] = 0.0

    for i, j in zip(*np.nonzero(d), strict=True):
        if rs[i] > tol and cs[j] > tol:
            add(int(i), int(j))
    while True:
        i = max(range(len(rs)), key=rs.__getitem__)
        j = max(range(len(cs)), key=cs.__getitem__)
        if min(rs[i], cs[j]) <= tol:
            break
        add(i, j)
    return d


# --------------------------------------------------------------------------- Solstice, BvN


def solstice_slices(stuffed: ArrayLike) -> tuple[IntArray, FloatArray]:
    """Slice a matrix with equal line sums into perfect matchings, Solstice's way.

    Parameters
    ----------
    stuffed : array_like, shape (n, n)
        A non-negative matrix with equal line sums (see :func:`quick_stuff`).

    Returns
    -------
    perms : ndarray of int64, shape (m, n)
        Perfect matchings, every circuit on an entry of ``stuffed``.
    weights : ndarray of float64, shape (m,)
        Their durations; ``sum_l weights[l] * P_l`` equals ``stuffed`` within round-off.

    Notes
    -----
    r starts as the largest power of two not above the largest entry. While something is left:
    take a perfect matching (:func:`scipy.sparse.csgraph.maximum_bipartite_matching`) using only
    entries >= r, hold it for its smallest entry and subtract; if there is none, halve r. A
    residual with equal line sums always has a perfect matching on its support (Birkhoff), so r
    stops halving once it is below the smallest entry. The loop stops when what is left is below
    1e-12 of the largest entry (round-off), or r falls below that.

    Examples
    --------
    >>> perms, w = solstice_slices([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> perms.tolist(), w.tolist()
    ([[1, 2, 0], [2, 0, 1]], [3.0, 1.0])
    """
    res = _dense(stuffed, "stuffed")
    n = res.shape[0]
    big = float(res.max())
    perms: list[IntArray] = []
    weights: list[float] = []
    if big == 0:
        return np.zeros((0, n), np.int64), np.zeros(0)
    tol = _TOL * big
    r = 2.0 ** math.floor(math.log2(big))
    rows = np.arange(n)
    while res.max() > tol and r >= tol:
        match = _is_perfect(res >= r)
        if match is None:
            r /= 2
            continue
        w = float(res[rows, match].min())
        res[rows, match] -= w
        res[res <= tol] = 0.0
        perms.append(match)
        weights.append(w)
    return np.array(perms, dtype=np.int64).reshape(-1, n), np.array(weights)


def bvn_slices(stuffed: ArrayLike) -> tuple[IntArray, FloatArray]:
    """Birkhoff-von Neumann decomposition with maximum-bottleneck perfect matchings.

    Parameters
    ----------
    stuffed : array_like, shape (n, n)
        A non-negative matrix with equal line sums (see :func:`quick_stuff`).

    Returns
    -------
    perms : ndarray of int64, shape (m, n)
        Perfect matchings, every circuit on an entry of ``stuffed``.
    weights : ndarray of float64, shape (m,)
        Their weights (each the matching's smallest residual entry).

    Notes
    -----
    Each step finds the perfect matching whose smallest entry is largest: a binary search over
    the distinct residual values t for the largest one where the entries >= t still hold a
    perfect matching (:func:`scipy.sparse.csgraph.maximum_bipartite_matching`). The bottleneck
    never increases (the residual only shrinks), which bounds the search from above. Each step
    zeroes at least one entry: at most nnz steps, each O(log nnz) matchings.

    Examples
    --------
    >>> perms, w = bvn_slices([[1, 2], [2, 1]])
    >>> perms.tolist(), w.tolist()
    ([[1, 0], [0, 1]], [2.0, 1.0])
    """
    res = _dense(stuffed, "stuffed")
    n = res.shape[0]
    big = float(res.max())
    perms: list[IntArray] = []
    weights: list[float] = []
    if big == 0:
        return np.zeros((0, n), np.int64), np.zeros(0)
    tol = _TOL * big
    rows = np.arange(n)
    cap = big
    while res.max() > tol:
        vals = np.unique(res[(res > 0) & (res <= cap)])
        best = _is_perfect(res >= vals[0]) if vals.size else None
        if best is None:
            break  # only round-off is left
        lo, hi = 0, vals.size - 1  # Invariant: vals[lo] admits a perfect matching (best).
        while lo < hi:
            mid = (lo + hi + 1) // 2
            match = _is_perfect(res >= vals[mid])
            if match is None:
                hi = mid - 1
            else:
                lo, best = mid, match
        w = float(res[rows, best].min())
        cap = w
        res[rows, best] -= w
        res[res <= tol] = 0.0
        perms.append(best)
        weights.append(w)
    return np.array(perms, dtype=np.int64).reshape(-1, n), np.array(weights)


def solstice_decompose(demand: Demand) -> Decomposition:
    """Solstice's decomposition of a demand: :func:`quick_stuff`, then :func:`solstice_slices`.

    Circuits on stuffing are dropped and the weights topped up so coverage is exact.

    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> solstice_decompose(d).weights.tolist()
    [3.0, 1.0]
    """
    perms, w = solstice_slices(quick_stuff(demand.to_dense()))
    return _finish(demand, perms, w)


def bvn_decompose(demand: Demand) -> Decomposition:
    """BvN decomposition of a demand: :func:`quick_stuff`, then :func:`bvn_slices`.

    Circuits on stuffing are dropped and the weights topped up so coverage is exact.

    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> bvn_decompose(d).weights.tolist()
    [3.0, 1.0]
    """
    perms, w = bvn_slices(quick_stuff(demand.to_dense()))
    return _finish(demand, perms, w)


# --------------------------------------------------------------------------- Eclipse


def eclipse_decompose(demand: Demand, *, delta: float) -> Decomposition:
    """Eclipse's greedy decomposition, run until the whole demand is served.

    Parameters
    ----------
    demand : Demand
        The demand D.
    delta : float
        Reconfiguration delay, the fixed cost of each matching.

    Returns
    -------
    Decomposition
        Matchings in the order Eclipse picks them, with their durations.

    Raises
    ------
    InvalidInputError
        If ``delta`` is negative or not finite.

    Notes
    -----
    Each step picks a duration alpha and a matching M maximising the demand served per unit of
    time, ``sum_{(i,j) in M} min(R_ij, alpha) / (alpha + delta)`` for the residual R; M is a
    maximum-weight matching on ``min(R, alpha)``
    (:func:`scipy.optimize.linear_sum_assignment`). The duration is the largest amount M serves
    (<= alpha), and R drops by ``min(R, alpha)`` on M.

    For a fixed M the ratio is monotone between consecutive distinct residual values, so the
    best alpha is one of them. When there are at most 64, all are tried (exact greedy step).
    Otherwise the candidates are 32 rank quantiles of the distinct values, the values nearest a
    geometric grid of ratio 2^(1/4) between the smallest and the largest, and then 16 values
    spread between the best candidate's two neighbours: about 100 assignments per step instead
    of one per distinct value (1,600 for n = 100 with 16 flows per port). Rows and columns with
    nothing left are removed from each assignment.

    References
    ----------
    Bojja Venkatakrishnan, Alizadeh, Viswanath. Costly circuits, submodular schedules and
    approximate Carathéodory theorems. SIGMETRICS 2016.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 1], [0.1, 0]])
    >>> eclipse_decompose(d, delta=1.0).weights.tolist()
    [1.0]
    >>> [round(w, 12) for w in eclipse_decompose(d, delta=0.01).weights.tolist()]
    [0.1, 0.9]
    """
    from scipy.optimize import linear_sum_assignment

    delta = check_delta(delta)
    n = demand.n
    res = demand.to_dense()
    if demand.nnz == 0:
        return Decomposition(np.zeros((0, n), np.int64), np.zeros(0))
    tol = _TOL * float(demand.values.max())
    perms: list[IntArray] = []
    weights: list[float] = []
    for _ in range(10 * demand.nnz + 10):  # a guard only; each step serves > 0
        ar = np.nonzero(res.max(axis=1) > 0)[0]
        if ar.size == 0:
            break
        ac = np.nonzero(res.max(axis=0) > 0)[0]
        sub = res[np.ix_(ar, ac)]
        vals = np.unique(sub[sub > 0])

        def score(k: int, sub: FloatArray = sub, vals: FloatArray = vals) -> tuple[float, IntArray, IntArray]:
            alpha = float(vals[k])
            m = np.minimum(sub, alpha)
            r, c = linear_sum_assignment(m, maximize=True)
            return float(m[r, c].sum()) / (alpha + delta), r, c

        tried = {k: score(k) for k in _eclipse_candidates(vals)}
        if vals.size > _ECLIPSE_ALL:
            keys = sorted(tried)
            b = keys.index(max(keys, key=lambda k: tried[k][0]))
            lo, hi = keys[max(b - 1, 0)], keys[min(b + 1, len(keys) - 1)]
            for k in np.unique(np.linspace(lo, hi, _ECLIPSE_REFINE).round().astype(np.int64)).tolist():
                if k not in tried:
                    tried[k] = score(k)
        # Among near-ties the longest duration wins: fewer reconfigurations (matters at delta = 0).
        top = max(t[0] for t in tried.values())
        k = max(k for k, t in tried.items() if t[0] >= top * (1 - 1e-12))
        _, r, c = tried[k]
        alpha = float(vals[k])
        i, j = ar[r], ac[c]
        amount = np.minimum(res[i, j], alpha)
        on = amount > 0
        i, j, amount = i[on], j[on], amount[on]
        perm = np.full(n, -1, dtype=np.int64)
        perm[i] = j
        perms.append(perm)
        weights.append(float(amount.max()))
        res[i, j] -= amount
        res[res <= tol] = 0.0
    return _finish(demand, np.array(perms, dtype=np.int64).reshape(-1, n), np.array(weights))


def _eclipse_candidates(vals: FloatArray) -> list[int]:
    """Indices into the sorted distinct residual values to try as durations."""
    k = vals.size
    if k <= _ECLIPSE_ALL:
        return list(range(k))
    idx = set(np.linspace(0, k - 1, _ECLIPSE_QUANTILES).round().astype(np.int64).tolist())
    steps = math.ceil(4 * math.log2(vals[-1] / vals[0])) + 1
    grid = vals[0] * 2.0 ** (np.arange(steps) / 4)
    idx.update(np.minimum(np.searchsorted(vals, grid), k - 1).tolist())
    return sorted(idx)


# --------------------------------------------------------------------------- schedulers


def split_schedule(
    demand: Demand,
    *,
    switches: int,
    delta: float,
    rng: RngLike = None,
    method: Literal["spectra", "eclipse"] = "spectra",
    order: Order = "index",
) -> tuple[Switches, int]:
    """Schedule each switch alone on its own part of a balanced split (the paper's baseline).

    Parameters
    ----------
    demand : Demand
        The demand D.
    switches : int
        Number of switches s; D is split into s sub-matrices with
        :func:`~ocsched.split.balanced_split`, each carrying 1/s of every line sum.
    delta : float
        Reconfiguration delay.
    rng : Generator, int or None
        Randomises the split.
    method : {"spectra", "eclipse"}
        How each switch decomposes its sub-matrix: :func:`~ocsched.decompose.spectra_decompose`
        or :func:`eclipse_decompose`. Every matching costs ``delta`` plus its weight.
    order : {"index", "random"}
        The split's cycle-search order (see :func:`~ocsched.split.split_share`).

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Switch k serves sub-matrix k, its matchings largest first.
    splits : int
        Extra pieces the split made of flows (:func:`~ocsched.split.split_flows`).

    Raises
    ------
    InvalidInputError
        If ``method`` or ``order`` is unknown.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 2], [2, 0]])
    >>> confs, splits = split_schedule(d, switches=2, delta=0.5)
    >>> [[(c.start, c.duration) for c in sw] for sw in confs], splits
    ([[(0.5, 1.0)], [(0.5, 1.0)]], 2)
    """
    if method not in ("spectra", "eclipse"):
        raise InvalidInputError(f"`method` must be 'spectra' or 'eclipse'; got {method!r}")
    parts = balanced_split(demand, switches, rng=rng, order=order)
    out = []
    for values in parts:
        on = values > 0
        sub = Demand(demand.n, demand.rows[on], demand.cols[on], values[on])
        dec = eclipse_decompose(sub, delta=delta) if method == "eclipse" else spectra_decompose(sub)
        out.append(_single_switch(dec, delta))
    return tuple(out), split_flows(parts)


@register("baseline", "Paper's baseline: balanced split into s sub-matrices, Spectra per switch")
def baseline(demand: Demand, *, switches: int, delta: float, rng: RngLike = None) -> tuple[Switches, int]:
    """:func:`split_schedule` with Spectra's decomposition on each switch."""
    return split_schedule(demand, switches=switches, delta=delta, rng=rng)


@register("baseline-eclipse", "Balanced split into s sub-matrices, Eclipse per switch")
def baseline_eclipse(
    demand: Demand, *, switches: int, delta: float, rng: RngLike = None
) -> tuple[Switches, int]:
    """:func:`split_schedule` with :func:`eclipse_decompose` on each switch."""
    return split_schedule(demand, switches=switches, delta=delta, rng=rng, method="eclipse")


@register("naive", "Every switch carries D/s with the same single-switch Spectra schedule")
def naive(demand: Demand, *, switches: int, delta: float, rng: RngLike = None) -> tuple[Switches, int]:
    """Spectra's decomposition of D/s, the same on every switch."""
    one = _single_switch(spectra_decompose(demand.scaled(1.0 / switches)), delta)
    return (one,) * switches, 0


@register("eclipse", "Eclipse greedy decomposition (max served/(alpha+delta)), Spectra placement")
def eclipse(demand: Demand, *, switches: int, delta: float, rng: RngLike = None) -> tuple[Switches, int]:
    """:func:`eclipse_decompose`, then greedy LPT, equalization and the timeline."""
    dec = eclipse_decompose(demand, delta=delta)
    return place(dec.perms, dec.weights, switches, delta, balance=True)


@register("solstice", "Solstice: QuickStuff + power-of-two slicing, Spectra placement")
def solstice(demand: Demand, *, switches: int, delta: float, rng: RngLike = None) -> tuple[Switches, int]:
    """:func:`solstice_decompose`, then greedy LPT, equalization and the timeline."""
    dec = solstice_decompose(demand)
    return place(dec.perms, dec.weights, switches, delta, balance=True)


@register("bvn", "Birkhoff-von Neumann on the stuffed matrix (max-bottleneck matchings), Spectra placement")
def bvn(demand: Demand, *, switches: int, delta: float, rng: RngLike = None) -> tuple[Switches, int]:
    """:func:`bvn_decompose`, then greedy LPT, equalization and the timeline."""
    dec = bvn_decompose(demand)
    return place(dec.perms, dec.weights, switches, delta, balance=True)
