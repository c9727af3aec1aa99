"""Core commands: schedule, validate, bound, algorithms, demo."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import numpy as np
import typer

from ocsched._jit import clock
from ocsched.cli._app import (
    MAX_SWITCHES,
    AlgorithmName,
    app,
    choice_type,
    cli_errors,
    int_option,
)
from ocsched.cli._output import JsonOpt, emit
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.fabric import MODELS
from ocsched.io._text import parse_float_list, parse_int, shown
from ocsched.units import DEMAND_UNITS, bytes_per_second, duration_in

if TYPE_CHECKING:
    from ocsched.fabric import Fabric, LinkFailure, SwitchFailure
    from ocsched.iteration import Iteration
    from ocsched.model import Demand
    from ocsched.validate import ValidationReport

    Reconfiguration = str
    DemandUnit = str
else:
    Reconfiguration = choice_type(MODELS)
    DemandUnit = choice_type(DEMAND_UNITS)

DemandArg = Annotated[
    Path,
    typer.Argument(
        metavar="DEMAND",
        help="Demand matrix file: .npy, .npz, .csv or .json; - reads it from stdin.",
        show_default=False,
    ),
]


def _delta_list(value: str) -> str:
    """``--delta``: one delay, or one per switch separated by commas (each >= 0, a unit allowed)."""
    for part in str(value).split(","):
        try:
            duration_in(part, "s", name="--delta")  # the unit is checked against --unit later
        except InvalidInputError:
            raise typer.BadParameter(
                f"`--delta` must be finite numbers >= 0, each with an optional time unit (10us, 1.5ms; "
                f"one, or one per switch separated by commas); got {shown(part.strip())}"
            ) from None
    return str(value)


def _time_option(flag: str) -> Any:
    """The ``parser=`` of a time option: a finite number >= 0 with an optional unit (``2ms``)."""

    def parse(value: str) -> str:
        try:
            duration_in(value, "s", name=flag)
        except InvalidInputError:
            raise typer.BadParameter(
                f"`{flag}` must be a finite number >= 0 with an optional time unit (2ms, 10us); "
                f"got {shown(str(value).strip())}"
            ) from None
        return str(value)

    return parse


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
        help="Reconfiguration delay: 10us, 1.5ms, or a bare number in the demand's time unit; "
        "a comma-separated list gives one per switch.",
        show_default=False,
    ),
]
UnitOpt = Annotated[
    DemandUnit | None,
    typer.Option(
        "--unit",
        help="What the demand's entries measure: a time (s, ms, us, ns) or bytes (needs --link-rate).",
        show_default=False,
    ),
]
LinkRateOpt = Annotated[
    str | None,
    typer.Option(
        "--link-rate",
        metavar="RATE",
        help="Line rate of one link (400Gbps, 50GB/s): the demand is bytes, turned into seconds.",
        show_default=False,
    ),
]
ColumnsOpt = Annotated[
    str | None,
    typer.Option(
        "--columns",
        metavar="SRC,DST,VALUE",
        help="Long-form CSV: the header names of the source, destination and amount columns.",
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


@dataclasses.dataclass(frozen=True)
class Units:
    """The units of a command line: ``unit`` the time unit of the demand, delays and results
    (None: not said), ``factor`` what the file's entries are multiplied by to be in it."""

    unit: str | None = None
    factor: float = 1.0
    source: str | None = None  # "bytes at 400Gbps" when the file holds bytes

    @property
    def shown(self) -> str:
        """The unit as summaries print it."""
        if self.unit is None:
            return "not given (the demand's own; see --unit)"
        return self.unit if self.source is None else f"{self.unit} (from {self.source})"


def units(unit: str | None, link_rate: str | None) -> Units:
    """``--unit`` and ``--link-rate``: a rate means the entries are bytes (seconds after conversion)."""
    if link_rate is not None and unit not in (None, "bytes"):
        raise InvalidInputError(
            f"`--link-rate` turns bytes into time; the demand is in {unit} (`--unit {unit}`): give one"
        )
    if unit == "bytes" or link_rate is not None:
        if link_rate is None:
            raise InvalidInputError(
                "`--unit bytes` needs `--link-rate` (e.g. 400Gbps) to turn bytes into time"
            )
        rate = bytes_per_second(link_rate, name="--link-rate")
        return Units("s", 1.0 / rate, f"bytes at {link_rate.strip()}")
    return Units(unit)


