"""Gantt charts of schedules: switch x time, the dark reconfiguration interval before each configuration."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.io import check_writable
from ocsched.iteration import IterationSchedule, persists
from ocsched.model import Schedule
from ocsched.report.figures import pyplot, save_figure
from ocsched.timing import dark_interval

__all__ = ["MAX_BARS", "MAX_SWITCHES", "permutation_groups", "plot_schedule", "write_schedule_plot"]

#: Most switches one chart draws (a row each); beyond that the chart is unreadable and huge.
MAX_SWITCHES = 256
#: Most configurations one chart draws.
MAX_BARS = 20_000


def permutation_groups(schedule: Schedule) -> list[list[int]]:
    """Number the distinct circuit sets of ``schedule``: per switch, the group of each configuration.

    Pieces of one permutation (split by equalization across switches or in time) have identical
    circuits and get the same number; numbers follow first appearance, switch by switch.

    >>> from ocsched.model import Configuration as C
    >>> a, b = [(0, 1), (1, 0)], [(0, 0), (1, 1)]
    >>> sched = Schedule(2, 0.1, ((C.from_circuits(0.1, 1, a, ports=2), C.from_circuits(1.2, 1, b, ports=2)),
    ...                            (C.from_circuits(0.1, 0.5, b, ports=2),)))
    >>> permutation_groups(sched)
    [[0, 1], [1]]
    """
    ids: dict[tuple[int, ...], int] = {}
    return [[ids.setdefault(tuple(c.perm.tolist()), len(ids)) for c in sw] for sw in schedule.switches]


def _check_drawable(schedule: Schedule) -> None:
    s = schedule.num_switches
    if s > MAX_SWITCHES:
        raise InvalidInputError(
            f"`schedule` has {s} switches; a chart draws at most {MAX_SWITCHES} (one row each)"
        )
    if schedule.num_configurations > MAX_BARS:
        raise InvalidInputError(
            f"`schedule` has {schedule.num_configurations} configurations; a chart draws at most {MAX_BARS}"
        )
    for b, sw in enumerate(schedule.switches):
        for k, c in enumerate(sw):
            if not (math.isfinite(c.start) and math.isfinite(c.duration) and math.isfinite(c.end)):
                raise InvalidInputError(
                    f"`schedule` switch {b} configuration {k} has a non-finite time "
                    f"(start {c.start}, duration {c.duration}); it cannot be drawn"
                )
    if not math.isfinite(schedule.delta) or not math.isfinite(schedule.lower_bound or 0.0):
        raise InvalidInputError("`schedule` has a non-finite delta or lower bound; it cannot be drawn")


def plot_schedule(schedule: Schedule, ax: Any = None, *, title: str | None = None) -> Any:
    """Draw ``schedule`` as a Gantt chart on ``ax`` (a new figure's axes if None) and return the axes.

    Each configuration is a bar on its switch (numbered from 0, as in the JSON and in
    :func:`ocsched.validate`), preceded by its hatched dark interval
    (:func:`ocsched.timing.dark_interval`). Pieces of one permutation (configurations with the
    same circuits) share a colour and a number (from 0); the lower bound, if known, is a dashed
    vertical line.

    Raises
    ------
    InvalidInputError
        If the schedule has non-finite times, or more than :data:`MAX_SWITCHES` switches or
        :data:`MAX_BARS` configurations.

    Examples
    --------
    >>> from ocsched.schedulers import schedule
    >>> ax = plot_schedule(schedule([[0, 1], [1, 0]], switches=2, delta=0.1))
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['OCS 0', 'OCS 1']
    >>> pyplot().close(ax.figure)
    """
    _check_drawable(schedule)
    plt = pyplot()
    s = max(schedule.num_switches, 1)
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.5 + 0.45 * s))
    groups = permutation_groups(schedule)
    ngroups = 1 + max((g for sw in groups for g in sw), default=-1)
    cmap = plt.get_cmap("tab20")
    span = max(schedule.makespan, schedule.lower_bound or 0.0, 1e-12)
    for b, sw in enumerate(schedule.switches):
        for k, (c, gid) in enumerate(zip(sw, groups[b], strict=True)):
            # A configuration identical to the one its switch holds persists (iterations): no delay.
            kept = k > 0 and getattr(schedule, "phase_of", None) is not None and persists(sw[k - 1], c)
            if schedule.delta > 0 and not kept:
                dark_start, dark_end = dark_interval(c.start, schedule.delta)
                ax.barh(
                    b,
                    dark_end - dark_start,
                    left=dark_start,
                    height=0.7,
                    color="white",
                    edgecolor="0.4",
                    hatch="////",
                    linewidth=0.4,
                )
            ax.barh(
                b,
                c.duration,
                left=c.start,
                height=0.7,
                color=cmap(gid % 20),
                edgecolor="black",
                linewidth=0.4,
            )
            if c.duration > 0.03 * span:
                ax.text(c.start + c.duration / 2, b, str(gid), ha="center", va="center", fontsize=6)
    if schedule.lower_bound:
        ax.axvline(
            schedule.lower_bound,
            color="black",
            linestyle="--",
            linewidth=1.2,
            label=f"lower bound {schedule.lower_bound:.4g}",
        )
    ax.axvline(
        schedule.makespan,
        color="black",
        linestyle="-",
        linewidth=0.8,
        label=f"makespan {schedule.makespan:.4g}",
    )
    ax.set_yticks(range(s), [f"OCS {b}" for b in range(s)])
    ax.set_ylim(s - 0.5, -0.5)  # switch 0 on top
    ax.set_xlabel("time (hatched: reconfiguration delay δ; number: permutation)")
    ax.set_title(
        title
        or f"{schedule.algorithm or 'schedule'}: {schedule.ports} ports, {ngroups} permutations, "
        f"{schedule.num_configurations} configurations, δ = {schedule.delta:g}",
        loc="left",
        fontsize=10,
    )
    ax.legend(
        fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False, borderaxespad=0.2
    )
    ax.set_xlim(0, span * 1.02)
    return ax


def plot_iteration_schedule(schedule: IterationSchedule, ax: Any = None, *, title: str | None = None) -> Any:
    """Draw an iteration schedule: :func:`plot_schedule` with each phase shaded and named.

    Phase k's window ``[R_k, C_k]`` is shaded (alternating tones) and labelled with its name at
    the top; its compute gap ``[C_{k-1}, R_k]`` is left white. A configuration that persists from
    the previous one on its switch is drawn without a dark interval (it pays no delay).

    Examples
    --------
    >>> from ocsched.iteration import Iteration, Phase
    >>> from ocsched.sequence import schedule_iteration
    >>> ring = [[0, 1], [1, 0]]
    >>> it = Iteration([Phase(ring, name="a"), Phase(ring, gap_before=0.3, name="b")])
    >>> ax = plot_iteration_schedule(schedule_iteration(it, switches=1, delta=0.1))
    >>> [t.get_text() for t in ax.texts if t.get_text() in ("a", "b")]
    ['a', 'b']
    >>> pyplot().close(ax.figure)
    """
    if ax is None:  # one row more than plot_schedule's figure: the band of phase names
        _, ax = pyplot().subplots(figsize=(10, 1.2 + 0.45 * max(len(schedule.switches), 1)))
    ax = plot_schedule(schedule, ax, title=title)  # type: ignore[arg-type]  # the same timelines
    bottom, top = ax.get_ylim()  # switch 0 on top: the axis runs downwards
    ax.set_ylim(bottom, top - 0.6)
    for k, (name, _gap_start, release, end) in enumerate(schedule.phase_spans()):
        ax.axvspan(release, end, color="0.85" if k % 2 else "0.93", zorder=0, linewidth=0)
        ax.text((release + end) / 2, top - 0.3, name, ha="center", va="center", fontsize=6)
    return ax


def write_schedule_plot(
    schedule: Schedule | IterationSchedule,
    out: str | os.PathLike[str],
    *,
    force: bool = False,
    title: str | None = None,
) -> Path:
    """Draw ``schedule`` (:func:`plot_schedule`, or :func:`plot_iteration_schedule` for an
    iteration's) and save it to ``out`` (.png, .pdf or .svg).

    Raises
    ------
    InvalidInputError
        If ``out`` exists and ``force`` is False, its folder does not exist, it has an
        unsupported suffix, or the schedule cannot be drawn.
    """
    p = check_out_file(out, force=force)
    _check_drawable(schedule)  # type: ignore[arg-type]  # an iteration's timelines are the same
    plt = pyplot()
    if isinstance(schedule, IterationSchedule):
        ax = plot_iteration_schedule(schedule, title=title)
    else:
        ax = plot_schedule(schedule, title=title)
    try:
        ax.figure.tight_layout()
        return save_figure(ax.figure, p, force=force)
    finally:
        plt.close(ax.figure)


def check_out_file(out: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Check an image path before drawing: writable, in an existing folder, a known suffix."""
    p = check_writable(out, force=force, name="--out")
    if p.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise InvalidInputError(f"`--out` must end in .png, .pdf or .svg; got {p.name!r}")
    if not p.parent.is_dir():
        raise InvalidInputError(f"`--out` folder does not exist: {p.parent}")
    return p
