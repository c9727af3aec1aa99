"""The compiled inner loops of :mod:`ocsched.assign.uniform` (numba; plain Python without it).

``pack`` probes ``fill`` some 40 times per call, and greedy + equalize run before it, so these
loops are most of Spectra's placement time and all of a reschedule's. The kernels write pieces
into flat arrays (switch, permutation, length, in the order they are placed); their semantics are
exactly those of :func:`~ocsched.assign.uniform.greedy`, :func:`~ocsched.assign.uniform.equalize`
and :func:`~ocsched.assign.uniform.fill`, ties included.

A kernel keeps compiled copies of what it calls from other files (``timing.busy``,
``timing.earliest_start``); the cache directory is named by the sources of every kernel module
and of the modules they import from (:func:`ocsched._jit.cache_dir`), so an edit to either
starts a fresh cache: nothing to touch by hand.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched._jit import jit
from ocsched.timing import busy, earliest_start

_busy = jit(busy)  # the delay rule itself, compiled: it stays defined once, in ocsched.timing
_earliest = jit(earliest_start)


@jit
def fill_pieces(
    weights: NDArray[np.float64],
    order: NDArray[np.int64],
    switches: int,
    delta: float,
    horizon: float,
    piece_switch: NDArray[np.int64],
    piece_perm: NDArray[np.int64],
    piece_len: NDArray[np.float64],
) -> int:
    """Fill switches of capacity ``horizon`` with ``weights`` in ``order``; return the piece count.

    -1: something does not fit; -2: more pieces than the arrays hold (the caller falls back).
    Ties: the lowest switch index among the fullest that fit; splits go to the emptiest
    switches first, ties by index (a stable sort), as in :func:`ocsched.assign.uniform.fill`.
    """
    room = np.full(switches, horizon)
    cap = piece_switch.size
    k = 0
    for idx in range(order.size):
        l = order[idx]
        weight = weights[l]
        left = weight
        need = _busy(left, 1, delta)
        best = -1
        for b in range(switches):
            if room[b] >= need and (best < 0 or room[b] < room[best]):
                best = b
        if best >= 0:
            if k >= cap:
                return -2
            piece_switch[k], piece_perm[k], piece_len[k] = best, l, left
            k += 1
            room[best] -= need
            continue
        last = -1
        taken = np.zeros(switches, dtype=np.bool_)
        for _ in range(switches):
            # The emptiest switch not cut into yet, ties by index: a stable sort by room, lazily
            # (the loop stops after a few switches; rooms of the others do not change meanwhile).
            b = -1
            for c in range(switches):
                if not taken[c] and (b < 0 or room[c] > room[b]):
                    b = c
            taken[b] = True
            if room[b] - delta <= 0 or left <= 0:
                break
            x = min(left, room[b] - delta)
            if k >= cap:
                return -2
            piece_switch[k], piece_perm[k], piece_len[k] = b, l, x
            k += 1
            room[b] -= _busy(x, 1, delta)
            left -= x
            last = k - 1
        # Scale-free: crumbs are judged against the weight itself, never an absolute epsilon.
        if left > 1e-12 * weight or last < 0:
            return -1
        if left > 0:  # float crumbs: the last piece takes them, so the weight is served exactly
            piece_len[last] += left
    return k


@jit
def bisect_horizon(
    weights: NDArray[np.float64],
    order: NDArray[np.int64],
    switches: int,
    delta: float,
    lo: float,
    hi: float,
    piece_switch: NDArray[np.int64],
    piece_perm: NDArray[np.int64],
    piece_len: NDArray[np.float64],
) -> float:
    """Bisect on the horizon between ``lo`` (fails) and ``hi`` (fits); NaN if the arrays overflowed.

    At most 50 probes, stopping once ``hi - lo <= 1e-12 hi``; returns the smallest fitting horizon.
    """
    for _ in range(50):
        if hi - lo <= 1e-12 * hi:
            break
        mid = 0.5 * (lo + hi)
        k = fill_pieces(weights, order, switches, delta, mid, piece_switch, piece_perm, piece_len)
        if k == -2:
            return np.nan
        if k == -1:
            lo = mid
        else:
            hi = mid
    return hi


@jit
def greedy_equalize(
    weights: NDArray[np.float64],
    order: NDArray[np.int64],
    switches: int,
    delta: float,
    rounds: int,
    piece_switch: NDArray[np.int64],
    piece_perm: NDArray[np.int64],
    piece_len: NDArray[np.float64],
) -> tuple[int, int, bool]:
    """Greedy LPT in ``order``, then at most ``rounds`` equalization steps; (pieces, splits, converged).

    A switch's pieces are the entries with its index, in array order (the order ``greedy`` and
    ``equalize`` append them). Pieces -2: the arrays are too short (the caller grows them).
    """
    load = np.zeros(switches)
    if order.size > piece_switch.size:
        return -2, 0, False
    k = 0
    for idx in range(order.size):
        l = order[idx]
        b = int(np.argmin(load))
        piece_switch[k], piece_perm[k], piece_len[k] = b, l, weights[l]
        k += 1
        load[b] += delta + weights[l]
    if switches < 2:
        return k, 0, True
    # Loads piece by piece, in order: the same float sums as ``loads``.
    load[:] = 0.0
    for t in range(k):
        load[piece_switch[t]] += _busy(piece_len[t], 1, delta)
    splits = 0
    for _ in range(rounds):
        a_sw, b_sw = int(np.argmax(load)), int(np.argmin(load))
        big = -1
        for t in range(k):  # the first largest piece of A
            if piece_switch[t] == a_sw and (big < 0 or piece_len[t] > piece_len[big]):
                big = t
        if load[a_sw] - load[b_sw] <= delta + 1e-9 * load[a_sw] or big < 0:
            return k, splits, True
        mid = (load[a_sw] + load[b_sw] + delta) / 2.0
        x = load[a_sw] - mid
        if piece_len[big] <= x:
            return k, splits, True
        if k >= piece_switch.size:
            return -2, 0, False
        piece_len[big] -= x
        piece_switch[k], piece_perm[k], piece_len[k] = b_sw, piece_perm[big], x
        k += 1
        load[a_sw] = mid
        load[b_sw] = mid
        splits += 1
    return k, splits, False


@jit
def pack_below(
    weights: NDArray[np.float64],
    order: NDArray[np.int64],
    switches: int,
    delta: float,
    lo: float,
    best_t: float,
    fill_switch: NDArray[np.int64],
    fill_perm: NDArray[np.int64],
    fill_len: NDArray[np.float64],
) -> int:
    """Pack ``weights`` by bisection on the horizon; its pieces if it ends strictly before ``best_t``.

    Returns the piece count (pieces in ``fill_*``), -1 when packing does not beat ``best_t``, -2
    when the arrays are too short (the caller grows them). ``lo`` is the bisection's lower end,
    ``(sum(w) + m delta) / s``, computed by the caller (numpy's pairwise sum).
    """
    if order.size == 0:
        return -1
    kf: int = fill_pieces(weights, order, switches, delta, best_t, fill_switch, fill_perm, fill_len)
    if kf < 0:
        return kf
    hi = bisect_horizon(weights, order, switches, delta, lo, best_t, fill_switch, fill_perm, fill_len)
    if np.isnan(hi):
        return -2
    kf = fill_pieces(weights, order, switches, delta, hi, fill_switch, fill_perm, fill_len)
    if kf < 0:
        return kf
    load = np.zeros(switches)
    for t in range(kf):  # the same float sums as ``loads``: piece by piece, in order
        load[fill_switch[t]] += _busy(fill_len[t], 1, delta)
    return kf if load.max() < best_t else -1


@jit
def pack_pieces(
    weights: NDArray[np.float64],
    order: NDArray[np.int64],
    switches: int,
    delta: float,
    rounds: int,
    lo: float,
    piece_switch: NDArray[np.int64],
    piece_perm: NDArray[np.int64],
    piece_len: NDArray[np.float64],
    fill_switch: NDArray[np.int64],
    fill_perm: NDArray[np.int64],
    fill_len: NDArray[np.float64],
) -> tuple[int, bool, bool]:
    """:func:`ocsched.assign.uniform.pack` from Spectra's start: (pieces, packed, equalize converged).

    The start (greedy + equalize) goes to ``piece_*``, the packing (:func:`pack_below`) to
    ``fill_*``; ``packed`` says which one won. Pieces -2: some arrays are too short.
    """
    k, _, converged = greedy_equalize(
        weights, order, switches, delta, rounds, piece_switch, piece_perm, piece_len
    )
    if k == -2:
        return -2, False, converged
    load = np.zeros(switches)
    for t in range(k):  # the same float sums as ``loads``: piece by piece, in order
        load[piece_switch[t]] += _busy(piece_len[t], 1, delta)
    kf = pack_below(weights, order, switches, delta, lo, load.max(), fill_switch, fill_perm, fill_len)
    if kf == -2:
        return -2, False, converged
    return (kf, True, converged) if kf >= 0 else (k, False, converged)


@jit
def _block_sum(a: NDArray[np.float64], lo: int, n: int) -> float:
    """numpy's sum of ``a[lo:lo+n]`` for n <= 128: in order below 8, else 8 lanes then the rest."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r = a[lo : lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = float(((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@jit
def pairwise_sum(a: NDArray[np.float64]) -> float:
    """``a.sum()`` in numpy's order (halves down to blocks of <= 128, see :func:`_block_sum`).

    The same float to the last bit (``tests/assign/test_assign.py`` checks it on random arrays). Written
    without recursion: numba's on-disk cache does not keep recursive functions safely.
    """
    seg_lo = np.empty(128, dtype=np.int64)  # pending segments (depth <= log2(n), far below 128)
    seg_n = np.empty(128, dtype=np.int64)
    seg_join = np.empty(128, dtype=np.bool_)  # True: add the two sums on top of the value stack
    vals = np.empty(128)
    ns, nv = 1, 0
    seg_lo[0], seg_n[0], seg_join[0] = 0, a.size, False
    while ns > 0:
        ns -= 1
        lo, n = seg_lo[ns], seg_n[ns]
        if seg_join[ns]:
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
        elif n <= 128:
            vals[nv] = _block_sum(a, lo, n)
            nv += 1
        else:
            n2 = n // 2
            n2 -= n2 % 8
            # Popped in order: left half, right half, then their sum.
            seg_lo[ns], seg_n[ns], seg_join[ns] = lo, n, True
            seg_lo[ns + 1], seg_n[ns + 1], seg_join[ns + 1] = lo + n2, n - n2, False
            seg_lo[ns + 2], seg_n[ns + 2], seg_join[ns + 2] = lo, n2, False
            ns += 3
    return float(vals[0]) if nv else 0.0


@jit
def uniform_pieces(
    weights: NDArray[np.float64], switches: int, delta: float, pack: bool
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], int, bool]:
    """Spectra's placement (``pack=False``) or :func:`~ocsched.assign.uniform.pack` from it, in one call.

    Returns the pieces (switch, permutation, length; in the order the placement appends them),
    the number of splits and whether equalization converged: exactly
    :func:`~ocsched.assign.uniform.spectra_placement` and ``pack(weights, switches, delta)``.
    """
    order = np.argsort(-weights, kind="mergesort")  # stable, as numpy's kind="stable"
    rounds = 100 * (switches + weights.size)  # equalize's default guard
    cap = weights.size + 2 * switches + 1  # equalize splits about once per switch; grown if not
    while True:
        sw = np.empty(cap, dtype=np.int64)
        perm = np.empty(cap, dtype=np.int64)
        length = np.empty(cap)
        if not pack:
            k, splits, converged = greedy_equalize(weights, order, switches, delta, rounds, sw, perm, length)
            if k != -2:
                return sw[:k], perm[:k], length[:k], splits, converged
        else:
            fsw = np.empty(cap, dtype=np.int64)
            fperm = np.empty(cap, dtype=np.int64)
            flen = np.empty(cap)
            lo = (pairwise_sum(weights) + delta * weights.size) / switches
            k, packed, converged = pack_pieces(
                weights, order, switches, delta, rounds, lo, sw, perm, length, fsw, fperm, flen
            )
            if k != -2:
                placed = 0
                for x in weights:
                    placed += x > 0
                if packed:
                    return fsw[:k], fperm[:k], flen[:k], k - placed, converged
                return sw[:k], perm[:k], length[:k], k - placed, converged
        cap *= 4


@jit
def lay_out_pieces(
    switch: NDArray[np.int64], length: NDArray[np.float64], switches: int, delta: float, t0: float
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each switch's pieces largest first (ties in array order), back to back from ``t0``.

    Returns the pieces laid out (indices into the arrays, switch by switch) and their starts,
    zero-length pieces dropped: :func:`~ocsched.assign.uniform.timeline` without the objects.
    """
    by = np.argsort(switch, kind="mergesort")
    idx = np.empty(switch.size, dtype=np.int64)
    starts = np.empty(switch.size)
    c = 0
    t = 0
    for b in range(switches):
        first = t
        while t < by.size and switch[by[t]] == b:
            t += 1
        mine = by[first:t]
        end = t0
        for q in np.argsort(-length[mine], kind="mergesort"):
            e = mine[q]
            if length[e] > 0:
                start = _earliest(end, delta)
                idx[c], starts[c] = e, start
                end = start + length[e]
                c += 1
    return idx[:c], starts[:c]
