"""Chrome / Perfetto trace-event JSON: a schedule as a timeline to open in ui.perfetto.dev.

``{"traceEvents": [...], "displayTimeUnit": "ms", "ocsched": header}`` with complete events
(``"ph": "X"``, ``ts`` and ``dur`` in microseconds, as the format requires) on one process
(``pid`` :data:`PID`, named by a ``process_name`` metadata event): per switch a track (``tid`` =
the switch) with a slice per configuration (``args``: its exact ``start`` and ``duration`` in the
schedule's unit, ``circuits`` and what each ``served``) and a ``reconfigure`` slice for the dark
time before it; per switch a ``down`` track for its down windows and instant events where a link
fails; and, for an iteration schedule, an ``iteration`` track with each phase and the compute
gap before it. Every event has ``"cat": "ocsched"``, so a merged profiler trace
(``merge=KINETO.json``) keeps its own events and the schedule is read back from ours.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.io.circuits import schedule_fabric
from ocsched.io.exports._common import (
    AnySchedule,
    ExportResult,
    check_schedule,
    check_time_unit,
    config_cuts,
    flat,
    header,
    json_lists,
    read_json,
    rebuild,
    write_chunks,
)
from ocsched.iteration import IterationSchedule

__all__ = ["PID", "read_chrome_trace", "write_chrome_trace"]

#: The trace process of the schedule (high, so it does not clash with a profiler's ranks).
PID = 7_000_000
_DOWN_TID = 100_000
_ITERATION_TID = 200_000


def _load_merge(merge: str | os.PathLike[str]) -> dict[str, Any]:
    p = Path(merge)
    try:
        raw = p.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        doc = json.loads(raw)
    except (OSError, ValueError, EOFError) as exc:
        raise InvalidInputError(f"`merge` {p}: not a readable trace-event JSON ({exc})") from None
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise InvalidInputError(f"`merge` {p}: no traceEvents list")
    return doc


def write_chrome_trace(
    schedule: AnySchedule,
    path: str | os.PathLike[str],
    *,
    time_unit: str = "s",
    merge: str | os.PathLike[str] | None = None,
    offset_us: float | None = None,
    force: bool = False,
) -> ExportResult:
    """Write ``schedule`` as a trace-event JSON file (optionally over a profiler trace).

    Parameters
    ----------
    time_unit
        The unit of the schedule's times, a key of :data:`ocsched.units.TIME_UNITS`.
    merge
        A Chrome-trace JSON (a PyTorch profiler / Kineto trace, ``.json`` or gzipped) to overlay:
        its events are kept and the schedule's added on their own process.
    offset_us
        Where time 0 of the schedule goes on the trace's clock; by default the merged trace's
        earliest timestamp (0 without ``merge``).

    Examples
    --------
    >>> import tempfile, pathlib, json, ocsched
    >>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "trace.json"
    >>> _ = write_chrome_trace(sched, out, time_unit="us")
    >>> [(e["name"], e["ts"], e["dur"]) for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X"]
    [('reconfigure', 0.0, 0.5), ('configuration 0', 0.5, 1.0)]
    """
    sched = check_schedule(schedule)
    per_unit = check_time_unit(time_unit)
    base = _load_merge(merge) if merge is not None else {"traceEvents": []}
    if offset_us is None:
        stamps = [
            e["ts"]
            for e in base["traceEvents"]
            if isinstance(e, dict) and isinstance(e.get("ts"), int | float)
        ]
        offset_us = float(min(stamps)) if stamps else 0.0
    scale = 1e6 / per_unit
    fabric = schedule_fabric(sched)
    table = flat(sched)
    cuts = [c for per in config_cuts(table) for c in per[:-1]] + [int(table.src.size)]
    lists = json_lists("[%d,%d]", [table.src, table.dst], cuts)
    amounts = json_lists("%r", [table.served], cuts)
    conf_id = 0

    def us(t: float) -> float:
        return float(offset_us) + t * scale

    def meta(tid: int, name: str, sort: int) -> list[str]:
        return [
            json.dumps({"ph": "M", "pid": PID, "tid": tid, "name": "thread_name", "args": {"name": name}}),
            json.dumps(
                {"ph": "M", "pid": PID, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": sort}}
            ),
        ]

    events = [
        json.dumps(
            {"ph": "M", "pid": PID, "tid": 0, "name": "process_name", "args": {"name": "ocsched schedule"}}
        )
    ]
    cat = '"cat":"ocsched"'
    for b, sw in enumerate(sched.switches):
        spec = fabric.switches[b]
        events += meta(b, f"switch {b} (delay {spec.delta:.6g}, rate {spec.rate:.6g})", b)
        prev_end = 0.0
        for k, conf in enumerate(sw):
            dark_from = max(prev_end, conf.start - spec.delta)
            if conf.start > dark_from:
                events.append(
                    f'{{"ph":"X",{cat},"name":"reconfigure","pid":{PID},"tid":{b},'
                    f'"ts":{us(dark_from)!r},"dur":{(conf.start - dark_from) * scale!r},"args":{{}}}}'
                )
            phase = f',"phase":{int(sched.phase_of[b][k])}' if isinstance(sched, IterationSchedule) else ""
            name = f"configuration {k}"
            if isinstance(sched, IterationSchedule):
                name = f"{sched.names[sched.phase_of[b][k]]}: {name}"
            events.append(
                f'{{"ph":"X",{cat},"name":{json.dumps(name)},"pid":{PID},"tid":{b},'
                f'"ts":{us(conf.start)!r},"dur":{conf.duration * scale!r},"args":{{"switch":{b},'
                f'"configuration":{k}{phase},"start":{conf.start!r},"duration":{conf.duration!r},'
                f'"circuits":{lists[conf_id]},"served":{amounts[conf_id]}}}}}'
            )
            conf_id += 1
            prev_end = conf.end
        windows = fabric.windows(b)
        if windows:
            events += meta(_DOWN_TID + b, f"switch {b} down", len(sched.switches) + b)
        for a, z in windows:
            dur = (z - a) * scale if np.isfinite(z) else max(0.0, (sched.makespan - a) * scale)
            events.append(
                json.dumps(
                    {
                        "ph": "X",
                        "cat": "ocsched",
                        "name": "down",
                        "pid": PID,
                        "tid": _DOWN_TID + b,
                        "ts": us(a),
                        "dur": dur,
                        "args": {"start": a, "end": z if np.isfinite(z) else None},
                    }
                )
            )
        for port, t in sorted(fabric.failed_ports(b).items()):
            events.append(
                json.dumps(
                    {
                        "ph": "i",
                        "s": "t",
                        "cat": "ocsched",
                        "name": f"link {port} fails",
                        "pid": PID,
                        "tid": b,
                        "ts": us(t),
                        "args": {"port": port, "time": t},
                    }
                )
            )
    if isinstance(sched, IterationSchedule):
        events += meta(_ITERATION_TID, "iteration", 2 * len(sched.switches) + 1)
        prev = 0.0
        for k, (name, r, e) in enumerate(zip(sched.names, sched.releases, sched.ends, strict=True)):
            if r > prev:
                events.append(
                    json.dumps(
                        {
                            "ph": "X",
                            "cat": "ocsched",
                            "name": "compute gap",
                            "pid": PID,
                            "tid": _ITERATION_TID,
                            "ts": us(prev),
                            "dur": (r - prev) * scale,
                            "args": {"before_phase": k},
                        }
                    )
                )
            events.append(
                json.dumps(
                    {
                        "ph": "X",
                        "cat": "ocsched",
                        "name": name,
                        "pid": PID,
                        "tid": _ITERATION_TID,
                        "ts": us(r),
                        "dur": max(0.0, e - r) * scale,
                        "args": {"phase": k, "release": r, "end": e},
                    }
                )
            )
            prev = max(prev, e)
    others = {k: v for k, v in base.items() if k != "traceEvents"}
    others.setdefault("displayTimeUnit", "ms")
    others["ocsched"] = {**header(sched), "time_unit": time_unit, "offset_us": offset_us}
    theirs = [json.dumps(e) for e in base["traceEvents"]]
    chunks = ['{"traceEvents":[\n', ",\n".join([*theirs, *events]), "\n]"]
    chunks += [f",{json.dumps(k)}:{json.dumps(v)}" for k, v in others.items()]
    chunks.append("}\n")
    return ExportResult((write_chunks(Path(path), chunks, force),))


def read_chrome_trace(path: str | os.PathLike[str]) -> AnySchedule:
    """Read the schedule back from a trace :func:`write_chrome_trace` wrote (merged or not)."""
    p = Path(path)
    doc = read_json(p, "path")
    if not isinstance(doc, dict) or "ocsched" not in doc:
        raise InvalidInputError(f"`path` {p}: no ocsched header (not written by ocsched)")
    head = {k: v for k, v in doc["ocsched"].items() if k not in ("time_unit", "offset_us")}
    circuits: list[list[Any]] = [[[] for _ in sw["starts"]] for sw in head["switches"]]
    for e in doc["traceEvents"]:
        if (
            isinstance(e, dict)
            and e.get("cat") == "ocsched"
            and e.get("pid") == PID
            and "circuits" in e.get("args", {})
        ):
            a = e["args"]
            try:
                circuits[int(a["switch"])][int(a["configuration"])] = [tuple(c) for c in a["circuits"]]
            except (IndexError, KeyError, TypeError, ValueError) as exc:
                raise InvalidInputError(f"`path` {p}: bad configuration event ({exc!r})") from None
    return rebuild(head, circuits, str(p))
