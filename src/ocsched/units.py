"""Units at the edges: link rates, durations and byte counts written as text, and their conversions.

Inside ocsched one unit is used throughout: a demand entry is the *time* its traffic takes at one
OCS link's line rate, and delays and durations are in that same unit (see :mod:`ocsched.model`).
Traffic measured in bytes becomes time through a link rate; everything here converts at the
boundary (readers, workloads, the command line), so no algorithm ever sees bytes.

Rates are written with a unit, e.g. ``"400Gbps"``, ``"400 Gb/s"``, ``"50GB/s"``, ``"1.6Tbps"``
(decimal prefixes, as network rates are quoted; ``b`` is bits, ``B`` is bytes). Durations are
written ``"10us"``, ``"1.5 ms"``, ``"2e-6s"``, ``"40ns"`` (``µs`` is accepted for ``us``); a bare
number is taken as already in the demand's unit. Numbers follow one ASCII-only grammar, like every
number the command line reads (:mod:`ocsched._text`).

>>> bytes_per_second("400Gbps")
50000000000.0
>>> seconds("10us")
1e-05
>>> float(bytes_to_seconds(1e9, "400Gbps"))
0.02
"""

from __future__ import annotations

import math
import re

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ocsched.errors import InvalidInputError

__all__ = [
    "DEMAND_UNITS",
    "RATE_UNITS",
    "TIME_UNITS",
    "bytes_per_second",
    "bytes_to_seconds",
    "duration_in",
    "seconds",
    "split_quantity",
]

