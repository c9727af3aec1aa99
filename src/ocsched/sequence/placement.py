"""Place a phase's permutations jointly on the switches, given what each switch holds and when it is free."""

from __future__ import annotations

import heapq
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched.sequence._common import Held, Pieces, perm_key
from ocsched.sequence.layout import TailCost, holders, order


def joint(
    pieces: Pieces,
    held: Held,
    ready: NDArray[np.float64],
    delta: float,
    following: set[bytes],
    spread: int | None = None,
    reserved: set[int] | None = None,
    prefer: set[int] | None = None,
    pack: bool = False,
    tail_cost: TailCost | None = None,
    tails: Pieces | None = None,
) -> list[list[tuple[NDArray[np.int64], float]]]:
    """Place pieces given the switches' state: held permutations pinned at no delay, LPT, then equalize.

    A switch's load counts from the release: ``ready[b]`` (when it can start a new configuration,
    0 if its delay is hidden) plus ``delta + w`` per further piece. A piece whose circuits a
    switch already holds is split over those switches first, at no delay, run with the held
    permutation itself (the extra circuits carry nothing, and the switch keeps what it holds).
    With ``spread``, the other pieces go to that many switches only, those whose permutation is
    of least use now and next, so that the others keep theirs (a switch dedicated to a recurring
    permutation), those in ``prefer`` first. Switches in ``reserved`` take no new piece unless no
    other switch can. With
    ``pack``, a bisection on the phase end with best-fit packing replaces the equalized placement
    when it ends earlier (as :func:`ocsched.assign.pack` does for one matrix). ``tail_cost``
    chooses what each switch ends with (:func:`~ocsched.sequence.layout.order`), unless
    ``tails`` (permutations to carry into the next phase, :func:`ocsched.sequence.carry.carry`)
    are given: each goes last on its own switch, onto the least loaded, and :func:`rebalance`
    exchanges whole pieces, from three starts (:data:`_STARTS`), the lowest maximum kept;
    equalize leaves the tails whole and ``pack`` is not tried.
    """
    s = len(held)
    pinned: list[list[list[Any]]] = [[] for _ in range(s)]  # per switch: [perm, length]
    load = ready - delta
    loose = []
    for (perm, w), holding in zip(pieces, holders(pieces, held), strict=True):
        free = [b for b in holding if not pinned[b]]
        if free:
            for b in free:
                pinned[b].append([held[b].perm, w / len(free)])  # type: ignore[union-attr]
                load[b] = w / len(free)
        else:
            loose.append((perm, w))
    keep = set() if reserved is None else {b for b in reserved if not pinned[b]}
    open_ = [b for b in range(s) if b not in keep] or list(range(s))
    targets = np.array(open_)
    if spread is not None:
        useful = [h is not None and perm_key(h.perm) in following for h in held]
        first = set() if prefer is None else prefer
        rank = sorted(open_, key=lambda b: (bool(pinned[b]), b not in first, useful[b], ready[b], -b))
        targets = np.array(sorted(rank[:spread]))
    base = load.copy()  # after the pinned shares: what the loose pieces are placed on top of
    shares = [[list(piece) for piece in sw] for sw in pinned]  # equalize may shorten them
    hows = _STARTS if tails else _STARTS[:1]  # without tails: LPT, once
    starts = [_start(load, loose, tails or [], targets, delta, *how) for how in hows]
    if tails:
        for loads, ends, on in starts:
            rebalance(on, ends, loads, targets, delta)
    loads, last, placed = min(starts, key=lambda x: float(x[0].max()))
    load[:] = loads
    # Equalize (Spectra's step 3, with the switches' own starting loads): move part of the largest
    # piece of the most loaded switch to the least loaded target while that lowers the maximum.
    for _ in range(100 * (s + len(pieces))):
        a = int(np.argmax(load))
        b = int(targets[np.argmin(load[targets])])
        if load[a] - load[b] <= delta + 1e-9 * abs(load[a]):
            break
        mid = (load[a] + load[b] + delta) / 2.0
        x = load[a] - mid
        cands = placed[a] + pinned[a]
        if not cands:
            break
        big = max(cands, key=lambda p: p[1])
        if big[1] <= x:
            break
        big[1] -= x
        placed[b].append([big[0], x])
        load[a] = load[b] = mid
    if pack and loose and not tails:
        packed = pack_phase_pieces(loose, base, targets, delta, float(load.max()))
        if packed is not None:
            placed, pinned = packed, shares
    plan = []
    for b in range(s):
        head = [(p, float(w)) for p, w in pinned[b]]
        body = [(p, float(w)) for p, w in placed[b]]
        tail = last[b]
        if tail is None:
            plan.append(head + order(body, None, following, tail_cost))
        else:
            plan.append(head + order(body, None, set()) + [tail])
    return plan


