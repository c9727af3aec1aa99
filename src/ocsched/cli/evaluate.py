"""Evaluation commands: validate, bound, reschedule."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import numpy as np
import typer

from ocsched._jit import clock
from ocsched._text import parse_int, shown
from ocsched.cli._app import MAX_SWITCHES, app, cli_errors, int_option
from ocsched.cli._options import (
    SWITCHES,
    ColumnsOpt,
    DeltaOpt,
    DemandArg,
    FabricOpt,
    GapsOpt,
    LinkRateOpt,
    ReconfOpt,
    SwitchesOpt,
    UnitOpt,
    Units,
    check_finite,
    check_out,
    check_same_unit,
    check_valid,
    fabric_facts,
    fabric_of,
    gap_list,
    in_unit,
    read_input,
    stdin_or_path,
    time_option,
    to_stdout,
    units,
    write_result,
)
from ocsched.cli._output import JsonOpt, emit
from ocsched.errors import InvalidInputError
from ocsched.units import duration_in

if TYPE_CHECKING:
    from ocsched.model.failures import LinkFailure, SwitchFailure
    from ocsched.validation import ValidationReport


VALIDATE_EXAMPLES = """\
ocsched validate d.npy s.json                    # against the schedule's own fabric
ocsched validate d.npy s.json --fabric f.toml    # and against another one
ocsched validate d.npy s.json --json             # {"valid": true, "violations": [], ...}
ocsched schedule d.npy -s 2 -d 0.1 -o - | ocsched validate d.npy -
"""


@app.command("validate", epilog=VALIDATE_EXAMPLES)
@cli_errors
def validate_cmd(
    demand: Annotated[
        Path,
        typer.Argument(
            metavar="DEMAND",
            help="Demand matrix file (- reads stdin), or the iteration it schedules.",
            show_default=False,
        ),
    ],
    schedule_file: Annotated[
        Path,
        typer.Argument(
            metavar="SCHEDULE", help="Schedule JSON file (.json or .json.gz).", show_default=False
        ),
    ],
    switches: Annotated[
        int | None,
        typer.Option(
            "--switches", "-s", parser=SWITCHES, metavar="INTEGER", help="Check against this many switches."
        ),
    ] = None,
    delta: DeltaOpt = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
    gaps: GapsOpt = None,
    unit: UnitOpt = None,
    link_rate: LinkRateOpt = None,
    columns: ColumnsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check a schedule file against a demand (or an iteration); exit 1 and list the violations if invalid.

    The schedule is checked against its own fabric, and against the one given by --fabric or
    --delta (with --switches, --reconfiguration) when given; --switches alone checks the count.
    An iteration's gaps are read as `schedule` reads them (its JSON file, --gaps, a folder's
    gaps.csv); a schedule recording other gaps is reported. A schedule recording its unit
    (meta.unit) must be checked in that unit.
    """
    from ocsched import io
    from ocsched.validation import validate

    demand = stdin_or_path(demand, schedule_file)
    schedule_file = stdin_or_path(schedule_file)
    u = units(unit, link_rate)
    if io.is_iteration(demand):
        _validate_iteration(demand, schedule_file, switches, delta, fabric, reconfiguration, gaps, u, as_json)
    if gaps is not None:
        raise InvalidInputError("`--gaps` applies to iteration inputs only")
    dem, _ = read_input(demand, u, columns)
    sched, defects = io.read_schedule_checked(schedule_file)
    check_same_unit(sched.meta, u)
    if switches is None and fabric is None and delta is not None and "," not in delta:
        switches = sched.num_switches  # `--delta` alone: the file's switches at the fabric's delay
    if delta is not None or fabric is not None or reconfiguration is not None:
        report = validate(sched, dem, fabric=fabric_of(switches, delta, reconfiguration, fabric, u))
    else:
        report = validate(sched, dem, switches=switches)
    raise typer.Exit(_report(report, sched.num_configurations, defects, sched.meta, as_json))


