"""The typer app shared by the command modules, and their small helpers.

Bad input of any kind (a library :class:`~ocsched.errors.InvalidInputError`, or a click usage
error such as a missing option or an ill-typed value) ends the command with one line on stderr,
``error: ...``, and exit code 2: never a traceback, never a multi-line box.

Every number on the command line is read by one ASCII-only grammar (:mod:`ocsched._text`):
``int_option``/``float_option`` are the ``parser=`` of every numeric option, so ``"²"``,
``"４"``, ``"1_0"``, ``"nan"``, ``"inf"`` and out-of-range values are refused the same way
everywhere, naming the option and the value.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import typer
from typer.core import TyperGroup

from ocsched._text import parse_float, parse_int
from ocsched._version import __version__
from ocsched.cli._help import tidy
from ocsched.cli._output import with_log_options
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.io._files import MAX_SWITCHES, os_reason

__all__ = [
    "MAX_SWITCHES",
    "app",
    "choice_type",
    "cli_errors",
    "fail",
    "float_option",
    "int_option",
    "parse_delta",
    "parse_switches",
]

F = TypeVar("F", bound=Callable[..., Any])


def choice_type(values: Iterable[str]) -> Any:
    """A type annotation that makes typer accept exactly ``values`` (shown in ``-h``)."""
    return typing.Literal[tuple(values)]


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _usage_message(exc: typer.TyperException) -> str:
    """Say which option was wrong, what it should be and what was given (typer's own text else)."""
    param = getattr(exc, "param", None)
    own = str(getattr(exc, "message", ""))
    if own.startswith("`"):  # already says which option and what was given (ocsched's parsers)
        return own
    cause = exc.__cause__ or exc.__context__
    errors = getattr(cause, "errors", None)
    if param is None or not callable(errors):
        return exc.format_message()
    try:
        first = errors()[0]
        msg, given = str(first["msg"]), first["input"]
    except (TypeError, LookupError, ValueError):
        return exc.format_message()
    opts = [o for o in getattr(param, "opts", []) if o.startswith("--")]
    flag = opts[0] if opts else str(getattr(param, "name", "value")).upper()
    if msg.startswith("Input should be "):
        return f"`{flag}` must be {msg.removeprefix('Input should be ')}; got {given!r}"
    return f"`{flag}`: {msg.removeprefix('Value error, ')}"


class OneLineErrors(TyperGroup):
    """The ``ocsched`` group: usage errors become one ``error:`` line on stderr and exit code 2.

    Its commands are handed out tidied (:func:`ocsched.cli._help.tidy`: help panels, EXAMPLES,
    plain metavars); a mistyped command gets typer's "Did you mean ...?".
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        tidy(self, "ocsched")
        for name, command in self.commands.items():
            tidy(command, name)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return tidy(super().get_command(ctx, cmd_name), cmd_name)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as exc:  # typer's (vendored click) usage and parameter errors
            if type(exc).__name__ == "NoArgsIsHelpError":  # `ocsched` alone: the help, as usual
                typer.echo(exc.format_message())
                sys.exit(2)
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} -h`)" if ctx is not None else ""
            typer.echo(f"error: {_one_line(_usage_message(exc))}{hint}", err=True)
            sys.exit(2)
        except typer.Abort:
            typer.echo("error: aborted", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name="ocsched",
    cls=OneLineErrors,
    help="Schedule AI-training traffic over parallel optical circuit switches.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ocsched {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: typing.Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Schedule AI-training traffic over parallel optical circuit switches."""


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` to stderr and return the Exit to raise."""
    typer.echo(f"error: {_one_line(message)}", err=True)
    return typer.Exit(code)


def cli_errors(func: F) -> F:
    """Turn library errors into one line on stderr and exit code 2 (no traceback).

    Library errors, and the system's own refusals (:class:`OSError`: a full disk, a permission),
    which a command cannot always foresee. The command also gets ``--quiet``/``--verbose``
    (:func:`ocsched.cli._output.with_log_options`).
    """
    func = with_log_options(func)  # type: ignore[assignment]  # the same command, two options more

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (InvalidInputError, OcschedError) as exc:
            raise fail(str(exc)) from None
        except RecursionError:  # a last guard: readers refuse deep nesting before it comes to this
            raise fail("input nested too deeply to process") from None
        except BrokenPipeError:  # stdout closed early (`ocsched export s.json | head`): stop quietly
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(1) from None
        except OSError as exc:  # the system refused (a full disk, permissions): its reason, one line
            where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
            raise fail(f"{os_reason(exc)}{where}") from None
        except MemoryError:
            raise fail("out of memory: the input is too large for this machine") from None
        except KeyboardInterrupt:
            raise fail("interrupted", 130) from None

    return wrapper  # type: ignore[return-value]


def int_option(flag: str, *, minimum: int | None = None, maximum: int | None = None) -> Callable[[Any], int]:
    """The ``parser=`` of an integer option: ASCII digits, in ``[minimum, maximum]``.

    >>> int_option("--seed", minimum=0)("7")
    7
    """

    def parse(value: Any) -> int:
        try:
            return parse_int(value, flag, minimum=minimum, maximum=maximum)
        except InvalidInputError as exc:
            raise typer.BadParameter(str(exc)) from None

    return parse


def float_option(
    flag: str, *, low: float | None = None, high: float | None = None, closed: bool = True
) -> Callable[[Any], float]:
    """The ``parser=`` of a number option: ASCII, finite, in ``[low, high]`` (open if not ``closed``).

    >>> float_option("--wait", low=0.0, closed=False)("2.5")
    2.5
    """

    def parse(value: Any) -> float:
        try:
            return parse_float(value, flag, low=low, high=high, closed=closed)
        except InvalidInputError as exc:
            raise typer.BadParameter(str(exc)) from None

    return parse


def parse_switches(value: str) -> int:
    """Parse one ``--switches`` value from text: an integer in 1..MAX_SWITCHES."""
    return parse_int(value, "--switches", minimum=1, maximum=MAX_SWITCHES)


def parse_delta(value: str) -> float:
    """Parse one ``--delta`` value from text: a finite number >= 0."""
    return parse_float(value, "--delta", low=0.0)
