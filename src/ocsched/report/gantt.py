"""Gantt charts of schedules: switch x time, each switch's dark reconfiguration time, its failures.

Every artist that stands for part of the model carries a ``gid`` (``"configuration"``,
``"dark"``, ``"kept"``, ``"down"``, ``"failed-link"``, ``"phase"``), so a program (or a test)
can read what a chart shows without looking at pixels.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.io import check_writable, schedule_fabric
from ocsched.iteration import IterationSchedule, persists
from ocsched.model import Configuration, Schedule
from ocsched.report.figures import DPI, PALETTE, pyplot, save_figure
from ocsched.timing import dark_interval, held_times

__all__ = [
    "COLOR_BY",
    "MAX_BARS",
    "MAX_GANTT_SWITCHES",
    "MAX_PERMUTATION_COLORS",
    "permutation_groups",
    "plot_schedule",
    "time_label",
    "write_schedule_plot",
]

#: Most switches one chart draws (a row each); beyond that the chart is unreadable and huge.
MAX_GANTT_SWITCHES = 256
#: Most configurations one chart draws.
MAX_BARS = 20_000
#: Most failed links named in one label (the others are counted: "+3 more").
_NAMED_PORTS = 4
#: Beyond this many permutations a colour per permutation repeats and tells nothing: the chart
#: colours by switch (or by phase, for an iteration schedule) instead.
MAX_PERMUTATION_COLORS = 20
#: What bars may be coloured by (``"auto"``: permutation up to MAX_PERMUTATION_COLORS, else switch
#: or phase).
COLOR_BY = ("auto", "permutation", "switch", "phase")
#: Colour of failures (down windows, failed links): the palette's vermilion.
_FAILURE = PALETTE[5]


def permutation_groups(schedule: Schedule | IterationSchedule) -> list[list[int]]:
    """Number the distinct circuit sets of ``schedule``: per switch, the group of each configuration.

    Pieces of one permutation (split by equalization across switches or in time) have identical
    circuits and get the same number; numbers follow first appearance, switch by switch. Circuit
    sets are compared sparsely (never as ports-long arrays).

    >>> from ocsched.model import Configuration as C
    >>> a, b = [(0, 1), (1, 0)], [(0, 0), (1, 1)]
    >>> sched = Schedule(2, 0.1, ((C.from_circuits(0.1, 1, a, ports=2), C.from_circuits(1.2, 1, b, ports=2)),
    ...                            (C.from_circuits(0.1, 0.5, b, ports=2),)))
    >>> permutation_groups(sched)
    [[0, 1], [1]]
    """
    ids: dict[tuple[int, bytes, bytes], int] = {}

    def key(c: Configuration) -> tuple[int, bytes, bytes]:
        ins, outs = c.circuit_arrays()
        keep = outs >= 0
        return (c.ports, ins[keep].tobytes(), outs[keep].tobytes())

    return [[ids.setdefault(key(c), len(ids)) for c in sw] for sw in schedule.switches]


def _check_drawable(schedule: Schedule | IterationSchedule) -> None:
    s = len(schedule.switches)
    if s > MAX_GANTT_SWITCHES:
        raise InvalidInputError(
            f"`schedule` has {s} switches; a chart draws at most {MAX_GANTT_SWITCHES} (one row each)"
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


def _pairs(c: Configuration, both: bool) -> set[tuple[int, int]]:
    ins, outs = c.circuit_arrays()
    keep = outs >= 0
    pairs = zip(ins[keep].tolist(), outs[keep].tolist(), strict=True)
    # A bidirectional circuit either way round.
    return {(min(i, j), max(i, j)) if both else (i, j) for i, j in pairs}


def _partial_view(sw: Sequence[Configuration], fabric: Fabric, b: int) -> list[tuple[bool, float]]:
    """Per configuration under the partial model: (lights a new circuit?, gap its kept circuits are lit).

    The gap comes from :func:`ocsched.timing.held_times` (a kept circuit is lit through it); a
    circuit is new unless the previous configuration holds it too with that gap lit (no down
    window between), as the timing rule says.
    """
    wins = fabric.windows(b)
    tuples = []
    for c in sw:
        ins, outs = c.circuit_arrays()
        keep = outs >= 0
        tuples.append((c.start, c.duration, ins[keep], outs[keep]))
    switch = fabric.switches[b]
    held = held_times(
        tuples,
        model="partial",
        windows=wins,
        ports_per_endpoint=switch.ports_per_endpoint,
        bidirectional=switch.bidirectional,
    )
    out = []
    prev: Configuration | None = None
    for c, h in zip(sw, held, strict=True):
        lit_gap = float(h.max(initial=c.duration)) - c.duration
        carried = (
            prev is not None
            and c.start >= prev.end
            and not any(a < c.start and e > prev.end for a, e in wins)
        )
        new = (
            prev is None
            or not carried
            or bool(_pairs(c, switch.bidirectional) - _pairs(prev, switch.bidirectional))
        )
        out.append((new, max(lit_gap, 0.0)))
        prev = c
    return out


def _row_label(fabric: Fabric, b: int, uniform: bool) -> str:
    if uniform:
        return f"OCS {b}"
    sw = fabric.switches[b]
    return f"OCS {b} (δ {sw.delta:.3g}" + (f", ×{sw.rate:g})" if sw.rate != 1.0 else ")")


def _draw_failures(ax: Any, fabric: Fabric, xmax: float) -> None:
    """Shade each down window on its switch's row; mark each failed link at its time, naming the ports."""
    labelled = False
    for d in fabric.down:
        if d.start >= xmax:
            continue  # after the chart's end: it changes nothing the schedule does
        right = min(d.end, xmax)
        ax.barh(
            d.switch,
            right - d.start,
            left=d.start,
            height=0.9,
            color=_FAILURE,
            alpha=0.25,
            linewidth=0,
            zorder=0.5,
            gid="down",
            label=None if labelled else "switch down",
        )
        labelled = True
    by_time: dict[tuple[int, float], list[int]] = {}
    for link in fabric.failed_links:
        if link.start < xmax:
            by_time.setdefault((link.switch, link.start), []).append(link.port)
    for k, ((b, t), ports) in enumerate(sorted(by_time.items())):
        ports = sorted(set(ports))
        ax.plot(
            [t],
            [b],
            marker="X",
            markersize=7,
            color=_FAILURE,
            linestyle="none",
            zorder=12,
            gid="failed-link",
            label=None if k else "failed link",
        )
        named = ", ".join(map(str, ports[:_NAMED_PORTS]))
        more = f" +{len(ports) - _NAMED_PORTS} more" if len(ports) > _NAMED_PORTS else ""
        word = "port" if len(ports) == 1 else "ports"
        ax.annotate(
            f"{word} {named}{more} fail at {t:.4g}",
            (t, b),
            xytext=(3, -7),
            textcoords="offset points",
            fontsize=6,
            color=_FAILURE,
            zorder=12,
            gid="failed-link",
        )


