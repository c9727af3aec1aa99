"""Place weighted permutations on s parallel switches: greedy LPT, equalization, packing, timeline.

An *assignment* is, per switch, a list of pieces ``(l, length)``: permutation l held for
``length``. A switch's load is :func:`ocsched.timing.busy` of its pieces.

Every placement method is an entry of :data:`PLACEMENTS`, reached through :func:`place`:

============  =====================================================================================
``greedy``    Spectra's step 2: largest first onto the least-loaded switch
``equalize``  ``greedy`` then Spectra's step 3: split pieces until the loads are within delta
``pack``      ``equalize``, then bisection on the makespan with best-fit packing if that ends earlier
============  =====================================================================================

:func:`place_on_fabric` does the same on any fabric. The package holds one idea per module:
:mod:`~ocsched.assign.uniform` (the methods on identical switches), :mod:`~ocsched.assign.on_fabric`
(their per-switch delay, rate, window and failed-link versions) and :mod:`~ocsched.assign.layout`
(assignments laid out in time, circuit-by-circuit timelines under the partial model).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_choice
from ocsched.assign.cut_off import cut_off_first
from ocsched.assign.layout import _share, bff_timeline, order_for_partial, timeline_on
from ocsched.assign.links import around_links, coverage_demand
from ocsched.assign.on_fabric import _eligible, _View, place_by_method, starts_of
from ocsched.assign.uniform import (
    Assignment,
    equalize,
    fill,
    greedy,
    loads,
    pack,
    spectra_placement,
    timeline,
)
from ocsched.decompose import Decomposition
from ocsched.errors import InfeasibleError
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand

__all__ = [
    "PLACEMENTS",
    "Assignment",
    "Placement",
    "bff_timeline",
    "equalize",
    "fill",
    "greedy",
    "loads",
    "order_for_partial",
    "pack",
    "place",
    "place_on_fabric",
    "spectra_placement",
    "timeline",
    "timeline_on",
]


@dataclass(frozen=True)
class Placement:
    """A registered placement method.

    ``func(weights, switches, delta)`` returns ``(assignment, splits)``: the pieces on each
    switch, and how many pieces there are beyond one per permutation.
    """

    func: Callable[[NDArray[np.float64], int, float], tuple[Assignment, int]]
    description: str


def _greedy(weights: NDArray[np.float64], switches: int, delta: float) -> tuple[Assignment, int]:
    return greedy(weights, switches, delta), 0


def _equalize(weights: NDArray[np.float64], switches: int, delta: float) -> tuple[Assignment, int]:
    return spectra_placement(weights, switches, delta)  # equalize(greedy(...)), compiled


PLACEMENTS: dict[str, Placement] = {
    "greedy": Placement(_greedy, "largest first onto the least-loaded switch (Spectra's step 2)"),
    "equalize": Placement(_equalize, "greedy, then split pieces until loads are within delta (steps 2-3)"),
    "pack": Placement(pack, "equalize, or bisection on the makespan with best-fit packing if shorter"),
}


def place(
    dec: Decomposition, *, switches: int, delta: float, method: str = "equalize"
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """Place a decomposition on ``switches`` switches and lay out each switch's timeline.

    Parameters
    ----------
    dec : Decomposition
        Weighted permutations.
    switches, delta
        The fabric: number of switches and reconfiguration delay.
    method : str
        A key of :data:`PLACEMENTS`.

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Per switch, its configurations in time order (:func:`timeline`).
    splits : int
        Pieces beyond one per permutation.

    Examples
    --------
    >>> dec = Decomposition(np.array([[1, 0], [-1, -1]]), np.array([3.0, 0.0]))
    >>> confs, splits = place(dec, switches=2, delta=0.5)
    >>> [[(c.start, c.duration) for c in sw] for sw in confs], splits
    ([[(0.5, 1.75)], [(0.5, 1.25)]], 1)
    """
    check_choice(method, "method", PLACEMENTS)
    assignment, splits = PLACEMENTS[method].func(dec.weights, switches, delta)
    return timeline(assignment, dec.perms, delta), splits


def place_on_fabric(
    dec: Decomposition,
    fabric: Fabric,
    *,
    method: str = "equalize",
    t0: float | Sequence[float] | NDArray[np.float64] = 0.0,
    demand: Demand | None = None,
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """Place a decomposition on any fabric and lay out each switch (see :func:`timeline_on`).

    Greedy places each permutation, largest first, where it finishes earliest given each switch's
    delay, rate, start, down windows and link deadlines, only on switches whose links its
    circuits can use (permutations no switch can carry whole are cut around blocked links
    first); equalize and pack generalise :func:`equalize` and :func:`pack` with each switch's
    delay and rate. On identical switches without failures the assignment is exactly
    :func:`place`'s (so only the layout differs under the partial model).

    A link failing at time f blocks its port on its switch only if f leaves no time after the
    switch's first delay; otherwise a permutation using it may go there if it ends by f (such
    pieces run first, earliest deadline first), so a link failing after the switch's work ends
    costs nothing. Where links fail, the method is also run as if they worked and each piece
    is turned into the circuits its switch can carry, the lengths re-fit by an LP that serves
    the left-out entries elsewhere (:func:`~ocsched.assign.links.around_links`); the layout that
    ends first is kept.

    Scheduling starts at ``t0`` (every switch dark from then on), or at ``t0[b]`` on switch b.
    Under the partial model, ``demand`` (the demand ``dec`` covers) lets each circuit hold only
    its share of its permutation's time (see :func:`timeline_on`); with failed links it is also
    what the re-fit must serve (default: what ``dec`` covers).

    Raises
    ------
    InfeasibleError
        If some demand entry can be lit on no switch (every link of one of its ports fails
        before it could be used, or the switches are down for good), or a port's demand cannot
        be served before its links fail; the message says which and why.

    Examples
    --------
    >>> from ocsched.fabric import Switch
    >>> dec = Decomposition(np.array([[1, 0], [-1, -1]]), np.array([3.0, 0.0]))
    >>> fab = Fabric((Switch(0.5), Switch(0.5, rate=2.0)))
    >>> confs, splits = place_on_fabric(dec, fab, method="greedy")
    >>> [[(c.start, c.duration) for c in sw] for sw in confs]
    [[], [(0.5, 1.5)]]
    """
    check_choice(method, "method", PLACEMENTS)
    keep = dec.weights > 0
    dec = Decomposition(dec.perms[keep], dec.weights[keep])
    start = starts_of(fabric, t0)
    if not fabric.failed_links:
        return _place(dec, fabric, method, start, demand)
    # pack is never worse than equalize (Spectra's placement): both, the one ending first kept.
    best: tuple[tuple[tuple[Configuration, ...], ...], int] | None = None
    for m in ("equalize", "pack") if method == "pack" else (method,):
        # Links that fail only after they are used cost nothing: the schedule as if they worked.
        got = _place(dec, dataclasses.replace(fabric, failed_links=()), m, start, demand)
        if not _links_hold(got[0], fabric):
            got = _place(dec, fabric, m, start, demand, last=True)
        if best is None or _end(got[0], start) < _end(best[0], start):
            best = got
    assert best is not None
    return best


def _end(switches: tuple[tuple[Configuration, ...], ...], start: NDArray[np.float64]) -> float:
    return max((c.end for sw in switches for c in sw), default=float(start.min()))


def _place(
    dec: Decomposition,
    fabric: Fabric,
    method: str,
    start: NDArray[np.float64],
    demand: Demand | None,
    *,
    last: bool = False,
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """:func:`place_on_fabric` of a decomposition without zero weights, from per-switch ``start``.

    ``last``: of the assignments ``method`` considers, start from its own only (pack: not
    equalize's, which the caller tries itself).
    """
    live = _identical_live(fabric, float(start[0])) if (start == start[0]).all() else []
    if live:
        # Identical switches from t0 on (some possibly down for good): the uniform methods, compiled
        # where it matters, on the live switches; rescheduling after a switch failure lands here.
        d, t = fabric.deltas[live[0]], float(start[0])
        sub, splits = PLACEMENTS[method].func(dec.weights, len(live), d)
        if not fabric.reconfiguration.keeps_circuits:  # each live switch: its pieces largest first from t0
            laid = timeline(sub, dec.perms, d, t0=t)
            confs: list[tuple[Configuration, ...]] = [() for _ in range(fabric.size)]
            for k, b in enumerate(live):
                confs[b] = laid[k]
            return tuple(confs), splits
        assignment: Assignment = [[] for _ in range(fabric.size)]
        for k, b in enumerate(live):
            assignment[b] = sub[k]
        share = _share(dec, demand, fabric)
        return timeline_on(assignment, dec.perms, fabric, t0=t, share=share), splits
    ports = int(dec.perms.shape[1]) if dec.perms.ndim == 2 else 0
    view = _View.of(fabric, start, ports=ports)
    if view.fail is not None and demand is not None:
        dec = _strip(dec, demand, view)
    cands: list[tuple[NDArray[np.int64], Assignment, int]] = []
    # Raises InfeasibleError if a circuit (with demand) can be lit on no switch at all.
    perms, weights, elig = _eligible(dec, view)
    placed = place_by_method(weights, elig, view.with_perms(perms), method)
    whole = [(perms, weights, a) for a in (placed[-1:] if last else placed)]
    cands += [(p, a, sum(len(sw) for sw in a) - int(w.size)) for p, w, a in whole]
    if view.fail is not None and len(dec):
        # Around the failed links: from the placement as if they worked (the blocked circuits
        # served elsewhere), and from the whole permutations' (work moved onto the switches
        # they leave idle).
        targets = demand if demand is not None else coverage_demand(dec.perms, dec.weights)
        alive = np.array([not view.dead(b) for b in range(fabric.size)])
        free = np.broadcast_to(alive, (len(dec), fabric.size))
        as_if = place_by_method(dec.weights, free, view.ignoring_links(), method)
        starts = [(dec.perms, dec.weights, a) for a in (as_if[-1:] if last else as_if)]
        linked = view.with_perms(dec.perms)
        if all(_fits(a, linked) for _, _, a in starts):
            # The links fail after they are needed: the placement as if they worked stands, so
            # they cost nothing.
            cands += [(p, a, sum(len(sw) for sw in a) - int(w.size)) for p, w, a in starts]
        else:
            tried: list[tuple[NDArray[np.int64], Assignment]] = []
            for p, w, a in starts + whole:
                if any(p is p2 and a == a2 for p2, a2 in tried):
                    continue  # pack kept equalize's placement
                tried.append((p, a))
                got = around_links(p, w, targets, view, a)
                if got is not None:
                    cands.append(got)
    if not cands and view.fail is not None and len(dec):
        # Links failing mid-way on every switch some entries can use, too many placed pieces
        # using them to fit before the failures: serve those entries by a few matchings first.
        for _, w, a in starts:
            got = around_links(dec.perms, w, targets, view, a, compress=True)
            if got is not None:
                cands.append(got)
    if not cands:
        targets = demand if demand is not None else coverage_demand(dec.perms, dec.weights)
        # Entries every switch allowing them loses (a link fails, the switch goes down for good):
        # first, split over all of those switches.
        first = cut_off_first(targets, view, lambda left, t0: _rest(left, fabric, method, t0))
        if first is not None:
            return first
        why, proved = _no_placement(targets, view)
        raise InfeasibleError(why, proved=proved)
    best: tuple[float, tuple[tuple[Configuration, ...], ...], int] | None = None
    for perms, a, splits in cands:
        share = _share(Decomposition(perms, _row_totals(a, len(perms))), demand, fabric)
        laid = timeline_on(a, perms, fabric, t0=start, share=share)
        end = _end(laid, start)
        if best is None or end < best[0]:
            best = (end, laid, splits)
    assert best is not None
    return best[1], best[2]


def _rest(
    left: Demand, fabric: Fabric, method: str, t0: NDArray[np.float64]
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """``left`` decomposed (Spectra) and placed by ``method`` from the per-switch starts ``t0``."""
    from ocsched.decompose import decompose

    dec = decompose(left, method="spectra", delta=float(np.mean(fabric.deltas)))
    return place_on_fabric(dec, fabric, method=method, t0=t0, demand=left)


def _links_hold(switches: tuple[tuple[Configuration, ...], ...], fabric: Fabric) -> bool:
    """No configuration uses a port after its link to that switch fails."""
    for b, sw in enumerate(switches):
        failed = fabric.failed_ports(b)
        for c in sw:
            ins, outs = c.circuit_arrays()
            used = set(ins.tolist()) | set(outs.tolist())
            if any(c.end > failed[p] for p in used & failed.keys()):
                return False
    return True


def _fits(assignment: Assignment, view: _View) -> bool:
    """Every switch can run its pieces as they are: no blocked port, every deadline met."""
    blocked = view.blocked()
    for b, sw in enumerate(assignment):
        if blocked is not None and any(view.deadline(l, b) <= view.start[b] + view.delta[b] for l, _ in sw):
            return False
        if view.finish(b, sw) == np.inf:
            return False
    return True


def _row_totals(assignment: Assignment, rows: int) -> NDArray[np.float64]:
    """Each permutation's total length over its pieces."""
    w = np.zeros(rows)
    for sw in assignment:
        for l, x in sw:
            w[l] += x
    return w


def _strip(dec: Decomposition, demand: Demand, view: _View) -> Decomposition:
    """``dec`` without the circuits that serve no demand entry and use a port blocked on some switch:
    they serve nothing and would only keep their permutation off that switch."""
    assert view.fail is not None
    blocked = view.blocked()
    assert blocked is not None
    failing = np.asarray(blocked.any(axis=0), dtype=bool)
    if not failing.any() or not len(dec):
        return dec
    n = dec.perms.shape[1]
    keys = demand.rows * n + demand.cols
    perms = dec.perms.copy()
    for row in perms:
        (ins,) = np.nonzero(row >= 0)
        touch = failing[ins] | failing[row[ins]]
        if not touch.any():
            continue
        k = ins * n + row[ins]
        pos = np.minimum(np.searchsorted(keys, k), max(keys.size - 1, 0))
        hit = keys[pos] == k if keys.size else np.zeros(k.size, bool)
        row[ins[touch & ~hit]] = -1
    on = (perms >= 0).any(axis=1)
    return Decomposition(perms[on], dec.weights[on])


def _no_placement(targets: Demand, view: _View) -> tuple[str, bool]:
    """Why no placement was found, and whether it is proved: an entry or a port whose demand cannot
    be lit before its links fail, if there is one (a proof of infeasibility), else that the
    heuristics found none (not proved)."""
    s = view.size
    fail = view.fail if view.fail is not None else np.full((s, targets.n), np.inf)

    def capacity(ports: list[int]) -> float:
        # On switch b these ports are lit together at most from its start plus a delay until
        # the first of their links fails (less the down windows), at rate r_b.
        cap = 0.0
        for b in range(s):
            if view.dead(b):
                continue
            until = min([float(fail[b, p]) for p in ports] + [view.gone(b)])
            avail = view.room(b, until) - float(view.delta[b])
            cap += float(view.rate[b]) * max(avail, 0.0)
        return cap

    def failures(ports: list[int]) -> str:
        return ", ".join(
            f"port {p} on switch {b} at {float(fail[b, p]):g}"
            for p in ports
            for b in range(s)
            if fail[b, p] < np.inf
        )

    for i, j, v in zip(targets.rows.tolist(), targets.cols.tolist(), targets.values.tolist(), strict=True):
        cap = capacity([i, j])
        if cap < v * (1 - 1e-12):
            return (
                f"demand[{i}, {j}] = {v:g} but at most {cap:g} of it can be served before the links "
                f"it needs fail ({failures([i, j])})"
            ), True
    for line, (idx, sums) in enumerate(
        ((targets.rows, targets.row_sums()), (targets.cols, targets.col_sums()))
    ):
        for p in np.unique(idx).tolist():
            cap = capacity([p])
            if cap < float(sums[p]) * (1 - 1e-12):
                side = "input" if line == 0 else "output"
                return (
                    f"port {p} ({side}) has {float(sums[p]):g} of demand, but its links fail before more "
                    f"than {cap:g} can be served ({failures([p])})"
                ), True
    confined = _confined(targets, view, fail)
    if confined is not None:
        return confined, True
    return (
        "no placement found that serves every entry before the links it uses fail (none proved "
        "impossible: the demand may not fit before the failures)"
    ), False


def _confined(targets: Demand, view: _View, fail: NDArray[np.float64]) -> str | None:
    """A port whose entries only one switch can carry, before a link fails, and that lack the time.

    A port takes one circuit per configuration, so its k entries confined to switch b need k
    configurations there, each after a delay: ``k delta_b + work / rate_b`` from the switch's
    start, all before the latest of their links' failures (less down windows); None if every
    port has that time.
    """
    s = view.size
    blocked = np.asarray(view.blocked()) if view.fail is not None else np.zeros((s, targets.n), dtype=bool)
    i, j, v = targets.rows, targets.cols, targets.values
    ok = ~blocked[:, i] & ~blocked[:, j]
    only = np.where(ok.sum(axis=0) == 1, np.argmax(ok, axis=0), -1)
    for b in range(s):
        if view.dead(b):
            continue
        mine = only == b
        until = np.minimum(fail[b, i], fail[b, j])
        for line, idx in enumerate((i, j)):
            for p in np.unique(idx[mine]).tolist():
                sel = mine & (idx == p)
                last = min(float(until[sel].max()), view.gone(b))
                if last == np.inf:
                    continue
                room = view.room(b, last)
                k = int(sel.sum())
                need = k * float(view.delta[b]) + float(v[sel].sum()) / float(view.rate[b])
                if need > room * (1 + 1e-12):
                    side = "input" if line == 0 else "output"
                    return (
                        f"port {p} ({side}) has {k} entries only switch {b} can carry, needing {need:g} "
                        f"there ({k} configurations, each after a delay) but only {max(room, 0.0):g} "
                        "is left before their links fail"
                    )
    return None


def _identical_live(fabric: Fabric, t0: float) -> list[int]:
    """The switches usable from ``t0`` if they are identical (rate 1) and the rest are down for good.

    Empty when any link has failed, a switch has a down window it comes back from, or the live
    switches differ in delay or rate: :func:`place_on_fabric` then takes the general path.
    """
    if fabric.failed_links:
        return []
    dead = set()
    for w in fabric.down:
        if w.end <= t0:
            continue  # over before scheduling starts
        if w.start > t0 or w.end != np.inf:
            return []  # a switch that comes back, or goes down later
        dead.add(w.switch)
    live = [b for b in range(fabric.size) if b not in dead]
    if len({fabric.deltas[b] for b in live}) > 1 or any(fabric.rates[b] != 1.0 for b in live):
        return []
    return live
