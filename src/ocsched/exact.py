"""Exact optima for small instances, by mixed-integer programming.

A lower bound says how good a schedule could be; an exact optimum says how good it can be.

- :func:`optimal_split` places a *fixed* set of weighted permutations on s switches optimally,
  allowing splits: the best any Schedule+Equalize step can do with those permutations.
- :func:`solve_exact` solves the whole problem (choice of matchings, durations and switches) for
  small n; it is registered as the scheduler ``"exact"``.

Both are MILPs solved with HiGHS through :func:`scipy.optimize.milp`, which reports the incumbent,
the dual bound and the gap when it stops at its time limit; the optional ``highspy`` package is
not needed. A time limit is a status (``"time_limit"``), never an exception.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._checks import check_delta, check_int, check_switches, check_time_limit
from ocsched.assign import Assignment, loads, pack, place, timeline
from ocsched.bounds import lower_bound
from ocsched.decompose import spectra_decompose
from ocsched.errors import InvalidInputError
from ocsched.improve import improve_schedule
from ocsched.model import Configuration, Demand, Schedule, as_demand
from ocsched.timing import busy

__all__ = [
    "MAX_MATCHINGS",
    "MAX_PORTS",
    "NEAR_OPTIMAL_NODES",
    "NEAR_OPTIMAL_SIZE",
    "ExactResult",
    "SplitResult",
    "maximal_matchings",
    "near_optimal",
    "optimal_split",
    "solve_exact",
]

log = logging.getLogger(__name__)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Largest n accepted by the ``"exact"`` scheduler.
MAX_PORTS = 6
#: :func:`solve_exact` refuses a demand whose support has more maximal matchings than this.
MAX_MATCHINGS = 20_000
#: Time limit (seconds) of the ``"exact"`` scheduler.
DEFAULT_TIME_LIMIT = 60.0
#: The MILP is scaled so that the incumbent makespan is this large: HiGHS's absolute tolerances
#: (gap 1e-6, feasibility 1e-7) then become small relative ones.
_SCALE_TO = 100.0

_STATUS = {0: "optimal", 1: "time_limit", 2: "infeasible", 3: "unbounded", 4: "error"}


@dataclass(frozen=True, eq=False)
class SplitResult:
    """The result of :func:`optimal_split`.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"time_limit"`` (best assignment found so far) or ``"error"``.
    makespan : float
        The largest switch load of ``assignment``.
    assignment : list of list of (int, float)
        Per switch, the pieces ``(permutation index, length)`` (the format of :mod:`ocsched.assign`).
    dual_bound : float
        No assignment of these permutations has a smaller makespan.
    gap : float
        ``(makespan - dual_bound) / makespan`` (0 when both are 0).
    """

    status: str
    makespan: float
    assignment: Assignment
    dual_bound: float
    gap: float


@dataclass(frozen=True, eq=False)
class ExactResult:
    """The result of :func:`solve_exact`.

    Attributes
    ----------
    status : str
        ``"optimal"`` (proved within the solver's tolerance), ``"time_limit"`` (``schedule`` is the
        best found, ``dual_bound`` what is proved), ``"infeasible"`` or ``"error"`` (solver
        failures; ``schedule`` is then the Spectra incumbent).
    schedule : Schedule
        The best valid schedule found (``algorithm="exact"``).
    makespan : float
        ``schedule.makespan``.
    dual_bound : float
        No valid schedule has a smaller makespan: the solver's bound, never below
        :func:`ocsched.lower_bound`.
    gap : float
        ``(makespan - dual_bound) / makespan`` (0 when both are 0).
    runtime : float
        Wall-clock seconds spent.
    matchings : int
        Number of maximal matchings of the demand's support (the model's size).
    nodes : int
        Branch-and-bound nodes explored.
    """

    status: str
    schedule: Schedule
    makespan: float
    dual_bound: float
    gap: float
    runtime: float
    matchings: int
    nodes: int = 0

    @property
    def optimal(self) -> bool:
        """True if optimality was proved."""
        return self.status == "optimal"


def _gap(upper: float, lower: float) -> float:
    return max(0.0, (upper - lower) / upper) if upper > 0 else 0.0


def _milp_options(time_limit: float | None, node_limit: int | None = None) -> Any:
    opts: dict[str, Any] = {"mip_rel_gap": 1e-9, "presolve": True}
    if node_limit is not None:
        opts["node_limit"] = node_limit
    if time_limit is not None and math.isfinite(time_limit):
        opts["time_limit"] = time_limit
    return opts


# --------------------------------------------------------------------------------------------
# optimal_split
# --------------------------------------------------------------------------------------------


def optimal_split(
    weights: ArrayLike, switches: int, delta: float, *, time_limit: float | None = None
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
        options=_milp_options(tl),
    )
    status = _STATUS.get(int(res.status), "error")
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
    if status not in ("optimal", "time_limit"):
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


def _dual(res: Any, floor: float) -> float:
    bound = getattr(res, "mip_dual_bound", None)
    if res.status == 0 and res.fun is not None:
        bound = res.fun if bound is None or not np.isfinite(bound) else bound
    if bound is None or not np.isfinite(bound):
        return floor
    return max(float(bound), floor)


# --------------------------------------------------------------------------------------------
# solve_exact
# --------------------------------------------------------------------------------------------


def maximal_matchings(demand: Demand, *, limit: int = MAX_MATCHINGS) -> IntArray:
    """Return every inclusion-maximal matching of the demand's support, as rows ``perm[i] = j``.

    Raises
    ------
    InvalidInputError
        If there are more than ``limit`` of them (the instance is too large for the exact model).

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    >>> maximal_matchings(d).tolist()
    [[1, 0, -1], [1, 2, 0], [2, 0, 1], [2, -1, 0], [-1, 2, 1]]
    """
    n = demand.n
    adj: list[list[int]] = [[] for _ in range(n)]
    for i, j in zip(demand.rows.tolist(), demand.cols.tolist(), strict=True):
        adj[i].append(j)
    out: list[list[int]] = []
    perm = [-1] * n
    used = [False] * n

    def rec(i: int) -> None:
        if i == n:
            # Maximal: no support edge joins an unmatched row to an unmatched column.
            if all(perm[r] >= 0 or all(used[c] for c in adj[r]) for r in range(n)):
                out.append(perm.copy())
                if len(out) > limit:
                    raise InvalidInputError(
                        f"`demand` has more than {limit} maximal matchings in its support "
                        f"(n = {n}, {demand.nnz} nonzeros); the exact model is for small instances"
                    )
            return
        for j in adj[i]:
            if not used[j]:
                used[j] = True
                perm[i] = j
                rec(i + 1)
                used[j] = False
                perm[i] = -1
        rec(i + 1)

    rec(0)
    return np.array(out, dtype=np.int64).reshape(len(out), n)


def solve_exact(
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    *,
    switches: int,
    delta: float,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    node_limit: int | None = None,
) -> ExactResult:
    """Return a minimum-makespan schedule of a small instance, with proof of optimality or a gap.

    Parameters
    ----------
    demand : array_like, sparse matrix or Demand
        n x n non-negative demand; meant for small supports (see ``MAX_MATCHINGS``).
    switches : int
        Number of parallel switches s >= 1.
    delta : float
        Reconfiguration delay >= 0.
    time_limit : float or None
        Seconds for the MILP (None: no limit). On expiry the best schedule found is returned with
        status ``"time_limit"`` and its gap to the proved bound.
    node_limit : int or None
        Branch-and-bound nodes for the MILP (None: no limit); reaching it also gives status
        ``"time_limit"``. Unlike a time limit, the result then does not depend on the machine.

    Returns
    -------
    ExactResult
        Status, the best valid schedule, its makespan, the dual bound and the gap.

    Raises
    ------
    InvalidInputError
        For malformed input, or a support with more than ``MAX_MATCHINGS`` maximal matchings.

    Notes
    -----
    **Model.** Configurations on different switches are independent (a port has one link to
    every switch, and a pair may be served on several switches at once), so only each switch's
    *set* of configurations matters: its load is ``sum (delta + duration)``, the makespan is the
    largest load, and the order on a switch is irrelevant. Let E be the demand's support and
    𝓜 the inclusion-maximal matchings of the bipartite graph E (:func:`maximal_matchings`).
    Variables: binary ``y[b, M]`` (switch b holds matching M) and ``t[b, M] >= 0`` (for how long)
    for every switch b and M in 𝓜::

        minimise T
        sum_M delta y[b, M] + t[b, M] <= T                 for every switch b
        sum_{b, M ∋ e} t[b, M] >= D_e                      for every e in E
        t[b, M] <= min(U - delta, max_{e in M} D_e) y[b, M]

    **Why this is exact (no restriction on the number of configurations).** Take any valid
    schedule. (1) Drop circuits outside E from every configuration: nothing changes. (2) Replace
    each configuration's matching by a maximal matching of E containing it: the cost
    ``delta + duration`` is unchanged and coverage only grows. (3) Merge the configurations of
    one switch that use the same matching into one, durations added: coverage is unchanged and a
    delay is saved. The result is a feasible point of the MILP with no larger makespan, so the
    MILP optimum equals the true optimum. Conversely every MILP solution is a schedule (run each
    switch's matchings back to back). The upper bounds on t are valid because in an optimal
    schedule no configuration lasts beyond ``T - delta <= U - delta`` or longer than the largest
    entry it serves. Hence no K (slots per switch) needs choosing: the model has
    ``s * |𝓜|`` binaries, which is what limits it to small supports.

    **Bounds and cuts.** U is the makespan of the incumbent: a Spectra schedule, or Spectra's
    permutations placed by :func:`optimal_split`, or ``spectra-opt``
    (:func:`ocsched.improve.improve_schedule`), whichever is best (the result is never worse
    than any of them), so ``T <= U``; ``T >= lower_bound(D, strong=True)`` (the packing bound
    of :mod:`ocsched.bounds.packing` included). Entry e needs at least
    ``ceil(D_e / (U - delta))`` configurations (each lasts at most ``U - delta``), which gives
    the cut ``sum_{b, M ∋ e} y[b, M] >= ceil(D_e / (U - delta))``. Integer variables
    ``u[b, e] = sum_{M ∋ e} y[b, M]`` (how many configurations of switch b serve e) add nothing
    to the model but let the solver branch on where an entry is served. Switches are identical,
    so they are sorted by the first matching they hold (``y[b+1, k] <= sum_{j <= k} y[b, j]``;
    empty switches last): every schedule has such a relabelling, so no optimum is cut off.

    **Scaling.** The model has ``s * |𝓜|`` binaries; |𝓜| is 5 for the complete 3 x 3 support,
    at most a few hundred for n = 6, and grows exponentially with n. In practice every n <= 4
    instance solves in seconds; at n = 5-6, s = 2 solves in about 10 s while s = 4 often hits a
    60 s limit (switch symmetry and the weak LP relaxation of the per-configuration delay); see
    ``benchmarks/exact_scaling.py``.

    **Numerics.** The MILP is scaled so that U = 100 (HiGHS's absolute tolerances then act as
    about 1e-8 relative). The solver's answer is rounded (``y > 0.5``) and any shortfall left
    by its feasibility tolerance is added to a configuration serving the entry, so the returned
    schedule always validates; its makespan can exceed the solver's objective by about 1e-9
    relative, which ``gap`` shows honestly.

    Examples
    --------
    >>> r = solve_exact([[0, 2, 1], [2, 0, 1], [1, 1, 0]], switches=1, delta=0.25)
    >>> r.status, round(r.makespan, 6), round(r.dual_bound, 6)
    ('optimal', 3.75, 3.75)
    """
    t_start = time.perf_counter()
    dem = as_demand(demand)
    s = check_switches(switches)
    d = check_delta(delta)
    tl = check_time_limit(time_limit)
    nl = None if node_limit is None else check_int(node_limit, "node_limit")
    n = dem.n
    lb = lower_bound(dem, switches=s, delta=d, strong=True)
    if dem.nnz == 0:
        empty = Schedule(ports=n, delta=d, switches=((),) * s, algorithm="exact", lower_bound=0.0)
        return ExactResult("optimal", empty, 0.0, 0.0, 0.0, time.perf_counter() - t_start, 0)
    mats = maximal_matchings(dem)
    nm = mats.shape[0]
    dec = spectra_decompose(dem)
    incumbent = Schedule(ports=n, delta=d, switches=place(dec, switches=s, delta=d)[0], algorithm="spectra")
    # Spectra's permutations placed optimally: a tighter U shrinks the big-M constants and
    # strengthens the per-entry cuts; it is also the answer if the MILP finds nothing better.
    split = optimal_split(dec.weights, s, d, time_limit=None if tl is None else 0.1 * tl)
    if split.makespan < incumbent.makespan:
        incumbent = Schedule(
            ports=n, delta=d, switches=timeline(split.assignment, dec.perms, d), algorithm="spectra+split"
        )
    # spectra-pack improved by LP re-fit and piece removal: often a tighter incumbent still.
    better = Schedule(
        ports=n, delta=d, switches=improve_schedule(dem, switches=s, delta=d)[0], algorithm="spectra-opt"
    )
    if better.makespan < incumbent.makespan:
        incumbent = better
    ub = incumbent.makespan

    def finish(status: str, sched: Schedule, dual: float, nodes: int) -> ExactResult:
        sched = Schedule(
            ports=n,
            delta=d,
            switches=sched.switches,
            algorithm="exact",
            lower_bound=lb,
            splits=sched.splits,
            meta={"status": status, "dual_bound": dual, "source": sched.algorithm},
        )
        ms = sched.makespan
        dual = min(dual, ms)
        return ExactResult(status, sched, ms, dual, _gap(ms, dual), time.perf_counter() - t_start, nm, nodes)

    # The bounds are bisected to a relative 1e-10 (the packing test adds 1e-9 of slack); closer
    # than 1e-8 the MILP's own tolerances cannot separate them (HiGHS then reports the band
    # [lb, ub] infeasible), so the incumbent is declared optimal and the gap says by how much.
    if ub <= lb * (1 + 1e-8):
        return finish("optimal", incumbent, lb, 0)

    scale = _SCALE_TO / ub
    # Incidence entry x matching: inc[e, k] = 1 if matching k holds entry e.
    inc = (mats[:, dem.rows] == dem.cols[None, :]).T.astype(np.float64)
    remaining = None if tl is None else max(1e-3, tl - (time.perf_counter() - t_start))
    res = _solve_milp(dem.values * scale, inc, s, d * scale, lb * scale, ub * scale, remaining, nl)
    nodes = int(getattr(res, "mip_node_count", 0) or 0)
    status = _STATUS.get(int(res.status), "error")
    if status == "error" and nl is not None and "Status 16" in str(res.message):
        # scipy does not know HiGHS's code for a reached node limit (16); it is a limit, not a failure.
        status = "time_limit"
    dual = _dual(res, lb * scale) / scale
    best = incumbent
    if res.x is not None:
        x = np.asarray(res.x)
        nb = s * nm
        y, t = x[1 : 1 + nb].reshape(s, nm), x[1 + nb : 1 + 2 * nb].reshape(s, nm) / scale
        cand = _repair(dem, mats, inc, y, t, d)
        if cand.makespan < best.makespan:
            best = cand
    if status not in ("optimal", "time_limit"):
        log.warning(
            "solve_exact: solver returned %r (%s); keeping the heuristic schedule", status, res.message
        )
        dual = lb
    return finish(status, best, dual, nodes)


def _solve_milp(
    dv: FloatArray,
    inc: FloatArray,
    s: int,
    ds: float,
    t_lo: float,
    t_hi: float,
    time_limit: float | None,
    node_limit: int | None = None,
) -> Any:
    """Solve the matching MILP (scaled units) with the makespan restricted to [t_lo, t_hi]."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    e_count, nm = inc.shape
    cap = np.minimum((inc * dv[:, None]).max(axis=0), t_hi - ds)
    # Variables: T, then y[b, k] at 1 + b * nm + k, then t[b, k] at 1 + s * nm + b * nm + k.
    nb = s * nm
    nv = 1 + 2 * nb
    blocks: list[sp.csr_array] = []
    lo: list[FloatArray] = []
    hi: list[FloatArray] = []

    def add(t_col: sp.csr_array, y_part: sp.csr_array, t_part: sp.csr_array, lower: Any, upper: Any) -> None:
        blocks.append(sp.hstack([t_col, y_part, t_part]).tocsr())
        rows_ = blocks[-1].shape[0]
        lo.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (rows_,)))
        hi.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (rows_,)))

    rep = sp.hstack([sp.csr_array(inc)] * s).tocsr()  # entry x (switch, matching)
    none_e = sp.csr_array((e_count, nb))
    # Coverage.
    add(sp.csr_array((e_count, 1)), none_e, rep, dv, np.inf)
    # Configurations needed per entry (each lasts at most U - delta).
    need = np.maximum(1.0, np.ceil(dv / (t_hi - ds) * (1 - 1e-9)))
    add(sp.csr_array((e_count, 1)), rep, none_e, need, np.inf)
    # Big-M: t - cap y <= 0.
    eye = sp.eye_array(nb, format="csr")
    add(sp.csr_array((nb, 1)), -sp.diags_array(np.tile(cap, s)).tocsr(), eye, -np.inf, 0.0)
    # Loads, and their order (symmetry breaking).
    per_sw = sp.kron(sp.eye_array(s), sp.csr_array(np.ones((1, nm)))).tocsr()
    add(sp.csr_array(-np.ones((s, 1))), busy(0.0, 1, ds) * per_sw, per_sw, -np.inf, 0.0)
    if s > 1:
        # Symmetry breaking: switches sorted by the first matching they hold (empty ones last),
        # y[b+1, k] <= sum_{j <= k} y[b, j].
        tri = sp.csr_array(np.tril(np.ones((nm, nm))))
        blk = sp.kron(sp.eye_array(s - 1, s, k=0), -tri) + sp.kron(
            sp.eye_array(s - 1, s, k=1), sp.eye_array(nm)
        )
        add(
            sp.csr_array(((s - 1) * nm, 1)), sp.csr_array(blk), sp.csr_array(((s - 1) * nm, nb)), -np.inf, 0.0
        )
    a = sp.vstack(blocks).tocsr()
    c = np.zeros(nv)
    c[0] = 1.0
    lbs = np.zeros(nv)
    lbs[0] = t_lo
    ubv = np.concatenate([[t_hi * (1 + 1e-9)], np.ones(nb), np.tile(cap, s)])
    integrality = np.zeros(nv, dtype=np.int64)
    integrality[1 : 1 + nb] = 1
    # Integer u[b, e] = sum_{M ∋ e} y[b, M], configurations of switch b serving entry e: the
    # solver can branch on "which switches serve e", which closes gaps that branching on single
    # matchings leaves open for a long time.
    nu = s * e_count
    a = sp.hstack([a, sp.csr_array((a.shape[0], nu))]).tocsr()
    yblock = sp.kron(sp.eye_array(s), sp.csr_array(inc)).tocsr()  # (s*E) x (s*nm)
    rowsu = sp.csr_array(
        sp.hstack([sp.csr_array((nu, 1)), -yblock, sp.csr_array((nu, nb)), sp.eye_array(nu, format="csr")])
    )
    a = sp.vstack([a, rowsu]).tocsr()
    lo.append(np.zeros(nu))
    hi.append(np.zeros(nu))
    c = np.concatenate([c, np.zeros(nu)])
    lbs = np.concatenate([lbs, np.zeros(nu)])
    ubv = np.concatenate([ubv, np.full(nu, float(nm))])
    integrality = np.concatenate([integrality, np.ones(nu, dtype=np.int64)])
    return milp(
        c,
        integrality=integrality,
        bounds=Bounds(lbs, ubv),
        constraints=LinearConstraint(a, np.concatenate(lo), np.concatenate(hi)),
        options=_milp_options(time_limit, node_limit),
    )


