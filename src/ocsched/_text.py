"""Numbers written as text (command-line values, comma lists): one ASCII-only grammar.

Python's own parsers are too lenient for user input: ``str.isdigit`` accepts ``"²"`` (which
``int`` then refuses), ``int`` and ``float`` accept any Unicode digit (``"４"``, ``"٣"``),
underscores (``"1_0"``), and ``float`` takes ``"nan"``, ``"inf"`` and ``"1e999"`` (infinite).
Here an integer is ``[+-]?[0-9]+`` and a number ``[+-]?(digits[.digits] | .digits)([eE][+-]?digits)?``,
ASCII digits only, with blanks (space, tab) allowed around; a number must be finite. Everything
else is refused with one line naming the argument and the value.
"""

from __future__ import annotations

import math
import re

from ocsched.errors import InvalidInputError

__all__ = ["parse_float", "parse_float_list", "parse_int", "shown"]

_INT = re.compile(r"[ \t]*([+-]?[0-9]+)[ \t]*", re.ASCII)
_FLOAT = re.compile(r"[ \t]*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[ \t]*", re.ASCII)
#: Longest digit string read as an integer (Python refuses str -> int past 4300 digits anyway).
_MAX_DIGITS = 100
#: Longest text shown back in an error message.
_SHOWN = 40


def shown(value: object) -> str:
    """``repr(value)``, cut short for an error message (a pasted megabyte stays one short line).

    >>> shown("9" * 100)
    "'9999999999999999999999999999999999999999'..."
    """
    text = repr(value)
    return text if len(text) <= _SHOWN + 2 else text[: _SHOWN + 1] + "'..."


def _range(minimum: float | None, maximum: float | None, *, closed: bool = True) -> str:
    if minimum is not None and maximum is not None:
        return f" in {minimum:g}..{maximum:g}" if closed else f" in ({minimum:g}, {maximum:g})"
    if minimum is not None:
        return f" {'>=' if closed else '>'} {minimum:g}"
    if maximum is not None:
        return f" {'<=' if closed else '<'} {maximum:g}"
    return ""


def parse_int(value: object, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return the integer ``value`` holds (text of ASCII digits, or an int), in ``[minimum, maximum]``.

    Examples
    --------
    >>> parse_int(" 12", "--seed", minimum=0)
    12
    >>> parse_int("²", "--seed", minimum=0)
    Traceback (most recent call last):
    ...
    ocsched.errors.InvalidInputError: `--seed` must be an integer >= 0; got '²'
    """
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        m = _INT.fullmatch(value)
        if m and len(m.group(1).lstrip("+-")) <= _MAX_DIGITS:
            number = int(m.group(1))
    if (
        number is None
        or (minimum is not None and number < minimum)
        or (maximum is not None and number > maximum)
    ):
        raise InvalidInputError(f"`{name}` must be an integer{_range(minimum, maximum)}; got {shown(value)}")
    return number


def parse_float(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    closed: bool = True,
) -> float:
    """Return the finite number ``value`` holds (ASCII text, or a real), in ``[low, high]``.

    The range is open when ``closed`` is False.

    Examples
    --------
    >>> parse_float("1e-3", "--delta", low=0.0)
    0.001
    >>> parse_float("inf", "--delta", low=0.0)
    Traceback (most recent call last):
    ...
    ocsched.errors.InvalidInputError: `--delta` must be a finite number >= 0; got 'inf'
    """
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        m = _FLOAT.fullmatch(value)
        if m:
            number = float(m.group(1))
    ok = number is not None and math.isfinite(number)
    if ok and low is not None:
        ok = number >= low if closed else number > low  # type: ignore[operator]
    if ok and high is not None:
        ok = number <= high if closed else number < high  # type: ignore[operator]
    if not ok:
        where = _range(low, high, closed=closed)
        raise InvalidInputError(f"`{name}` must be a finite number{where}; got {shown(value)}")
    return number  # type: ignore[return-value]


def parse_float_list(text: str, name: str, *, low: float | None = None) -> list[float]:
    """Return the comma-separated finite numbers of ``text`` (each checked by :func:`parse_float`).

    >>> parse_float_list("0.01, 0.04", "--delta", low=0.0)
    [0.01, 0.04]
    """
    try:
        return [parse_float(part, name, low=low) for part in str(text).split(",")]
    except InvalidInputError:
        where = _range(low, None)
        raise InvalidInputError(
            f"`{name}` must be comma-separated finite numbers{where}; got {shown(text)}"
        ) from None
