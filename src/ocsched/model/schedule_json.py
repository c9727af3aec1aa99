"""The schedule JSON form: version 1 (uniform all-stop fabric) and version 2 (any fabric)."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ocsched._limits import MAX_EPS_ENTRIES, MAX_PORTS
from ocsched.errors import InvalidInputError
from ocsched.fabric import (
    MAX_DOWN_WINDOWS,
    MAX_FAILED_LINKS,
    MAX_SWITCHES,
    MODELS,
    Fabric,
    LinkDown,
    Switch,
    SwitchDown,
    _port_keys,
)
from ocsched.model.configuration import Configuration
from ocsched.model.demand import Demand

if TYPE_CHECKING:
    from ocsched.model.schedule import Schedule

SCHEDULE_FORMAT = "ocsched.schedule"
SCHEDULE_VERSION = 1
#: Version written for anything but a uniform all-stop fabric (per-switch delta and rate, failures, model).
SCHEDULE_VERSION_FABRIC = 2
#: How a schedule was found: a heuristic, or an exact solver's outcome.
STATUSES = ("heuristic", "optimal", "node_limit", "time_limit", "infeasible", "unbounded", "error")


def schedule_to_dict(schedule: Schedule) -> dict[str, Any]:
    """Return the versioned JSON-ready form of ``schedule`` (see :meth:`~ocsched.model.Schedule.to_dict`)."""
    confs = [
        [{"start": c.start, "duration": c.duration, "circuits": [list(p) for p in c.circuits]} for c in sw]
        for sw in schedule.switches
    ]
    out: dict[str, Any]
    if schedule.is_uniform:
        out = {
            "format": SCHEDULE_FORMAT,
            "version": SCHEDULE_VERSION,
            "ports": schedule.ports,
            "delta": schedule.delta,
            "makespan": schedule.makespan,
            "algorithm": schedule.algorithm,
            "lower_bound": schedule.lower_bound,
            "splits": schedule.splits,
            "switches": [{"configurations": c} for c in confs],
        }
    else:
        fab = schedule.on_fabric()
        out = {
            "format": SCHEDULE_FORMAT,
            "version": SCHEDULE_VERSION_FABRIC,
            "ports": schedule.ports,
            "model": fab.model,
            "makespan": schedule.makespan,
            "algorithm": schedule.algorithm,
            "lower_bound": schedule.lower_bound,
            "splits": schedule.splits,
            "switches": [
                {"delta": x.delta, "rate": x.rate, **_port_keys(x), "configurations": c}
                for x, c in zip(fab.switches, confs, strict=True)
            ],
            "down": [
                {"switch": d.switch, "start": d.start, "end": None if d.end == math.inf else d.end}
                for d in fab.down
            ],
            "failed_links": [
                {"port": x.port, "switch": x.switch, "start": x.start} for x in fab.failed_links
            ],
        }
        if fab.eps_rate or schedule.eps is not None:
            # Only with a packet switch, so plain version-2 files stay as they were.
            r = schedule.eps
            out["eps"] = {
                "rate": fab.eps_rate,
                "latency": fab.eps_latency,
                "entries": []
                if r is None
                else [[int(i), int(j), float(v)] for i, j, v in zip(r.rows, r.cols, r.values, strict=True)],
            }
    # Written only when they say more than "a heuristic built it", so files stay as before.
    if schedule.status != "heuristic":
        out["status"] = schedule.status
    if schedule.dual_bound is not None:
        out["dual_bound"] = schedule.dual_bound
    if schedule.meta:
        out["meta"] = dict(schedule.meta)
    return out


def schedule_from_dict(cls: type[Schedule], data: Mapping[str, Any]) -> Schedule:
    """Read a JSON-ready schedule into a ``cls`` (see :meth:`~ocsched.model.Schedule.from_dict`)."""
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"schedule must be a JSON object; got {type(data).__name__}")
    if data.get("format") != SCHEDULE_FORMAT:
        raise InvalidInputError(f"schedule `format` must be {SCHEDULE_FORMAT!r}; got {data.get('format')!r}")
    version = data.get("version")
    if isinstance(version, bool) or version not in (SCHEDULE_VERSION, SCHEDULE_VERSION_FABRIC):
        raise InvalidInputError(
            f"schedule `version` must be {SCHEDULE_VERSION} or {SCHEDULE_VERSION_FABRIC}; "
            f"got {data.get('version')!r}"
        )
    ports = _field(data, "ports", int)
    if not 1 <= ports <= MAX_PORTS:
        raise InvalidInputError(f"schedule `ports` must be in 1..{MAX_PORTS}; got {ports}")
    fabric: Fabric | None = None
    # A field of the other version would be silently ignored (a v1 file's failed links, a v2
    # file's single delta): the file does not say which to believe, so it is refused.
    foreign = ("model", "down", "failed_links", "eps") if version == SCHEDULE_VERSION else ("delta",)
    for key in foreign:
        if key in data:
            raise InvalidInputError(
                f"schedule `{key}` is not part of version {version}"
                + (
                    " (use version 2 for a fabric)"
                    if version == SCHEDULE_VERSION
                    else " (each switch has its own)"
                )
            )
    if version == SCHEDULE_VERSION:
        delta = float(_field(data, "delta", numbers.Real))
        if not math.isfinite(delta) or delta < 0:
            raise InvalidInputError(f"schedule `delta` must be a finite number >= 0; got {delta!r}")
    else:
        fabric = _read_fabric(data)
        delta = max(fabric.deltas)
    eps = None
    if version == SCHEDULE_VERSION_FABRIC and data.get("eps") is not None:
        assert fabric is not None
        fabric, eps = _read_eps(data["eps"], fabric, ports)
    lb = _optional(data, "lower_bound", numbers.Real, None)
    algorithm = _optional(data, "algorithm", str, "")
    splits = _optional(data, "splits", int, 0)
    meta = _optional(data, "meta", Mapping, {})
    status = _optional(data, "status", str, "heuristic")
    if status not in STATUSES:
        raise InvalidInputError(f"schedule `status` must be one of {', '.join(STATUSES)}; got {status!r}")
    dual = _optional(data, "dual_bound", numbers.Real, None)
    recorded = _optional(data, "makespan", numbers.Real, None)
    switches_raw = _field(data, "switches", list)
    switches = []
    for b, sw in enumerate(switches_raw):
        where = f"switches[{b}]"
        sw = _object(sw, where)
        if version == SCHEDULE_VERSION and ("delta" in sw or "rate" in sw):
            # A per-switch delay or rate in a version-1 file would be ignored for the top-level delta.
            raise InvalidInputError(
                f"schedule `{where}` has a {'delta' if 'delta' in sw else 'rate'} of its own: "
                "that is version 2 (version 1 has one top-level delta, rate 1)"
            )
        confs = []
        # An endpoint may hold several circuits on a multi-port or bidirectional switch: there the
        # validator counts its ports (the reader only refuses what no switch allows).
        plain = fabric is None or b >= fabric.size or fabric.switches[b].is_plain
        for k, c in enumerate(_field(sw, "configurations", list, where)):
            w = f"{where}.configurations[{k}]"
            c = _object(c, w)
            circuits = _field(c, "circuits", list, w)
            ins: list[int] = []
            outs: list[int] = []
            seen: set[int] = set()
            for pair in circuits:
                if (
                    not isinstance(pair, list)
                    or len(pair) != 2
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
                ):
                    raise InvalidInputError(
                        f"schedule `{w}.circuits` must hold [i, j] integer pairs; got {pair!r}"
                    )
                i, j = pair
                if not (0 <= i < ports and 0 <= j < ports):
                    raise InvalidInputError(
                        f"schedule `{w}.circuits` has port out of range 0..{ports - 1}: {pair}"
                    )
                if i in seen and plain:
                    raise InvalidInputError(f"schedule `{w}.circuits` uses input port {i} twice")
                seen.add(i)
                ins.append(i)
                outs.append(j)
            start = float(_field(c, "start", numbers.Real, w))
            duration = float(_field(c, "duration", numbers.Real, w))
            confs.append(
                Configuration.sparse(
                    start, duration, np.array(ins, np.int64), np.array(outs, np.int64), ports=ports
                )
            )
        switches.append(tuple(confs))
    sched = cls(
        ports=ports,
        delta=delta,
        switches=tuple(switches),
        algorithm=algorithm,
        lower_bound=None if lb is None else float(lb),
        splits=splits,
        meta=dict(meta),
        status=status,
        dual_bound=None if dual is None else float(dual),
        fabric=fabric,
        eps=eps,
    )
    if fabric is not None and fabric.size != len(switches):
        raise InvalidInputError(
            f"schedule `switches` has {len(switches)} entries but its fabric {fabric.size} switches"
        )
    if recorded is not None and abs(float(recorded) - sched.makespan) > 1e-9 * abs(sched.makespan):
        raise InvalidInputError(
            f"schedule `makespan` = {recorded} disagrees with its configurations, "
            f"which end at {sched.makespan}"
        )
    return sched


_KIND_NAMES = {
    numbers.Real: "a number",
    int: "an integer",
    str: "a string",
    Mapping: "an object",
    list: "a list",
}


def _read_fabric(data: Mapping[str, Any]) -> Fabric:
    """The fabric of a version-2 schedule: per-switch delta and rate, down windows, failed links, model."""
    model = _optional(data, "model", str, "all-stop")
    if model not in MODELS:
        raise InvalidInputError(f"schedule `model` must be one of {', '.join(MODELS)}; got {model!r}")
    # Invariant: the lists are measured before anything is built, with the caps of fabric files,
    # so a schedule file cannot ask for more work than a fabric file may.
    for key, cap in (
        ("switches", MAX_SWITCHES),
        ("down", MAX_DOWN_WINDOWS),
        ("failed_links", MAX_FAILED_LINKS),
    ):
        items = data.get(key)
        if isinstance(items, list) and len(items) > cap:
            raise InvalidInputError(f"schedule `{key}` lists {len(items)} entries; at most {cap}")
    sws = []
    for b, sw in enumerate(_field(data, "switches", list)):
        where = f"switches[{b}]"
        sw = _object(sw, where, _SWITCH_KEYS)
        d, r = _field(sw, "delta", numbers.Real, where), _optional(sw, "rate", numbers.Real, 1.0)
        ports = {key: sw[key] for key in ("bidirectional", "ports_per_endpoint") if key in sw}
        try:
            sws.append(Switch(float(d), float(r), **ports))
        except InvalidInputError as exc:
            raise InvalidInputError(f"schedule `{where}`: {exc}") from None
    if not sws:
        raise InvalidInputError("schedule `switches` must not be empty in version 2")
    down = []
    for k, d in enumerate(_optional(data, "down", list, [])):
        where = f"down[{k}]"
        d = _object(d, where, _DOWN_KEYS)
        end = _optional(d, "end", numbers.Real, math.inf)
        sw_, st = _field(d, "switch", int, where), _field(d, "start", numbers.Real, where)
        try:
            down.append(SwitchDown(sw_, float(st), float(end)))
        except InvalidInputError as exc:
            raise InvalidInputError(f"schedule `{where}`: {exc}") from None
    links = []
    for k, x in enumerate(_optional(data, "failed_links", list, [])):
        where = f"failed_links[{k}]"
        x = _object(x, where, _LINK_KEYS)
        port, sw_, st = (
            _field(x, "port", int, where),
            _field(x, "switch", int, where),
            _optional(x, "start", numbers.Real, 0.0),
        )
        try:
            links.append(LinkDown(port, sw_, float(st)))
        except InvalidInputError as exc:
            raise InvalidInputError(f"schedule `{where}`: {exc}") from None
    try:
        return Fabric(tuple(sws), tuple(down), tuple(links), model=model)
    except InvalidInputError as exc:
        raise InvalidInputError(f"schedule fabric: {exc}") from None


def _read_eps(raw: Any, fabric: Fabric, ports: int) -> tuple[Fabric, Demand]:
    """The ``eps`` section of a version-2 schedule: the packet switch's rate and latency, and its entries."""
    sec = _object(raw, "eps", frozenset({"rate", "latency", "entries"}))
    rate = float(_field(sec, "rate", numbers.Real, "eps"))
    latency = float(_optional(sec, "latency", numbers.Real, 0.0))
    entries = _field(sec, "entries", list, "eps")
    if len(entries) > MAX_EPS_ENTRIES:
        raise InvalidInputError(
            f"schedule `eps.entries` lists {len(entries)} entries; at most {MAX_EPS_ENTRIES}"
        )
    rows, cols, vals = [], [], []
    for k, e in enumerate(entries):
        if (
            not isinstance(e, list)
            or len(e) != 3
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in e[:2])
            or isinstance(e[2], bool)
            or not isinstance(e[2], numbers.Real)
        ):
            raise InvalidInputError(f"schedule `eps.entries[{k}]` must be [i, j, amount]; got {e!r}")
        i, j, v = int(e[0]), int(e[1]), float(e[2])
        if not (0 <= i < ports and 0 <= j < ports) or i == j:
            raise InvalidInputError(
                f"schedule `eps.entries[{k}]` needs two different ports in 0..{ports - 1}; got {e!r}"
            )
        if not (math.isfinite(v) and v > 0):
            raise InvalidInputError(
                f"schedule `eps.entries[{k}]` amount must be finite and > 0; got {e[2]!r}"
            )
        rows.append(i)
        cols.append(j)
        vals.append(v)
    try:
        fab = dataclasses.replace(fabric, eps_rate=rate, eps_latency=latency)
    except InvalidInputError as exc:
        raise InvalidInputError(f"schedule `eps`: {exc}") from None
    if not fab.eps_rate > 0:
        raise InvalidInputError(f"schedule `eps.rate` must be > 0; got {rate!r}")
    mat = sp.coo_array((vals, (rows, cols)), shape=(ports, ports)).tocsr()
    mat.sum_duplicates()
    return fab, Demand.from_matrix(mat, name="schedule `eps.entries`")