#: Per switch, the piece it ends with to carry into the next phase, if any.
Tails = list[tuple[NDArray[np.int64], float] | None]

#: Starts of the exchanges with carried-out pieces: (tails before the other pieces, largest first).
#: Each ends in its own local optimum. On 16 MoE layers (gaps 0) exposed / independent at 1 ms:
#: 0.7986, 0.7982, 0.7969 alone, 0.7969 together; at 100 us: 0.9387 (the first), 0.9275 together.
_STARTS = ((True, True), (False, True), (True, False))


def _start(
    load: NDArray[np.float64],
    loose: Pieces,
    tails: Pieces,
    targets: NDArray[np.int64],
    delta: float,
    tails_first: bool,
    largest_first: bool,
) -> tuple[NDArray[np.float64], Tails, list[list[list[Any]]]]:
    """LPT of the pieces onto the targets, and the tails one per switch onto the least loaded (a copy)."""
    ld = load.copy()
    last: Tails = [None] * ld.size
    placed: list[list[list[Any]]] = [[] for _ in range(ld.size)]

    # LPT through a heap of (load, switch): the least loaded, the lowest index among equals.
    heap = [(float(ld[b]), int(b)) for b in targets]
    heapq.heapify(heap)
    inside = {int(b) for b in targets}

    def grow(b: int, w: float) -> None:
        ld[b] += delta + w
        if b in inside:
            heapq.heappush(heap, (float(ld[b]), b))  # the old entry goes stale

    def put(perm: NDArray[np.int64], w: float) -> None:
        while True:
            load_b, b = heapq.heappop(heap)
            if load_b == ld[b]:
                break
        placed[b].append([perm, w])
        grow(b, w)

    def put_tails() -> None:
        for perm, w in sorted(tails, key=lambda p: -p[1] if largest_first else p[1]):
            free = [b for b in targets if last[b] is None] or [b for b in range(ld.size) if last[b] is None]
            if not free:  # more tails than switches: served, not carried
                put(perm, w)
                continue
            b = int(min(free, key=lambda x: ld[x]))
            last[b] = (perm, w)
            grow(b, w)

    if tails_first:
        put_tails()
    for perm, w in sorted(loose, key=lambda p: -p[1]):
        put(perm, w)
    if not tails_first:
        put_tails()
    return ld, last, placed


