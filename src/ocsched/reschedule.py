"""Repair a schedule after a switch or a link fails mid-run: keep what was done, replan the rest.

:func:`reschedule` keeps every configuration that finished before the failure, cuts the ones
running at that moment, and places what is left on the surviving fabric from the failure on.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._checks import check_choice, check_int, check_number
from ocsched._version import __version__
from ocsched.assign import PLACEMENTS, _identical_live, place_on_fabric
from ocsched.assign._leftover import leftover_all_stop, repair_on_identical
from ocsched.bounds import lower_bound
from ocsched.decompose import Decomposition, decompose
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, LinkDown, SwitchDown
from ocsched.model import Configuration, Demand, Schedule, as_demand
from ocsched.timing import held_times
from ocsched.validate import validate

__all__ = ["LinkFailure", "SwitchFailure", "reschedule"]

log = logging.getLogger("ocsched.reschedule")
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class SwitchFailure:
    """Switch ``switch`` (0-based, as in schedule files) stops for good at time ``at``.

    >>> SwitchFailure(3, 0.05)
    SwitchFailure(switch=3, at=0.05)
    """

    switch: int
    at: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "switch", check_int(self.switch, "failed switch", minimum=0))
        object.__setattr__(self, "at", check_number(self.at, "failure time `at`", low=0.0))


@dataclass(frozen=True)
class LinkFailure:
    """The link between ``port`` and switch ``switch`` fails for good at time ``at``.

    >>> LinkFailure(port=2, switch=0, at=1.5)
    LinkFailure(port=2, switch=0, at=1.5)
    """

    port: int
    switch: int
    at: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "port", check_int(self.port, "failed link port", minimum=0))
        object.__setattr__(self, "switch", check_int(self.switch, "failed link switch", minimum=0))
        object.__setattr__(self, "at", check_number(self.at, "failure time `at`", low=0.0))


def degrade(fabric: Fabric, failure: SwitchFailure | LinkFailure) -> Fabric:
    """Return ``fabric`` with ``failure`` added (a switch down from ``at``, or a link failed from ``at``).

    >>> degrade(Fabric.uniform(2, 0.1), SwitchFailure(1, 0.5)).down
    (SwitchDown(switch=1, start=0.5, end=inf),)
    """
    if not isinstance(failure, SwitchFailure | LinkFailure):
        raise InvalidInputError(
            f"`failure` must be a SwitchFailure or a LinkFailure; got {type(failure).__name__}"
        )
    if failure.switch >= fabric.size:
        raise InvalidInputError(
            f"failed switch {failure.switch} is outside 0..{fabric.size - 1} (switches are 0-based)"
        )
    if isinstance(failure, SwitchFailure):
        return fabric.with_failures(down=[SwitchDown(failure.switch, failure.at)])
    return fabric.with_failures(failed_links=[LinkDown(failure.port, failure.switch, failure.at)])


def reschedule(
    schedule: Schedule,
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    failure: SwitchFailure | LinkFailure,
    *,
    placement: str = "pack",
) -> Schedule:
    """Return a schedule for ``demand`` that survives ``failure``, reusing ``schedule`` up to it.

    Everything that finished by ``failure.at`` is kept; configurations running then are cut at
    ``at`` (what they served so far counts); later ones are dropped. What they would still have
    served (each configuration's permutation with its remaining time, as demand) is placed on the
    degraded fabric from ``at`` on with ``placement`` (every switch dark from ``at``: the first
    new configurations start a delay later). No new decomposition is needed, so this costs a
    fraction of scheduling from scratch. If the pieces fall short of the residual (under the
    partial model the dropped schedule's kept circuits also served in its gaps), the residual is
    decomposed afresh with Spectra.

    Parameters
    ----------
    schedule : Schedule
        The schedule that was running (valid for ``demand``).
    demand : array_like, sparse matrix or Demand
        The demand it serves.
    failure : SwitchFailure or LinkFailure
        What fails, and when.
    placement : str
        A key of :data:`~ocsched.assign.PLACEMENTS` for the residual.

    Returns
    -------
    Schedule
        Valid for ``demand`` on the degraded fabric (recorded in it, so the file is version 2),
        with ``meta["failure"]`` describing the failure.

    Raises
    ------
    InvalidInputError
        If the failure names a switch or port outside the schedule, or ``demand`` does not match.
    InfeasibleError
        If the surviving fabric cannot serve the residual (every switch down, or a port whose
        links have all failed still has demand).

    Examples
    --------
    >>> from ocsched import schedule, validate
    >>> d = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]
    >>> s = schedule(d, switches=2, delta=0.5)
    >>> new = reschedule(s, d, SwitchFailure(1, 1.0))
    >>> validate(new, d).ok, new.on_fabric().down
    (True, (SwitchDown(switch=1, start=1.0, end=inf),))
    """
    t_start = time.perf_counter()
    dem = as_demand(demand)
    check_choice(placement, "placement", PLACEMENTS)
    if dem.n != schedule.ports:
        raise InvalidInputError(f"`demand` is {dem.n} x {dem.n} but the schedule has {schedule.ports} ports")
    fab = schedule.on_fabric()
    if isinstance(failure, LinkFailure) and failure.port >= dem.n:
        raise InvalidInputError(f"failed link port {failure.port} is outside 0..{dem.n - 1}")
    degraded = degrade(fab, failure)
    at = float(failure.at)
    kept = _kept(schedule, at)
    residual: Demand | None = None
    new: tuple[tuple[Configuration, ...], ...] = tuple(() for _ in kept)
    splits = 0
    # Identical surviving switches: Spectra's placement or pack, compiled with what is left (greedy
    # alone, partial layouts and heterogeneous fabrics take the general path).
    live = _identical_live(degraded, at) if degraded.model == "all-stop" and placement != "greedy" else []
    if live:
        new, splits = _repair_on_identical(schedule, dem, degraded, at, live, placement)
    else:
        if degraded.model == "all-stop":
            dec, short = _leftover(schedule, dem, degraded, at)
        else:
            residual = _residual(dem, kept, degraded)
            dec, short = _merge(_pieces(schedule, fab, at), dem.n), residual.nnz > 0
        if short:
            new, splits = place_on_fabric(dec, degraded, method=placement, t0=at)
    out = _assemble(schedule, kept, new, degraded, dem, failure, splits, t_start)
    # Under all-stop the pieces are exactly what the dropped configurations would have served.
    if residual is not None and residual.nnz and not validate(out, dem).ok:
        mean = float(np.average(degraded.deltas, weights=degraded.rates))
        dec = decompose(residual, method="spectra", delta=mean)
        new, splits = place_on_fabric(dec, degraded, method=placement, t0=at)
        out = _assemble(schedule, kept, new, degraded, dem, failure, splits, t_start)
    return out


def _residual(dem: Demand, kept: list[list[Configuration]], fabric: Fabric) -> Demand:
    """Demand not yet served by the kept configurations (crumbs below 1e-12 of the line dropped)."""
    n = dem.n
    keys, amounts = [], []
    for b, sw in enumerate(kept):
        confs_b = [(c.start, c.duration, *c.circuit_arrays()) for c in sw]
        windows = fabric.windows(b)
        for t, h in zip(confs_b, held_times(confs_b, model=fabric.model, windows=windows), strict=True):
            keys.append(t[2] * n + t[3])
            amounts.append(fabric.rates[b] * h)
    served = np.zeros(dem.nnz)
    want = dem.rows * n + dem.cols
    if keys and want.size:
        key, amount = np.concatenate(keys), np.concatenate(amounts)
        pos = np.minimum(np.searchsorted(want, key), want.size - 1)
        hit = want[pos] == key
        np.add.at(served, pos[hit], amount[hit])
    short = dem.values - served
    line = np.maximum(dem.row_sums()[dem.rows], dem.col_sums()[dem.cols])
    on = short > 1e-12 * line
    return Demand(n, dem.rows[on], dem.cols[on], short[on])


def _kept(schedule: Schedule, at: float) -> list[list[Configuration]]:
    """Each switch's configurations that ended by ``at``, and the one running then, cut at ``at``."""
    return [
        [
            c if c.end <= at else Configuration(c.start, at - c.start, c.perm)
            for c in sw
            if c.start < at or c.end <= at
        ]
        for sw in schedule.switches
    ]


def _pieces(schedule: Schedule, fabric: Fabric, at: float) -> list[tuple[NDArray[np.int64], float]]:
    """What each configuration cut at ``at`` or dropped would still have served: (perm, amount)."""
    out = []
    for rate, sw in zip(fabric.rates, schedule.switches, strict=True):
        for c in sw:
            if c.end > at:
                out.append((c.perm, (c.end - at if c.start < at else c.duration) * rate))
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


def _leftover(schedule: Schedule, dem: Demand, fabric: Fabric, at: float) -> tuple[Decomposition, bool]:
    """All-stop: :func:`_merge` of :func:`_pieces`, and whether :func:`_residual` has an entry (compiled)."""
    perms, start, duration = _flat(schedule)
    rep = np.empty(len(perms), dtype=np.int64)
    weight = np.empty(len(perms))
    m, short = leftover_all_stop(
        perms, start, duration, _rates(schedule, fabric), at, dem.rows, dem.cols, dem.values, rep, weight
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


def _assemble(
    schedule: Schedule,
    kept: list[list[Configuration]],
    new: tuple[tuple[Configuration, ...], ...],
    fabric: Fabric,
    dem: Demand,
    failure: SwitchFailure | LinkFailure,
    splits: int,
    t_start: float,
) -> Schedule:
    switches = tuple(tuple(k) + tuple(x) for k, x in zip(kept, new, strict=True))
    info = {"kind": "switch" if isinstance(failure, SwitchFailure) else "link", "at": failure.at}
    info["switch"] = failure.switch
    if isinstance(failure, LinkFailure):
        info["port"] = failure.port
    # Losing a switch or a link never makes a schedule faster: the original bound still holds.
    lb = schedule.lower_bound if schedule.lower_bound is not None else lower_bound(dem, fabric=fabric)
    return Schedule(
        ports=schedule.ports,
        delta=max(fabric.deltas),
        switches=switches,
        algorithm=f"{schedule.algorithm}+reschedule" if schedule.algorithm else "reschedule",
        lower_bound=lb if math.isfinite(lb) else None,
        splits=schedule.splits + splits,
        meta={
            "ocsched_version": __version__,
            "switches": len(switches),
            "failure": info,
            "runtime_s": time.perf_counter() - t_start,
        },
        fabric=fabric,
    )
