"""Core commands: schedule, validate, bound, algorithms, demo."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import numpy as np
import typer

from ocsched.cli._app import (
    MAX_SWITCHES,
    AlgorithmName,
    app,
    choice_type,
    cli_errors,
    float_option,
    int_option,
)
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.fabric import MODELS
from ocsched.io._text import parse_float, parse_float_list, parse_int, shown

if TYPE_CHECKING:
    from ocsched.fabric import Fabric, LinkFailure, SwitchFailure
    from ocsched.iteration import Iteration
    from ocsched.validate import ValidationReport

    Reconfiguration = str
else:
    Reconfiguration = choice_type(MODELS)

DemandArg = Annotated[
    Path, typer.Argument(help="Demand matrix file: .npy, .npz, .csv or .json.", show_default=False)
]


def _delta_list(value: str) -> str:
    """``--delta``: one delay, or one per switch separated by commas (each a finite number >= 0)."""
    for part in str(value).split(","):
        try:
            parse_float(part, "--delta", low=0.0)
        except InvalidInputError:
            raise typer.BadParameter(
                f"`--delta` must be finite numbers >= 0 (one, or one per switch separated by commas); "
                f"got {shown(part.strip())}"
            ) from None
    return str(value)


_SWITCHES = int_option("--switches", minimum=1, maximum=MAX_SWITCHES)
_SEED = int_option("--seed", minimum=0)

SwitchesOpt = Annotated[
    int | None,
    typer.Option(
        "--switches",
        "-s",
        parser=_SWITCHES,
        metavar="INTEGER",
        help=f"Number of parallel OCSes, 1..{MAX_SWITCHES} (may be omitted with --fabric or a --delta list).",
        show_default=False,
    ),
]
DeltaOpt = Annotated[
    str | None,
    typer.Option(
        "--delta",
        "-d",
        parser=_delta_list,
        metavar="DELTA[,DELTA...]",
        help="Reconfiguration delay in the demand's time unit; a comma-separated list gives one per switch.",
        show_default=False,
    ),
]
FabricOpt = Annotated[
    Path | None,
    typer.Option(
        "--fabric", help="FABRIC.toml: switches with delta/rate, failures, model.", show_default=False
    ),
]
ReconfOpt = Annotated[
    Reconfiguration | None,
    typer.Option(
        "--reconfiguration", help="Reconfiguration model (default: all-stop, or the fabric file's)."
    ),
]


BidirOpt = Annotated[
    bool | None,
    typer.Option(
        "--bidirectional/--directed",
        help="Every switch's circuits join both ends both ways (default: directed, or the fabric file's).",
        show_default=False,
    ),
]
PortsOpt = Annotated[
    int | None,
    typer.Option(
        "--ports-per-endpoint",
        help="Ports each endpoint has on every switch, 1..64 (default 1, or the fabric file's).",
        show_default=False,
    ),
]


def _fabric(
    switches: int | None,
    delta: str | None,
    reconfiguration: str | None,
    fabric: Path | None,
    bidirectional: bool | None = None,
    ports_per_endpoint: int | None = None,
) -> Fabric:
    """The fabric of the command line (see :func:`ocsched.io.fabric_from_options`)."""
    from ocsched import io

    return io.fabric_from_options(
        switches=switches,
        delta=None if delta is None else delta,
        reconfiguration=reconfiguration,
        fabric=fabric,
        bidirectional=bidirectional,
        ports_per_endpoint=ports_per_endpoint,
    )


GapsOpt = Annotated[
    str | None,
    typer.Option(
        "--gaps",
        help="Iterations from a 3-D .npy or a folder: the compute gap before each phase (one for all).",
    ),
]
SeedOpt = Annotated[
    int | None,
    typer.Option(
        "--seed", parser=_SEED, metavar="INTEGER", help="Seed for randomised algorithms (an integer >= 0)."
    ),
]


def _check_finite(values: dict[str, float], delta: float) -> None:
    """Refuse results that overflowed: they say nothing about the instance."""
    bad = [k for k, v in values.items() if not math.isfinite(v)]
    if bad:
        raise InvalidInputError(
            f"the {bad[0]} overflows to {values[bad[0]]}: `--delta` = {delta:g} and the demand's entries "
            "must keep every time below 1.8e308 (use a smaller time unit)"
        )


def _preload(algorithm: str) -> None:
    """Import and warm up what the scheduler loads lazily (scipy, JIT-compiled kernels).

    Run on a 2-port instance before the clock starts, so the reported time is the scheduling alone.
    """
    import scipy.optimize
    import scipy.sparse.csgraph  # noqa: F401

    from ocsched.model import Demand
    from ocsched.schedulers import schedule

    # A failure here (e.g. a scheduler for another kind of fabric) is the real call's to report.
    with contextlib.suppress(Exception):
        schedule(Demand.from_matrix([[0.0, 1.0], [1.0, 0.0]]), switches=1, delta=0.0, algorithm=algorithm)


def _summary(rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        typer.echo(f"{k:<{width}}  {v}")


@app.command("schedule")
@cli_errors
def schedule_cmd(
    demand: Annotated[
        Path,
        typer.Argument(
            help="Demand matrix (.npy, .npz, .csv, .json) or an iteration (ocsched.sequence JSON, "
            "3-D .npy, or a folder of per-phase matrices).",
            show_default=False,
        ),
    ],
    switches: SwitchesOpt = None,
    delta: DeltaOpt = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
    bidirectional: BidirOpt = None,
    ports_per_endpoint: PortsOpt = None,
    algorithm: Annotated[
        AlgorithmName, typer.Option("--algorithm", "-a", help="Scheduler (see `ocsched algorithms`).")
    ] = "spectra",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the schedule as JSON here.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    seed: SeedOpt = None,
    gaps: GapsOpt = None,
    iteration_algorithm: Annotated[
        str | None,
        typer.Option("--iteration-algorithm", help="Iterations: spectra-seq (default) or independent."),
    ] = None,
    link_rate: Annotated[
        str | None,
        typer.Option(
            "--link-rate",
            help="Traces: line rate of one link (400Gbps), bytes become time.",
            show_default=False,
        ),
    ] = None,
    trace_option: Annotated[
        list[str] | None,
        typer.Option(
            "--trace-option",
            "-T",
            help="Traces: an `ocsched import` option as NAME=VALUE (repeat).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Schedule a demand matrix, a training iteration or a trace; print makespan, bound and statistics."""
    from ocsched import io
    from ocsched.cli import traces

    fab = _fabric(switches, delta, reconfiguration, fabric, bidirectional, ports_per_endpoint)
    if out is not None:
        io.check_writable(out, force=force, name="--out")
    if io.traces.is_trace(demand):
        it = traces.trace_iteration(demand, link_rate, **traces.trace_options(trace_option))
        _schedule_iteration(it, fab, algorithm, iteration_algorithm, seed, out, force, meta=dict(it.meta))
        return
    if link_rate is not None or trace_option:
        raise InvalidInputError("`--link-rate` and `--trace-option` apply to trace inputs only")
    if io.is_iteration(demand):
        plain = io.read_iteration(demand, gaps=_gap_list(gaps))
        _schedule_iteration(
            plain, fab, algorithm, iteration_algorithm, seed, out, force, meta=io.traces.provenance(demand)
        )
        return
    if gaps is not None or iteration_algorithm is not None:
        raise InvalidInputError("`--gaps` and `--iteration-algorithm` apply to iteration inputs only")
    dem, names = io.read_demand_named(demand)
    _preload(algorithm)
    from ocsched.schedulers import schedule
    from ocsched.validate import validate

    t0 = time.perf_counter()
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, as bad input
        sched = schedule(dem, fabric=fab, algorithm=algorithm, rng=seed)
    elapsed = time.perf_counter() - t0
    d = max(fab.deltas)
    _check_finite({"makespan": sched.makespan, "lower bound": sched.lower_bound or 0.0}, d)
    _check_valid(validate(sched, dem, fabric=fab))
    if names is not None:
        sched = dataclasses.replace(sched, meta={**sched.meta, "port_names": list(names)})
    lb = sched.lower_bound or 0.0
    rows = [
        ("algorithm", sched.algorithm),
        ("ports", str(sched.ports)),
        ("switches", str(fab.size)),
        ("delta", _deltas(fab)),
        ("makespan", f"{sched.makespan:.6g}"),
        ("lower bound", f"{lb:.6g}"),
        ("ratio", f"{sched.makespan / lb:.4f}" if lb > 0 else "n/a"),
        ("configurations", str(sched.num_configurations)),
        ("splits", str(sched.splits)),
        ("time", f"{elapsed:.3f} s"),
    ]
    if sched.status != "heuristic":
        rows.insert(
            -1,
            ("status", sched.status + (f" (dual bound {sched.dual_bound:.6g})" if sched.dual_bound else "")),
        )
    if out is not None:
        io.write_schedule(sched, out, force=force)
        rows.append(("written to", str(out)))
    _summary(rows)


