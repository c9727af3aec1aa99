"""Lay a phase's pieces out on the switches: the delay rule with persistence, padding, ordering."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched.model import Configuration, Demand
from ocsched.sequence._common import Held, Pieces, perm_key
from ocsched.timing import earliest_start


def within(perm: NDArray[np.int64], outer: NDArray[np.int64]) -> bool:
    """True if every circuit of ``perm`` is a circuit of ``outer``."""
    if perm is outer:
        return True
    if perm[0] >= 0 and perm[0] != outer[0]:  # the common case, without three array passes
        return False
    on = perm >= 0
    return not bool(((outer != perm) & on).any())


class Padding:
    """Extend a new configuration's circuits to the largest permutation of the iteration that contains them.

    The extra circuits carry nothing now, but a later phase whose permutation lies within the
    padded one (a pipeline ramping up: more stages active slot after slot) then finds it held.
    """

    def __init__(self, perms: list[NDArray[np.int64]]) -> None:
        unique = {perm_key(p): p for p in perms if (p >= 0).any()}
        n = next(iter(unique.values())).size if unique else 1
        self.lib = np.array(list(unique.values()), dtype=np.int64).reshape(len(unique), n)
        self.size = (self.lib >= 0).sum(axis=1)
        pid, ins = np.nonzero(self.lib >= 0)
        code = ins * n + self.lib[pid, ins]  # circuit (i, j) as i * n + j
        order = np.argsort(code, kind="stable")
        self.code, self.pid, self.n = code[order], pid[order], n
        self.cache: dict[bytes, NDArray[np.int64]] = {}

    def __call__(self, perm: NDArray[np.int64]) -> NDArray[np.int64]:
        k = perm_key(perm)
        if k in self.cache:
            return self.cache[k]
        on = np.nonzero(perm >= 0)[0]
        best = perm
        if 0 < on.size < perm.size and self.lib.size:
            c = int(on[0]) * self.n + int(perm[on[0]])
            lo, hi = np.searchsorted(self.code, [c, c + 1])
            ids = self.pid[lo:hi]
            ok = ids[(self.lib[ids][:, on] == perm[on]).all(axis=1)]
            if ok.size:
                top = ok[np.argmax(self.size[ok])]
                if self.size[top] > on.size:
                    best = self.lib[top]
        self.cache[k] = best
        return best


def lay_out_phase(
    plan: list[list[tuple[NDArray[np.int64], float]]],
    held: Held,
    release: float,
    delta: float,
    pad: Callable[[NDArray[np.int64]], NDArray[np.int64]] | None = None,
) -> list[list[Configuration]]:
    """Start each switch's pieces as early as the delay rule with persistence and the barrier allow.

    A piece whose circuits the switch already holds runs with the held permutation (it persists);
    another is padded by ``pad`` (its coverage is unchanged either way).
    """
    out = []
    for b, seq in enumerate(plan):
        prev = held[b]
        confs = []
        for perm, w in seq:
            if w <= 0:
                continue
            stays = prev is not None and (perm is prev.perm or within(perm, prev.perm))
            if stays:
                perm = prev.perm  # type: ignore[union-attr]
            elif pad is not None:
                perm = pad(perm)
            # The delay rule with persistence (ocsched.iteration.start_after); `stays` is known here.
            start = earliest_start(None if prev is None else prev.end, 0.0 if stays else delta)
            conf = Configuration(max(release, start), w, perm)
            confs.append(conf)
            prev = conf
        out.append(confs)
    return out


def phase_end(confs: list[list[Configuration]], release: float) -> float:
    return max([release, *(c.end for sw in confs for c in sw)])


#: ``tail_cost(perm)``: what holding ``perm`` into the next phase costs it (inf: of no use there).
TailCost = Callable[[NDArray[np.int64]], float]


def order(
    seq: list[tuple[NDArray[np.int64], float]],
    first: bytes | None,
    following: set[bytes],
    tail_cost: TailCost | None = None,
) -> list[tuple[NDArray[np.int64], float]]:
    """Held permutation first (it persists), one the next phase uses last (it may persist), largest first.

    When no piece is one the next phase uses, the piece of least finite ``tail_cost`` goes last:
    the order within a phase does not move its end, and the next phase may keep what a switch
    ends with (:func:`ocsched.sequence.seq.reuse`).
    """
    rest = sorted(seq, key=lambda p: -p[1])
    head = [p for p in rest if first is not None and perm_key(p[0]) == first][:1]
    rest = [p for p in rest if not (head and p is head[0])]
    tail = [p for p in rest if perm_key(p[0]) in following][:1]
    if not tail and tail_cost is not None and rest:
        costs = [tail_cost(p[0]) for p in rest]
        best = int(np.argmin(costs))
        if np.isfinite(costs[best]):
            tail = [rest[best]]
    rest = [p for p in rest if not (tail and p is tail[0])]
    return head + rest + tail


def reuse_cost(demand: Demand) -> TailCost:
    """``tail_cost`` for a next phase of demand ``demand``: the largest entry on the permutation.

    Kept into that phase (:func:`ocsched.sequence.seq.reuse`), a permutation serves its entries
    whole, so its weight there is about its largest entry; one whose circuits mostly carry
    nothing there is of no use (inf), as ``reuse`` judges.
    """
    dense = demand.to_dense()
    cache: dict[bytes, float] = {}

    def cost(perm: NDArray[np.int64]) -> float:
        key = perm_key(perm)
        if key not in cache:
            on = np.nonzero(perm >= 0)[0]
            vals = dense[on, perm[on]]
            cache[key] = float(vals.max()) if on.size and 2 * int((vals > 0).sum()) >= on.size else np.inf
        return cache[key]

    return cost


def relabel(
    switches: tuple[tuple[Configuration, ...], ...],
    held: Held,
    ready: NDArray[np.float64],
    following: set[bytes],
    delta: float,
    tail_cost: TailCost | None = None,
) -> list[list[tuple[NDArray[np.int64], float]]]:
    """Give each base timeline to the switch holding one of its permutations, else the earliest ready one."""
    s = len(switches)
    plan: list[list[tuple[NDArray[np.int64], float]] | None] = [None] * s
    free = list(range(s))
    keys = [{perm_key(c.perm) for c in sw} for sw in switches]
    for b in range(s):
        h = held[b]
        if h is None:
            continue
        hk = perm_key(h.perm)
        match = next((j for j in free if hk in keys[j]), None)
        if match is not None:
            free.remove(match)
            plan[b] = [(c.perm, c.duration) for c in switches[match]]
    load = {j: sum(c.duration for c in switches[j]) + delta * len(switches[j]) for j in free}
    timelines = sorted(free, key=lambda j: -load[j])
    idle = sorted((b for b in range(s) if plan[b] is None), key=lambda b: ready[b])
    for b, j in zip(idle, timelines, strict=True):
        plan[b] = [(c.perm, c.duration) for c in switches[j]]
    held_keys = [None if h is None else perm_key(h.perm) for h in held]
    return [order(p or [], held_keys[b], following, tail_cost) for b, p in enumerate(plan)]


def merge(switches: tuple[tuple[Configuration, ...], ...]) -> Pieces:
    """The distinct permutations of a schedule with their total time held (coverage is unchanged)."""
    total: dict[bytes, list[Any]] = {}
    for sw in switches:
        for c in sw:
            k = perm_key(c.perm)
            if k in total:
                total[k][1] += c.duration
            else:
                total[k] = [c.perm, c.duration]
    return [(p, float(w)) for p, w in total.values() if w > 0]


def holders(pieces: Pieces, held: Held) -> list[list[int]]:
    """For each piece, the switches whose held permutation has all its circuits (it runs there, no delay)."""
    s = len(held)
    if not pieces or all(h is None for h in held):
        return [[] for _ in pieces]
    n = pieces[0][0].shape[0]
    hs = np.full((s, n), -2, dtype=np.int64)
    for b, h in enumerate(held):
        if h is not None:
            hs[b] = h.perm
    ps = np.array([p for p, _ in pieces], dtype=np.int64)
    match = np.asarray(hs[None, :, :] == ps[:, None, :], dtype=bool) | (ps[:, None, :] < 0)
    active = np.asarray((ps >= 0).any(axis=1), dtype=bool)
    inside = match.all(axis=2) & active[:, None]  # (pieces, s)
    return [np.nonzero(row)[0].tolist() for row in inside]
