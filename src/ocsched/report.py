"""Tables and figures from sweep results (see :mod:`ocsched.sweep`), and Gantt charts of schedules.

Ratios are taken per matching run: two rows match when they share family, label, workload,
options, normalisation, seed, ``switches`` and ``delta``, i.e. the same demand matrix scheduled
under the same conditions. ``A/spectra`` is algorithm A's makespan over Spectra's on that
instance; ``spectra/LB`` is Spectra's makespan over the lower bound. Failed runs (``ok`` false)
never enter a ratio; they are counted in the table.

matplotlib is imported inside the plotting functions, with the non-interactive Agg backend.
"""

from __future__ import annotations

import csv
import io as _io
import json
import math
import os
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ocsched.errors import InvalidInputError, OcschedError
from ocsched.model import Schedule

__all__ = [
    "SummaryTable",
    "load_rows",
    "permutation_groups",
    "plot_delta",
    "plot_flows",
    "plot_ratios",
    "plot_schedule",
    "summarize",
    "write_report",
]

Row = Mapping[str, Any]

#: The instance key of a run: rows sharing it scheduled the same matrix under the same conditions.
MATCH = ("family", "label", "workload", "options", "normalized", "link_gbps", "seed", "switches", "delta")

#: Plot style per algorithm: (marker, line style, grey level) so figures read in black and white.
STYLES: dict[str, tuple[str, Any, str]] = {
    "spectra": ("o", "-", "0.0"),
    "spectra-pack": ("h", (0, (8, 2)), "0.15"),
    "spectra-noeq": ("s", "--", "0.25"),
    "baseline": ("^", "-.", "0.45"),
    "baseline-eclipse": ("v", ":", "0.35"),
    "eclipse": ("D", (0, (5, 1)), "0.55"),
    "solstice": ("P", (0, (3, 1, 1, 1)), "0.5"),
    "bvn": ("X", (0, (1, 1)), "0.6"),
    "naive": ("*", (0, (4, 2, 1, 2)), "0.4"),
}
HATCHES = ("", "///", "...", "xx", "\\\\", "++", "oo", "--", "**")


def load_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Return the result rows at ``path`` (a sweep directory, .parquet or .csv file) as dicts."""
    from ocsched.sweep import read_results

    rows: list[dict[str, Any]] = read_results(path).to_pylist()
    return rows


def _group(rows: Iterable[Row], keys: Sequence[str]) -> dict[tuple[Any, ...], list[Row]]:
    out: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


def _algorithms(rows: Iterable[Row]) -> list[str]:
    present = {r["algorithm"] for r in rows}
    known = [a for a in STYLES if a in present]
    return known + sorted(present - set(known))


def _ratios(rows: Sequence[Row], num: str, den: str | None) -> list[float]:
    """``num/den`` makespan ratios per matching run (``den=None``: over the lower bound)."""
    out = []
    for group in _group(rows, MATCH).values():
        by = {r["algorithm"]: r for r in group if r["ok"]}
        if num not in by:
            continue
        top = by[num]["makespan"]
        bottom = by[num]["lower_bound"] if den is None else by[den]["makespan"] if den in by else None
        if bottom is not None and bottom > 0:
            out.append(top / bottom)
    return out


@dataclass(frozen=True)
class SummaryTable:
    """A table of cells (strings) with a header; render with :meth:`text`, :meth:`markdown`, :meth:`csv`."""

    header: list[str]
    rows: list[list[str]]

    def text(self) -> str:
        """Plain text, columns aligned."""
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]
        lines = [
            "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
            for r in [self.header, *self.rows]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def markdown(self) -> str:
        """A GitHub Markdown table."""
        align = ["---" if i < 2 else "---:" for i in range(len(self.header))]
        return "".join("| " + " | ".join(r) + " |\n" for r in [self.header, align, *self.rows])

    def csv(self) -> str:
        """Comma-separated values."""
        buf = _io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows([self.header, *self.rows])
        return buf.getvalue()


def _natural(text: str) -> list[Any]:
    """Sort key putting "x=8" before "x=16"."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text) if t]


