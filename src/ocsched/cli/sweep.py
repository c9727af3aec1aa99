"""Evaluation commands: sweep, report, plot."""

from __future__ import annotations

import enum
import typing
from pathlib import Path
from typing import Annotated

import typer

from ocsched.cli._app import app, choice_type, cli_errors, fail, float_option, int_option
from ocsched.cli._progress import ProgressLine, duration

if typing.TYPE_CHECKING:
    PresetName = str
    ReportFormat = str
else:  # typer shows and checks a Literal's values as choices
    from ocsched.sweep.config import PRESETS

    PresetName = choice_type(PRESETS)
    ReportFormat = choice_type(("text", "markdown", "csv"))


#: ``--dpi`` of report and plot: a raster figure's resolution.
_DPI = int_option("--dpi", minimum=10, maximum=2400)
#: Most local processes or Dask workers a sweep starts (more than any machine has cores).
MAX_WORKERS = 1024
#: Longest --wait for a cluster (a day): a larger value is a typo, not a plan.
MAX_WAIT_S = 86_400.0


class ByColumn(enum.StrEnum):
    """Columns ``report --by`` can split lines by (typer checks and lists them)."""

    switches = "switches"
    delta = "delta"
    seed = "seed"
    fabric = "fabric"


def _quiet_dask() -> None:
    """Keep Dask's own log records (reconnect tracebacks) off the terminal: errors are one line."""
    import contextlib
    import logging

    with contextlib.suppress(ImportError):  # the library explains how to install it
        import distributed  # noqa: F401  (configures its loggers on import; override them after)
    prefixes = ("distributed", "tornado", "asyncio", "bokeh")
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in prefixes]
    for name in {*prefixes, *names}:
        # Children set their own levels and handlers, so stop records where they would print.
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL)
        logger.propagate = False
        for handler in logger.handlers:
            if handler in logging.root.handlers:  # the application's own (pytest's capture): not ours
                continue
            handler.setLevel(logging.CRITICAL)


def _check_csv(csv: Path, out: Path) -> None:
    """``--csv`` is rewritten from the results on every run: refuse only what is not a file to rewrite."""
    if csv.is_dir():
        raise fail(f"`--csv` is a directory: {csv}")
    if csv.resolve().is_relative_to(out.resolve()):
        raise fail(f"`--csv` must be outside the results folder --out {out}; got {csv}")
    if not csv.parent.is_dir():
        raise fail(f"`--csv` folder does not exist: {csv.parent}")


class FigureFormat(enum.StrEnum):
    """Formats ``report --figure-format`` writes figures in (typer checks and lists them)."""

    png = "png"
    pdf = "pdf"
    svg = "svg"


@app.command("sweep")
@cli_errors
def sweep_cmd(
    config: Annotated[
        Path | None,
        typer.Argument(metavar="CONFIG", help="Sweep config (TOML); or use --preset.", show_default=False),
    ] = None,
    preset: Annotated[
        PresetName | None, typer.Option("--preset", help="Built-in config instead of CONFIG.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Results directory (created; resumed if it exists).")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            "-j",
            parser=int_option("--workers", minimum=1, maximum=MAX_WORKERS),
            metavar="INTEGER",
            help=f"Local processes, or Dask workers of --cluster local, 1..{MAX_WORKERS} "
            "(default: all cores).",
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            help="'local' (start a Dask LocalCluster) or a Dask scheduler address, e.g. tcp://host:8786 "
            "(needs ocsched\\[dask]).",
        ),
    ] = None,
    wait: Annotated[
        float,
        typer.Option(
            "--wait",
            parser=float_option("--wait", low=0.1, high=MAX_WAIT_S),
            metavar="SECONDS",
            help=f"With --cluster: seconds to wait for the scheduler and a worker (0.1..{MAX_WAIT_S:g}).",
        ),
    ] = 30.0,
    batch_size: Annotated[
        int | None,
        typer.Option(
            "--batch-size",
            parser=int_option("--batch-size", minimum=1),
            metavar="INTEGER",
            help="Runs per task (default: automatic).",
        ),
    ] = None,
    csv: Annotated[
        Path | None,
        typer.Option(
            "--csv", help="Also export all rows to this CSV file (derived data: rewritten on every run)."
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Delete existing results in --out first.")] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Time a sample of runs and print the number of runs and an estimated time; with --out "
            "the sample's rows are kept there (the real sweep skips them).",
        ),
    ] = False,
) -> None:
    """Run a grid of workloads x algorithms x switches x delta; store one validated row per run.

    Results go to a directory of Parquet parts (one per finished batch, written atomically) that
    pandas, polars and pyarrow read directly. Interrupt at any time; rerunning the same command
    skips the finished runs, and a config that extends the grid runs only the new runs. Exit code
    1 if a run failed (failures are recorded in the results with their message).
    """
    from ocsched.sweep import SweepProgress, estimate_sweep, export_csv, run_sweep

    if (config is None) == (preset is None):
        raise fail("give either CONFIG or --preset (not both)")
    source: str | Path = preset if preset is not None else config  # type: ignore[assignment]
    if dry_run:
        typer.echo("timing a sample of runs ...", err=True)
        est = estimate_sweep(source, out, workers=workers)
        typer.echo(
            f"{est.runs} runs ({est.runs - est.todo} already done, {est.todo} to run); "
            f"{est.seconds_per_run:.3f} s per run on a {est.sampled}-run sample; "
            f"estimated {duration(est.seconds)} on {est.workers} worker(s)"
            + (" (local estimate; a cluster divides by its worker count)" if cluster else "")
        )
        if out is not None and est.sampled:
            typer.echo(f"the {est.sampled} sample runs are kept in {out}; the sweep skips them", err=True)
        return
    if out is None:
        raise fail("--out is required (the results directory)")
    if csv is not None:
        _check_csv(csv, out)
    if cluster is not None:
        _quiet_dask()
    bar = ProgressLine("sweep")
    shown: list[str] = []

    def progress(p: SweepProgress) -> None:
        if p.dashboard and not shown:
            shown.append(p.dashboard)
            line = f"Dask dashboard: {p.dashboard}"
            bar.console.print(line, markup=False, highlight=False) if bar.live else bar.echo(line)
        bar.update(p.done, p.total, p.eta_s, f"{p.failed} failed ({p.skipped} done before)")

    try:
        with bar:
            summary = run_sweep(
                source,
                out,
                workers=workers,
                cluster=cluster,
                batch_size=batch_size,
                force=force,
                wait_s=wait,
                progress=progress,
            )
    except KeyboardInterrupt:
        raise fail(
            f"interrupted; finished batches are saved in {out}; rerun the same command to resume", 130
        ) from None
    typer.echo(
        f"{summary.runs} runs: {summary.skipped} already done, {summary.done} run now "
        f"({summary.failed} failed) in {duration(summary.elapsed_s)}; results in {summary.out}"
    )
    for line in summary.failures[:10]:
        typer.echo(f"  failed: {line}", err=True)
    if len(summary.failures) > 10:
        typer.echo(f"  ... and {len(summary.failures) - 10} more failures", err=True)
    if csv is not None:
        typer.echo(f"rows exported to {export_csv(out, csv, force=True)}")
    if summary.failed:
        raise typer.Exit(1)


