"""The exact scheduler: a minimum-makespan schedule of a small instance, by a matching MILP."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_int, check_time_limit
from ocsched._jit import clock
from ocsched._types import FloatArray, IntArray
from ocsched.assign import Assignment, place, place_on_fabric, timeline
from ocsched.bounds import lower_bound
from ocsched.decompose import decompose, spectra_decompose
from ocsched.exact._highs import _SCALE_TO, _dual, _gap, _status
from ocsched.exact.columns import Columns, fabric_columns
from ocsched.exact.milp import solve_milp
from ocsched.exact.placement import optimal_split
from ocsched.exact.results import ExactResult
from ocsched.fabric import Fabric, as_fabric
from ocsched.improve import improve_on_fabric, improve_schedule
from ocsched.improve.structure import (
    Piece,
    SwitchTimes,
    check_valid,
    entries_of,
    make_valid,
    refit,
    sort_pieces,
    switch_times,
    to_switches,
)
from ocsched.model import Configuration, Demand, Schedule, as_demand
from ocsched.timing import busy

__all__ = ["DEFAULT_NODE_LIMIT", "MAX_EXACT_PORTS", "solve_exact"]

log = logging.getLogger(__name__)

Switches = tuple[tuple[Configuration, ...], ...]

#: Largest n accepted by the ``"exact"`` scheduler.
MAX_EXACT_PORTS = 6

#: Branch-and-bound nodes of the ``"exact"`` scheduler and the default of :func:`solve_exact`: a
#: count of work, so the result is the same on any machine under any load. It proves optimal
#: 354 of the 355 seeded instances with n <= 4 of ``tests/exact/test_exact.py`` (the others need at most
#: 250 nodes; the outlier needs 5,230) and every instance of ``benchmarks/exact_scaling.py`` that a
#: 60 s limit proved (at most 368 nodes). On the hardest n = 5-6 models (four switches) a node
#: takes 0.03-0.2 s on the development machine, so the worst case is a few minutes, like the
#: 60 s time limit it replaces on an idle machine. Pass ``node_limit`` (or ``time_limit``) to
#: :func:`solve_exact` to go further or stop sooner.
DEFAULT_NODE_LIMIT = 1_000


def _end(switches: Switches) -> float:
    return max((c.end for sw in switches for c in sw), default=0.0)


def solve_exact(
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    *,
    switches: int | None = None,
    delta: float | None = None,
    fabric: Fabric | None = None,
    time_limit: float | None = None,
    node_limit: int | None = DEFAULT_NODE_LIMIT,
    incumbents: Iterable[Switches] = (),
) -> ExactResult:
    """Return a minimum-makespan schedule of a small instance, with proof of optimality or a gap.

    Parameters
    ----------
    demand : array_like, sparse matrix or Demand
        n x n non-negative demand; meant for small supports (see ``MAX_MATCHINGS``).
    switches : int
        Number of parallel switches s >= 1 (the shortcut for ``Fabric.uniform(switches, delta)``).
    delta : float
        Reconfiguration delay >= 0.
    fabric : Fabric, optional
        Instead of ``switches`` and ``delta``: any fabric (per-switch delays and rates, failed
        links, down windows, either model; see Notes).
    time_limit : float or None
        Seconds for the whole solve (None, the default: no limit). Only when given does the
        result depend on the machine's speed and load; on expiry the best schedule found is
        returned with status ``"time_limit"`` and its gap to the proved bound.
    node_limit : int or None
        Branch-and-bound nodes for the MILP (default :data:`DEFAULT_NODE_LIMIT`; None: no limit);
        reaching it gives status ``"node_limit"``, the same on any machine.
    incumbents : iterable of schedules
        More valid schedules of ``demand`` on the fabric (per switch, its configurations); the
        result is never worse than any of them. One that is not valid is ignored.

    Returns
    -------
    ExactResult
        Status, the best valid schedule, its makespan, the dual bound and the gap.

    Raises
    ------
    InvalidInputError
        For malformed input, or a support with more than ``MAX_MATCHINGS`` maximal matchings.
    InfeasibleError
        If some demand entry can be served by no switch of the fabric.

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

    **Fabrics.** The same argument holds switch by switch on any all-stop fabric once the
    columns say *when* a configuration may run (:mod:`ocsched.exact.columns`). A switch of rate
    c_b serves ``c_b t`` (coverage ``sum c_b t[b, M] >= D_e``) and pays its own delay d_b. Its
    down windows cut its time into phases ``[alpha, beta)``; a configuration lies in one phase
    (the all-stop rule restarts a switch dark after a window). A link of port p to b failing at
    f > 0 gives every configuration using p on b the deadline f (one failing at 0 removes p's
    circuits from b). A column is (b, phase, deadline class g, M) with M maximal among the
    support edges whose ports are still linked to b at g; in step (2) a configuration is
    extended only by such edges, so its deadline class is kept. Per (b, phase) the columns run
    in order of deadline, which meets every deadline iff (Jackson's rule) for each class g::

        sum_{columns of class <= g} d_b y + t <= g - alpha,   and the phase's total <= T - alpha

    (a phase that ends at a window: its total <= beta - alpha). Switches are interchangeable, and
    ordered for symmetry breaking, only when their delay, rate, windows and failed links are
    equal. Under the **partial model** (kept circuits stay lit between configurations, so order
    matters and a schedule can beat every all-stop one) the all-stop optimum is still a valid
    schedule but is not proved optimal there: the status is then ``"heuristic"`` and the dual
    bound :func:`ocsched.lower_bound` of the partial fabric, never the all-stop MILP's.

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
    empty switches last): every schedule has such a relabelling, so no optimum is cut off. On a
    fabric the incumbents are Spectra's permutations placed and packed on it and ``spectra-opt``
    on it (:func:`ocsched.improve.improve_on_fabric`), and the bound is the fabric's.

    **Limits.** No wall clock unless ``time_limit`` is given: by default the solve stops after
    :data:`DEFAULT_NODE_LIMIT` nodes, so the same input gives the same schedule, status and bound
    on any machine and under any load. HiGHS's MIP solver is deterministic for fixed options: its
    random seed is fixed (default 0), its tree search is serial unless its ``parallel`` option is
    on, and its parallel steps (symmetry detection) do not change the path; ``scipy.optimize.milp``
    exposes neither seed nor threads and sets neither, so nothing else needs pinning.

    **Scaling.** The model has ``s * |𝓜|`` binaries; |𝓜| is 5 for the complete 3 x 3 support,
    at most a few hundred for n = 6, and grows exponentially with n. In practice every n <= 4
    instance solves in seconds; at n = 5-6, s = 2 solves in about 10 s while s = 4 can need
    minutes (switch symmetry and the weak LP relaxation of the per-configuration delay); see
    ``benchmarks/exact_scaling.py``.

    **Numerics.** The MILP is scaled so that U = 100 (HiGHS's absolute tolerances then act as
    about 1e-8 relative). The solver's answer is rounded (``y > 0.5``) and any shortfall left
    by its feasibility tolerance is added to a configuration serving the entry (on a fabric:
    one whose phase has room before its deadlines, after the durations are re-fit by LP with a
    small deadline margin), so the returned schedule always validates; its makespan can exceed
    the solver's objective by about 1e-9 relative, which ``gap`` shows honestly.

    Examples
    --------
    >>> r = solve_exact([[0, 2, 1], [2, 0, 1], [1, 1, 0]], switches=1, delta=0.25)
    >>> r.status, round(r.makespan, 6), round(r.dual_bound, 6)
    ('optimal', 3.75, 3.75)
    """
    # The clock only measures the runtime, and the remaining budget when a time limit is given.
    t_start = clock()
    dem = as_demand(demand)
    fab = as_fabric(switches, delta, fabric)
    fab.check_ports(dem.n)
    tl = check_time_limit(time_limit)
    nl = None if node_limit is None else check_int(node_limit, "node_limit")
    given = list(incumbents)
    af = fab.with_model("all-stop")
    partial = fab.reconfiguration.keeps_circuits
    n, s, d = dem.n, fab.size, max(fab.deltas)
    out_fabric = None if fab.is_uniform else fab
    if af.is_uniform:
        lb = lower_bound(dem, switches=s, delta=d, strong=True)
    else:
        lb = lower_bound(dem, fabric=af, strong=True)
    # What is proved for the caller's fabric: the all-stop MILP proves nothing under partial.
    proved = lower_bound(dem, fabric=fab) if partial else lb

    def result(
        status: str, switches_: Switches, dual: float, nodes: int, source: str, nm: int
    ) -> ExactResult:
        sched = Schedule(
            ports=n,
            delta=d,
            switches=switches_,
            algorithm="exact",
            lower_bound=lb,
            meta={"status": status, "dual_bound": dual, "source": source},
            fabric=out_fabric,
        )
        ms = sched.makespan
        dual = min(dual, ms)
        return ExactResult(status, sched, ms, dual, _gap(ms, dual), clock() - t_start, nm, nodes)

    if dem.nnz == 0:
        return result("optimal", ((),) * s, 0.0, 0, "empty", 0)
    if af.is_uniform:
        cands = _uniform_incumbents(dem, s, fab.deltas[0], tl, nl)
    else:
        cands = _fabric_incumbents(dem, af)
    # Incumbents valid under the all-stop rule bound the MILP; valid partial-only ones (which may
    # beat every all-stop schedule) only compete for the answer, as do all on identical switches.
    finals: list[tuple[str, Switches]] = []
    for k, sw in enumerate(given):
        # On identical switches the incumbents (and so the model) stay solve_exact's own.
        if not af.is_uniform and check_valid(sw, dem, af):
            cands.append((f"incumbent {k}", sw))
        elif check_valid(sw, dem, fab):
            finals.append((f"incumbent {k}", sw))
        else:
            log.warning("solve_exact: incumbent %d is not a valid schedule on the fabric; ignored", k)
    source, incumbent = min(cands, key=lambda c: _end(c[1]))
    ub = _end(incumbent)
    # On identical always-up switches nothing ends by a deadline, so no horizon is needed.
    cols = fabric_columns(dem, switch_times(af), math.inf if af.is_uniform else ub)
    mats = cols.mats
    nm = int(mats.shape[0])

    def finish(status: str, best: Switches, best_source: str, dual: float, nodes: int) -> ExactResult:
        for name, sw in finals:
            if _end(sw) < _end(best):
                best, best_source = sw, name
        if partial:
            return result("heuristic", best, proved, nodes, best_source, nm)
        return result(status, best, dual, nodes, best_source, nm)

    # The bounds are bisected to a relative 1e-10 (the packing test adds 1e-9 of slack); closer
    # than 1e-8 the MILP's own tolerances cannot separate them (HiGHS then reports the band
    # [lb, ub] infeasible), so the incumbent is declared optimal and the gap says by how much.
    if ub <= lb * (1 + 1e-8):
        return finish("optimal", incumbent, source, lb, 0)

    scale = _SCALE_TO / ub
    times = switch_times(af)
    # Incidence entry x matching: inc[e, k] = 1 if matching k holds entry e.
    inc = (mats[:, dem.rows] == dem.cols[None, :]).T.astype(np.float64)
    remaining = None if tl is None else max(1e-3, tl - (clock() - t_start))
    res = solve_milp(dem.values * scale, inc, cols, times, scale, lb * scale, ub * scale, remaining, nl)
    nodes = int(getattr(res, "mip_node_count", 0) or 0)
    status = _status(res)
    dual = _dual(res, lb * scale) / scale
    best, best_source = incumbent, source
    if res.x is not None:
        x = np.asarray(res.x)
        nb = cols.size
        y, t = x[1 : 1 + nb], x[1 + nb : 1 + 2 * nb] / scale
        if af.is_uniform:
            cand: Switches | None = _repair(dem, mats, inc, y.reshape(s, -1), t.reshape(s, -1), fab.deltas[0])
        else:
            cand = _on_fabric(dem, cols, y, t, times, af)
        if cand is not None and _end(cand) < _end(best):
            best, best_source = cand, "milp"
    if status not in ("optimal", "time_limit", "node_limit"):
        log.warning(
            "solve_exact: solver returned %r (%s); keeping the heuristic schedule", status, res.message
        )
        dual = lb
    return finish(status, best, best_source, dual, nodes)


def _uniform_incumbents(
    dem: Demand, s: int, d: float, tl: float | None, nl: int | None
) -> list[tuple[str, Switches]]:
    """Spectra, Spectra's permutations split optimally, and spectra-opt's LP improvement."""
    dec = spectra_decompose(dem)
    out: list[tuple[str, Switches]] = [("spectra", place(dec, switches=s, delta=d)[0])]
    # Spectra's permutations placed optimally: a tighter U shrinks the big-M constants and
    # strengthens the per-entry cuts; it is also the answer if the MILP finds nothing better.
    split = optimal_split(dec.weights, s, d, time_limit=None if tl is None else 0.1 * tl, node_limit=nl)
    if split.makespan < _end(out[0][1]):
        out.append(("spectra+split", timeline(split.assignment, dec.perms, d)))
    # spectra-pack improved by LP re-fit and piece removal: often a tighter incumbent still.
    out.append(("spectra-opt", improve_schedule(dem, switches=s, delta=d)[0]))
    return out


def _fabric_incumbents(dem: Demand, af: Fabric) -> list[tuple[str, Switches]]:
    """Spectra's permutations placed and packed on the (all-stop) fabric, and spectra-opt on it."""
    mean = float(np.average(af.deltas, weights=af.rates))
    dec = decompose(dem, method="spectra", delta=mean)
    spectra = place_on_fabric(dec, af, method="equalize", demand=dem)[0]
    pack = place_on_fabric(dec, af, method="pack", demand=dem)[0]
    better = improve_on_fabric(dem, af, start=pack)[0]
    return [("spectra", spectra), ("spectra-pack", pack), ("spectra-opt", better)]


