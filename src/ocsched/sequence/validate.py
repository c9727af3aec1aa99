"""Check an iteration schedule against its iteration: coverage per phase, barriers, the delay rule."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ocsched._checks import check_delta
from ocsched.errors import InvalidInputError
from ocsched.iteration import Iteration, IterationSchedule, start_after
from ocsched.model import Configuration, Schedule
from ocsched.validate import ValidationReport, Violation, validate


def validate_iteration(
    schedule: IterationSchedule,
    iteration: Iteration,
    *,
    delta: float | None = None,
    tol: float = 1e-9,
    max_violations: int = 1000,
) -> ValidationReport:
    """Check ``schedule`` against ``iteration`` and return every violation.

    Valid when: the schedule has the iteration's ports and phases; every configuration's phase
    tag is in range and tags never decrease along a switch; every phase's configurations are
    matchings that serve its demand (checked by :func:`ocsched.validate.validate` on the phase
    alone, violations prefixed with the phase); every configuration of phase k starts at or after
    ``R_k = C_{k-1} + g_k`` (the barrier; the gaps are the iteration's); and every configuration
    starts at least ``delta`` after the previous one on its switch ends (the first at ``delta``
    or later), or just after it if it is identical (persistence).

    Parameters
    ----------
    schedule : IterationSchedule
        The schedule to check.
    iteration : Iteration
        The phases it must serve.
    delta : float, optional
        The fabric's delay, to check against instead of the schedule's own (a schedule claiming a
        smaller one is reported).
    tol : float
        Relative tolerance for serving and timing.
    max_violations : int
        Stop listing after this many.

    Examples
    --------
    >>> from ocsched.iteration import Iteration, Phase
    >>> from ocsched.sequence import schedule_iteration
    >>> it = Iteration([Phase([[0, 1], [1, 0]]), Phase([[0, 2], [0, 0]], gap_before=1.0)])
    >>> validate_iteration(schedule_iteration(it, switches=2, delta=0.1), it).ok
    True
    """
    out: list[Violation] = []

    def add(kind: str, msg: str) -> None:
        out.append(Violation(kind, msg))

    if schedule.ports != iteration.n:
        add(
            "ports", f"schedule has {schedule.ports} ports but the iteration is {iteration.n} x {iteration.n}"
        )
    if schedule.num_phases != len(iteration):
        add("phases", f"schedule has {schedule.num_phases} phases but the iteration has {len(iteration)}")
    d = schedule.delta
    if delta is not None:
        d = check_delta(delta)
        if schedule.delta < d:
            add("delta", f"schedule assumes delta {schedule.delta:.12g}, below the fabric's {d:.12g}")
    if not (np.isfinite(d) and d >= 0):
        add("delta", f"schedule delta must be a finite number >= 0; got {d!r}")
        d = 0.0
    k_max = min(schedule.num_phases, len(iteration))
    # Releases from the iteration's gaps, not the schedule's own copy of them.
    last = [-np.inf] * k_max
    for sw, ph in zip(schedule.switches, schedule.phase_of, strict=True):
        for c, k in zip(sw, ph, strict=True):
            if 0 <= k < k_max and np.isfinite(c.end):
                last[k] = max(last[k], c.end)
    releases, end = [], 0.0
    for k in range(k_max):
        releases.append(end + iteration.phases[k].gap_before)
        end = max(releases[-1], last[k])
    scale_t = tol * max(1.0, end)
    for b, (sw, ph) in enumerate(zip(schedule.switches, schedule.phase_of, strict=True)):
        prev: Configuration | None = None
        prev_k = 0
        for idx, (conf, k) in enumerate(zip(sw, ph, strict=True)):
            where = f"switch {b} configuration {idx}"
            if not 0 <= k < k_max:
                add("phases", f"{where}: phase {k} is not a phase of the iteration (0..{k_max - 1})")
                continue
            if k < prev_k:
                add("phases", f"{where}: phase {k} follows a configuration of phase {prev_k}")
            prev_k = k
            if not (np.isfinite(conf.start) and np.isfinite(conf.duration)):
                continue  # reported by the per-phase check
            if conf.start < releases[k] - scale_t:
                add(
                    "barrier",
                    f"{where}: phase {k} ({iteration.phases[k].name!r}) starts at {conf.start:.12g}, "
                    f"before its release {releases[k]:.12g}",
                )
            earliest = start_after(prev, conf, d)
            if conf.start < earliest - scale_t:
                add(
                    "timing",
                    f"{where}: starts at {conf.start:.12g}, before {earliest:.12g} (the previous end"
                    f"{'' if prev is not None and earliest == prev.end else ' + delta'})",
                )
            prev = conf
    max_short = 0.0
    for k in range(k_max):
        phase = iteration.phases[k]
        # Delay 0: the delay rule with persistence is checked above; here coverage and matchings.
        alone = dataclasses.replace(schedule.phase_schedule(k), delta=0.0)
        rep = validate(alone, phase.demand, tol=tol)
        max_short = max(max_short, rep.max_shortfall)
        for v in rep.violations:
            if v.kind not in ("timing", "delta"):  # timing is checked above, with persistence
                add(v.kind, f"phase {k} ({phase.name!r}): {v.message}")
    if len(out) > max_violations:
        more = Violation("truncated", f"more than {max_violations} violations; stopped listing")
        out = [*out[:max_violations], more]
    return ValidationReport(out, schedule.makespan, max_short)


def validate_any(schedule: Schedule | IterationSchedule, demand: Any, **kwargs: Any) -> ValidationReport:
    """:func:`ocsched.validate.validate` for a Schedule, :func:`validate_iteration` for an iteration's.

    This is ``ocsched.validate``: one entry point for both kinds of schedule.

    >>> from ocsched import schedule
    >>> validate_any(schedule([[0, 1], [1, 0]], switches=1, delta=0.1), [[0, 1], [1, 0]]).ok
    True
    """
    if isinstance(schedule, IterationSchedule):
        if not isinstance(demand, Iteration):
            raise InvalidInputError(
                f"an iteration schedule is validated against an Iteration; got {type(demand).__name__}"
            )
        return validate_iteration(schedule, demand, **kwargs)
    return validate(schedule, demand, **kwargs)
