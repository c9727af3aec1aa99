"""Check an iteration schedule against its iteration and fabric: coverage per phase, barriers, the rule."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ocsched._checks import check_switches
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.iteration import Iteration, IterationSchedule
from ocsched.model import Configuration, Demand, Schedule
from ocsched.sequence.rules import crosses, iteration_switch_violations
from ocsched.timing.pools import kept_circuits
from ocsched.validation import TOL, ValidationReport, Violation, validate
from ocsched.validation.fabric import real_fabric

#: Kinds the per-phase single-matrix check reports that are checked here on whole timelines (the
#: delay rule with persistence, down windows, failed links) or once for the schedule (its fabric).
_WHOLE = frozenset({"timing", "down", "link", "delta", "rate", "model", "switches", "ports"})


def validate_iteration(
    schedule: IterationSchedule,
    iteration: Iteration,
    *,
    fabric: Fabric | None = None,
    delta: float | None = None,
    switches: int | None = None,
    tol: float = TOL,
    max_violations: int = 1000,
) -> ValidationReport:
    """Check ``schedule`` against ``iteration`` and return every violation.

    Valid when: the schedule has the iteration's ports, phases and gaps; every configuration's
    phase tag is in range and tags never decrease along a switch; every phase's configurations
    are matchings that serve its demand on the fabric (:func:`ocsched.validation.validate` on the
    phase alone, at each switch's rate, violations prefixed with the phase); every
    configuration of phase k starts at or after ``R_k = C_{k-1} + g_k`` (the barrier; the gaps
    are the iteration's); and every switch's timeline, all phases together, follows its
    fabric's rule (per-switch delay, down windows, failed links, all-stop or partial) with
    persistence (:func:`ocsched.sequence.rules.iteration_switch_violations`: a configuration
    identical to its predecessor, no down window between, needs only to start after it ends).
    Under the partial model a circuit kept from the previous phase's last configuration also
    carries the next phase's traffic from that phase's release on.

    The schedule is checked against its own fabric and, when ``fabric``, ``delta`` or
    ``switches`` is given, against that too, exactly as :func:`ocsched.validation.validate` does:
    a schedule claiming a smaller delay, a higher rate, a more lenient model or another number of
    switches than the real fabric is reported.

    Parameters
    ----------
    schedule : IterationSchedule
        The schedule to check.
    iteration : Iteration
        The phases it must serve, with their gaps.
    fabric : Fabric, optional
        The real fabric to check against as well.
    delta : float, optional
        The real uniform delay (shortcut: the schedule's fabric with every delay set to ``delta``).
    switches : int, optional
        The real number of switches.
    tol : float
        Relative tolerance (:data:`ocsched.validation.TOL`): serving within ``tol`` of the line
        sums, a delay within ``tol`` of itself, a barrier within ``tol`` of the gap, each plus a
        few ulps of the times compared; no absolute floor, so it holds at any scale.
    max_violations : int
        Stop listing after this many.

    Raises
    ------
    InvalidInputError
        For a ``fabric`` that is not a Fabric, both ``fabric`` and ``delta``, a bad ``delta`` or
        ``switches``, or a fabric whose failed link names a port the iteration does not have.

    Examples
    --------
    >>> from ocsched.iteration import Iteration, Phase
    >>> from ocsched.sequence import schedule_iteration
    >>> it = Iteration([Phase([[0, 1], [1, 0]]), Phase([[0, 2], [0, 0]], gap_before=1.0)])
    >>> sched = schedule_iteration(it, switches=2, delta=0.1)
    >>> validate_iteration(sched, it).ok
    True
    >>> [v.kind for v in validate_iteration(sched, it, delta=0.2).violations][:2]
    ['delta', 'delta']
    """
    out: list[Violation] = []

    def add(kind: str, msg: str) -> None:
        out.append(Violation(kind, msg))

    n, s = schedule.ports, schedule.num_switches
    if n != iteration.n:
        add("ports", f"schedule has {n} ports but the iteration is {iteration.n} x {iteration.n}")
    if schedule.num_phases != len(iteration):
        add("phases", f"schedule has {schedule.num_phases} phases but the iteration has {len(iteration)}")
    for k, (mine, phase) in enumerate(zip(schedule.gaps, iteration.phases, strict=False)):
        if not _close(mine, phase.gap_before, tol):
            add(
                "gaps",
                f"schedule records gap_before {mine!r} for phase {k} ({phase.name!r}) but the iteration's "
                f"is {phase.gap_before!r}",
            )
    own = _own_fabric(schedule)
    real = real_fabric(own, fabric, delta)
    if real is not None:
        real.check_ports(iteration.n)
    if switches is not None:
        check_switches(switches)
    # The claims (delay, rate, model, number of switches, meta.switches) are the single-matrix
    # validator's: judged on the schedule's switches without any configuration.
    empty = Schedule(n, schedule.delta, ((),) * s, meta=schedule.meta, fabric=schedule.fabric)
    nothing = Demand(max(n, 1), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    for v in validate(empty, nothing, fabric=real, switches=switches, tol=tol).violations:
        add(v.kind, v.message)
    fabrics = [own] if real is None or real == own or real.size != s else [own, real]
    checked = fabrics[-1]

    k_max = min(schedule.num_phases, len(iteration))
    releases = _releases(schedule, iteration, k_max)
    for b, (sw, ph) in enumerate(zip(schedule.switches, schedule.phase_of, strict=True)):
        prev_k = 0
        for idx, (conf, k) in enumerate(zip(sw, ph, strict=True)):
            where = f"switch {b} configuration {idx}"
            if not 0 <= k < k_max:
                add("phases", f"{where}: phase {k} is not a phase of the iteration (0..{k_max - 1})")
                continue
            if k < prev_k:
                add("phases", f"{where}: phase {k} follows a configuration of phase {prev_k}")
            prev_k = k
            if not (np.isfinite(conf.start) and np.isfinite(conf.end)):
                continue  # reported by the per-phase check
            release = releases[k]
            gap = iteration.phases[k].gap_before
            if conf.start < release - (tol * gap + _ulps(conf.start, release)):
                add(
                    "barrier",
                    f"{where}: phase {k} ({iteration.phases[k].name!r}) starts at {conf.start:.12g}, "
                    f"before its release {release:.12g}",
                )
        for f in fabrics:
            if b >= f.size:
                continue
            label = "" if f is own else "on the given fabric: "
            for idx, kind, msg in iteration_switch_violations(
                sw,
                f.deltas[b],
                model=f.model,
                windows=f.windows(b),
                failed_ports=f.failed_ports(b),
                rtol=tol,
                ports_per_endpoint=f.switches[b].ports_per_endpoint,
                bidirectional=f.switches[b].bidirectional,
            ):
                add(kind, f"{label}switch {b} configuration {idx}: {msg}")

    max_short = 0.0
    for k, alone in enumerate(_phase_schedules(schedule, k_max)):
        phase = iteration.phases[k]
        rep = validate(alone, phase.demand, fabric=real, tol=tol)
        found = [v for v in rep.violations if v.kind not in _WHOLE]
        short = rep.max_shortfall
        if checked.reconfiguration.keeps_circuits:
            kept = _carried_in(schedule, k, releases[k], checked)
            if kept is not None:  # what circuits kept from phase k - 1 carry after R_k counts too
                rep = validate(kept, phase.demand, fabric=real, tol=tol)
                found = [v for v in found if v.kind != "unserved"]
                found += [v for v in rep.violations if v.kind == "unserved"]
                short = rep.max_shortfall
        max_short = max(max_short, short)
        for v in found:
            add(v.kind, f"phase {k} ({phase.name!r}): {v.message}")
    if len(out) > max_violations:
        more = Violation("truncated", f"more than {max_violations} violations; stopped listing")
        out = [*out[:max_violations], more]
    return ValidationReport(out, schedule.makespan, max_short)


def _phase_schedules(schedule: IterationSchedule, k_max: int) -> list[Schedule]:
    """:meth:`IterationSchedule.phase_schedule` of phases 0..k_max-1, in one pass over the configurations."""
    per: list[list[list[Configuration]]] = [[[] for _ in schedule.switches] for _ in range(k_max)]
    for b, (sw, ph) in enumerate(zip(schedule.switches, schedule.phase_of, strict=True)):
        for c, k in zip(sw, ph, strict=True):
            if 0 <= k < k_max:
                per[k][b].append(c)
    return [
        Schedule(
            ports=schedule.ports,
            delta=schedule.delta,
            switches=tuple(tuple(sw) for sw in p),
            algorithm=schedule.algorithm,
            fabric=schedule.fabric,
        )
        for p in per
    ]


def _close(a: float, b: float, tol: float) -> bool:
    return bool(abs(a - b) <= tol * max(abs(a), abs(b)))


def _ulps(*times: float) -> float:
    """A few ulps of the times compared: the round-off of a sum of them, relative to them."""
    return 8.0 * float(np.spacing(max(abs(t) for t in times)))


def _releases(schedule: IterationSchedule, iteration: Iteration, k_max: int) -> list[float]:
    """``R_k`` from the iteration's gaps (not the schedule's own copy) and the schedule's configurations."""
    last = [-np.inf] * k_max
    for sw, ph in zip(schedule.switches, schedule.phase_of, strict=True):
        for c, k in zip(sw, ph, strict=True):
            if 0 <= k < k_max and np.isfinite(c.end):
                last[k] = max(last[k], c.end)
    releases, end = [], 0.0
    for k in range(k_max):
        releases.append(end + iteration.phases[k].gap_before)
        end = max(releases[-1], last[k])
    return releases


def _own_fabric(schedule: IterationSchedule) -> Fabric:
    """The fabric the schedule claims (a non-finite delay, reported by the claims check, as 0)."""
    if schedule.fabric is not None:
        return schedule.fabric
    d = schedule.delta
    return Fabric.uniform(max(1, schedule.num_switches), d if np.isfinite(d) and d >= 0 else 0.0)


def _carried_in(schedule: IterationSchedule, k: int, release: float, fabric: Fabric) -> Schedule | None:
    """Phase k alone, each switch's first configuration preceded by what it keeps from the switch's
    previous one (of an earlier phase) as a zero-length configuration at ``max(its end, R_k)``.

    Under the partial model the single-matrix check then credits those circuits with the time
    they stay lit after the release (none across a down window, none on a link failed by then),
    which the phase alone does not see. None when no switch keeps anything across the barrier.
    """
    out: list[tuple[Configuration, ...]] = []
    any_kept = False
    for b, (sw, ph) in enumerate(zip(schedule.switches, schedule.phase_of, strict=True)):
        mine = tuple(c for c, p in zip(sw, ph, strict=True) if p == k)
        first = next((i for i, p in enumerate(ph) if p == k), None)
        ghost = None
        if mine and first and b < fabric.size and ph[first - 1] < k:
            ghost = _kept(sw[first - 1], sw[first], release, fabric, b)
        any_kept = any_kept or ghost is not None
        out.append(mine if ghost is None else (ghost, *mine))
    if not any_kept:
        return None
    return dataclasses.replace(schedule.phase_schedule(k), switches=tuple(out))


def _kept(
    prev: Configuration, conf: Configuration, release: float, fabric: Fabric, b: int
) -> Configuration | None:
    """The circuits ``conf`` keeps from ``prev`` that stay lit from ``max(prev.end, release)`` on."""
    t = max(prev.end, release)
    n = conf.ports
    if not (np.isfinite(prev.end) and np.isfinite(conf.start)) or conf.start <= t or prev.ports != n:
        return None
    if crosses(fabric.windows(b), prev.end, conf.start):
        return None  # the switch goes dark in between
    pi, po = prev.circuit_arrays()
    ci, co = conf.circuit_arrays()
    ok = (po >= 0) & (po < n) & (pi < n) & (pi >= 0)
    pi, po = pi[ok], po[ok]
    # The circuits of conf that prev holds too (as many times; either way round on a bidirectional
    # switch), as the fabric's rule keeps them.
    switch = fabric.switches[b]
    owner = np.concatenate([np.zeros(pi.size, np.int64), np.ones(ci.size, np.int64)])
    kept = kept_circuits(owner, np.concatenate([pi, ci]), np.concatenate([po, co]), switch.bidirectional)
    ins, outs = ci[kept[pi.size :]], co[kept[pi.size :]]
    # A circuit whose link fails before conf starts is not lit until then (conf using it is
    # reported as a failed-link violation anyway).
    failed = fabric.failed_ports(b)
    lit = [
        min(failed.get(int(i), np.inf), failed.get(int(j), np.inf)) >= conf.start
        for i, j in zip(ins, outs, strict=True)
    ]
    ins, outs = ins[np.array(lit, dtype=bool)], outs[np.array(lit, dtype=bool)]
    if not ins.size:
        return None
    return Configuration.sparse(t, 0.0, ins, outs, ports=n)


def validate_any(
    schedule: Schedule | IterationSchedule,
    demand: Any,
    *,
    fabric: Fabric | None = None,
    delta: float | None = None,
    switches: int | None = None,
    tol: float = TOL,
    max_violations: int = 1000,
) -> ValidationReport:
    """:func:`ocsched.validation.validate` for a Schedule, :func:`validate_iteration` for an iteration's.

    This is ``ocsched.validate``: one entry point for both kinds of schedule, with the same
    keywords (see :func:`ocsched.validation.validate` for what each checks).

    Parameters
    ----------
    schedule : Schedule or IterationSchedule
        The schedule to check.
    demand : array_like, sparse matrix, Demand, DataFrame, DiGraph or Iteration
        What it must serve (an Iteration for an iteration schedule).
    fabric : Fabric, optional
        The real fabric to check against as well.
    delta : float, optional
        The real uniform delay.
    switches : int, optional
        The real number of switches.
    tol : float
        Relative tolerance (:data:`ocsched.validation.TOL`).
    max_violations : int
        Stop listing after this many.

    >>> from ocsched import schedule
    >>> validate_any(schedule([[0, 1], [1, 0]], switches=1, delta=0.1), [[0, 1], [1, 0]]).ok
    True
    """
    kw: dict[str, Any] = dict(
        fabric=fabric, delta=delta, switches=switches, tol=tol, max_violations=max_violations
    )
    if isinstance(schedule, IterationSchedule):
        if not isinstance(demand, Iteration):
            raise InvalidInputError(
                f"an iteration schedule is validated against an Iteration; got {type(demand).__name__}"
            )
        return validate_iteration(schedule, demand, **kw)
    return validate(schedule, demand, **kw)
