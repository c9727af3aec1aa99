"""ASTRA-sim custom collectives: a schedule as per-rank Chakra ETs of sends and receives.

ASTRA-sim runs a collective with a custom implementation when its system JSON names one, e.g.
``"all-to-all-implementation-custom": ["<folder>/<prefix>"]``; each rank (its position in the
communicator group) then replays ``<prefix>.<rank>.et``: ``COMM_SEND_NODE`` (``comm_dst``,
``comm_size`` bytes, ``comm_tag``), ``COMM_RECV_NODE`` (``comm_src``, ...) and ``COMP_NODE``
(``duration_micros``), in the order their ``data_deps`` give (``astra-sim :
astra-sim/system/astraccl/custom_collectives/CustomAlgorithm.cc``).

:func:`write_astra_sim` writes, per rank and per switch, a chain in configuration order: a COMP
node for the dark time before the configuration (its reconfiguration delay, and any wait for a
phase's release; whole microseconds, rounded up, since ``duration_micros`` is an integer), then
the rank's send (``comm_size`` = the bytes its circuit serves: the switch's rate times the time
the validator credits the circuit with, times the link rate) and receive of that configuration,
with ``comm_tag`` the configuration's index over the whole schedule (switch by switch), or an idle
COMP node for the configuration's duration when the rank has no circuit in it; the chains of
different switches run side by side. ``ocsched.json`` holds the schedule's header (fabric, exact
starts and durations), which :func:`read_astra_sim` reads back with the circuits of the sends;
``system.json`` is the snippet to merge into a system configuration.

Every node has the same few fields, so the files are written in bulk: nodes of one shape are
fixed-size records (varints padded to a fixed width with continuation bytes, which protobuf
parsers accept), assembled with numpy rather than encoded one by one.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from pathlib import Path
from typing import IO

import numpy as np
from numpy.typing import NDArray

from ocsched import IterationSchedule, Schedule
from ocsched.errors import InvalidInputError
from ocsched.io._files import write_atomic
from ocsched.io.exports._common import flat, header, rebuild
from ocsched.io.traces import _chakra_codec as codec
from ocsched.units import TIME_UNITS, bytes_per_second

__all__ = ["COLLECTIVES", "SIDECAR", "read_astra_sim", "write_astra_sim"]

#: Collectives ASTRA-sim can replace with a custom implementation (system JSON key prefixes).
COLLECTIVES = ("all-to-all", "all-reduce", "all-gather", "reduce-scatter")
#: The file holding the schedule's fabric and header, next to the ET files.
SIDECAR = "ocsched.json"
SYSTEM = "system.json"
_COMP, _SEND, _RECV = 4, 5, 6


def _micros(value: float, per_unit: float) -> int:
    """Whole microseconds, rounded up (never shorter than the schedule's time)."""
    us = value / per_unit * 1e6
    return max(0, math.ceil(us - 1e-9 * max(1.0, abs(us))))


def write_astra_sim(
    schedule: Schedule | IterationSchedule,
    folder: str | os.PathLike[str],
    *,
    link_rate: str | float,
    time_unit: str = "s",
    prefix: str = "ocsched",
    collective: str = "all-to-all",
    force: bool = False,
) -> list[Path]:
    """Write ``schedule`` as ASTRA-sim custom-collective ETs, one per rank, into ``folder``.

    Parameters
    ----------
    schedule
        A single-matrix or iteration schedule, on any fabric.
    link_rate
        The line rate of one link (``"400Gbps"``): the schedule's times become bytes at it.
    time_unit
        The unit of the schedule's times (the demand's), a key of :data:`ocsched.units.TIME_UNITS`.
    prefix
        File names: ``<prefix>.<rank>.et``.
    collective
        Which ASTRA-sim collective the snippet in ``system.json`` replaces (:data:`COLLECTIVES`).
    force
        Overwrite existing files.

    Returns
    -------
    list of Path
        The ET files, then ``system.json`` and ``ocsched.json``.

    Raises
    ------
    InvalidInputError
        For a bad argument, or a schedule with more configurations than ``comm_tag`` can number.

    Examples
    --------
    >>> import tempfile, ocsched
    >>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    >>> files = write_astra_sim(sched, tempfile.mkdtemp(), link_rate=8.0)  # 8 B/s: 1 time unit = 8 bytes
    >>> [f.name for f in files]
    ['ocsched.0.et', 'ocsched.1.et', 'system.json', 'ocsched.json']
    """
    if not isinstance(schedule, Schedule | IterationSchedule):
        raise InvalidInputError(
            f"`schedule` must be an ocsched Schedule or IterationSchedule; got {type(schedule).__name__}"
        )
    rate = bytes_per_second(link_rate, name="link_rate")
    if time_unit not in TIME_UNITS:
        raise InvalidInputError(f"`time_unit` must be one of {', '.join(TIME_UNITS)}; got {time_unit!r}")
    if collective not in COLLECTIVES:
        raise InvalidInputError(f"`collective` must be one of {', '.join(COLLECTIVES)}; got {collective!r}")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", prefix):
        raise InvalidInputError(f"`prefix` must be letters, digits, '_' or '-'; got {prefix!r}")
    per_unit = TIME_UNITS[time_unit]
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"`folder` is a file, not a folder: {out}")
    total = sum(len(sw) for sw in schedule.switches)
    if total >= 2**31:
        raise InvalidInputError(f"`schedule` has {total} configurations; comm_tag numbers at most 2^31")
    ports = schedule.ports
    steps = _steps(schedule, per_unit, rate)
    meta = io.BytesIO()
    codec.write_message(
        meta, codec.encode_metadata("0.0.4", [("schema", "string_val", "ocsched astra-sim export")])
    )
    files = []
    for lo in range(0, ports, _RANKS_PER_CHUNK):
        hi = min(ports, lo + _RANKS_PER_CHUNK)
        for r, payload in zip(range(lo, hi), _encode_ranks(steps, lo, hi), strict=True):
            files.append(_write_bytes(out / f"{prefix}.{r}.et", meta.getvalue() + payload, force))
    sidecar = header(schedule)
    sidecar["astra_sim"] = {
        "prefix": prefix,
        "link_rate_bytes_per_s": rate,
        "time_unit": time_unit,
        "ranks": ports,
    }
    system = {
        f"{collective}-implementation-custom": [str(out / prefix)],
        "scheduling-policy": "FIFO",
        "preferred-dataset-splits": 1,
    }
    for name, obj in ((SYSTEM, system), (SIDECAR, sidecar)):
        files.append(_write_bytes(out / name, json.dumps(obj, indent=1).encode(), force))
    return files