def _check_valid(report: ValidationReport) -> None:
    """Refuse to print or write a schedule that does not validate (a bug, never a silent result)."""
    if not report.ok:
        shown = "; ".join(str(v) for v in report.violations[:3])
        raise OcschedError(f"internal error: the schedule found is invalid ({shown}); please report it")


def _deltas(fab: Fabric) -> str:
    """``0.04`` for identical delays, else the list; the model when it is not all-stop."""
    ds = sorted(set(fab.deltas))
    text = f"{ds[0]:g}" if len(ds) == 1 else ",".join(f"{d:g}" for d in fab.deltas)
    return text if fab.model == "all-stop" else f"{text} ({fab.model})"


def _gap_list(text: str | None) -> float | list[float] | None:
    """``--gaps``: one gap for every phase, or one per phase separated by commas."""
    if text is None:
        return None
    gaps = parse_float_list(text, "--gaps", low=0.0)
    return gaps[0] if len(gaps) == 1 else gaps


def _schedule_iteration(
    it: Iteration,
    fab: Fabric,
    base: str,
    algorithm: str | None,
    seed: int | None,
    out: Path | None,
    force: bool,
    meta: dict[str, Any] | None = None,
) -> None:
    """Schedule an iteration; print one line per phase and the totals against ``independent``.

    ``meta`` (a trace's provenance) is added to the schedule's.
    """
    from ocsched import io
    from ocsched.sequence import iteration_row, phase_rows, schedule_iteration, validate_iteration

    kw: dict[str, Any] = {"fabric": fab, "base": base, "rng": seed}
    t0 = time.perf_counter()
    sched = schedule_iteration(it, algorithm=algorithm or "spectra-seq", **kw)
    elapsed = time.perf_counter() - t0
    _check_valid(validate_iteration(sched, it, fabric=fab))
    independent = schedule_iteration(it, algorithm="independent", **kw)
    rows = phase_rows(sched)
    if rows:
        keys = list(rows[0])
        typer.echo("  ".join(f"{k:>12}" for k in keys))
        for r in rows:
            typer.echo("  ".join(f"{v:>12.6g}" if isinstance(v, float) else f"{v!s:>12}" for v in r.values()))
    total = iteration_row(sched, independent=independent)
    summary = [(k, f"{v:.6g}" if isinstance(v, float) else str(v)) for k, v in total.items()]
    summary.append(("time", f"{elapsed:.3f} s"))
    if out is not None:
        if meta:
            sched = dataclasses.replace(sched, meta={**sched.meta, **meta})
        io.write_iteration_schedule(sched, out, force=force)
        summary.append(("written to", str(out)))
    _summary(summary)


