"""What every command prints: a summary as a table or as one JSON object, and the log level.

A command gathers its facts in one ordered ``dict`` with snake_case keys; :func:`emit` prints it
as the aligned human table (``lower_bound`` shown as ``lower bound``, ``time_s`` as ``time``
with its unit) or, with ``--json``, as one JSON object on stdout: the same facts either way.

Every command also takes ``--quiet`` (warnings off, progress lines off) and ``--verbose``
(info messages on): :func:`with_log_options` adds both to a command's signature.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import math
import sys
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import typer

__all__ = ["JsonOpt", "emit", "is_quiet", "render", "set_log_level", "with_log_options"]

#: The library's loggers (``ocsched.kernels`` says when kernels compile): all follow the level.
LOGGERS = ("ocsched", "ocsched.kernels")

_state = {"quiet": False}

JsonOpt = Annotated[
    bool,
    typer.Option("--json", help="Print one JSON object on stdout (the same facts as the table)."),
]


def set_log_level(*, quiet: bool = False, verbose: bool = False) -> None:
    """Log warnings (default), errors only (``quiet``) or info messages too (``verbose``)."""
    level = logging.ERROR if quiet else logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s", stream=sys.stderr)
    logging.getLogger().setLevel(level)
    for name in LOGGERS:
        logging.getLogger(name).setLevel(level)
    _state["quiet"] = quiet


def is_quiet() -> bool:
    """True under ``--quiet``: progress lines and notes on stderr are left out."""
    return _state["quiet"]


_QUIET = Annotated[
    bool, typer.Option("--quiet", "-q", help="Only errors on stderr (no warnings, no progress).")
]
_VERBOSE = Annotated[bool, typer.Option("--verbose", "-v", help="Also log what the library does (info).")]


def with_log_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--quiet``/``--verbose`` to command ``func`` and set the log level before it runs."""
    sig = inspect.signature(func, eval_str=True)
    names = set(sig.parameters)
    extra = [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=False, annotation=a)
        for n, a in (("quiet", _QUIET), ("verbose", _VERBOSE))
        if n not in names
    ]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        quiet = bool(kwargs.pop("quiet", False)) if "quiet" not in names else bool(kwargs.get("quiet"))
        verbose = (
            bool(kwargs.pop("verbose", False)) if "verbose" not in names else bool(kwargs.get("verbose"))
        )
        if quiet and verbose:
            from ocsched.errors import InvalidInputError

            raise InvalidInputError("give at most one of `--quiet` and `--verbose`")
        set_log_level(quiet=quiet, verbose=verbose)
        return func(*args, **kwargs)

    params = list(sig.parameters.values())
    wrapper.__signature__ = sig.replace(parameters=[*params, *extra])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {
        **getattr(func, "__annotations__", {}),
        **{p.name: p.annotation for p in extra},
    }
    return wrapper


def _label(key: str) -> str:
    return key.removesuffix("_s").replace("_", " ")


def _text(key: str, value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        text = f"{value:.3f}" if key.endswith("_s") else f"{value:.4f}" if key == "ratio" else f"{value:.6g}"
        return f"{text} s" if key.endswith("_s") else text
    if isinstance(value, list | tuple):
        return ", ".join(_text("", v) for v in value) or "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{_label(k)} {_text(k, v)}" for k, v in value.items()) or "none"
    return str(value)


def render(facts: Mapping[str, Any]) -> str:
    """The human table of ``facts``: one aligned ``label  value`` line each.

    >>> print(render({"lower_bound": 2.5, "ratio": 1.1, "time_s": 0.01234}))
    lower bound  2.5
    ratio        1.1000
    time         0.012 s
    """
    rows = [(_label(k), _text(k, v)) for k, v in facts.items()]
    width = max((len(k) for k, _ in rows), default=0)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _plain(value: Any) -> Any:
    """JSON-ready: tuples as lists, non-finite floats as None (JSON has no inf/nan)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def emit(facts: Mapping[str, Any], *, as_json: bool = False, err: bool = False) -> None:
    """Print ``facts`` as the table, or as one JSON object (``as_json``); on stderr if ``err``."""
    if as_json:
        typer.echo(json.dumps(_plain(facts), allow_nan=False))
    else:
        typer.echo(render(facts), err=err)