_RANKS_PER_CHUNK = 32
_V = 5  # bytes of a padded varint (ids, ports, tags < 2^35)
_V8 = 8  # bytes of a padded varint for sizes and durations (< 2^56)


class _Steps:
    """Per configuration over the whole schedule (a step), what every rank does in it."""

    def __init__(self, count: int, ports: int) -> None:
        self.dark_us = np.zeros(count, np.int64)  # the COMP before the step (0: none)
        self.idle_us = np.zeros(count, np.int64)  # the COMP of a rank with no circuit in it
        self.prev = np.full(count, -1, np.int64)  # the previous step of the same switch
        self.out_peer = np.full((count, ports), -1, np.int64)
        self.in_peer = np.full((count, ports), -1, np.int64)
        self.out_size = np.zeros((count, ports), np.int64)
        self.in_size = np.zeros((count, ports), np.int64)


def _steps(schedule: Schedule | IterationSchedule, per_unit: float, rate: float) -> _Steps:
    table = flat(schedule)
    count = sum(len(sw) for sw in schedule.switches)
    st = _Steps(count, schedule.ports)
    gid = 0
    for b, sw in enumerate(schedule.switches):
        prev_end = 0.0
        base = int(table.base[b])
        off = table.offsets[b]
        for k, conf in enumerate(sw):
            st.dark_us[gid] = _micros(conf.start - prev_end, per_unit)
            st.idle_us[gid] = _micros(conf.duration, per_unit)
            st.prev[gid] = gid - 1 if k else -1
            lo, hi = base + int(off[k]), base + int(off[k + 1])
            src, dst = table.src[lo:hi], table.dst[lo:hi]
            size = np.rint(table.served[lo:hi] / per_unit * rate).astype(np.int64)
            st.out_peer[gid, src] = dst
            st.in_peer[gid, dst] = src
            st.out_size[gid, src] = size
            st.in_size[gid, dst] = size
            prev_end = conf.end
            gid += 1
    return st


def _varint(values: NDArray[np.int64], width: int) -> NDArray[np.uint8]:
    """Each value as a varint of exactly ``width`` bytes (padded with continuation bytes, which
    every protobuf parser accepts): fixed-size records, so a whole file is assembled in bulk."""
    v = values.astype(np.uint64)
    shifts = (7 * np.arange(width, dtype=np.uint64))[None, :]
    out = ((v[:, None] >> shifts) & np.uint64(0x7F)).astype(np.uint8)
    out[:, :-1] |= 0x80
    return out


