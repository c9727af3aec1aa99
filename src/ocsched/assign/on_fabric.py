"""Placement on any fabric: per-switch delay, rate and start, down windows, failed links.

The fabric-aware counterparts of :mod:`ocsched.assign.uniform` (greedy, equalize, fill, pack),
used by :func:`ocsched.assign.place_on_fabric` when the switches are not identical, a switch
fails, a link fails, or scheduling starts later than 0.

A link failing at time f lets its port be used on its switch by configurations that end by f
(:mod:`ocsched.timing`). Placement reads it as a *deadline* on that switch: a permutation using
the port may go there if it ends by f (:meth:`_View.arrange` runs such pieces first, earliest
deadline first, when the switch's usual order would miss one), and not at all if f leaves no
time after the switch's first delay (the port is *blocked* there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ocsched.assign.uniform import Assignment
from ocsched.bounds.availability import merged_windows
from ocsched.decompose import Decomposition
from ocsched.errors import InfeasibleError, InvalidInputError
from ocsched.fabric import Fabric
from ocsched.timing import lay_out_windows, time_to_serve

Pieces = list[tuple[int, float]]


def starts_of(fabric: Fabric, t0: float | Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
    """Each switch's start: ``t0`` for all, or one entry per switch (checked)."""
    out = np.array(np.broadcast_to(np.asarray(t0, dtype=np.float64), (fabric.size,)))
    if np.ndim(t0) and np.size(t0) != fabric.size:
        raise InvalidInputError(f"`t0` must have one entry per switch ({fabric.size}); got {np.size(t0)}")
    if not np.isfinite(out).all() or (out < 0).any():
        raise InvalidInputError(f"`t0` must be finite and >= 0; got {np.asarray(t0).tolist()}")
    return out


def fail_times(fabric: Fabric, ports: int) -> NDArray[np.float64] | None:
    """``fail[b, p]``: when port p's link to switch b fails (inf: never); None if no link fails."""
    if not fabric.failed_links:
        return None
    fail = np.full((fabric.size, ports), np.inf)
    for x in fabric.failed_links:
        if x.port < ports:
            fail[x.switch, x.port] = min(fail[x.switch, x.port], x.start)
    return fail


