"""What the figures plot: each row's value, and the x axis's scale and the time unit of the labels."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["doubles", "time_unit"]

Row = Mapping[str, Any]


def doubles(xs: Sequence[float]) -> bool:
    """True when every value is twice the one before (a log2 axis shows such a grid evenly).

    >>> doubles([0.01, 0.02, 0.04]), doubles([2, 4, 8, 16]), doubles([0.01, 0.05, 0.1]), doubles([0, 1])
    (True, True, False, False)
    """
    return len(xs) >= 2 and all(
        a > 0 and math.isclose(b / a, 2.0, rel_tol=1e-6) for a, b in itertools.pairwise(xs)
    )


def time_unit(rows: Sequence[Row]) -> str:
    """The unit of the rows' times: seconds with a link rate, else the demand's (normalised) unit.

    >>> time_unit([{"normalized": True, "link_gbps": None}])
    'largest line sum = 1'
    >>> time_unit([{"normalized": False, "link_gbps": 400}])
    's'
    """
    if rows and all(r.get("normalized") for r in rows):
        return "largest line sum = 1"
    if rows and all(r.get("link_gbps") is not None for r in rows):
        return "s"
    return "unit of the demand"


def _mean(values: Iterable[float]) -> float:
    v = list(values)
    return sum(v) / len(v) if v else math.nan


def _makespan(r: Row) -> float:
    return float(r["makespan"])


def _to_bound(r: Row) -> float:
    lb = r["lower_bound"]
    return float(r["makespan"]) / lb if lb else math.nan
