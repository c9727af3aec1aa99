"""Repair a schedule after a switch or a link fails mid-run: keep what was done, replan the rest.

:func:`reschedule` checks the schedule against the demand, keeps every configuration that
finished before the failure, cuts what the failure hits at that moment, lets the switches it
leaves alone finish what they run (or keep their whole schedule, or stop too: whichever ends
first), places what is left on the surviving fabric and validates the result before returning it.
What a cut keeps and what it leaves to place again (the kept configurations, the pieces, the
residual, and their compiled forms) is :mod:`~ocsched.reschedule._remainder`'s.
"""

from __future__ import annotations

import dataclasses
import math
from typing import overload

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_choice
from ocsched._jit import clock
from ocsched._types import FloatArray
from ocsched._version import __version__
from ocsched.assign import PLACEMENTS, _identical_live, place_on_fabric
from ocsched.assign.hold import hold_lengths
from ocsched.bounds import lower_bound
from ocsched.decompose import decompose
from ocsched.errors import InvalidInputError, InvalidScheduleError
from ocsched.fabric import Fabric, SwitchDown
from ocsched.iteration import Iteration, IterationSchedule
from ocsched.model import Configuration, Demand, Schedule, as_demand
from ocsched.model.failures import LinkFailure, SwitchFailure, degrade
from ocsched.reschedule._remainder import (
    _kept,
    _leftover,
    _merge,
    _pieces,
    _repair_on_identical,
    _residual,
    _split_any,
)
from ocsched.schedulers import SCHEDULERS
from ocsched.sequence.reschedule import reschedule_iteration
from ocsched.validation import validate

__all__ = ["LinkFailure", "SwitchFailure", "degrade", "reschedule"]  # the failures live in fabric


@overload
def reschedule(
    schedule: Schedule,
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    failure: SwitchFailure | LinkFailure,
    *,
    placement: str = ...,
) -> Schedule: ...


@overload
def reschedule(
    schedule: IterationSchedule,
    demand: Iteration,
    failure: SwitchFailure | LinkFailure,
    *,
    placement: str = ...,
) -> IterationSchedule: ...


