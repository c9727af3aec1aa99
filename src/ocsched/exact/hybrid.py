"""The exact optimum on a hybrid fabric (circuits plus a packet switch), by MILP, for tiny instances.

Identical rate-1 all-stop switches that never fail, plus the EPS of
:class:`~ocsched.fabric.Fabric` (``eps_rate`` rho, ``eps_latency`` L): see
:mod:`ocsched.hybrid` for the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ocsched.errors import InvalidInputError
from ocsched.exact._highs import _SCALE_TO, _dual, _milp_options, _status
from ocsched.exact.matchings import maximal_matchings
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand

__all__ = ["HybridExact", "solve_hybrid_exact"]


@dataclass(frozen=True)
class HybridExact:
    """The MILP's schedule (circuits and EPS part), its status and its proved lower bound."""

    switches: tuple[tuple[Configuration, ...], ...]
    eps: Demand
    makespan: float
    status: str
    dual_bound: float


def solve_hybrid_exact(demand: Demand, fabric: Fabric, *, node_limit: int = 1000) -> HybridExact:
    """Return the optimal hybrid schedule of ``demand`` on ``fabric`` (within ``node_limit`` nodes).

    The MILP: per switch b and maximal matching p of the demand's support, a binary ``u_bp``
    (p is held on b) and its duration ``w_bp <= M u_bp`` (M the largest entry); the EPS's share
    ``r_e >= 0`` of each entry and a binary ``e`` (the EPS is used, ``r_e <= M e``); minimise T
    subject to, per switch, ``sum_p (delta u_bp + w_bp) <= T``; per entry, ``sum_{b, p holds e}
    w_bp + r_e >= D_e``; per port and direction, ``sum r <= rho T - rho L e``.

    Why exact: in an all-stop schedule a switch's makespan is at least the sum over its
    configurations of delta plus their durations, and the configurations of one switch holding
    the same matching can be merged (one delta less), so an optimal schedule holds each matching
    at most once per switch; a configuration's circuits that serve demand form a matching of the
    support, inside a maximal one, so the maximal matchings suffice. The EPS part is feasible by
    T exactly when each port's line sum is at most ``rho (T - L)`` (:mod:`ocsched.hybrid`).
    Conversely every solution is a valid schedule: each switch's matchings back to back, each
    after delta.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 1, 0.1], [1, 0, 0], [0.1, 0, 0]])
    >>> res = solve_hybrid_exact(d, Fabric.uniform(1, 0.5).with_eps(0.25))
    >>> res.status, round(res.makespan, 6)  # the small pair and 0.22 of the big one on the EPS
    ('optimal', 1.28)
    """
    plain = fabric.without_eps()
    if not plain.is_uniform or not fabric.eps_rate > 0:
        raise InvalidInputError(
            "exact-hybrid needs identical all-stop switches without failures and eps_rate > 0"
        )
    n, m, s = demand.n, demand.nnz, plain.size
    if not m:
        return HybridExact(((),) * s, demand, 0.0, "optimal", 0.0)
    # Scaled so the largest line sum is _SCALE_TO: HiGHS's absolute tolerances become relative.
    scale = _SCALE_TO / demand.max_line_sum
    dv = demand.values * scale
    delta, rho, lat = plain.deltas[0] * scale, fabric.eps_rate, fabric.eps_latency * scale
    perms = maximal_matchings(demand)
    q = perms.shape[0]
    big = float(dv.max())
    keys = demand.rows * n + demand.cols
    # Columns: u (s q), w (s q), r (m), e, T.
    nu = s * q
    iu, iw, ir, ie, it = 0, nu, 2 * nu, 2 * nu + m, 2 * nu + m + 1
    nvar = it + 1
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []
    r = 0

    def row(entries: list[tuple[int, float]], low: float, high: float) -> None:
        nonlocal r
        for c, v in entries:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        lo.append(low)
        hi.append(high)
        r += 1

    for b in range(s):  # switch time
        row(
            [(iu + b * q + p, delta) for p in range(q)]
            + [(iw + b * q + p, 1.0) for p in range(q)]
            + [(it, -1.0)],
            -np.inf,
            0.0,
        )
        for p in range(q):  # w <= M u
            row([(iw + b * q + p, 1.0), (iu + b * q + p, -big)], -np.inf, 0.0)
    holds: list[list[int]] = [[] for _ in range(m)]
    for p in range(q):
        i = np.nonzero(perms[p] >= 0)[0]
        pos = np.searchsorted(keys, i * n + perms[p][i])
        for e in pos[(pos < m) & (keys[np.minimum(pos, m - 1)] == i * n + perms[p][i])].tolist():
            holds[e].append(p)
    for e in range(m):  # served
        row(
            [(iw + b * q + p, 1.0) for b in range(s) for p in holds[e]] + [(ir + e, 1.0)],
            float(dv[e]),
            np.inf,
        )
        row([(ir + e, 1.0), (ie, -big)], -np.inf, 0.0)
    for line in (demand.rows, demand.cols):  # EPS line sums
        for port in range(n):
            ents = np.nonzero(line == port)[0].tolist()
            if ents:
                row([(ir + e, 1.0) for e in ents] + [(it, -rho), (ie, rho * lat)], -np.inf, 0.0)
    a = sp.csr_array((vals, (rows, cols)), shape=(r, nvar))
    cost = np.zeros(nvar)
    cost[it] = 1.0
    integrality = np.zeros(nvar)
    integrality[iu : iu + nu] = 1
    integrality[ie] = 1
    upper = np.full(nvar, np.inf)
    upper[iu : iu + nu] = 1.0
    upper[ie] = 1.0
    from scipy.optimize import Bounds, LinearConstraint, milp  # loaded when an exact solve runs

    res = milp(
        cost,
        constraints=LinearConstraint(a, np.array(lo), np.array(hi)),
        integrality=integrality,
        bounds=Bounds(np.zeros(nvar), upper),
        options=_milp_options(None, node_limit),
    )
    status = _status(res)
    if res.x is None:
        raise InvalidInputError(f"exact-hybrid: the MILP found no solution ({status})")
    x = np.asarray(res.x)
    switches = []
    served = np.zeros(m)
    for b in range(s):
        t, confs = 0.0, []
        for p in range(q):
            w = float(x[iw + b * q + p]) / scale
            if x[iu + b * q + p] < 0.5 or w <= 0:
                continue
            i = np.nonzero(perms[p] >= 0)[0]
            start = t + plain.deltas[0]
            confs.append(Configuration.sparse(start, w, i, perms[p][i], ports=n))
            t = start + w
            for e in range(m):
                if p in holds[e]:
                    served[e] += w
        switches.append(tuple(confs))
    # The EPS carries what the circuits as built do not serve (their own rounding included).
    rv = np.maximum(demand.values - served, 0.0)
    keep = rv > 0
    eps = Demand(n, demand.rows[keep], demand.cols[keep], np.ascontiguousarray(rv[keep]))
    ends = max((c.end for sw in switches for c in sw), default=0.0)
    makespan = ends
    if eps.nnz:
        makespan = max(ends, fabric.eps_latency + eps.max_line_sum / fabric.eps_rate)
    dual = _dual(res, 0.0) / scale
    return HybridExact(tuple(switches), eps, makespan, status, min(dual, makespan))
