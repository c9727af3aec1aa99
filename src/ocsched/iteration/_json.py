"""The JSON formats of iterations and iteration schedules: names, version, and the phase reader."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from ocsched._checks import check_number
from ocsched.errors import InvalidInputError
from ocsched.model import MAX_PORTS

__all__ = [
    "ITERATION_FORMAT",
    "ITERATION_SCHEDULE_FORMAT",
    "ITERATION_SCHEDULE_VERSION_FABRIC",
    "ITERATION_VERSION",
    "parse_phases",
]

ITERATION_FORMAT = "ocsched.sequence"
ITERATION_SCHEDULE_FORMAT = "ocsched.iteration-schedule"
ITERATION_VERSION = 1
#: Version of an iteration schedule on anything but a uniform all-stop fabric: its fabric is
#: written as the single-matrix schedule's version 2 writes it (per-switch delta and rate, model,
#: down windows, failed links).
ITERATION_SCHEDULE_VERSION_FABRIC = 2


def parse_phases(data: Any) -> list[tuple[Any, float, str]]:
    """Check an ``ocsched.sequence`` object and return each phase's ``(matrix, gap_before, name)``.

    The matrices are dense arrays or scipy COO arrays, not yet checked as demands.

    >>> [(m.tolist(), g, nm) for m, g, nm in parse_phases(
    ...     {"format": "ocsched.sequence", "version": 1, "phases": [{"demand": [[0, 1], [1, 0]]}]})]
    [([[0.0, 1.0], [1.0, 0.0]], 0.0, 'phase0')]
    """
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"iteration must be a JSON object; got {type(data).__name__}")
    if data.get("format") != ITERATION_FORMAT:
        raise InvalidInputError(
            f"iteration `format` must be {ITERATION_FORMAT!r}; got {data.get('format')!r}"
        )
    version = data.get("version")
    if isinstance(version, bool) or version != ITERATION_VERSION:
        raise InvalidInputError(f"iteration `version` must be {ITERATION_VERSION}; got {version!r}")
    ports = data.get("ports")
    if ports is not None and (
        isinstance(ports, bool) or not isinstance(ports, int) or not 1 <= ports <= MAX_PORTS
    ):
        raise InvalidInputError(f"iteration `ports` must be an integer in 1..{MAX_PORTS}; got {ports!r}")
    raw = data.get("phases")
    if not isinstance(raw, list) or not raw:
        raise InvalidInputError(f"iteration `phases` must be a non-empty list; got {raw!r}")
    sparse = [p.get("demand") for p in raw if isinstance(p, Mapping)]
    if ports is None:
        tops = [
            max([*d.get("src", []), *d.get("dst", [])], default=-1)
            for d in sparse
            if isinstance(d, Mapping)
            and isinstance(d.get("src", []), list)
            and isinstance(d.get("dst", []), list)
        ]
        tops = [t for t in tops if isinstance(t, int) and not isinstance(t, bool)]
        ports = max(tops, default=-1) + 1 or None
    phases = []
    for k, p in enumerate(raw):
        where = f"iteration `phases[{k}]`"
        if not isinstance(p, Mapping):
            raise InvalidInputError(f"{where} must be an object; got {p!r}")
        name = p.get("name", f"phase{k}")
        if not isinstance(name, str):
            raise InvalidInputError(f"{where}.name must be a string; got {name!r}")
        gap = p.get("gap_before", 0.0)
        if isinstance(gap, bool) or not isinstance(gap, numbers.Real):
            raise InvalidInputError(f"{where}.gap_before must be a number; got {gap!r}")
        check_number(gap, f"phases[{k}].gap_before")
        phases.append((_phase_matrix(p.get("demand"), ports, where), float(gap), name))
    return phases


def _phase_matrix(raw: Any, ports: int | None, where: str) -> Any:
    """A phase's ``demand`` field as a dense list of lists or a scipy COO array."""
    if isinstance(raw, list):
        if not all(isinstance(r, list) for r in raw) or any(
            isinstance(x, bool) or not isinstance(x, int | float) for r in raw for x in r
        ):
            raise InvalidInputError(f"{where}.demand must be a list of lists of numbers")
        if len({len(r) for r in raw}) > 1:
            raise InvalidInputError(
                f"{where}.demand rows have different lengths {sorted({len(r) for r in raw})}"
            )
        return np.array(raw, dtype=np.float64)
    if isinstance(raw, Mapping):
        cols = []
        for key in ("src", "dst", "value"):
            v = raw.get(key)
            if not isinstance(v, list) or any(
                isinstance(x, bool) or not isinstance(x, int | float) for x in v
            ):
                raise InvalidInputError(f"{where}.demand.{key} must be a list of numbers; got {v!r}")
            cols.append(v)
        src, dst, val = cols
        if not len(src) == len(dst) == len(val):
            raise InvalidInputError(
                f"{where}.demand src, dst and value must have the same length; "
                f"got {len(src)}, {len(dst)}, {len(val)}"
            )
        n = raw.get("n", ports)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_PORTS:
            raise InvalidInputError(f"{where}.demand needs the port count (`ports` or `n`); got {n!r}")
        for x in (*src, *dst):
            if not isinstance(x, int) or not 0 <= x < n:
                raise InvalidInputError(f"{where}.demand ports must be integers in 0..{n - 1}; got {x!r}")
        return sp.coo_array((np.asarray(val, dtype=np.float64), (src, dst)), shape=(n, n))
    raise InvalidInputError(
        f"{where}.demand must be a list of lists or {{'src', 'dst', 'value'}}; got {type(raw).__name__}"
    )