def _validate_iteration(
    path: Path,
    schedule_file: Path,
    switches: int | None,
    delta: str | None,
    fabric: Path | None,
    reconfiguration: str | None,
    gaps: str | None,
    u: Units,
    as_json: bool,
) -> NoReturn:
    """Check an iteration schedule: the fabric and the gaps taken as `schedule` takes them; exit."""
    from ocsched import io
    from ocsched.sequence import validate_iteration

    sched = io.read_iteration_schedule(schedule_file)
    check_same_unit(dict(sched.meta), u)
    it = in_unit(io.read_iteration(path, gaps=gap_list(gaps)), u)
    if switches is None and fabric is None and delta is not None and "," not in delta:
        switches = sched.num_switches  # `--delta` alone: the file's switches at the fabric's delay
    if delta is not None or fabric is not None or reconfiguration is not None:
        report = validate_iteration(sched, it, fabric=fabric_of(switches, delta, reconfiguration, fabric, u))
    else:
        report = validate_iteration(sched, it, switches=switches)
    code = _report(report, sched.num_configurations, [], dict(sched.meta), as_json)
    gaps_wrong = any(v.kind == "gaps" for v in report.violations)
    if gaps is None and path.suffix.lower() != ".json" and gaps_wrong and not as_json:
        typer.echo("  (a 3-D .npy or a folder without gaps.csv has gaps 0: give them with --gaps)")
    raise typer.Exit(code)


def _report(
    report: ValidationReport, configurations: int, defects: list[str], meta: Any, as_json: bool
) -> int:
    """Print a validation report; return the exit code (1 if invalid)."""
    violations = [f"matching: {m}" for m in defects] + [str(v) for v in report.violations]
    if as_json:
        recorded = meta.get("unit") if isinstance(meta, dict) else None
        emit(
            {
                "valid": not violations,
                "makespan": report.makespan,
                "configurations": configurations,
                "unit": recorded,
                "violations": violations,
            },
            as_json=True,
        )
        return 0 if not violations else 1
    if not violations:
        typer.echo(f"valid: makespan {report.makespan:.6g}, {configurations} configurations")
        return 0
    typer.echo(f"INVALID: {len(violations)} violation(s)")
    for v in violations:
        typer.echo(f"  {v}")
    return 1


BOUND_EXAMPLES = """\
ocsched bound d.npy -s 4 -d 0.04
ocsched bound d.npy -s 4 -d 10us --link-rate 400Gbps --json
"""


