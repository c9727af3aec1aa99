"""What the commands that read a demand share: their options, units, input and output.

``DEMAND`` may be ``-`` (stdin), ``--out`` may be ``-`` (stdout); ``--unit``/``--link-rate``
say what the demand's entries measure (:class:`Units`), delays may carry a unit; the fabric
of ``--switches``/``--delta``/``--fabric`` is described in the summaries' words
(:func:`fabric_facts`).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ocsched._text import parse_float_list, shown
from ocsched.cli._app import MAX_SWITCHES, choice_type, int_option
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.fabric import MODELS
from ocsched.units import DEMAND_UNITS, bytes_per_second, duration_in

if TYPE_CHECKING:
    from ocsched.fabric import Fabric
    from ocsched.iteration import Iteration
    from ocsched.model import Demand
    from ocsched.validation import ValidationReport

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


def delta_list(value: str) -> str:
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


def time_option(flag: str) -> Any:
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


SWITCHES = int_option("--switches", minimum=1, maximum=MAX_SWITCHES)
SEED = int_option("--seed", minimum=0)

SwitchesOpt = Annotated[
    int | None,
    typer.Option(
        "--switches",
        "-s",
        parser=SWITCHES,
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
        parser=delta_list,
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


def delays_in(delta: str | None, u: Units) -> str | None:
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


def fabric_of(
    switches: int | None,
    delta: str | None,
    reconfiguration: str | None,
    fabric: Path | None,
    u: Units | None = None,
    eps_rate: float | None = None,
    eps_latency: float | None = None,
    bidirectional: bool | None = None,
    ports_per_endpoint: int | None = None,
) -> Fabric:
    """The fabric of the command line (see :func:`ocsched.io.fabric_from_options`)."""
    from ocsched import io

    return io.fabric_from_options(
        switches=switches,
        delta=delays_in(delta, u or Units()),
        reconfiguration=reconfiguration,
        fabric=fabric,
        eps_rate=eps_rate,
        eps_latency=eps_latency,
        bidirectional=bidirectional,
        ports_per_endpoint=ports_per_endpoint,
    )


def stdin_or_path(path: Path, *others: Path) -> Path:
    """``-`` for DEMAND (or SCHEDULE): stdin, spooled to a file the readers can tell the format of.

    ``others`` are the command's other file arguments: at most one of them all may be ``-``.
    """
    if str(path) != "-":
        return path
    if any(str(p) == "-" for p in others):
        raise InvalidInputError("only one file argument can be - (stdin)")
    from ocsched.io.demand import spool_stdin

    return spool_stdin()


def read_input(path: Path, u: Units, columns: str | None = None) -> tuple[Demand, tuple[str, ...] | None]:
    """Read DEMAND (``-``: stdin) with ``--columns``, in the time unit of ``u``."""
    from ocsched import io

    if columns is not None and path.suffix.lower() != ".csv":
        raise InvalidInputError(f"`--columns` applies to long-form .csv demands; got {path}")
    dem, names = io.read_demand_named(path, columns=column_names(columns))
    if u.unit is None:
        _warn_if_bytes(dem)
    return (dem if u.factor == 1.0 else dem.scaled(u.factor)), names


#: Whole-number entries this large, with no --unit, are most likely byte counts.
BYTES_HINT = 1e4


def _warn_if_bytes(dem: Demand) -> None:
    """Say so when a demand of no stated unit looks like bytes (whole numbers, large)."""
    import logging

    import numpy as np

    values = np.asarray(dem.values)
    if values.size and float(values.min()) >= BYTES_HINT and bool(np.all(values == np.round(values))):
        logging.getLogger("ocsched.cli").warning(
            "the demand's entries are whole numbers >= %g (up to %.3g): if they are bytes, give "
            "--link-rate RATE (e.g. 400Gbps) to schedule in seconds; if they are times, --unit says so",
            BYTES_HINT,
            float(values.max()),
        )


def column_names(text: str | None) -> tuple[str, str, str] | None:
    if text is None:
        return None
    parts = [c.strip() for c in text.split(",")]
    if len(parts) != 3 or not all(parts):
        raise InvalidInputError(f"`--columns` must be SRC,DST,VALUE (three header names); got {shown(text)}")
    return parts[0], parts[1], parts[2]


def check_out(out: Path | None, as_json: bool) -> Path | None:
    """``--out -`` is stdout; it cannot share stdout with ``--json``."""
    if out is not None and str(out) == "-" and as_json:
        raise InvalidInputError("`--out -` and `--json` both write to stdout: give --out a file")
    return out


def to_stdout(out: Path | None) -> bool:
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
        "--seed", parser=SEED, metavar="INTEGER", help="Seed for randomised algorithms (an integer >= 0)."
    ),
]


def check_finite(values: dict[str, float], delta: float) -> None:
    """Refuse results that overflowed: they say nothing about the instance."""
    bad = [k for k, v in values.items() if not math.isfinite(v)]
    if bad:
        raise InvalidInputError(
            f"the {bad[0]} overflows to {values[bad[0]]}: `--delta` = {delta:g} and the demand's entries "
            "must keep every time below 1.8e308 (use a smaller time unit)"
        )


def write_result(out: Path | None, text: str, write: Any, facts: dict[str, Any]) -> bool:
    """Write a result to ``--out`` (``-``: stdout, the summary then on stderr); True if on stdout."""
    if out is None:
        return False
    if to_stdout(out):
        typer.echo(text)
        return True
    facts["written_to"] = str(write(out))
    return False


def unit_meta(u: Units) -> dict[str, Any]:
    """What a schedule file records of its unit: ``meta.unit`` (and where it came from)."""
    out: dict[str, Any] = {}
    if u.unit is not None:
        out["unit"] = u.unit
    if u.source is not None:
        out["unit_source"] = u.source
    return out


def in_unit(it: Iteration, u: Units) -> Iteration:
    """An iteration in the time unit of ``u`` (bytes become seconds; gaps are times already)."""
    if u.factor == 1.0:
        return it
    from ocsched.iteration import Iteration

    return Iteration.from_matrices(
        [p.demand.scaled(u.factor) for p in it.phases],
        gaps=[p.gap_before for p in it.phases],
        names=[p.name for p in it.phases],
    )


def check_valid(report: ValidationReport) -> None:
    """Refuse to print or write a schedule that does not validate (a bug, never a silent result)."""
    if not report.ok:
        shown = "; ".join(str(v) for v in report.violations[:3])
        raise OcschedError(f"internal error: the schedule found is invalid ({shown}); please report it")


def deltas_text(fab: Fabric) -> str:
    """``0.04`` for identical delays, else the list; the model when it is not all-stop."""
    ds = sorted(set(fab.deltas))
    text = f"{ds[0]:g}" if len(ds) == 1 else ",".join(f"{d:g}" for d in fab.deltas)
    return text if not fab.reconfiguration.keeps_circuits else f"{text} ({fab.model})"


def gap_list(text: str | None) -> float | list[float] | None:
    """``--gaps``: one gap for every phase, or one per phase separated by commas."""
    if text is None:
        return None
    gaps = parse_float_list(text, "--gaps", low=0.0)
    return gaps[0] if len(gaps) == 1 else gaps


def check_same_unit(meta: Any, u: Units) -> None:
    """Refuse to check a schedule in seconds against a demand read as milliseconds."""
    recorded = meta.get("unit") if isinstance(meta, dict) else None
    if isinstance(recorded, str) and u.unit is not None and recorded != u.unit:
        raise InvalidInputError(
            f"the schedule is in {recorded} (its meta.unit) but the demand is read in {u.unit}: "
            f"give `--unit {recorded}` (or the bytes' --link-rate)"
        )
