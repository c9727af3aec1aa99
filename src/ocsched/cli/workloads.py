"""Workload commands: generate, workloads."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ocsched.cli._app import (
    app,
    choice_type,
    cli_errors,
    fail,
    float_option,
    int_option,
)
from ocsched.cli._output import JsonOpt, emit
from ocsched.errors import InvalidInputError
from ocsched.workloads import ITERATION_WORKLOADS, WORKLOADS, Option, workload_options
from ocsched.workloads.options import flag_pairs, parse_options

if TYPE_CHECKING:
    WorkloadName = str
else:  # typer shows and checks a Literal's values as choices
    WorkloadName = choice_type(sorted([*WORKLOADS, *ITERATION_WORKLOADS]))

GENERATE_EXAMPLES = """\
ocsched generate gpt32 --normalize -o d.npy
ocsched generate moe --gpus 16 --seed 3 -o moe.csv             # bytes
ocsched generate moe --gpus 16 --link-rate 400Gbps -o moe.npy   # seconds
ocsched generate standard --n 32 -o - | ocsched schedule - -s 2 -d 0.01
"""


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@app.command(
    "generate",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    epilog=GENERATE_EXAMPLES,
)
@cli_errors
def generate_cmd(
    ctx: typer.Context,
    name: Annotated[
        WorkloadName,
        typer.Argument(metavar="NAME", help="Workload name (see `ocsched workloads`).", show_default=False),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Output file: .npy, .npz (sparse), .csv or .json; - writes CSV (JSON) to stdout.",
        ),
    ],
    seed: Annotated[
        int,
        typer.Option(
            "--seed",
            parser=int_option("--seed", minimum=0),
            metavar="INTEGER",
            help="Seed of the generator's randomness.",
        ),
    ] = 0,
    link_gbps: Annotated[
        float | None,
        typer.Option(
            "--link-gbps",
            parser=float_option("--link-gbps", low=0.0, closed=False),
            metavar="GBPS",
            help="Convert bytes to seconds on one link of this rate (Gb/s, > 0).",
        ),
    ] = None,
    link_rate: Annotated[
        str | None,
        typer.Option(
            "--link-rate",
            metavar="RATE",
            help="Convert bytes to seconds on one link of this rate (400Gbps, 50GB/s).",
            show_default=False,
        ),
    ] = None,
    normalize: Annotated[bool, typer.Option("--normalize", help="Divide by the largest line sum.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
) -> None:
    """Generate a workload matrix and write it; generator options go after NAME as --option value."""
    import numpy as np

    from ocsched import io

    declared = workload_options(name)
    options = parse_options(name, declared, flag_pairs(name, declared, list(ctx.args)))
    if link_rate is not None:
        from ocsched.units import bytes_per_second

        if link_gbps is not None:
            raise InvalidInputError("give one of `--link-rate` and `--link-gbps`")
        link_gbps = bytes_per_second(link_rate, name="--link-rate") * 8 / 1e9
    stdout = str(out) == "-"
    if not stdout:
        io.check_writable(out, force=force, name="--out")
    if name in ITERATION_WORKLOADS:
        if normalize:
            raise fail(f"`--normalize` applies to single matrices; {name!r} is an iteration (seconds)")
        if link_gbps is not None:
            options["link_gbps"] = link_gbps
        _generate_iteration(name, options, out=out, seed=seed, force=force)
        return
    w = WORKLOADS[name]
    matrix = io.generate(name, rng=seed, link_gbps=link_gbps, normalize=normalize, **options)
    if not np.isfinite(matrix).all():
        i, j = divmod(int(np.argmax(~np.isfinite(matrix).ravel())), matrix.shape[1])
        raise fail(
            f"workload {name!r} with these options gives a non-finite entry [{i}, {j}] = {matrix[i, j]}; "
            "nothing written"
        )
    if stdout:
        typer.echo(io.demand_csv(matrix), nl=False)
    else:
        io.write_demand(matrix, out, force=force)
    if normalize:
        unit = "normalised (largest line sum 1)"
    elif w.unit == "bytes":
        unit = f"seconds at {link_gbps:g} Gb/s" if link_gbps is not None else "bytes"
    else:
        unit = "time (one link's line rate)"
        if link_gbps is not None:
            unit += "; --link-gbps ignored, already time"
    off = matrix.copy()
    np.fill_diagonal(off, 0.0)
    line = max(float(off.sum(axis=0).max(initial=0.0)), float(off.sum(axis=1).max(initial=0.0)))
    rows = [
        ("workload", name + "".join(f" --{k.replace('_', '-')} {_show(v)}" for k, v in options.items())),
        ("seed", str(seed) if "rng" in inspect.signature(w.func).parameters else f"{seed} (deterministic)"),
        ("shape", f"{matrix.shape[0]} x {matrix.shape[1]}"),
        ("nonzeros", f"{int((off > 0).sum())} (at most {int((off > 0).sum(axis=1).max(initial=0))} per row)"),
        ("max line sum", f"{line:.6g}"),
        ("unit", unit),
        ("written to", "stdout" if stdout else str(out)),
    ]
    if np.trace(matrix) > 0:
        rows.insert(
            4, ("diagonal", f"{float(np.trace(matrix)):.6g} (local traffic, dropped when scheduling)")
        )
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        typer.echo(f"{k:<{width}}  {v}", err=stdout)


def _generate_iteration(name: str, options: dict[str, Any], *, out: Path, seed: int, force: bool) -> None:
    """Write an iteration workload as an ``ocsched.sequence`` JSON file and summarise it."""
    from ocsched import io
    from ocsched.workloads import generate_iteration

    stdout = str(out) == "-"
    if out.suffix.lower() != ".json" and not stdout:
        raise fail(f"iteration workload {name!r} is written as JSON (ocsched.sequence); got --out {out}")
    if "path" in options:  # a generator's `trace` option is given as a file, read here
        options["trace"] = io.read_coflow_trace(options.pop("path"))
    it = generate_iteration(name, rng=seed, **options)
    if stdout:
        typer.echo(it.to_json())
    else:
        io.write_iteration(it, out, force=force)
    rows = [
        ("workload", name + "".join(f" --{k.replace('_', '-')} {_show(v)}" for k, v in options.items())),
        ("seed", str(seed)),
        ("phases", str(len(it.phases))),
        ("ports", str(it.n)),
        ("compute gaps", f"{sum(p.gap_before for p in it.phases):.6g} (seconds)"),
        ("written to", "stdout" if stdout else str(out)),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        typer.echo(f"{k:<{width}}  {v}", err=stdout)


def _echo_options(options: tuple[Option, ...]) -> None:
    """One line per option: flag, type, default, unit and help."""
    for o in options:
        shown = "unset" if o.default is None else _show(o.default)
        flag = f"{o.flag} {o.kind.__name__.upper()}"
        unit = f"{o.unit}, " if o.unit else ""
        choices = f" One of: {', '.join(o.choices)}." if o.choices else ""
        typer.echo(f"    {flag:<28} ({unit}default: {shown})  {o.help}{choices}".rstrip())


@app.command("workloads", epilog="ocsched workloads\nocsched workloads --json | jq '.workloads | keys'\n")
@cli_errors
def workloads_cmd(as_json: JsonOpt = False) -> None:
    """List the workload generators with their options and defaults."""
    from ocsched.workloads import iteration_workloads, workloads

    if as_json:
        facts: dict[str, Any] = {}
        for name, desc in workloads().items():
            w = WORKLOADS[name]
            facts[name] = {
                "kind": "matrix",
                "unit": w.unit,
                "description": desc,
                "options": {o.name: o.facts() for o in w.options},
            }
        for name, desc in iteration_workloads().items():
            iw = ITERATION_WORKLOADS[name]
            facts[name] = {
                "kind": "iteration",
                "unit": "s",
                "description": desc,
                "options": {o.name: o.facts() for o in iw.options},
            }
        emit({"workloads": facts}, as_json=True)
        return

    for name, desc in workloads().items():
        w = WORKLOADS[name]
        typer.echo(f"{name} [{w.unit}]  {desc}")
        _echo_options(w.options)

    for name, desc in iteration_workloads().items():
        typer.echo(f"{name} [iteration: ocsched.sequence JSON]  {desc}")
        _echo_options(ITERATION_WORKLOADS[name].options)
    typer.echo(
        "\nUsage: ocsched generate NAME [--option value ...] --seed K --out FILE"
        " [--link-rate R] [--normalize] [--force]"
    )
