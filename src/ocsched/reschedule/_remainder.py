"""What a schedule cut at a failure keeps, and what it leaves to place again.

Per switch, :func:`_kept` gives the configurations kept up to the switch's cut (the running
one cut there; under the partial model, a link failure's configuration going on without the
failed port) and :func:`_pieces` what the cut and dropped ones would still have served, which
:func:`_merge` adds up into a decomposition; :func:`_residual` is the demand the kept part
leaves unserved. Under all-stop, :func:`_leftover` finds the merged pieces and whether a
residual is left in one compiled pass, and :func:`_repair_on_identical` also places and lays
them out on identical surviving switches.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from ocsched._types import FloatArray, IntArray
from ocsched.assign._leftover import leftover_all_stop, repair_on_identical
from ocsched.decompose import Decomposition
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand, Schedule
from ocsched.model.failures import LinkFailure, SwitchFailure
from ocsched.timing import reconfiguration
from ocsched.timing.served import served_amounts

log = logging.getLogger("ocsched.reschedule")


def _residual(dem: Demand, kept: list[list[Configuration]], fabric: Fabric) -> Demand:
    """Demand not yet served by the kept configurations (crumbs below 1e-12 of the line dropped)."""
    short = dem.values - served_amounts(dem, kept, fabric)
    line = np.maximum(dem.row_sums()[dem.rows], dem.col_sums()[dem.cols])
    on = short > 1e-12 * line
    return Demand(dem.n, dem.rows[on], dem.cols[on], short[on])


def _without_port(c: Configuration, port: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``c``'s circuits (inputs, outputs) without those from or to ``port`` (b-matchings too)."""
    ins, outs = c.circuit_arrays()
    keep = (ins != port) & (outs != port) & (outs >= 0)
    return ins[keep], outs[keep]


def _split(c: Configuration, cut: float, failure: SwitchFailure | LinkFailure, model: str) -> bool:
    """Under the partial model, a configuration using a link failing while it runs keeps its other
    circuits lit to its end (a second configuration of kept circuits, no delay)."""
    return (
        reconfiguration(model).keeps_circuits
        and isinstance(failure, LinkFailure)
        and c.start < cut < c.end
        and cut == failure.at
        and bool(_without_port(c, failure.port)[0].size)
    )


def _split_any(schedule: Schedule, cut: FloatArray, failure: SwitchFailure | LinkFailure, model: str) -> bool:
    if not reconfiguration(model).keeps_circuits or not isinstance(failure, LinkFailure):
        return False
    return any(
        _split(c, float(cut[failure.switch]), failure, model) for c in schedule.switches[failure.switch]
    )


def _kept(
    schedule: Schedule,
    cut: FloatArray | float,
    failure: SwitchFailure | LinkFailure | None = None,
    model: str = "all-stop",
) -> list[list[Configuration]]:
    """Each switch's configurations that end by its cut, and the one running then, cut there.

    On the failed switch under the partial model, a configuration cut by a link failure goes on
    without the failed port's circuits until its end (see :func:`_split`).
    """
    cuts = np.broadcast_to(np.asarray(cut, dtype=np.float64), (len(schedule.switches),))
    out: list[list[Configuration]] = []
    for b, sw in enumerate(schedule.switches):
        at = float(cuts[b])
        mine: list[Configuration] = []
        for c in sw:
            if c.end <= at:
                mine.append(c)
            elif c.start < at:
                mine.append(c.at(c.start, at - c.start))
                if isinstance(failure, LinkFailure) and b == failure.switch and _split(c, at, failure, model):
                    rest = _without_port(c, failure.port)
                    mine.append(Configuration.sparse(at, c.end - at, *rest, ports=c.ports))
        out.append(mine)
    return out


