"""b-matchings on identical port switches with down windows and failed links.

:func:`schedule_on_failing_ports` first schedules the demand as if nothing failed
(:func:`~ocsched.assign.ports.schedule_on_ports` on the switches that are not down for good from
the start), with each switch's configurations that use a link failing later run first. Laying
them out on the real switch (:func:`_lit`) moves them around its down windows
(:func:`ocsched.timing.lay_out_windows`: a configuration meeting a window runs until it and
resumes a delay after it) and drops the circuits of links that fail before their piece ends.
What that leaves unserved is then served in two ways, and the earlier end is kept:

- appended: rounds that split what is left over the switches that can light it for good, so
  that they end together (:func:`_water`), each switch's share by the same construction after
  its timeline (one more delay per switch); entries no switch can light for good run first on
  the switch whose links fail latest;
- held longer first: the pieces that already hold the circuits on other switches are lengthened
  (no extra delay, but one circuit at a time), then the same rounds for what is still left.

Entries still unserved after :data:`ROUNDS` rounds raise :class:`~ocsched.errors.InfeasibleError`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ocsched.assign.ports import schedule_on_ports
from ocsched.errors import InfeasibleError
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand, latest_end
from ocsched.timing import lay_out_windows
from ocsched.timing.served import served_amounts

__all__ = ["ROUNDS", "schedule_on_failing_ports"]

#: Rounds of scheduling what the failures left unserved (one is enough unless a window that never
#: ends or a failing link cuts the new configurations too).
ROUNDS = 4

#: A residual entry this small relative to its line counts as served (far inside the validator's
#: relative tolerance), so no configuration and delay is spent on round-off.
_CRUMB = 1e-12

Timeline = list[Configuration]
Switches = tuple[tuple[Configuration, ...], ...]


class _Limits:
    """When each switch stops being able to light a circuit: down for good, or a link failing."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.dead = np.array(
            [
                min((a for a, e in fabric.windows(b) if e == math.inf), default=math.inf)
                for b in range(fabric.size)
            ]
        )
        self.fails = [fabric.failed_ports(b) for b in range(fabric.size)]
        self.ports = np.array(sorted(set().union(*self.fails)), dtype=np.int64)
        # When each switch could first light a circuit (a delay after the windows it starts in).
        first = [lay_out_windows([0.0], fabric.deltas[b], fabric.windows(b))[0] for b in range(fabric.size)]
        self.first = np.array([seg[0][0] if seg else math.inf for seg in first])

    def horizon(self, i: int, j: int) -> NDArray[np.float64]:
        """Per switch, until when it can light a circuit between ``i`` and ``j``."""
        h = self.dead.copy()
        for b, f in enumerate(self.fails):
            if f:
                h[b] = min(h[b], f.get(i, math.inf), f.get(j, math.inf))
        return h

    def horizons(self, demand: Demand) -> list[NDArray[np.float64]]:
        """:meth:`horizon` of every entry (one shared array for the entries on no failed port)."""
        touch = np.isin(demand.rows, self.ports) | np.isin(demand.cols, self.ports)
        out = [self.dead] * demand.nnz
        for e in np.flatnonzero(touch).tolist():
            out[e] = self.horizon(int(demand.rows[e]), int(demand.cols[e]))
        return out

    def urgency(self, c: Configuration, b: int) -> float:
        """When the first link ``c`` uses on switch ``b`` fails after the switch's first delay (inf: none)."""
        if not self.fails[b]:
            return math.inf
        ins, outs = c.circuit_arrays()
        used = set(ins.tolist()) | set(outs.tolist())
        delta = self.fabric.deltas[b]
        return min((t for p, t in self.fails[b].items() if p in used and t > delta), default=math.inf)

    def in_order(self, pieces: Timeline, b: int) -> Timeline:
        """Pieces using links that fail later first, soonest first (stable: the rest keep their order)."""
        return sorted(pieces, key=lambda c: self.urgency(c, b)) if self.fails[b] else pieces


def _lit(pieces: Timeline, fabric: Fabric, b: int) -> tuple[Timeline, float]:
    """``pieces`` back to back on switch ``b`` around its windows, without the circuits of links
    failing before their piece ends; and when the switch is free again."""
    failed = fabric.failed_ports(b)
    ports = np.array(list(failed), dtype=np.int64)
    when = np.array([failed[p] for p in failed], dtype=np.float64)
    out: Timeline = []
    end = 0.0
    segments = lay_out_windows([c.duration for c in pieces], fabric.deltas[b], fabric.windows(b))
    for c, segs in zip(pieces, segments, strict=True):
        ins, outs = c.circuit_arrays()
        for start, length in segs:
            end = max(end, start + length)
            keep = np.ones(ins.size, dtype=bool)
            if ports.size:
                gone = ports[when < start + length]  # lit past its link's failure: dropped
                keep = ~(np.isin(ins, gone) | np.isin(outs, gone))
            if keep.any() and length > 0:
                out.append(Configuration.sparse(start, length, ins[keep], outs[keep], ports=c.ports))
    return out, end


