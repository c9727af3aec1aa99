"""Bidirectional and multi-port switches: ``spectra-ports`` and ``exact-ports``.

A configuration there is a b-matching, not a matching, so only these two schedulers run on such
fabrics (:data:`~ocsched.schedulers.PORT_FEATURES`); ``spectra-ports`` also around down windows
and failed links.
"""

from __future__ import annotations

import logging

from ocsched.assign.ports import schedule_on_ports
from ocsched.assign.ports_failures import schedule_on_failing_ports
from ocsched.errors import InfeasibleError
from ocsched.exact.ports import solve_ports_exact
from ocsched.fabric import Fabric, Switch
from ocsched.model import Demand, latest_end
from ocsched.schedulers._registry import Result, RngLike
from ocsched.schedulers.spectra import pipeline

__all__ = ["EXACT_PORTS_NODES"]

log = logging.getLogger("ocsched.schedulers")  # the package's logger, as before schedulers became a package


def _ports(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """spectra-ports: b-matchings (Euler-oriented Spectra, grouped) packed on identical switches.

    See :func:`ocsched.assign.ports.schedule_on_ports` (under the partial model also with each of
    an endpoint's k ports as a one-port switch of its own, kept where it ends first). With down
    windows or failed links,
    :func:`ocsched.assign.ports_failures.schedule_on_failing_ports`, and where a directed
    permutation is a configuration of the switch (directed, or bidirectional with k >= 2: read
    as circuits ``{i, P(i)}`` it uses at most 2 ports per endpoint) also spectra-pack on one-port
    directed switches with the same failures (its failure-aware placement); the earlier end is
    kept, so it is never worse than that; under the partial model, its all-stop schedule too.
    The construction kept is logged.
    """
    if not (fabric.down or fabric.failed_links):
        confs, splits, how = schedule_on_ports(demand, fabric)
        log.info("spectra-ports: kept the %r construction", how)
        return Result(confs, splits)
    found: list[tuple[float, Result, str]] = []
    error: InfeasibleError | None = None
    # Under the partial model the all-stop schedule is a candidate too (valid there, and credited
    # at least as much): the layout around windows re-times pieces one delay apart.
    models = [fabric.model, *(["all-stop"] if fabric.reconfiguration.keeps_circuits else [])]
    for model in models:
        try:
            confs, splits, how = schedule_on_failing_ports(demand, fabric.with_model(model))
            found.append((latest_end(confs), Result(confs, splits), how))
        except InfeasibleError as e:
            error = error or e
    sw = fabric.switches[0]
    if not sw.bidirectional or sw.ports_per_endpoint >= 2:
        one_port = Fabric(
            (Switch(sw.delta, sw.rate),) * fabric.size, fabric.down, fabric.failed_links, model=fabric.model
        )
        try:
            directed = pipeline("spectra", "pack")(demand, one_port, rng)
            found.append((latest_end(directed.switches), directed, "directed one-port"))
        except InfeasibleError:
            pass  # its proofs count one port per endpoint: they do not hold here
    if not found:
        assert error is not None
        raise error
    _, best, how = min(found, key=lambda x: x[0])  # the first on a tie
    log.info("spectra-ports: kept the %r construction", how)
    return best


#: Branch-and-bound nodes of exact-ports (work, not time: the same result on any machine).
EXACT_PORTS_NODES = 100


def _exact_ports(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """exact-ports: the b-matching MILP of :func:`ocsched.exact.ports.solve_ports_exact`.

    Stops after :data:`EXACT_PORTS_NODES` nodes (its LPs are large: one column per maximal
    b-matching and switch); spectra-ports' schedule is
    returned instead where it ends earlier (never worse than it), with the MILP's status and
    dual bound. Under the partial model, as ``exact`` does: the all-stop optimum (valid there)
    or spectra-ports' partial schedule, whichever ends first, with status ``"heuristic"`` and no
    dual bound (kept circuits can beat the all-stop optimum, so it proves nothing there).
    """
    heuristic = _ports(demand, fabric, rng)
    end = latest_end(heuristic.switches)
    partial = fabric.reconfiguration.keeps_circuits
    stop = fabric.with_model("all-stop")
    # The cut-off must not exclude the all-stop optimum, which a partial schedule may beat.
    upper = latest_end(_ports(demand, stop, rng).switches) if partial else end
    res = solve_ports_exact(demand, stop, node_limit=EXACT_PORTS_NODES, upper=upper)
    switches = heuristic.switches if end < res.makespan else res.switches
    if partial:
        return Result(switches, 0, "heuristic", None)
    return Result(switches, 0, res.status, res.dual_bound)
