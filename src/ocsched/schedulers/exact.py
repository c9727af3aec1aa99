"""``exact``: the matching MILP, started from spectra-opt's schedule.

Its options (``node_limit``, ``time_limit``) are declared in the registry entry.
"""

from __future__ import annotations

import logging

from ocsched.exact import DEFAULT_NODE_LIMIT, solve_exact
from ocsched.fabric import Fabric
from ocsched.model import Demand
from ocsched.schedulers._registry import Result, RngLike
from ocsched.schedulers.spectra import _opt

__all__: list[str] = []

log = logging.getLogger("ocsched.schedulers")  # the package's logger, as before schedulers became a package


def _exact(
    demand: Demand,
    fabric: Fabric,
    rng: RngLike,
    node_limit: int = DEFAULT_NODE_LIMIT,
    time_limit: float | None = None,
) -> Result:
    """exact: the matching MILP of :func:`ocsched.exact.solve_exact`, from spectra-opt's schedule.

    Runs on every fabric feature (the model's columns follow each switch's delay and rate, its
    phases between down windows and its links' failure times). Under the partial model the
    all-stop optimum is returned with status ``"heuristic"``: kept circuits make the order of
    configurations matter, so a partial schedule can beat it and nothing is proved there. Stops
    after ``node_limit`` nodes (status ``"node_limit"``), on the clock only when ``time_limit``
    (seconds) is given (the result may then depend on the machine); never worse than spectra-opt.
    """
    opt = _opt(demand, fabric, rng)
    res = solve_exact(
        demand, fabric=fabric, node_limit=node_limit, time_limit=time_limit, incumbents=[opt.switches]
    )
    status, dual = res.status, res.dual_bound
    if status in ("infeasible", "error"):
        status = "heuristic"  # a solver failure: the schedule is the best incumbent, proved nothing more
    if status == "heuristic" and fabric.reconfiguration.keeps_circuits:
        log.info(
            "exact: under the partial model the all-stop optimum is returned unproved (status heuristic)"
        )
    elif not res.optimal:
        log.warning(
            "exact: %s after %d nodes; returning the best schedule found (makespan %.6g, gap %.2g%%)",
            res.status,
            res.nodes,
            res.makespan,
            100 * res.gap,
        )
    return Result(res.schedule.switches, 0, status, dual)