def _short(demand: Demand, switches: list[Timeline], fabric: Fabric) -> Demand:
    """The entries of ``demand`` that ``switches`` leave unserved (crumbs dropped), with what is left."""
    left = demand.values - served_amounts(demand, switches, fabric)
    line = np.maximum(demand.row_sums()[demand.rows], demand.col_sums()[demand.cols])
    on = left > _CRUMB * line
    return Demand(demand.n, demand.rows[on], demand.cols[on], left[on])


def _work(part: Demand, fabric: Fabric) -> float:
    """The time ``part`` keeps its busiest endpoint's ports of one switch busy (its line over k)."""
    sw, n = fabric.switches[0], part.n
    if sw.bidirectional:  # a circuit serves both directions: a pair takes its larger one
        lo, hi = np.minimum(part.rows, part.cols), np.maximum(part.rows, part.cols)
        keys, inverse = np.unique(lo * n + hi, return_inverse=True)
        pair = np.zeros(keys.size)
        np.maximum.at(pair, inverse, part.values)
        a, z = keys // n, keys % n
        lines = np.bincount(a, pair, n) + np.bincount(z, np.where(a != z, pair, 0.0), n)
    else:
        lines = np.maximum(np.bincount(part.rows, part.values, n), np.bincount(part.cols, part.values, n))
    return float(lines.max(initial=0.0)) / sw.ports_per_endpoint


def _water(ends: NDArray[np.float64], delta: NDArray[np.float64], work: float) -> NDArray[np.float64]:
    """Shares of ``work`` so that the switches it goes to end together, as early as they can.

    Switch b takes ``T - ends[b] - delta[b]`` (its delay first) where that is positive, with T
    such that the takes add up to ``work`` (water-filling); returned as fractions of it.

    >>> _water(np.array([0.0, 1.0, 5.0]), np.zeros(3), 3.0).tolist()
    [0.6666666666666666, 0.3333333333333333, 0.0]
    """
    ready = ends + delta
    order = np.argsort(ready, kind="stable")
    take = np.zeros(ends.size)
    for m in range(1, ends.size + 1):
        chosen = order[:m]
        t = (work + float(ready[chosen].sum())) / m
        if m == ends.size or t <= ready[order[m]]:
            take[chosen] = np.maximum(t - ready[chosen], 0.0)
            break
    total = float(take.sum())
    return take / total if total > 0 else take


def _assign(short: Demand, fabric: Fabric, limits: _Limits, ends: list[float]) -> list[Demand]:
    """Per switch, its share of the unserved entries.

    Entries some switch can light for good are split over those switches by :func:`_water`,
    grouped by that set of switches; the others go whole to the switch whose links fail latest
    (they run first there: :meth:`_Limits.in_order`).
    """
    n, s = short.n, fabric.size
    load = np.array(ends, dtype=np.float64)
    delta = np.array(fabric.deltas, dtype=np.float64)
    groups: dict[tuple[int, ...], list[int]] = {}
    first = np.full(short.nnz, -1, dtype=np.int64)
    for e, h in enumerate(limits.horizons(short)):
        never = np.isinf(h)
        if never.any():
            groups.setdefault(tuple(np.flatnonzero(never).tolist()), []).append(e)
        elif h.max() > delta[int(np.argmax(h))]:
            first[e] = int(np.argmax(h))
    parts: list[list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]]] = [
        [] for _ in range(s)
    ]
    for members, es in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        at = np.array(es, dtype=np.int64)
        part = Demand(n, short.rows[at], short.cols[at], short.values[at])
        idx = np.array(members, dtype=np.int64)
        work = _work(part, fabric)
        for b, f in zip(idx.tolist(), _water(load[idx], delta[idx], work).tolist(), strict=True):
            if f > 0:
                parts[b].append((part.rows, part.cols, part.values * f))
                load[b] += delta[b] + f * work
    out = []
    for b in range(s):
        on = first == b
        parts[b].append((short.rows[on], short.cols[on], short.values[on]))
        i, j, x = (np.concatenate([p[k] for p in parts[b]]) for k in range(3))
        order = np.argsort(i * n + j, kind="stable")  # each entry once: in one group, or first
        out.append(
            Demand(n, i[order].astype(np.int64), j[order].astype(np.int64), x[order].astype(np.float64))
        )
    return out


