"""Flat rows of an iteration schedule's metrics, for tables, sweeps and the CLI."""

from __future__ import annotations

from ocsched.iteration import IterationSchedule
from ocsched.model import Configuration


def iteration_row(
    schedule: IterationSchedule,
    *,
    independent: IterationSchedule | None = None,
    bound: float | None = None,
) -> dict[str, float | int | str | None]:
    """Return the metrics of an iteration schedule as one flat row (for sweeps and tables).

    Keys: ``iteration_time``, ``exposed``, ``gaps``, ``phases``, ``configurations``,
    ``delay_hidden_pct`` (share of the delay every configuration would pay that is hidden:
    outside its phase's window or saved by persistence), ``reused_pct`` (configurations that
    persisted), ``lower_bound`` and ``bound_exposed``, ``ratio_bound`` (exposed over the bound's
    exposed part), ``independent_exposed`` and ``ratio_independent`` (exposed over
    ``independent``'s); ratios are None when their reference is missing or zero.

    >>> from ocsched.iteration import Iteration, Phase
    >>> from ocsched.sequence import schedule_iteration
    >>> it = Iteration([Phase([[0, 1], [1, 0]]), Phase([[0, 1], [1, 0]], gap_before=0.2)])
    >>> ind = schedule_iteration(it, switches=1, delta=0.5, algorithm="independent")
    >>> row = iteration_row(schedule_iteration(it, switches=1, delta=0.5), independent=ind)
    >>> row["exposed"], row["reused_pct"], round(row["ratio_independent"], 6)
    (2.5, 50.0, 0.833333)
    """
    gaps = float(sum(schedule.gaps))
    lb = schedule.lower_bound if bound is None else bound
    n_conf = schedule.num_configurations
    if schedule.fabric is None:
        full = n_conf * schedule.delta
    else:  # every configuration's own switch delay
        full = sum(len(sw) * schedule.switch_delta(b) for b, sw in enumerate(schedule.switches))
    exposed = schedule.exposed

    def ratio(a: float, b: float | None) -> float | None:
        return None if b is None or b <= 0 else a / b

    ind = None if independent is None else independent.exposed
    return {
        "algorithm": schedule.algorithm,
        "iteration_time": schedule.makespan,
        "exposed": exposed,
        "gaps": gaps,
        "phases": schedule.num_phases,
        "configurations": n_conf,
        "delay_hidden_pct": 100.0 * schedule.hidden_delay / full if full > 0 else 0.0,
        "reused_pct": 100.0 * schedule.persisted / n_conf if n_conf else 0.0,
        "lower_bound": lb,
        "bound_exposed": None if lb is None else lb - gaps,
        "ratio_bound": None if lb is None else ratio(exposed, lb - gaps),
        "independent_exposed": ind,
        "ratio_independent": ratio(exposed, ind),
    }


def phase_rows(schedule: IterationSchedule) -> list[dict[str, float | int | str]]:
    """Return one row per phase (what ``ocsched schedule`` prints for an iteration).

    Keys: ``phase`` (index), ``name``, ``gap``, ``release`` (``R_k``), ``end`` (``C_k``),
    ``makespan`` (``C_k - R_k``), ``configurations`` and ``reused`` (how many of them persisted
    and saved their delay, :meth:`~ocsched.iteration.IterationSchedule.reuses`).

    >>> from ocsched.iteration import Iteration, Phase
    >>> from ocsched.sequence import schedule_iteration
    >>> it = Iteration([Phase([[0, 1], [1, 0]], name="a"), Phase([[0, 1], [1, 0]], gap_before=0.2, name="b")])
    >>> rows = phase_rows(schedule_iteration(it, switches=1, delta=0.5))
    >>> [(r["name"], r["release"], r["end"], r["reused"]) for r in rows]
    [('a', 0.0, 1.5, 0), ('b', 1.7, 2.7, 1)]
    """
    k_all = schedule.num_phases
    count, reused = [0] * k_all, [0] * k_all
    for b, (sw, ph) in enumerate(zip(schedule.switches, schedule.phase_of, strict=True)):
        prev: Configuration | None = None
        for c, k in zip(sw, ph, strict=True):
            count[k] += 1
            reused[k] += schedule.reuses(prev, c, switch=b)
            prev = c
    return [
        {
            "phase": k,
            "name": name,
            "gap": schedule.gaps[k],
            "release": release,
            "end": end,
            "makespan": end - release,
            "configurations": count[k],
            "reused": reused[k],
        }
        for k, (name, _, release, end) in enumerate(schedule.phase_spans())
    ]