@app.command("report")
@cli_errors
def report_cmd(
    results: Annotated[
        Path, typer.Argument(help="Sweep results: directory, .parquet or .csv.", show_default=False)
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write summary.{txt,md,csv} and figures (PNG+PDF) here."),
    ] = None,
    fmt: Annotated[
        ReportFormat,
        typer.Option("--format", "-f", help="Table printed (csv: one numeric column per statistic)."),
    ] = "text",
    figures: Annotated[
        bool, typer.Option("--figures/--no-figures", help="With --out: draw the figures.")
    ] = True,
    force: Annotated[bool, typer.Option("--force", help="Allow writing into a non-empty --out.")] = False,
    by: Annotated[
        list[ByColumn] | None,
        typer.Option("--by", help="Also split lines by switches, delta, seed or fabric (repeatable)."),
    ] = None,
    figure_format: Annotated[
        list[FigureFormat] | None,
        typer.Option(
            "--figure-format",
            help="With --out: the figures' formats, png, pdf or svg (repeat; default png+pdf).",
        ),
    ] = None,
    dpi: Annotated[
        int,
        typer.Option(
            "--dpi",
            parser=_DPI,
            metavar="INTEGER",
            help="With --out: resolution of raster figures (png), 10..2400.",
        ),
    ] = 150,
) -> None:
    """Summarise sweep results: mean (max) makespan ratios per workload family, and figures.

    The table goes to stdout; notes (what the cells mean, figures skipped and why) to stderr.
    """
    from ocsched.report import ITERATION_NOTE, NOTE, load_rows, summaries, write_report

    written: list[Path] = []
    skipped: list[str] = []
    columns = [b.value for b in by or ()]
    if out is None:
        table, iterations = summaries(load_rows(results), by=columns)
    else:
        formats = [f.value for f in figure_format] if figure_format else ["png", "pdf"]
        rep = write_report(results, out, force=force, figures=figures, by=columns, formats=formats, dpi=dpi)
        table, iterations, written, skipped = rep.table, rep.iterations, rep.written, rep.skipped
    tables = [(t, note) for t, note in ((table, NOTE), (iterations, ITERATION_NOTE)) if t is not None]
    if fmt == "csv" and len(tables) > 1:  # one CSV table per stream
        tables = tables[:1]
        skipped.append("iteration table: not in this CSV (see iterations.csv with --out, or --format text)")
    for k, (t, note) in enumerate(tables):
        if k:
            typer.echo()
        typer.echo({"text": t.text, "markdown": t.markdown, "csv": t.csv}[fmt](), nl=False)
        if fmt != "csv":
            typer.echo(note, err=True)
    for p in written:
        typer.echo(f"wrote {p}")
    for note in skipped:
        typer.echo(f"skipped {note}", err=True)


@app.command("plot")
@cli_errors
def plot_cmd(
    schedule_file: Annotated[
        Path,
        typer.Argument(
            metavar="SCHEDULE", help="Schedule JSON file (or an iteration schedule).", show_default=False
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Image to write (.png, .pdf or .svg).")],
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    title: Annotated[str | None, typer.Option("--title", help="Figure title.")] = None,
    dpi: Annotated[
        int,
        typer.Option(
            "--dpi",
            parser=_DPI,
            metavar="INTEGER",
            help="Resolution of a .png (10..2400).",
        ),
    ] = 150,
) -> None:
    """Draw a schedule as a Gantt chart: switch (from 0) x time, hatched reconfiguration delays.

    Each switch's own delay, down windows (shaded), failed links (marked with their ports), and
    for an iteration schedule its phases.
    """
    from ocsched.io import read_any_schedule
    from ocsched.report.gantt import check_out_file, write_schedule_plot

    check_out_file(out, force=force)
    # An iteration schedule (told apart by its format) is drawn with its phases shaded.
    sched = read_any_schedule(schedule_file)
    typer.echo(f"wrote {write_schedule_plot(sched, out, force=force, title=title, dpi=dpi)}")
