"""The exact scheduler: a minimum-makespan schedule of a small instance, by a matching MILP."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._checks import check_delta, check_int, check_switches, check_time_limit
from ocsched.assign import Assignment, place, timeline
from ocsched.bounds import lower_bound
from ocsched.decompose import spectra_decompose
from ocsched.exact._highs import _SCALE_TO, _STATUS, _dual, _gap, _milp_options
from ocsched.exact.matchings import maximal_matchings
from ocsched.exact.results import ExactResult
from ocsched.exact.split import optimal_split
from ocsched.improve import improve_schedule
from ocsched.model import Demand, Schedule, as_demand
from ocsched.timing import busy

__all__ = ["DEFAULT_TIME_LIMIT", "MAX_PORTS", "solve_exact"]

log = logging.getLogger(__name__)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Largest n accepted by the ``"exact"`` scheduler.
MAX_PORTS = 6

#: Time limit (seconds) of the ``"exact"`` scheduler.
DEFAULT_TIME_LIMIT = 60.0


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