@dataclass(frozen=True)
class _View:
    """What placement needs of a fabric: per-switch delay, rate, start, down windows, link deadlines.

    ``start[b]``: switch b is dark from then on (its first configuration starts a delay later).
    ``fail``: see :func:`fail_times`. ``dl[l, b]``: the deadline of permutation l on switch b
    (the earliest failure of a link it uses there; inf: none), for the permutations of
    :meth:`with_perms`.
    """

    delta: NDArray[np.float64]
    rate: NDArray[np.float64]
    windows: list[list[tuple[float, float]]]
    start: NDArray[np.float64]
    fail: NDArray[np.float64] | None = None
    dl: NDArray[np.float64] | None = None

    @classmethod
    def of(cls, fabric: Fabric, t0: float | NDArray[np.float64], *, ports: int | None = None) -> _View:
        start = starts_of(fabric, t0)
        return cls(
            np.array(fabric.deltas, dtype=np.float64),
            np.array(fabric.rates, dtype=np.float64),
            [[w for w in fabric.windows(b) if w[1] > start[b]] for b in range(fabric.size)],
            start,
            None if ports is None else fail_times(fabric, ports),
        )

    @property
    def size(self) -> int:
        return int(self.delta.size)

    @property
    def t0(self) -> float:
        """The earliest start."""
        return float(self.start.min())

    def dead(self, b: int) -> bool:
        """Switch b is down for good from its start."""
        return any(a <= self.start[b] and e == np.inf for a, e in self.windows[b])

    def gone(self, b: int) -> float:
        """When switch b goes down for good (inf: never)."""
        return min((a for a, e in self.windows[b] if e == np.inf), default=np.inf)

    def room(self, b: int, until: float, start: float | None = None) -> float:
        """Switch b's up time from ``start`` (default its start) until ``until``: the windows' union
        out (a fabric may list overlapping or repeated windows)."""
        t0 = float(self.start[b]) if start is None else start
        return until - t0 - sum(max(e - max(a, t0), 0.0) for a, e in merged_windows(self.windows[b], until))

    def blocked(self) -> NDArray[np.bool_] | None:
        """``blocked[b, p]``: port p cannot be lit on switch b at all (its link fails before a delay
        has passed from the start); None if no link fails."""
        if self.fail is None:
            return None
        return np.asarray(self.fail <= (self.start + self.delta)[:, None])

    def with_perms(self, perms: NDArray[np.int64]) -> _View:
        """This view with the deadlines of ``perms`` (none if no link fails)."""
        if self.fail is None or not perms.size:
            return replace(self, dl=None)
        m = perms.shape[0]
        used = perms >= 0
        outs = np.where(used, perms, 0)
        dl = np.full((m, self.size), np.inf)
        for b in range(self.size):
            f = self.fail[b]
            dl[:, b] = np.minimum(
                np.where(used, f[None, :], np.inf).min(axis=1, initial=np.inf),
                np.where(used, f[outs], np.inf).min(axis=1, initial=np.inf),
            )
        return replace(self, dl=dl)

    def ignoring_links(self) -> _View:
        """This view as if no link failed."""
        return replace(self, fail=None, dl=None)

    def deadline(self, l: int, b: int) -> float:
        return np.inf if self.dl is None else float(self.dl[l, b])

    def ends(self, b: int, pieces: Pieces) -> list[float] | None:
        """All-stop end of each piece on switch b in this order; None if windows leave work unserved."""
        d, r = float(self.delta[b]), float(self.rate[b])
        durs = [time_to_serve(w, r) for _, w in pieces]
        segs = lay_out_windows(durs, d, self.windows[b], t0=float(self.start[b]))
        out = []
        for t, sg in zip(durs, segs, strict=True):
            if sum(x for _, x in sg) < t * (1 - 1e-12) or not sg:
                return None
            out.append(max(a + x for a, x in sg))
        return out

    def meets(self, b: int, pieces: Pieces, ends: list[float]) -> bool:
        return all(e <= self.deadline(l, b) for (l, _), e in zip(pieces, ends, strict=True))

    def arrange(self, b: int, pieces: Pieces, base: Pieces | None = None) -> Pieces | None:
        """The order switch b runs ``pieces`` in: ``base`` (default: as given) if it meets every
        deadline, else the pieces with a deadline first, earliest first (then the longest), the
        rest in ``base`` order; None if neither order serves everything in time."""
        order = pieces if base is None else base
        if self.dl is None or all(self.deadline(l, b) == np.inf for l, _ in pieces):
            return order if (not self.windows[b] or self.ends(b, order) is not None) else None
        ends = self.ends(b, order)
        if ends is not None and self.meets(b, order, ends):
            return order
        ranked = sorted(
            (p for p in order if self.deadline(p[0], b) < np.inf),
            key=lambda p: (self.deadline(p[0], b), -p[1]),
        )
        edf = ranked + [p for p in order if self.deadline(p[0], b) == np.inf]
        ends = self.ends(b, edf)
        return edf if ends is not None and self.meets(b, edf, ends) else None

    def finish(self, b: int, pieces: Pieces) -> float:
        """When switch b ends holding ``pieces`` (demand); inf if it cannot serve them (in time)."""
        if not pieces:
            return float(self.start[b])
        d, r = float(self.delta[b]), float(self.rate[b])
        if not self.windows[b] and (self.dl is None or all(self.deadline(l, b) == np.inf for l, _ in pieces)):
            return float(self.start[b]) + sum(w / r for _, w in pieces) + d * len(pieces)
        order = self.arrange(b, pieces)
        if order is None:
            return np.inf
        ends = self.ends(b, order)
        return np.inf if ends is None else max(ends)


