"""OXC controller orders: per switch and configuration boundary, the cross-connects to delete and add.

One JSON document ``{"format": "ocsched.oxc-orders", "recourse": R, "orders": [...], "ocsched":
header}``; each order is ``{"switch", "configuration", "time", "ready", "delete": [[in, out]...],
"add": [[in, out]...]}`` (and ``"phase"`` for an iteration schedule), sorted by ``time`` (then
switch): ``time`` is when the switch must begin to reconfigure (its delay before ``ready``, the
configuration's start, when the new cross-connects carry traffic). A circuit kept across a
boundary is neither deleted nor re-added; ``recourse`` is the total number of circuits deleted
plus added (:func:`ocsched.model.recourse.recourse`, the first set-up of each switch included).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.io.circuits import schedule_fabric
from ocsched.io.exports._common import (
    AnySchedule,
    ExportResult,
    check_schedule,
    header,
    json_lists,
    read_json,
    rebuild,
    write_chunks,
)
from ocsched.iteration import IterationSchedule
from ocsched.model.recourse import changes

__all__ = ["FORMAT", "read_oxc_orders", "write_oxc_orders"]

FORMAT = "ocsched.oxc-orders"


def write_oxc_orders(
    schedule: AnySchedule, path: str | os.PathLike[str], *, force: bool = False
) -> ExportResult:
    """Write the controller orders of ``schedule`` as one JSON file; ``info["recourse"]`` is the total.

    Examples
    --------
    >>> import tempfile, pathlib, json, ocsched
    >>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "orders.json"
    >>> write_oxc_orders(sched, out).info
    {'recourse': 2}
    >>> order = json.loads(out.read_text())["orders"][0]
    >>> order["time"], order["ready"], order["delete"], order["add"]
    (0.0, 0.5, [], [[0, 1], [1, 0]])
    """
    sched = check_schedule(schedule)
    fabric = schedule_fabric(sched)
    total = 0
    boundaries: list[tuple[int, int, float, float]] = []
    deleted, added = [], []
    for b, sw in enumerate(sched.switches):
        delta = fabric.switches[b].delta
        previous = None
        for k, conf in enumerate(sw):
            d = changes(previous, conf, bidirectional=fabric.switches[b].bidirectional)
            total += d.total
            deleted.append(d.deleted)
            added.append(d.added)
            boundaries.append((b, k, conf.start - delta, conf.start))
            previous = conf
    texts = []
    for parts in (deleted, added):
        rows = np.concatenate([np.zeros((0, 2), np.int64), *parts])
        cuts = np.concatenate([[0], np.cumsum([p.shape[0] for p in parts], dtype=np.int64)]).tolist()
        texts.append(json_lists("[%d,%d]", [rows[:, 0], rows[:, 1]], cuts))
    items: list[tuple[float, int, int, str]] = []
    for g, (b, k, time, ready) in enumerate(boundaries):
        phase = f'"phase":{int(sched.phase_of[b][k])},' if isinstance(sched, IterationSchedule) else ""
        items.append(
            (
                time,
                b,
                k,
                f'{{"switch":{b},"configuration":{k},{phase}"time":{time!r},"ready":{ready!r},'
                f'"delete":{texts[0][g]},"add":{texts[1][g]}}}',
            )
        )
    items.sort(key=lambda x: x[:3])
    chunks = [f'{{"format":"{FORMAT}","version":1,"recourse":{total},"orders":[\n']
    chunks.append(",\n".join(x[3] for x in items))
    chunks.append(f'\n],"ocsched":{json.dumps(header(sched))}}}\n')
    return ExportResult((write_chunks(Path(path), chunks, force),), {"recourse": total})


def read_oxc_orders(path: str | os.PathLike[str]) -> AnySchedule:
    """Replay the orders of a file :func:`write_oxc_orders` wrote: each switch's state after each batch.

    Raises
    ------
    InvalidInputError
        If an order deletes a circuit the switch does not hold or adds one on a busy port.
    """
    p = Path(path)
    doc = read_json(p, "path")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InvalidInputError(f"`path` {p}: not an {FORMAT} file")
    head = doc["ocsched"]
    per: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for order in doc["orders"]:
        per.setdefault(int(order["switch"]), []).append((int(order["configuration"]), order))
    circuits: list[list[list[tuple[int, int]]]] = []
    for b, entry in enumerate(head["switches"]):
        both = bool(entry.get("bidirectional", False))
        cap = int(entry.get("ports_per_endpoint", 1))
        # The circuits held (each with its orientation, a circuit as often as it is held) and each
        # pool's ports in use (directed: input i, output j; bidirectional: both ends alike).
        state: Counter[tuple[int, int]] = Counter()
        used: Counter[tuple[int, int]] = Counter()
        confs = []
        for k, order in sorted(per.get(b, []), key=lambda x: x[0]):
            where = f"`path` {p}: switch {b} configuration {k}"
            for i, j in order["delete"]:
                held = next((c for c in ((i, j), (j, i))[: 1 + both] if state[c]), None)
                if held is None:
                    raise InvalidInputError(f"{where}: deletes {i}->{j}, which the switch does not hold")
                state[held] -= 1
                used[(0, i)] -= 1
                used[(0 if both else 1, j)] -= 1
            for i, j in order["add"]:
                ends = [(0, i), (0 if both else 1, j)]
                if any(used[e] + ends.count(e) > cap for e in ends):
                    raise InvalidInputError(f"{where}: adds {i}->{j} on a port already connected")
                state[(i, j)] += 1
                for e in ends:
                    used[e] += 1
            confs.append(sorted(state.elements()))
        circuits.append(confs)
    return rebuild(head, circuits, str(p))
