"""A lower bound for hybrid fabrics: circuits plus an electrical packet switch (EPS) of rate rho.

The model (see :class:`~ocsched.fabric.Fabric`, ``eps_rate``): D = C + R, C on the circuits as
on a plain fabric, R on a non-blocking EPS from time 0, a port's EPS traffic out and in each at
most rho per unit time, after ``eps_latency`` L. The EPS part ends at ``L + max line sum(R) / rho``
(when R is not empty) and the makespan is the later of the circuits' end and the EPS's end.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ocsched.fabric import Fabric
from ocsched.model import Demand

__all__ = ["hybrid_bound", "hybrid_line_bound", "hybrid_load_bound"]


def hybrid_line_bound(
    demand: Demand, *, switches: int, delta: float, rho: float, latency: float = 0.0
) -> float:
    """Return the hybrid line bound on ``switches`` identical all-stop rate-1 switches plus an EPS.

    Parameters
    ----------
    demand : Demand
        The demand.
    switches : int
        Number of circuit switches s >= 1.
    delta : float
        Their reconfiguration delay.
    rho : float
        The EPS rate per port and direction (> 0).
    latency : float
        The EPS latency L >= 0.

    Returns
    -------
    float
        ``max`` over lines (rows and columns) of ``min`` over ``j`` of ``T_j`` (below).

    Notes
    -----
    Proof. Take a valid schedule of makespan T and one line (a row or a column) with entries
    ``a_1 >= ... >= a_m`` summing to ``A``. Its EPS part carries at most ``B(T) = rho max(0, T -
    L)`` of the line (the port's EPS link runs at rho and starts after L). Let J be the entries
    with a positive circuit part and ``j = |J|``.

    - ``j = 0``: the whole line goes on the EPS, ``T >= L + A / rho``.
    - ``j >= 1``: the entries outside J sum to at least ``tail_j = a_{j+1} + ... + a_m`` (the
      m - j smallest) and go on the EPS: ``T >= L + tail_j / rho`` when ``tail_j > 0``. The
      circuits carry ``V >= max(0, A - B(T))``. Each entry of J needs a configuration of its own
      at this port, preceded by delta on its switch; with ``k_b`` such configurations and volume
      ``v_b`` on switch b, ``T >= k_b delta + v_b`` on each switch used. Over the u switches used,
      ``u T >= max(j, u) delta + V``, and ``min_{1 <= u <= s} (max(j, u) delta + V) / u = (max(j,
      s) delta + V) / s``, so ``s T >= max(j, s) delta + max(0, A - B(T))`` (the smallest such T
      has a closed form, B being piecewise linear). Some switch holds at least ``ceil(j / s)`` of
      these configurations: ``T >= ceil(j / s) delta``.

    ``T_j`` is the smallest T meeting the conditions of j; every schedule meets those of its own
    j, so ``T >= min_j T_j`` on every line. With rho = 0 no line may use the EPS. The bound is at
    least ``A / (s + rho)`` for L = 0 (the line's total capacity per unit time).

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    >>> hybrid_line_bound(d, switches=1, delta=0.5, rho=1.0)   # T_1: one entry on the EPS, 5/4
    1.25
    """
    if demand.nnz == 0:
        return 0.0
    s, d, rho, lat = int(switches), float(delta), float(rho), float(latency)
    best = 0.0
    for line in (demand.rows, demand.cols):
        best = max(best, float(_line_values(line, demand.values, demand.n, s, d, rho, lat).max()))
    return best


def _line_values(
    line: NDArray[np.int64], values: NDArray[np.float64], n: int, s: int, d: float, rho: float, lat: float
) -> NDArray[np.float64]:
    """Per line, ``min_j T_j`` of :func:`hybrid_line_bound` (vectorised over the lines)."""
    order = np.lexsort((-values, line))
    ln, v = line[order], values[order]
    tot = np.bincount(ln, weights=v, minlength=n)
    start = np.searchsorted(ln, np.arange(n))
    pos = np.arange(ln.size) - start[ln]
    j = (pos + 1).astype(np.float64)
    csum = np.cumsum(v)
    prefix = csum - (csum[start[ln]] - v[start[ln]])
    tail = np.maximum(tot[ln] - prefix, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps_need = np.where(tail > 0, lat + tail / rho if rho > 0 else np.inf, 0.0)
    k = np.maximum(j, s) * d
    need = k + tot[ln]
    # Smallest T with s T + rho max(0, T - L) >= need.
    circ = np.where(need <= s * lat, need / s, (need + rho * lat) / (s + rho))
    circ = np.maximum(circ, k / s)
    deg = np.ceil(j / s) * d
    t_j = np.maximum.reduce([eps_need, circ, deg])
    per = np.full(n, np.inf)
    np.minimum.at(per, ln, t_j)
    if rho > 0:
        per = np.minimum(per, np.where(tot > 0, lat + tot / rho, 0.0))
    per[tot == 0] = 0.0
    return per


def hybrid_load_bound(demand: Demand, fabric: Fabric) -> float:
    """Return the load bound on any fabric with an EPS: a line's total capacity per unit time.

    A port sends at most ``sum(rates)`` per unit time on its circuits and ``rho`` on the EPS
    after the latency L, so a line of sum A needs ``sum(rates) T + rho max(0, T - L) >= A``
    (whatever the delays, failures and model).

    >>> from ocsched.fabric import Switch
    >>> f = Fabric((Switch(0.1), Switch(0.2, rate=2.0)), eps_rate=1.0)
    >>> hybrid_load_bound(Demand.from_matrix([[0, 8], [0, 0]]), f)
    2.0
    """
    if demand.nnz == 0:
        return 0.0
    a = demand.max_line_sum
    c, rho, lat = float(sum(fabric.rates)), float(fabric.eps_rate), float(fabric.eps_latency)
    t = a / c if a <= c * lat else (a + rho * lat) / (c + rho)
    return t if math.isfinite(t) else 0.0


def hybrid_bound(demand: Demand, fabric: Fabric) -> float:
    """Return the hybrid lower bound on ``fabric`` (its ``eps_rate`` > 0).

    :func:`hybrid_line_bound` when the circuits are identical rate-1 all-stop switches without
    failures, else :func:`hybrid_load_bound` (always taken too).

    >>> hybrid_bound(Demand.from_matrix([[0, 2], [2, 0]]), Fabric.uniform(1, 0.5).with_eps(1.0))
    1.25
    """
    best = hybrid_load_bound(demand, fabric)
    plain = fabric.without_eps()
    if plain.is_uniform:
        best = max(
            best,
            hybrid_line_bound(
                demand,
                switches=plain.size,
                delta=plain.deltas[0],
                rho=fabric.eps_rate,
                latency=fabric.eps_latency,
            ),
        )
    return best
