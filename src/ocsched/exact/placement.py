"""Optimal placement of fixed weighted permutations on identical switches, splits allowed (a MILP)."""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_delta, check_int, check_switches, check_time_limit
from ocsched._types import FloatArray
from ocsched.assign import Assignment, loads, pack
from ocsched.errors import InvalidInputError
from ocsched.exact._highs import _SCALE_TO, _dual, _gap, _milp_options, _status
from ocsched.exact.results import SplitResult
from ocsched.timing import busy

__all__ = ["optimal_split"]

log = logging.getLogger(__name__)


def optimal_split(
    weights: ArrayLike,
    switches: int,
    delta: float,
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
) -> SplitResult:
    """Place weighted permutations on switches optimally, allowing splits; minimise the largest load.

    Permutation l must be held for ``weights[l]`` in total; it may be cut into pieces on several
    switches (at most one piece per switch: two on the same switch merge and save a delay), each
    piece of length x costing ``delta + x`` on its switch.

    Parameters
    ----------
    weights : array_like of float, shape (m,)
        Non-negative, finite; zero weights need no piece.
    switches : int
        Number of switches s >= 1.
    delta : float
        Reconfiguration delay >= 0.
    time_limit : float, optional
        Seconds; on expiry the best assignment found is returned with status ``"time_limit"``.
        Without one the result does not depend on the machine.
    node_limit : int, optional
        Branch-and-bound nodes; on reaching it the best assignment found is returned with
        status ``"node_limit"``.

    Returns
    -------
    SplitResult
        Makespan, assignment in the format of :mod:`ocsched.assign`, dual bound, gap and status.

    Raises
    ------
    InvalidInputError
        If ``weights`` is not a 1-D array of finite non-negative numbers, or ``switches``,
        ``delta`` or ``time_limit`` is malformed.

    Notes
    -----
    MILP with ``x[l, b] >= 0`` (length of l's piece on switch b) and binary ``y[l, b]`` (the
    piece exists): ``sum_b x[l, b] = w_l``, ``x[l, b] <= min(w_l, U - delta) y[l, b]``,
    ``sum_l delta y[l, b] + x[l, b] <= T``; minimise T. U is the makespan of
    :func:`ocsched.assign.pack` (greedy + equalize, or the bisection packing when shorter): an
    upper bound, so ``T <= U`` and the big-M constants are tight. Switches are identical, so
    loads are ordered ``load_0 >= load_1 >= ...`` (symmetry breaking); ``T >= (sum w + delta m)
    / s`` and ``T >= delta + max(w) / s`` (m positive weights) are valid cuts. The result is
    never worse than greedy + equalize, nor than packing.

    Examples
    --------
    >>> r = optimal_split([3.0, 1.0], 2, 0.5)
    >>> r.status, round(r.makespan, 9)
    ('optimal', 2.75)
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    w = _check_weights(weights)
    s = check_switches(switches)
    d = check_delta(delta)
    tl = check_time_limit(time_limit)
    nl = None if node_limit is None else check_int(node_limit, "node_limit")
    pos = np.nonzero(w > 0)[0]
    # The heuristic answer: an incumbent, and the fallback if the solver fails.
    heur, _ = pack(w, s, d)
    heur = [[(l, x) for l, x in sw if x > 0] for sw in heur]
    ub = float(loads(heur, d).max(initial=0.0)) if pos.size else 0.0
    if pos.size == 0:
        return SplitResult("optimal", 0.0, [[] for _ in range(s)], 0.0, 0.0)
    wp = w[pos]
    m = wp.size
    lb = max((float(wp.sum()) + d * m) / s, d + float(wp.max()) / s)
    if s == 1 or ub <= lb * (1 + 1e-12):
        return SplitResult("optimal", ub, heur, min(lb, ub), _gap(ub, min(lb, ub)))
    scale = _SCALE_TO / ub
    ws, ds, ubs = wp * scale, d * scale, _SCALE_TO
    # Variables: T, then y[l, b] (index l * s + b), then x[l, b].
    nv = 1 + 2 * m * s
    iy = 1 + np.arange(m * s)
    ix = 1 + m * s + np.arange(m * s)
    cap = np.repeat(np.minimum(ws, ubs - ds), s)
    rows: list[sp.coo_array] = []
    lo: list[FloatArray] = []
    hi: list[FloatArray] = []

    def add(a: sp.coo_array, lower: FloatArray, upper: FloatArray) -> None:
        rows.append(a)
        lo.append(lower)
        hi.append(upper)

    # Demand of each permutation: sum_b x[l, b] = w_l.
    r = np.repeat(np.arange(m), s)
    add(sp.coo_array((np.ones(m * s), (r, ix)), shape=(m, nv)), ws, ws)
    # Big-M: x - cap * y <= 0.
    k = np.arange(m * s)
    add(
        sp.coo_array(
            (np.concatenate([np.ones(m * s), -cap]), (np.concatenate([k, k]), np.concatenate([ix, iy]))),
            shape=(m * s, nv),
        ),
        np.full(m * s, -np.inf),
        np.zeros(m * s),
    )
    # Loads: sum_l delta y + x - T <= 0, and the symmetry-breaking order load_b >= load_{b+1}.
    load = np.zeros((s, nv))
    b_of = np.tile(np.arange(s), m)
    np.add.at(load, (b_of, iy), busy(0.0, 1, ds))  # the delay each piece adds to its switch
    np.add.at(load, (b_of, ix), 1.0)
    lt = load.copy()
    lt[:, 0] = -1.0
    add(sp.coo_array(lt), np.full(s, -np.inf), np.zeros(s))
    add(sp.coo_array(load[:-1] - load[1:]), np.zeros(s - 1), np.full(s - 1, np.inf))
    # Every permutation needs at least one piece.
    add(sp.coo_array((np.ones(m * s), (r, iy)), shape=(m, nv)), np.ones(m), np.full(m, np.inf))
    a = sp.vstack(rows).tocsr()
    c = np.zeros(nv)
    c[0] = 1.0
    lbs = np.zeros(nv)
    ubv = np.concatenate([[ubs], np.ones(m * s), cap])
    lbs[0] = lb * scale
    integrality = np.zeros(nv, dtype=np.int64)
    integrality[iy] = 1
    res = milp(
        c,
        integrality=integrality,
        bounds=Bounds(lbs, ubv),
        constraints=LinearConstraint(a, np.concatenate(lo), np.concatenate(hi)),
        options=_milp_options(tl, nl),
    )
    status = _status(res)
    dual = _dual(res, lb * scale) / scale
    best, best_ms = heur, ub
    if res.x is not None:
        x = np.asarray(res.x)
        yv = x[iy].reshape(m, s) > 0.5
        xv = np.where(yv, np.maximum(x[ix].reshape(m, s), 0.0), 0.0) / scale
        # Make each permutation's pieces add up to exactly its weight (solver tolerance): the
        # difference goes to its longest piece.
        for li in range(m):
            bmax = int(np.argmax(xv[li]))
            xv[li, bmax] += wp[li] - xv[li].sum()
        if (xv >= 0).all():
            cand: Assignment = [
                [(int(pos[li]), float(xv[li, b])) for li in range(m) if xv[li, b] > 0] for b in range(s)
            ]
            cand_ms = float(loads(cand, d).max(initial=0.0))
            if cand_ms < best_ms:
                best, best_ms = cand, cand_ms
    if status not in ("optimal", "time_limit", "node_limit"):
        log.warning(
            "optimal_split: solver returned %r (%s); keeping the packed placement", status, res.message
        )
        dual = lb
    dual = min(dual, best_ms)
    return SplitResult(status, best_ms, best, dual, _gap(best_ms, dual))


def _check_weights(weights: ArrayLike) -> FloatArray:
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"`weights` must be a 1-D array of numbers; got {weights!r}") from None
    if w.ndim != 1:
        raise InvalidInputError(f"`weights` must be 1-D; got shape {w.shape}")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        k = int(np.argmax(bad))
        raise InvalidInputError(f"`weights` must be finite and non-negative; weights[{k}] = {w[k]}")
    return w