#: The keys a version-2 fabric's objects may have (the JSON Schema's ``additionalProperties:
#: false``): an unknown one (``"rates"``, ``"stop"``) would be ignored without a word.
_SWITCH_KEYS = frozenset({"delta", "rate", "bidirectional", "ports_per_endpoint", "configurations"})
_DOWN_KEYS = frozenset({"switch", "start", "end"})
_LINK_KEYS = frozenset({"port", "switch", "start"})


def _object(value: Any, where: str, keys: frozenset[str] | None = None) -> Mapping[str, Any]:
    """``value`` if it is a JSON object (with only ``keys``, if given), else an error naming ``where``."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"schedule `{where}` must be an object; got {value!r}")
    if keys is not None and not keys.issuperset(value):
        extra = sorted(str(k) for k in value if k not in keys)[0]
        raise InvalidInputError(
            f"schedule `{where}` has unknown key {extra!r}; valid: {', '.join(sorted(keys))}"
        )
    return value


def _optional(data: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    """An optional top-level field: ``default`` when absent or null, else type-checked."""
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, kind):
        raise InvalidInputError(f"schedule `{key}` must be {_KIND_NAMES[kind]}; got {value!r}")
    return value


def _field(data: Mapping[str, Any], key: str, kind: type, where: str = "") -> Any:
    prefix = f"{where}." if where else ""
    if key not in data:
        raise InvalidInputError(f"schedule `{prefix}{key}` is missing")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise InvalidInputError(f"schedule `{prefix}{key}` must be {_KIND_NAMES[kind]}; got {value!r}")
    return value
