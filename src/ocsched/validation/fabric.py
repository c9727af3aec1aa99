"""Which fabric a schedule is judged on: the one its file claims, checked against the one given.

A schedule file (v2) names its own fabric; :func:`~ocsched.validation.validate` compares it
with the fabric the caller gives (or with ``delta``) and reports every difference, and the
claims a schedule makes about its own fabric (failed links on ports that exist, ...).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_delta
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, Switch
from ocsched.model import STATUSES, Configuration, Schedule


def _failed_by_switch(fabric: Fabric) -> list[dict[int, float]]:
    """Per switch, ``{port: earliest failure of its link}``, in one pass over the failed links."""
    out: list[dict[int, float]] = [{} for _ in range(fabric.size)]
    for x in fabric.failed_links:
        per = out[x.switch]
        per[x.port] = min(x.start, per.get(x.port, math.inf))
    return out


def _check_claims(schedule: Schedule, own: Fabric, tol: float, add: Callable[[str, str], None]) -> None:
    """Report what the schedule says about itself that cannot be true, or that schedule() refuses."""
    n = schedule.ports
    for x in own.failed_links:
        if x.port >= n:
            add("fabric", f"failed link of port {x.port} on switch {x.switch}: no such port (0..{n - 1})")
    if schedule.fabric is not None and schedule.delta != max(own.deltas):
        add(
            "delta",
            f"schedule delta {schedule.delta!r} is not its fabric's largest delay {max(own.deltas)!r}",
        )
    if schedule.status not in STATUSES:
        add("status", f"schedule status must be one of {', '.join(STATUSES)}; got {schedule.status!r}")
    makespan = schedule.makespan
    for name, value in (("lower bound", schedule.lower_bound), ("dual bound", schedule.dual_bound)):
        if value is None:
            continue
        v = float(value)
        if not (math.isfinite(v) and v >= 0):
            add("bound", f"schedule {name} {value!r} is not a finite number >= 0")
        elif math.isfinite(makespan) and v - makespan > tol * makespan + 8.0 * math.ulp(makespan):
            add("bound", f"schedule claims a {name} of {v:.12g}, above its own makespan {makespan:.12g}")


def _as_tuple(c: Configuration) -> tuple[float, float, NDArray[np.int64], NDArray[np.int64]]:
    ins, outs = c.circuit_arrays()
    return (c.start, c.duration, ins, outs)


def _own_fabric(schedule: Schedule, add: Callable[[str, str], None]) -> Fabric:
    """The fabric the schedule claims (a broken claim is reported and replaced by delta 0)."""
    if schedule.fabric is not None:
        if schedule.fabric.size != len(schedule.switches):
            add(
                "switches",
                f"schedule has {len(schedule.switches)} switches but its fabric {schedule.fabric.size}",
            )
        return schedule.fabric
    d = schedule.delta
    if not (np.isfinite(d) and d >= 0):
        add("delta", f"schedule delta must be a finite number >= 0; got {d!r}")
        d = 0.0  # still check that configurations do not overlap
    return Fabric.uniform(max(1, len(schedule.switches)), d)


def real_fabric(own: Fabric, fabric: Fabric | None, delta: float | None) -> Fabric | None:
    """The fabric a schedule is judged on: ``fabric``, or its own with every delay set to ``delta``.

    None when neither is given (the schedule's own fabric, ``own``, is then the judge).
    """
    if fabric is not None and delta is not None:
        raise InvalidInputError("give either `fabric` or `delta`, not both")
    if fabric is not None:
        if not isinstance(fabric, Fabric):
            raise InvalidInputError(f"`fabric` must be an ocsched.Fabric; got {type(fabric).__name__}")
        return fabric
    if delta is not None:
        d = check_delta(delta)
        return dataclasses.replace(own, switches=tuple(Switch(d, x.rate) for x in own.switches))
    return None


def _compare(own: Fabric, real: Fabric, s: int, add: Callable[[str, str], None]) -> None:
    """Report where the schedule's fabric is more optimistic than the real one."""
    if real.size != s:
        add("switches", f"schedule has {s} switches but the fabric has {real.size}")
        return
    for b, (x, y) in enumerate(zip(own.switches, real.switches, strict=True)):
        if x.delta < y.delta:
            add(
                "delta",
                f"schedule assumes delta {x.delta:.12g} on switch {b}, below the fabric's {y.delta:.12g}",
            )
        if x.rate > y.rate:
            add(
                "rate", f"schedule assumes rate {x.rate:.12g} on switch {b}, above the fabric's {y.rate:.12g}"
            )
    for b, (x, y) in enumerate(zip(own.switches, real.switches, strict=True)):
        if x.ports_per_endpoint > y.ports_per_endpoint:
            add(
                "ports",
                f"schedule assumes {x.ports_per_endpoint} ports per endpoint on switch {b}, "
                f"above the fabric's {y.ports_per_endpoint}",
            )
        if x.bidirectional != y.bidirectional:
            what = ("bidirectional", "directed") if x.bidirectional else ("directed", "bidirectional")
            add("ports", f"schedule assumes {what[0]} circuits on switch {b}; the fabric's are {what[1]}")
    if own.reconfiguration.keeps_circuits and not real.reconfiguration.keeps_circuits:
        add("model", "schedule assumes partial reconfiguration on an all-stop fabric")
