"""Placement on s identical all-stop switches: greedy LPT, equalization, fill, packing, timeline.

An *assignment* is, per switch, a list of pieces ``(l, length)``: permutation l held for
``length``. A switch's load is :func:`ocsched.timing.busy` of its pieces.
"""

from __future__ import annotations

import logging
from operator import itemgetter

import numpy as np
from numpy.typing import NDArray

from ocsched.assign._kernels import fill_pieces, pack_below, uniform_pieces
from ocsched.model import Configuration
from ocsched.timing import busy, lay_out

log = logging.getLogger("ocsched.assign")  # the package's logger, as before assign became a package

Assignment = list[list[tuple[int, float]]]


def loads(assignment: Assignment, delta: float) -> NDArray[np.float64]:
    """Return each switch's load: :func:`~ocsched.timing.busy` over its pieces."""
    # Piece by piece, in order: the same float sums as laying the pieces out one after another.
    return np.array([sum(busy(w, 1, delta) for _, w in sw) for sw in assignment], dtype=np.float64)


def greedy(weights: NDArray[np.float64], switches: int, delta: float) -> Assignment:
    """Longest-processing-time-first: each weight, largest first, onto the least-loaded switch.

    Ties go to the lowest switch index, and equal weights keep their order (stable sort).

    >>> greedy(np.array([3.0, 1.0, 2.0]), 2, 0.5)
    [[(0, 3.0)], [(2, 2.0), (1, 1.0)]]
    """
    out: Assignment = [[] for _ in range(switches)]
    load = np.zeros(switches)
    for l in np.argsort(-np.asarray(weights), kind="stable"):
        b = int(np.argmin(load))
        out[b].append((int(l), float(weights[l])))
        load[b] += delta + float(weights[l])
    return out


def equalize(
    assignment: Assignment, delta: float, *, max_rounds: int | None = None
) -> tuple[Assignment, int]:
    """Split pieces of the most-loaded switch onto the least-loaded one until loads are within delta.

    Repeat: A = the most loaded switch, B = the least loaded; stop if ``load(A) - load(B) <=
    delta`` (plus a relative 1e-9 of load(A), so that delta = 0 terminates). Let
    ``mid = (load(A) + load(B) + delta) / 2`` and ``x = load(A) - mid``; stop if the largest
    piece ``a`` on A has ``a <= x``; otherwise shorten ``a`` by x and put a new piece of length x
    of the same permutation on B (paying one more delta there). A and B both end at mid.

    Returns the new assignment (the input is not modified) and the number of splits.

    Notes
    -----
    Never raises the largest load: each step lowers load(A) to mid < load(A) and raises load(B)
    to mid. Each step either stops or splits, and every split brings the gap between the two
    touched switches to 0; ``max_rounds`` (default ``100 * (s + pieces)``) guards against slow
    convergence.

    Examples
    --------
    >>> equalize([[(0, 4.0)], []], 0.0)
    ([[(0, 2.0)], [(0, 2.0)]], 1)
    """
    out = [list(sw) for sw in assignment]
    s = len(out)
    if s < 2:
        return out, 0
    load = loads(out, delta)
    cap = max_rounds if max_rounds is not None else 100 * (s + sum(len(sw) for sw in out))
    splits = 0
    for _ in range(cap):
        a_sw, b_sw = int(np.argmax(load)), int(np.argmin(load))
        # The relative slack stops the geometric tail when delta = 0 (float noise, no gain).
        if load[a_sw] - load[b_sw] <= delta + 1e-9 * load[a_sw] or not out[a_sw]:
            break
        mid = float(load[a_sw] + load[b_sw] + delta) / 2.0
        x = float(load[a_sw]) - mid
        k = max(range(len(out[a_sw])), key=lambda t: out[a_sw][t][1])
        l, a = out[a_sw][k]
        if a <= x:
            break
        out[a_sw][k] = (l, a - x)
        out[b_sw].append((l, x))
        load[a_sw] = mid
        load[b_sw] = mid
        splits += 1
    else:
        log.info("equalize stopped after %d rounds without converging", cap)
    return out, splits


def spectra_placement(weights: NDArray[np.float64], switches: int, delta: float) -> tuple[Assignment, int]:
    """``equalize(greedy(weights, switches, delta), delta)``, compiled: the same assignment and splits.

    >>> spectra_placement(np.array([4.0]), 2, 0.0)
    ([[(0, 2.0)], [(0, 2.0)]], 1)
    """
    return _uniform(np.asarray(weights, dtype=np.float64), switches, delta, pack=False)


def fill(weights: NDArray[np.float64], switches: int, delta: float, horizon: float) -> Assignment | None:
    """Fit the weights on switches of capacity ``horizon``, splitting only what does not fit whole.

    Largest weight first: put it whole on the fullest switch that still has room for it (best
    fit); otherwise cut it into pieces over the emptiest switches, each piece paying delta.
    Returns None if something is left over.
    """
    w = np.asarray(weights, dtype=np.float64)
    return _fill(w, np.argsort(-w, kind="stable"), switches, delta, horizon)


