"""Slice schedules (Opera, OpenOptics): the schedule fitted to a uniform grid of slices.

A slice simulator runs time in slices of one length T: in each slice, each switch holds one
matching or is dark. :func:`fit_to_grid` fits the schedule to the grid rather than rounding each
configuration up: every delay becomes ``ceil(delta / T)`` dark slices, and each configuration's
duration a whole number of slices chosen so that every entry still gets at least what the
schedule credits it (the pieces' slack: an entry served by several configurations needs only
its total, so most configurations round *down* and a few up, one greedy pass), configurations
left with no slice are dropped with their delay, and the rest are laid out again on the grid,
back to back per switch, past down windows, after each phase's release. The result is validated
against what the original serves; :func:`write_slices` reports the quantization loss (makespan
on the grid / makespan - 1).

The file: line 1 ``#servers #downlinks #uplinks #ToRs`` (ports, 1, switches, ports), line 2
``#slices slice_ps delta_ps reconf_slices`` (picoseconds; delta the largest switch delay), then
one line per slice giving, for every (port, switch) in port-major order, the destination port,
or -1 while dark. ``<file>.ocsched.json`` holds the fitted schedule's header.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.io._files import write_atomic
from ocsched.io.circuits import schedule_fabric
from ocsched.io.exports._common import (
    AnySchedule,
    ExportResult,
    check_schedule,
    check_time_unit,
    flat,
    header,
    read_json,
    rebuild,
    sidecar_path,
)
from ocsched.iteration import Iteration, IterationSchedule, Phase
from ocsched.model import Configuration, as_demand
from ocsched.sequence.validate import validate_any

__all__ = ["FIT_METHODS", "fit_to_grid", "read_slices", "write_slices"]

#: ``fit``: whole slices chosen with the pieces' slack; ``round-up``: every duration rounded up.
FIT_METHODS = ("fit", "round-up")
_EPS = 1e-9


def _slices(x: float, t: float) -> int:
    """Whole slices covering ``x`` (within a relative 1e-9: 1.0000000001 slices is one)."""
    q = x / t
    return max(0, math.ceil(q - _EPS * max(1.0, q)))


def _first_slice_at(z: float, t: float) -> int:
    """The first slice starting at or after time ``z``, exactly (no tolerance: a delay placed
    there never meets a window ending at ``z``, so moving past the window always advances)."""
    m = math.ceil(z / t)
    while m * t < z:
        m += 1
    while m > 0 and (m - 1) * t >= z:
        m -= 1
    return m


def _required(
    sched: AnySchedule, fl: Any, demand: Any = None
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Per circuit its entry key (phase, src, dst), and per key what it must get: the demand when
    given (the pieces' slack: what the schedule serves beyond it), else what the schedule credits."""
    n = sched.ports
    phase = np.zeros(fl.src.size, np.int64)
    if isinstance(sched, IterationSchedule):
        per = [np.asarray(p, np.int64) for p in sched.phase_of]
        phase = np.concatenate(
            [np.zeros(0, np.int64), *(p[fl.conf[fl.switch == b]] for b, p in enumerate(per))]
        )
    key = (phase * n + fl.src) * n + fl.dst
    uniq, inv = np.unique(key, return_inverse=True)
    need = np.zeros(uniq.size)
    np.add.at(need, inv, fl.served)
    if demand is not None:
        dense = _dense_demand(sched, demand)
        need = np.minimum(need, dense[uniq])  # never more than the schedule itself credits
    need[(uniq % n) == (uniq // n) % n] = 0.0  # a port's circuit to itself serves nothing
    return inv.astype(np.int64), need


def _dense_demand(sched: AnySchedule, demand: Any) -> NDArray[np.float64]:
    """The demand as a flat array indexed by (phase * n + src) * n + dst."""
    n = sched.ports
    if isinstance(sched, IterationSchedule):
        if not isinstance(demand, Iteration) or len(demand.phases) != len(sched.gaps) or demand.n != n:
            raise InvalidInputError("`demand` of an iteration schedule must be its Iteration")
        return np.concatenate([np.asarray(p.demand.to_dense(), np.float64).ravel() for p in demand.phases])
    dense = np.asarray(as_demand(demand).to_dense(), np.float64)
    if dense.shape != (n, n):
        raise InvalidInputError(f"`demand` must be {n} x {n} like the schedule; got {dense.shape}")
    return dense.ravel()


def _counts(sched: AnySchedule, fl: Any, t: float, method: str, demand: Any) -> list[NDArray[np.int64]]:
    """Slices per configuration: every entry keeps at least its credit (see the module notes)."""
    fabric = schedule_fabric(sched)
    ups = [np.array([_slices(c.duration, t) for c in sw], np.int64) for sw in sched.switches]
    if method == "round-up":
        return ups
    inv, need = _required(sched, fl, demand)
    x = [np.array([math.floor(c.duration / t + _EPS) for c in sw], np.int64) for sw in sched.switches]
    x = [np.minimum(a, u) for a, u in zip(x, ups, strict=True)]
    got = np.zeros(need.size)
    gain = np.concatenate(
        [np.zeros(0), *(np.full(int(fl.offsets[b][-1]), fabric.switches[b].rate * t) for b in range(len(x)))]
    )
    row_x = np.concatenate([np.zeros(0, np.int64), *(x[b][fl.conf[fl.switch == b]] for b in range(len(x)))])
    np.add.at(got, inv, gain * row_x)
    # One pass, configurations with the largest rounded-off fraction first: a configuration gets
    # one more slice when one of its entries is still short. An entry short at its last
    # configuration has had every one of them raised, which covers any rounding loss.
    frac = [np.array([c.duration / t for c in sw]) - a for sw, a in zip(sched.switches, x, strict=True)]
    order = sorted(
        ((float(f[k]), b, k) for b, f in enumerate(frac) for k in range(f.size)),
        key=lambda z: (-z[0], z[1], z[2]),
    )
    for f, b, k in order:
        if f <= _EPS:
            break
        lo = int(fl.base[b] + fl.offsets[b][k])
        hi = int(fl.base[b] + fl.offsets[b][k + 1])
        keys = inv[lo:hi]
        if np.any(got[keys] < need[keys] * (1 - 1e-12)):
            x[b][k] += 1
            np.add.at(got, keys, gain[lo:hi])
    return x


def _lay_out(
    sched: AnySchedule, fl: Any, t: float, x: list[NDArray[np.int64]], anchored: bool
) -> tuple[list[list[tuple[int, int, int]]], list[int]]:
    """Place the kept configurations on the grid: per switch ``(k, first slice, slices)``; dark slices."""
    fabric = schedule_fabric(sched)
    s = len(sched.switches)
    dark = [_slices(fabric.switches[b].delta, t) for b in range(s)]
    if isinstance(sched, IterationSchedule):
        phases = [np.asarray(p, np.int64) for p in sched.phase_of]
        gaps = list(sched.gaps)
    else:
        phases = [np.zeros(len(sw), np.int64) for sw in sched.switches]
        gaps = [0.0]
    cursor = [0] * s
    placed: list[list[tuple[int, int, int]]] = [[] for _ in range(s)]
    end_time = 0.0
    for p, gap in enumerate(gaps):
        release = _slices(end_time + gap, t)
        last = release
        for b, sw in enumerate(sched.switches):
            windows = sorted(fabric.windows(b))
            failed = fabric.failed_ports(b)
            for k in np.flatnonzero(phases[b] == p).tolist():
                if x[b][k] <= 0 and not anchored:
                    continue
                st = max(cursor[b] + dark[b], release, _slices(sw[k].start, t) if anchored else 0)
                moved = True
                while moved:  # past every down window meeting the delay or the configuration
                    moved = False
                    for a, z in windows:
                        if a < (st + x[b][k]) * t and z > (st - dark[b]) * t:
                            if not math.isfinite(z):
                                raise InvalidInputError(
                                    f"switch {b} is down for good before configuration {k} fits"
                                )
                            st = _first_slice_at(z, t) + dark[b]  # > st: the loop ends
                            moved = True
                lo = int(fl.base[b] + fl.offsets[b][k])
                hi = int(fl.base[b] + fl.offsets[b][k + 1])
                ports = set(fl.src[lo:hi].tolist()) | set(fl.dst[lo:hi].tolist())
                fail = min((failed[q] for q in ports if q in failed), default=math.inf)
                if (st + x[b][k]) * t > fail:
                    raise InvalidInputError(
                        f"switch {b} configuration {k} would outlive a link failing at {fail:.12g}"
                    )
                placed[b].append((k, st, int(x[b][k])))
                cursor[b] = st + int(x[b][k])
                last = max(last, cursor[b])
        end_time = last * t
    return placed, dark


def fit_to_grid(
    schedule: AnySchedule, slice_length: float, *, method: str = "fit", demand: Any = None
) -> tuple[AnySchedule, dict[str, Any]]:
    """Return ``schedule`` fitted to slices of ``slice_length`` and a report (see the module notes).

    Every configuration starts and ends on a slice boundary and every entry is credited at least
    what ``schedule`` credits it, or, given the ``demand`` it was built for (a matrix, or the
    :class:`~ocsched.iteration.Iteration` of an iteration schedule), at least that demand: the
    schedule's over-service is slack the grid may take back. ``report``: ``quantization_loss``
    (grid makespan / makespan - 1), ``slices``, ``dark_slices`` (per switch), ``dropped``
    (configurations left with no slice).

    Raises
    ------
    InvalidInputError
        For a bad ``slice_length`` or ``method``, or when no fit on this grid is valid (a link
        failure or a down window the grid cannot place around).

    Examples
    --------
    >>> import ocsched
    >>> sched = ocsched.schedule([[0, 1.25], [0.95, 0]], switches=1, delta=0.4)
    >>> fitted, report = fit_to_grid(sched, 0.1)
    >>> [(c.start, c.duration) for c in fitted.switches[0]], round(report["quantization_loss"], 3)
    ([(0.4, 1.3)], 0.03)
    """
    sched = check_schedule(schedule)
    if not (isinstance(slice_length, int | float) and math.isfinite(slice_length) and slice_length > 0):
        raise InvalidInputError(f"`slice_length` must be a positive number; got {slice_length!r}")
    if method not in FIT_METHODS:
        raise InvalidInputError(f"`method` must be one of {', '.join(FIT_METHODS)}; got {method!r}")
    t = float(slice_length)
    fl = flat(sched)
    inv, need = _required(sched, fl, demand)
    attempts = [(method, False), ("round-up", True)] if method == "fit" else [(method, False), (method, True)]
    reason = ""
    for how, anchored in attempts:
        x = _counts(sched, fl, t, how, demand)
        try:
            placed, dark = _lay_out(sched, fl, t, x, anchored)
        except InvalidInputError as exc:
            reason = str(exc)
            continue
        fitted = _build(sched, fl, t, placed)
        target = demand if demand is not None else _demand(sched, inv, need, fl)
        if validate_any(fitted, target).ok:
            span = sched.makespan
            grid = fitted.makespan
            report = {
                "slice_length": t,
                "method": how if not anchored else f"{how} (anchored)",
                "makespan": span,
                "grid_makespan": grid,
                "quantization_loss": grid / span - 1.0 if span > 0 else 0.0,
                "slices": _slices(grid, t),
                "dark_slices": dark,
                "dropped": sum(len(sw) for sw in sched.switches) - sum(len(p) for p in placed),
            }
            return fitted, report
        reason = "the grid schedule does not validate"
    raise InvalidInputError(f"`slice_length` {t:.12g}: cannot fit the schedule to the grid ({reason})")


def _demand(sched: AnySchedule, inv: NDArray[np.int64], need: NDArray[np.float64], fl: Any) -> Any:
    """What the schedule credits each entry, as the demand (or iteration) the fit must still serve."""
    n = sched.ports
    k = len(sched.gaps) if isinstance(sched, IterationSchedule) else 1
    dense = np.zeros(k * n * n)
    first = np.zeros(need.size, np.int64)
    first[inv] = np.arange(inv.size)
    key = np.zeros(need.size, np.int64)
    ph = np.zeros(fl.src.size, np.int64)
    if isinstance(sched, IterationSchedule):
        ph = np.concatenate(
            [
                np.zeros(0, np.int64),
                *(np.asarray(p, np.int64)[fl.conf[fl.switch == b]] for b, p in enumerate(sched.phase_of)),
            ]
        )
    key = (ph * n + fl.src) * n + fl.dst
    np.maximum.at(dense, key[first], need) if need.size else None
    mats = dense.reshape(k, n, n)
    if isinstance(sched, IterationSchedule):
        return Iteration(
            [
                Phase(mats[p], gap_before=g, name=nm)
                for p, (g, nm) in enumerate(zip(sched.gaps, sched.names, strict=True))
            ]
        )
    return mats[0]


def _build(sched: AnySchedule, fl: Any, t: float, placed: list[list[tuple[int, int, int]]]) -> AnySchedule:
    """The schedule with its kept configurations at their grid times (same circuits, same fabric)."""
    switches = []
    for b, keep in enumerate(placed):
        confs = []
        for k, st, m in keep:
            lo = int(fl.base[b] + fl.offsets[b][k])
            hi = int(fl.base[b] + fl.offsets[b][k + 1])
            confs.append(Configuration.sparse(st * t, m * t, fl.src[lo:hi], fl.dst[lo:hi], ports=sched.ports))
        switches.append(tuple(confs))
    meta = {**sched.meta, "slice_length": t}
    if isinstance(sched, IterationSchedule):
        phase_of = tuple(
            tuple(int(sched.phase_of[b][k]) for k, _, _ in keep) for b, keep in enumerate(placed)
        )
        return dataclasses.replace(sched, switches=tuple(switches), phase_of=phase_of, meta=meta)
    return dataclasses.replace(sched, switches=tuple(switches), meta=meta)


def write_slices(
    schedule: AnySchedule,
    path: str | os.PathLike[str],
    *,
    slice_length: float,
    method: str = "fit",
    demand: Any = None,
    time_unit: str = "s",
    force: bool = False,
) -> ExportResult:
    """Fit ``schedule`` to the grid (:func:`fit_to_grid`) and write the slice file and its sidecar.

    ``info`` holds the fit's report, its ``quantization_loss`` among it.

    Examples
    --------
    >>> import tempfile, pathlib, ocsched
    >>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "slices.txt"
    >>> res = write_slices(sched, out, slice_length=0.25, time_unit="us")
    >>> out.read_text().splitlines()[:4], res.info["quantization_loss"]
    (['2 1 1 2', '6 250000 500000 2', ' -1 -1', ' -1 -1'], 0.0)
    """
    sched = check_schedule(schedule)
    per_unit = check_time_unit(time_unit)
    fitted, report = fit_to_grid(sched, slice_length, method=method, demand=demand)
    t = float(slice_length)
    n, s = sched.ports, len(sched.switches)
    fabric = schedule_fabric(sched)
    total = report["slices"]
    ps = 1e12 / per_unit
    width = max(len(str(max(n - 1, 0))), 2) + 1
    table = np.array([f"{v:>{width}}".encode() for v in range(-1, n)], dtype=f"S{width}")
    # Per switch, which configuration holds each slice (-1: dark).
    state = np.full((s, total), -1, np.int64)
    perms = []
    for b, sw in enumerate(fitted.switches):
        perm = np.full((len(sw) + 1, n), -1, np.int64)
        for k, c in enumerate(sw):
            st = round(c.start / t)
            state[b, st : st + round(c.duration / t)] = k
            ins, outs = c.circuit_arrays()
            perm[k, ins[outs >= 0]] = outs[outs >= 0]
        perms.append(perm)
    delta_ps = round(max(fabric.deltas, default=0.0) * ps)
    line1 = f"{n} 1 {s} {n}\n{total} {round(t * ps)} {delta_ps} {max(report['dark_slices'], default=0)}\n"

    def write(f: IO[bytes]) -> None:
        f.write(line1.encode())
        for lo in range(0, total, 256):
            hi = min(total, lo + 256)
            grid = np.empty((hi - lo, n, s), np.int64)
            for b in range(s):
                grid[:, :, b] = perms[b][state[b, lo:hi]]  # index -1 is the dark row
            text = table[grid.reshape(hi - lo, n * s) + 1]
            rows = np.concatenate(
                [text.view(np.uint8).reshape(hi - lo, -1), np.full((hi - lo, 1), 10, np.uint8)], axis=1
            )
            f.write(rows.tobytes())

    out = write_atomic(path, write, force=force)
    side = {**header(fitted), "slices": {**report, "time_unit": time_unit, "order": "port-major"}}
    side_path = write_atomic(sidecar_path(path), lambda f: f.write(json.dumps(side).encode()), force=force)
    return ExportResult((out, side_path), report)


def read_slices(path: str | os.PathLike[str]) -> AnySchedule:
    """Read a slice file :func:`write_slices` wrote: circuits from the slice lines, times from the sidecar."""
    p = Path(path)
    head: dict[str, Any] = read_json(sidecar_path(p), "path")
    info = head.pop("slices")
    t = float(info["slice_length"])
    try:
        lines = p.read_text().split("\n")
        _, _, s, n = (int(v) for v in lines[0].split())
        rows = lines[2:]
        circuits = []
        for b, entry in enumerate(head["switches"]):
            confs = []
            for st in entry["starts"]:
                cells = np.array(rows[round(st / t)].split(), dtype=np.int64).reshape(n, s)[:, b]
                (ins,) = np.nonzero(cells >= 0)
                confs.append(np.stack([ins, cells[ins]], axis=1))
            circuits.append(confs)
    except (OSError, ValueError, IndexError) as exc:
        raise InvalidInputError(f"`path` {p}: not a slice file ({exc})") from None
    return rebuild(head, circuits, str(p))
