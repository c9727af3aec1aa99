"""Bidirectional and multi-port switches: ``spectra-ports`` and ``exact-ports``.

A configuration there is a b-matching, not a matching, so only these two schedulers run on such
fabrics (:data:`~ocsched.schedulers.PORT_FEATURES`).
"""

from __future__ import annotations

import logging

from ocsched.assign.ports import schedule_on_ports
from ocsched.exact.ports import solve_ports_exact
from ocsched.fabric import Fabric
from ocsched.model import Demand
from ocsched.schedulers._registry import Result, RngLike

__all__ = ["EXACT_PORTS_NODES"]

log = logging.getLogger("ocsched.schedulers")  # the package's logger, as before schedulers became a package


def _ports(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """spectra-ports: b-matchings (Euler-oriented Spectra, grouped) packed on identical switches.

    See :func:`ocsched.assign.ports.schedule_on_ports`; the construction kept is logged.
    """
    confs, splits, how = schedule_on_ports(demand, fabric)
    log.info("spectra-ports: kept the %r construction", how)
    return Result(confs, splits)


#: Branch-and-bound nodes of exact-ports (work, not time: the same result on any machine).
EXACT_PORTS_NODES = 100


def _exact_ports(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """exact-ports: the b-matching MILP of :func:`ocsched.exact.ports.solve_ports_exact`.

    Stops after :data:`EXACT_PORTS_NODES` nodes (its LPs are large: one column per maximal
    b-matching and switch); spectra-ports' schedule is
    returned instead where it ends earlier (never worse than it), with the MILP's status and
    dual bound.
    """
    heuristic = _ports(demand, fabric, rng)
    end = max((c.end for sw in heuristic.switches for c in sw), default=0.0)
    res = solve_ports_exact(demand, fabric, node_limit=EXACT_PORTS_NODES, upper=end)
    switches = heuristic.switches if end < res.makespan else res.switches
    return Result(switches, 0, res.status, res.dual_bound)