def rebalance(
    placed: list[list[list[Any]]],
    last: Tails,
    load: NDArray[np.float64],
    targets: NDArray[np.int64],
    delta: float,
) -> None:
    """Lower the largest load by exchanges of whole pieces with the most loaded switch (in place).

    LPT leaves a phase of few, uneven pieces per switch (three or four, a delay each) badly
    balanced: a large piece placed early keeps a second large one. Each step takes the best
    exchange between the most loaded switch and a target of up to two of its pieces for up to
    two of the target's (a move when one side gives none), or of their carried-out ``last``
    pieces (at most one per switch), and stops when none lowers that switch's load without
    raising the other's to it.
    """
    s = len(load)
    pairs: list[list[tuple[int, ...]]] = [[] for _ in range(s)]  # per switch: its subsets of <= 2 pieces
    given: list[NDArray[np.float64]] = [np.zeros(1)] * s  # what each takes (a delay per piece)
    ys = np.full((s, 1), np.inf)  # the same, padded with inf (never chosen)

    def refresh(b: int) -> None:
        nonlocal ys
        pairs[b] = [c for r in range(3) for c in combinations(range(len(placed[b])), r)]
        given[b] = np.array([sum(delta + placed[b][i][1] for i in c) for c in pairs[b]])
        if given[b].size > ys.shape[1]:
            ys = np.hstack([ys, np.full((s, given[b].size - ys.shape[1]), np.inf)])
        ys[b] = np.inf
        ys[b, : given[b].size] = given[b]

    for b in range(s):
        refresh(b)
    ends = np.array([0.0 if t is None else delta + t[1] for t in last])  # the carried-out pieces
    closed = np.ones(s, dtype=bool)
    closed[targets] = False
    for _ in range(20 * s):
        a = int(np.argmax(load))
        top = float(load[a])
        # Every exchange at once, in the order (target, its subset, a's subset), then the tails:
        # the first best is the one a loop over them would keep.
        xs = given[a]
        gives, takes = xs[None, None, :], ys[:, :, None]
        worst = np.maximum(top - gives + takes, load[:, None, None] + gives - takes)
        worst[:, 0, 0] = np.inf  # giving nothing for nothing
        swap = np.maximum(top - ends[a] + ends, load + ends[a] - ends)
        if last[a] is None:
            swap[:] = np.inf
        options = np.concatenate([worst.reshape(s, -1), swap[:, None]], axis=1)
        options[closed] = np.inf
        options[a] = np.inf
        pick = int(np.argmin(options))
        b, k = divmod(pick, options.shape[1])
        if not options[b, k] < top - 1e-12 * abs(top):
            return
        if k == options.shape[1] - 1:
            x, y = ends[a], ends[b]
            last[a], last[b] = last[b], last[a]
            ends[a], ends[b] = y, x
        else:
            ca, cb = pairs[a][k % xs.size], pairs[b][k // xs.size]
            x, y = xs[k % xs.size], given[b][k // xs.size]
            out_a, out_b = [placed[a][i] for i in ca], [placed[b][j] for j in cb]
            placed[a] = [p for i, p in enumerate(placed[a]) if i not in ca] + out_b
            placed[b] = [p for j, p in enumerate(placed[b]) if j not in cb] + out_a
            refresh(a)
            refresh(b)
        load[a] += y - x
        load[b] += x - y


def fill_by(
    loose: Pieces, base: NDArray[np.float64], targets: NDArray[np.int64], delta: float, horizon: float
) -> list[list[list[Any]]] | None:
    """Fit the pieces on the targets by ``horizon``: largest first, whole if it fits (best fit), else cut."""
    room = np.full(base.size, -np.inf)
    room[targets] = horizon - base[targets]
    out: list[list[list[Any]]] = [[] for _ in range(base.size)]
    # Round-off of the rooms (differences of times near the horizon): relative, never absolute,
    # so that phases of 1e-12 s are packed as phases of 1 s are.
    eps = 1e-12 * abs(horizon)
    for perm, w in sorted(loose, key=lambda p: -p[1]):
        left = w
        fits = np.nonzero(room >= delta + left)[0]
        if fits.size:
            b = int(fits[np.argmin(room[fits])])
            out[b].append([perm, left])
            room[b] -= delta + left
            continue
        for b in np.argsort(-room, kind="stable"):
            if room[b] <= delta + eps or left <= 0:
                break
            x = min(left, float(room[b]) - delta)
            out[int(b)].append([perm, x])
            room[b] -= delta + x
            left -= x
        if left > eps:
            return None
        if left > 0:  # float crumbs go to the last piece, so the weight is served exactly
            last = next((sw for sw in reversed(out) if sw and sw[-1][0] is perm), None)
            if last is None:  # no room took any of it: it does not fit, whatever its size
                return None
            last[-1][1] += left
    return out


def pack_phase_pieces(
    loose: Pieces,
    base: NDArray[np.float64],
    targets: NDArray[np.int64],
    delta: float,
    current: float,
) -> list[list[list[Any]]] | None:
    """Bisect on the phase end over :func:`fill_by`: the packing, or None if ``current`` is not beaten."""
    total = sum(w for _, w in loose) + delta * len(loose)
    lo = max(float(base.max()), (total + float(base[targets].sum())) / targets.size)
    hi = current
    if hi <= lo or fill_by(loose, base, targets, delta, hi) is None:
        return None
    for _ in range(40):
        if hi - lo <= 1e-9 * hi:
            break
        mid = 0.5 * (lo + hi)
        if fill_by(loose, base, targets, delta, mid) is None:
            lo = mid
        else:
            hi = mid
    return fill_by(loose, base, targets, delta, hi)
