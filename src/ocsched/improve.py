"""Improve a placed schedule: re-optimise piece lengths by LP and drop pieces that cost a delay.

:func:`improve_schedule` starts from ``spectra-pack`` (Spectra's permutations, placed by
bisection with splits) and keeps its *piece structure* (which permutation sits on which switch)
as the variables of one LP:

    minimise T  s.t.  sum over pieces p holding entry e of x_p >= d_e   (every entry served)
                      sum over pieces p on switch b of (delta + x_p) <= T   (every load)

The LP is free to serve an entry from several permutations and to shift length between the
pieces of one permutation, which the per-permutation weights of Spectra cannot. A piece the LP
leaves empty is dropped, saving its delay. Then up to ``max_steps`` of the smallest pieces are
tried for removal one by one (local search: a piece is removed when the LP without it still
ends earlier). Every candidate is repaired to exact coverage and only kept when its makespan is
smaller, so the result is never worse than ``spectra-pack``.

The scheduler ``spectra-opt`` is this, plus a short MILP on tiny supports
(:func:`ocsched.exact.near_optimal`).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ocsched.assign import PLACEMENTS, Assignment, loads, timeline
from ocsched.decompose import decompose
from ocsched.decompose._common import incidence
from ocsched.model import Configuration, Demand

__all__ = ["DEFAULT_TIME_LIMIT", "improve_schedule", "refit_pieces"]

log = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Switches = tuple[tuple[Configuration, ...], ...]

#: Default budget of :func:`improve_schedule`, in seconds (a safety net; ``max_steps`` normally ends it).
DEFAULT_TIME_LIMIT = 2.0
#: Default number of piece removals tried by :func:`improve_schedule`.
DEFAULT_STEPS = 4


def _pieces(assignment: Assignment) -> tuple[IntArray, IntArray]:
    """(permutation, switch) of every distinct piece; two pieces of one permutation on a switch merge."""
    seen = sorted({(l, b) for b, sw in enumerate(assignment) for l, x in sw if x > 0})
    perm = np.array([l for l, _ in seen], dtype=np.int64)
    sw = np.array([b for _, b in seen], dtype=np.int64)
    return perm, sw


def refit_pieces(
    demand: Demand, perms: IntArray, piece_perm: IntArray, piece_switch: IntArray, switches: int, delta: float
) -> FloatArray | None:
    """Return the LP-optimal lengths of fixed pieces (None if the LP fails or cannot cover the demand).

    Piece p holds permutation ``piece_perm[p]`` on switch ``piece_switch[p]``; the LP is the one in
    the module docstring. The lengths returned are repaired to cover every entry exactly (the
    solver's feasibility tolerance is added to a piece serving the entry).

    >>> d = Demand.from_matrix([[0, 2], [1, 0]])
    >>> refit_pieces(d, np.array([[1, 0]]), np.array([0, 0]), np.array([0, 1]), 2, 0.5).tolist()
    [1.0, 1.0]
    """
    from scipy.optimize import linprog

    np_ = piece_perm.size
    if np_ == 0:
        return None
    inc = incidence(demand, perms)[:, piece_perm].tocsr()  # entry x piece
    if (np.asarray(inc.sum(axis=1)).ravel() == 0).any():
        return None
    # Variables: x_p (np_), then T.
    cover = sp.hstack([-inc, sp.csr_array((demand.nnz, 1))])
    on_sw = sp.csr_array((np.ones(np_), (piece_switch, np.arange(np_))), shape=(switches, np_))
    load = sp.hstack([on_sw, sp.csr_array(-np.ones((switches, 1)))])
    counts = np.bincount(piece_switch, minlength=switches).astype(np.float64)
    a_ub = sp.vstack([cover, load]).tocsr()
    # Solve in units of the largest entry: HiGHS's tolerances are absolute (1e-7), so demands of
    # 1e-18 or 1e15 would otherwise be all round-off or all error.
    scale = float(demand.values.max())
    b_ub = np.concatenate([-demand.values, -delta * counts]) / scale
    c = np.zeros(np_ + 1)
    c[-1] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs")  # type: ignore[call-overload]
    if res.status != 0 or res.x is None:
        return None
    x = np.maximum(np.asarray(res.x[:np_], dtype=np.float64), 0.0) * scale
    # Exact coverage: each short entry lengthens its longest serving piece by the shortfall.
    short = demand.values - inc @ x
    for e in np.nonzero(short > 0)[0].tolist():
        cols = inc.indices[inc.indptr[e] : inc.indptr[e + 1]]
        p = int(cols[np.argmax(x[cols])])
        x[p] += float(short[e])
        short = demand.values - inc @ x
    return x


def _assignment(piece_perm: IntArray, piece_switch: IntArray, x: FloatArray, switches: int) -> Assignment:
    out: Assignment = [[] for _ in range(switches)]
    for l, b, v in zip(piece_perm.tolist(), piece_switch.tolist(), x.tolist(), strict=True):
        if v > 0:
            out[b].append((l, v))
    return out


def improve_schedule(
    demand: Demand,
    *,
    switches: int,
    delta: float,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    max_steps: int = DEFAULT_STEPS,
) -> tuple[Switches, int]:
    """Return a schedule no longer than ``spectra-pack``'s, improved by LP re-fit and piece removal.

    Parameters
    ----------
    demand : Demand
        The demand.
    switches : int
        Number of identical switches s.
    delta : float
        Reconfiguration delay.
    time_limit : float or None
        Budget in seconds for the local search (None: until no removal helps). The first LP
        re-fit always runs. Hitting it makes the result depend on the machine's speed.
    max_steps : int
        Piece removals tried (each one LP); the result depends on nothing else.

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Per switch, its configurations in time order.
    splits : int
        Pieces beyond one per permutation used.

    Notes
    -----
    Deterministic: no randomness, and candidates are tried in a fixed order (smallest piece
    first, ties by permutation then switch). Each step solves one LP with ``nnz`` covering rows
    and one column per piece (HiGHS), so a step costs about one Spectra weight re-fit.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> confs, splits = improve_schedule(d, switches=2, delta=0.5)
    >>> max(c.end for sw in confs for c in sw)
    2.75
    """
    t0 = time.perf_counter()
    s, d = switches, delta
    dec = decompose(demand, method="spectra", delta=d)
    start, _ = PLACEMENTS["pack"].func(dec.weights, s, d)  # exactly spectra-pack's placement
    best_a, best_t = start, float(loads(start, d).max(initial=0.0))

    steps = 0

    def deadline() -> bool:
        return steps >= max_steps or (time_limit is not None and time.perf_counter() - t0 >= time_limit)

    perm, sw = _pieces(start)
    x = refit_pieces(demand, dec.perms, perm, sw, s, d) if dec.weights.size else None
    if x is not None:
        keep = x > 0
        perm, sw, x = perm[keep], sw[keep], x[keep]
        cand = _assignment(perm, sw, x, s)
        t = float(loads(cand, d).max(initial=0.0))
        if t < best_t:
            best_a, best_t = cand, t
        # Local search: remove the smallest pieces while that helps.
        tried: set[tuple[int, int]] = set()
        while not deadline():
            order = [p for p in np.lexsort((sw, perm, x)).tolist() if (int(perm[p]), int(sw[p])) not in tried]
            improved = False
            for p in order:
                if deadline():
                    break
                tried.add((int(perm[p]), int(sw[p])))
                steps += 1
                keep = np.arange(perm.size) != p
                x2 = refit_pieces(demand, dec.perms, perm[keep], sw[keep], s, d)
                if x2 is None:
                    continue
                cand = _assignment(perm[keep], sw[keep], x2, s)
                t = float(loads(cand, d).max(initial=0.0))
                if t < best_t * (1 - 1e-12):
                    best_a, best_t = cand, t
                    on = x2 > 0
                    perm, sw, x = perm[keep][on], sw[keep][on], x2[on]
                    improved = True
                    break
            if not improved:
                break
    pieces = sum(len(b) for b in best_a)
    return timeline(best_a, dec.perms, d), pieces - len({l for b in best_a for l, _ in b})
