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
the circuit is lit, times the link rate) and receive of that configuration, with ``comm_tag`` the
configuration's index over the whole schedule, or an idle COMP node for the configuration's
duration when the rank has no circuit in it; the chains of different switches run side by side.
Every node also carries ``ocsched_*`` attributes (switch, configuration, phase, exact start and
duration), which ASTRA-sim ignores and :func:`read_astra_sim` reads back, with ``ocsched.json``
(the schedule's fabric and header); ``system.json`` is the snippet to merge into a system
configuration.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from pathlib import Path
from typing import IO, Any

from ocsched import IterationSchedule, Schedule
from ocsched.errors import InvalidInputError
from ocsched.io import circuit_table, write_atomic
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
    data = schedule.to_dict()
    table = circuit_table(schedule)
    ports = int(data["ports"])
    total = sum(len(sw["configurations"]) for sw in data["switches"])
    if total >= 2**31:
        raise InvalidInputError(f"`schedule` has {total} configurations; comm_tag numbers at most 2^31")
    nodes: list[list[dict[str, Any]]] = [[] for _ in range(ports)]
    row = 0
    gid = 0
    for s, sw in enumerate(data["switches"]):
        tails: list[list[int]] = [[] for _ in range(ports)]  # each rank's last nodes on this switch
        prev_end = 0.0
        for k, conf in enumerate(sw["configurations"]):
            start, duration = float(conf["start"]), float(conf["duration"])
            circuits = [tuple(c) for c in conf["circuits"]]
            served = table["served"][row : row + len(circuits)]
            assert [
                tuple(x)
                for x in zip(
                    table["src"][row : row + len(circuits)],
                    table["dst"][row : row + len(circuits)],
                    strict=True,
                )
            ] == circuits
            row += len(circuits)
            phase = conf.get("phase")
            common = [
                ("ocsched_switch", "int64_val", s),
                ("ocsched_configuration", "int64_val", k),
                ("ocsched_start", "double_val", start),
                ("ocsched_duration", "double_val", duration),
            ]
            if phase is not None:
                common.append(("ocsched_phase", "int64_val", int(phase)))
            out_of = {i: (j, float(a)) for (i, j), a in zip(circuits, served, strict=True)}
            in_of = {j: (i, float(a)) for (i, j), a in zip(circuits, served, strict=True)}
            dark = _micros(start - prev_end, per_unit)
            for r in range(ports):
                chain = nodes[r]
                deps = tails[r]
                base = {"start_time_micros": int(start / per_unit * 1e6)}
                if dark:
                    nid = len(chain)
                    chain.append(
                        {
                            "id": nid,
                            "name": f"reconfigure_s{s}_c{k}",
                            "type": _COMP,
                            "data_deps": list(deps),
                            "duration_micros": dark,
                            "attr": [("is_cpu_op", "bool_val", False), *common],
                        }
                    )
                    deps = [nid]
                mine = []
                if r in out_of:
                    j, amount = out_of[r]
                    nid = len(chain)
                    chain.append(
                        {
                            "id": nid,
                            "name": f"send_s{s}_c{k}",
                            "type": _SEND,
                            "data_deps": list(deps),
                            **base,
                            "attr": [
                                ("comm_size", "int64_val", round(amount / per_unit * rate)),
                                ("comm_dst", "int32_val", j),
                                ("comm_tag", "int32_val", gid),
                                ("ocsched_served", "double_val", amount),
                                *common,
                            ],
                        }
                    )
                    mine.append(nid)
                if r in in_of:
                    i, amount = in_of[r]
                    nid = len(chain)
                    chain.append(
                        {
                            "id": nid,
                            "name": f"recv_s{s}_c{k}",
                            "type": _RECV,
                            "data_deps": list(deps),
                            **base,
                            "attr": [
                                ("comm_size", "int64_val", round(amount / per_unit * rate)),
                                ("comm_src", "int32_val", i),
                                ("comm_tag", "int32_val", gid),
                                *common,
                            ],
                        }
                    )
                    mine.append(nid)
                if not mine:
                    nid = len(chain)
                    chain.append(
                        {
                            "id": nid,
                            "name": f"idle_s{s}_c{k}",
                            "type": _COMP,
                            "data_deps": list(deps),
                            **base,
                            "duration_micros": _micros(duration, per_unit),
                            "attr": [("is_cpu_op", "bool_val", False), *common],
                        }
                    )
                    mine.append(nid)
                tails[r] = mine
            prev_end = start + duration
            gid += 1
    sidecar = {k: v for k, v in data.items() if k != "switches"}
    sidecar["switches"] = [{k: v for k, v in sw.items() if k != "configurations"} for sw in data["switches"]]
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
    files = []
    for r in range(ports):
        buf = io.BytesIO()
        codec.write_message(
            buf, codec.encode_metadata("0.0.4", [("schema", "string_val", "ocsched astra-sim export")])
        )
        for node in nodes[r]:
            codec.write_message(buf, codec.encode_node(node))
        files.append(_write_bytes(out / f"{prefix}.{r}.et", buf.getvalue(), force))
    for name, obj in ((SYSTEM, system), (SIDECAR, sidecar)):
        files.append(_write_bytes(out / name, json.dumps(obj, indent=1).encode(), force))
    return files


def _write_bytes(path: Path, payload: bytes, force: bool) -> Path:
    def write(f: IO[bytes]) -> None:
        f.write(payload)

    return write_atomic(path, write, force=force)


def read_astra_sim(
    folder: str | os.PathLike[str], *, prefix: str | None = None
) -> Schedule | IterationSchedule:
    """Read back what :func:`write_astra_sim` wrote: configurations from the ETs, the fabric from the sidecar.

    Every send must have its receive (same tag, size and circuit) on its destination's file.

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
    confs: dict[tuple[int, int], dict[str, Any]] = {}
    sends: dict[int, tuple[int, int, int]] = {}
    recvs: dict[int, tuple[int, int, int]] = {}
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
            attrs = {name: value for name, _, value in node["attr"]}
            where = f"{path}: node {node['id']}"
            if "ocsched_switch" not in attrs:
                raise InvalidInputError(f"{where}: no ocsched_switch attribute (not written by ocsched)")
            key = (int(attrs["ocsched_switch"]), int(attrs["ocsched_configuration"]))
            conf = confs.setdefault(
                key,
                {
                    "start": attrs["ocsched_start"],
                    "duration": attrs["ocsched_duration"],
                    "circuits": {},
                    "phase": attrs.get("ocsched_phase"),
                },
            )
            if (conf["start"], conf["duration"]) != (attrs["ocsched_start"], attrs["ocsched_duration"]):
                raise InvalidInputError(
                    f"{where}: configuration {key} has another start or duration than in other files"
                )
            if node["type"] == _SEND:
                dst, tag = int(attrs["comm_dst"]), int(attrs["comm_tag"])
                conf["circuits"][r] = dst
                sends[tag * ports + r] = (dst, int(attrs["comm_size"]), tag)
            elif node["type"] == _RECV:
                src, tag = int(attrs["comm_src"]), int(attrs["comm_tag"])
                recvs[tag * ports + src] = (r, int(attrs["comm_size"]), tag)
    if sends.keys() != recvs.keys() or any(sends[k] != recvs[k] for k in sends):
        bad = next(k for k in sorted(sends.keys() | recvs.keys()) if sends.get(k) != recvs.get(k))
        raise InvalidInputError(
            f"`folder` {base}: send and receive of tag {bad // ports} from rank {bad % ports} do not match "
            f"(send {sends.get(bad)}, receive {recvs.get(bad)})"
        )
    switches = sidecar["switches"]
    for s, sw in enumerate(switches):
        ks = sorted(k for (ss, k) in confs if ss == s)
        if ks != list(range(len(ks))):
            raise InvalidInputError(f"`folder` {base}: switch {s} is missing configurations")
        sw["configurations"] = []
        for k in ks:
            c = confs[(s, k)]
            entry: dict[str, Any] = {
                "start": c["start"],
                "duration": c["duration"],
                "circuits": [[i, j] for i, j in sorted(c["circuits"].items())],
            }
            if c["phase"] is not None:
                entry = {"phase": int(c["phase"]), **entry}
            sw["configurations"].append(entry)
    sidecar["switches"] = switches
    if sidecar.get("format") == "ocsched.iteration-schedule":
        return IterationSchedule.from_dict(sidecar)
    return Schedule.from_dict(sidecar)