def reschedule(
    schedule: Schedule | IterationSchedule,
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand | Iteration,
    failure: SwitchFailure | LinkFailure,
    *,
    placement: str = "pack",
) -> Schedule | IterationSchedule:
    """Return a schedule for ``demand`` that survives ``failure``, reusing ``schedule`` up to it.

    An :class:`~ocsched.IterationSchedule` with its :class:`~ocsched.Iteration` is repaired by
    :func:`ocsched.sequence.reschedule.reschedule_iteration` (the phases that ended are kept,
    the running one keeps what it served, the rest is scheduled by the schedule's own iteration
    scheduler); what follows describes a single-matrix schedule.

    Everything that finished by ``failure.at`` is kept. The switch the failure hits cuts the
    configuration it is running at ``at`` (a link failure: only if that configuration uses the
    failed port; under the partial model its other circuits stay lit until the configuration's
    end), and its later configurations are dropped. Each switch the failure leaves alone
    either finishes the configuration it is running and then reconfigures, or keeps its whole
    schedule, or (as the failed one) is cut at ``at``: all three are built and the one that
    ends first is returned, so the result never ends later than cutting every switch.

    What the dropped and cut configurations would still have served (each configuration's
    permutation with its remaining time, as demand) is placed on the degraded fabric with
    ``placement``, each switch from when it stops following the old schedule (dark from then:
    its first new configuration starts a delay later). No new decomposition is needed, so this
    costs a fraction of scheduling from scratch. If the pieces fall short of the residual
    (under the partial model the dropped schedule's kept circuits also served in its gaps), the
    residual is decomposed afresh with Spectra. On bidirectional or multi-port switches, whose
    configurations are b-matchings, the residual (each circuit credited both ways on
    bidirectional switches) is scheduled by ``spectra-ports`` on the degraded fabric, each
    switch busy until it stops following the old schedule.

    Parameters
    ----------
    schedule : Schedule
        The schedule that was running; it must be valid for ``demand`` on its own fabric.
    demand : array_like, sparse matrix or Demand
        The demand it serves.
    failure : SwitchFailure or LinkFailure
        What fails, and when.
    placement : str
        A key of :data:`~ocsched.assign.PLACEMENTS` for the residual (``"pack"`` only on
        bidirectional or multi-port switches).

    Returns
    -------
    Schedule
        Valid for ``demand`` on the degraded fabric (recorded in it, so the file is version 2),
        with ``meta["failure"]`` describing the failure.

    Raises
    ------
    InvalidInputError
        If the failure names a switch or port outside the schedule, ``demand`` does not match,
        or ``schedule`` is not valid for ``demand`` (the message names its first violations).
    InfeasibleError
        If the surviving fabric cannot serve the residual (every switch down, or a port whose
        links have all failed still has demand).
    InvalidScheduleError
        Never for valid input: the result is validated before it is returned, and a failure
        there is a bug (reported as an internal error, never returned).

    Examples
    --------
    >>> from ocsched import schedule, validate
    >>> d = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]
    >>> s = schedule(d, switches=2, delta=0.5)
    >>> new = reschedule(s, d, SwitchFailure(1, 1.0))
    >>> validate(new, d).ok, new.makespan, new.on_fabric().down
    (True, 4.5, (SwitchDown(switch=1, start=1.0, end=inf),))
    """
    if isinstance(schedule, IterationSchedule) or isinstance(demand, Iteration):
        if not (isinstance(schedule, IterationSchedule) and isinstance(demand, Iteration)):
            raise InvalidInputError(
                "an iteration schedule is rescheduled with its Iteration (and a schedule with its demand); "
                f"got {type(schedule).__name__} and {type(demand).__name__}"
            )
        return reschedule_iteration(schedule, demand, failure)
    t_start = clock()
    dem = as_demand(demand)
    check_choice(placement, "placement", PLACEMENTS)
    if dem.n != schedule.ports:
        raise InvalidInputError(f"`demand` is {dem.n} x {dem.n} but the schedule has {schedule.ports} ports")
    fab = schedule.on_fabric()
    ports = not all(x.is_plain for x in fab.switches)  # b-matchings: the residual goes to spectra-ports
    if ports and placement != "pack":
        raise InvalidInputError(
            f"placement {placement!r} places permutations on one-port directed switches; on bidirectional "
            "or multi-port ones the rest is scheduled by spectra-ports (placement 'pack')"
        )
    if isinstance(failure, LinkFailure) and failure.port >= dem.n:
        raise InvalidInputError(f"failed link port {failure.port} is outside 0..{dem.n - 1}")
    degraded = degrade(fab, failure)
    before = validate(schedule, dem)
    if not before.ok:
        shown = "; ".join(str(v) for v in before.violations[:2])
        more = f" (and {len(before.violations) - 2} more)" if len(before.violations) > 2 else ""
        raise InvalidInputError(f"`schedule` is not valid for `demand`: {shown}{more}")
    best: Schedule | None = None
    best_rank = len(POLICIES)
    seen: set[bytes] = set()
    # Cutting every switch first (the fastest: compiled on identical switches); a policy whose
    # cheap bound cannot beat the best so far is skipped.
    for policy in sorted(POLICIES, key=lambda p: p != "cut"):
        cut = _cuts(schedule, failure, policy)
        if cut.tobytes() in seen:
            continue  # the same cuts as a policy tried (nothing runs at the failure)
        seen.add(cut.tobytes())
        if best is not None and not ports and _bound(schedule, dem, degraded, failure, cut) > best.makespan:
            continue
        if ports:
            out = _repair_ports(schedule, dem, degraded, failure, cut, t_start)
        else:
            out = _repair(schedule, dem, fab, degraded, failure, cut, placement, t_start)
        rank = POLICIES.index(policy)
        if best is None or (out.makespan, rank) < (best.makespan, best_rank):
            best, best_rank = out, rank
    assert best is not None
    report = validate(best, dem)
    if not report.ok:
        shown = "; ".join(str(v) for v in report.violations[:3])
        raise InvalidScheduleError(
            f"internal error: reschedule built an invalid schedule ({POLICIES[best_rank]}: {shown}); "
            "please report it"
        )
    return dataclasses.replace(best, meta={**best.meta, "runtime_s": clock() - t_start})


#: How the switches the failure leaves alone go on, in order of preference when two end together:
#: finish the configuration running at the failure, keep the whole old schedule, or stop at
#: the failure like the failed switch.
POLICIES = ("finish", "keep", "cut")


def _bound(
    schedule: Schedule, dem: Demand, fabric: Fabric, failure: SwitchFailure | LinkFailure, cut: FloatArray
) -> float:
    """A makespan no repair with these cuts can beat (all-stop; 0 under partial, where it may serve less).

    What is left must be placed after each switch's start: the time T at which
    ``sum_b r_b (T - t0_b)^+`` reaches the amount left (delays and windows ignored: they only make
    it later), and no earlier than the kept part ends.
    """
    if fabric.reconfiguration.keeps_circuits or _split_any(schedule, cut, failure, fabric.model):
        return 0.0
    at = float(failure.at)
    ends = [
        max([at] + [min(c.end, float(cut[b])) for c in sw if c.start < cut[b]])
        for b, sw in enumerate(schedule.switches)
    ]
    kept_end = max(
        (min(c.end, float(cut[b])) for b, sw in enumerate(schedule.switches) for c in sw if c.start < cut[b]),
        default=0.0,
    )
    dec, short = _leftover(schedule, dem, fabric, cut)
    if not short:
        return kept_end
    work = float(dec.weights.sum())
    # No delay before the first piece: it may extend the running configuration (_extend_running).
    ready = np.array(ends)
    rate = np.array(fabric.rates)
    dead = [any(a <= ends[b] and e == math.inf for a, e in fabric.windows(b)) for b in range(fabric.size)]
    order = [b for b in np.argsort(ready, kind="stable").tolist() if not dead[b]]
    # Fill the switches as they become ready: between two ready times, the ready ones serve.
    served, r_sum = 0.0, 0.0
    for k, b in enumerate(order):
        r_sum += float(rate[b])
        nxt = float(ready[order[k + 1]]) if k + 1 < len(order) else math.inf
        t = float(ready[b])
        if served + r_sum * (nxt - t) >= work:
            return max(kept_end, t + (work - served) / r_sum)
        served += r_sum * (nxt - t)
    return math.inf


