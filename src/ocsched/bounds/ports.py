"""Lower bounds for switches with several ports per endpoint, and for bidirectional circuits.

On such a switch a configuration is a b-matching (see :class:`~ocsched.fabric.Switch`), so the
line arguments of :mod:`ocsched.bounds.lines` change in two ways: an endpoint has k ports on each
switch, and a bidirectional circuit carries both directions of a pair at once, so a line of a
bidirectional fabric is a row of ``W = max(D, D^T)`` rather than a row or a column of D.
"""

from __future__ import annotations

import math

import numpy as np

from ocsched.fabric import Fabric
from ocsched.model import Demand

__all__ = ["port_lines", "ports_bound"]


def port_lines(demand: Demand, *, bidirectional: bool) -> tuple[np.ndarray, np.ndarray]:
    """Return the lines the bound reads: ``(sums, nonzeros)``, one entry per line.

    Directed: the rows and the columns of D. Bidirectional: the rows of ``W = max(D, D^T)``
    (its sum and its count of nonzeros: the partners an endpoint must be joined to).

    >>> d = Demand.from_matrix(np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    >>> [x.tolist() for x in port_lines(d, bidirectional=True)]
    [[3.0, 2.0, 1.0], [2, 1, 1]]
    """
    n = demand.n
    if not bidirectional:
        sums = np.concatenate([demand.row_sums(), demand.col_sums()])
        nnz = np.concatenate([np.bincount(demand.rows, minlength=n), np.bincount(demand.cols, minlength=n)])
        return sums, nnz
    lo, hi = np.minimum(demand.rows, demand.cols), np.maximum(demand.rows, demand.cols)
    uniq, inv = np.unique(lo * n + hi, return_inverse=True)
    w = np.zeros(uniq.size)
    np.maximum.at(w, inv, demand.values)
    a, b = uniq // n, uniq % n
    sums = np.bincount(a, weights=w, minlength=n) + np.bincount(b, weights=w, minlength=n)
    nnz = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    return sums, nnz


def ports_bound(demand: Demand, fabric: Fabric) -> float:
    """Return a makespan no valid schedule on ``fabric`` beats, counting ports and both directions.

    Identical all-stop switches (s of them, delay delta, rate c, k ports per endpoint): the
    largest over lines of ``(L / (c k) + delta * max(s, ceil(nnz / k))) / s``, where a line is a
    row or a column of D (directed) or a row of ``W = max(D, D^T)`` (bidirectional), L its sum
    and nnz its count of nonzeros. Under the partial model, ``(L / c + delta * max(k s, nnz))
    / (k s)`` instead. Any other fabric: the largest over lines of the T solving
    ``sum_b c_b k_b max(0, T - delta_b) = L`` (the capacity of each line's links).

    Notes
    -----
    *Proof.* Fix a valid schedule of makespan T and a line of endpoint a with L > 0.
    Directed: each circuit serves one entry of a's row (or column) at rate c; bidirectional: a
    circuit {a, b} held for t serves at most c t of ``D[a, b]`` and at the same time at most
    c t of ``D[b, a]``, so the circuits between a and b must be held for ``W[a, b] / c`` in total
    and a's circuits for ``L / c``. On a switch a configuration holds at most k of a's circuits
    (k ports), so a configuration held for t gives a's line at most ``c k t``, and it joins a to
    at most k distinct partners. Let ``m_b`` be the number of configurations of switch b that
    hold a circuit of a, and M the switches with ``m_b >= 1``. All-stop: each configuration is
    preceded by delta on its switch, so the lengths of those on switch b add up to at most
    ``T - m_b delta``, and ``L <= sum_{b in M} c k (T - m_b delta)``. Every partner of a appears
    in some configuration, so ``sum_b m_b >= max(|M|, ceil(nnz / k))``. Hence
    ``c k |M| T >= L + c k delta max(|M|, ceil(nnz / k))``; the right side over ``|M|`` decreases
    in ``|M|``, so ``|M| = s`` gives the smallest value, the bound. Down windows and failed links
    only remove capacity, so the bound of the same switches without them holds too. On a fabric
    mixing directed and bidirectional switches the lines are D's rows and columns (a
    bidirectional circuit serves one entry of a's row at a time as well).

    Partial model: a kept circuit stays lit through a reconfiguration, so count per physical
    port instead (:mod:`ocsched.timing.pools`: the circuits can be given ports so that each
    new circuit takes a port dark for delta). Port q of a (one of its ``k s``) carries ``m_q``
    runs of circuits, each lit after delta of dark on q, for ``t_q`` in all: ``T >= m_q delta +
    t_q`` for each port U used, ``sum t_q >= L / c`` and ``sum m_q >= max(|U|, nnz)`` (each
    partner needs a run), so ``|U| T >= L / c + delta max(|U|, nnz)``, smallest at ``|U| = k s``.
    At k = 1 on a directed switch it is the all-stop bound (a port of the plain model is a
    line's whole share of a switch).

    A second argument, on identical switches when the first bound is below ``2 delta``: a
    schedule with ``T < 2 delta`` holds at most one configuration per switch, lit for at most
    ``T - delta`` (under the partial model: each port lights at most one run, for at most
    ``T - delta``), so each of a's ``k s`` ports (one per port and switch) joins a to one partner
    for at most ``T - delta``, and partner p needs ``ceil(W[a, p] / (c (T - delta)))`` of them
    (directed: each entry of a's row, or of its column). If for some tau these counts exceed
    ``k s`` then ``T - delta > tau`` or ``T >= 2 delta``: the bound is ``min(2 delta, delta +
    tau)`` for the largest such tau found by bisection (the count is non-increasing in tau, and
    the bisection keeps a tau where it exceeds).

    For distinct switches only the first half is used: switch b gives a's line at most
    ``c_b k_b (T - delta_b)`` (it is dark for delta_b before its first configuration), which is
    increasing in T, so T is at least the root.

    Examples
    --------
    A bidirectional ring of 4 on 2 switches with 2 ports: each cube has 2 partners of 1 each.

    >>> from ocsched.fabric import Switch
    >>> d = np.zeros((4, 4)); d[np.arange(4), (np.arange(4) + 1) % 4] = 1.0
    >>> fab = Fabric((Switch(0.1, bidirectional=True, ports_per_endpoint=2),) * 2)
    >>> round(ports_bound(Demand.from_matrix(d), fab), 12)
    0.6
    """
    if not demand.nnz:
        return 0.0
    # W's rows bind only when every switch is bidirectional (a directed switch serves D[a, b] and
    # D[b, a] on separate ports); D's rows and columns bind on any switch (W dominates them).
    return _bound(demand, fabric, all(x.bidirectional for x in fabric.switches))


