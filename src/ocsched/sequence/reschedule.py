"""Repair an iteration schedule after a switch or a link fails mid-iteration.

:func:`reschedule_iteration` keeps every phase that ended before the failure and what the phase
running at the failure did until then, and schedules the rest of that phase (its residual) and
every later phase on the degraded fabric with the iteration's own scheduler.
"""

from __future__ import annotations

import dataclasses

from ocsched._jit import clock
from ocsched.errors import InvalidInputError, InvalidScheduleError
from ocsched.fabric import Fabric, SwitchDown
from ocsched.iteration import Iteration, IterationSchedule, Phase
from ocsched.model import Configuration, Demand
from ocsched.model.failures import LinkFailure, SwitchFailure, degrade
from ocsched.schedulers import ALIASES, SCHEDULERS, scheduler_name
from ocsched.sequence import ITERATION_SCHEDULERS, schedule_iteration
from ocsched.sequence.validate import validate_iteration
from ocsched.timing.served import served_amounts

__all__ = ["reschedule_iteration"]

#: How the switches the failure leaves alone go on: finish the configuration they run at the
#: failure, or stop at the failure like the failed one (both are built; the earlier end wins).
POLICIES = ("finish", "cut")

#: A residual entry this small relative to its demand counts as served: far inside the
#: validator's relative tolerance (``ocsched.validation.TOL`` of a line), so the kept part still
#: serves it, and no configuration (and delay) is spent on round-off.
_RESIDUAL_RTOL = 1e-12


def reschedule_iteration(
    schedule: IterationSchedule,
    iteration: Iteration,
    failure: SwitchFailure | LinkFailure,
    *,
    algorithm: str | None = None,
    base: str | None = None,
) -> IterationSchedule:
    """Return a schedule of ``iteration`` that survives ``failure``, keeping what ran before it.

    Phases that ended by ``failure.at`` are kept as they are. In the phase running at the
    failure (or, if the failure falls in a compute gap, the next one), what each configuration
    served before the failure is kept: the failed switch (a link failure: its configuration only
    if it uses the failed port) stops at ``at``, and the others either finish the configuration
    they run or stop too (both are built, the one ending first is returned). The residual of
    that phase and every later phase are scheduled on the degraded fabric from when each switch
    is free, by ``algorithm`` with ``base`` (by default the ones that built ``schedule``).

    Parameters
    ----------
    schedule : IterationSchedule
        The schedule that was running; it must be valid for ``iteration`` on its own fabric.
    iteration : Iteration
        The iteration it serves.
    failure : SwitchFailure or LinkFailure
        What fails, and when (the iteration's clock).
    algorithm, base : str, optional
        The iteration scheduler and its base scheduler for the rest (keys of
        :data:`~ocsched.sequence.ITERATION_SCHEDULERS` and :data:`~ocsched.schedulers.SCHEDULERS`).

    Returns
    -------
    IterationSchedule
        Valid for ``iteration`` on the degraded fabric (recorded in it), with
        ``meta["failure"]``. Its lower bound is the old one (a failure never makes an
        iteration faster).

    Raises
    ------
    InvalidInputError
        If the failure names a switch or port outside the schedule, or ``schedule`` is not valid
        for ``iteration``.
    InfeasibleError
        If the surviving fabric cannot serve what is left.

    Examples
    --------
    >>> from ocsched import Iteration, Phase, SwitchFailure
    >>> from ocsched.sequence import schedule_iteration, validate_iteration
    >>> d = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]
    >>> it = Iteration([Phase(d), Phase(d, gap_before=1.0)])
    >>> s = schedule_iteration(it, switches=2, delta=0.5)
    >>> new = reschedule_iteration(s, it, SwitchFailure(1, 1.0))
    >>> validate_iteration(new, it, fabric=new.fabric).ok, new.makespan > s.makespan
    (True, True)
    """
    t_start = clock()
    if not isinstance(schedule, IterationSchedule):
        raise InvalidInputError(f"`schedule` must be an IterationSchedule; got {type(schedule).__name__}")
    if not isinstance(iteration, Iteration):
        raise InvalidInputError(f"`iteration` must be an Iteration; got {type(iteration).__name__}")
    old_alg, sep, old_base = schedule.algorithm.partition("/")
    if old_base in ALIASES:  # a file written before a rename: read, and recorded, by the current name
        schedule = dataclasses.replace(schedule, algorithm=old_alg + sep + ALIASES[old_base])
    alg, base_alg = _algorithms(schedule, algorithm, base)
    if isinstance(failure, LinkFailure) and failure.port >= schedule.ports:
        raise InvalidInputError(f"failed link port {failure.port} is outside 0..{schedule.ports - 1}")
    fab = schedule.on_fabric()
    degraded = degrade(fab, failure)
    before = validate_iteration(schedule, iteration, fabric=fab)
    if not before.ok:
        shown = "; ".join(str(v) for v in before.violations[:2])
        raise InvalidInputError(f"`schedule` is not valid for `iteration`: {shown}")
    at = float(failure.at)
    ends = schedule.ends
    current = next((k for k, e in enumerate(ends) if e > at), None)
    meta = {**schedule.meta, "failure": str(failure)}
    if current is None:  # the iteration was over: the failure costs nothing
        return dataclasses.replace(schedule, fabric=degraded, meta={**meta, "runtime_s": 0.0})
    best: IterationSchedule | None = None
    for policy in POLICIES:
        out = _repair(schedule, iteration, degraded, failure, current, policy, alg, base_alg)
        if best is None or out.makespan < best.makespan:
            best = out
    assert best is not None
    report = validate_iteration(best, iteration, fabric=degraded)
    if not report.ok:
        shown = "; ".join(str(v) for v in report.violations[:3])
        raise InvalidScheduleError(
            f"internal error: reschedule_iteration built an invalid schedule ({shown}); please report it"
        )
    return dataclasses.replace(best, meta={**meta, "runtime_s": clock() - t_start})