def _extended(
    short: Demand, pieces: list[Timeline], ends: list[float], fabric: Fabric, limits: _Limits
) -> list[Timeline]:
    """Pieces held longer where they light circuits ``short`` still needs, at no extra delay.

    Each unserved entry (a pair, on bidirectional switches) lengthens, on every switch that can
    light it for good, the longest piece holding its circuit, by shares that level the
    switches' ends (:func:`_water`).
    """
    n = short.n
    both = fabric.switches[0].bidirectional
    holders: dict[int, dict[int, int]] = {}  # circuit key -> {switch: its longest piece holding it}
    for b, sw in enumerate(pieces):
        for q, c in enumerate(sw):
            ins, outs = c.circuit_arrays()
            keys = np.minimum(ins, outs) * n + np.maximum(ins, outs) if both else ins * n + outs
            for k in keys.tolist():
                at = holders.setdefault(k, {})
                if b not in at or sw[at[b]].duration < c.duration:
                    at[b] = q
    need: dict[int, float] = {}
    for i, j, v in zip(short.rows.tolist(), short.cols.tolist(), short.values.tolist(), strict=True):
        k = min(i, j) * n + max(i, j) if both else i * n + j
        need[k] = max(need.get(k, 0.0), v)  # a pair's circuit serves both directions at once
    extra = [[0.0] * len(sw) for sw in pieces]
    load = np.array(ends, dtype=np.float64)
    for k, v in sorted(need.items(), key=lambda kv: (-kv[1], kv[0])):
        h = limits.horizon(*divmod(k, n))
        at = {b: q for b, q in holders.get(k, {}).items() if math.isinf(h[b])}
        if not at:
            continue
        idx = np.array(sorted(at), dtype=np.int64)
        for b, f in zip(idx.tolist(), _water(load[idx], np.zeros(idx.size), v).tolist(), strict=True):
            extra[b][at[b]] += f * v
            load[b] += f * v
    return [
        [c.at(c.start, c.duration + x) if x > 0 else c for c, x in zip(sw, more, strict=True)]
        for sw, more in zip(pieces, extra, strict=True)
    ]


def _matched(
    timelines: list[tuple[Configuration, ...]],
    live: list[int],
    ready: dict[int, float],
    limits: _Limits,
    lossless: bool,
) -> dict[int, tuple[Configuration, ...]]:
    """Which live switch runs which timeline of the identical switches' schedule.

    With ``lossless`` a switch with failed links first gets the timeline that loses least there
    (circuit time on its failed ports, most failed ports first). Then, where the switches are
    ready at different times (busy until free, when rescheduling), the longest timelines go to
    the ones ready first; otherwise in order.
    """
    out: dict[int, tuple[Configuration, ...]] = {}
    free = list(range(len(timelines)))
    failing = [b for b in live if limits.fails[b]] if lossless else []
    for b in sorted(failing, key=lambda b: -len(limits.fails[b])):
        ports = np.array(list(limits.fails[b]), dtype=np.int64)

        def lost(q: int, ports: NDArray[np.int64] = ports) -> float:
            total = 0.0
            for c in timelines[q]:
                ins, outs = c.circuit_arrays()
                total += c.duration * int((np.isin(ins, ports) | np.isin(outs, ports)).sum())
            return total

        q = min(free, key=lambda q: (lost(q), q))
        free.remove(q)
        out[b] = timelines[q]
    rest = [b for b in live if b not in out]
    if len({ready[b] for b in rest}) > 1:
        rest.sort(key=lambda b: ready[b])
        free.sort(key=lambda q: -max((c.end for c in timelines[q]), default=0.0))
    out.update(zip(rest, (timelines[q] for q in free), strict=True))
    return out


def _lay(
    demand: Demand, fabric: Fabric, pieces: list[Timeline]
) -> tuple[list[tuple[Timeline, float]], Demand]:
    """Every switch's pieces laid out (:func:`_lit`), and what they leave unserved."""
    laid = [_lit(p, fabric, b) for b, p in enumerate(pieces)]
    return laid, _short(demand, [x for x, _ in laid], fabric)


