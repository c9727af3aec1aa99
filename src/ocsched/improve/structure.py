"""A schedule's structure on a fabric, where all-stop timing is linear: phases, deadlines, re-fit, repair.

Under the all-stop model a switch's configurations run inside the *phases* its down windows leave
(``[0, a_1)``, ``[e_1, a_2)``, ..., the last one open unless the switch is down for good), each
configuration preceded by the switch's delay. Fix which matching each configuration holds, on
which switch, in which phase and in which order (the *structure*), and every rule of
:mod:`ocsched.timing` becomes linear in the durations x:

- configuration k in phase ``[alpha, beta)`` of switch b ends at
  ``alpha + sum_{j <= k in the phase} (delta_b + x_j)``; that is at most its *deadline*: beta,
  and the time the link of each of its ports to b fails;
- it serves ``rate_b * x_k`` of each demand entry it holds;
- the makespan T is at least every end.

The order inside a phase is free (the switch is dark before each configuration whatever came
before), and a set of configurations meets its deadlines in some order iff it meets them in order
of deadline (Jackson's rule), so the pieces of a phase are kept sorted by deadline.

:func:`refit` is the LP over x (minimise T) for a fixed structure; :func:`make_valid` turns any
nearly feasible x (a solver's answer) into an exactly valid one; :func:`improve_on_fabric` is the
``spectra-opt`` local search on any fabric. Everything here is all-stop; an all-stop-valid
schedule is valid under the partial model too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ocsched._types import FloatArray, IntArray
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand
from ocsched.timing import held_times, switch_violations

__all__ = [
    "Piece",
    "SwitchTimes",
    "check_valid",
    "entries_of",
    "layout",
    "make_valid",
    "makespan",
    "merged_phases",
    "pieces_of",
    "refit",
    "sort_pieces",
    "switch_times",
    "to_switches",
]

Switches = tuple[tuple[Configuration, ...], ...]

#: Deadlines are tightened by this fraction of the makespan in the LP where the start point has
#: that much room: the solver's answer (feasible to about 1e-7 of its scale) then leaves room
#: for the exact-coverage repair without breaking a deadline.
DEADLINE_MARGIN = 1e-6


@dataclass(frozen=True)
class SwitchTimes:
    """What all-stop timing needs of one switch.

    Attributes
    ----------
    delta, rate : float
        Its delay and rate.
    phases : tuple of (float, float)
        The ``[alpha, beta)`` intervals its down windows leave, in time order.
    fails : mapping of int to float
        ``{port: time its link to this switch fails}`` for the ports that fail.
    """

    delta: float
    rate: float
    phases: tuple[tuple[float, float], ...]
    fails: Mapping[int, float]

    def deadline(self, phase: int, ins: IntArray, outs: IntArray) -> float:
        """The latest end of a configuration of these circuits in ``phase``."""
        end = self.phases[phase][1]
        if self.fails:
            for p in np.concatenate([ins, outs]).tolist():
                end = min(end, self.fails.get(int(p), math.inf))
        return end

    def phase_of(self, start: float) -> int:
        """The phase a configuration starting at ``start`` lies in (the last one starting by then)."""
        k = 0
        for i, (a, _) in enumerate(self.phases):
            if a <= start:
                k = i
        return k


def merged_phases(windows: Sequence[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """Return the intervals a switch is up, given its down windows (overlapping ones merged).

    >>> merged_phases([(0.25, 0.35), (0.2, 0.3)])
    ((0.0, 0.2), (0.35, inf))
    >>> merged_phases([(0.0, 1.0), (2.0, float("inf"))])
    ((1.0, 2.0),)
    """
    out: list[tuple[float, float]] = []
    cur = 0.0
    for a, e in sorted(windows):
        if a > cur:
            out.append((cur, a))
        cur = max(cur, e)
    if cur < math.inf:
        out.append((cur, math.inf))
    return tuple(out)


def switch_times(fabric: Fabric) -> list[SwitchTimes]:
    """Return :class:`SwitchTimes` for every switch of ``fabric``."""
    return [
        SwitchTimes(
            float(fabric.deltas[b]),
            float(fabric.rates[b]),
            merged_phases(fabric.windows(b)),
            fabric.failed_ports(b),
        )
        for b in range(fabric.size)
    ]


@dataclass(frozen=True)
class Piece:
    """One configuration of a structure: its switch, phase, circuits, deadline and demand entries."""

    switch: int
    phase: int
    ins: IntArray
    outs: IntArray
    deadline: float
    entries: IntArray


def _lookup(demand: Demand, ins: IntArray, outs: IntArray) -> tuple[IntArray, NDArray[np.bool_]]:
    """Entry index of each circuit, and whether it is a demand entry at all."""
    if demand.nnz == 0 or ins.size == 0:
        return np.zeros(ins.size, dtype=np.int64), np.zeros(ins.size, dtype=bool)
    keys = demand.rows * demand.n + demand.cols  # sorted: entries are row-major
    k = ins * demand.n + outs
    pos = np.minimum(np.searchsorted(keys, k), demand.nnz - 1).astype(np.int64)
    return pos, keys[pos] == k


def entries_of(demand: Demand, ins: IntArray, outs: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Keep the circuits that are demand entries; return them and their entry indices."""
    pos, hit = _lookup(demand, ins, outs)
    return ins[hit], outs[hit], pos[hit]


