"""ns-3 circuit switches: per switch an Inet-style topology file of its configurations.

The circuit-switch model of ``jtdor/ns-3-dev-git`` (``src/circuit-switch/``) reads a switch's
configurations from an Inet-style topology file (``N L``, then N node lines ``id x y``, then L
link lines ``from to weight``, the weight being the configuration's index) and rotates through
them at a fixed interval, dark for its ``ReconfigurationTime`` at each change. A folder holds
``switch<b>.txt`` per switch and ``ocsched.json``: per switch ``reconfiguration_time`` (its delay)
and ``interval`` (the longest configuration, so a fixed-interval rotator serves at least what
the schedule does), in the schedule's unit, and the schedule's header (exact starts and
durations) for ocsched to read back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.io.circuits import rows_text, schedule_fabric
from ocsched.io.exports._common import (
    AnySchedule,
    ExportResult,
    check_schedule,
    flat,
    header,
    read_json,
    rebuild,
    write_chunks,
)

__all__ = ["SIDECAR", "read_ns3", "write_ns3"]

SIDECAR = "ocsched.json"


def write_ns3(schedule: AnySchedule, folder: str | os.PathLike[str], *, force: bool = False) -> ExportResult:
    """Write one topology file per switch and ``ocsched.json`` into ``folder``.

    Examples
    --------
    >>> import tempfile, pathlib, ocsched
    >>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_ns3(sched, out)
    >>> (out / "switch0.txt").read_text().splitlines()
    ['2 2', '0 0 0', '1 1 0', '0 1 0', '1 0 0']
    """
    sched = check_schedule(schedule)
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"`folder` is a file, not a folder: {out}")
    fabric = schedule_fabric(sched)
    table = flat(sched)
    n = sched.ports
    ids = np.arange(n, dtype=np.int64)
    nodes = rows_text("%d %d 0\n", [ids, ids])
    files = []
    rotators = []
    for b, sw in enumerate(sched.switches):
        lo, hi = int(table.base[b]), int(table.base[b]) + int(table.offsets[b][-1])
        links = rows_text("%d %d %d\n", [table.src[lo:hi], table.dst[lo:hi], table.conf[lo:hi]])
        files.append(write_chunks(out / f"switch{b}.txt", [f"{n} {hi - lo}\n", nodes, links], force))
        rotators.append(
            {
                "file": f"switch{b}.txt",
                "reconfiguration_time": fabric.switches[b].delta,
                "interval": max((c.duration for c in sw), default=0.0),
                "configurations": len(sw),
            }
        )
    side = {**header(sched), "ns3": {"bidirectional": False, "switches": rotators}}
    files.append(write_chunks(out / SIDECAR, [json.dumps(side)], force))
    return ExportResult(tuple(files))


def read_ns3(folder: str | os.PathLike[str]) -> AnySchedule:
    """Read back what :func:`write_ns3` wrote: circuits from the topology files, times from the sidecar."""
    base = Path(folder)
    head: dict[str, Any] = read_json(base / SIDECAR, "folder")
    info = head.pop("ns3", {})
    circuits = []
    for b, entry in enumerate(head["switches"]):
        path = base / info["switches"][b]["file"]
        try:
            lines = path.read_text().split("\n")
            n, m = (int(x) for x in lines[0].split())
            links = np.array([ln.split() for ln in lines[1 + n : 1 + n + m]], dtype=np.int64).reshape(-1, 3)
        except (OSError, ValueError, IndexError) as exc:
            raise InvalidInputError(f"`folder` {base}: bad topology file {path.name} ({exc})") from None
        count = len(entry["starts"])
        if links.size and (links[:, 2].min() < 0 or links[:, 2].max() >= count):
            raise InvalidInputError(f"`folder` {base}: {path.name} names a configuration beyond {count}")
        order = np.argsort(links[:, 2], kind="stable")
        cuts = np.cumsum(np.bincount(links[:, 2], minlength=count))[:-1]
        confs = np.split(links[order, :2], cuts) if count else []
        circuits.append(confs)
    return rebuild(head, circuits, str(base))