def _cell(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"{sum(values) / len(values):.3f} ({max(values):.3f})"


def summarize(rows: Sequence[Row], *, reference: str = "spectra", by: Sequence[str] = ()) -> SummaryTable:
    """Build the summary table: per family and label, mean (max) of every ratio.

    Columns: family, label, the ``by`` columns (e.g. ``("switches",)`` for one line per switch
    count), runs, failed runs, ``reference/LB``, then ``A/reference`` for every other algorithm
    present. A family with several labels also gets an "all" line.

    Raises
    ------
    InvalidInputError
        If ``rows`` is empty or ``by`` names a column other than switches, delta or seed.

    Examples
    --------
    >>> rows = [dict(family="f", label="x", workload="w", options="{}", normalized=True, link_gbps=None,
    ...              seed=0, switches=4, delta=0.1, algorithm=a, ok=True, makespan=m, lower_bound=1.0)
    ...         for a, m in (("spectra", 1.2), ("baseline", 1.8))]
    >>> print(summarize(rows).text(), end="")
    family  label  runs  failed     spectra/LB  baseline/spectra
    ------  -----  ----  ------  -------------  ----------------
    f       x         2       0  1.200 (1.200)     1.500 (1.500)
    """
    if not rows:
        raise InvalidInputError("`results` holds no rows")
    bad = [b for b in by if b not in ("switches", "delta", "seed")]
    if bad:
        raise InvalidInputError(f"`by` must name switches, delta or seed; got {bad[0]!r}")
    algs = _algorithms(rows)
    others = [a for a in algs if a != reference]
    has_ref = reference in algs
    header = ["family", "label", *by, "runs", "failed"]
    header += [f"{reference}/LB"] if has_ref else []
    header += [f"{a}/{reference}" if has_ref else f"{a}/LB" for a in others]
    table: list[list[str]] = []

    def line(family: str, label: str, key: tuple[Any, ...], group: Sequence[Row]) -> list[str]:
        cells = [
            family,
            label,
            *(f"{v:g}" for v in key),
            str(len(group)),
            str(sum(1 for r in group if not r["ok"])),
        ]
        if has_ref:
            cells.append(_cell(_ratios(group, reference, None)))
        cells += [_cell(_ratios(group, a, reference if has_ref else None)) for a in others]
        return cells

    for (family,), fam_rows in sorted(_group(rows, ["family"]).items(), key=lambda kv: _natural(kv[0][0])):
        for key, sub in sorted(_group(fam_rows, by).items()):
            labels = _group(sub, ["label"])
            for (label,), lab_rows in sorted(labels.items(), key=lambda kv: _natural(kv[0][0])):
                table.append(line(family, label, key, lab_rows))
            if len(labels) > 1:
                table.append(line(family, "all", key, sub))
    return SummaryTable(header, table)


# --------------------------------------------------------------------------- figures


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise OcschedError("figures need matplotlib: pip install 'ocsched[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _save(fig: Any, stem: Path, formats: Sequence[str]) -> list[Path]:
    """Lay out, write ``stem.<fmt>`` for each format, and close the figure (also on error)."""
    paths = []
    try:
        fig.tight_layout()
        for fmt in formats:
            p = stem.with_suffix(f".{fmt}")
            fig.savefig(p, dpi=150, bbox_inches="tight")
            paths.append(p)
    finally:
        _pyplot().close(fig)
    return paths


def _mean(values: Iterable[float]) -> float:
    v = list(values)
    return sum(v) / len(v) if v else math.nan


def _series(ax: Any, xs: Sequence[float], rows: Sequence[Row], xkey: str, algs: Sequence[str]) -> None:
    """Plot mean makespan vs ``xkey`` for each algorithm, and the mean lower bound."""
    for k, a in enumerate(algs):
        ys = [
            _mean(r["makespan"] for r in rows if r[xkey] == x and r["algorithm"] == a and r["ok"]) for x in xs
        ]
        marker, ls, color = STYLES.get(a, ("o", "-", "0.3"))
        ax.plot(
            xs, ys, marker=marker, linestyle=ls, color=color, label=a, markerfacecolor="white", zorder=10 - k
        )
    # The bound depends on the instance only, not the algorithm: average it once per instance.
    lb = [
        _mean(
            g[0]["lower_bound"] for g in _group([r for r in rows if r[xkey] == x and r["ok"]], MATCH).values()
        )
        for x in xs
    ]
    ax.plot(xs, lb, linestyle=":", color="0.0", linewidth=2.0, label="lower bound")
    ax.grid(True, color="0.85", linewidth=0.6)


def plot_delta(
    rows: Sequence[Row],
    out_stem: str | os.PathLike[str],
    *,
    label: str,
    family: str | None = None,
    switches: Sequence[int] = (4, 16),
    algorithms: Sequence[str] = ("spectra", "spectra-pack", "spectra-noeq", "baseline"),
    formats: Sequence[str] = ("png", "pdf"),
) -> list[Path]:
    """Plot mean makespan vs delta, one panel per switch count, for the runs of ``label``.

    ``family``, if given, restricts to that family too.

    Returns the written files (``out_stem`` + ``.png`` / ``.pdf``); an empty list when the label
    has fewer than two deltas or none of the switch counts.
    """
    mine = [r for r in rows if r["label"] == label and (family is None or r["family"] == family)]
    svals = [s for s in switches if any(r["switches"] == s for r in mine)]
    algs = [a for a in algorithms if any(r["algorithm"] == a for r in mine)]
    deltas = sorted({r["delta"] for r in mine})
    if len(deltas) < 2 or not svals or not algs:
        return []
    return _panels(mine, deltas, "delta", svals, algs, "reconfiguration delay δ", label, out_stem, formats)


def plot_flows(
    rows: Sequence[Row],
    out_stem: str | os.PathLike[str],
    *,
    family: str,
    delta: float = 0.04,
    switches: Sequence[int] = (4, 16),
    algorithms: Sequence[str] = ("spectra", "spectra-pack", "spectra-noeq", "baseline"),
    formats: Sequence[str] = ("png", "pdf"),
) -> list[Path]:
    """Plot mean makespan vs the workload option ``flows`` (flows per port) at ``delta``.

    Uses the runs of ``family`` whose options set ``flows``; returns [] if fewer than two values.
    """
    mine = []
    for r in rows:
        opts = json.loads(r["options"])
        if r["family"] == family and "flows" in opts and math.isclose(r["delta"], delta):
            mine.append({**r, "flows_opt": int(opts["flows"])})
    svals = [s for s in switches if any(r["switches"] == s for r in mine)]
    algs = [a for a in algorithms if any(r["algorithm"] == a for r in mine)]
    xs = sorted({r["flows_opt"] for r in mine})
    if len(xs) < 2 or not svals or not algs:
        return []
    title = f"{family}, δ = {delta:g}"
    return _panels(mine, xs, "flows_opt", svals, algs, "flows per port", title, out_stem, formats)


def _panels(
    rows: Sequence[Row],
    xs: Sequence[float],
    xkey: str,
    svals: Sequence[int],
    algs: Sequence[str],
    xlabel: str,
    title: str,
    out_stem: str | os.PathLike[str],
    formats: Sequence[str],
) -> list[Path]:
    """One panel per switch count: mean makespan of each algorithm against ``xkey`` (log2 axis)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(svals), figsize=(4.2 * len(svals), 3.4), squeeze=False)
    for ax, s in zip(axes[0], svals, strict=True):
        _series(ax, xs, [r for r in rows if r["switches"] == s], xkey, algs)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_title(f"{title}, s = {s}")
    axes[0][0].set_ylabel("makespan (mean over seeds)")
    axes[0][-1].legend(fontsize=8, frameon=False)
    return _save(fig, Path(out_stem), formats)


def plot_ratios(
    rows: Sequence[Row],
    out_stem: str | os.PathLike[str],
    *,
    reference: str = "spectra",
    formats: Sequence[str] = ("png", "pdf"),
) -> list[Path]:
    """Bar chart of the mean makespan ratio of every algorithm to ``reference``, per family.

    Bars are hatched differently per algorithm (readable in black and white); the reference's own
    ratio to the lower bound is the first bar of each group.
    """
    algs = _algorithms(rows)
    if reference not in algs:
        return []
    series = [(f"{reference}/LB", reference, None)] + [
        (f"{a}/{reference}", a, reference) for a in algs if a != reference
    ]
    families = sorted(_group(rows, ["family"]), key=lambda k: _natural(k[0]))
    plt = _pyplot()
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(min(14.0, 2.0 + 1.8 * len(families)), 4.0))
    for k, (name, num, den) in enumerate(series):
        vals = [_mean(_ratios([r for r in rows if r["family"] == f], num, den)) for (f,) in families]
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(families))]
        ax.bar(
            xs,
            vals,
            width,
            label=name,
            color=f"{0.95 - 0.6 * k / max(len(series) - 1, 1):.2f}",
            edgecolor="black",
            linewidth=0.6,
            hatch=HATCHES[k % len(HATCHES)],
        )
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(families)), [textwrap.fill(f, 16) for (f,) in families])
    ax.set_ylabel("mean makespan ratio")
    ax.legend(
        fontsize=7, frameon=False, ncol=min(len(series), 5), loc="upper left", bbox_to_anchor=(0, -0.16)
    )
    ax.grid(True, axis="y", color="0.85", linewidth=0.6)
    return _save(fig, Path(out_stem), formats)


def write_report(
    results: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    force: bool = False,
    figures: bool = True,
    by: Sequence[str] = (),
) -> tuple[SummaryTable, list[Path]]:
    """Write ``summary.{txt,md,csv}`` and (with ``figures``) every figure for ``results`` into ``out``.

    Figures: ``delta-<label>`` for each label with several deltas, ``flows-<family>`` for each
    family that varies the ``flows`` option, and ``ratios``; each as PNG and PDF.

    Raises
    ------
    InvalidInputError
        If ``out`` is a non-empty directory and ``force`` is False, or the results are empty.
    """
    from ocsched.io import write_atomic

    rows = load_rows(results)
    table = summarize(rows, by=by)
    out_p = Path(out)
    if out_p.exists() and not out_p.is_dir():
        raise InvalidInputError(f"`--out` is not a directory: {out_p}")
    targets = {
        f"summary.{ext}": text
        for ext, text in (("txt", table.text()), ("md", table.markdown()), ("csv", table.csv()))
    }
    if out_p.is_dir() and any(out_p.iterdir()) and not force:
        raise InvalidInputError(f"`--out` directory is not empty: {out_p} (use --force to overwrite)")
    out_p.mkdir(parents=True, exist_ok=True)
    written = [write_atomic(out_p / n, _writer(t), force=force, name="--out") for n, t in targets.items()]
    if figures:
        for family, label in _group(rows, ["family", "label"]):
            written += plot_delta(rows, out_p / f"delta-{_slug(label)}", label=label, family=family)
        for (family,) in _group(rows, ["family"]):
            written += plot_flows(rows, out_p / f"flows-{_slug(family)}", family=family)
        written += plot_ratios(rows, out_p / "ratios")
    return table, written


def _writer(text: str) -> Callable[[IO[bytes]], None]:
    def write(f: IO[bytes]) -> None:
        f.write(text.encode())

    return write


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


def plot_schedule(
    schedule: Schedule,
    out: str | os.PathLike[str],
    *,
    force: bool = False,
    title: str | None = None,
) -> Path:
    """Draw ``schedule`` as a Gantt chart (switch x time) and save it to ``out`` (.png, .pdf, .svg).

    Each configuration is a bar on its switch, preceded by its hatched reconfiguration gap.
    Pieces of one permutation (configurations with the same circuits) share a colour and a
    number; the lower bound, if known, is a dashed vertical line.

    Raises
    ------
    InvalidInputError
        If ``out`` exists and ``force`` is False, or has an unsupported suffix.
    """
    from ocsched.io import check_writable

    p = check_writable(out, force=force, name="--out")
    if p.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise InvalidInputError(f"`--out` must end in .png, .pdf or .svg; got {p.name!r}")
    plt = _pyplot()
    groups = permutation_groups(schedule)
    ngroups = 1 + max((g for sw in groups for g in sw), default=-1)
    cmap = plt.get_cmap("tab20")
    s = max(schedule.num_switches, 1)
    fig, ax = plt.subplots(figsize=(10, 0.5 + 0.45 * s))
    span = max(schedule.makespan, schedule.lower_bound or 0.0, 1e-12)
    for b, sw in enumerate(schedule.switches):
        for c, gid in zip(sw, groups[b], strict=True):
            if schedule.delta > 0:
                ax.barh(
                    b,
                    schedule.delta,
                    left=c.start - schedule.delta,
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
                ax.text(c.start + c.duration / 2, b, str(gid + 1), ha="center", va="center", fontsize=6)
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
    ax.set_yticks(range(s), [f"OCS {b + 1}" for b in range(s)])
    ax.invert_yaxis()
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
    fig.tight_layout()
    try:
        fig.savefig(p, dpi=150, bbox_inches="tight")
    finally:
        plt.close(fig)
    return p
