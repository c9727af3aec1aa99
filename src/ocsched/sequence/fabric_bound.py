"""A lower bound on the iteration time on any fabric, with its proof."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ocsched.bounds import lower_bound
from ocsched.fabric import Fabric
from ocsched.iteration import Iteration, Phase
from ocsched.model import Demand
from ocsched.sequence._common import demand_key
from ocsched.sequence.bounds import iteration_lower_bound

__all__ = ["fabric_iteration_lower_bound", "relaxed"]

#: The longest run of consecutive phases bounded together (as :data:`ocsched.sequence.bounds.BLOCK`).
RUN = 2


def relaxed(fabric: Fabric) -> Fabric:
    """The fabric without its down windows and the link failures that start after 0.

    Every schedule valid on ``fabric`` is valid on it, from any time origin: the links it keeps
    failed are failed for good, and nothing else depends on absolute time.
    """
    links = tuple(x for x in fabric.failed_links if x.start <= 0.0)
    return Fabric(fabric.switches, (), links, model=fabric.model)


def fabric_iteration_lower_bound(iteration: Iteration, *, fabric: Fabric) -> float:
    """Return an iteration time that no valid iteration schedule on ``fabric`` can beat.

    On identical all-stop one-port directed switches of rate r (failures or not),
    :func:`~ocsched.sequence.bounds.iteration_lower_bound` of the demands over r. Otherwise
    ``sum_k g_k`` plus the largest, over partitions of the phases into runs ``[a, b]`` of at most
    :data:`RUN` consecutive phases, of the sum over the runs of ``max(0, LB(D_a + ... + D_b) -
    f_a - (g_{a+1} + ... + g_b))``, with ``LB`` the single-matrix
    :func:`ocsched.bounds.lower_bound` on :func:`relaxed` ``(fabric)``, ``f_1 = min(g_1, D)``,
    ``f_a = D`` for a >= 2 and ``D`` the largest switch delay.

    Notes
    -----
    Proof. A schedule on identical switches of rate r serves ``D`` exactly when the same
    configurations on rate-1 switches serve ``D / r``; removing failures only removes
    constraints: the first case follows from the uniform bound. Otherwise, as for the uniform
    bound: take a run ``[a, b]``, keep its configurations, merge each that persists into its
    predecessor (cut to start at ``R_a``), and shift time by ``o = R_a - f_a``. On every switch
    the first configuration then starts at ``f_a >= delta_b`` or later (for a = 1 at ``max(g_1,
    delta_b) - o >= delta_b``), every other pays its delay (all-stop) or its ports were dark for
    the delay (partial: a circuit kept from before the run counts only from ``R_a`` on), so it is
    a valid schedule of the run's demand on the relaxed fabric from time 0, of makespan
    ``T_a + ... + T_b + g_{a+1} + ... + g_b + f_a``. Summing over the runs of any partition
    bounds ``sum_k T_k = C_K - sum_k g_k``.

    Examples
    --------
    >>> from ocsched.fabric import Switch
    >>> it = Iteration([Phase([[0, 1], [1, 0]]), Phase([[0, 1], [1, 0]], gap_before=0.2)])
    >>> fast = Fabric((Switch(0.5, rate=2.0),))  # the uniform bound of the halved demand
    >>> round(fabric_iteration_lower_bound(it, fabric=fast), 9)
    1.7
    >>> mixed = Fabric((Switch(0.5), Switch(0.1, rate=2.0)))
    >>> fabric_iteration_lower_bound(it, fabric=mixed) > it.total_gap
    True
    """
    first = fabric.switches[0]
    if (
        first.is_plain
        and not fabric.reconfiguration.keeps_circuits
        and all(x == first for x in fabric.switches)
    ):
        scaled = iteration
        if first.rate != 1.0:
            scaled = Iteration(
                Phase(p.demand.scaled(1.0 / first.rate), p.gap_before, p.name) for p in iteration.phases
            )
        return iteration_lower_bound(scaled, switches=fabric.size, delta=first.delta)
    free_fabric = relaxed(fabric)
    hide = max(fabric.deltas)
    phases = iteration.phases
    keys = [demand_key(p.demand) for p in phases]
    cache: dict[tuple[bytes, ...], float] = {}

    def lb(a: int, b: int) -> float:
        run = tuple(keys[a : b + 1])
        if run not in cache:
            cache[run] = lower_bound(_sum([p.demand for p in phases[a : b + 1]]), fabric=free_fabric)
        return cache[run]

    best = np.zeros(len(phases) + 1)  # best[k]: the largest bound on T_1 + ... + T_k
    for b in range(len(phases)):
        best[b + 1] = -np.inf
        for a in range(b, max(-1, b - RUN), -1):
            free = min(phases[0].gap_before, hide) if a == 0 else hide
            inside = sum(p.gap_before for p in phases[a + 1 : b + 1])
            best[b + 1] = max(best[b + 1], best[a] + max(0.0, lb(a, b) - free - inside))
    return iteration.total_gap + float(best[-1])


def _sum(demands: list[Demand]) -> Demand | sp.csr_array:
    if len(demands) == 1:
        return demands[0]
    rows = np.concatenate([m.rows for m in demands])
    cols = np.concatenate([m.cols for m in demands])
    vals = np.concatenate([m.values for m in demands])
    n = demands[0].n
    return sp.csr_array((vals, (rows, cols)), shape=(n, n))
