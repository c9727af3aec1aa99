"""The ``import`` command: a multi-rank trace (Kineto, PyTorch ET, Chakra) as an iteration file.

``ocsched schedule TRACE`` reads traces through :func:`trace_iteration` here, with the same
options given as ``--trace-option NAME=VALUE``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ocsched._text import parse_int
from ocsched.cli._app import app, choice_type, cli_errors, int_option
from ocsched.errors import InvalidInputError
from ocsched.io.traces import ALGORITHMS, CODECS, CONCURRENT, GAPS, TRACE_FORMATS, TraceIteration
from ocsched.units import TIME_UNITS

if TYPE_CHECKING:
    TraceFormat = str
    Algorithm = str
    Concurrent = str
    Gaps = str
    TimeUnit = str
    Codec = str
else:  # typer shows and checks a Literal's values as choices
    TraceFormat = choice_type(("auto", *TRACE_FORMATS))
    Algorithm = choice_type(ALGORITHMS)
    Concurrent = choice_type(CONCURRENT)
    Gaps = choice_type(GAPS)
    TimeUnit = choice_type(tuple(TIME_UNITS))
    Codec = choice_type(CODECS)

_POSITIVE = int_option("--ranks-per-port", minimum=1)
_WORKERS = int_option("--workers", minimum=1, maximum=1024)

#: ``--trace-option`` names (``ocsched schedule TRACE``) -> read_trace keyword and parser.
TRACE_OPTIONS: dict[str, str] = {
    "format": "format",
    "unit": "time_unit",
    "collective-algorithm": "collective_algorithm",
    "concurrent": "concurrent",
    "gaps": "gaps",
    "ranks-per-port": "ranks_per_port",
    "port-map": "port_map",
    "comm-groups": "comm_groups",
    "skip": "skip",
    "workers": "workers",
    "codec": "codec",
}


def _skip_list(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out += [x.strip() for x in v.split(",") if x.strip()]
    return tuple(out)


def trace_options(pairs: list[str] | None) -> dict[str, Any]:
    """Parse ``--trace-option NAME=VALUE`` pairs into :func:`ocsched.io.read_trace` keywords."""
    kwargs: dict[str, Any] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        name = name.strip().lstrip("-")
        if not sep or name not in TRACE_OPTIONS:
            raise InvalidInputError(
                f"`--trace-option` must be NAME=VALUE with NAME one of {', '.join(TRACE_OPTIONS)}; "
                f"got {pair!r}"
            )
        key = TRACE_OPTIONS[name]
        value = value.strip()
        if key in ("ranks_per_port", "workers"):
            kwargs[key] = parse_int(value, f"--trace-option {name}", minimum=1)
        elif key == "skip":
            kwargs[key] = (*kwargs.get(key, ()), *_skip_list([value]))
        else:
            kwargs[key] = value
    return kwargs


def trace_iteration(path: Path, link_rate: str | None, **kwargs: Any) -> TraceIteration:
    """Read a trace for a command; ``--link-rate`` is required (bytes need a rate to become time)."""
    from ocsched import io

    if link_rate is None:
        raise InvalidInputError(
            "`--link-rate` is needed to turn the trace's bytes into time (e.g. --link-rate "
            f"400Gbps); trace: {path}"
        )
    return io.read_trace(path, link_rate=link_rate, **kwargs)


@app.command("import")
@cli_errors
def import_cmd(
    trace: Annotated[
        Path,
        typer.Argument(
            metavar="TRACE",
            help="A folder of per-rank files, a glob pattern (quoted), an archive, or one file.",
            show_default=False,
        ),
    ],
    link_rate: Annotated[
        str | None,
        typer.Option(
            "--link-rate",
            help="Line rate of one OCS link, e.g. 400Gbps or 50GB/s (required).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the iteration (ocsched.sequence JSON) here (- stdout)."),
    ] = None,
    fmt: Annotated[
        TraceFormat, typer.Option("--format", "-f", help="Trace format (auto: from the files).")
    ] = "auto",
    unit: Annotated[
        TimeUnit, typer.Option("--unit", help="Time unit of the demand and gaps (--delta is then in it too).")
    ] = "s",
    algorithm: Annotated[
        Algorithm,
        typer.Option(
            "--collective-algorithm",
            help="How all-reduce, all-gather, reduce-scatter, broadcast, reduce move data.",
        ),
    ] = "ring",
    concurrent: Annotated[
        Concurrent,
        typer.Option("--concurrent", help="Concurrent operations: merge into one phase, or separate."),
    ] = "merge",
    gaps: Annotated[
        Gaps, typer.Option("--gaps", help="Compute gaps from timestamps, COMP durations (Chakra), or none.")
    ] = "auto",
    ranks_per_port: Annotated[
        int | None,
        typer.Option(
            "--ranks-per-port",
            parser=_POSITIVE,
            metavar="INTEGER",
            help="Ranks per OCS port (rank // k).",
            show_default=False,
        ),
    ] = None,
    port_map: Annotated[
        Path | None,
        typer.Option("--port-map", help="JSON {rank: port} or CSV rank,port file.", show_default=False),
    ] = None,
    comm_groups: Annotated[
        Path | None,
        typer.Option(
            "--comm-groups",
            help="Process groups as JSON {name: [ranks]} (ASTRA-sim's format).",
            show_default=False,
        ),
    ] = None,
    skip: Annotated[
        list[str] | None,
        typer.Option(
            "--skip", help="Collective kinds to leave out (repeat, or comma-separated).", show_default=False
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            parser=_WORKERS,
            metavar="INTEGER",
            help="Processes parsing ranks in parallel.",
            show_default=False,
        ),
    ] = None,
    codec: Annotated[
        Codec, typer.Option("--codec", help="Chakra decoder: protobuf if installed, or python.")
    ] = "auto",
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
) -> None:
    """Turn a multi-rank trace into an iteration: one phase per collective, compute as gaps.

    Formats: PyTorch profiler (Kineto) JSON, PyTorch execution traces, Chakra ETs. Prints what
    was read; with --out writes the iteration, its provenance in "meta".
    """
    from ocsched import io

    stdout = out is not None and str(out) == "-"  # the iteration on stdout, the summary on stderr
    if out is not None and not stdout:
        io.check_writable(out, force=force, name="--out")
    it = trace_iteration(
        trace,
        link_rate,
        format=fmt,
        time_unit=unit,
        collective_algorithm=algorithm,
        concurrent=concurrent,
        gaps=gaps,
        ranks_per_port=ranks_per_port,
        port_map=port_map,
        comm_groups=comm_groups,
        skip=_skip_list(skip),
        workers=workers,
        codec=codec,
    )
    meta = it.meta["trace"]
    total = sum(op["bytes"] for ph in meta["phases"] for op in ph["ops"])
    local = sum(ph["local_bytes"] for ph in meta["phases"])
    rows = [
        ("format", meta["format"]),
        ("files", str(len(meta["files"]))),
        ("ports", f"{it.n} ({meta['ranks_to_ports']})"),
        ("operations", str(meta["operations"])),
        ("phases", f"{len(it)} ({meta['concurrent']})"),
        ("bytes", f"{total:.6g} ({local:.6g} inside ports, dropped)"),
        ("gaps", f"{it.total_gap:.6g} {unit} ({meta['gaps']})"),
        ("matched by", ", ".join(sorted(set(meta["matching"].values())))),
    ]
    if meta["skipped"]:
        rows.append(("skipped", ", ".join(f"{k} x{v}" for k, v in meta["skipped"].items())))
    if stdout:
        typer.echo(it.to_json())
    elif out is not None:
        path = io.write_iteration(it, out, force=force)
        rows.append(("written to", str(path)))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        typer.echo(f"{k:<{width}}  {v}", err=stdout)