def _cuts(schedule: Schedule, failure: SwitchFailure | LinkFailure, policy: str) -> FloatArray:
    """Per switch, when it stops following ``schedule`` (inf: never; what runs then is cut there).

    The failed switch stops at ``at``, or (a link failure) at the end of the configuration it
    runs then if that one does not use the port; the others as ``policy`` says.
    """
    at = float(failure.at)
    out = np.full(len(schedule.switches), at)
    for b, sw in enumerate(schedule.switches):
        running = [c for c in sw if c.start < at < c.end]
        if b == failure.switch:
            if running and not failure.stops(running[0]):
                out[b] = running[0].end
            continue
        if policy == "keep":
            out[b] = np.inf
        elif policy == "finish" and running:
            out[b] = running[0].end
    return out


def _repair(
    schedule: Schedule,
    dem: Demand,
    fab: Fabric,
    degraded: Fabric,
    failure: SwitchFailure | LinkFailure,
    cut: FloatArray,
    placement: str,
    t_start: float,
) -> Schedule:
    """The schedule kept up to ``cut``, the rest placed on ``degraded`` from then (see :func:`reschedule`)."""
    at = float(failure.at)
    kept = _kept(schedule, cut, failure, degraded.model)
    # Each switch starts over when its kept part ends (never before the failure: that is when
    # the new plan is made).
    t0 = np.array([max([at] + [c.end for c in sw]) for sw in kept])
    new: tuple[tuple[Configuration, ...], ...] = tuple(() for _ in kept)
    residual: Demand | None = None
    splits = 0
    # Identical surviving switches: Spectra's placement or pack, compiled with what is left (greedy
    # alone, partial layouts and heterogeneous fabrics take the general path).
    uniform = (cut == at).all() and not degraded.reconfiguration.keeps_circuits and placement != "greedy"
    live = _identical_live(degraded, at) if uniform else []
    if live:
        new, splits = _repair_on_identical(schedule, dem, degraded, at, live, placement)
    else:
        if not degraded.reconfiguration.keeps_circuits and not _split_any(
            schedule, cut, failure, degraded.model
        ):
            dec, short = _leftover(schedule, dem, degraded, cut)
        else:
            residual = _residual(dem, kept, degraded)
            dec, short = _merge(_pieces(schedule, degraded, cut, failure), dem.n), residual.nnz > 0
        if short:
            if residual is None and (degraded.failed_links or degraded.reconfiguration.keeps_circuits):
                residual = _residual(dem, kept, degraded)  # what the re-fit around links must serve
            new, splits = place_on_fabric(dec, degraded, method=placement, t0=t0, demand=residual)
    out = _assemble(schedule, kept, new, degraded, dem, failure, splits, t_start)
    # Under all-stop the pieces are exactly what the dropped configurations would have served.
    if residual is not None and residual.nnz and not validate(out, dem).ok:
        mean = float(np.average(degraded.deltas, weights=degraded.rates))
        dec = decompose(residual, method="spectra", delta=mean)
        new, splits = place_on_fabric(dec, degraded, method=placement, t0=t0, demand=residual)
        out = _assemble(schedule, kept, new, degraded, dem, failure, splits, t_start)
    merged = _extend_running(kept, new, degraded, t0)
    if merged is not None:
        alt = _assemble(schedule, merged[0], merged[1], degraded, dem, failure, splits, t_start)
        if alt.makespan <= out.makespan:
            out = alt
    return out


