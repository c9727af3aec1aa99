"""A lower bound on the iteration time, with its proof."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ocsched._checks import check_delta
from ocsched.bounds import lower_bound
from ocsched.iteration import Iteration
from ocsched.model import Demand
from ocsched.schedulers import as_fabric
from ocsched.sequence._common import demand_key, in_both

__all__ = ["BLOCK", "iteration_lower_bound"]

BLOCK = 2  # the longest run of consecutive phases bounded together


def iteration_lower_bound(iteration: Iteration, *, switches: int, delta: float) -> float:
    """Return an iteration time that no valid iteration schedule can beat.

    ``sum_k g_k`` plus the largest, over partitions of the phases into runs ``[a, b]`` of
    consecutive phases (at most :data:`BLOCK` long; a dynamic program), of the sum over the runs
    of a bound on ``T_a + ... + T_b``:

    - ``max(0, LB(D_a + ... + D_b) - f_a - (g_{a+1} + ... + g_b))``, where ``LB`` is the
      single-matrix :func:`ocsched.bounds.lower_bound`, ``f_1 = min(g_1, delta)`` and
      ``f_a = delta`` for a >= 2 (with runs of one phase: ``sum_k max(0, LB(D_k) - f_k)``);
    - for a run of two phases, also the *line bound across the barrier*: the largest over the
      lines (rows and columns) with demand in both phases of ``min over m1, m2 in 1..s of
      max(t1 + t2, J)``, with line sums r1, r2, nonzero counts K1, K2, ``M_i = max(K_i, m_i)``,
      ``t1 = max((r1 + delta M1) / m1 - f_a, LB(D_a) - f_a, 0)``,
      ``t2 = max((r2 + delta M2) / m2 - delta, LB(D_b) - delta, 0)`` and
      ``J = (r1 + r2 + delta (M1 + M2 - c)) / s - f_a - g_b``, where ``c = min(m1, m2)`` if the
      two phases share a nonzero on the line and 0 otherwise.

    Notes
    -----
    Proof. ``C_K = sum_k g_k + sum_k T_k`` with ``T_k = C_k - R_k`` the length of phase k's
    window (by the barrier, ``R_k = C_{k-1} + g_k``), and ``T_k >= 0``. Take a run ``[a, b]``
    and its window ``[R_a, C_b]``, of length ``W = T_a + ... + T_b + g_{a+1} + ... + g_b``. Keep
    the configurations of phases a..b, merge each one that persists (identical to its predecessor
    on its switch, so it paid no delay) into that predecessor, extended to its end (a
    predecessor before ``R_a`` is cut to start at ``R_a``), and shift time by
    ``o = R_a - f_a``. This is a valid single-matrix schedule of ``D_a + ... + D_b``: every
    configuration is a matching, each circuit is held at least as long as before, so every entry
    is served; on each switch, a configuration that did not persist starts at least ``delta``
    after its predecessor ends; and the first one starts at or after ``R_a = o + f_a >= o +
    delta`` for a >= 2, and for a = 1 at or after ``max(g_1, delta) >= o + delta`` (at time 0 no
    switch holds anything). Its makespan is ``C_b - o = W + f_a``, so ``W + f_a >= LB(D_a + ... +
    D_b)`` (every single-matrix bound holds for every valid schedule). Summing over the runs of
    any partition bounds ``sum_k T_k``; the maximum over partitions is one more bound.

    The line bound across the barrier. Fix a line with demand in both phases; let ``m_i`` be the
    number of switches that carry some of its phase-i demand and ``M_i`` the number of
    configurations that do (identical consecutive ones merged). A matching holds one circuit of
    the line, so ``M_i >= K_i``, and ``M_i >= m_i``. The carrying switches hold these
    configurations and a delay before each within ``[R_a - f_a, C_a]`` for phase a (the first's
    delay lies after ``R_a - f_a``, as above) and within ``[R_b - delta, C_b]`` for phase b: so
    ``m1 (T_a + f_a) >= r1 + delta M1`` and ``m2 (T_b + delta) >= r2 + delta M2``, hence
    ``T_a >= t1`` and ``T_b >= t2`` for the actual m1, m2. In the merged schedule of the run,
    a configuration carries the line in both phases only if it merged a persisting pair whose
    circuit on the line is a nonzero of both, one such per switch carrying it in both, so at
    most c; the others are distinct, each with its delay, all within the ``s`` switches' time
    ``s (W + f_a)``: ``T_a + T_b >= J``. The adversary's m1, m2 are unknown: take the minimum.
    This is what charges a pipeline send right after an all-reduce: a switch cannot carry the
    all-reduce up to the barrier and also have hidden the send's delay.

    Examples
    --------
    >>> from ocsched.iteration import Iteration, Phase
    >>> it = Iteration([Phase([[0, 1], [1, 0]]), Phase([[0, 1], [1, 0]], gap_before=0.2)])
    >>> round(iteration_lower_bound(it, switches=1, delta=0.5), 9)  # 1.5 + 0.2 + (1.5 - 0.5)
    2.7
    >>> it = Iteration([Phase([[0, 0], [0, 0]]), Phase([[0, 1], [1, 0]])])  # no gap: nothing to hide in
    >>> round(iteration_lower_bound(it, switches=1, delta=0.5), 9)  # the run [1, 2]; alone 0 + (1.5 - 0.5)
    1.5
    >>> send, ring = [[0, 0, 2], [0, 0, 0], [0, 0, 0]], [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    >>> it = Iteration([Phase(send), Phase(ring, gap_before=0.1)])  # 2.25 without the line bound
    >>> round(iteration_lower_bound(it, switches=2, delta=0.5), 9)
    2.5
    """
    s = as_fabric(switches, delta).size
    d = check_delta(delta)
    phases = iteration.phases
    keys = [demand_key(p.demand) for p in phases]
    cache: dict[tuple[bytes, ...], float] = {}
    pairs: dict[tuple[bytes, bytes, float, float], float] = {}

    def lb(a: int, b: int) -> float:
        run = tuple(keys[a : b + 1])
        if run not in cache:
            cache[run] = lower_bound(_sum([p.demand for p in phases[a : b + 1]]), switches=s, delta=d)
        return cache[run]

    # best[k]: the largest bound on T_1 + ... + T_k over partitions of the first k phases.
    best = np.zeros(len(phases) + 1)
    for b in range(len(phases)):
        best[b + 1] = -np.inf
        for a in range(b, max(-1, b - BLOCK), -1):
            free = min(phases[0].gap_before, d) if a == 0 else d
            inside = sum(p.gap_before for p in phases[a + 1 : b + 1])
            term = max(0.0, lb(a, b) - free - inside)
            if b == a + 1:
                key = (keys[a], keys[b], free, inside)
                if key not in pairs:
                    alone = (max(0.0, lb(a, a) - free), max(0.0, lb(b, b) - d))
                    pairs[key] = _pair(
                        phases[a].demand, phases[b].demand, alone, s=s, delta=d, free=free, gap=inside
                    )
                term = max(term, pairs[key])
            best[b + 1] = max(best[b + 1], best[a] + term)
    return iteration.total_gap + float(best[-1])


def _sum(demands: list[Demand]) -> Demand | sp.csr_array:
    if len(demands) == 1:
        return demands[0]
    rows = np.concatenate([m.rows for m in demands])
    cols = np.concatenate([m.cols for m in demands])
    vals = np.concatenate([m.values for m in demands])
    n = demands[0].n
    return sp.csr_array((vals, (rows, cols)), shape=(n, n))


def _pair(
    first: Demand,
    second: Demand,
    alone: tuple[float, float],
    *,
    s: int,
    delta: float,
    free: float,
    gap: float,
) -> float:
    """The line bound on ``T_1 + T_2`` of two consecutive phases that keeps the barrier between them."""
    n = first.n
    if first.nnz == 0 or second.nnz == 0:
        return 0.0
    common = (first.rows * n + first.cols)[in_both(first, second)]  # the nonzeros both phases have
    out = 0.0
    m = np.arange(1, s + 1, dtype=np.float64)
    for axis in (0, 1):
        lines = [(x.rows, x.cols)[axis] for x in (first, second)]
        r1, r2 = (
            np.bincount(li, weights=x.values, minlength=n)
            for li, x in zip(lines, (first, second), strict=True)
        )
        k1, k2 = (np.bincount(li, minlength=n) for li in lines)
        shared = np.zeros(n, dtype=bool)
        shared[(common // n, common % n)[axis]] = True
        on = (r1 > 0) & (r2 > 0)
        if not on.any():
            continue
        r1, r2, k1, k2, shared = r1[on], r2[on], k1[on], k2[on], shared[on]
        c1 = np.maximum(k1[:, None], m[None, :])  # configurations on the line, m switches carrying it
        c2 = np.maximum(k2[:, None], m[None, :])
        t1 = np.maximum((r1[:, None] + delta * c1) / m - free, alone[0])
        t2 = np.maximum((r2[:, None] + delta * c2) / m - delta, alone[1])
        merged = np.where(shared[:, None, None], np.minimum(m[:, None], m[None, :])[None], 0.0)
        both = c1[:, :, None] + c2[:, None, :] - merged
        joint = ((r1 + r2)[:, None, None] + delta * both) / s - free - gap
        value = np.maximum(t1[:, :, None] + t2[:, None, :], joint).min(axis=(1, 2))
        out = max(out, float(value.max()))
    return out
