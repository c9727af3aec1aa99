"""Lay out an assignment in time on a fabric, and circuit-by-circuit timelines (partial model).

:func:`timeline_on` turns an assignment into configurations per switch (delays, rates, down
windows, all-stop or partial model); under the partial model a switch may also be re-timed
circuit by circuit (:func:`_async_timeline`, with the shares of :func:`_share`), and
:func:`bff_timeline` serves a sub-demand on one switch port by port.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np
from numpy.typing import NDArray

from ocsched.assign.on_fabric import _View
from ocsched.assign.uniform import Assignment
from ocsched.decompose import Decomposition
from ocsched.errors import InfeasibleError
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand
from ocsched.timing import lay_out_windows, partial_starts, time_to_serve


def order_for_partial(pieces: list[tuple[int, float]], perms: NDArray[np.int64]) -> list[tuple[int, float]]:
    """Order a switch's pieces so consecutive ones share as many circuits as possible.

    Start with the longest piece; then repeatedly take the piece sharing the most circuits with the
    last one (ties: the longest). Greedy, O(k^2 n) for k pieces of n ports.

    >>> perms = np.array([[1, 0, -1], [2, 0, 1], [1, 2, 0]])
    >>> order_for_partial([(0, 1.0), (1, 3.0), (2, 2.0)], perms)
    [(1, 3.0), (0, 1.0), (2, 2.0)]
    """
    left = sorted(pieces, key=lambda p: -p[1])
    if not left:
        return []
    out = [left.pop(0)]
    while left:
        cur = perms[out[-1][0]]
        shared = [int(np.count_nonzero((perms[l] == cur) & (cur >= 0))) for l, _ in left]
        k = max(range(len(left)), key=lambda t: (shared[t], left[t][1]))
        out.append(left.pop(k))
    return out


def timeline_on(
    assignment: Assignment,
    perms: NDArray[np.int64],
    fabric: Fabric,
    *,
    t0: float | NDArray[np.float64] = 0.0,
    ordered: bool = False,
    share: NDArray[np.float64] | None = None,
) -> tuple[tuple[Configuration, ...], ...]:
    """Lay out an assignment on a fabric: configurations per switch, delays, rates, windows and model.

    A piece of demand w on a switch of rate r lasts ``w / r``. Without down windows a switch runs
    its pieces largest first (all-stop, :func:`~ocsched.timing.lay_out_windows`) or, under the
    partial model, in the order of :func:`order_for_partial` at the earliest starts of
    :func:`~ocsched.timing.partial_starts` (never later than all-stop). With down windows the
    pieces keep their placement order and are cut around the windows (all-stop, valid under both
    models). ``ordered`` keeps the given order everywhere. Where that order would keep a piece
    past the failure of a link it uses, the pieces with such deadlines go first, earliest
    deadline first (see :meth:`~ocsched.assign.on_fabric._View.arrange`). ``t0``: when every
    switch, or each switch, is dark from.

    Under the partial model, with ``share`` (``share[l, i]``: the fraction of permutation l's
    time that its circuit from input i actually needs, from the demand), each switch is also
    re-timed circuit by circuit (:func:`_async_timeline`: a circuit holds only its share and
    lights as soon as its two ports have been dark for delta) and keeps whichever of the two
    layouts ends first.
    """
    perms = np.array(perms, dtype=np.int64)
    perms.flags.writeable = False
    view = _View.of(fabric, t0, ports=perms.shape[1] if perms.ndim == 2 else 0).with_perms(perms)
    result = []
    for b, sw in enumerate(assignment):
        pieces = [(l, w) for l, w in sw if w > 0]
        d, r, wins = float(view.delta[b]), float(view.rate[b]), view.windows[b]
        start = float(view.start[b])
        base = pieces
        if not ordered and not wins:
            base = (
                order_for_partial(pieces, perms)
                if fabric.reconfiguration.keeps_circuits
                else sorted(pieces, key=lambda p: -p[1])
            )
        arranged = view.arrange(b, pieces, base)
        if (
            arranged is not None
            and arranged is not base
            and fabric.reconfiguration.keeps_circuits
            and not wins
        ):
            # Deadlines first; the rest may still share circuits with one another.
            k = sum(1 for l, _ in arranged if view.deadline(l, b) < np.inf)
            arranged = arranged[:k] + order_for_partial(arranged[k:], perms)
        pieces = base if arranged is None else arranged  # None: the validator will say why
        durs = [time_to_serve(w, r) for _, w in pieces]
        confs: list[Configuration] = []
        if fabric.reconfiguration.keeps_circuits and not wins:
            circ = []
            for l, _ in pieces:
                (i,) = np.nonzero(perms[l] >= 0)
                circ.append((i.astype(np.int64), perms[l][i]))
            for t, (l, _), w in zip(partial_starts(circ, durs, d, t0=start), pieces, durs, strict=True):
                confs.append(Configuration(t, w, perms[l]))
            if share is not None and pieces:
                alt = _async_timeline(pieces, perms, share, d, r, start)
                # Empty: no circuit of these pieces needs any time (the demand is already served).
                if alt is not None and (not alt or max(c.end for c in alt) < max(c.end for c in confs)):
                    confs = list(alt)
        else:
            for segs, (l, _) in zip(lay_out_windows(durs, d, wins, t0=start), pieces, strict=True):
                confs.extend(Configuration(t, w, perms[l]) for t, w in segs if w > 0)
        result.append(tuple(confs))
    return tuple(result)


def _cut(
    intervals: list[tuple[float, float, int, int]], n: int, need: dict[tuple[int, int], float]
) -> tuple[Configuration, ...] | None:
    """Cut circuit intervals ``(start, length, i, j)`` at every start and end into configurations.

    Returns None if float rounding of the absolute times loses more than 1e-12 of some circuit's need.
    """
    cuts = sorted({a for a, _, _, _ in intervals} | {a + w for a, w, _, _ in intervals})
    out = []
    held: dict[tuple[int, int], float] = {}
    for a, b in itertools.pairwise(cuts):
        on = [(i, j) for s_, w, i, j in intervals if s_ <= a and s_ + w >= b]
        if on:
            ins = np.array([i for i, _ in on], dtype=np.int64)
            outs = np.array([j for _, j in on], dtype=np.int64)
            out.append(Configuration.sparse(a, b - a, ins, outs, ports=n))
            for ij in on:
                held[ij] = held.get(ij, 0.0) + (b - a)
    if any(held.get(ij, 0.0) < x * (1 - 1e-12) for ij, x in need.items()):
        return None
    return tuple(out)


def _async_timeline(
    pieces: list[tuple[int, float]],
    perms: NDArray[np.int64],
    share: NDArray[np.float64],
    delta: float,
    rate: float,
    t0: float,
) -> tuple[Configuration, ...] | None:
    """Re-time one switch's pieces circuit by circuit under the partial model.

    In piece order, circuit (i, j) of piece (l, w) must be lit for ``share[l, i] * w / rate``. It
    continues the same circuit if that was the last one on both its ports (kept: no delay), else
    lights ``delta`` after the later of its ports' last ends (``t0`` at first). Each circuit then
    starts no later than in the all-stop layout of the same order and holds no longer.
    """
    n = perms.shape[1]
    free_in: dict[int, tuple[float, int]] = {}  # port -> (end of its last circuit, its partner)
    free_out: dict[int, tuple[float, int]] = {}
    intervals: list[list[float | int]] = []
    last: dict[tuple[int, int], int] = {}  # circuit -> index of its latest interval
    need: dict[tuple[int, int], float] = {}
    for l, w in pieces:
        (ins,) = np.nonzero(perms[l] >= 0)
        for i in ins.tolist():
            j = int(perms[l][i])
            dur = time_to_serve(float(share[l, i]) * w, rate)
            if dur <= 0:
                continue
            need[(i, j)] = need.get((i, j), 0.0) + dur
            ei, pi = free_in.get(i, (t0, -1))
            ej, pj = free_out.get(j, (t0, -1))
            if pi == j and pj == i and (i, j) in last:
                iv = intervals[last[(i, j)]]
                iv[1] = float(iv[1]) + dur
                end = float(iv[0]) + float(iv[1])
            else:
                start = max(ei, ej) + delta
                last[(i, j)] = len(intervals)
                intervals.append([start, dur, i, j])
                end = start + dur
            free_in[i] = (end, j)
            free_out[j] = (end, i)
    return _cut([(float(a), float(b), int(c), int(d)) for a, b, c, d in intervals], n, need)


def _share(dec: Decomposition, demand: Demand | None, fabric: Fabric) -> NDArray[np.float64] | None:
    """``share[l, i]``: demand / coverage of the entry permutation l's circuit from i carries (<= 1)."""
    if demand is None or not fabric.reconfiguration.keeps_circuits or not len(dec):
        return None
    n = demand.n
    keys = demand.rows * n + demand.cols
    share = np.zeros(dec.perms.shape, dtype=np.float64)
    cover = np.zeros(demand.nnz)
    hits = []
    for l, perm in enumerate(dec.perms):
        (ins,) = np.nonzero(perm >= 0)
        k = ins * n + perm[ins]
        pos = np.minimum(np.searchsorted(keys, k), max(keys.size - 1, 0))
        hit = keys[pos] == k if keys.size else np.zeros(k.size, bool)
        np.add.at(cover, pos[hit], dec.weights[l])
        hits.append((ins[hit], pos[hit]))
    for l, (ins, pos) in enumerate(hits):
        share[l, ins] = np.minimum(demand.values[pos] / cover[pos], 1.0)
    return share


