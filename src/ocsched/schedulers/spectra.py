"""The Spectra family: ``spectra``, ``spectra-greedy``, ``-pack``, ``-opt`` and ``-partial``.

:func:`pipeline` (a decomposer, then a placement) is the form of the first three and of the
peers ``eclipse``, ``solstice`` and ``bvn``; ``spectra-opt`` improves spectra-pack's schedule,
``spectra-partial`` places Spectra's permutations circuit by circuit under the partial model.
"""

from __future__ import annotations

import numpy as np

from ocsched.assign import PLACEMENTS, bff_timeline, place, place_on_fabric, timeline
from ocsched.decompose import decompose
from ocsched.exact import near_optimal
from ocsched.exact.near import NEAR_OPTIMAL_NODES
from ocsched.fabric import Fabric
from ocsched.model import Demand
from ocsched.schedulers._registry import Option, Result, RngLike, SchedulerFn

__all__ = ["pipeline"]


def pipeline(decomposer: str, placement: str) -> SchedulerFn:
    """Return a scheduler that decomposes with ``decomposer`` and places with ``placement``."""

    def run(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
        if fabric.is_uniform:
            delta = fabric.deltas[0]
            dec = decompose(demand, method=decomposer, delta=delta)
            return Result(*place(dec, switches=fabric.size, delta=delta, method=placement))
        # The decomposers see one delay: the rate-weighted mean, what a unit of work pays on average.
        mean = float(np.average(fabric.deltas, weights=fabric.rates))
        dec = decompose(demand, method=decomposer, delta=mean)
        return Result(*place_on_fabric(dec, fabric, method=placement, demand=demand))

    return run


def _bff(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """Spectra (partial reconfig), after the Spectra authors' ``alg2_BFF``.

    Spectra's permutations are placed by greedy + equalization (as ``spectra``); each switch then
    serves the sum of its pieces circuit by circuit with :func:`~ocsched.assign.bff_timeline`.

    Delay model assumed: this package's partial model (:mod:`ocsched.timing`): a port whose
    circuit changes is dark for its switch's delta before the new circuit (input *and* output),
    every port starts dark (the first circuits at delta), and circuits never change mid-entry.
    The authors' code charges the delay on the input port only (an output is reused the moment
    its circuit ends), starts at time 0 without a delay, stops once the residual's Frobenius
    norm is below epsilon (leaving demand unserved), and places with one delta for all switches;
    here every entry is served and each switch's own delta and rate are used.
    """
    deltas, rates = np.array(fabric.deltas), np.array(fabric.rates)
    mean = float(np.average(deltas, weights=rates))
    dec = decompose(demand, method="spectra", delta=mean)
    assignment, splits = PLACEMENTS["equalize"].func(dec.weights, fabric.size, mean)
    out = []
    for b, sw in enumerate(assignment):
        sub = np.zeros((demand.n, demand.n))
        for l, w in sw:
            (i,) = np.nonzero(dec.perms[l] >= 0)
            sub[i, dec.perms[l][i]] += w / rates[b]
        confs = bff_timeline(sub, float(deltas[b]))
        if confs is None:  # entries below the times' resolution: one configuration per piece
            confs = timeline([[(l, w / rates[b]) for l, w in sw]], dec.perms, float(deltas[b]))[0]
        out.append(confs)
    return Result(tuple(out), splits)


_PACK = pipeline("spectra", "pack")


def _opt(demand: Demand, fabric: Fabric, rng: RngLike, node_limit: int = NEAR_OPTIMAL_NODES) -> Result:
    """spectra-opt: spectra-pack improved by LP re-fits and piece removal, then a short MILP on tiny models.

    Runs on every fabric feature. On identical always-up all-stop switches,
    :func:`ocsched.improve.improve_schedule` (better permutations, balanced placement, LP
    re-fit); on any other fabric, :func:`ocsched.improve.improve_on_fabric` from spectra-pack's
    schedule on that fabric, whose LP re-fit keeps each configuration on its switch, inside its
    phase between down windows and ending by its ports' link failures, with each switch's own
    delay and rate. Under the partial model the re-fits are all-stop schedules (valid there too)
    and spectra-pack's partial schedule is kept when shorter. On tiny models
    (:func:`ocsched.exact.near_optimal`) the exact MILP then runs for a fixed number of nodes. Never
    worse than spectra-pack on the same fabric; no wall-clock limit anywhere.
    """
    if fabric.is_uniform:
        return Result(*near_optimal(demand, fabric=fabric, node_limit=node_limit))
    start = _PACK(demand, fabric, rng)
    return Result(*near_optimal(demand, fabric=fabric, start=start.switches, node_limit=node_limit))


_OPT_NODES = Option(
    NEAR_OPTIMAL_NODES, "int", "effort: branch-and-bound nodes of the MILP run on tiny supports", 1
)
