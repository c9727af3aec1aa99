"""Hybrid fabrics (a packet switch beside the circuits): the hybrid schedulers' wrappers.

``spectra-hybrid``, ``solstice-hybrid`` and ``mixnet-greedy`` wrap a heuristic of
:mod:`ocsched.hybrid` with :func:`_hybrid`; ``exact-hybrid`` is the hybrid MILP.
"""

from __future__ import annotations

from collections.abc import Callable

from ocsched.exact import DEFAULT_NODE_LIMIT
from ocsched.exact.hybrid import solve_hybrid_exact
from ocsched.fabric import Fabric
from ocsched.hybrid import HybridResult, spectra_hybrid
from ocsched.model import Demand
from ocsched.schedulers._registry import Result, RngLike, SchedulerFn
from ocsched.schedulers.exact import _exact

__all__: list[str] = []


def _hybrid(fn: Callable[[Demand, Fabric], HybridResult], plain: SchedulerFn) -> SchedulerFn:
    """A hybrid scheduler: ``fn`` with a packet switch, ``plain`` (its circuits-only form) without."""

    def run(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
        if not fabric.eps_rate > 0:
            return plain(demand, fabric, rng)
        res = fn(demand, fabric)
        return Result(res.switches, res.splits, eps=res.eps)

    return run


def _exact_hybrid(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """exact-hybrid: :func:`ocsched.exact.hybrid.solve_hybrid_exact`, or spectra-hybrid's schedule if shorter.

    Without a packet switch (rho = 0), the ``exact`` scheduler.
    """
    if not fabric.eps_rate > 0:
        return _exact(demand, fabric, rng)
    heur = spectra_hybrid(demand, fabric)
    ex = solve_hybrid_exact(demand, fabric, node_limit=DEFAULT_NODE_LIMIT)
    if ex.makespan <= heur.makespan:
        return Result(ex.switches, 0, ex.status, ex.dual_bound, eps=ex.eps)
    # The MILP's schedule, rebuilt from its rounded solution, came out longer: keep the heuristic,
    # with the MILP's proved bound; shorter than a proved optimum's rebuild, it is optimal as well
    # (to HiGHS's tolerances, made relative by the scaling).
    status = "optimal" if ex.status == "optimal" else "heuristic"
    return Result(heur.switches, heur.splits, status, min(ex.dual_bound, heur.makespan), eps=heur.eps)