def _const(data: bytes, n: int) -> NDArray[np.uint8]:
    return np.broadcast_to(np.frombuffer(data, np.uint8), (n, len(data)))


def _attr_int(name: str, number: int, values: NDArray[np.int64], width: int) -> list[NDArray[np.uint8]]:
    n = values.size
    body = 2 + len(name) + 1 + width
    return [
        _const(bytes([0x52, body, 0x0A, len(name)]) + name.encode() + bytes([number << 3]), n),
        _varint(values, width),
    ]


def _records(
    node_type: int,
    name: str,
    ids: NDArray[np.int64],
    deps: NDArray[np.int64],
    attrs: list[NDArray[np.uint8]],
    duration: NDArray[np.int64] | None,
) -> NDArray[np.uint8]:
    """Length-prefixed Node messages of one shape, one row each."""
    n = ids.size
    parts = [_const(b"\x08", n), _varint(ids, _V), _const(bytes([0x12, len(name)]) + name.encode(), n)]
    parts.append(_const(bytes([0x18, node_type]), n))
    m = deps.shape[1]
    if m:
        parts.append(_const(bytes([0x2A, _V * m]), n))
        parts += [_varint(deps[:, c], _V) for c in range(m)]
    if duration is not None:
        parts += [_const(b"\x38", n), _varint(duration, _V8)]
    parts += attrs
    body = np.concatenate([np.zeros((n, 0), np.uint8), *parts], axis=1)
    assert body.shape[1] < 128  # Invariant: a one-byte length prefix
    return np.concatenate([np.full((n, 1), body.shape[1], np.uint8), body], axis=1)


def _encode_ranks(st: _Steps, lo: int, hi: int) -> list[bytes]:
    """The ET payload (after the metadata) of ranks lo..hi-1: each a chain per switch."""
    rs = np.arange(lo, hi)
    send = st.out_peer[:, lo:hi] >= 0
    recv = st.in_peer[:, lo:hi] >= 0
    isend = send.astype(np.int64)
    dark = (st.dark_us > 0).astype(np.int64)[:, None]
    main = np.maximum(1, isend + recv)
    count = dark + main
    start: NDArray[np.int64] = np.cumsum(count, axis=0) - count  # per step and rank, its first id
    first = start + dark  # the first main node (send, else receive, else idle)
    second = np.where(send & recv, first + 1, -1)
    has_prev = (st.prev >= 0)[:, None]
    prev = np.maximum(st.prev, 0)
    prev_a = np.where(has_prev, first[prev], -1)
    prev_b = np.where(has_prev, second[prev], -1)
    # The main nodes depend on the step's dark node, else on the previous step's last nodes.
    main_a = np.where(dark > 0, start, prev_a)
    main_b = np.where(dark > 0, -1, prev_b)
    groups: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint8]]] = []
    grid = np.indices(send.shape)
    j_all: NDArray[np.int64] = grid[0]
    r_all: NDArray[np.int64] = grid[1]
    comp_attr = bytes([0x52, 14, 0x0A, 9]) + b"is_cpu_op" + bytes([0xD8, 0x01, 0x00])

    def make(
        kind: str, j: NDArray[np.int64], r: NDArray[np.int64], i: NDArray[np.int64], d: NDArray[np.int64]
    ) -> NDArray[np.uint8]:
        if kind in ("reconfigure", "idle"):
            us = st.dark_us[j] if kind == "reconfigure" else st.idle_us[j]
            return _records(_COMP, kind, i, d, [_const(comp_attr, i.size)], us)
        peer, size, label = (
            (st.out_peer, st.out_size, "comm_dst") if kind == "send" else (st.in_peer, st.in_size, "comm_src")
        )
        attrs = [
            *_attr_int("comm_size", 9, size[j, r + lo], _V8),
            *_attr_int(label, 7, peer[j, r + lo], _V),
            *_attr_int("comm_tag", 7, j, _V),
        ]
        return _records(_SEND if kind == "send" else _RECV, kind, i, d, attrs, None)

    def emit(
        kind: str,
        cells: NDArray[np.bool_],
        ids: NDArray[np.int64],
        da: NDArray[np.int64],
        db: NDArray[np.int64],
    ) -> None:
        for ndeps in (0, 1, 2):
            sel = cells & ((da >= 0).astype(np.int64) + (db >= 0) == ndeps)
            if not sel.any():
                continue
            deps = np.stack([da[sel], db[sel]], axis=1)[:, :ndeps]
            j, r = j_all[sel], r_all[sel]
            groups.append((r, ids[sel], make(kind, j, r, ids[sel], deps)))

    emit("reconfigure", np.broadcast_to(dark > 0, send.shape), start, prev_a, prev_b)
    emit("send", send, first, main_a, main_b)
    emit("recv", recv, first + isend, main_a, main_b)
    emit("idle", ~send & ~recv, first, main_a, main_b)
    # Lay every record out in (rank, id) order: each group's rows scattered to their offsets.
    rank = np.concatenate([np.zeros(0, np.int64), *(g[0] for g in groups)])
    ids = np.concatenate([np.zeros(0, np.int64), *(g[1] for g in groups)])
    width = np.concatenate([np.zeros(0, np.int64), *(np.full(g[2].shape[0], g[2].shape[1]) for g in groups)])
    order = np.lexsort((ids, rank))
    offset = np.zeros(order.size, np.int64)
    offset[order] = np.cumsum(width[order]) - width[order]
    buf = np.zeros(int(width.sum()), np.uint8)
    row = 0
    for _, _, mat in groups:
        n, w = mat.shape
        buf[offset[row : row + n, None] + np.arange(w)[None, :]] = mat
        row += n
    ends = np.searchsorted(rank[order], rs - lo, side="right")
    bounds = np.concatenate([[0], np.cumsum(width[order])])[np.concatenate([[0], ends])]
    return [buf[bounds[t] : bounds[t + 1]].tobytes() for t in range(hi - lo)]