def _eligible(
    dec: Decomposition, view: _View
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """Split permutations around blocked links; return perms, weights and which switch may hold each.

    A permutation whose circuits avoid every blocked port of some switch keeps its weight and
    may go to any such switch (where a link of it fails later, by that deadline); one that every
    switch blocks somewhere is cut into parts, each the circuits one switch can carry (the
    switch allowing the most first), each part with the full weight. A switch down for good from
    its start carries nothing.
    """
    s = view.size
    blocked_all = view.blocked()
    blocked = [
        set() if blocked_all is None else set(np.nonzero(blocked_all[b])[0].tolist()) for b in range(s)
    ]
    dead = [view.dead(b) for b in range(s)]
    perms_out: list[NDArray[np.int64]] = []
    weights_out: list[float] = []
    elig_out: list[NDArray[np.bool_]] = []
    for perm, w in zip(dec.perms, dec.weights, strict=True):
        (ins,) = np.nonzero(perm >= 0)
        outs = perm[ins]
        left = np.ones(ins.size, dtype=bool)
        while left.any():
            # allowed[b, c]: circuit c can be lit on switch b
            allowed = np.array(
                [
                    np.zeros(ins.size, bool)
                    if dead[b]
                    else ~np.isin(ins, list(bl)) & ~np.isin(outs, list(bl))
                    if bl
                    else np.ones(ins.size, bool)
                    for b, bl in enumerate(blocked)
                ]
            ).reshape(s, ins.size)
            whole = allowed[:, left].all(axis=1)
            if whole.any():
                part = left.copy()
                elig = whole
            else:
                counts = (allowed & left).sum(axis=1)
                b = int(np.argmax(counts))
                if counts[b] == 0:
                    c = int(np.nonzero(left)[0][0])
                    raise InfeasibleError(
                        f"circuit {int(ins[c])}->{int(outs[c])} still has demand but "
                        + _why_blocked(view, dead, [int(ins[c]), int(outs[c])])
                    )
                part = allowed[b] & left
                elig = allowed[:, part].all(axis=1)
            p = np.full(perm.size, -1, dtype=np.int64)
            p[ins[part]] = outs[part]
            perms_out.append(p)
            weights_out.append(float(w))
            elig_out.append(np.asarray(elig, dtype=bool))
            left &= ~part
    m = len(perms_out)
    return (
        np.array(perms_out, dtype=np.int64).reshape(m, dec.perms.shape[1] if dec.perms.ndim == 2 else 0),
        np.array(weights_out, dtype=np.float64),
        np.array(elig_out, dtype=bool).reshape(m, s),
    )


def _why_blocked(view: _View, dead: list[bool], ports: list[int]) -> str:
    """Why no switch can light a circuit of ``ports``: the reason named for each switch."""
    s = view.size
    t0 = view.t0
    if all(dead):
        return f"every switch is down for good from t = {t0:g}"
    down = [b for b in range(s) if dead[b]]
    why = "a failed link on every switch" + (
        f" that is not down for good from t = {t0:g} ({down} are)" if down else ""
    )
    if view.fail is not None:
        late = [
            f"switch {b} at {float(view.fail[b, p]):g}"
            for b in range(s)
            if not dead[b]
            for p in ports
            if 0 < view.fail[b, p] < np.inf
        ]
        if late:
            why += " (links failing by the first reconfiguration: " + ", ".join(late) + ")"
    return why


def _greedy_on(weights: NDArray[np.float64], elig: NDArray[np.bool_], view: _View) -> Assignment | None:
    """Largest first onto the eligible switch where it finishes earliest (delay, rate, deadlines of each).

    None if some permutation fits on no switch (every switch that may hold it would miss a deadline).
    """
    out: Assignment = [[] for _ in range(view.size)]
    fin = view.start.copy()
    for l in np.argsort(-weights, kind="stable"):
        w = float(weights[l])
        best, best_b = np.inf, -1
        for b in np.nonzero(elig[l])[0]:
            if view.windows[b] or view.deadline(int(l), int(b)) < np.inf:
                f = view.finish(int(b), [*out[b], (int(l), w)])
            else:
                f = fin[b] + view.delta[b] + w / view.rate[b]
            if f < best:
                best, best_b = f, int(b)
        if best_b < 0:
            return None
        out[best_b].append((int(l), w))
        fin[best_b] = best
    return out


def _finishes(assignment: Assignment, view: _View) -> NDArray[np.float64]:
    return np.array([view.finish(b, sw) for b, sw in enumerate(assignment)])


def _equalize_on(
    assignment: Assignment, elig: NDArray[np.bool_], view: _View, *, max_rounds: int | None = None
) -> tuple[Assignment, int]:
    """Spectra's equalization with per-switch delay and rate: two switches made to end together.

    The most loaded switch A gives x of a piece to the eligible switch B finishing first, with x
    solving ``f_A - x / r_A = f_B + delta_B + x / r_B``; a move is kept only if both then end
    before f_A did (deadlines met), so the largest finish time never rises.
    """
    out = [list(sw) for sw in assignment]
    s = view.size
    if s < 2:
        return out, 0
    fin = _finishes(out, view)
    cap = max_rounds if max_rounds is not None else 100 * (s + sum(len(sw) for sw in out))
    splits = 0
    for _ in range(cap):
        a_sw = int(np.argmax(fin))
        moved = False
        for k in sorted(range(len(out[a_sw])), key=lambda t: -out[a_sw][t][1]):
            l, a = out[a_sw][k]
            cands = [b for b in np.nonzero(elig[l])[0] if b != a_sw]
            if not cands:
                continue
            b_sw = int(min(cands, key=lambda b: fin[b]))
            gap = fin[a_sw] - fin[b_sw] - view.delta[b_sw]
            if gap <= 1e-9 * fin[a_sw]:
                continue
            x = float(gap / (1.0 / view.rate[a_sw] + 1.0 / view.rate[b_sw]))
            if x >= a or x <= 0:
                continue
            trial_a = [*out[a_sw][:k], (l, a - x), *out[a_sw][k + 1 :]]
            trial_b = [*out[b_sw], (l, x)]
            fa, fb = view.finish(a_sw, trial_a), view.finish(b_sw, trial_b)
            if max(fa, fb) >= fin[a_sw] * (1 - 1e-12):
                continue
            out[a_sw], out[b_sw] = trial_a, trial_b
            fin[a_sw], fin[b_sw] = fa, fb
            splits += 1
            moved = True
            break
        if not moved:
            break
    return out, splits


def _room(view: _View, b: int, horizon: float) -> float:
    """Time switch b has for delays and configurations in ``[start, horizon]`` (windows and restarts off)."""
    t0 = float(view.start[b])
    room = horizon - t0
    for a, e in view.windows[b]:
        lo, hi = max(a, t0), min(e, horizon)
        if hi > lo:
            room -= hi - lo
        if t0 < e < horizon:
            room -= float(view.delta[b])  # the switch comes back dark
    return room


def _fill_on(
    weights: NDArray[np.float64], elig: NDArray[np.bool_], view: _View, horizon: float
) -> Assignment | None:
    """:func:`fill` with per-switch delay, rate and eligibility; None if it does not fit by ``horizon``."""
    s = view.size
    room = np.array([_room(view, b, horizon) for b in range(s)])
    out: Assignment = [[] for _ in range(s)]
    for l in np.argsort(-weights, kind="stable"):
        weight = left = float(weights[l])
        ok = elig[l]
        need = view.delta + left / view.rate
        fits = np.nonzero(ok & (room >= need))[0]
        if fits.size:
            # Largest first: big pieces go where the delay is dearest (it weighs least on them),
            # best fit among equals.
            b = int(fits[np.lexsort((room[fits], -view.delta[fits] / view.rate[fits]))[0]])
            out[b].append((int(l), left))
            room[b] -= need[b]
            continue
        last = -1
        for b in np.argsort(-room, kind="stable"):
            if not ok[b]:
                continue
            if room[b] - view.delta[b] <= 0 or left <= 0:
                continue
            x = min(left, float((room[b] - view.delta[b]) * view.rate[b]))
            out[int(b)].append((int(l), x))
            room[b] -= view.delta[b] + x / view.rate[b]
            left -= x
            last = int(b)
        if left > 1e-12 * weight or last < 0:
            return None
        if left > 0:
            out[last][-1] = (int(l), out[last][-1][1] + left)
    if _finishes(out, view).max(initial=view.t0) > horizon * (1 + 1e-12):
        return None  # the window estimate was optimistic, or a deadline is missed
    return out


def _pack_on(
    weights: NDArray[np.float64], elig: NDArray[np.bool_], view: _View, start: Assignment
) -> Assignment:
    """Bisection on the makespan with :func:`_fill_on`, keeping ``start`` if it ends no later."""
    best, best_t = start, float(_finishes(start, view).max(initial=view.t0))
    if not weights.size or not np.isfinite(best_t):
        return best
    cap = float(view.rate.sum())
    lo, hi = view.t0 + float(weights.sum()) / cap, best_t
    for _ in range(50):
        if hi - lo <= 1e-9 * hi:  # finer than any makespan difference worth a probe
            break
        mid = 0.5 * (lo + hi)
        trial = _fill_on(weights, elig, view, mid)
        if trial is None:
            lo = mid
        else:
            hi = mid
            if float(_finishes(trial, view).max(initial=view.t0)) < best_t:
                best, best_t = trial, float(_finishes(trial, view).max(initial=view.t0))
    return best


def place_by_method(
    weights: NDArray[np.float64], elig: NDArray[np.bool_], view: _View, method: str
) -> list[Assignment]:
    """The assignments ``method`` considers, the one it returns last: greedy; greedy then equalize;
    and for pack also the bisection from there. Empty if greedy cannot place everything."""
    greedy = _greedy_on(weights, elig, view)
    if greedy is None:
        return []
    if method == "greedy":
        return [greedy]
    eq, _ = _equalize_on(greedy, elig, view)
    if method != "pack":
        return [eq]
    return [eq, _pack_on(weights, elig, view, eq)]