def _rounds(
    demand: Demand,
    fabric: Fabric,
    limits: _Limits,
    start: tuple[list[Timeline], list[tuple[Timeline, float]], Demand],
    method: str,
) -> tuple[Switches, int, Demand]:
    """Up to :data:`ROUNDS` rounds for what the pieces of ``start`` (with :func:`_lay` of them) leave.

    Returns the configurations, the splits the rounds added and what is still unserved.
    """
    pieces = [list(p) for p in start[0]]
    laid, short = list(start[1]), start[2]
    splits = 0
    for _ in range(ROUNDS):
        if not short.nnz:
            break
        for b, share in enumerate(_assign(short, fabric, limits, [e for _, e in laid])):
            if share.nnz:
                one = Fabric((fabric.switches[b],), model=fabric.model)
                (timeline,), more, _ = schedule_on_ports(share, one, method=method)
                pieces[b] = limits.in_order(pieces[b] + list(timeline), b)
                laid[b] = _lit(pieces[b], fabric, b)
                splits += more
        short = _short(demand, [x for x, _ in laid], fabric)
    return tuple(tuple(x) for x, _ in laid), splits, short


def _why(short: Demand, limits: _Limits) -> tuple[str, bool]:
    """One line on the first entry left unserved, and whether that is proved (no switch ever can)."""
    i, j, v = int(short.rows[0]), int(short.cols[0]), float(short.values[0])
    if (limits.horizon(i, j) <= limits.first).all():
        return f"demand[{i}, {j}] = {v:g} but no switch can light {i}->{j} before its links fail", True
    return f"demand[{i}, {j}]: {v:g} left unserved after {ROUNDS} rounds around the failures", False


def schedule_on_failing_ports(
    demand: Demand, fabric: Fabric, *, method: str = "pack"
) -> tuple[Switches, int, str]:
    """Schedule ``demand`` on identical port switches with down windows and failed links.

    Parameters
    ----------
    demand : Demand
        The traffic.
    fabric : Fabric
        Identical all-stop switches (bidirectional, several ports per endpoint, or both) with
        down windows and failed links at any times.
    method : {"pack", "equalize"}
        The placement of :func:`~ocsched.assign.ports.place_bmatchings`.

    Returns
    -------
    configurations, splits, construction
        As :func:`~ocsched.assign.ports.schedule_on_ports`.

    Raises
    ------
    InfeasibleError
        When an entry is still unserved after :data:`ROUNDS` rounds; ``proved`` when no switch
        can light it at all (on every one a link of it fails, or the switch goes down for good,
        before its first reconfiguration after the windows it starts in ends).

    Examples
    --------
    >>> from ocsched.fabric import LinkDown, Switch
    >>> d = Demand.from_matrix(np.ones((3, 3)) - np.eye(3))
    >>> fab = Fabric((Switch(0.1, bidirectional=True),) * 2, failed_links=(LinkDown(0, 1),))
    >>> confs, _, _ = schedule_on_failing_ports(d, fab)
    >>> len(confs[1]) > 0, any(np.isin(0, c.circuit_arrays()).any() for c in confs[1])  # port 0 avoided
    (True, False)
    """
    s = fabric.size
    limits = _Limits(fabric)
    # Switches down for good before they could light anything take no share of the first round.
    live = [b for b in range(s) if limits.dead[b] > limits.first[b]]
    splits, how = 0, "none"
    starts: list[list[Timeline]] = [[[] for _ in range(s)]]
    if live and demand.nnz:
        sub = Fabric(tuple(fabric.switches[b] for b in live), model=fabric.model)
        confs, splits, how = schedule_on_ports(demand, sub, method=method)
        ready = {b: float(limits.first[b]) for b in live}
        starts = []
        for lossless in (False, True):  # in order, then the least loss on switches with failed links
            pieces: list[Timeline] = [[] for _ in range(s)]
            for b, timeline in _matched(list(confs), live, ready, limits, lossless).items():
                pieces[b] = limits.in_order(list(timeline), b)
            if pieces not in starts:
                starts.append(pieces)
    best: tuple[Switches, int, Demand] | None = None
    for pieces in starts:
        laid, short = _lay(demand, fabric, pieces)
        tries = [(pieces, laid, short)]
        if short.nnz:  # also first where it costs no delay: the pieces holding the circuits, longer
            longer = _extended(short, pieces, [e for _, e in laid], fabric, limits)
            tries.append((longer, *_lay(demand, fabric, longer)))
        for trial in (_rounds(demand, fabric, limits, t, method) for t in tries):
            if best is None or (
                not trial[2].nnz and (best[2].nnz or latest_end(trial[0]) < latest_end(best[0]))
            ):
                best = trial
    assert best is not None
    out, more, left = best
    if left.nnz:
        why, proved = _why(left, limits)
        raise InfeasibleError(why, proved=proved)
    return out, splits + more, how