def _on_fabric(
    dem: Demand, cols: Columns, y: FloatArray, t: FloatArray, times: list[SwitchTimes], af: Fabric
) -> Switches | None:
    """Turn a (tolerance-feasible) MILP point on a fabric into a valid schedule, or None."""
    pieces: list[Piece] = []
    x: list[float] = []
    for c in np.nonzero((y > 0.5) & (t > 0))[0].tolist():
        b, ph = int(cols.switch[c]), int(cols.phase[c])
        perm = cols.mats[cols.mat[c]]
        (i,) = np.nonzero(perm >= 0)
        ins, outs, ent = entries_of(dem, i.astype(np.int64), perm[i])
        if ent.size:
            pieces.append(Piece(b, ph, ins, outs, times[b].deadline(ph, ins, outs), ent))
            x.append(float(t[c]))
    if not pieces:
        return None
    ps, xs = sort_pieces(pieces, np.array(x))
    # The MILP's durations, re-fit with a little margin before each deadline so the exact-cover
    # repair has room; the MILP's own (rounded) durations if that LP fails.
    fit = refit(dem, ps, xs, times)
    if fit is None:
        fit = make_valid(ps, xs, dem, times)
    if fit is None:
        return None
    out = to_switches(ps, fit, times, dem.n)
    return out if check_valid(out, dem, af) else None


def _repair(
    dem: Demand, mats: IntArray, inc: FloatArray, y: FloatArray, t: FloatArray, delta: float
) -> Switches:
    """Turn a (tolerance-feasible) MILP point on identical switches into a valid schedule."""
    s, nm = y.shape
    dur = np.where(y > 0.5, np.maximum(t, 0.0), 0.0)
    short = dem.values - inc @ dur.sum(axis=0)
    for e in np.nonzero(short > 0)[0]:
        if short[e] <= 0:  # covered meanwhile by another entry's repair: never shorten it back
            continue
        load = busy(dur.sum(axis=1), (dur > 0).sum(axis=1), delta)
        held = np.nonzero(inc[e] > 0)[0]
        # Prefer lengthening a configuration already held (no extra delay), on the least-loaded switch.
        on = [(float(load[b]), b, int(k)) for b in range(s) for k in held if dur[b, k] > 0]
        b, k = min(on)[1:] if on else (int(np.argmin(load)), int(held[0]))
        dur[b, k] += short[e]
        short = dem.values - inc @ dur.sum(axis=0)
    assignment: Assignment = [[(k, float(dur[b, k])) for k in range(nm) if dur[b, k] > 0] for b in range(s)]
    return timeline(assignment, mats, delta)
