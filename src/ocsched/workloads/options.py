"""The options a workload generator takes, declared as data: name, type, default, unit, help.

Each registry entry (:class:`ocsched.workloads.Workload`,
:class:`ocsched.workloads.iteration.IterationWorkload`) lists its :class:`Option` values; the
command line (``ocsched generate NAME --option value``, ``ocsched workloads``), ``gap --option``
and sweep configurations read them from there, so a generator's options have one home. The
Python API takes the same keywords (``generate("moe", gpus=16)``); a generator's ``trace``
keyword (a parsed trace object) is offered as the text option ``path`` (a file to read).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ocsched._checks import check_bool
from ocsched._text import parse_float, parse_int, shown
from ocsched.errors import InvalidInputError

__all__ = ["Option", "flag_pairs", "parse_options", "with_defaults"]

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
_KINDS = (bool, int, float, str)


@dataclass(frozen=True)
class Option:
    """One option of a workload generator.

    Attributes
    ----------
    name : str
        The keyword (``top_k``); on the command line ``--top-k``.
    kind : type
        What its text converts to: ``bool``, ``int``, ``float`` or ``str``.
    default : object
        The generator's default (``None``: unset, the generator derives it).
    help : str
        One sentence for listings.
    unit : str
        The unit of a number (``"ms"``, ``"Gb/s"``), ``""`` for counts and fractions.
    choices : tuple of str
        The values a text option accepts (empty: any).

    Examples
    --------
    >>> o = Option("top_k", int, None, "Experts per token k.")
    >>> o.flag, o.parse("2"), o.parse("4.0")
    ('--top-k', 2, 4)
    """

    name: str
    kind: type
    default: Any
    help: str
    unit: str = ""
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise TypeError(f"option {self.name!r}: kind must be one of bool, int, float, str")

    @property
    def flag(self) -> str:
        """The command-line spelling, ``--name-with-dashes``."""
        return "--" + self.name.replace("_", "-")

    def parse(self, text: str) -> Any:
        """Convert ``text`` to the option's type (bools from true/false/yes/no/on/off/1/0).

        Raises
        ------
        InvalidInputError
            When ``text`` is not of the option's type.

        Examples
        --------
        >>> Option("combine", bool, False, "").parse("yes")
        True
        >>> Option("gini", float, 0.25, "").parse("lots")
        Traceback (most recent call last):
        ...
        ocsched.errors.InvalidInputError: `gini` must be a number; got 'lots'
        """
        key = self.name
        if self.kind is bool:
            low = text.strip(" \t").lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            return check_bool(text, key)  # raises: "`key` must be true or false; got 'maybe'"
        if self.kind is int:
            try:
                return parse_int(text, key)
            except InvalidInputError:
                pass
            try:  # "1e3", "4.0": an integral number written as one
                number = parse_float(text, key)
            except InvalidInputError:
                number = math.nan
            if number.is_integer():
                return int(number)
            raise InvalidInputError(f"`{key}` must be an integer; got {shown(text)}")
        if self.kind is float:
            try:
                return parse_float(text, key)
            except InvalidInputError:  # "nan" and "inf" included: the generators take finite numbers
                raise InvalidInputError(f"`{key}` must be a number; got {shown(text)}") from None
        return text  # a text option's choices are the generator's to check (one check, one message)

    def facts(self) -> dict[str, Any]:
        """The option as JSON-ready data (type, default, unit, choices, help).

        >>> Option("phase_ms", float, 4.0, "Phase length.", unit="ms").facts()["unit"]
        'ms'
        """
        return {
            "type": self.kind.__name__,
            "default": self.default,
            "unit": self.unit,
            "choices": list(self.choices),
            "help": self.help,
        }


def with_defaults(options: Sequence[Option], **defaults: Any) -> tuple[Option, ...]:
    """``options`` with some defaults changed (an option shared by two generators, its default not).

    >>> with_defaults((Option("tp", int, 2, "TP degree."),), tp=8)[0].default
    8
    """
    names = {o.name for o in options}
    unknown = sorted(set(defaults) - names)
    if unknown:
        raise KeyError(unknown[0])
    return tuple(
        dataclasses.replace(o, default=defaults[o.name]) if o.name in defaults else o for o in options
    )


def _valid(options: Sequence[Option]) -> str:
    return ", ".join(o.name for o in options) or "none"


def parse_options(
    workload: str, options: Sequence[Option], pairs: Iterable[str | tuple[str, str]]
) -> dict[str, Any]:
    """Type the text options ``pairs`` of generator ``workload`` by its declared ``options``.

    Parameters
    ----------
    workload : str
        The generator's name (for messages).
    options : sequence of Option
        Its declared options.
    pairs : iterable of str or (str, str)
        ``"KEY=VALUE"`` strings (``gap --option``) or ``(key, value)`` pairs (``generate``).
        Dashes and underscores in keys are interchangeable.

    Returns
    -------
    dict
        ``{option: typed value}``.

    Raises
    ------
    InvalidInputError
        For an unknown option (listing the valid ones), a repeated option, a ``KEY=VALUE``
        without ``=``, or a value of the wrong type (``disjoint=maybe``).

    Examples
    --------
    >>> opts = (Option("gpus", int, 8, ""), Option("combine", bool, False, ""))
    >>> parse_options("moe", opts, ["gpus=16", ("combine", "true")])
    {'gpus': 16, 'combine': True}
    """
    by_name = {o.name: o for o in options}
    out: dict[str, Any] = {}
    for item in pairs:
        if isinstance(item, str):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise InvalidInputError(f"a workload option must look like KEY=VALUE; got {item!r}")
        else:
            key, value = item
        key = key.strip().replace("-", "_")
        if key not in by_name:
            raise InvalidInputError(
                f"workload {workload!r} has no option {key!r}; its options are {_valid(options)}"
            )
        if key in out:
            raise InvalidInputError(f"workload option {key!r} given twice")
        out[key] = by_name[key].parse(value)
    return out


def flag_pairs(workload: str, options: Sequence[Option], args: Sequence[str]) -> list[tuple[str, str]]:
    """Split ``--option value`` / ``--option=value`` / bare ``--flag`` words into (key, value) pairs.

    A bare flag is ``true`` for a bool option (the next word is another flag, or none).

    Raises
    ------
    InvalidInputError
        For a word that is not a flag, or a non-bool flag without a value.

    Examples
    --------
    >>> opts = (Option("gpus", int, 8, ""), Option("combine", bool, False, ""))
    >>> flag_pairs("moe", opts, ["--gpus", "16", "--combine", "--top-k=2"])
    [('gpus', '16'), ('combine', 'true'), ('top-k', '2')]
    """
    kinds = {o.name: o.kind for o in options}
    valid = ", ".join(o.flag for o in options) or "none"
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(args):
        token = args[k]
        if not token.startswith("--") or len(token) == 2:
            raise InvalidInputError(f"unexpected argument {token!r}; options of {workload!r} are: {valid}")
        key, eq, value = token[2:].partition("=")
        if not eq:
            nxt = args[k + 1] if k + 1 < len(args) else None
            if kinds.get(key.replace("-", "_")) is bool and (nxt is None or nxt.startswith("--")):
                value = "true"
            elif nxt is None:
                raise InvalidInputError(f"option --{key} needs a value")
            else:
                value = nxt
                k += 1
        out.append((key, value))
        k += 1
    return out
