"""Tables and figures from sweep results (see :mod:`ocsched.sweep`), and Gantt charts of schedules.

- :mod:`~ocsched.report.tables`: the summary table (text, Markdown, numeric CSV);
- :mod:`~ocsched.report.figures`: figures for whatever grid and algorithms the results hold (their
  styles in :mod:`~ocsched.report.styles`, scales in :mod:`~ocsched.report.scales`, files in
  :mod:`~ocsched.report.output`);
- :mod:`~ocsched.report.gantt`: a schedule as a Gantt chart (:func:`plot_schedule`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ocsched.errors import InvalidInputError
from ocsched.io import write_atomic
from ocsched.report.figures import (
    DPI,
    check_figure_options,
    plot_bound_ratio,
    plot_delta,
    plot_flows,
    plot_ratios,
    plot_switches,
    slug,
)
from ocsched.report.gantt import permutation_groups, plot_schedule, write_schedule_plot
from ocsched.report.tables import (
    ITERATION_NOTE,
    NOTE,
    SummaryTable,
    group,
    is_iteration,
    name_fabrics,
    summarize,
    summarize_iterations,
)
from ocsched.sweep.results import check_columns
from ocsched.sweep.store import read_results

__all__ = [
    "ITERATION_NOTE",
    "NOTE",
    "Report",
    "SummaryTable",
    "load_rows",
    "name_fabrics",
    "permutation_groups",
    "plot_bound_ratio",
    "plot_delta",
    "plot_flows",
    "plot_ratios",
    "plot_schedule",
    "plot_switches",
    "summaries",
    "summarize",
    "summarize_iterations",
    "write_report",
    "write_schedule_plot",
]


def load_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Return the result rows at ``path`` (a sweep directory, .parquet or .csv file) as dicts.

    Fabrics are named unambiguously (:func:`~ocsched.report.tables.name_fabrics`).
    """
    rows: list[dict[str, Any]] = read_results(path).to_pylist()
    check_columns(rows)
    return [dict(r) for r in name_fabrics(rows)]


@dataclass(frozen=True)
class Report:
    """What :func:`write_report` wrote, and which figures it skipped and why.

    ``table`` is the summary of single-matrix runs (None if the results hold only iteration
    runs), ``iterations`` the table of iteration runs (None if there are none).
    """

    table: SummaryTable | None
    written: list[Path]
    skipped: list[str]
    iterations: SummaryTable | None = None


def summaries(
    rows: Sequence[dict[str, Any]], *, by: Sequence[str] = ()
) -> tuple[SummaryTable | None, SummaryTable | None]:
    """The summary of single-matrix runs and the iteration table; None for a kind the rows lack.

    Raises
    ------
    InvalidInputError
        If ``rows`` is empty.
    """
    if not rows:
        raise InvalidInputError("`results` holds no rows")
    single = any(not is_iteration(r) for r in rows)
    iterations = any(is_iteration(r) for r in rows)
    return (
        summarize(rows, by=by) if single else None,
        summarize_iterations(rows) if iterations else None,
    )


def _writer(text: str) -> Callable[[IO[bytes]], None]:
    def write(f: IO[bytes]) -> None:
        f.write(text.encode())

    return write


def _values(rows: Sequence[dict[str, Any]], key: str) -> str:
    return ", ".join(f"{v:g}" for v in sorted({r[key] for r in rows}))


def write_report(
    results: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    force: bool = False,
    figures: bool = True,
    by: Sequence[str] = (),
    formats: Sequence[str] = ("png", "pdf"),
    dpi: int = DPI,
) -> Report:
    """Write ``summary.{txt,md,csv}`` and (with ``figures``) every figure for ``results`` into ``out``.

    Iteration runs go to ``iterations.{txt,md,csv}`` (:func:`summarize_iterations`) and no figure.

    Figures (each in ``formats``: PNG and PDF by default, or SVG; raster ones at ``dpi``), for
    whatever the results hold: ``delta-<label>`` and ``bound-<label>`` for each label with
    several deltas, ``switches-<label>`` for each label with several switch counts,
    ``flows-<family>`` for each family that varies the ``flows`` option, and ``ratios`` (every
    algorithm's makespan / lower bound per family). ``summary.csv`` has one numeric column per
    statistic.

    Raises
    ------
    InvalidInputError
        If ``out`` is a non-empty directory and ``force`` is False, or the results are empty.
    """
    check_figure_options(formats, dpi)
    rows = load_rows(results)
    table, iterations = summaries(rows, by=by)
    out_p = Path(out)
    if out_p.exists() and not out_p.is_dir():
        raise InvalidInputError(f"`--out` is not a directory: {out_p}")
    if out_p.is_dir() and any(out_p.iterdir()) and not force:
        raise InvalidInputError(f"`--out` directory is not empty: {out_p} (use --force to overwrite)")
    out_p.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, tab in (("summary", table), ("iterations", iterations)):
        if tab is not None:
            texts = {"txt": tab.text(), "md": tab.markdown(), "csv": tab.csv()}
            written += [
                write_atomic(out_p / f"{stem}.{e}", _writer(t), force=force, name="--out")
                for e, t in texts.items()
            ]
    skipped: list[str] = []
    rows = [r for r in rows if not is_iteration(r)]
    if not figures or not rows:
        return Report(table, written, skipped, iterations)
    for family, label in sorted(group(rows, ["family", "label"])):
        mine = [r for r in rows if r["family"] == family and r["label"] == label]
        name = slug(label)
        for kind, plot, axis in (("delta", plot_delta, "delta"), ("bound", plot_bound_ratio, "delta")):
            got = plot(rows, out_p / f"{kind}-{name}", label=label, family=family, formats=formats, dpi=dpi)
            written += got
            if not got:
                skipped.append(f"{kind}-{name}: {label!r} has one {axis} ({_values(mine, axis)})")
        got = plot_switches(
            rows, out_p / f"switches-{name}", label=label, family=family, formats=formats, dpi=dpi
        )
        written += got
        if not got:
            skipped.append(f"switches-{name}: {label!r} has one switch count ({_values(mine, 'switches')})")
    for (family,) in sorted(group(rows, ["family"])):
        written += plot_flows(rows, out_p / f"flows-{slug(family)}", family=family, formats=formats, dpi=dpi)
    got = plot_ratios(rows, out_p / "ratios", formats=formats, dpi=dpi)
    written += got
    if not got:
        skipped.append("ratios: no successful run with a lower bound")
    return Report(table, written, skipped, iterations)
