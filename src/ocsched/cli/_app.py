"""The typer app shared by the command modules, and their small helpers."""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from ocsched._checks import check_delta, check_switches
from ocsched.errors import InvalidInputError, OcschedError

app = typer.Typer(
    name="ocsched",
    help="Schedule AI-training traffic over parallel optical circuit switches.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` to stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def cli_errors(func: F) -> F:
    """Turn library errors into one line on stderr and exit code 2 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s", stream=sys.stderr)
        try:
            return func(*args, **kwargs)
        except (InvalidInputError, OcschedError) as exc:
            raise fail(str(exc)) from None
        except KeyboardInterrupt:
            raise fail("interrupted", 130) from None

    return wrapper  # type: ignore[return-value]


def parse_switches(value: str) -> int:
    """Parse ``--switches``: an integer >= 1."""
    try:
        number: object = int(value)
    except ValueError:
        number = value
    return check_switches(number, name="--switches")


def parse_delta(value: str) -> float:
    """Parse ``--delta``: a finite number >= 0."""
    try:
        number: object = float(value)
    except ValueError:
        number = value
    return check_delta(number, name="--delta")
