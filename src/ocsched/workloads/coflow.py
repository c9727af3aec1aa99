"""Demand from the public Facebook coflow-benchmark trace (one coflow, or a time window).

The trace (``FB2010-1Hr-150-0.txt`` from coflow/coflow-benchmark: one hour of MapReduce shuffles
on a 3000-machine, 150-rack cluster, scaled to 150 ports) ships with the package; any file in the
same format can be read instead. Format: line 1 is ``<ports> <coflows>``; each further line is
``<id> <arrival ms> <#mappers> <mapper rack>... <#reducers> <reducer rack>:<shuffle MB>...``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Final

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_int, check_number
from ocsched.errors import InvalidInputError
from ocsched.workloads.options import Option

__all__ = [
    "BYTES_PER_MB",
    "TRACE_NAME",
    "Coflow",
    "Trace",
    "coflow",
    "coflow_matrix",
    "packaged_trace",
    "parse_trace",
]

#: The packaged trace's file name (under ``ocsched/workloads/data``).
TRACE_NAME: Final = "FB2010-1Hr-150-0.txt"
#: The trace's megabytes are decimal: 1 MB = 10^6 bytes.
BYTES_PER_MB: Final = 1e6


@dataclass(frozen=True)
class Coflow:
    """One coflow of a trace.

    Attributes
    ----------
    id : int
        The trace's coflow id.
    arrival_ms : float
        Arrival time in milliseconds from the start of the trace.
    mappers : tuple of int
        Rack of each mapper (a rack may appear more than once).
    reducers : tuple of (int, float)
        ``(rack, shuffle MB)`` of each reducer: the megabytes it receives from all mappers.
    """

    id: int
    arrival_ms: float
    mappers: tuple[int, ...]
    reducers: tuple[tuple[int, float], ...]

    @property
    def total_mb(self) -> float:
        """Total shuffle megabytes (same-rack traffic included)."""
        return float(sum(mb for _, mb in self.reducers))


@dataclass(frozen=True)
class Trace:
    """A parsed coflow trace: the port count and the coflows in file order."""

    ports: int
    coflows: tuple[Coflow, ...]
    source: str


@cache
def packaged_trace() -> Trace:
    """Return the FB2010 trace that ships with the package (package data, parsed once).

    Examples
    --------
    >>> t = packaged_trace()
    >>> t.ports, len(t.coflows), t.coflows[1].mappers, t.coflows[1].reducers
    (150, 526, (104, 132), ((140, 48.0),))
    """
    text = resources.files("ocsched.workloads").joinpath("data", TRACE_NAME).read_text()
    return parse_trace(text, f"<packaged {TRACE_NAME}>")


def parse_trace(text: str, source: str) -> Trace:
    """Parse a coflow-benchmark trace (see the module docstring); ``source`` names it in errors.

    Files are read by :func:`ocsched.io.read_coflow_trace`.

    Raises
    ------
    InvalidInputError
        If the text is malformed: the message names the source and the line (a header that is
        not two positive integers, a line whose counts do not match its fields, a rack outside
        ``0..ports-1``, a negative or non-numeric size or time, a repeated id, or a number of
        coflow lines different from the header's).
    """
    return _parse(text, source)


def _parse(text: str, source: str) -> Trace:
    lines = [(k + 1, ln.split()) for k, ln in enumerate(text.splitlines()) if ln.strip()]

    def bad(lineno: int, what: str) -> InvalidInputError:
        return InvalidInputError(f"coflow trace {source} line {lineno}: {what}")

    if not lines:
        raise InvalidInputError(f"coflow trace {source} is empty")
    head_no, head = lines[0]
    try:
        ports, count = (int(x) for x in head) if len(head) == 2 else (0, 0)
    except ValueError:
        ports = count = 0
    if ports < 1 or count < 0:
        raise bad(
            head_no, f"expected a header '<ports> <coflows>' of positive integers; got {' '.join(head)!r}"
        )
    coflows: list[Coflow] = []
    seen: set[int] = set()
    for lineno, tok in lines[1:]:
        try:
            cid, arrival, n_map = int(tok[0]), float(tok[1]), int(tok[2])
            mappers = tuple(int(x) for x in tok[3 : 3 + n_map])
            n_red = int(tok[3 + n_map])
            pairs = [x.split(":") for x in tok[4 + n_map :]]
            reducers = tuple((int(r), float(mb)) for r, mb in pairs)
        except (ValueError, IndexError):
            raise bad(
                lineno, "expected '<id> <arrival ms> <#mappers> <rack>... <#reducers> <rack>:<MB>...'"
            ) from None
        if n_map < 1 or len(mappers) != n_map:
            raise bad(lineno, f"expected {n_map} mapper racks (at least 1); found {len(mappers)}")
        if n_red < 1 or len(reducers) != n_red:
            raise bad(lineno, f"expected {n_red} reducers (at least 1); found {len(reducers)}")
        racks = [*mappers, *(r for r, _ in reducers)]
        off = [r for r in racks if not 0 <= r < ports]
        if off:
            raise bad(lineno, f"rack {off[0]} outside 0..{ports - 1}")
        if not (np.isfinite(arrival) and arrival >= 0):
            raise bad(lineno, f"arrival time must be a finite number >= 0; got {tok[1]!r}")
        neg = [mb for _, mb in reducers if not (np.isfinite(mb) and mb >= 0)]
        if neg:
            raise bad(lineno, f"shuffle size must be a finite number >= 0; got {neg[0]!r}")
        if cid in seen:
            raise bad(lineno, f"coflow id {cid} appears twice")
        seen.add(cid)
        coflows.append(Coflow(cid, arrival, mappers, reducers))
    if len(coflows) != count:
        raise bad(head_no, f"header announces {count} coflows; the file holds {len(coflows)}")
    return Trace(ports, tuple(coflows), source)


def coflow_matrix(flow: Coflow, ports: int) -> NDArray[np.float64]:
    """Return the rack-to-rack bytes of one coflow, splitting each reducer's MB over the mappers.

    ``D[mu, rho] += MB(rho) * 10^6 / #mappers`` for every mapper rack mu and reducer rack rho;
    same-rack traffic (mu = rho) is local and dropped.

    >>> c = Coflow(7, 0.0, (0, 1), ((1, 2.0), (2, 4.0)))
    >>> (coflow_matrix(c, 3) / 1e6).tolist()
    [[0.0, 1.0, 2.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    """
    out = np.zeros((ports, ports))
    maps = np.asarray(flow.mappers, dtype=np.int64)
    for rack, mb in flow.reducers:
        np.add.at(out[:, rack], maps, mb * BYTES_PER_MB / len(maps))
    np.fill_diagonal(out, 0.0)
    return out


def coflow(
    *,
    trace: Trace | None = None,
    id: int | None = None,  # the trace's own field name (and the CLI's --id)
    rank: int | None = None,
    start_ms: float | None = None,
    end_ms: float | None = None,
) -> NDArray[np.float64]:
    """Return the rack-to-rack bytes of one coflow of the trace, or of all coflows in a window.

    Each coflow gives ``D[mu, rho] += MB(rho) * 10^6 / #mappers`` for every mapper rack mu and
    reducer rack rho (the usual reading of the trace: each reducer's shuffle is split evenly over
    the coflow's mappers; decimal megabytes, 1 MB = 10^6 bytes). Same-rack traffic is local and
    dropped (zero diagonal). Select one of:

    - ``id``: the coflow with this id;
    - ``rank``: the rank-th largest coflow by total shuffle size (same-rack traffic included;
      ties by id; 0 = largest);
    - ``start_ms`` / ``end_ms``: the sum over coflows arriving in ``[start_ms, end_ms)`` (either
      bound may be omitted; an empty window gives the zero matrix).

    With none of them, ``rank=0``. The matrix is ports x ports (150 for the packaged trace) and
    deterministic (a seed is ignored).

    Parameters
    ----------
    trace : Trace, optional
        A parsed trace (:func:`ocsched.io.read_coflow_trace` reads a file, and ``generate("coflow",
        path=...)`` through :func:`ocsched.io.generate` does it for you); default the packaged
        ``FB2010-1Hr-150-0.txt``.
    id : int, optional
        Coflow id to extract.
    rank : int, optional
        Size rank to extract (>= 0).
    start_ms, end_ms : float, optional
        Arrival-time window in milliseconds.

    Returns
    -------
    ndarray of float64, shape (ports, ports)
        ``D[i, j]`` = bytes rack i sends to rack j.

    Raises
    ------
    InvalidInputError
        If the file is missing or malformed (naming the file and line), more than one selection
        is given, ``id`` is not in the trace, ``rank`` is out of range, or the window is
        reversed.

    Examples
    --------
    >>> d = coflow(id=2)
    >>> d.shape, float(d.sum()), float(d[104, 140])
    ((150, 150), 48000000.0, 24000000.0)
    """
    window = start_ms is not None or end_ms is not None
    modes = [
        name for name, on in (("id", id is not None), ("rank", rank is not None), ("window", window)) if on
    ]
    if len(modes) > 1:
        raise InvalidInputError(
            f"give only one of `id`, `rank` or `start_ms`/`end_ms`; got {' and '.join(modes)}"
        )
    if id is not None:
        check_int(id, "id", minimum=-(2**62))
    if rank is not None:
        check_int(rank, "rank", minimum=0)
    lo = -np.inf if start_ms is None else check_number(start_ms, "start_ms", low=-np.inf)
    hi = np.inf if end_ms is None else check_number(end_ms, "end_ms", low=-np.inf)
    if lo > hi:
        raise InvalidInputError(f"`start_ms` must be <= `end_ms`; got {start_ms!r} > {end_ms!r}")
    if trace is None:
        trace = packaged_trace()
    if window:
        out = np.zeros((trace.ports, trace.ports))
        for c in trace.coflows:
            if lo <= c.arrival_ms < hi:
                out += coflow_matrix(c, trace.ports)
        return out
    if id is not None:
        for c in trace.coflows:
            if c.id == id:
                return coflow_matrix(c, trace.ports)
        raise InvalidInputError(f"`id` {id!r} is not a coflow of {trace.source}")
    r = 0 if rank is None else int(rank)
    if r >= len(trace.coflows):
        raise InvalidInputError(f"`rank` must be < {len(trace.coflows)} (the number of coflows); got {r}")
    ranked = sorted(trace.coflows, key=lambda c: (-c.total_mb, c.id))
    return coflow_matrix(ranked[r], trace.ports)


#: The options of :func:`coflow` (``trace`` is offered as ``path``, a file read for you).
COFLOW_OPTIONS: Final = (
    Option("path", str, None, "A trace file in the same format to read instead of the packaged one."),
    Option("id", int, None, "Coflow id to extract."),
    Option("rank", int, None, "Size rank to extract (0: the largest coflow)."),
    Option("start_ms", float, None, "Start of the arrival-time window.", unit="ms"),
    Option("end_ms", float, None, "End of the arrival-time window.", unit="ms"),
)
