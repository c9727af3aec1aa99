"""The ``spectra-opt`` scheduler: spectra-pack improved, then a short MILP on small models."""

from __future__ import annotations

from ocsched.errors import InvalidInputError
from ocsched.exact.matchings import maximal_matchings
from ocsched.exact.solve import MAX_PORTS, solve_exact
from ocsched.improve import improve_schedule
from ocsched.model import Configuration, Demand

__all__ = ["NEAR_OPTIMAL_NODES", "NEAR_OPTIMAL_SIZE", "near_optimal"]

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