def sort_pieces(pieces: list[Piece], x: FloatArray) -> tuple[list[Piece], FloatArray]:
    """Order pieces by switch, phase and deadline (stable: ties keep their order)."""
    order = sorted(range(len(pieces)), key=lambda k: (pieces[k].switch, pieces[k].phase, pieces[k].deadline))
    return [pieces[k] for k in order], np.asarray(x, dtype=np.float64)[order]


def pieces_of(switches: Switches, demand: Demand, times: list[SwitchTimes]) -> tuple[list[Piece], FloatArray]:
    """Return the structure of an all-stop-valid schedule and its durations (sorted, see :func:`sort_pieces`).

    Circuits that serve no demand entry are left out (they only make deadlines earlier), and so
    are configurations left with none.
    """
    pieces: list[Piece] = []
    x: list[float] = []
    for b, sw in enumerate(switches):
        tb = times[b]
        for c in sw:
            if not c.duration > 0:
                continue
            i, j = c.circuit_arrays()
            keep = j >= 0
            ins, outs, ent = entries_of(demand, i[keep], j[keep])
            if ent.size == 0:
                continue
            ph = tb.phase_of(c.start)
            pieces.append(Piece(b, ph, ins, outs, tb.deadline(ph, ins, outs), ent))
            x.append(float(c.duration))
    return sort_pieces(pieces, np.array(x, dtype=np.float64))


def coverage(pieces: Sequence[Piece], demand: Demand, times: list[SwitchTimes]) -> sp.csc_array:
    """Entry x piece matrix: the rate of piece k's switch where it holds entry e."""
    rows = np.concatenate([p.entries for p in pieces]) if pieces else np.zeros(0, np.int64)
    cols = np.repeat(np.arange(len(pieces)), [p.entries.size for p in pieces])
    vals = np.repeat([times[p.switch].rate for p in pieces], [p.entries.size for p in pieces])
    return sp.csc_array((vals.astype(np.float64), (rows, cols)), shape=(demand.nnz, len(pieces)))


def _groups(pieces: Sequence[Piece]) -> list[list[int]]:
    """Indices of the pieces of each (switch, phase), in order (pieces are sorted)."""
    out: list[list[int]] = []
    prev: tuple[int, int] | None = None
    for k, p in enumerate(pieces):
        key = (p.switch, p.phase)
        if key != prev:
            out.append([])
            prev = key
        out[-1].append(k)
    return out


def layout(pieces: Sequence[Piece], x: FloatArray, times: list[SwitchTimes]) -> FloatArray:
    """Return each piece's start, back to back in its phase; a piece with ``x <= 0`` is absent (nan)."""
    starts = np.full(len(pieces), np.nan)
    for g in _groups(pieces):
        tb = times[pieces[g[0]].switch]
        end = tb.phases[pieces[g[0]].phase][0]
        for k in g:
            if x[k] > 0:
                starts[k] = end + tb.delta
                end = starts[k] + x[k]
    return starts


def makespan(pieces: Sequence[Piece], x: FloatArray, times: list[SwitchTimes]) -> float:
    """The latest end of the laid-out pieces."""
    starts = layout(pieces, x, times)
    on = x > 0
    return float((starts[on] + x[on]).max(initial=0.0))


