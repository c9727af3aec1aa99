"""What every exporter shares: the schedule's header, its circuits as flat arrays, fast text."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.io._files import write_atomic
from ocsched.io.circuits import rows_text, rows_with_offsets, schedule_fabric
from ocsched.iteration import IterationSchedule
from ocsched.model import Schedule
from ocsched.timing.served import served_per_circuit
from ocsched.units import TIME_UNITS

AnySchedule = Schedule | IterationSchedule
#: The key (JSON formats) or file suffix (sidecars) of the schedule's header.
HEADER_KEY = "ocsched"
SIDECAR_SUFFIX = ".ocsched.json"


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: its files, and what it measured (recourse, quantization loss...)."""

    paths: tuple[Path, ...]
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Flat:
    """A schedule's circuits as flat arrays in schedule order (switch, configuration, input port)."""

    switch: NDArray[np.int64]
    conf: NDArray[np.int64]  # the configuration's index on its switch
    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    served: NDArray[np.float64]
    offsets: list[NDArray[np.int64]]  # per switch, circuit offsets of its configurations (K + 1)
    base: NDArray[np.int64]  # per switch, the first row of its circuits


def check_schedule(schedule: object) -> AnySchedule:
    if not isinstance(schedule, Schedule | IterationSchedule):
        raise InvalidInputError(
            f"`schedule` must be an ocsched Schedule or IterationSchedule; got {type(schedule).__name__}"
        )
    return schedule


def check_time_unit(time_unit: str) -> float:
    if time_unit not in TIME_UNITS:
        raise InvalidInputError(f"`time_unit` must be one of {', '.join(TIME_UNITS)}; got {time_unit!r}")
    return TIME_UNITS[time_unit]


def flat(schedule: AnySchedule) -> Flat:
    """The circuits and what each serves (the validator's credit: :func:`served_per_circuit`)."""
    fabric = schedule_fabric(schedule)
    sw_, cf_, src_, dst_, srv_ = [], [], [], [], []
    offsets: list[NDArray[np.int64]] = []
    base = np.zeros(len(schedule.switches), np.int64)
    row = 0
    for b, sw in enumerate(schedule.switches):
        base[b] = row
        arrays = [c.circuit_arrays() for c in sw]
        lit = [j >= 0 for _, j in arrays]
        sizes = np.array([int(m.sum()) for m in lit], dtype=np.int64)
        offsets.append(np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes)]))
        if not sw:
            continue
        total = int(sizes.sum())
        row += total
        sw_.append(np.full(total, b, np.int64))
        cf_.append(np.repeat(np.arange(len(sw), dtype=np.int64), sizes))
        src_.append(np.concatenate([i[m] for (i, _), m in zip(arrays, lit, strict=True)]).astype(np.int64))
        dst_.append(np.concatenate([j[m] for (_, j), m in zip(arrays, lit, strict=True)]).astype(np.int64))
        srv_.append(np.concatenate(served_per_circuit(sw, fabric, b)).astype(np.float64))
    z = np.zeros(0, np.int64)
    return Flat(
        np.concatenate([z, *sw_]),
        np.concatenate([z, *cf_]),
        np.concatenate([z, *src_]),
        np.concatenate([z, *dst_]),
        np.concatenate([np.zeros(0), *srv_]),
        offsets,
        base,
    )


def header(schedule: AnySchedule) -> dict[str, Any]:
    """The schedule's JSON without its circuits: fabric, provenance, and per switch its timeline.

    Each switch entry gets ``starts``, ``durations``, ``sizes`` (circuits per configuration) and,
    for an iteration schedule, ``phases``: exact floats, so a reader rebuilds the same times.
    """
    empty_switches = tuple(() for _ in schedule.switches)
    if isinstance(schedule, IterationSchedule):
        empty: AnySchedule = dataclasses.replace(
            schedule, switches=empty_switches, phase_of=tuple(() for _ in schedule.switches)
        )
    else:
        empty = dataclasses.replace(schedule, switches=empty_switches)
    data = empty.to_dict()
    for key in ("makespan", "exposed"):
        data.pop(key, None)
    for ph in data.get("phases", []):
        ph.pop("start", None)
        ph.pop("end", None)
    for b, (entry, sw) in enumerate(zip(data["switches"], schedule.switches, strict=True)):
        entry.pop("configurations", None)
        entry["starts"] = [c.start for c in sw]
        entry["durations"] = [c.duration for c in sw]
        entry["sizes"] = [int(np.count_nonzero(c.circuit_arrays()[1] >= 0)) for c in sw]
        if isinstance(schedule, IterationSchedule):
            entry["phases"] = [int(k) for k in schedule.phase_of[b]]
    return data