def _algorithms(schedule: IterationSchedule, algorithm: str | None, base: str | None) -> tuple[str, str]:
    """The iteration scheduler and base for the rest: given, or read off ``schedule.algorithm``."""
    old_alg, _, old_base = schedule.algorithm.partition("/")
    alg = (
        algorithm
        if algorithm is not None
        else (old_alg if old_alg in ITERATION_SCHEDULERS else "spectra-seq")
    )
    if base is not None:
        bas = scheduler_name(base, "base")
    else:
        bas = old_base if old_base in SCHEDULERS else "spectra"
    if alg not in ITERATION_SCHEDULERS:
        raise InvalidInputError(f"`algorithm` must be one of {', '.join(ITERATION_SCHEDULERS)}; got {alg!r}")
    return alg, bas


def _repair(
    schedule: IterationSchedule,
    iteration: Iteration,
    degraded: Fabric,
    failure: SwitchFailure | LinkFailure,
    current: int,
    policy: str,
    algorithm: str,
    base: str,
) -> IterationSchedule:
    """One repair: keep up to each switch's stop, schedule the rest from there."""
    at = float(failure.at)
    kept: list[list[Configuration]] = []
    tags: list[list[int]] = []
    free = []
    for b, (sw, ph) in enumerate(zip(schedule.switches, schedule.phase_of, strict=True)):
        stop = at
        if policy == "finish":
            running = [c for c in sw if c.start < at < c.end]
            if running and not (b == failure.switch and failure.stops(running[0])):
                stop = running[0].end
        confs, phases = [], []
        for c, p in zip(sw, ph, strict=True):
            if p > current or c.start >= stop:
                continue
            confs.append(c.at(c.start, stop - c.start) if c.end > stop else c)
            phases.append(p)
        kept.append(confs)
        tags.append(phases)
        free.append(stop)
    residual = _residual(iteration.phases[current].demand, kept, tags, current, degraded)
    # The phase ends when its last kept configuration does, or later (the rest of it).
    kept_end = max(
        [schedule.releases[current]]
        + [
            c.end
            for sw, ph in zip(kept, tags, strict=True)
            for c, p in zip(sw, ph, strict=True)
            if p == current
        ]
    )
    later = list(iteration.phases[current + 1 :])
    if not residual.nnz and not later:
        return _merged(schedule, degraded, kept, tags, None, 0)
    fab = _busy(degraded, free)
    if not residual.nnz:  # the phase was done by the failure: the next is released a gap after it
        after = _run([_at(later[0], kept_end + later[0].gap_before), *later[1:]], fab, algorithm, base)
        return _merged(schedule, degraded, kept, tags, after, current + 1)
    # The rest runs on the iteration's clock: its first phase is released when the phase was.
    head = Phase(residual, schedule.releases[current], iteration.phases[current].name)
    after = _run([head, *later], fab, algorithm, base)
    if later and _phase_end(after, 0) < kept_end:
        # The residual ends before a kept configuration of its phase does, so the next phase
        # would start before the phase's true end: schedule the residual first, then the rest.
        first = _run([head], fab, algorithm, base)
        end = max(kept_end, _phase_end(first, 0))
        free = [max([t] + [c.end for c in sw]) for t, sw in zip(free, first.switches, strict=True)]
        rest = _run(
            [_at(later[0], end + later[0].gap_before), *later[1:]], _busy(degraded, free), algorithm, base
        )
        both = [list(a) + list(b) for a, b in zip(first.switches, rest.switches, strict=True)]
        both_tags = [
            [0] * len(a) + [p + 1 for p in b] for a, b in zip(first.phase_of, rest.phase_of, strict=True)
        ]
        return _merged(
            schedule,
            degraded,
            [k + b for k, b in zip(kept, both, strict=True)],
            [k + [p + current for p in b] for k, b in zip(tags, both_tags, strict=True)],
            None,
            0,
        )
    return _merged(schedule, degraded, kept, tags, after, current)