def _write_bytes(path: Path, payload: bytes, force: bool) -> Path:
    def write(f: IO[bytes]) -> None:
        f.write(payload)

    return write_atomic(path, write, force=force)


def read_astra_sim(
    folder: str | os.PathLike[str], *, prefix: str | None = None
) -> Schedule | IterationSchedule:
    """Read back what :func:`write_astra_sim` wrote: circuits from the ETs, times from the sidecar.

    Every send must have its receive (same tag, size and circuit) on its destination's file; a
    send's ``comm_tag`` numbers its configuration over the whole schedule, switch by switch.

    Raises
    ------
    InvalidInputError
        If files are missing or inconsistent (the message names the file and node).
    """
    base = Path(folder)
    try:
        sidecar = json.loads((base / SIDECAR).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"`folder` {base}: no readable {SIDECAR} ({exc})") from None
    info = sidecar.pop("astra_sim", {})
    prefix = prefix or info.get("prefix", "ocsched")
    ports = int(sidecar["ports"])
    where_of = [(b, k) for b, sw in enumerate(sidecar["switches"]) for k in range(len(sw["starts"]))]
    circuits: list[list[list[tuple[int, int]]]] = [[[] for _ in sw["starts"]] for sw in sidecar["switches"]]
    sends: dict[tuple[int, int], tuple[int, int]] = {}
    recvs: dict[tuple[int, int], tuple[int, int]] = {}
    for r in range(ports):
        path = base / f"{prefix}.{r}.et"
        try:
            with path.open("rb") as f:
                messages = list(codec.iter_messages(f))
        except OSError as exc:
            raise InvalidInputError(
                f"`folder` {base}: cannot read {path.name} ({exc.strerror or exc})"
            ) from None
        except codec.WireError as exc:
            raise InvalidInputError(f"{path}: not a Chakra trace ({exc})") from None
        for raw in messages[1:]:
            node = codec.node_dict(raw)
            if node["type"] not in (_SEND, _RECV):
                continue
            attrs = {name: value for name, _, value in node["attr"]}
            tag = int(attrs.get("comm_tag", -1))
            if not 0 <= tag < len(where_of):
                raise InvalidInputError(f"{path}: node {node['id']}: comm_tag {tag} names no configuration")
            if node["type"] == _SEND:
                dst = int(attrs["comm_dst"])
                b, k = where_of[tag]
                circuits[b][k].append((r, dst))
                sends[(tag, r)] = (dst, int(attrs["comm_size"]))
            else:
                recvs[(tag, int(attrs["comm_src"]))] = (r, int(attrs["comm_size"]))
    if sends != recvs:
        bad = next(k for k in sorted(sends.keys() | recvs.keys()) if sends.get(k) != recvs.get(k))
        raise InvalidInputError(
            f"`folder` {base}: send and receive of tag {bad[0]} from rank {bad[1]} do not match "
            f"(send {sends.get(bad)}, receive {recvs.get(bad)})"
        )
    return rebuild(sidecar, circuits, str(base))