@app.command("validate")
@cli_errors
def validate_cmd(
    demand: Annotated[
        Path, typer.Argument(help="Demand matrix file, or the iteration it schedules.", show_default=False)
    ],
    schedule_file: Annotated[
        Path, typer.Argument(metavar="SCHEDULE", help="Schedule JSON file.", show_default=False)
    ],
    switches: Annotated[
        int | None,
        typer.Option(
            "--switches", "-s", parser=_SWITCHES, metavar="INTEGER", help="Check against this many switches."
        ),
    ] = None,
    delta: DeltaOpt = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
    gaps: GapsOpt = None,
) -> None:
    """Check a schedule file against a demand (or an iteration); exit 1 and list the violations if invalid.

    The schedule is checked against its own fabric, and against the one given by --fabric or
    --delta (with --switches, --reconfiguration) when given; --switches alone checks the count.
    An iteration's gaps are read as `schedule` reads them (its JSON file, --gaps, a folder's
    gaps.csv); a schedule recording other gaps is reported.
    """
    from ocsched import io
    from ocsched.validate import validate

    if io.is_iteration(demand):
        _validate_iteration(demand, schedule_file, switches, delta, fabric, reconfiguration, gaps)
    if gaps is not None:
        raise InvalidInputError("`--gaps` applies to iteration inputs only")
    dem = io.read_demand(demand)
    sched, defects = io.read_schedule_checked(schedule_file)
    if switches is None and fabric is None and delta is not None and "," not in delta:
        switches = sched.num_switches  # `--delta` alone: the file's switches at the fabric's delay
    if delta is not None or fabric is not None or reconfiguration is not None:
        report = validate(sched, dem, fabric=_fabric(switches, delta, reconfiguration, fabric))
    else:
        report = validate(sched, dem, switches=switches)
    raise typer.Exit(_report(report, sched.num_configurations, defects))


