"""The ``export`` command: a schedule as a table of circuits, for simulators and spreadsheets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ocsched.cli._app import app, choice_type, cli_errors, fail
from ocsched.io import CIRCUIT_FORMATS

if TYPE_CHECKING:
    CircuitFormat = str
else:  # typer shows and checks a Literal's values as choices
    CircuitFormat = choice_type(CIRCUIT_FORMATS)


EXPORT_EXAMPLES = """\
ocsched export s.json > circuits.csv
ocsched schedule d.npy -s 2 -d 0.1 -o - | ocsched export -
ocsched export s.json -f circuits-parquet -o circuits.parquet
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
    fmt: Annotated[
        CircuitFormat,
        typer.Option("--format", "-f", help="Table format."),
    ] = "circuits-csv",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="File to write (circuits-csv: stdout if omitted or -).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
) -> None:
    """Write one row per circuit: switch, start, end, src, dst, served (+ phase, port names if known).

    SCHEDULE is a schedule file or an iteration schedule (its table adds each circuit's phase).
    served = the switch's rate x the time the circuit is lit (under the partial model, a circuit
    kept from the previous configuration is lit through the gap before its start).
    """
    from ocsched import io

    if out is not None and str(out) == "-":  # stdout, as with no --out
        out = None
    if out is None and fmt != "circuits-csv":
        raise fail(f"--format {fmt} needs --out FILE")
    if out is not None:
        io.check_writable(out, force=force, name="--out")
    if str(schedule_file) == "-":
        from ocsched.io.demand import spool_stdin

        schedule_file = spool_stdin()
    sched = io.read_any_schedule(schedule_file)
    if out is None:
        typer.echo(io.circuits_csv(io.circuit_table(sched)), nl=False)
        return
    path = io.write_circuits(sched, out, format=fmt, force=force)
    rows = sum(len(c.circuits) for sw in sched.switches for c in sw)
    typer.echo(f"wrote {rows} circuits to {path}", err=True)