#: Units of time per second (a duration is divided by it: exact for ``10us`` -> 1e-05).
TIME_UNITS: dict[str, float] = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
#: Bytes per second per unit of rate (decimal prefixes; ``b`` bits, ``B`` bytes).
RATE_UNITS: dict[str, float] = {
    **{f"{p}bps": f / 8.0 for p, f in (("", 1.0), ("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))},
    **{f"{p}b/s": f / 8.0 for p, f in (("", 1.0), ("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))},
    **{f"{p}B/s": f for p, f in (("", 1.0), ("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))},
}
#: What a demand's entries may measure: a time unit, or ``bytes`` (then a link rate is needed).
DEMAND_UNITS = (*TIME_UNITS, "bytes")

_QUANTITY = re.compile(
    r"[ \t]*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[ \t]*([A-Za-zµ/]*)[ \t]*", re.ASCII
)


def split_quantity(text: str, name: str) -> tuple[float, str]:
    """Split ``"400 Gbps"`` into ``(400.0, "Gbps")``; the number must be finite and >= 0.

    >>> split_quantity("1.5ms", "--delta")
    (1.5, 'ms')
    >>> split_quantity("0.04", "--delta")
    (0.04, '')
    """
    m = _QUANTITY.fullmatch(text.replace("µ", "u")) if isinstance(text, str) else None
    value = float(m.group(1)) if m else math.nan
    if m is None or not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"`{name}` must be a finite number >= 0 with an optional unit; got {text!r}")
    return value, m.group(2)


def bytes_per_second(rate: str | float, *, name: str = "link_rate") -> float:
    """Return a link rate in bytes per second: text with a unit (``"400Gbps"``), or a number of bytes/s.

    Raises
    ------
    InvalidInputError
        For a rate without a known unit (the message lists them), or one that is not > 0.

    Examples
    --------
    >>> bytes_per_second("50GB/s"), bytes_per_second("1.6Tbps"), bytes_per_second(1e9)
    (50000000000.0, 200000000000.0, 1000000000.0)
    """
    if isinstance(rate, bool):
        raise InvalidInputError(f"`{name}` must be a rate such as 400Gbps or 50GB/s; got {rate!r}")
    if isinstance(rate, int | float | np.floating | np.integer):
        value, unit, factor = float(rate), "B/s", 1.0
    else:
        value, unit = split_quantity(rate, name)
        if unit not in RATE_UNITS:
            raise InvalidInputError(
                f"`{name}` must be a rate with a unit ({', '.join(u for u in RATE_UNITS if '/' not in u)}, "
                f"or b/s, B/s forms); got {rate!r}"
            )
        factor = RATE_UNITS[unit]
    out = value * factor
    if not (math.isfinite(out) and out > 0):
        raise InvalidInputError(f"`{name}` must be a rate > 0; got {rate!r}")
    return out


def seconds(duration: str | float, *, name: str = "duration") -> float:
    """Return a duration in seconds from text with a time unit (``"10us"``), or a number of seconds.

    Raises
    ------
    InvalidInputError
        For an unknown unit (the message lists them), a negative or non-finite value.

    Examples
    --------
    >>> seconds("1.5 ms"), seconds("40ns"), seconds(2.0)
    (0.0015, 4e-08, 2.0)
    """
    if isinstance(duration, bool):
        raise InvalidInputError(f"`{name}` must be a duration such as 10us; got {duration!r}")
    if isinstance(duration, int | float | np.floating | np.integer):
        value, per_second = float(duration), 1.0
    else:
        value, unit = split_quantity(duration, name)
        unit = unit or "s"
        if unit not in TIME_UNITS:
            raise InvalidInputError(
                f"`{name}` must be a duration in {', '.join(TIME_UNITS)}; got {duration!r}"
            )
        per_second = TIME_UNITS[unit]
    out = value / per_second
    if not (math.isfinite(out) and out >= 0):
        raise InvalidInputError(f"`{name}` must be a finite duration >= 0; got {duration!r}")
    return out


def bytes_to_seconds(amount: ArrayLike, link_rate: str | float) -> NDArray[np.float64]:
    """Return the time (seconds) ``amount`` bytes take on one link of rate ``link_rate``.

    >>> bytes_to_seconds([[0, 5e9], [0, 0]], "400Gbps").tolist()
    [[0.0, 0.1], [0.0, 0.0]]
    """
    return np.asarray(amount, dtype=np.float64) / bytes_per_second(link_rate)


def duration_in(duration: str | float, unit: str | None, *, name: str = "duration") -> float:
    """Return a duration in time unit ``unit``: ``"10us"`` in ``"ms"`` is 0.01; a bare number is
    taken as already in ``unit``.

    Parameters
    ----------
    duration : str or float
        A number, or text with an optional time unit (one of :data:`TIME_UNITS`).
    unit : str or None
        The unit wanted (a key of :data:`TIME_UNITS`); None when the demand's unit is not known,
        and then only a bare number is accepted: a unit would have nothing to convert to.
    name : str
        The argument's name, for error messages.

    Raises
    ------
    InvalidInputError
        For a negative or non-finite value, an unknown unit, or a unit when ``unit`` is None.

    Examples
    --------
    >>> duration_in("10us", "ms"), duration_in("0.04", "s"), duration_in("2ms", "us")
    (0.01, 0.04, 2000.0)
    """
    if isinstance(duration, bool):
        raise InvalidInputError(f"`{name}` must be a duration such as 10us; got {duration!r}")
    if isinstance(duration, int | float | np.floating | np.integer):
        value, suffix = float(duration), ""
    else:
        value, suffix = split_quantity(duration, name)
    if not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"`{name}` must be a finite duration >= 0; got {duration!r}")
    if not suffix:
        return value
    if suffix not in TIME_UNITS:
        raise InvalidInputError(f"`{name}` must be a duration in {', '.join(TIME_UNITS)}; got {duration!r}")
    if unit is None:
        raise InvalidInputError(
            f"`{name}` {duration!r} has a time unit but the demand's is not given: say it with --unit "
            "(s, ms, us, ns), or --unit bytes --link-rate RATE"
        )
    if unit not in TIME_UNITS:
        raise InvalidInputError(f"unit must be one of {', '.join(TIME_UNITS)}; got {unit!r}")
    up, down = TIME_UNITS[unit], TIME_UNITS[suffix]
    # Scale by a ratio >= 1 (an exact power of ten): 10us is 1e-05 s, not 9.999999999999999e-06.
    return value * (up / down) if up >= down else value / (down / up)