def _delays(delta: str | None, u: Units) -> str | None:
    """``--delta`` in the demand's time unit (``10us`` with ``--unit ms`` is 0.01)."""
    if delta is None:
        return None
    return ",".join(repr(duration_in(part, u.unit, name="--delta")) for part in delta.split(","))


EpsRateOpt = Annotated[
    float | None,
    typer.Option(
        "--eps-rate",
        help="Packet switch beside the OCSes: each port's rate, in OCS link rates (default 0: none).",
        show_default=False,
    ),
]
EpsLatencyOpt = Annotated[
    float | None,
    typer.Option("--eps-latency", help="The packet switch's latency (with --eps-rate).", show_default=False),
]


def _fabric(
    switches: int | None,
    delta: str | None,
    reconfiguration: str | None,
    fabric: Path | None,
    u: Units | None = None,
    eps_rate: float | None = None,
    eps_latency: float | None = None,
) -> Fabric:
    """The fabric of the command line (see :func:`ocsched.io.fabric_from_options`)."""
    from ocsched import io

    return io.fabric_from_options(
        switches=switches,
        delta=_delays(delta, u or Units()),
        reconfiguration=reconfiguration,
        fabric=fabric,
        eps_rate=eps_rate,
        eps_latency=eps_latency,
    )


def _input(path: Path) -> Path:
    """``-`` for DEMAND: stdin, spooled to a file the readers can tell the format of."""
    if str(path) != "-":
        return path
    from ocsched.io.demand import spool_stdin

    return spool_stdin()


def read_input(path: Path, u: Units, columns: str | None = None) -> tuple[Demand, tuple[str, ...] | None]:
    """Read DEMAND (``-``: stdin) with ``--columns``, in the time unit of ``u``."""
    from ocsched import io

    dem, names = io.read_demand_named(path, columns=_columns(columns))
    return (dem if u.factor == 1.0 else dem.scaled(u.factor)), names


def _columns(text: str | None) -> tuple[str, str, str] | None:
    if text is None:
        return None
    parts = [c.strip() for c in text.split(",")]
    if len(parts) != 3 or not all(parts):
        raise InvalidInputError(f"`--columns` must be SRC,DST,VALUE (three header names); got {shown(text)}")
    return parts[0], parts[1], parts[2]


def _out_path(out: Path | None, as_json: bool) -> Path | None:
    """``--out -`` is stdout; it cannot share stdout with ``--json``."""
    if out is not None and str(out) == "-" and as_json:
        raise InvalidInputError("`--out -` and `--json` both write to stdout: give --out a file")
    return out


def _to_stdout(out: Path | None) -> bool:
    return out is not None and str(out) == "-"


def fabric_facts(fab: Fabric) -> dict[str, Any]:
    """What the fabric is, in the summary's words: switches, delays, model, and what a fabric
    file adds (rates, down windows, failed links) when present."""
    ds = sorted(set(fab.deltas))
    facts: dict[str, Any] = {
        "switches": fab.size,
        "delta": ds[0] if len(ds) == 1 else list(fab.deltas),
        "reconfiguration": fab.model,
    }
    if any(r != 1.0 for r in fab.rates):
        facts["rates"] = list(fab.rates)
    if fab.down:
        facts["down"] = [
            f"switch {w.switch} {w.start:g}..{w.end:g}"
            if math.isfinite(w.end)
            else f"switch {w.switch} from {w.start:g}"
            for w in fab.down
        ]
    if fab.failed_links:
        facts["failed_links"] = [
            f"port {k.port} switch {k.switch} from {k.start:g}" for k in fab.failed_links
        ]
    return facts


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


def _written(out: Path | None, text: str, write: Any, facts: dict[str, Any]) -> bool:
    """Write a result to ``--out`` (``-``: stdout, the summary then on stderr); True if on stdout."""
    if out is None:
        return False
    if _to_stdout(out):
        typer.echo(text)
        return True
    facts["written_to"] = str(write(out))
    return False


