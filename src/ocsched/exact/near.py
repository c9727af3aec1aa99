"""The ``spectra-opt`` scheduler: spectra-pack improved, then a short MILP on small models."""

from __future__ import annotations

from ocsched.errors import InvalidInputError
from ocsched.exact.columns import fabric_columns
from ocsched.exact.matchings import maximal_matchings
from ocsched.exact.solve import MAX_EXACT_PORTS, solve_exact
from ocsched.fabric import Fabric
from ocsched.improve import improve_on_fabric, improve_schedule
from ocsched.improve.structure import switch_times
from ocsched.model import Configuration, Demand

__all__ = ["NEAR_OPTIMAL_NODES", "NEAR_OPTIMAL_SIZE", "near_optimal"]

Switches = tuple[tuple[Configuration, ...], ...]

#: :func:`near_optimal` runs the MILP when its binaries (switches x maximal matchings on identical
#: switches; the columns of :func:`ocsched.exact.columns.fabric_columns` on a fabric) are at most
#: this many.
NEAR_OPTIMAL_SIZE = 200
#: Branch-and-bound nodes :func:`near_optimal` gives the MILP: its only limit (work, not seconds),
#: so the result is the same on any machine under any load. On the hardest small models (n = 5,
#: 35 maximal matchings, 2 switches) 200 nodes take about a minute.
NEAR_OPTIMAL_NODES = 200


def near_optimal(
    demand: Demand,
    *,
    fabric: Fabric,
    start: Switches | None = None,
    node_limit: int = NEAR_OPTIMAL_NODES,
) -> tuple[Switches, int, str, float | None]:
    """Return the ``spectra-opt`` schedule: the best of spectra-pack, its LP improvement and a short MILP.

    On a small model (n <= :data:`MAX_EXACT_PORTS` and at most :data:`NEAR_OPTIMAL_SIZE` binaries)
    :func:`solve_exact` runs for ``node_limit`` nodes from the ``spectra-opt`` incumbent, so the
    result is never worse than :func:`ocsched.improve.improve_schedule` (itself never worse than
    ``spectra-pack``); a proof of optimality found on the way is kept. Otherwise the LP
    improvement alone. No wall clock is involved anywhere.

    Parameters
    ----------
    demand : Demand
        The demand.
    fabric : Fabric
        Any fabric. Identical always-up all-stop switches use :func:`improve_schedule`; any other
        fabric :func:`ocsched.improve.improve_on_fabric` from ``start``.
    start : schedule, optional
        ``spectra-pack``'s schedule on ``fabric``; required unless the fabric is uniform.
    node_limit : int
        Branch-and-bound nodes for the MILP.

    Returns
    -------
    configurations, splits, status, dual_bound
        Per-switch configurations, extra pieces, ``"optimal"`` when proved (else
        ``"heuristic"``; always ``"heuristic"`` under the partial model, where the all-stop MILP
        proves nothing), and the MILP's dual bound when it ran and proved one (else None).

    Examples
    --------
    >>> confs, splits, status, dual = near_optimal(
    ...     Demand.from_matrix([[0, 2, 1], [2, 0, 1], [1, 1, 0]]), fabric=Fabric.uniform(1, 0.25)
    ... )
    >>> round(max(c.end for c in confs[0]), 6), status
    (3.75, 'optimal')
    """
    if fabric.is_uniform:
        s, d = fabric.size, fabric.deltas[0]
        if demand.n <= MAX_EXACT_PORTS and demand.nnz:
            try:
                small = s * len(maximal_matchings(demand, limit=NEAR_OPTIMAL_SIZE)) <= NEAR_OPTIMAL_SIZE
            except InvalidInputError:
                small = False
            if small:
                res = solve_exact(demand, fabric=fabric, node_limit=node_limit)
                # res.schedule is the best of the MILP's answer and its incumbents (spectra-opt's
                # among them) whatever the status, so it is never worse than improve_schedule.
                dual = res.dual_bound if res.status in ("optimal", "time_limit", "node_limit") else None
                return res.schedule.switches, 0, "optimal" if res.optimal else "heuristic", dual
        confs, splits = improve_schedule(demand, switches=s, delta=d)
        return confs, splits, "heuristic", None
    if start is None:
        raise InvalidInputError("`start` (spectra-pack's schedule on the fabric) is required on this fabric")
    confs, splits = improve_on_fabric(demand, fabric, start=start)
    if demand.n <= MAX_EXACT_PORTS and demand.nnz:
        horizon = max((c.end for sw in confs for c in sw), default=0.0)
        try:
            cols = fabric_columns(demand, switch_times(fabric.with_model("all-stop")), horizon)
            small = cols.size <= NEAR_OPTIMAL_SIZE
        except InvalidInputError:
            small = False
        if small:
            res = solve_exact(demand, fabric=fabric, node_limit=node_limit, incumbents=[start, confs])
            if res.makespan < horizon:
                confs, splits = res.schedule.switches, 0
            dual = res.dual_bound if res.status in ("optimal", "time_limit", "node_limit") else None
            return confs, splits, "optimal" if res.optimal else "heuristic", dual
    return confs, splits, "heuristic", None
