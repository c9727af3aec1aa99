"""The split-based baselines (``baseline``, ``baseline-eclipse``) and ``naive``.

The baselines split the demand into one sub-matrix per switch (:mod:`ocsched.baseline`) and
schedule each alone; ``naive`` puts D/s with one single-switch schedule on every switch.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ocsched.baseline import capacity_split_schedule, single_switch, split_schedule
from ocsched.decompose import Decomposition, decompose
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.model import Demand
from ocsched.schedulers._registry import Option, Result, RngLike, SchedulerFn
from ocsched.timing import time_to_serve

__all__: list[str] = []


def _split(method: Literal["spectra", "eclipse"]) -> SchedulerFn:
    def run(
        demand: Demand, fabric: Fabric, rng: RngLike, order: Literal["index", "random"] = "index"
    ) -> Result:
        if fabric.is_uniform:
            sched = split_schedule(
                demand, switches=fabric.size, delta=fabric.deltas[0], rng=rng, method=method, order=order
            )
            return Result(*sched)
        if order != "index":
            raise InvalidInputError(
                f"option `order` = {order!r} applies to identical switches only (the capacity split has no "
                "cycle search)"
            )
        return Result(*capacity_split_schedule(demand, fabric, rng=rng, method=method))

    return run


def _naive(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """Spectra's decomposition of D/s, the same single-switch schedule on every switch.

    Where D/s falls below the normal float range (entries lost or rounded away), D's own
    decomposition is used with each weight over s rounded up (:func:`ocsched.timing.time_to_serve`).
    """
    s = fabric.size
    part = demand.scaled(1.0 / s)
    if part.nnz == 0 or float(part.values.min()) >= float(np.finfo(np.float64).tiny):
        dec = decompose(part)
    else:
        whole = decompose(demand)
        dec = Decomposition(whole.perms, np.array([time_to_serve(float(w), s) for w in whole.weights]))
    one = single_switch(dec, fabric.deltas[0])
    return Result((one,) * s)


_ORDER = Option("index", "choice", "the balanced split's cycle-search order", choices=("index", "random"))