SCHEDULE_EXAMPLES = """\
ocsched schedule d.npy -s 4 -d 0.04                   # a matrix on 4 OCSes
ocsched schedule d.npy -s 4 -d 10us --unit bytes --link-rate 400Gbps -o s.json
ocsched schedule flows.csv --columns gpu_a,gpu_b,bytes --link-rate 50GB/s -s 2 -d 20us
ocsched schedule it/ -s 2 -d 0.1 --gaps 0.2             # an iteration (a folder of phases)
cat d.csv | ocsched schedule - -s 2 -d 0.04 --json      # stdin in, JSON out
"""


@app.command("schedule", epilog=SCHEDULE_EXAMPLES)
@cli_errors
def schedule_cmd(
    demand: Annotated[
        Path,
        typer.Argument(
            metavar="DEMAND",
            help="Demand matrix (.npy, .npz, .csv, .json; - reads stdin) or an iteration "
            "(ocsched.sequence JSON, 3-D .npy, or a folder of per-phase matrices) or a trace.",
            show_default=False,
        ),
    ],
    switches: SwitchesOpt = None,
    delta: DeltaOpt = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
    eps_rate: EpsRateOpt = None,
    eps_latency: EpsLatencyOpt = None,
    algorithm: Annotated[
        AlgorithmName, typer.Option("--algorithm", "-a", help="Scheduler (see `ocsched algorithms`).")
    ] = "spectra",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the schedule as JSON here (.json.gz compressed; - stdout)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    seed: SeedOpt = None,
    unit: UnitOpt = None,
    link_rate: LinkRateOpt = None,
    columns: ColumnsOpt = None,
    gaps: GapsOpt = None,
    iteration_algorithm: Annotated[
        str | None,
        typer.Option(
            "--iteration-algorithm",
            metavar="NAME",
            help="Iterations: spectra-seq (default) or independent (`ocsched algorithms`).",
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
    as_json: JsonOpt = False,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            help="An option of the algorithm as KEY=VALUE (repeat; an unknown KEY lists the allowed ones), "
            "e.g. --option node_limit=500 for exact.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Schedule a demand matrix, a training iteration or a trace; print makespan, bound and statistics."""
    from ocsched import io
    from ocsched.cli import traces

    out = _out_path(out, as_json)
    demand = _input(demand)
    if out is not None and not _to_stdout(out):
        io.check_writable(out, force=force, name="--out")
    options = _algorithm_options(option)
    if options and (io.traces.is_trace(demand) or io.is_iteration(demand)):
        raise InvalidInputError("`--option` applies to single demand matrices, not iterations or traces")
    if io.traces.is_trace(demand):
        if unit not in (None, "bytes"):
            raise InvalidInputError(
                "a trace holds bytes: give `--link-rate`, and its time unit with -T unit=..."
            )
        it = traces.trace_iteration(demand, link_rate, **traces.trace_options(trace_option))
        u = Units(str(it.meta.get("unit", "s")), 1.0, f"bytes at {link_rate}")
        fab = _fabric(switches, delta, reconfiguration, fabric, u, eps_rate=eps_rate, eps_latency=eps_latency)
        _schedule_iteration(
            it, fab, u, algorithm, iteration_algorithm, seed, out, force, as_json, dict(it.meta)
        )
        return
    if trace_option:
        raise InvalidInputError("`--trace-option` applies to trace inputs only")
    u = units(unit, link_rate)
    fab = _fabric(switches, delta, reconfiguration, fabric, u, eps_rate=eps_rate, eps_latency=eps_latency)
    if io.is_iteration(demand):
        if columns is not None:
            raise InvalidInputError("`--columns` applies to long-form CSV demands, not iterations")
        plain = _scaled_iteration(io.read_iteration(demand, gaps=_gap_list(gaps)), u)
        meta = io.traces.provenance(demand)
        _schedule_iteration(plain, fab, u, algorithm, iteration_algorithm, seed, out, force, as_json, meta)
        return
    if gaps is not None or iteration_algorithm is not None:
        raise InvalidInputError("`--gaps` and `--iteration-algorithm` apply to iteration inputs only")
    dem, names = read_input(demand, u, columns)
    _preload(algorithm)
    from ocsched.schedulers import schedule
    from ocsched.validate import validate

    t0 = clock()
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, as bad input
        sched = schedule(dem, fabric=fab, algorithm=algorithm, rng=seed, options=options)
    elapsed = clock() - t0
    d = max(fab.deltas)
    _check_finite({"makespan": sched.makespan, "lower bound": sched.lower_bound or 0.0}, d)
    _check_valid(validate(sched, dem, fabric=fab))
    meta = {**sched.meta, **_unit_meta(u)}
    if names is not None:
        meta["port_names"] = list(names)
    sched = dataclasses.replace(sched, meta=meta)
    lb = sched.lower_bound or 0.0
    facts: dict[str, Any] = {
        "algorithm": sched.algorithm,
        "ports": sched.ports,
        **fabric_facts(fab),
        "unit": u.shown,
        "makespan": sched.makespan,
        "lower_bound": lb,
        "ratio": sched.makespan / lb if lb > 0 else None,
        "configurations": sched.num_configurations,
        "splits": sched.splits,
    }
    if fab.eps_rate:
        eps = sched.eps
        facts["eps_rate"] = fab.eps_rate
        facts["eps_share"] = 0.0 if eps is None or not dem.nnz else float(eps.values.sum() / dem.values.sum())
        facts["eps_time"] = sched.eps_time
    if sched.status != "heuristic":
        facts["status"] = sched.status
        if sched.dual_bound:
            facts["dual_bound"] = sched.dual_bound
    facts["time_s"] = elapsed
    if as_json:
        facts["unit"] = u.unit
        if u.source is not None:
            facts["converted_from"] = u.source
    on_stdout = _written(out, sched.to_json(), lambda p: io.write_schedule(sched, p, force=force), facts)
    emit(facts, as_json=as_json, err=on_stdout)


def _unit_meta(u: Units) -> dict[str, Any]:
    """What a schedule file records of its unit: ``meta.unit`` (and where it came from)."""
    out: dict[str, Any] = {}
    if u.unit is not None:
        out["unit"] = u.unit
    if u.source is not None:
        out["unit_source"] = u.source
    return out


def _scaled_iteration(it: Iteration, u: Units) -> Iteration:
    """An iteration in the time unit of ``u`` (bytes become seconds; gaps are times already)."""
    if u.factor == 1.0:
        return it
    from ocsched.iteration import Iteration

    return Iteration.from_matrices(
        [p.demand.scaled(u.factor) for p in it.phases],
        gaps=[p.gap_before for p in it.phases],
        names=[p.name for p in it.phases],
    )


def _algorithm_options(texts: list[str] | None) -> dict[str, object] | None:
    """``--option KEY=VALUE`` flags as a dict (values stay text: the registry converts and checks them)."""
    if not texts:
        return None
    out: dict[str, object] = {}
    for text in texts:
        key, eq, value = text.partition("=")
        if not eq or not key.strip():
            raise InvalidInputError(f"`--option` must be KEY=VALUE; got {text!r}")
        out[key.strip()] = value.strip()
    return out


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
    u: Units,
    base: str,
    algorithm: str | None,
    seed: int | None,
    out: Path | None,
    force: bool,
    as_json: bool,
    meta: dict[str, Any] | None = None,
) -> None:
    """Schedule an iteration; print one line per phase and the totals against ``independent``.

    The totals use the single-matrix summary's words (makespan, lower bound, ratio, ...), then
    the iteration's own (gaps, exposed time, ...). ``meta`` (a trace's provenance) is added to
    the schedule's.
    """
    from ocsched import io
    from ocsched._checks import check_choice
    from ocsched.sequence import (
        ITERATION_SCHEDULERS,
        iteration_row,
        phase_rows,
        schedule_iteration,
        validate_iteration,
    )

    if algorithm is not None:
        check_choice(algorithm, "--iteration-algorithm", list(ITERATION_SCHEDULERS))
    kw: dict[str, Any] = {"fabric": fab, "base": base, "rng": seed}
    t0 = clock()
    sched = schedule_iteration(it, algorithm=algorithm or "spectra-seq", **kw)
    elapsed = clock() - t0
    _check_valid(validate_iteration(sched, it, fabric=fab))
    independent = schedule_iteration(it, algorithm="independent", **kw)
    rows = phase_rows(sched)
    total = iteration_row(sched, independent=independent)
    lb = total.pop("lower_bound")
    makespan = total.pop("iteration_time")
    facts: dict[str, Any] = {
        "algorithm": total.pop("algorithm"),
        "ports": it.n,
        **fabric_facts(fab),
        "unit": u.unit if as_json else u.shown,
        "makespan": makespan,
        "lower_bound": lb,
        "ratio": makespan / lb if isinstance(lb, float) and lb > 0 and isinstance(makespan, float) else None,
        "configurations": total.pop("configurations"),
        **total,
        "time_s": elapsed,
    }
    sched = dataclasses.replace(sched, meta={**sched.meta, **(meta or {}), **_unit_meta(u)})
    text = sched.to_json()
    on_stdout = _written(out, text, lambda p: io.write_iteration_schedule(sched, p, force=force), facts)
    if as_json:
        emit({**facts, "phase_rows": rows}, as_json=True)
        return
    if rows:
        keys = list(rows[0])
        typer.echo("  ".join(f"{k:>12}" for k in keys), err=on_stdout)
        for r in rows:
            cells = (f"{v:>12.6g}" if isinstance(v, float) else f"{v!s:>12}" for v in r.values())
            typer.echo("  ".join(cells), err=on_stdout)
    emit(facts, err=on_stdout)


VALIDATE_EXAMPLES = """\
ocsched validate d.npy s.json                    # against the schedule's own fabric
ocsched validate d.npy s.json --fabric f.toml    # and against another one
ocsched validate d.npy s.json --json             # {"valid": true, "violations": [], ...}
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
            "--switches", "-s", parser=_SWITCHES, metavar="INTEGER", help="Check against this many switches."
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
    from ocsched.validate import validate

    demand = _input(demand)
    u = units(unit, link_rate)
    if io.is_iteration(demand):
        _validate_iteration(demand, schedule_file, switches, delta, fabric, reconfiguration, gaps, u, as_json)
    if gaps is not None:
        raise InvalidInputError("`--gaps` applies to iteration inputs only")
    dem, _ = read_input(demand, u, columns)
    sched, defects = io.read_schedule_checked(schedule_file)
    _same_unit(sched.meta, u)
    if switches is None and fabric is None and delta is not None and "," not in delta:
        switches = sched.num_switches  # `--delta` alone: the file's switches at the fabric's delay
    if delta is not None or fabric is not None or reconfiguration is not None:
        report = validate(sched, dem, fabric=_fabric(switches, delta, reconfiguration, fabric, u))
    else:
        report = validate(sched, dem, switches=switches)
    raise typer.Exit(_report(report, sched.num_configurations, defects, sched.meta, as_json))


def _same_unit(meta: Any, u: Units) -> None:
    """Refuse to check a schedule in seconds against a demand read as milliseconds."""
    recorded = meta.get("unit") if isinstance(meta, dict) else None
    if isinstance(recorded, str) and u.unit is not None and recorded != u.unit:
        raise InvalidInputError(
            f"the schedule is in {recorded} (its meta.unit) but the demand is read in {u.unit}: "
            f"give `--unit {recorded}` (or the bytes' --link-rate)"
        )


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
    _same_unit(dict(sched.meta), u)
    it = _scaled_iteration(io.read_iteration(path, gaps=_gap_list(gaps)), u)
    if switches is None and fabric is None and delta is not None and "," not in delta:
        switches = sched.num_switches  # `--delta` alone: the file's switches at the fabric's delay
    if delta is not None or fabric is not None or reconfiguration is not None:
        report = validate_iteration(sched, it, fabric=_fabric(switches, delta, reconfiguration, fabric, u))
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
    fab = _fabric(switches, delta, reconfiguration, fabric, u)
    dem, _ = read_input(_input(demand), u, columns)
    d = max(fab.deltas)
    facts: dict[str, Any]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, as bad input
        if not fab.is_uniform:
            lb = lower_bound(dem, fabric=fab)
            _check_finite({"lower bound": lb}, d)
            facts = {"lower_bound": lb, **fabric_facts(fab), "unit": u.unit if as_json else u.shown}
            emit(facts, as_json=as_json)
            return
        s = fab.size
        lb = line_bound(dem, switches=s, delta=d)
        db = degree_bound(dem, switches=s, delta=d)
        rb = refined_bound(dem, switches=s, delta=d)
    _check_finite({"line bound": lb, "degree bound": db, "refined bound": rb}, d)
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
            parser=_time_option("--at"),
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

    out = _out_path(out, as_json)
    u = units(unit, link_rate)
    when = duration_in(at, u.unit, name="--at")
    if (fail_switch is None) == (fail_link is None):
        raise InvalidInputError("give exactly one of `--fail-switch` or `--fail-link`")
    failure: SwitchFailure | LinkFailure
    if fail_switch is not None:
        failure = SwitchFailure(fail_switch, when)
    else:
        failure = LinkFailure(*_port_switch(str(fail_link)), when)
    if out is not None and not _to_stdout(out):
        io.check_writable(out, force=force, name="--out")
    demand = _input(demand)
    if io.is_iteration(demand):
        _reschedule_iteration(demand, schedule_file, failure, gaps, u, out, force, as_json)
        return
    if gaps is not None:
        raise InvalidInputError("`--gaps` applies to iteration inputs only")
    dem, _ = read_input(demand, u, columns)
    old = io.read_schedule(schedule_file)
    _same_unit(old.meta, u)
    from ocsched.validate import validate

    t0 = clock()
    new = reschedule(old, dem, failure)  # refuses a schedule that is not valid for the demand
    elapsed = clock() - t0
    _check_valid(validate(new, dem))
    facts = _reschedule_facts(failure, old.makespan, new.makespan, new.num_configurations, elapsed)
    on_stdout = _written(out, new.to_json(), lambda p: io.write_schedule(new, p, force=force), facts)
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

    it = _scaled_iteration(io.read_iteration(path, gaps=_gap_list(gaps)), u)
    old = io.read_iteration_schedule(schedule_file)
    _same_unit(dict(old.meta), u)
    t0 = clock()
    new = reschedule(old, it, failure)  # refuses a schedule that is not valid for it
    elapsed = clock() - t0
    _check_valid(validate_iteration(new, it, fabric=new.on_fabric()))
    facts = _reschedule_facts(failure, old.makespan, new.makespan, new.num_configurations, elapsed)
    on_stdout = _written(
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


@app.command("algorithms", epilog="ocsched algorithms\nocsched algorithms --json | jq 'keys'\n")
@cli_errors
def algorithms_cmd(as_json: JsonOpt = False) -> None:
    """List the schedulers with one-line descriptions."""
    from ocsched.schedulers import SCHEDULERS, algorithms

    algs = algorithms()
    if as_json:
        facts = {
            name: {
                "description": desc,
                "supports": sorted(SCHEDULERS[name].supports),
                "requires": sorted(SCHEDULERS[name].requires),
            }
            for name, desc in algs.items()
        }
        emit({"algorithms": facts}, as_json=True)
        return
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
            "--switches",
            "-s",
            parser=_SWITCHES,
            metavar="INTEGER",
            help="Parallel OCSes (default 16, or one per --delta).",
        ),
    ] = None,
    delta: Annotated[
        str | None,
        typer.Option(
            "--delta",
            "-d",
            parser=_delta_list,
            metavar="DELTA[,DELTA...]",
            help="Reconfiguration delay (line sums are 1; default 0.04); a list gives one per switch.",
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
    dem = Demand.from_matrix(generate("standard", n=n, rng=seed))
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
        t0 = clock()
        sched = schedule(dem, fabric=fab, algorithm=name, rng=seed)
        elapsed = clock() - t0
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