def _repair(
    dem: Demand, mats: IntArray, inc: FloatArray, y: FloatArray, t: FloatArray, delta: float
) -> Schedule:
    """Turn a (tolerance-feasible) MILP point into a valid schedule."""
    s, nm = y.shape
    dur = np.where(y > 0.5, np.maximum(t, 0.0), 0.0)
    short = dem.values - inc @ dur.sum(axis=0)
    for e in np.nonzero(short > 0)[0]:
        load = busy(dur.sum(axis=1), (dur > 0).sum(axis=1), delta)
        held = np.nonzero(inc[e] > 0)[0]
        # Prefer lengthening a configuration already held (no extra delay), on the least-loaded switch.
        on = [(float(load[b]), b, int(k)) for b in range(s) for k in held if dur[b, k] > 0]
        b, k = min(on)[1:] if on else (int(np.argmin(load)), int(held[0]))
        dur[b, k] += short[e]
        short = dem.values - inc @ dur.sum(axis=0)
    assignment: Assignment = [[(k, float(dur[b, k])) for k in range(nm) if dur[b, k] > 0] for b in range(s)]
    return Schedule(ports=dem.n, delta=delta, switches=timeline(assignment, mats, delta), algorithm="milp")


#: :func:`near_optimal` runs the MILP when switches x maximal matchings is at most this (the
#: number of binaries; beyond it 200 nodes take seconds).
NEAR_OPTIMAL_SIZE = 200
#: Branch-and-bound nodes :func:`near_optimal` gives the MILP (deterministic, unlike seconds).
NEAR_OPTIMAL_NODES = 200


