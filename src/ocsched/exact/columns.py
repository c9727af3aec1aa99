"""The columns of the exact model on a fabric: (switch, phase, deadline class, maximal matching).

On identical always-up switches a column is (switch, maximal matching of the support). On any
fabric (all-stop), a switch's time splits into the phases its down windows leave
(:func:`ocsched.improve.structure.merged_phases`), and inside a phase a configuration must end by
the failure time of each of its ports' links: its *deadline class* is the earliest failure time
among its ports (or none). A column is then (switch b, phase, class g, matching M) where M is an
inclusion-maximal matching of the support edges whose two ports are still linked to b at g.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ocsched._types import FloatArray, IntArray
from ocsched.exact.matchings import MAX_MATCHINGS, maximal_matchings
from ocsched.improve.structure import SwitchTimes
from ocsched.model import Demand

__all__ = ["Columns", "fabric_columns"]


#: Links failing this much after the incumbent's makespan (relative) never constrain the model.
HORIZON_SLACK = 1e-6


@dataclass(frozen=True)
class Columns:
    """The model's columns, switch by switch, then phase, then deadline class.

    Attributes
    ----------
    mats : ndarray of int64, shape (K, n)
        The distinct matchings used, ``perm[i] = j`` (-1: idle).
    switch, phase, mat : ndarray of int64
        Per column: its switch, phase (index into that switch's phases) and matching (row of mats).
    label : ndarray of float64
        Per column: the end its class must respect: a link failure time, the phase's end, or inf.
    groups : list of (int, int, ndarray of int64)
        ``(switch, phase, columns)`` for every (switch, phase) that has columns, in order.
    """

    mats: IntArray
    switch: IntArray
    phase: IntArray
    mat: IntArray
    label: FloatArray
    groups: list[tuple[int, int, IntArray]]

    @property
    def size(self) -> int:
        return int(self.switch.size)


def fabric_columns(dem: Demand, times: list[SwitchTimes], horizon: float) -> Columns:
    """Return the columns for ``dem`` on switches ``times``; nothing ends after ``horizon`` (U).

    A phase that starts too late for one delay before ``horizon`` (or is shorter than a delay)
    has no column; a link failing after ``horizon * (1 + HORIZON_SLACK)`` is ignored.

    Raises
    ------
    InvalidInputError
        If a class's support has more than :data:`MAX_MATCHINGS` maximal matchings.
    """
    far = horizon * (1 + HORIZON_SLACK)
    index: dict[tuple[int, ...], int] = {}
    mats: list[IntArray] = []
    cache: dict[bytes, list[int]] = {}
    sw: list[int] = []
    ph: list[int] = []
    mt: list[int] = []
    lab: list[float] = []
    groups: list[tuple[int, int, IntArray]] = []

    def matchings_of(allowed: NDArray[np.bool_]) -> list[int]:
        key = np.packbits(allowed).tobytes()
        if key not in cache:
            sub = Demand(dem.n, dem.rows[allowed], dem.cols[allowed], dem.values[allowed])
            out = []
            for perm in maximal_matchings(sub, limit=MAX_MATCHINGS):
                t = tuple(perm.tolist())
                if t not in index:
                    index[t] = len(mats)
                    mats.append(perm)
                out.append(index[t])
            cache[key] = out
        return cache[key]

    for b, tb in enumerate(times):
        fail = np.array([tb.fails.get(p, math.inf) for p in range(dem.n)]) if tb.fails else None
        edge_fail = np.full(dem.nnz, math.inf) if fail is None else np.minimum(fail[dem.rows], fail[dem.cols])
        for k, (alpha, beta) in enumerate(tb.phases):
            end = min(beta, far)
            if alpha + tb.delta >= end:
                continue
            labels = sorted({float(f) for f in edge_fail.tolist() if alpha + tb.delta < f < end})
            first = len(sw)
            for g in [*labels, math.inf]:
                allowed = edge_fail >= (g if g < math.inf else end)
                if not allowed.any():
                    continue
                for m in matchings_of(allowed):
                    sw.append(b)
                    ph.append(k)
                    mt.append(m)
                    lab.append(g if g < math.inf else beta)
            if len(sw) > first:
                groups.append((b, k, np.arange(first, len(sw), dtype=np.int64)))
    n = dem.n
    return Columns(
        np.array(mats, dtype=np.int64).reshape(len(mats), n),
        np.array(sw, dtype=np.int64),
        np.array(ph, dtype=np.int64),
        np.array(mt, dtype=np.int64),
        np.array(lab, dtype=np.float64),
        groups,
    )
