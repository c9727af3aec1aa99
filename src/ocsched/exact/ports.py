"""The exact optimum on switches with several ports per endpoint or bidirectional circuits (tiny instances).

A configuration there is a b-matching (:class:`~ocsched.fabric.Switch`): the MILP of
:func:`solve_ports_exact` chooses, per switch, which maximal b-matchings it holds and for how
long. It cross-checks :func:`~ocsched.bounds.ports.ports_bound` and the heuristic
``spectra-ports`` (``bound <= exact <= heuristic``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ocsched.errors import InvalidInputError
from ocsched.exact._highs import _dual, _milp_options, _status
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand
from ocsched.timing import lay_out

__all__ = [
    "MAX_EXACT_ENDPOINTS",
    "MAX_PORT_CONFIGURATIONS",
    "PortsResult",
    "port_configurations",
    "solve_ports_exact",
]

#: Most endpoints the port MILP accepts (its configurations grow exponentially with them).
MAX_EXACT_ENDPOINTS = 5
#: Most maximal b-matchings the MILP enumerates before refusing the instance.
MAX_PORT_CONFIGURATIONS = 3000

Circuits = list[tuple[int, int]]


@dataclass(frozen=True)
class PortsResult:
    """What :func:`solve_ports_exact` found: per switch its configurations, and how sure it is.

    Attributes
    ----------
    switches : tuple of tuple of Configuration
        Per switch, its configurations in time order (empty, with an infinite makespan, when the
        solver stopped before finding any schedule).
    status : str
        ``"optimal"``, ``"node_limit"``, ``"time_limit"``, ...
    makespan : float
        The schedule's makespan.
    dual_bound : float
        A proved lower bound on the optimum.
    """

    switches: tuple[tuple[Configuration, ...], ...]
    status: str
    makespan: float
    dual_bound: float


def port_configurations(demand: Demand, *, ports: int, bidirectional: bool) -> list[Circuits]:
    """Return every maximal b-matching on the support of ``demand`` (circuits may repeat).

    Directed: each endpoint the input of at most ``ports`` circuits and the output of at most
    ``ports``, circuits on D's nonzeros. Bidirectional: circuits ``(i, j)``, ``i < j``, on the
    nonzeros of ``max(D, D^T)``, each endpoint an end of at most ``ports``. A configuration that is
    not maximal is never needed (a larger one serves at least as much for the same delay).

    Raises
    ------
    InvalidInputError
        If there are more than :data:`MAX_PORT_CONFIGURATIONS`.

    Examples
    --------
    >>> d = Demand.from_matrix(np.array([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]))
    >>> port_configurations(d, ports=1, bidirectional=True)
    [[(0, 1)], [(0, 2)], [(1, 2)]]
    >>> port_configurations(d, ports=2, bidirectional=True)  # a pair may hold two circuits
    [[(0, 1), (0, 1)], [(0, 1), (0, 2), (1, 2)], [(0, 2), (0, 2)], [(1, 2), (1, 2)]]
    """
    if bidirectional:
        edges = sorted(
            {(min(i, j), max(i, j)) for i, j in zip(demand.rows.tolist(), demand.cols.tolist(), strict=True)}
        )
    else:
        edges = list(zip(demand.rows.tolist(), demand.cols.tolist(), strict=True))
    n = demand.n
    out_used, in_used = [0] * n, [0] * n
    found: list[Circuits] = []
    chosen: list[tuple[int, int]] = []

    def room(i: int, j: int) -> int:
        if bidirectional:
            return min(ports - out_used[i] - in_used[i], ports - out_used[j] - in_used[j])
        return min(ports - out_used[i], ports - in_used[j])

    def walk(e: int) -> None:
        if e == len(edges):
            if all(room(i, j) <= 0 for i, j in edges):  # maximal: no circuit can be added
                found.append(list(chosen))
                if len(found) > MAX_PORT_CONFIGURATIONS:
                    raise InvalidInputError(
                        f"`demand` has more than {MAX_PORT_CONFIGURATIONS} maximal configurations "
                        "on these ports; the exact solver is for tiny instances"
                    )
            return
        i, j = edges[e]
        for m in range(max(room(i, j), 0), -1, -1):
            out_used[i] += m
            in_used[j] += m
            chosen.extend([(i, j)] * m)
            walk(e + 1)
            del chosen[len(chosen) - m :]
            out_used[i] -= m
            in_used[j] -= m

    walk(0)
    return found


def solve_ports_exact(
    demand: Demand, fabric: Fabric, *, node_limit: int = 1000, upper: float | None = None
) -> PortsResult:
    """Solve the scheduling problem exactly on identical all-stop switches with k ports per endpoint.

    Parameters
    ----------
    demand : Demand
        At most :data:`MAX_EXACT_ENDPOINTS` endpoints.
    fabric : Fabric
        Identical switches (delay, rate, ports and direction), no down window or failed link.
    node_limit : int
        Branch-and-bound nodes before HiGHS stops (status ``"node_limit"``); work, not time.
    upper : float, optional
        The makespan of a known valid schedule (an incumbent's): a tighter U below.

    Notes
    -----
    Variables, per switch b and maximal b-matching M (:func:`port_configurations`): ``y[b, M]``
    (held at all) and ``x[b, M] >= 0`` (for how long), and the makespan T. Each switch is busy
    ``sum_M delta y + x <= T``; ``x <= U y`` with U a makespan of the schedule serving every
    entry alone on one switch (so the optimum is not cut); each entry gets ``sum c A[e, M] x >=
    D[e]`` (A counts the circuits of M serving e, both directions when bidirectional). Switch
    loads are ordered (the switches are identical). This is exact in the all-stop model: a
    switch's order of configurations does not matter, holding one twice is no better than once
    for the sum (one delay less), and a non-maximal one is no better than a maximal superset.

    Examples
    --------
    >>> from ocsched.fabric import Switch
    >>> d = Demand.from_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    >>> fab = Fabric((Switch(0.1, bidirectional=True),) * 2)
    >>> r = solve_ports_exact(d, fab)
    >>> r.status, round(r.makespan, 9)
    ('optimal', 0.6)
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    sws = fabric.switches
    first = sws[0]
    if (
        not all(x == first for x in sws)
        or fabric.down
        or fabric.failed_links
        or fabric.reconfiguration.keeps_circuits
    ):
        raise InvalidInputError("the port MILP needs identical all-stop switches without failures")
    if demand.n > MAX_EXACT_ENDPOINTS:
        raise InvalidInputError(
            f"the port MILP supports at most {MAX_EXACT_ENDPOINTS} endpoints; `demand` has {demand.n}"
        )
    s, delta, rate, bidi = len(sws), first.delta, first.rate, first.bidirectional
    if not demand.nnz:
        return PortsResult(((),) * s, "optimal", 0.0, 0.0)
    confs = port_configurations(demand, ports=first.ports_per_endpoint, bidirectional=bidi)
    m = len(confs)
    keys = {(int(i), int(j)): e for e, (i, j) in enumerate(zip(demand.rows, demand.cols, strict=True))}
    a = np.zeros((demand.nnz, m))
    for l, circ in enumerate(confs):
        for i, j in circ:
            for key in ((i, j), (j, i)) if bidi else ((i, j),):
                if key in keys:
                    a[keys[key], l] += 1.0
    scale = float(demand.values.max())
    vals = demand.values / scale
    dl = delta / scale
    upper_s = float(vals.sum()) / rate + dl * demand.nnz  # every entry alone, one after another
    upper = upper_s if upper is None else min(upper_s, float(upper) / scale * (1 + 1e-9))
    # Variables: x[b, l] at b * m + l, y[b, l] at nx + b * m + l, T last; constraints as triplets.
    nx = s * m
    nv = 2 * nx + 1
    r: list[np.ndarray] = []
    col: list[np.ndarray] = []
    val: list[np.ndarray] = []
    lo: list[np.ndarray] = []
    hi: list[np.ndarray] = []
    row0 = 0

    def add(rr: np.ndarray, cc: np.ndarray, vv: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
        nonlocal row0
        r.append(rr + row0)
        col.append(cc)
        val.append(vv)
        lo.append(low)
        hi.append(high)
        row0 += low.size

    ones = np.ones(nx)
    sw_of = np.repeat(np.arange(s), m)
    xs = np.arange(nx)
    # busy: sum_l x[b, l] + delta y[b, l] - T <= 0
    add(
        np.concatenate([sw_of, sw_of, np.arange(s)]),
        np.concatenate([xs, nx + xs, np.full(s, nv - 1)]),
        np.concatenate([ones, np.full(nx, dl), -np.ones(s)]),
        np.full(s, -np.inf),
        np.zeros(s),
    )
    # x <= U y
    add(
        np.concatenate([xs, xs]),
        np.concatenate([xs, nx + xs]),
        np.concatenate([ones, np.full(nx, -upper)]),
        np.full(nx, -np.inf),
        np.zeros(nx),
    )
    # coverage: sum_{b, l} rate A[e, l] x[b, l] >= D[e]
    ee, ll = np.nonzero(a)
    add(
        np.tile(ee, s),
        np.concatenate([b * m + ll for b in range(s)]),
        np.tile(rate * a[ee, ll], s),
        vals,
        np.full(demand.nnz, np.inf),
    )
    if s > 1:  # identical switches: loads in decreasing order
        b_of = sw_of[sw_of < s - 1]
        xb = np.arange((s - 1) * m)
        add(
            np.concatenate([b_of, b_of, b_of, b_of]),
            np.concatenate([xb, nx + xb, xb + m, nx + xb + m]),
            np.concatenate(
                [np.ones(xb.size), np.full(xb.size, dl), -np.ones(xb.size), np.full(xb.size, -dl)]
            ),
            np.zeros(s - 1),
            np.full(s - 1, np.inf),
        )
    matrix = sp.csr_array((np.concatenate(val), (np.concatenate(r), np.concatenate(col))), shape=(row0, nv))
    c = np.zeros(nv)
    c[-1] = 1.0
    integrality = np.concatenate([np.zeros(nx), np.ones(nx), [0]])
    bounds = Bounds(np.zeros(nv), np.concatenate([np.full(nx, upper), np.ones(nx), [upper]]))
    res = milp(
        c,
        constraints=LinearConstraint(matrix, np.concatenate(lo), np.concatenate(hi)),
        integrality=integrality,
        bounds=bounds,
        options=_milp_options(None, node_limit),
    )
    status = _status(res)
    if res.x is None:  # stopped before a first solution: only the dual bound is known
        return PortsResult((), status, math.inf, max(_dual(res, 0.0) * scale, 0.0))
    # Only the configurations the MILP pays a delay for are held (an x within HiGHS's tolerance
    # of 0 with y = 0 is dropped; the coverage is repaired on the held ones).
    held = np.asarray(res.x[nx : 2 * nx]).reshape(s, m) > 0.5
    x = np.where(held, np.asarray(res.x[:nx]).reshape(s, m) * scale, 0.0)
    x = _cover(x, held, a * rate, demand.values)
    switches = []
    for b in range(s):
        used = [l for l in range(m) if x[b, l] > 0]  # held, or a repair's new piece
        lengths = [float(x[b, l]) for l in used]
        starts = lay_out(lengths, delta)
        switches.append(
            tuple(
                Configuration.sparse(
                    t,
                    w,
                    np.array([p[0] for p in confs[l]]),
                    np.array([p[1] for p in confs[l]]),
                    ports=demand.n,
                )
                for t, w, l in zip(starts, lengths, used, strict=True)
            )
        )
    makespan = max((cf.end for sw in switches for cf in sw), default=0.0)
    dual = min(_dual(res, 0.0) * scale, makespan)
    return PortsResult(tuple(switches), status, makespan, dual if math.isfinite(dual) else 0.0)


def _cover(x: np.ndarray, held: np.ndarray, a: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Lengthen held pieces until every entry is covered exactly (the MILP meets it within a tolerance)."""
    x = np.maximum(x, 0.0)
    flat = x.reshape(-1)
    s, m = x.shape
    big = np.tile(a, (1, s))  # entries x (b, l), b-major as flat
    on = held.reshape(-1)
    for e in range(values.size):
        lack = float(values[e] - big[e] @ flat)
        if lack > 0:
            cols = np.flatnonzero((big[e] > 0) & on)
            if not cols.size:  # not held anywhere (a solver failure): a new piece, paid for in the layout
                cols = np.flatnonzero(big[e] > 0)
            best = int(cols[np.argmax(flat[cols])])
            flat[best] += lack / big[e, best]
    return flat.reshape(s, m)