def _pieces(
    schedule: Schedule,
    fabric: Fabric,
    cut: FloatArray | float,
    failure: SwitchFailure | LinkFailure | None = None,
) -> list[tuple[NDArray[np.int64], float]]:
    """What each configuration cut or dropped would still have served: (perm, amount)."""
    cuts = np.broadcast_to(np.asarray(cut, dtype=np.float64), (len(schedule.switches),))
    out = []
    for b, (rate, sw) in enumerate(zip(fabric.rates, schedule.switches, strict=True)):
        at = float(cuts[b])
        for c in sw:
            if c.end <= at:
                continue
            if c.start >= at:
                out.append((c.perm, c.duration * rate))
            elif (
                isinstance(failure, LinkFailure)
                and b == failure.switch
                and _split(c, at, failure, fabric.model)
            ):
                # the rest of it runs on without the port: only the port's circuits are left
                perm = c.perm
                only = np.where((np.arange(perm.size) == failure.port) | (perm == failure.port), perm, -1)
                out.append((only, (c.end - at) * rate))
            else:
                out.append((c.perm, (c.end - at) * rate))
    return out


def _flat(schedule: Schedule) -> tuple[IntArray, FloatArray, FloatArray]:
    """The schedule's configurations, switch by switch: permutations (one row each), starts, durations."""
    confs = [c for sw in schedule.switches for c in sw]
    perms = np.array([c.perm for c in confs], dtype=np.int64).reshape(len(confs), schedule.ports)
    start = np.array([c.start for c in confs], dtype=np.float64)
    return perms, start, np.array([c.duration for c in confs], dtype=np.float64)


def _rates(schedule: Schedule, fabric: Fabric) -> FloatArray:
    """Each configuration's switch rate, in :func:`_flat`'s order."""
    return np.repeat(np.asarray(fabric.rates, dtype=np.float64), [len(sw) for sw in schedule.switches])


def _repair_on_identical(
    schedule: Schedule, dem: Demand, fabric: Fabric, at: float, live: list[int], placement: str
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """What is left, placed and laid out on the identical ``live`` switches in one compiled call.

    The same configurations as :func:`_leftover` followed by :func:`~ocsched.assign.place_on_fabric`
    (a test checks it), without their intermediate objects: small reschedules are mostly those.
    """
    perms, start, duration = _flat(schedule)
    sw, row, begin, length, splits, converged, _ = repair_on_identical(
        perms,
        start,
        duration,
        _rates(schedule, fabric),
        at,
        dem.rows,
        dem.cols,
        dem.values,
        len(live),
        fabric.deltas[live[0]],
        placement == "pack",
    )
    if not converged:
        log.info("equalize stopped without converging")
    perms.flags.writeable = False
    out: list[list[Configuration]] = [[] for _ in range(fabric.size)]
    for b, l, t, x in zip(sw.tolist(), row.tolist(), begin.tolist(), length.tolist(), strict=True):
        out[live[b]].append(Configuration(t, x, perms[l]))
    return tuple(tuple(x) for x in out), int(splits)


def _leftover(
    schedule: Schedule, dem: Demand, fabric: Fabric, cut: FloatArray | float
) -> tuple[Decomposition, bool]:
    """All-stop: :func:`_merge` of :func:`_pieces`, and whether :func:`_residual` has an entry (compiled)."""
    perms, start, duration = _flat(schedule)
    rep = np.empty(len(perms), dtype=np.int64)
    weight = np.empty(len(perms))
    cuts = np.broadcast_to(np.asarray(cut, dtype=np.float64), (len(schedule.switches),))
    per_conf = np.repeat(cuts, [len(sw) for sw in schedule.switches]).astype(np.float64)
    m, short = leftover_all_stop(
        perms,
        start,
        duration,
        _rates(schedule, fabric),
        per_conf,
        dem.rows,
        dem.cols,
        dem.values,
        rep,
        weight,
    )
    return Decomposition(perms[rep[:m]], weight[:m]), bool(short)


def _merge(pieces: list[tuple[NDArray[np.int64], float]], n: int) -> Decomposition:
    """One weight per distinct permutation (pieces of one permutation add up)."""
    acc: dict[bytes, tuple[NDArray[np.int64], float]] = {}
    for perm, w in pieces:
        if w <= 0:
            continue
        key = np.asarray(perm, dtype=np.int64).tobytes()
        p, old = acc.get(key, (np.asarray(perm, dtype=np.int64), 0.0))
        acc[key] = (p, old + w)
    perms = np.array([p for p, _ in acc.values()], dtype=np.int64).reshape(len(acc), n)
    return Decomposition(perms, np.array([w for _, w in acc.values()], dtype=np.float64))
