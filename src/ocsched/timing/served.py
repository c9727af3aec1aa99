"""What a schedule's configurations serve: the *Credit* rule of :mod:`ocsched.timing`, summed.

:func:`served_per_circuit` gives each circuit's amount (the exports write it),
:func:`served_amounts` totals them per demand entry (the residual of a repair).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ocsched._types import FloatArray
from ocsched.model import Configuration, Demand
from ocsched.timing.switch import held_times

if TYPE_CHECKING:
    from ocsched.fabric import Fabric

__all__ = ["served_amounts", "served_per_circuit"]


def served_per_circuit(
    confs: Sequence[Configuration], fabric: Fabric, switch: int, *, model: str | None = None
) -> list[FloatArray]:
    """Return, per configuration of ``switch``, the demand each circuit serves (in its circuit order).

    Served is the switch's rate times the time the circuit is credited with
    (:func:`ocsched.timing.held_times`, the function the validator uses): the configuration's
    duration, plus, under the partial model, the gap before it for a circuit kept from the
    previous configuration; time lit while the switch is down or the circuit's link has failed
    is not credited. ``model`` credits under another reconfiguration model than the fabric's
    (``"all-stop"``: never more than the partial credit).

    >>> from ocsched.fabric import Fabric
    >>> c = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
    >>> [x.tolist() for x in served_per_circuit([c], Fabric.from_deltas([0.5], rates=[2.0]), 0)]
    [[2.0]]
    """
    rate = fabric.switches[switch].rate
    tuples = []
    for c in confs:
        ins, outs = c.circuit_arrays()
        keep = outs >= 0
        tuples.append((c.start, c.duration, ins[keep], outs[keep]))
    held = held_times(
        tuples,
        model=fabric.model if model is None else model,
        windows=fabric.windows(switch),
        failed_ports=fabric.failed_ports(switch),
        ports_per_endpoint=fabric.switches[switch].ports_per_endpoint,
        bidirectional=fabric.switches[switch].bidirectional,
    )
    return [rate * h for h in held]


def served_amounts(
    demand: Demand, switches: Sequence[Sequence[Configuration]], fabric: Fabric, *, model: str | None = None
) -> FloatArray:
    """Return, per entry of ``demand`` (its order), the amount ``switches`` serve of it on ``fabric``.

    The sum of :func:`served_per_circuit` over the circuits of the entry; on a bidirectional
    switch a circuit ``(i, j)`` serves ``(j, i)`` as well. Sparse: memory is linear in the
    circuits.

    >>> from ocsched.fabric import Fabric, Switch
    >>> d = Demand.from_matrix([[0, 2], [1, 0]])
    >>> c = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
    >>> served_amounts(d, [[c]], Fabric.uniform(1, 0.5)).tolist()
    [1.0, 0.0]
    >>> served_amounts(d, [[c]], Fabric((Switch(0.5, bidirectional=True),))).tolist()
    [1.0, 1.0]
    """
    n = demand.n
    want = demand.rows * n + demand.cols
    served = np.zeros(demand.nnz)
    if not want.size:
        return served
    for b, sw in enumerate(switches):
        if not sw:
            continue
        both = fabric.switches[b].bidirectional
        for c, x in zip(sw, served_per_circuit(sw, fabric, b, model=model), strict=True):
            ins, outs = c.circuit_arrays()
            keep = outs >= 0
            ins, outs = ins[keep], outs[keep]
            ways = [(ins, outs, x)]
            if both:  # the same circuit carries j -> i
                back = ins != outs
                ways.append((outs[back], ins[back], x[back]))
            for i, j, y in ways:
                key = i * n + j
                pos = np.minimum(np.searchsorted(want, key), want.size - 1)
                hit = want[pos] == key
                np.add.at(served, pos[hit], y[hit])
    return served
