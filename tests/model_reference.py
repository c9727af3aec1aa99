"""The reconfiguration model of :mod:`ocsched.timing`, stated again the straightforward way.

A reference for differential tests of :func:`ocsched.validation.validate`: every rule of the model
comment in ``ocsched/timing.py`` is evaluated in exact rational arithmetic on the schedule's
floats, one configuration and one circuit at a time (no sorting, no tolerance). Instead of a
verdict it returns, for each rule, by how much the schedule breaks it, in units of the tolerance
``validate`` is documented to allow there (``excess / unit``), so a test can ask for a rejection
where a rule is broken by clearly more than the tolerance and for an acceptance where every rule
holds to within a fraction of it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction as Q

import numpy as np
from numpy.typing import NDArray

from ocsched.fabric import Fabric
from ocsched.model import STATUSES, Schedule

RTOL = 1e-9
INF = math.inf


def ulps(*times: float | Q) -> float:
    """8 ulps of the largest finite magnitude (the validator's time resolution)."""
    finite = [abs(float(t)) for t in times if math.isfinite(float(t))]
    return 8.0 * math.ulp(max(finite, default=0.0))


@dataclass
class Reference:
    """What the reference found: hard defects, and each broken rule's excess in tolerance units."""

    defects: list[str] = field(default_factory=list)
    ratios: list[tuple[float, str]] = field(default_factory=list)
    #: True when a discrete decision of the model (is a circuit kept?) sits within a few
    #: tolerances of its threshold: floats rounded otherwise could take the other branch.
    ambiguous: bool = False
    #: Demand served per entry (i, j), exactly.
    served: dict[tuple[int, int], Q] = field(default_factory=dict)

    def broken(self, margin: float = 4.0) -> bool:
        """True if the schedule is clearly invalid: a hard defect, or a rule broken by > margin units."""
        return bool(self.defects) or any(r > margin for r, _ in self.ratios)

    def sound(self, margin: float = 0.25) -> bool:
        """True if the schedule is clearly valid: no defect, every rule held to within margin units."""
        return not self.defects and all(r <= margin for r, _ in self.ratios)

    def worst(self) -> tuple[float, str]:
        return max(self.ratios, default=(0.0, ""))

    def excess(self, what: str, amount: Q, unit: float) -> None:
        if amount > 0:
            self.ratios.append((float(amount) / unit if unit > 0 else INF, what))


def reference(
    schedule: Schedule, demand: NDArray[np.float64], *, fabric: Fabric | None = None, tol: float = RTOL
) -> Reference:
    """Judge ``schedule`` against dense ``demand`` on its own fabric and on ``fabric`` if given."""
    ref = Reference()
    n = schedule.ports
    own = schedule.on_fabric()
    s = len(schedule.switches)
    if demand.shape != (n, n):
        ref.defects.append("ports")
    if s == 0:
        ref.defects.append("no switch")
    if own.size != s:
        ref.defects.append("fabric size")
    claimed = schedule.meta.get("switches")
    if isinstance(claimed, int) and not isinstance(claimed, bool) and claimed != s:
        ref.defects.append("meta.switches")
    if any(x.port >= n for x in own.failed_links):
        ref.defects.append("failed link port")
    if schedule.fabric is not None and schedule.delta != max(own.deltas):
        ref.defects.append("delta claim")
    if schedule.status not in STATUSES:
        ref.defects.append("status")
    fabrics = [own]
    if fabric is not None and fabric != own:
        if fabric.size != s:
            ref.defects.append("switch count")
        else:
            fabrics.append(fabric)
            for x, y in zip(own.switches, fabric.switches, strict=True):
                if x.delta < y.delta or x.rate > y.rate:
                    ref.defects.append("optimistic switch")
                if x.ports_per_endpoint > y.ports_per_endpoint or x.bidirectional != y.bidirectional:
                    ref.defects.append("other ports")
            if own.model == "partial" and fabric.model == "all-stop":
                ref.defects.append("optimistic model")
    for b, sw in enumerate(schedule.switches):
        kind = own.switches[b] if b < own.size else None
        k = 1 if kind is None else kind.ports_per_endpoint
        for c in sw:
            if not (math.isfinite(c.start) and math.isfinite(c.duration) and math.isfinite(c.end)):
                ref.defects.append("not finite")
            elif c.duration < 0:
                ref.defects.append("negative duration")
            if c.ports != n:
                ref.defects.append("width")
            circuits = c.circuits
            ins = [i for i, _ in circuits]
            outs = [j for _, j in circuits]
            if any(not (0 <= p < n) for p in ins + outs) or np.any(np.asarray(c.circuit_arrays()[1]) < -1):
                ref.defects.append("port range")
            # At most k circuits per endpoint on each side; bidirectional: k ends, either side.
            sides = [ins + outs] if kind is not None and kind.bidirectional else [ins, outs]
            if any(side.count(p) > k for side in sides for p in set(side)):
                ref.defects.append("not a matching")
    if ref.defects:
        return ref
    served = ref.served
    pieces: dict[tuple[int, int], float] = {}
    for f in fabrics:
        credit = f is fabrics[-1]
        for b, sw in enumerate(schedule.switches):
            _switch(ref, f, b, sw, served if credit else {}, pieces if credit else {}, tol)
    _eps(ref, schedule, own, fabric, tol)
    ends = [abs(c.end) for sw in schedule.switches for c in sw]
    t_ulp = math.ulp(max(ends, default=0.0))
    row, col = demand.sum(axis=1), demand.sum(axis=0)
    for i, j in zip(*np.nonzero(demand), strict=True):
        want = Q(float(demand[i, j]))
        got = served.get((int(i), int(j)), Q(0))
        unit = tol * max(row[i], col[j]) + 8.0 * t_ulp * pieces.get((int(i), int(j)), 0.0)
        ref.excess(f"unserved ({i}, {j})", want - got, unit)
    makespan = schedule.makespan
    for name, value in (("lower bound", schedule.lower_bound), ("dual bound", schedule.dual_bound)):
        if value is not None:
            if not (math.isfinite(value) and value >= 0):
                ref.defects.append(name)
            else:
                ref.excess(name, Q(value) - Q(makespan), tol * makespan + 8.0 * math.ulp(makespan))
    return ref


def _eps(ref: Reference, schedule: Schedule, own: Fabric, fabric: Fabric | None, tol: float) -> None:
    """The EPS part: credited exactly; each port's EPS load out and in, at the fabric's packet
    switch rate after its latency, ends by the makespan."""
    eps = schedule.eps
    if eps is None or not eps.nnz:
        return
    if not own.eps_rate > 0:
        ref.defects.append("eps without a packet switch")
        return
    if fabric is not None and (fabric.eps_rate < own.eps_rate or fabric.eps_latency > own.eps_latency):
        ref.defects.append("optimistic eps")
    out: dict[int, Q] = {}
    into: dict[int, Q] = {}
    for i, j, v in zip(eps.rows.tolist(), eps.cols.tolist(), eps.values.tolist(), strict=True):
        ref.served[(i, j)] = ref.served.get((i, j), Q(0)) + Q(v)
        out[i] = out.get(i, Q(0)) + Q(v)
        into[j] = into.get(j, Q(0)) + Q(v)
    load = max(max(out.values()), max(into.values()))
    finish = Q(own.eps_latency) + load / Q(own.eps_rate)
    makespan = schedule.makespan
    ref.excess("eps time", finish - Q(makespan), tol * max(makespan, float(finish)))


def _switch(
    ref: Reference,
    fabric: Fabric,
    b: int,
    sw: tuple[object, ...],
    served: dict[tuple[int, int], Q],
    pieces: dict[tuple[int, int], float],
    tol: float,
) -> None:
    delta = Q(fabric.switches[b].delta)
    rate = fabric.switches[b].rate
    wins = [(Q(a), INF if z == INF else Q(z)) for a, z in fabric.windows(b)]
    fail: dict[int, Q] = {}
    for x in fabric.failed_links:
        if x.switch == b:
            fail[x.port] = min(fail.get(x.port, Q(x.start)), Q(x.start))
    partial = fabric.model == "partial"
    confs = [(Q(c.start), Q(c.duration), c.circuits) for c in sw]  # type: ignore[attr-defined]
    last_use_in: dict[int, Q] = {}
    last_use_out: dict[int, Q] = {}
    latest = Q(0)
    for k, (s, w, circ) in enumerate(confs):
        e = s + w
        # both: no configuration meets a down window; nothing runs on a failed link. The way out
        # of a window is to end by its start or to start delta after its end (the switch comes
        # back dark; under partial only circuits wait for delta), so that is how far a
        # configuration inside one is from valid.
        wait = delta if circ or not partial else Q(0)
        for a, z in wins:
            if e > a and s < z:
                ref.excess(f"switch {b} conf {k} in window", min(e - a, z + wait - s), ulps(s, e, a, z))
        for i, j in circ:
            for p in (i, j):
                if p in fail:
                    ref.excess(f"switch {b} conf {k} on failed link {p}", e - fail[p], ulps(e, fail[p]))
        reset = max([z for a, z in wins if z <= s], default=Q(0))
        prev = confs[k - 1] if k else None
        prev_end = prev[0] + prev[1] if prev else None
        kept: set[tuple[int, int]] = set()
        if partial and prev is not None and prev_end is not None:
            gap_clear = not any(a < s and z > prev_end for a, z in wins)
            for i, j in circ:
                if (i, j) in prev[2] and gap_clear and s <= fail.get(i, INF) and s <= fail.get(j, INF):
                    kept.add((i, j))
                if (i, j) in prev[2]:
                    near = [abs(float(z - prev_end)) for a, z in wins if z != INF]
                    near += [abs(float(a - s)) for a, z in wins]
                    near += [abs(float(s - fail[p])) for p in (i, j) if p in fail]
                    if any(d <= 4 * ulps(s, prev_end) for d in near):
                        ref.ambiguous = True
        if not partial:
            base = max(latest, reset)
            unit = tol * float(delta) + ulps(s, base)
            ref.excess(f"switch {b} conf {k} all-stop delay", base + delta - s, unit)
        else:
            if prev_end is not None:
                ref.excess(f"switch {b} conf {k} overlaps previous", prev_end - s, ulps(s, prev_end))
            for i, j in circ:
                if (i, j) in kept:
                    continue
                base = max(last_use_in.get(i, Q(0)), last_use_out.get(j, Q(0)), reset, Q(0))
                unit = tol * float(delta) + ulps(s, base)
                ref.excess(f"switch {b} conf {k} new circuit {i}->{j}", base + delta - s, unit)
        # credit: lit, switch up, both links working
        for i, j in circ:
            lo, hi = s, min(e, fail.get(i, INF), fail.get(j, INF))
            lit = _up_time(lo, hi, wins) if hi > lo else Q(0)
            if (i, j) in kept and prev_end is not None:
                lit += max(s - prev_end, Q(0))
            both = [(i, j), (j, i)] if fabric.switches[b].bidirectional and i != j else [(i, j)]
            for key in both:  # a bidirectional circuit carries both directions at once
                served[key] = served.get(key, Q(0)) + Q(rate) * lit
                if lit > 0:
                    pieces[key] = pieces.get(key, 0.0) + rate
        for i, j in circ:
            last_use_in[i] = max(last_use_in.get(i, Q(0)), e)
            last_use_out[j] = max(last_use_out.get(j, Q(0)), e)
        latest = max(latest, e)


def _up_time(lo: Q, hi: Q | float, wins: list[tuple[Q, Q | float]]) -> Q:
    """Length of [lo, hi) outside every window (windows may overlap)."""
    cuts = sorted({lo, *(a for a, _ in wins if lo < a < hi), *(z for _, z in wins if lo < z < hi)})
    cuts.append(hi)  # type: ignore[arg-type]
    up = Q(0)
    for a, z in itertools.pairwise(cuts):
        mid = (Q(a) + Q(z)) / 2
        if not any(wa <= mid < wz for wa, wz in wins):
            up += Q(z) - Q(a)
    return up
