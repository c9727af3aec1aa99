"""Circuit export: a schedule as one row per circuit, written as CSV or Parquet."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.io._files import write_atomic, write_text
from ocsched.model import Schedule

#: Columns of a circuit table (:func:`circuit_table`), one row per circuit of every configuration.
CIRCUIT_COLUMNS = ("switch", "start", "end", "src", "dst", "served")
CIRCUIT_FORMATS = ("circuits-csv", "circuits-parquet")


def circuit_table(schedule: Schedule) -> dict[str, NDArray[Any]]:
    """Return the schedule as columns, one row per circuit: switch, start, end, src, dst, served.

    ``served`` is the traffic the circuit carries, in demand units (its duration at line rate).
    Rows follow the schedule: by switch, then configuration, then input port. When the schedule
    names its ports (``meta["port_names"]``), ``src_name`` and ``dst_name`` columns are added.

    Examples
    --------
    >>> from ocsched.model import Configuration
    >>> c = Configuration.from_circuits(0.5, 2.0, [(0, 1), (1, 0)], ports=2)
    >>> t = circuit_table(Schedule(ports=2, delta=0.5, switches=((c,),)))
    >>> t["src"].tolist(), t["dst"].tolist(), t["end"].tolist()
    ([0, 1], [1, 0], [2.5, 2.5])
    """
    cols: dict[str, list[Any]] = {k: [] for k in CIRCUIT_COLUMNS}
    for b, sw in enumerate(schedule.switches):
        for c in sw:
            for i, j in c.circuits:
                cols["switch"].append(b)
                cols["start"].append(c.start)
                cols["end"].append(c.end)
                cols["src"].append(i)
                cols["dst"].append(j)
                cols["served"].append(c.duration)
    out: dict[str, NDArray[Any]] = {
        k: np.asarray(v, dtype=np.int64 if k in ("switch", "src", "dst") else np.float64)
        for k, v in cols.items()
    }
    names = schedule.meta.get("port_names")
    if isinstance(names, list) and len(names) == schedule.ports:
        label = np.asarray([str(x) for x in names], dtype=object)
        out["src_name"] = label[out["src"]]
        out["dst_name"] = label[out["dst"]]
    return out


def write_circuits(
    schedule: Schedule, path: str | os.PathLike[str], *, format: str = "circuits-csv", force: bool = False
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
                "circuits-parquet needs pyarrow: pip install 'ocsched[sweep]' (or use circuits-csv)"
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
    lines = [",".join(keys)]
    rows = len(table[keys[0]]) if keys else 0
    lines += [",".join(cell(table[k][r]) for k in keys) for r in range(rows)]
    return "\n".join(lines) + "\n"
