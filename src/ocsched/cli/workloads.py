"""Workload commands: generate, workloads."""

from __future__ import annotations

import inspect
import re
import types
import typing
from pathlib import Path
from typing import Annotated, Any

import typer

from ocsched.cli._app import app, cli_errors
from ocsched.errors import InvalidInputError

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def _option_types(func: Any) -> dict[str, type]:
    """Map each option of a generator to the type its CLI value converts to (int/float/bool/str)."""
    hints = typing.get_type_hints(func)
    out: dict[str, type] = {}
    for name, param in inspect.signature(func).parameters.items():
        if name == "rng":
            continue
        if param.default is not None and type(param.default) in (bool, int, float, str):
            out[name] = type(param.default)
            continue
        hint = hints.get(name, str)
        args = (
            typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        )
        out[name] = next((t for t in (bool, int, float, str) if t in args), str)
    return out


def _convert(option: str, text: str, kind: type) -> Any:
    flag = f"--{option.replace('_', '-')}"
    if kind is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise InvalidInputError(f"`{flag}` expects true or false; got {text!r}")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise InvalidInputError(f"`{flag}` expects an integer; got {text!r}") from None
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise InvalidInputError(f"`{flag}` expects a number; got {text!r}") from None
    return text


def parse_options(name: str, args: list[str], types_: dict[str, type]) -> dict[str, Any]:
    """Parse ``--option value`` pairs (or ``--option=value``; a bare ``--flag`` for bools).

    Dashes and underscores in option names are interchangeable. Raises InvalidInputError on an
    unknown option (listing the valid ones), a missing or ill-typed value, or a repeated option.
    """
    valid = ", ".join(f"--{k.replace('_', '-')}" for k in types_) or "none"
    out: dict[str, Any] = {}
    k = 0
    while k < len(args):
        token = args[k]
        if not token.startswith("--") or len(token) == 2:
            raise InvalidInputError(f"unexpected argument {token!r}; options of {name!r} are: {valid}")
        key, eq, value = token[2:].partition("=")
        key = key.replace("-", "_")
        if key not in types_:
            raise InvalidInputError(
                f"workload {name!r} has no option --{key.replace('_', '-')}; valid: {valid}"
            )
        if key in out:
            raise InvalidInputError(f"option --{key.replace('_', '-')} given twice")
        if not eq:
            nxt = args[k + 1] if k + 1 < len(args) else None
            if types_[key] is bool and (nxt is None or nxt.startswith("--")):
                value = "true"
            elif nxt is None:
                raise InvalidInputError(f"option --{key.replace('_', '-')} needs a value")
            else:
                value = nxt
                k += 1
        out[key] = _convert(key, value, types_[key])
        k += 1
    return out


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _param_docs(func: Any) -> dict[str, str]:
    """First sentence of each parameter's description in a numpydoc docstring."""
    doc = inspect.getdoc(func) or ""
    m = re.search(r"^Parameters\n-+\n(.*?)(?:^\S[^\n]*\n-+\n|\Z)", doc, flags=re.S | re.M)
    if not m:
        return {}
    out: dict[str, str] = {}
    names: list[str] = []
    for line in m.group(1).splitlines():
        if line and not line.startswith(" "):
            names = [n.strip() for n in line.split(":")[0].split(",")]
            for n in names:
                out[n] = ""
        elif line.strip() and names:
            for n in names:
                out[n] = f"{out[n]} {line.strip()}".strip()
    plain = {k: re.sub(r":\w+:`~?([^`]*)`", r"\1", v).replace("``", "") for k, v in out.items()}
    return {k: re.split(r"(?<=\.)\s", v, maxsplit=1)[0] for k, v in plain.items()}


@app.command(
    "generate",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@cli_errors
def generate_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Workload name (see `ocsched workloads`).", show_default=False)],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Output file: .npy, .npz (sparse), .csv or .json.")
    ],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the generator's randomness.")] = 0,
    link_gbps: Annotated[
        float | None,
        typer.Option("--link-gbps", help="Convert bytes to seconds on one link of this rate (Gb/s)."),
    ] = None,
    normalize: Annotated[bool, typer.Option("--normalize", help="Divide by the largest line sum.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
) -> None:
    """Generate a workload matrix and write it; generator options go after NAME as --option value."""
    import numpy as np

    from ocsched import io
    from ocsched.workloads import WORKLOADS, generate, workloads

    names = workloads()  # loads every family
    if name not in WORKLOADS:
        raise InvalidInputError(f"unknown workload {name!r}; choose one of {', '.join(names)}")
    w = WORKLOADS[name]
    options = parse_options(name, list(ctx.args), _option_types(w.func))
    io.check_writable(out, force=force, name="--out")
    matrix = generate(name, seed=seed, link_gbps=link_gbps, normalized=normalize, **options)
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
        ("written to", str(out)),
    ]
    if np.trace(matrix) > 0:
        rows.insert(
            4, ("diagonal", f"{float(np.trace(matrix)):.6g} (local traffic, dropped when scheduling)")
        )
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        typer.echo(f"{k:<{width}}  {v}")


@app.command("workloads")
@cli_errors
def workloads_cmd() -> None:
    """List the workload generators with their options and defaults."""
    from ocsched.workloads import WORKLOADS, workloads

    for name, desc in workloads().items():
        w = WORKLOADS[name]
        typer.echo(f"{name} [{w.unit}]  {desc}")
        kinds = _option_types(w.func)
        docs = _param_docs(w.func)
        for opt, default in w.options().items():
            shown = "unset" if default is None else _show(default)
            flag = f"--{opt.replace('_', '-')} {kinds[opt].__name__.upper()}"
            typer.echo(f"    {flag:<28} (default: {shown})  {docs.get(opt, '')}".rstrip())
    typer.echo(
        "\nUsage: ocsched generate NAME [--option value ...] --seed K --out FILE"
        " [--link-gbps R] [--normalize] [--force]"
    )