@app.command("bound", epilog=BOUND_EXAMPLES)
@cli_errors
def bound_cmd(
    demand: DemandArg,
    switches: SwitchesOpt = None,
    delta: DeltaOpt = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
    unit: UnitOpt = None,
    link_rate: LinkRateOpt = None,
    columns: ColumnsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the lower bound on the makespan (and, on identical switches, the bounds it dominates)."""
    from ocsched.bounds import degree_bound, line_bound, lower_bound, refined_bound

    u = units(unit, link_rate)
    fab = fabric_of(switches, delta, reconfiguration, fabric, u)
    dem, _ = read_input(stdin_or_path(demand), u, columns)
    d = max(fab.deltas)
    facts: dict[str, Any]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, as bad input
        if not fab.is_uniform:
            lb = lower_bound(dem, fabric=fab)
            check_finite({"lower bound": lb}, d)
            facts = {"lower_bound": lb, **fabric_facts(fab), "unit": u.unit if as_json else u.shown}
            emit(facts, as_json=as_json)
            return
        s = fab.size
        lb = line_bound(dem, switches=s, delta=d)
        db = degree_bound(dem, switches=s, delta=d)
        rb = refined_bound(dem, switches=s, delta=d)
    check_finite({"line bound": lb, "degree bound": db, "refined bound": rb}, d)
    facts = {
        "lower_bound": max(lb, db, rb),
        "line_bound": lb,
        "degree_bound": db,
        "refined_bound": rb,
    }
    if as_json or u.unit is not None:
        facts["unit"] = u.unit if as_json else u.shown
    emit(facts, as_json=as_json)


RESCHEDULE_EXAMPLES = """\
ocsched reschedule d.npy s.json --fail-switch 1 --at 0.5 -o s2.json
ocsched reschedule d.npy s.json --fail-link 3:0 --at 0.2 --json
"""


@app.command("reschedule", epilog=RESCHEDULE_EXAMPLES)
@cli_errors
def reschedule_cmd(
    demand: DemandArg,
    schedule_file: Annotated[
        Path, typer.Argument(metavar="SCHEDULE", help="Schedule JSON file to repair.", show_default=False)
    ],
    at: Annotated[
        str,
        typer.Option(
            "--at",
            parser=time_option("--at"),
            metavar="TIME",
            help="When the failure happens (a bare number in the demand's unit, or 2ms, 10us).",
            show_default=False,
        ),
    ],
    fail_switch: Annotated[
        int | None,
        typer.Option(
            "--fail-switch",
            parser=int_option("--fail-switch", minimum=0, maximum=MAX_SWITCHES - 1),
            metavar="INTEGER",
            help="The switch that fails (0-based).",
        ),
    ] = None,
    fail_link: Annotated[
        str | None,
        typer.Option("--fail-link", metavar="PORT:SWITCH", help="The link that fails (0-based)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the new schedule here (- stdout).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    gaps: GapsOpt = None,
    unit: UnitOpt = None,
    link_rate: LinkRateOpt = None,
    columns: ColumnsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Keep what finished before a failure, and schedule the rest on the surviving fabric.

    SCHEDULE must be valid for DEMAND (it is checked); the new schedule is validated before it is
    printed or written. DEMAND may be an iteration with SCHEDULE its iteration schedule: the
    phases that ended are kept, the running one keeps what it served, and the rest is scheduled
    by the schedule's own iteration scheduler on the surviving fabric.
    """
    from ocsched import io
    from ocsched.reschedule import LinkFailure, SwitchFailure, reschedule

    out = check_out(out, as_json)
    u = units(unit, link_rate)
    when = duration_in(at, u.unit, name="--at")
    if (fail_switch is None) == (fail_link is None):
        raise InvalidInputError("give exactly one of `--fail-switch` or `--fail-link`")
    failure: SwitchFailure | LinkFailure
    if fail_switch is not None:
        failure = SwitchFailure(fail_switch, when)
    else:
        failure = LinkFailure(*_port_switch(str(fail_link)), when)
    if out is not None and not to_stdout(out):
        io.check_writable(out, force=force, name="--out")
    demand = stdin_or_path(demand, schedule_file)
    schedule_file = stdin_or_path(schedule_file)
    if io.is_iteration(demand):
        _reschedule_iteration(demand, schedule_file, failure, gaps, u, out, force, as_json)
        return
    if gaps is not None:
        raise InvalidInputError("`--gaps` applies to iteration inputs only")
    dem, _ = read_input(demand, u, columns)
    old = io.read_schedule(schedule_file)
    check_same_unit(old.meta, u)
    from ocsched.validation import validate

    t0 = clock()
    new = reschedule(old, dem, failure)  # refuses a schedule that is not valid for the demand
    elapsed = clock() - t0
    check_valid(validate(new, dem))
    facts = _reschedule_facts(failure, old.makespan, new.makespan, new.num_configurations, elapsed)
    on_stdout = write_result(out, new.to_json(), lambda p: io.write_schedule(new, p, force=force), facts)
    emit(facts, as_json=as_json, err=on_stdout)


def _reschedule_facts(
    failure: SwitchFailure | LinkFailure, before: float, after: float, configurations: int, elapsed: float
) -> dict[str, Any]:
    kind = "switch" if hasattr(failure, "switch") and not hasattr(failure, "port") else "link"
    return {
        "failure": str(failure),
        "failure_kind": kind,
        "at": failure.at,
        "makespan_before": before,
        "makespan_after": after,
        "configurations": configurations,
        "time_s": elapsed,
    }


def _reschedule_iteration(
    path: Path,
    schedule_file: Path,
    failure: SwitchFailure | LinkFailure,
    gaps: str | None,
    u: Units,
    out: Path | None,
    force: bool,
    as_json: bool,
) -> None:
    """``reschedule`` of an iteration schedule: the iteration's gaps taken as `schedule` takes them."""
    from ocsched import io
    from ocsched.reschedule import reschedule
    from ocsched.sequence import validate_iteration

    it = in_unit(io.read_iteration(path, gaps=gap_list(gaps)), u)
    old = io.read_iteration_schedule(schedule_file)
    check_same_unit(dict(old.meta), u)
    t0 = clock()
    new = reschedule(old, it, failure)  # refuses a schedule that is not valid for it
    elapsed = clock() - t0
    check_valid(validate_iteration(new, it, fabric=new.on_fabric()))
    facts = _reschedule_facts(failure, old.makespan, new.makespan, new.num_configurations, elapsed)
    on_stdout = write_result(
        out, new.to_json(), lambda p: io.write_iteration_schedule(new, p, force=force), facts
    )
    emit(facts, as_json=as_json, err=on_stdout)


def _port_switch(text: str) -> tuple[int, int]:
    """``--fail-link PORT:SWITCH``: two 0-based integers (ASCII digits: ``int`` takes any Unicode)."""
    port, sep, sw = text.partition(":")
    try:
        if not sep:
            raise InvalidInputError(text)
        return parse_int(port, "port", minimum=0), parse_int(
            sw, "switch", minimum=0, maximum=MAX_SWITCHES - 1
        )
    except InvalidInputError:
        raise InvalidInputError(
            f"`--fail-link` must be PORT:SWITCH (0-based integers, SWITCH < {MAX_SWITCHES}); "
            f"got {shown(text)}"
        ) from None
