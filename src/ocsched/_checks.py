"""Every argument checker, once: each returns the clean value or raises InvalidInputError.

Messages name the argument, what was expected and what was found, so a user sees one line that
says what to fix. Checkers accept numpy scalars and integral floats from JSON/TOML files where
that is unambiguous (``4.0`` switches means 4) and reject ``bool`` wherever a number is expected.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable

from ocsched.errors import InvalidInputError

__all__ = [
    "check_bool",
    "check_choice",
    "check_delta",
    "check_int",
    "check_number",
    "check_switches",
    "check_time_limit",
]


def check_int(value: object, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise naming ``name`` unless it is an integer in range.

    Integral floats (``4.0``, as JSON and TOML files write them) count as integers.

    >>> check_int(4.0, "copies")
    4
    """
    number: int | None = None
    if type(value) is int:  # the common case, without the abstract-class checks below
        number = value
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = operator.index(value)
    elif (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
        and float(value).is_integer()
    ):
        number = int(float(value))
    if number is None or number < minimum or (maximum is not None and number > maximum):
        where = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise InvalidInputError(f"`{name}` must be an integer {where}; got {value!r}")
    return number


def check_switches(switches: object, *, name: str = "switches") -> int:
    """Return ``switches`` as an int, or raise if it is not an integer >= 1.

    >>> check_switches(4)
    4
    """
    return check_int(switches, name, minimum=1)


def check_number(
    value: object, name: str, *, low: float = 0.0, high: float = math.inf, closed: bool = True
) -> float:
    """Return ``value`` as a float, or raise naming ``name`` unless it is finite and in range.

    The range is ``[low, high]``, or ``(low, high)`` when ``closed`` is False.

    >>> check_number(0.5, "gini", high=1.0)
    0.5
    """
    if type(value) is float:  # the common case, without the abstract-class checks below
        ok = math.isfinite(value)
    else:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value))
    if ok:
        v = float(value)  # type: ignore[arg-type]
        ok = low <= v <= high if closed else low < v < high
    if not ok:
        if math.isfinite(low) and math.isfinite(high):
            lo, hi = ("[", "]") if closed else ("(", ")")
            where = f" in {lo}{low:g}, {high:g}{hi}"
        elif math.isfinite(low):
            where = f" {'>=' if closed else '>'} {low:g}"
        elif math.isfinite(high):
            where = f" {'<=' if closed else '<'} {high:g}"
        else:
            where = ""
        raise InvalidInputError(f"`{name}` must be a finite number{where}; got {value!r}")
    return float(value)  # type: ignore[arg-type]


def check_delta(delta: object, *, name: str = "delta") -> float:
    """Return ``delta`` as a float, or raise if it is not a finite number >= 0.

    >>> check_delta(0.04)
    0.04
    """
    if type(delta) is not float and (isinstance(delta, bool) or not isinstance(delta, numbers.Real)):
        raise InvalidInputError(f"`{name}` must be a finite number >= 0; got {delta!r}")
    value = float(delta)
    if not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"`{name}` must be a finite number >= 0; got {delta!r}")
    return value


def check_choice(value: object, name: str, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise listing them.

    >>> check_choice("index", "order", ("index", "random"))
    'index'
    """
    valid = list(choices)
    if not isinstance(value, str) or value not in valid:
        raise InvalidInputError(f"`{name}` must be one of {', '.join(valid)}; got {value!r}")
    return value


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` if it is a bool (numpy's included), else raise.

    >>> check_bool(True, "disjoint")
    True
    """
    if type(value).__name__ not in ("bool", "bool_"):  # bool or numpy.bool_, never 0/1 or "yes"
        raise InvalidInputError(f"`{name}` must be true or false; got {value!r}")
    return bool(value)


def check_time_limit(time_limit: object, *, name: str = "time_limit") -> float | None:
    """Return a solver time limit in seconds (> 0), or None for no limit.

    >>> check_time_limit(None) is None
    True
    """
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) or not float(time_limit) > 0:
        raise InvalidInputError(f"`{name}` must be a number > 0 or None; got {time_limit!r}")
    return float(time_limit)
