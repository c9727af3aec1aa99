"""Circuit tables: one row per circuit (switch, start, end, src, dst, served, phase), CSV or Parquet.

``served`` is the switch's rate times the time the validator credits the circuit with
(:func:`ocsched.timing.served.served_per_circuit`), so summed per entry it is what that entry gets.
The CSV carries a sidecar ``<file>.ocsched.json`` (the fabric and each switch's timeline) so the
schedule can be read back; Parquet keeps the same header in its schema metadata.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.io._files import write_atomic
from ocsched.io.circuits import circuit_table, circuits_csv
from ocsched.io.exports._common import (
    AnySchedule,
    ExportResult,
    check_schedule,
    header,
    read_json,
    rebuild,
    sidecar_path,
    write_chunks,
)

__all__ = ["read_circuits_csv", "read_circuits_parquet", "write_circuits_csv", "write_circuits_parquet"]


def write_circuits_csv(
    schedule: AnySchedule, path: str | os.PathLike[str], *, force: bool = False
) -> ExportResult:
    """Write the circuit table as CSV at ``path`` and its header beside it (``<path>.ocsched.json``).

    Examples
    --------
    >>> import tempfile, pathlib, ocsched
    >>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "c.csv"
    >>> [p.name for p in write_circuits_csv(sched, out).paths]
    ['c.csv', 'c.csv.ocsched.json']
    >>> out.read_text().splitlines()[:2]
    ['switch,start,end,src,dst,served', '0,0.5,1.5,0,1,1.0']
    """
    sched = check_schedule(schedule)
    text = circuits_csv(circuit_table(sched))
    side = sidecar_path(path)
    head = json.dumps(header(sched))
    written = write_chunks(Path(path), [text], force)
    return ExportResult((written, write_chunks(side, [head], force)))


def _split(head: dict[str, Any], src: list[int], dst: list[int], where: str) -> list[list[Any]]:
    """Cut the rows (schedule order) into each configuration's circuits, by the header's sizes."""
    out: list[list[Any]] = []
    row = 0
    try:
        for entry in head["switches"]:
            confs = []
            for m in entry["sizes"]:
                confs.append(list(zip(src[row : row + m], dst[row : row + m], strict=True)))
                row += m
            out.append(confs)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"{where}: malformed ocsched header ({exc!r})") from None
    if row != len(src):
        raise InvalidInputError(f"{where}: {len(src)} circuit rows, the header counts {row}")
    return out


def read_circuits_csv(path: str | os.PathLike[str]) -> AnySchedule:
    """Read back what :func:`write_circuits_csv` wrote (the CSV and its sidecar header)."""
    p = Path(path)
    head = read_json(sidecar_path(p), "path")
    try:
        with p.open(newline="") as f:
            rows = list(csv.DictReader(f))
        src = [int(r["src"]) for r in rows]
        dst = [int(r["dst"]) for r in rows]
    except OSError as exc:
        raise InvalidInputError(f"`path` {p}: cannot read ({exc.strerror or exc})") from None
    except (KeyError, ValueError, TypeError) as exc:
        raise InvalidInputError(f"`path` {p}: not a circuit table ({exc!r})") from None
    return rebuild(head, _split(head, src, dst, str(p)), str(p))


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidInputError(
            "circuits-parquet needs pyarrow: pip install 'ocsched[sweep]' (or use circuits)"
        ) from None
    return pa, pq


def write_circuits_parquet(
    schedule: AnySchedule, path: str | os.PathLike[str], *, force: bool = False
) -> ExportResult:
    """Write the circuit table as Parquet (needs ``ocsched[sweep]``), the header in its metadata."""
    sched = check_schedule(schedule)
    pa, pq = _pyarrow()
    table = circuit_table(sched)
    arrow = pa.table({k: pa.array(v) for k, v in table.items()})
    arrow = arrow.replace_schema_metadata({"ocsched": json.dumps(header(sched))})
    return ExportResult((write_atomic(path, lambda f: pq.write_table(arrow, f), force=force),))


def read_circuits_parquet(path: str | os.PathLike[str]) -> AnySchedule:
    """Read back what :func:`write_circuits_parquet` wrote."""
    _, pq = _pyarrow()
    p = Path(path)
    try:
        table = pq.read_table(p)
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"`path` {p}: not a Parquet file ({exc})") from None
    meta = table.schema.metadata or {}
    if b"ocsched" not in meta:
        raise InvalidInputError(f"`path` {p}: no ocsched header in its metadata (not written by ocsched)")
    head = json.loads(meta[b"ocsched"])
    src = np.asarray(table.column("src").to_numpy(), np.int64).tolist()
    dst = np.asarray(table.column("dst").to_numpy(), np.int64).tolist()
    return rebuild(head, _split(head, src, dst, str(p)), str(p))