def rebuild(
    head: dict[str, Any],
    circuits: Sequence[Sequence[Sequence[tuple[int, int]] | NDArray[np.int64]]],
    where: str,
) -> AnySchedule:
    """The schedule of ``head`` (:func:`header`) with ``circuits[b][k]`` on configuration k of switch b."""
    data = json.loads(json.dumps(head))  # a deep copy
    try:
        switches = data["switches"]
        if len(circuits) != len(switches):
            raise InvalidInputError(f"{where}: {len(circuits)} switches, the header has {len(switches)}")
        for b, entry in enumerate(switches):
            starts, durations = entry.pop("starts"), entry.pop("durations")
            sizes, phases = entry.pop("sizes"), entry.pop("phases", None)
            if len(circuits[b]) != len(starts):
                raise InvalidInputError(
                    f"{where}: switch {b} has {len(circuits[b])} configurations, the header {len(starts)}"
                )
            confs = []
            for k, (t, w) in enumerate(zip(starts, durations, strict=True)):
                pairs = np.asarray(circuits[b][k], dtype=np.int64).reshape(-1, 2)
                if pairs.shape[0] != sizes[k]:
                    raise InvalidInputError(
                        f"{where}: switch {b} configuration {k} has {pairs.shape[0]} circuits, "
                        f"the header {sizes[k]}"
                    )
                conf: dict[str, Any] = {"start": t, "duration": w, "circuits": pairs.tolist()}
                if phases is not None:
                    conf = {"phase": phases[k], **conf}
                confs.append(conf)
            entry["configurations"] = confs
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"{where}: malformed ocsched header ({exc!r})") from None
    if data.get("format") == "ocsched.iteration-schedule":
        return IterationSchedule.from_dict(data)
    return Schedule.from_dict(data)


def pairs_json(src: NDArray[np.int64], dst: NDArray[np.int64]) -> str:
    """``[[i,j],...]`` as JSON text."""
    if not src.size:
        return "[]"
    return "[" + rows_text("[%d,%d],", [src, dst])[:-1] + "]"


def floats_json(values: NDArray[np.float64]) -> str:
    """A JSON list of floats (shortest round-trip text; non-finite values are refused upstream)."""
    return "[" + ",".join(map(repr, values.tolist())) + "]"


def json_lists(item: str, columns: Sequence[NDArray[Any]], cuts: Sequence[int]) -> list[str]:
    """JSON lists of the rows between consecutive ``cuts``, each row formatted with ``item``
    (e.g. ``"[%d,%d]"``): one bulk format for every list."""
    text, off = rows_with_offsets(item + ",", columns)
    out = []
    for lo, hi in itertools.pairwise(cuts):
        out.append("[" + text[off[lo] : off[hi] - 1] + "]" if hi > lo else "[]")
    return out


def config_cuts(fl: Flat) -> list[list[int]]:
    """Per switch, the flat rows where each configuration's circuits start (and the last ends)."""
    return [(int(b) + o).tolist() for b, o in zip(fl.base, fl.offsets, strict=True)]


def write_bytes(path: Path, payload: bytes, force: bool) -> Path:
    def write(f: IO[bytes]) -> None:
        f.write(payload)

    return write_atomic(path, write, force=force)


def write_chunks(path: Path, chunks: Sequence[str], force: bool) -> Path:
    def write(f: IO[bytes]) -> None:
        for c in chunks:
            f.write(c.encode())

    return write_atomic(path, write, force=force)


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    return Path(str(path) + SIDECAR_SUFFIX)


def read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise InvalidInputError(f"`{what}` {path}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise InvalidInputError(f"`{what}` {path}: not JSON ({exc})") from None
