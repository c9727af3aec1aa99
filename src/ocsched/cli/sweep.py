"""Evaluation commands: sweep, report, plot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ocsched.cli._app import app, cli_errors, fail


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


@app.command("sweep")
@cli_errors
def sweep_cmd(
    config: Annotated[
        Path | None,
        typer.Argument(metavar="CONFIG", help="Sweep config (TOML); or use --preset.", show_default=False),
    ] = None,
    preset: Annotated[
        str | None, typer.Option("--preset", help="Built-in config instead of CONFIG: 'paper' or 'quick'.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Results directory (created; resumed if it exists).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", "-j", help="Local processes (default: all cores).")
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster", help="Dask scheduler address, e.g. tcp://host:8786 (needs ocsched\\[dask])."
        ),
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option("--batch-size", help="Runs per task (default: automatic).")
    ] = None,
    csv: Annotated[Path | None, typer.Option("--csv", help="Also export all rows to this CSV file.")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Delete existing results in --out (and overwrite --csv).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the number of runs and an estimated time; run nothing.")
    ] = False,
) -> None:
    """Run a grid of workloads x algorithms x switches x delta; store one validated row per run.

    Results go to a directory of Parquet parts (one per finished batch, written atomically).
    Interrupt at any time; rerunning the same command skips the finished runs. Exit code 1 if a
    run failed (failures are recorded in the results with their message).
    """
    from ocsched import io, sweep

    if (config is None) == (preset is None):
        raise fail("give either CONFIG or --preset (not both)")
    if preset is not None and preset not in sweep.PRESETS:
        raise fail(f"unknown preset {preset!r}; choose one of {', '.join(sweep.PRESETS)}")
    source: str | Path = preset if preset is not None else config  # type: ignore[assignment]
    if dry_run:
        typer.echo("timing a sample of runs ...", err=True)
        est = sweep.estimate_sweep(source, out, workers=workers)
        typer.echo(
            f"{est.runs} runs ({est.runs - est.todo} already done, {est.todo} to run); "
            f"{est.seconds_per_run:.3f} s per run on a {est.sampled}-run sample; "
            f"estimated {_duration(est.seconds)} on {est.workers} worker(s)"
            + (" (local estimate; a cluster divides by its worker count)" if cluster else "")
        )
        return
    if out is None:
        raise fail("--out is required (the results directory)")
    if csv is not None:
        io.check_writable(csv, force=force, name="--csv")

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    bar = Progress(
        TextColumn("[bold]sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TextColumn("({task.fields[skipped]} done before)"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )
    task: list[TaskID] = []

    def progress(p: sweep.SweepProgress) -> None:
        if not task:
            task.append(bar.add_task("sweep", total=p.total, failed=0, skipped=p.skipped))
        bar.update(task[0], completed=p.done, failed=p.failed)

    try:
        with bar:
            summary = sweep.run_sweep(
                source,
                out,
                workers=workers,
                cluster=cluster,
                batch_size=batch_size,
                force=force,
                progress=progress,
            )
    except KeyboardInterrupt:
        raise fail(
            f"interrupted; finished batches are saved in {out}; rerun the same command to resume", 130
        ) from None
    typer.echo(
        f"{summary.runs} runs: {summary.skipped} already done, {summary.done} run now "
        f"({summary.failed} failed) in {_duration(summary.elapsed_s)}; results in {summary.out}"
    )
    for line in summary.failures[:10]:
        typer.echo(f"  failed: {line}", err=True)
    if len(summary.failures) > 10:
        typer.echo(f"  ... and {len(summary.failures) - 10} more failures", err=True)
    if csv is not None:
        typer.echo(f"rows exported to {sweep.export_csv(out, csv, force=force)}")
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
        str, typer.Option("--format", "-f", help="Table printed: text, markdown or csv.")
    ] = "text",
    figures: Annotated[
        bool, typer.Option("--figures/--no-figures", help="With --out: draw the figures.")
    ] = True,
    force: Annotated[bool, typer.Option("--force", help="Allow writing into a non-empty --out.")] = False,
    by: Annotated[
        list[str] | None,
        typer.Option("--by", help="Also split lines by switches, delta or seed (repeatable)."),
    ] = None,
) -> None:
    """Summarise sweep results: mean (max) makespan ratios per workload family, and figures."""
    from ocsched import report

    if fmt not in ("text", "markdown", "csv"):
        raise fail(f"--format must be text, markdown or csv; got {fmt!r}")
    written: list[Path] = []
    table: Any
    if out is None:
        table = report.summarize(report.load_rows(results), by=by or ())
    else:
        table, written = report.write_report(results, out, force=force, figures=figures, by=by or ())
    typer.echo({"text": table.text, "markdown": table.markdown, "csv": table.csv}[fmt](), nl=False)
    typer.echo(
        "cells: mean (max) over matching runs; A/spectra = A's makespan / Spectra's on the same instance"
    )
    for p in written:
        typer.echo(f"wrote {p}")


@app.command("plot")
@cli_errors
def plot_cmd(
    schedule_file: Annotated[
        Path, typer.Argument(metavar="SCHEDULE", help="Schedule JSON file.", show_default=False)
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Image to write (.png, .pdf or .svg).")],
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    title: Annotated[str | None, typer.Option("--title", help="Figure title.")] = None,
) -> None:
    """Draw a schedule as a Gantt chart: switch x time, hatched reconfiguration gaps."""
    from ocsched import io, report

    io.check_writable(out, force=force, name="--out")
    sched = io.read_schedule(schedule_file)
    typer.echo(f"wrote {report.plot_schedule(sched, out, force=force, title=title)}")
