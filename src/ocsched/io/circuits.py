"""Circuit export: a schedule as one row per circuit, written as CSV or Parquet."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched._extras import install_hint
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.io._files import write_atomic, write_text
from ocsched.iteration import IterationSchedule
from ocsched.model import Schedule
from ocsched.timing.served import served_per_circuit

#: Columns of a circuit table (:func:`circuit_table`), one row per circuit of every configuration.
CIRCUIT_COLUMNS = ("switch", "start", "end", "src", "dst", "served")
#: The column an iteration schedule's table adds: the phase (0-based) of the circuit's configuration.
PHASE_COLUMN = "phase"
CIRCUIT_FORMATS = ("circuits-csv", "circuits-parquet")

_INT_COLUMNS = ("switch", "src", "dst", PHASE_COLUMN)


def schedule_fabric(schedule: Schedule | IterationSchedule) -> Fabric:
    """Return the fabric ``schedule`` runs on, one switch per timeline.

    A :class:`~ocsched.model.Schedule` records its own (:meth:`~ocsched.model.Schedule.on_fabric`);
    an iteration schedule carries one in its ``fabric`` attribute when it has one, and runs on
    identical all-stop switches of its ``delta`` otherwise. A recorded fabric whose size differs
    from the number of timelines (an invalid schedule, which the validator reports) is replaced
    by that uniform one, so a table or a chart can still be drawn.

    >>> from ocsched.fabric import Fabric
    >>> schedule_fabric(Schedule(ports=2, delta=0.5, switches=((), ()))).deltas
    (0.5, 0.5)
    """
    s = max(1, len(schedule.switches))
    # IterationSchedule is to gain a `fabric` attribute; until it has one, it is uniform of `delta`.
    fab = schedule.on_fabric() if isinstance(schedule, Schedule) else getattr(schedule, "fabric", None)
    if not isinstance(fab, Fabric) or fab.size != s:
        fab = Fabric.uniform(s, schedule.delta if np.isfinite(schedule.delta) else 0.0)
    return fab


def circuit_table(schedule: Schedule | IterationSchedule) -> dict[str, NDArray[Any]]:
    """Return the schedule as columns, one row per circuit: switch, start, end, src, dst, served.

    ``served`` is the demand the circuit carries: its switch's rate times the time it is lit (the
    configuration's duration; under the partial model, a circuit kept from the previous
    configuration of its switch is also lit, and serves, through the gap before ``start``).
    Summed over the rows of an entry, it is what the validator credits to that entry. Rows follow
    the schedule: by switch, then configuration, then input port. When the schedule names its
    ports (``meta["port_names"]``), ``src_name`` and ``dst_name`` columns are added. An iteration
    schedule's table has a ``phase`` column after ``served``: the phase of each configuration.

    Examples
    --------
    >>> from ocsched.model import Configuration
    >>> c = Configuration.from_circuits(0.5, 2.0, [(0, 1), (1, 0)], ports=2)
    >>> t = circuit_table(Schedule(ports=2, delta=0.5, switches=((c,),)))
    >>> t["src"].tolist(), t["dst"].tolist(), t["end"].tolist(), t["served"].tolist()
    ([0, 1], [1, 0], [2.5, 2.5], [2.0, 2.0])

    A switch of rate 2 serves twice its time:

    >>> from ocsched.fabric import Fabric
    >>> fast = Schedule(ports=2, delta=0.5, switches=((c,),), fabric=Fabric.from_deltas([0.5], rates=[2.0]))
    >>> circuit_table(fast)["served"].tolist()
    [4.0, 4.0]
    """
    fabric = schedule_fabric(schedule)
    iteration = isinstance(schedule, IterationSchedule)
    keys = [*CIRCUIT_COLUMNS, PHASE_COLUMN] if iteration else list(CIRCUIT_COLUMNS)
    parts: dict[str, list[NDArray[Any]]] = {k: [] for k in keys}
    for b, sw in enumerate(schedule.switches):
        if not sw:
            continue
        served = served_per_circuit(sw, fabric, b)
        arrays = [c.circuit_arrays() for c in sw]
        lit = [j >= 0 for _, j in arrays]
        sizes = np.array([int(m.sum()) for m in lit], dtype=np.int64)
        parts["switch"].append(np.full(int(sizes.sum()), b, dtype=np.int64))
        parts["start"].append(np.repeat(np.array([c.start for c in sw], dtype=np.float64), sizes))
        parts["end"].append(np.repeat(np.array([c.end for c in sw], dtype=np.float64), sizes))
        parts["src"].append(np.concatenate([i[m] for (i, _), m in zip(arrays, lit, strict=True)]))
        parts["dst"].append(np.concatenate([j[m] for (_, j), m in zip(arrays, lit, strict=True)]))
        parts["served"].append(np.concatenate(served))
        if isinstance(schedule, IterationSchedule):
            parts[PHASE_COLUMN].append(np.repeat(np.asarray(schedule.phase_of[b], dtype=np.int64), sizes))
    out: dict[str, NDArray[Any]] = {
        k: np.concatenate([np.zeros(0, np.int64 if k in _INT_COLUMNS else np.float64), *v]).astype(
            np.int64 if k in _INT_COLUMNS else np.float64
        )
        for k, v in parts.items()
    }
    names = schedule.meta.get("port_names")
    if isinstance(names, list) and len(names) == schedule.ports:
        label = np.asarray([str(x) for x in names], dtype=object)
        out["src_name"] = label[out["src"]]
        out["dst_name"] = label[out["dst"]]
    return out


def write_circuits(
    schedule: Schedule | IterationSchedule,
    path: str | os.PathLike[str],
    *,
    format: str = "circuits-csv",
    force: bool = False,
) -> Path:
    """Write :func:`circuit_table` as CSV (with a header) or Parquet (needs ``ocsched[sweep]``)."""
    if format not in CIRCUIT_FORMATS:
        raise InvalidInputError(f"`format` must be one of {', '.join(CIRCUIT_FORMATS)}; got {format!r}")
    table = circuit_table(schedule)
    if format == "circuits-parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise InvalidInputError(
                f"circuits-parquet needs pyarrow: {install_hint('sweep')} (or use circuits-csv)"
            ) from None
        arrow = pa.table({k: pa.array(v.tolist()) for k, v in table.items()})
        return write_atomic(path, lambda f: pq.write_table(arrow, f), force=force)
    text = circuits_csv(table)
    return write_text(path, text, force=force)


def circuits_csv(table: dict[str, NDArray[Any]]) -> str:
    """Format a :func:`circuit_table` as CSV text with a header line (floats round-trip exactly)."""

    def cell(x: Any) -> str:
        if isinstance(x, float | np.floating):
            return repr(float(x))
        text = str(x)
        return f'"{text.replace(chr(34), chr(34) * 2)}"' if any(ch in text for ch in ',"\n') else text

    keys = list(table)
    head = ",".join(keys) + "\n"
    if all(table[k].dtype.kind in "if" for k in keys):  # numbers only: format in bulk
        fmt = ",".join("%r" if table[k].dtype.kind == "f" else "%d" for k in keys) + "\n"
        return head + rows_text(fmt, [table[k] for k in keys])
    rows = len(table[keys[0]]) if keys else 0
    return head + "".join(",".join(cell(table[k][r]) for k in keys) + "\n" for r in range(rows))


def rows_text(fmt: str, columns: Sequence[NDArray[Any]]) -> str:
    """Format rows of ``columns`` with ``fmt`` (see :func:`rows_with_offsets`).

    >>> rows_text("%d,%r\\n", [np.array([1, 2]), np.array([0.1, 2.0])])
    '1,0.1\\n2,2.0\\n'
    """
    return rows_with_offsets(fmt, columns)[0]


def rows_with_offsets(fmt: str, columns: Sequence[NDArray[Any]]) -> tuple[str, NDArray[np.int64]]:
    """Format rows of ``columns`` with ``fmt`` (one row, fields ``%d``, ``%r`` or ``%s``) in bulk.

    ``%r`` of a float is its shortest round-trip text, so floats read back exactly. Each distinct
    value is formatted once (a schedule repeats its times, ports and amounts across its
    circuits); the rows are then assembled as one byte matrix (no Python object per cell).
    Returns the text and where each row starts in it (and, last, its length).

    >>> rows_with_offsets("%d;", [np.array([7, 10])])
    ('7;10;', array([0, 2, 5]))
    """
    pieces = fmt.split("%")
    literals = [pieces[0], *(m[1:] for m in pieces[1:])]
    specs = [m[0] for m in pieces[1:]]
    if len(specs) != len(columns):
        raise ValueError(f"{len(specs)} fields in the format, {len(columns)} columns")
    n = len(columns[0]) if columns else 0
    if n == 0:
        return "", np.zeros(1, np.int64)
    blocks: list[NDArray[np.uint8]] = []

    def literal(text: str) -> None:
        if text:
            raw = np.frombuffer(text.encode(), dtype=np.uint8)
            blocks.append(np.broadcast_to(raw, (n, raw.size)))

    literal(literals[0])
    for spec, col, after in zip(specs, columns, literals[1:], strict=True):
        values, inv = _distinct(np.asarray(col))
        table = np.array([("%" + spec) % v for v in values.tolist()])
        coded = np.char.encode(table, "ascii") if table.dtype.kind == "U" else table
        blocks.append(coded[inv.reshape(-1)].view(np.uint8).reshape(n, -1))
        literal(after)
    matrix = np.concatenate(blocks, axis=1)
    lit = matrix != 0
    offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(lit.sum(axis=1, dtype=np.int64))])
    return str(matrix[lit].tobytes().decode("ascii")), offsets


def _distinct(col: NDArray[Any]) -> tuple[NDArray[Any], NDArray[np.int64]]:
    """``values, index`` with ``values[index] == col``, without a sort where it can: small
    integer ranges index a table, other columns are cut into runs of equal values."""
    if col.dtype.kind in "iu" and col.size:
        lo, hi = int(col.min()), int(col.max())
        if hi - lo <= 4 * col.size + 1024:
            return np.arange(lo, hi + 1, dtype=np.int64), (col - lo).astype(np.int64)
    if not col.size:
        return col, np.zeros(0, np.int64)
    new = np.empty(col.size, dtype=bool)
    new[0] = True
    np.not_equal(col[1:], col[:-1], out=new[1:])
    return col[new], np.cumsum(new, dtype=np.int64) - 1