def time_label(meta: Any) -> str:
    """The time axis' name with the schedule's unit (``meta["unit"]``), or the demand's unit.

    >>> time_label({"unit": "s"}), time_label({})
    ('time (s)', 'time (unit of the demand)')
    """
    unit = meta.get("unit") if hasattr(meta, "get") else None
    if unit == "bytes":  # a demand read in bytes is scheduled as time at the link rate: seconds
        unit = "s"
    return f"time ({unit})" if isinstance(unit, str) and unit else "time (unit of the demand)"


def _color_by(choice: str, ngroups: int, iteration: bool) -> str:
    if choice not in COLOR_BY:
        raise InvalidInputError(f"`color_by` must be one of {', '.join(COLOR_BY)}; got {choice!r}")
    if choice == "phase" and not iteration:
        raise InvalidInputError("`color_by` 'phase' needs an iteration schedule")
    if choice != "auto":
        return choice
    if ngroups <= MAX_PERMUTATION_COLORS:
        return "permutation"
    return "phase" if iteration else "switch"


def plot_schedule(
    schedule: Schedule | IterationSchedule,
    ax: Any = None,
    *,
    title: str | None = None,
    color_by: str = "auto",
) -> Any:
    """Draw ``schedule`` as a Gantt chart on ``ax`` (a new figure's axes if None) and return the axes.

    Each configuration is a bar on its switch (numbered from 0, as in the JSON and in
    :func:`ocsched.validate`), preceded by its hatched dark interval of that switch's own delay
    (:func:`ocsched.timing.dark_interval`). Under the partial model the dark interval is drawn
    (half height) only before a configuration that lights a new circuit, and a circuit kept from
    the previous configuration is drawn lit through the gap between them (a thin bar), as
    :func:`ocsched.timing.held_times` counts it. Down windows are shaded on their switch's row,
    failed links marked at their time with their ports. Pieces of one permutation (configurations
    with the same circuits) share a colour and a number (from 0) up to
    :data:`MAX_PERMUTATION_COLORS` permutations; beyond that (or by ``color_by``) bars are
    coloured by switch, or by phase for an iteration schedule, and not numbered. The lower
    bound, if known, is a dashed vertical line. Rows name each switch's delay and rate when the
    switches differ. The time axis names the schedule's unit (``meta["unit"]``) when recorded.

    Raises
    ------
    InvalidInputError
        If the schedule has non-finite times, or more than :data:`MAX_GANTT_SWITCHES` switches or
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
    s = max(len(schedule.switches), 1)
    eps = getattr(schedule, "eps", None)
    lane = eps is not None and eps.nnz > 0  # the packet switch: one more row, under the switches
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.5 + 0.45 * (s + lane)))
    fabric = schedule_fabric(schedule)
    uniform = len(set(fabric.switches)) == 1 and fabric.rates[0] == 1.0
    iteration = isinstance(schedule, IterationSchedule)
    groups = permutation_groups(schedule)
    ngroups = 1 + max((g for sw in groups for g in sw), default=-1)
    by = _color_by(color_by, ngroups, iteration)
    cmap = plt.get_cmap("tab20" if by == "permutation" else "tab10")
    ncolors = 20 if by == "permutation" else 10
    phase_of = schedule.phase_of if isinstance(schedule, IterationSchedule) else None
    span = max(schedule.makespan, schedule.lower_bound or 0.0, 1e-12)
    xmax = span * 1.02
    dark_label: str | None = (
        "reconfiguration delay δ"
        if not fabric.reconfiguration.keeps_circuits
        else "dark: new circuits' ports"
    )
    for b, sw in enumerate(schedule.switches):
        delta = fabric.switches[b].delta
        partial = _partial_view(sw, fabric, b) if fabric.reconfiguration.keeps_circuits else None
        for k, (c, gid) in enumerate(zip(sw, groups[b], strict=True)):
            tone = {"permutation": gid, "switch": b}.get(by, phase_of[b][k] if phase_of is not None else 0)
            color = cmap(tone % ncolors)
            # A configuration identical to the one its switch holds persists (iterations): no delay.
            kept = iteration and k > 0 and persists(sw[k - 1], c)
            lights_new, lit_gap = (True, 0.0) if partial is None else partial[k]
            if delta > 0 and not kept and lights_new:
                dark_start, dark_end = dark_interval(c.start, delta)
                # Partial: only the new circuits' ports are dark, while the previous configuration
                # may still run on others, so the delay is a strip under the row, not over a bar.
                ax.barh(
                    b + (0.43 if partial is not None else 0.0),
                    dark_end - dark_start,
                    left=dark_start,
                    height=0.7 if partial is None else 0.14,
                    color="white",
                    edgecolor="0.4",
                    hatch="////",
                    linewidth=0.4,
                    gid="dark",
                    label=dark_label,
                )
                dark_label = None  # one legend entry
            if lit_gap > 0:
                ax.barh(
                    b - 0.25,
                    lit_gap,
                    left=c.start - lit_gap,
                    height=0.2,
                    color=color,
                    edgecolor="black",
                    linewidth=0.3,
                    gid="kept",
                )
            ax.barh(
                b,
                c.duration,
                left=c.start,
                height=0.7,
                color=color,
                edgecolor="black",
                linewidth=0.4,
                gid="configuration",
            )
            if by == "permutation" and c.duration > 0.03 * span:
                ax.text(c.start + c.duration / 2, b, str(gid), ha="center", va="center", fontsize=6)
    _draw_failures(ax, fabric, xmax)
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
    labels = [_row_label(fabric, b, uniform) for b in range(s)]
    if lane and isinstance(schedule, Schedule):
        end = schedule.eps_time
        if fabric.eps_latency > 0:
            ax.barh(
                s,
                fabric.eps_latency,
                left=0.0,
                height=0.7,
                color="white",
                edgecolor="0.4",
                hatch="..",
                linewidth=0.4,
                gid="eps-latency",
            )
        ax.barh(
            s,
            end - fabric.eps_latency,
            left=fabric.eps_latency,
            height=0.7,
            color="0.75",
            edgecolor="black",
            linewidth=0.4,
            gid="eps",
            label=f"packet switch (rate {fabric.eps_rate:g})",
        )
        labels.append("EPS")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # switch 0 on top
    legend = {
        "permutation": "colour and number: permutation",
        "switch": "colour: switch",
        "phase": "colour: phase",
    }
    ax.set_xlabel(f"{time_label(schedule.meta)} (hatched: reconfiguration delay δ; {legend[by]})")
    deltas = f"δ = {fabric.deltas[0]:g}" if len(set(fabric.deltas)) == 1 else "δ per switch"
    model = "" if not fabric.reconfiguration.keeps_circuits else f", {fabric.model} reconfiguration"
    ax.set_title(
        title
        or f"{schedule.algorithm or 'schedule'}: {schedule.ports} ports, {ngroups} permutations, "
        f"{schedule.num_configurations} configurations, {deltas}{model}",
        loc="left",
        fontsize=10,
    )
    entries = len(ax.get_legend_handles_labels()[1])
    if entries <= 2:  # the bound and the makespan: one row above the chart, right of the title
        ax.legend(
            fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False, borderaxespad=0.2
        )
    else:  # failures and delays too: a column beside the chart, clear of the title
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0.0)
    ax.set_xlim(0, xmax)
    return ax


def plot_iteration_schedule(
    schedule: IterationSchedule, ax: Any = None, *, title: str | None = None, color_by: str = "auto"
) -> Any:
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
    ax = plot_schedule(schedule, ax, title=title, color_by=color_by)
    bottom, top = ax.get_ylim()  # switch 0 on top: the axis runs downwards
    ax.set_ylim(bottom, top - 0.6)
    for k, (name, _gap_start, release, end) in enumerate(schedule.phase_spans()):
        ax.axvspan(release, end, color="0.85" if k % 2 else "0.93", zorder=0, linewidth=0, gid="phase")
        ax.text((release + end) / 2, top - 0.3, name, ha="center", va="center", fontsize=6, gid="phase")
    return ax


def write_schedule_plot(
    schedule: Schedule | IterationSchedule,
    out: str | os.PathLike[str],
    *,
    force: bool = False,
    title: str | None = None,
    dpi: int = DPI,
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
    _check_drawable(schedule)
    plt = pyplot()
    if isinstance(schedule, IterationSchedule):
        ax = plot_iteration_schedule(schedule, title=title)
    else:
        ax = plot_schedule(schedule, title=title)
    try:
        ax.figure.tight_layout()
        return save_figure(ax.figure, p, force=force, dpi=dpi)
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