def make_valid(
    pieces: Sequence[Piece], x: FloatArray, demand: Demand, times: list[SwitchTimes]
) -> FloatArray | None:
    """Return durations near ``x`` that meet every deadline and cover every entry, or None.

    A piece that would end after its deadline is shortened to end there (dropped if nothing is
    left); then each entry still short is served by lengthening one of its pieces whose phase has
    room for it (on the switch that then ends earliest). None if some entry finds no room.
    """
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    groups = _groups(pieces)
    group_of = np.zeros(len(pieces), dtype=np.int64)
    for gi, g in enumerate(groups):
        group_of[g] = gi
    for g in groups:
        tb = times[pieces[g[0]].switch]
        end = tb.phases[pieces[g[0]].phase][0]
        for k in g:
            if x[k] <= 0:
                continue
            start = end + tb.delta
            if start + x[k] > pieces[k].deadline:
                x[k] = max(pieces[k].deadline - start, 0.0)
                # The float sum must not land past the deadline either.
                while x[k] > 0 and start + x[k] > pieces[k].deadline:
                    x[k] = float(np.nextafter(x[k], 0.0))
            if x[k] > 0:
                end = start + x[k]
    inc = coverage(pieces, demand, times)
    # Rounding of the sums (1e-16 of an entry) is no shortfall: the validator allows 1e-9 of the
    # entry's larger line sum, and only more than 1e-12 of it is repaired.
    slack = 1e-12 * _line(demand)
    short = demand.values - inc @ x
    bad = np.nonzero(short > slack)[0]
    if bad.size == 0:
        return x
    csr = inc.tocsr()
    starts = layout(pieces, x, times)
    ends = np.where(x > 0, starts + x, np.nan)
    sw_end = np.zeros(len(times))
    for k in np.nonzero(x > 0)[0].tolist():
        sw_end[pieces[k].switch] = max(sw_end[pieces[k].switch], ends[k])
    for e in bad.tolist():
        held = csr.indices[csr.indptr[e] : csr.indptr[e + 1]]
        need = float(demand.values[e] - csr.data[csr.indptr[e] : csr.indptr[e + 1]] @ x[held])
        if need <= slack[e]:
            continue
        best: tuple[float, int] | None = None
        for k in held.tolist():
            if x[k] <= 0:
                continue
            p = pieces[k]
            grow = need / times[p.switch].rate
            g = groups[group_of[k]]
            later = [j for j in g[g.index(k) :] if x[j] > 0]
            room = min((pieces[j].deadline - ends[j] for j in later), default=math.inf)
            # Relative slack: the float sums of the shifted ends must stay by their deadlines.
            if grow * (1 + 1e-12) + 8 * np.spacing(max(ends[later].max(), 1.0)) > room:
                continue
            finish = max(sw_end[p.switch], float(ends[later].max()) + grow)
            if best is None or (finish, k) < best:
                best = (finish, k)
        if best is None:
            return None
        k = best[1]
        p = pieces[k]
        grow = need / times[p.switch].rate
        x[k] += grow
        g = groups[group_of[k]]
        for j in g[g.index(k) :]:
            if x[j] > 0:
                ends[j] += grow
        sw_end[p.switch] = max(sw_end[p.switch], float(np.nanmax(ends[g])))
    return None if (demand.values - inc @ x > slack).any() else x


def to_switches(pieces: Sequence[Piece], x: FloatArray, times: list[SwitchTimes], ports: int) -> Switches:
    """Lay the pieces out as configurations, per switch in time order."""
    starts = layout(pieces, x, times)
    out: list[list[Configuration]] = [[] for _ in times]
    for k, p in enumerate(pieces):
        if x[k] > 0:
            out[p.switch].append(
                Configuration.sparse(float(starts[k]), float(x[k]), p.ins, p.outs, ports=ports)
            )
    return tuple(tuple(sw) for sw in out)