def _arrays(cap: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    return np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.float64)


def _fill(
    w: NDArray[np.float64], order: NDArray[np.int64], switches: int, delta: float, horizon: float
) -> Assignment | None:
    """:func:`fill` with the order given (pack probes one weight vector many times)."""
    # Each switch is cut into at most once (a cut leaves it no room), so m + s pieces suffice
    # unless delta is 0; then the arrays grow.
    cap = w.size + switches + 1
    while True:
        sw, perm, length = _arrays(cap)
        k = fill_pieces(w, order, switches, float(delta), float(horizon), sw, perm, length)
        if k != -2:
            break
        cap *= 4
    if k < 0:
        return None
    return _pieces_to_assignment(switches, sw[:k], perm[:k], length[:k])


def pack(
    weights: NDArray[np.float64], switches: int, delta: float, *, start: Assignment | None = None
) -> tuple[Assignment, int]:
    """Place weights by bisection on the makespan, keeping ``start`` (default: Spectra's) if better.

    Each probe T asks :func:`fill` whether every weight fits on s switches of capacity T. The
    smallest T found is returned with its assignment, unless ``start`` (Spectra's greedy +
    equalize by default) already ends earlier, so the result is never worse than Spectra's.

    Returns the assignment and its number of splits (pieces beyond one per permutation).

    Notes
    -----
    Bisection starts from the average load ``(sum(w) + m delta) / s`` (no split at all) and
    Spectra's makespan; 50 probes of O(m s log s) each.

    Examples
    --------
    Four equal weights on three switches: Spectra's equalization ends at 5.375; packing cuts the
    fourth weight in three and ends at 5.

    >>> a, splits = pack(np.array([3.0, 3.0, 3.0, 3.0]), 3, 0.5)
    >>> round(float(loads(a, 0.5).max()), 9), splits
    (5.0, 2)
    """
    w = np.asarray(weights, dtype=np.float64)
    if start is None:
        return _pack_from_spectra(w, switches, delta)
    order = np.argsort(-w, kind="stable")
    lo = (float(w.sum()) + delta * w.size) / switches
    best_t = float(loads(start, delta).max(initial=0.0))
    cap = w.size + switches + 1
    while True:
        sw, perm, length = _arrays(cap)
        k = pack_below(w, order, switches, float(delta), lo, best_t, sw, perm, length)
        if k != -2:
            break
        cap *= 4
    best = start if k < 0 else _pieces_to_assignment(switches, sw[:k], perm[:k], length[:k])
    return best, sum(len(sw) for sw in best) - int(np.count_nonzero(w > 0))


def _pieces_to_assignment(
    switches: int, sw: NDArray[np.int64], perm: NDArray[np.int64], length: NDArray[np.float64]
) -> Assignment:
    out: Assignment = [[] for _ in range(switches)]
    for b, l, x in zip(sw.tolist(), perm.tolist(), length.tolist(), strict=True):
        out[b].append((l, x))
    return out


def _pack_from_spectra(w: NDArray[np.float64], switches: int, delta: float) -> tuple[Assignment, int]:
    """:func:`pack` with Spectra's start, all of it in one compiled call (the same assignment)."""
    return _uniform(w, switches, delta, pack=True)


def _uniform(w: NDArray[np.float64], switches: int, delta: float, *, pack: bool) -> tuple[Assignment, int]:
    """Spectra's placement, or pack from it: the compiled :func:`uniform_pieces` as an assignment."""
    sw, perm, length, splits, converged = uniform_pieces(w, switches, float(delta), pack)
    if not converged:
        log.info("equalize stopped after %d rounds without converging", 100 * (switches + w.size))
    return _pieces_to_assignment(switches, sw, perm, length), int(splits)


def timeline(
    assignment: Assignment, perms: NDArray[np.int64], delta: float, *, t0: float | None = None
) -> tuple[tuple[Configuration, ...], ...]:
    """Turn an assignment into configurations: each switch runs its pieces largest first.

    Starts follow :func:`~ocsched.timing.lay_out` (from ``t0``, when given: every switch dark from
    then on). Zero-length pieces are dropped.
    """
    perms = np.array(perms, dtype=np.int64)  # private read-only copy shared by the configurations
    perms.flags.writeable = False
    rows = list(perms)
    result = []
    for sw in assignment:
        if len(sw) > 1:
            sw = sorted(sw, key=itemgetter(1), reverse=True)  # stable, as sorting by -length
        pieces = [p for p in sw if p[1] > 0]
        lengths = [w for _, w in pieces]
        starts = lay_out(lengths, delta, t0=t0)
        result.append(tuple(map(Configuration, starts, lengths, [rows[l] for l, _ in pieces])))
    return tuple(result)