def _validate_iteration(
    path: Path,
    schedule_file: Path,
    switches: int | None,
    delta: str | None,
    fabric: Path | None,
    reconfiguration: str | None,
    gaps: str | None,
) -> NoReturn:
    """Check an iteration schedule: the fabric and the gaps taken as `schedule` takes them; exit."""
    from ocsched import io
    from ocsched.sequence import validate_iteration

    sched = io.read_iteration_schedule(schedule_file)
    it = io.read_iteration(path, gaps=_gap_list(gaps))
    if switches is None and fabric is None and delta is not None and "," not in delta:
        switches = sched.num_switches  # `--delta` alone: the file's switches at the fabric's delay
    if delta is not None or fabric is not None or reconfiguration is not None:
        report = validate_iteration(sched, it, fabric=_fabric(switches, delta, reconfiguration, fabric))
    else:
        report = validate_iteration(sched, it, switches=switches)
    code = _report(report, sched.num_configurations, [])
    if gaps is None and path.suffix.lower() != ".json" and any(v.kind == "gaps" for v in report.violations):
        typer.echo("  (a 3-D .npy or a folder without gaps.csv has gaps 0: give them with --gaps)")
    raise typer.Exit(code)


def _report(report: ValidationReport, configurations: int, defects: list[str]) -> int:
    """Print a validation report; return the exit code (1 if invalid)."""
    violations = [f"matching: {m}" for m in defects] + [str(v) for v in report.violations]
    if not violations:
        typer.echo(f"valid: makespan {report.makespan:.6g}, {configurations} configurations")
        return 0
    typer.echo(f"INVALID: {len(violations)} violation(s)")
    for v in violations:
        typer.echo(f"  {v}")
    return 1


@app.command("bound")
@cli_errors
def bound_cmd(
    demand: DemandArg,
    switches: SwitchesOpt = None,
    delta: DeltaOpt = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
) -> None:
    """Print the lower bound on the makespan (and, on identical switches, the bounds it dominates)."""
    from ocsched import io
    from ocsched.bounds import degree_bound, line_bound, lower_bound, refined_bound

    fab = _fabric(switches, delta, reconfiguration, fabric)
    dem = io.read_demand(demand)
    d = max(fab.deltas)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, as bad input
        if not fab.is_uniform:
            lb = lower_bound(dem, fabric=fab)
            _check_finite({"lower bound": lb}, d)
            _summary([("lower bound", f"{lb:.6g}"), ("fabric", f"{fab.size} switches, delta {_deltas(fab)}")])
            return
        s = fab.size
        lb = line_bound(dem, switches=s, delta=d)
        db = degree_bound(dem, switches=s, delta=d)
        rb = refined_bound(dem, switches=s, delta=d)
    _check_finite({"line bound": lb, "degree bound": db, "refined bound": rb}, d)
    _summary(
        [
            ("lower bound", f"{max(lb, db, rb):.6g}"),
            ("line bound", f"{lb:.6g}"),
            ("degree bound", f"{db:.6g}"),
            ("refined bound", f"{rb:.6g}"),
        ]
    )


