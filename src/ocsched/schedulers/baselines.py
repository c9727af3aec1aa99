"""The split-based baselines (``baseline``, ``baseline-eclipse``) and ``naive``.

The baselines split the demand into one sub-matrix per switch (:mod:`ocsched.baseline`) and
schedule each alone; ``naive`` puts D/s with one single-switch schedule on every switch.
"""

from __future__ import annotations

from typing import Literal

from ocsched.baseline import capacity_split_schedule, single_switch, split_schedule
from ocsched.decompose import decompose
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.model import Demand
from ocsched.schedulers._registry import Option, Result, RngLike, SchedulerFn

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
    """Spectra's decomposition of D/s, the same single-switch schedule on every switch."""
    one = single_switch(decompose(demand.scaled(1.0 / fabric.size)), fabric.deltas[0])
    return Result((one,) * fabric.size)


_ORDER = Option("index", "choice", "the balanced split's cycle-search order", choices=("index", "random"))