def near_optimal(
    demand: Demand,
    *,
    switches: int,
    delta: float,
    node_limit: int = NEAR_OPTIMAL_NODES,
    time_limit: float | None = 2.0,
) -> tuple[tuple[tuple[Configuration, ...], ...], int, str, float | None]:
    """Return the ``spectra-opt`` schedule: the best of spectra-pack, its LP improvement and a short MILP.

    On a small model (switches x maximal matchings <= :data:`NEAR_OPTIMAL_SIZE`, n <=
    :data:`MAX_PORTS`) :func:`solve_exact` runs for ``node_limit`` nodes from the
    ``spectra-opt`` incumbent, so the result is never worse than
    :func:`ocsched.improve.improve_schedule` (itself never worse than ``spectra-pack``); a proof
    of optimality found on the way is kept. Otherwise the LP improvement alone.

    The node limit makes the result independent of the machine; ``time_limit`` (seconds) is a
    safety net for the rare model where 200 nodes are slow, and when it ends the MILP the
    result depends on the machine's speed.

    Returns
    -------
    configurations, splits, status, dual_bound
        Per-switch configurations, extra pieces, ``"optimal"`` when proved (else
        ``"heuristic"``), and the MILP's dual bound when it ran (else None).

    Examples
    --------
    >>> confs, splits, status, dual = near_optimal(
    ...     Demand.from_matrix([[0, 2, 1], [2, 0, 1], [1, 1, 0]]), switches=1, delta=0.25
    ... )
    >>> round(max(c.end for c in confs[0]), 6), status
    (3.75, 'optimal')
    """
    if demand.n <= MAX_PORTS and demand.nnz:
        try:
            small = switches * len(maximal_matchings(demand, limit=NEAR_OPTIMAL_SIZE)) <= NEAR_OPTIMAL_SIZE
        except InvalidInputError:
            small = False
        if small:
            res = solve_exact(
                demand, switches=switches, delta=delta, time_limit=time_limit, node_limit=node_limit
            )
            # res.schedule is the best of the MILP's answer and its incumbents (spectra-opt's among
            # them) whatever the status, so it is never worse than improve_schedule.
            dual = res.dual_bound if res.status in ("optimal", "time_limit") else None
            return res.schedule.switches, 0, "optimal" if res.optimal else "heuristic", dual
    confs, splits = improve_schedule(demand, switches=switches, delta=delta)
    return confs, splits, "heuristic", None
