"""The ``export`` command: a schedule in the files simulators, controllers and viewers read."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ocsched.cli._app import app, choice_type, cli_errors, fail
from ocsched.io.exports import ALIASES, EXPORTERS
from ocsched.units import TIME_UNITS

if TYPE_CHECKING:
    ExportFormat = str
    TimeUnit = str
else:  # typer shows and checks a Literal's values as choices
    ExportFormat = choice_type([*EXPORTERS, *ALIASES])
    TimeUnit = choice_type(TIME_UNITS)


EXPORT_EXAMPLES = """\
ocsched export s.json > circuits.csv
ocsched schedule d.npy -s 2 -d 0.1 -o - | ocsched export -
ocsched export s.json -f circuits-parquet -o circuits.parquet
ocsched export s.json -f chrome-trace -o s.trace.json      # open in Perfetto
ocsched export s.json -f slices --slice 0.01 -o slices.json
"""


@app.command("export", epilog=EXPORT_EXAMPLES)
@cli_errors
def export_cmd(
    schedule_file: Annotated[
        Path,
        typer.Argument(
            metavar="SCHEDULE",
            help="Schedule JSON file (or an iteration schedule; - reads stdin).",
            show_default=False,
        ),
    ],
    fmt: Annotated[ExportFormat, typer.Option("--format", "-f", help="Export format.")] = "circuits",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="File (ns3, astra-sim: folder) to write; circuits: stdout if omitted or -."
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    time_unit: Annotated[
        TimeUnit | None,
        typer.Option(
            "--time-unit",
            help="Unit of the schedule's times (chrome-trace, slices, astra-sim).",
            show_default="s",
        ),
    ] = None,
    merge: Annotated[
        Path | None, typer.Option("--merge", help="chrome-trace: a profiler (Kineto) trace to overlay.")
    ] = None,
    slice_length: Annotated[
        float | None, typer.Option("--slice", help="slices: the slice length T, in the schedule's unit.")
    ] = None,
    method: Annotated[
        str,
        typer.Option("--method", help="slices: 'fit' the grid (default) or 'round-up' each configuration."),
    ] = "fit",
    demand_file: Annotated[
        Path | None,
        typer.Option(
            "--demand", help="slices: the demand (or iteration) the schedule serves; its slack helps the fit."
        ),
    ] = None,
    link_rate: Annotated[
        str | None,
        typer.Option("--link-rate", help="astra-sim: one link's rate, e.g. 400Gbps (sizes in bytes)."),
    ] = None,
) -> None:
    """Write SCHEDULE as FORMAT: circuits, circuits-parquet, chrome-trace, oxc-orders, slices, ns3, astra-sim.

    Every format is read back by ocsched (ocsched.io.read_export) into a schedule that
    validates. circuits: one row per circuit, served = the switch's rate x the time the validator
    credits it. slices needs --slice; astra-sim needs --link-rate.
    """
    from ocsched import io
    from ocsched.iteration import IterationSchedule

    if out is not None and str(out) == "-":  # stdout, as with no --out
        out = None
    name = ALIASES.get(fmt, fmt)
    options: dict[str, Any] = {}
    given = {
        "--time-unit": time_unit,
        "--merge": merge,
        "--slice": slice_length,
        "--demand": demand_file,
        "--link-rate": link_rate,
    }
    takes = {
        "chrome-trace": {"--time-unit", "--merge"},
        "slices": {"--time-unit", "--slice", "--demand"},
        "astra-sim": {"--time-unit", "--link-rate"},
    }.get(name, set())
    for flag, value in given.items():
        if value is not None and flag not in takes:
            raise fail(f"{flag} does not apply to --format {fmt}")
    if method != "fit" and name != "slices":
        raise fail(f"--method does not apply to --format {fmt}")
    if time_unit is not None:
        options["time_unit"] = time_unit
    if merge is not None:
        options["merge"] = merge
    if name == "slices":
        if slice_length is None:
            raise fail("--format slices needs --slice T (the slice length)")
        options["slice_length"] = slice_length
        options["method"] = method
    if name == "astra-sim":
        if link_rate is None:
            raise fail("--format astra-sim needs --link-rate (e.g. 400Gbps)")
        options["link_rate"] = link_rate
    if out is None and name != "circuits":
        raise fail(f"--format {fmt} needs --out PATH")
    if out is not None and EXPORTERS[name].extension:
        io.check_writable(out, force=force, name="--out")
    if str(schedule_file) == "-":
        from ocsched.io.demand import spool_stdin

        schedule_file = spool_stdin()
    sched = io.read_any_schedule(schedule_file)
    if demand_file is not None:
        iteration = isinstance(sched, IterationSchedule)
        options["demand"] = (io.read_iteration if iteration else io.read_demand)(demand_file, name="--demand")
    if out is None:
        typer.echo(io.circuits_csv(io.circuit_table(sched)), nl=False)
        return
    result = io.export(sched, format=name, path=out, force=force, **options)
    rows = sum(len(c.circuits) for sw in sched.switches for c in sw)
    extra = "".join(
        f", {k} {v:.4g}" if isinstance(v, float) else f", {k} {v}"
        for k, v in result.info.items()
        if k in ("recourse", "quantization_loss", "slices")
    )
    typer.echo(f"wrote {rows} circuits as {name} to {out} ({len(result.paths)} files{extra})", err=True)