@app.command("reschedule")
@cli_errors
def reschedule_cmd(
    demand: DemandArg,
    schedule_file: Annotated[
        Path, typer.Argument(metavar="SCHEDULE", help="Schedule JSON file to repair.", show_default=False)
    ],
    at: Annotated[
        float,
        typer.Option(
            "--at",
            parser=float_option("--at", low=0.0),
            metavar="TIME",
            help="When the failure happens.",
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
        str | None, typer.Option("--fail-link", help="PORT:SWITCH, the link that fails (0-based).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the new schedule here.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    gaps: GapsOpt = None,
) -> None:
    """Keep what finished before a failure, and schedule the rest on the surviving fabric.

    SCHEDULE must be valid for DEMAND (it is checked); the new schedule is validated before it is
    printed or written. DEMAND may be an iteration with SCHEDULE its iteration schedule: the
    phases that ended are kept, the running one keeps what it served, and the rest is scheduled
    by the schedule's own iteration scheduler on the surviving fabric.
    """
    from ocsched import io
    from ocsched.reschedule import LinkFailure, SwitchFailure, reschedule

    if (fail_switch is None) == (fail_link is None):
        raise InvalidInputError("give exactly one of `--fail-switch` or `--fail-link`")
    failure: SwitchFailure | LinkFailure
    if fail_switch is not None:
        failure = SwitchFailure(fail_switch, at)
    else:
        failure = LinkFailure(*_port_switch(str(fail_link)), at)
    if out is not None:
        io.check_writable(out, force=force, name="--out")
    if io.is_iteration(demand):
        _reschedule_iteration(demand, schedule_file, failure, gaps, out, force)
        return
    if gaps is not None:
        raise InvalidInputError("`--gaps` applies to iteration inputs only")
    dem = io.read_demand(demand)
    old = io.read_schedule(schedule_file)
    from ocsched.validate import validate

    t0 = time.perf_counter()
    new = reschedule(old, dem, failure)  # refuses a schedule that is not valid for the demand
    elapsed = time.perf_counter() - t0
    _check_valid(validate(new, dem))
    rows = [
        ("failure", str(failure)),
        ("makespan before", f"{old.makespan:.6g}"),
        ("makespan after", f"{new.makespan:.6g}"),
        ("configurations", str(new.num_configurations)),
        ("time", f"{elapsed:.3f} s"),
    ]
    if out is not None:
        io.write_schedule(new, out, force=force)
        rows.append(("written to", str(out)))
    _summary(rows)


def _reschedule_iteration(
    path: Path,
    schedule_file: Path,
    failure: SwitchFailure | LinkFailure,
    gaps: str | None,
    out: Path | None,
    force: bool,
) -> None:
    """``reschedule`` of an iteration schedule: the iteration's gaps taken as `schedule` takes them."""
    from ocsched import io
    from ocsched.reschedule import reschedule
    from ocsched.sequence import validate_iteration

    it = io.read_iteration(path, gaps=_gap_list(gaps))
    old = io.read_iteration_schedule(schedule_file)
    t0 = time.perf_counter()
    new = reschedule(old, it, failure)  # refuses a schedule that is not valid for it
    elapsed = time.perf_counter() - t0
    _check_valid(validate_iteration(new, it, fabric=new.on_fabric()))
    rows = [
        ("failure", str(failure)),
        ("makespan before", f"{old.makespan:.6g}"),
        ("makespan after", f"{new.makespan:.6g}"),
        ("configurations", str(new.num_configurations)),
        ("time", f"{elapsed:.3f} s"),
    ]
    if out is not None:
        io.write_iteration_schedule(new, out, force=force)
        rows.append(("written to", str(out)))
    _summary(rows)


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


@app.command("algorithms")
@cli_errors
def algorithms_cmd() -> None:
    """List the schedulers with one-line descriptions."""
    from ocsched.schedulers import algorithms

    algs = algorithms()
    width = max(len(k) for k in algs)
    for name, desc in algs.items():
        typer.echo(f"{name:<{width}}  {desc}")


@app.command("demo")
@cli_errors
def demo_cmd(
    n: Annotated[
        int,
        typer.Option(
            "--n",
            parser=int_option("--n", minimum=17, maximum=2000),
            metavar="INTEGER",
            help="Ports, 17..2000.",
        ),
    ] = 100,
    switches: Annotated[
        int | None,
        typer.Option(
            "--switches", "-s", parser=_SWITCHES, metavar="INTEGER", help="Parallel OCSes [default: 16]."
        ),
    ] = None,
    delta: Annotated[
        str | None,
        typer.Option(
            "--delta",
            "-d",
            parser=_delta_list,
            metavar="DELTA[,DELTA...]",
            help="Reconfiguration delay (line sums are 1); a list gives one per switch [default: 0.04].",
        ),
    ] = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
    seed: Annotated[
        int, typer.Option("--seed", parser=_SEED, metavar="INTEGER", help="Seed of the instance.")
    ] = 0,
) -> None:
    """Schedule a built-in instance (the standard skewed benchmark) and compare with the lower bound."""
    from ocsched.model import Demand
    from ocsched.schedulers import SCHEDULERS, fabric_features, schedule
    from ocsched.validate import validate
    from ocsched.workloads import generate

    if fabric is None:
        delta = "0.04" if delta is None else delta
        switches = 16 if switches is None and "," not in delta else switches
    fab = _fabric(switches, delta, reconfiguration, fabric)
    dem = Demand.from_matrix(generate("standard", n=n, seed=seed))
    typer.echo(
        f"Standard skewed benchmark: n={n} ports, {dem.nnz} flows (at most {dem.max_degree} per port), "
        f"largest line sum 1\nScheduling on s={fab.size} OCSes with reconfiguration delay {_deltas(fab)} "
        f"(seed {seed}).\n"
    )
    features = fabric_features(fab)
    names = [
        a
        for a in ("spectra", "spectra-pack", "spectra-noeq", "baseline")
        if features <= SCHEDULERS[a].supports and SCHEDULERS[a].requires <= features
    ]
    lb = None
    typer.echo(
        f"{'algorithm':<14}{'makespan':>10}{'/ bound':>9}{'configs':>9}{'splits':>8}{'valid':>7}{'time':>9}"
    )
    for name in names:
        t0 = time.perf_counter()
        sched = schedule(dem, fabric=fab, algorithm=name, rng=seed)
        elapsed = time.perf_counter() - t0
        lb = sched.lower_bound or 0.0
        ok = validate(sched, dem, fabric=fab).ok
        ratio = sched.makespan / lb if lb > 0 else float("nan")
        typer.echo(
            f"{name:<14}{sched.makespan:>10.4f}{ratio:>9.3f}{sched.num_configurations:>9}"
            f"{sched.splits:>8}{'yes' if ok else 'NO':>7}{elapsed:>8.2f}s"
        )
    typer.echo(f"{'lower bound':<14}{lb:>10.4f}")
    typer.echo(
        "\nNext:\n"
        "  ocsched algorithms                                  list the schedulers\n"
        "  ocsched generate gpt32 --normalize --out d.npy      a workload (`ocsched workloads` lists them)\n"
        "  ocsched schedule d.npy -s 16 -d 0.04 -o s.json      schedule a matrix (.npy/.npz/.csv/.json)\n"
        "  ocsched validate d.npy s.json                       check a schedule file\n"
        "  ocsched plot s.json --out s.png                     draw it\n"
        "  ocsched sweep --preset quick --out results/quick    a small evaluation; then `ocsched report`\n"
        "The README explains the model, the algorithms and the file formats."
    )