def bff_timeline(
    matrix: NDArray[np.float64], delta: float, *, t0: float = 0.0
) -> tuple[Configuration, ...] | None:
    """Serve a sub-demand on one switch circuit by circuit, ports reconfiguring on their own (BFF).

    The Spectra authors' per-switch step of "Spectra (partial reconfig)", under this package's
    partial model: every port starts dark; a maximum-weight matching of ``matrix`` is lit at
    ``t0 + delta``, each circuit (i, j) held for its whole entry. When a circuit ends at f, input
    i and output j become free at ``f + delta`` (both dark for delta); in time order (inputs
    first), a free input lights the free output with the largest remaining entry of its row, and
    a free output the free input with the largest of its column. The circuits' intervals are then
    cut at every start and end into back-to-back configurations, so a circuit spanning several of
    them is kept (never dark) in between. Returns None when the times cannot represent the entries
    (an entry below the resolution of the times, e.g. 1e-18 after a delay of 1): callers then lay
    the switch out configuration by configuration.

    >>> confs = bff_timeline(np.array([[0.0, 2.0], [1.0, 0.0]]), 0.5)
    >>> [(c.start, c.duration, c.circuits) for c in confs]
    [(0.5, 1.0, [(0, 1), (1, 0)]), (1.5, 1.0, [(0, 1)])]
    """
    from scipy.optimize import linear_sum_assignment

    m = np.array(matrix, dtype=np.float64)
    n = m.shape[0]
    rem = m.copy()
    intervals: list[tuple[float, float, int, int]] = []
    events: list[tuple[float, int, int]] = []  # (time, 0 input / 1 output, port)
    free_in: set[int] = set(range(n))
    free_out: set[int] = set(range(n))
    if rem.any():
        rows, cols = linear_sum_assignment(rem, maximize=True)
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
            if rem[i, j] > 0:
                start = t0 + delta
                intervals.append((start, float(rem[i, j]), i, j))
                end = start + float(rem[i, j])
                rem[i, j] = 0.0
                free_in.discard(i)
                free_out.discard(j)
                heapq.heappush(events, (end + delta, 0, i))
                heapq.heappush(events, (end + delta, 1, j))
    # Ports idle at the start light as soon as a partner frees up (their delay is long paid).
    while events:
        t, kind, p = heapq.heappop(events)
        if kind == 0:
            cand = [j for j in free_out if rem[p, j] > 0]
            if not cand:
                free_in.add(p)
                continue
            j = max(cand, key=lambda q: (rem[p, q], -q))
            i = p
        else:
            cand = [i for i in free_in if rem[i, p] > 0]
            if not cand:
                free_out.add(p)
                continue
            i = max(cand, key=lambda q: (rem[q, p], -q))
            j = p
        free_in.discard(i)
        free_out.discard(j)
        w = float(rem[i, j])
        rem[i, j] = 0.0
        intervals.append((t, w, i, j))
        heapq.heappush(events, (t + w + delta, 0, i))
        heapq.heappush(events, (t + w + delta, 1, j))
    if rem.any():  # an entry whose ports never met free (cannot happen: both free at the end)
        i, j = np.argwhere(rem > 0)[0]
        raise InfeasibleError(f"bff left demand[{i}, {j}] unserved")
    return _cut(intervals, n, {(i, j): float(m[i, j]) for i, j in zip(*np.nonzero(m > 0), strict=True)})