def refit(
    demand: Demand, pieces: Sequence[Piece], x0: FloatArray, times: list[SwitchTimes]
) -> FloatArray | None:
    """Return the LP-optimal durations of a fixed structure, made valid (None if the LP fails).

    Minimise T subject to: every entry served (``sum_k rate_k x_k >= D_e`` over its pieces), every
    piece ending by its deadline and by T. ``x0`` (a valid start) sets how much margin the
    deadlines may lose (:data:`DEADLINE_MARGIN` of the makespan, never below ``x0``'s ends), so the
    LP stays feasible and the repair has room. Entries held by one piece only are presolved into
    lower bounds.
    """
    from scipy.optimize import linprog

    m = len(pieces)
    if m == 0 or demand.nnz == 0:
        return None
    inc = coverage(pieces, demand, times).tocsr()
    count = np.diff(inc.indptr)
    if (count == 0).any():
        return None
    scale = makespan(pieces, x0, times)
    if not scale > 0:
        return None
    b = demand.values / scale
    lb = np.zeros(m)
    single = count == 1
    cols = inc.indices[inc.indptr[:-1][single]]
    np.maximum.at(lb, cols, b[single] / inc.data[inc.indptr[:-1][single]])
    multi = np.nonzero(count > 1)[0]
    need = multi[inc[multi] @ lb < b[multi]] if multi.size else multi
    rows: list[sp.csr_array] = [sp.hstack([-inc[need], sp.csr_array((need.size, 1))]).tocsr()]
    rhs: list[FloatArray] = [-b[need]]
    r_i: list[int] = []
    r_j: list[int] = []
    r_v: list[float] = []
    r_b: list[float] = []
    nrow = 0
    x0s = np.asarray(x0, dtype=np.float64) / scale
    for g in _groups(pieces):
        tb = times[pieces[g[0]].switch]
        alpha, d = tb.phases[pieces[g[0]].phase][0] / scale, tb.delta / scale
        for pos, k in enumerate(g):
            prefix = g[: pos + 1]
            cur = alpha + d * (pos + 1) + float(x0s[prefix].sum())
            dl = pieces[k].deadline / scale
            if math.isfinite(dl) and (pos + 1 == len(g) or pieces[g[pos + 1]].deadline > pieces[k].deadline):
                # By its deadline, with margin where the start has it (never tighter than the start).
                limit = min(dl, max(dl - DEADLINE_MARGIN, cur))
                r_i += [nrow] * len(prefix)
                r_j += prefix
                r_v += [1.0] * len(prefix)
                r_b.append(limit - alpha - d * (pos + 1))
                nrow += 1
        # The phase's last end is at most T.
        r_i += [nrow] * (len(g) + 1)
        r_j += [*g, m]
        r_v += [1.0] * len(g) + [-1.0]
        r_b.append(-alpha - d * len(g))
        nrow += 1
    rows.append(sp.csr_array((r_v, (r_i, r_j)), shape=(nrow, m + 1)))
    rhs.append(np.array(r_b))
    cost = np.zeros(m + 1)
    cost[-1] = 1.0
    bounds = np.column_stack([np.append(lb, 0.0), np.full(m + 1, np.inf)])
    res = linprog(cost, A_ub=sp.vstack(rows).tocsr(), b_ub=np.concatenate(rhs), bounds=bounds, method="highs")  # type: ignore[call-overload]
    if res.status != 0 or res.x is None:
        return None
    x = np.maximum(np.asarray(res.x[:m], dtype=np.float64), lb) * scale
    return make_valid(pieces, x, demand, times)


def check_valid(switches: Switches, demand: Demand, fabric: Fabric, *, rtol: float = 1e-9) -> bool:
    """True if a schedule meets every timing rule of ``fabric`` (its model) and serves the demand.

    The safety net under the re-fits and the MILP's repaired answers: it calls the validator's own
    rules (:func:`ocsched.timing.switch_violations` and :func:`ocsched.timing.held_times`), and
    checks coverage to ``rtol`` of each entry's larger line sum, as the validator does.
    """
    if len(switches) != fabric.size:
        return False
    # Matchings of the plain model only (a b-matching, a circuit both ways: not checked here).
    if not all(x.is_plain for x in fabric.switches):
        return False
    served = np.zeros(demand.nnz)
    for b, sw in enumerate(switches):
        confs = []
        for c in sw:
            if not (np.isfinite(c.start) and np.isfinite(c.duration) and c.duration >= 0):
                return False
            i, j = c.circuit_arrays()
            if (j < 0).any() or np.unique(j).size != j.size:
                return False
            confs.append((c.start, c.duration, i, j))
        wins = fabric.windows(b)
        if switch_violations(
            confs, fabric.deltas[b], model=fabric.model, windows=wins, failed_ports=fabric.failed_ports(b)
        ):
            return False
        for (_, _, i, j), held in zip(
            confs, held_times(confs, model=fabric.model, windows=wins), strict=True
        ):
            pos, hit = _lookup(demand, i, j)
            np.add.at(served, pos[hit], fabric.rates[b] * held[hit])
    return bool((served >= demand.values - rtol * _line(demand)).all())


def _line(demand: Demand) -> FloatArray:
    """Each entry's larger line sum (its row's or its column's)."""
    rows = np.bincount(demand.rows, weights=demand.values, minlength=demand.n)
    cols = np.bincount(demand.cols, weights=demand.values, minlength=demand.n)
    return np.maximum(rows[demand.rows], cols[demand.cols])