def _repair_ports(
    schedule: Schedule,
    dem: Demand,
    degraded: Fabric,
    failure: SwitchFailure | LinkFailure,
    cut: FloatArray,
    t_start: float,
) -> Schedule:
    """:func:`_repair` on bidirectional or multi-port switches: the residual scheduled afresh.

    Its configurations are b-matchings, so the residual (what the kept part leaves, each circuit
    credited both ways on bidirectional switches) is scheduled by spectra-ports on the degraded
    fabric with each switch busy until it stops following the old schedule (down from 0 until
    then: its first new configuration starts a delay later), or, if that ends later, served by
    the other switches holding their last configurations longer
    (:func:`~ocsched.assign.hold.hold_lengths`: no reconfiguration, where those circuits cover it).
    """
    at = float(failure.at)
    kept = _kept(schedule, cut, failure, degraded.model)
    residual = _residual(dem, kept, degraded)
    new: tuple[tuple[Configuration, ...], ...] = tuple(() for _ in kept)
    if not residual.nnz:
        return _assemble(schedule, kept, new, degraded, dem, failure, 0, t_start)
    free = [max([at] + [c.end for c in sw]) for sw in kept]
    busy = degraded.with_failures(down=[SwitchDown(b, 0.0, t) for b, t in enumerate(free) if t > 0.0])
    res = SCHEDULERS["spectra-ports"].run(residual, busy, None)
    out = _assemble(schedule, kept, res.switches, degraded, dem, failure, res.splits, t_start)
    # Or no reconfiguration at all: the other switches hold what they run last for longer, where
    # those circuits serve every entry left (kept only if valid there: windows may interfere).
    holders = [b for b, sw in enumerate(kept) if sw and b != failure.switch and sw[-1].end >= at]
    last = [kept[b][-1] for b in holders]
    hold = hold_lengths(
        residual, last, [degraded.switches[b] for b in holders], np.array([c.end for c in last])
    )
    if hold is not None:
        longer = [list(sw) for sw in kept]
        for b, c, x in zip(holders, last, hold.tolist(), strict=True):
            longer[b][-1] = c.at(c.start, c.duration + x)
        alt = _assemble(schedule, longer, new, degraded, dem, failure, 0, t_start)
        if alt.makespan < out.makespan and validate(alt, dem).ok:
            out = alt
    return out


def _extend_running(
    kept: list[list[Configuration]],
    new: tuple[tuple[Configuration, ...], ...],
    fabric: Fabric,
    t0: FloatArray,
) -> tuple[list[list[Configuration]], tuple[tuple[Configuration, ...], ...]] | None:
    """Where a switch's new configurations repeat the one it was running when it started over,
    run that one longer instead (no reconfiguration), the others after it; None if none does.

    Only on all-stop switches without down windows or failed links, where it is valid by
    construction: the new configurations before the repeated one start later by its length
    (each still a delay after the previous end), those after it a delay earlier (the delay the
    repeated one paid).
    """
    kept_out = [list(sw) for sw in kept]
    new_out = [list(sw) for sw in new]
    changed = False
    for b, sw in enumerate(new_out):
        if not kept_out[b] or not sw:
            continue
        last = kept_out[b][-1]
        plain = (
            not fabric.reconfiguration.keeps_circuits and not fabric.windows(b) and not fabric.failed_ports(b)
        )
        if last.end != t0[b] or not plain:
            continue
        same = [j for j, c in enumerate(sw) if np.array_equal(c.perm, last.perm)]
        if not same:
            continue
        j = same[0]
        extra = sw[j].duration
        kept_out[b][-1] = Configuration(last.start, last.duration + extra, last.perm)
        earlier = fabric.deltas[b]
        sw[:] = [
            Configuration(c.start + extra, c.duration, c.perm)
            if k < j
            else Configuration(c.start - earlier, c.duration, c.perm)
            for k, c in enumerate(sw)
            if k != j
        ]
        changed = True
    return (kept_out, tuple(tuple(sw) for sw in new_out)) if changed else None


def _assemble(
    schedule: Schedule,
    kept: list[list[Configuration]],
    new: tuple[tuple[Configuration, ...], ...],
    fabric: Fabric,
    dem: Demand,
    failure: SwitchFailure | LinkFailure,
    splits: int,
    t_start: float,
) -> Schedule:
    switches = tuple(tuple(k) + tuple(x) for k, x in zip(kept, new, strict=True))
    info = {"kind": "switch" if isinstance(failure, SwitchFailure) else "link", "at": failure.at}
    info["switch"] = failure.switch
    if isinstance(failure, LinkFailure):
        info["port"] = failure.port
    # Losing a switch or a link never makes a schedule faster: the original bound still holds.
    lb = schedule.lower_bound if schedule.lower_bound is not None else lower_bound(dem, fabric=fabric)
    return Schedule(
        ports=schedule.ports,
        delta=max(fabric.deltas),
        switches=switches,
        algorithm=f"{schedule.algorithm}+reschedule" if schedule.algorithm else "reschedule",
        lower_bound=lb if math.isfinite(lb) else None,
        splits=schedule.splits + splits,
        meta={
            "ocsched_version": __version__,
            "switches": len(switches),
            "failure": info,
            "runtime_s": clock() - t_start,
        },
        fabric=fabric,
    )