def _at(phase: Phase, gap: float) -> Phase:
    """``phase`` with gap ``gap`` before it (the rest's first phase: its release on the iteration's clock)."""
    return Phase(phase.demand, gap, phase.name)


def _busy(fabric: Fabric, free: list[float]) -> Fabric:
    """``fabric`` with each switch down from 0 until it stops following the old schedule.

    The rest's configurations, and the delays before them, then come after what was kept.
    """
    return fabric.with_failures(down=[SwitchDown(b, 0.0, t) for b, t in enumerate(free) if t > 0.0])


def _run(phases: list[Phase], fabric: Fabric, algorithm: str, base: str) -> IterationSchedule:
    return schedule_iteration(Iteration(phases), fabric=fabric, algorithm=algorithm, base=base)


def _phase_end(s: IterationSchedule, k: int) -> float:
    """The end of phase k's last configuration (0 if it holds none)."""
    return max(
        [0.0]
        + [
            c.end
            for sw, ph in zip(s.switches, s.phase_of, strict=True)
            for c, p in zip(sw, ph, strict=True)
            if p == k
        ]
    )


def _merged(
    schedule: IterationSchedule,
    degraded: Fabric,
    kept: list[list[Configuration]],
    tags: list[list[int]],
    after: IterationSchedule | None,
    offset: int,
) -> IterationSchedule:
    """The kept configurations, then ``after``'s (its phases numbered from ``offset``)."""
    if after is not None:
        kept = [k + list(a) for k, a in zip(kept, after.switches, strict=True)]
        tags = [t + [p + offset for p in a] for t, a in zip(tags, after.phase_of, strict=True)]
    return dataclasses.replace(
        schedule,
        switches=tuple(tuple(s) for s in kept),
        phase_of=tuple(tuple(t) for t in tags),
        fabric=degraded,
    )


def _residual(
    demand: Demand,
    kept: list[list[Configuration]],
    tags: list[list[int]],
    phase: int,
    fabric: Fabric,
) -> Demand:
    """What the kept configurations of ``phase`` leave of its demand.

    Each kept configuration is credited only with the time it is lit itself, its switch up and
    its links working (the all-stop credit): under the partial model a kept circuit may have
    served more, so the residual is never too small, and the rest never serves too little.
    """
    confs = [
        [c for c, p in zip(sw, ph, strict=True) if p == phase] for sw, ph in zip(kept, tags, strict=True)
    ]
    served = served_amounts(demand, confs, fabric, model="all-stop")
    short = demand.values - served
    on = short > _RESIDUAL_RTOL * demand.values
    return Demand(demand.n, demand.rows[on], demand.cols[on], short[on])
