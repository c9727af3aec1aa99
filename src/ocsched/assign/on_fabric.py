"""Placement on any fabric: per-switch delay and rate, down windows, failed links.

The fabric-aware counterparts of :mod:`ocsched.assign.uniform` (greedy, equalize, fill, pack),
used by :func:`ocsched.assign.place_on_fabric` when the switches are not identical, a switch
fails, or scheduling starts later than 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ocsched.assign.uniform import Assignment
from ocsched.decompose import Decomposition
from ocsched.errors import InfeasibleError
from ocsched.fabric import Fabric
from ocsched.timing import lay_out_windows


@dataclass(frozen=True)
class _View:
    """What placement needs of a fabric: per-switch delay, rate, down windows; time starts at t0."""

    delta: NDArray[np.float64]
    rate: NDArray[np.float64]
    windows: list[list[tuple[float, float]]]
    t0: float

    @classmethod
    def of(cls, fabric: Fabric, t0: float) -> _View:
        return cls(
            np.array(fabric.deltas, dtype=np.float64),
            np.array(fabric.rates, dtype=np.float64),
            [[w for w in fabric.windows(b) if w[1] > t0] for b in range(fabric.size)],
            float(t0),
        )

    @property
    def size(self) -> int:
        return int(self.delta.size)

    def finish(self, b: int, works: list[float]) -> float:
        """When switch b ends holding ``works`` (demand) in this order; inf if it cannot serve them."""
        if not works:
            return self.t0
        d, r = float(self.delta[b]), float(self.rate[b])
        if not self.windows[b]:
            return self.t0 + sum(w / r for w in works) + d * len(works)
        segs = lay_out_windows([w / r for w in works], d, self.windows[b], t0=self.t0)
        for w, sg in zip(works, segs, strict=True):
            if sum(x for _, x in sg) < (w / r) * (1 - 1e-12):
                return np.inf
        return max(a + x for sg in segs for a, x in sg)


def _eligible(
    dec: Decomposition, fabric: Fabric, t0: float = 0.0
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """Split permutations around failed links; return perms, weights and which switch may hold each.

    A permutation whose circuits avoid every failed link of some switch keeps its weight and may go
    to any such switch; one that every switch blocks somewhere is cut into parts, each the circuits
    one switch can carry (the switch allowing the most first), each part with the full weight.
    A switch down for good from ``t0`` carries nothing.
    """
    s = fabric.size
    blocked = [set(fabric.failed_ports(b)) for b in range(s)]
    dead = [any(a <= t0 and e == np.inf for a, e in fabric.windows(b)) for b in range(s)]
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
                    down = [b for b in range(s) if dead[b]]
                    why = (
                        f"every switch is down for good from t = {t0:g}"
                        if len(down) == s
                        else "a failed link on every switch"
                        + (f" that is not down for good from t = {t0:g} ({down} are)" if down else "")
                    )
                    raise InfeasibleError(f"circuit {int(ins[c])}->{int(outs[c])} still has demand but {why}")
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


def _greedy_on(weights: NDArray[np.float64], elig: NDArray[np.bool_], view: _View) -> Assignment:
    """Largest first onto the eligible switch where it finishes earliest (delay and rate of each)."""
    out: Assignment = [[] for _ in range(view.size)]
    fin = np.full(view.size, view.t0)
    for l in np.argsort(-weights, kind="stable"):
        w = float(weights[l])
        best, best_b = np.inf, -1
        for b in np.nonzero(elig[l])[0]:
            if view.windows[b]:
                f = view.finish(int(b), [x for _, x in out[b]] + [w])
            else:
                f = fin[b] + view.delta[b] + w / view.rate[b]
            if f < best:
                best, best_b = f, int(b)
        if best_b < 0:
            raise InfeasibleError("a permutation fits on no switch of the fabric (all down or blocked)")
        out[best_b].append((int(l), w))
        fin[best_b] = best
    return out


def _finishes(assignment: Assignment, view: _View) -> NDArray[np.float64]:
    return np.array([view.finish(b, [w for _, w in sw]) for b, sw in enumerate(assignment)])


def _equalize_on(
    assignment: Assignment, elig: NDArray[np.bool_], view: _View, *, max_rounds: int | None = None
) -> tuple[Assignment, int]:
    """Spectra's equalization with per-switch delay and rate: two switches made to end together.

    The most loaded switch A gives x of a piece to the eligible switch B finishing first, with x
    solving ``f_A - x / r_A = f_B + delta_B + x / r_B``; a move is kept only if both then end
    before f_A did, so the largest finish time never rises.
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
            fa, fb = view.finish(a_sw, [w for _, w in trial_a]), view.finish(b_sw, [w for _, w in trial_b])
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
    """Time switch b has for delays and configurations in ``[t0, horizon]`` (windows and restarts off)."""
    room = horizon - view.t0
    for a, e in view.windows[b]:
        lo, hi = max(a, view.t0), min(e, horizon)
        if hi > lo:
            room -= hi - lo
        if view.t0 < e < horizon:
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
        return None  # the window estimate was optimistic
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