def _bound(demand: Demand, fabric: Fabric, bidirectional: bool) -> float:
    sums, nnz = port_lines(demand, bidirectional=bidirectional)
    live = sums > 0
    sums, nnz = sums[live], nnz[live]
    sws = fabric.switches
    first = sws[0]
    if all(x == first for x in sws):
        s, k, c, d = len(sws), first.ports_per_endpoint, first.rate, first.delta
        if fabric.reconfiguration.keeps_circuits:
            best = float(np.max((sums / c + d * np.maximum(k * s, nnz)) / (k * s)))
        else:
            best = float(np.max((sums / (c * k) + d * np.maximum(s, -(-nnz // k))) / s))
        if d > 0 and best < 2 * d:
            best = max(best, _one_configuration_bound(demand, bidirectional, s * k, c, d))
        return best
    caps = np.array([x.rate * x.ports_per_endpoint for x in sws])
    deltas = np.array([x.delta for x in sws])
    return max(_capacity_root(float(x), caps, deltas) for x in np.unique(sums))


def _one_configuration_bound(
    demand: Demand, bidirectional: bool, slots: int, rate: float, delta: float
) -> float:
    """``min(2 delta, delta + tau)`` for the largest tau at which some line's entries do not fit its slots."""
    n = demand.n
    if bidirectional:
        lo, hi = np.minimum(demand.rows, demand.cols), np.maximum(demand.rows, demand.cols)
        uniq, inv = np.unique(lo * n + hi, return_inverse=True)
        w = np.zeros(uniq.size)
        np.maximum.at(w, inv, demand.values)
        owners = [np.concatenate([uniq // n, uniq % n])]
        values = np.concatenate([w, w]) / rate
    else:
        owners = [demand.rows, demand.cols + n]
        values = np.concatenate([demand.values, demand.values]) / rate
    line = np.concatenate(owners)

    def fits(tau: float) -> bool:
        need = np.bincount(line, weights=np.ceil(values / tau))
        return bool(need.max() <= slots)

    # Invariant: ``low`` does not fit (or is 0), ``high`` fits; the feasible taus form [tau*, inf).
    low, high = 0.0, float(values.max())
    if not fits(high):  # more partners than ports: no schedule holds one configuration per switch
        return 2 * delta
    for _ in range(100):
        mid = 0.5 * (low + high)
        if mid <= low or mid >= high:
            break
        if fits(mid):
            high = mid
        else:
            low = mid
    return min(2 * delta, delta + low)


def _capacity_root(line: float, caps: np.ndarray, deltas: np.ndarray) -> float:
    """The T with ``sum_b caps_b max(0, T - deltas_b) = line`` (piecewise linear, increasing)."""
    order = np.argsort(deltas, kind="stable")
    c, d = caps[order], deltas[order]
    got, rate = 0.0, 0.0
    for b in range(d.size):
        rate += float(c[b])
        nxt = float(d[b + 1]) if b + 1 < d.size else math.inf
        # Invariant: ``got`` is the capacity up to d[b]; from there it grows at ``rate``.
        if got + rate * (nxt - float(d[b])) >= line:
            return float(d[b]) + (line - got) / rate
        got += rate * (nxt - float(d[b]))
    return math.inf
