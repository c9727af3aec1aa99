"""Lower bounds on any fabric: per-switch delay and rate, down windows, failed links, both models.

For a line (a row or column of D, i.e. one port's traffic) with sum ``r`` and ``k`` nonzeros, and
a makespan ``T``, switch b (rate ``c_b``, delay ``d_b``) can light that port for at most
``A_b(T)``: the part of ``[0, min(T, f_b)]`` outside its down windows, ``f_b`` the time the
port's link to b fails (inf if never).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ocsched.bounds.lines import bisect_threshold
from ocsched.fabric import Fabric
from ocsched.model import Demand

__all__ = ["available_time", "fabric_entry_bound", "fabric_line_bound"]


def available_time(fabric: Fabric, switch: int, horizon: float, *, port_fails: float = math.inf) -> float:
    """Return how long ``switch`` can light a port within ``[0, horizon]``: up, and before its link fails.

    >>> from ocsched.fabric import SwitchDown
    >>> f = Fabric.uniform(2, 0.1).with_failures([SwitchDown(0, 1.0, 2.0)])
    >>> available_time(f, 0, 3.0), available_time(f, 1, 3.0, port_fails=0.5)
    (2.0, 0.5)
    """
    end = min(horizon, port_fails)
    if end <= 0:
        return 0.0
    t = end
    for a, b in fabric.windows(switch):
        lo, hi = max(a, 0.0), min(b, end)
        if hi > lo:
            t -= hi - lo
    return max(t, 0.0)


def _served_max(
    avail: NDArray[np.float64], rate: NDArray[np.float64], delta: NDArray[np.float64], k: int
) -> float:
    """Largest demand one line with k entries can receive: see :func:`fabric_line_bound`."""
    # A switch that cannot fit one delay in its available time cannot carry the line at all.
    gain = np.sort((rate * (avail - delta))[avail > delta])[::-1]
    cost = float((rate * delta).min())
    best = 0.0
    acc = 0.0
    for m, g in enumerate(gain, start=1):
        acc += float(g)
        best = max(best, acc - max(k - m, 0) * cost)
    return best


def _served_many(
    avail: NDArray[np.float64], rate: NDArray[np.float64], delta: NDArray[np.float64], k: NDArray[np.int64]
) -> NDArray[np.float64]:
    """:func:`_served_max` for many lines at once (same availability, entry counts ``k``)."""
    gain = np.sort((rate * (avail - delta))[avail > delta])[::-1]
    if not gain.size:
        return np.zeros(k.size)
    cost = float((rate * delta).min())
    m = np.arange(1, gain.size + 1)
    acc = np.cumsum(gain)[None, :] - np.maximum(k[:, None] - m[None, :], 0) * cost
    return np.asarray(acc.max(axis=1), dtype=np.float64)


def fabric_line_bound(demand: Demand, fabric: Fabric, *, rtol: float = 1e-12) -> float:
    """Return the smallest T at which every line could be served on ``fabric``.

    For each line: ``max over m of (sum of the m largest c_b (A_b(T) - d_b)) - (k - m)^+ min_b c_b d_b
    >= r``, with ``A_b(T)`` the time switch b can light that port (see the module docstring).

    Notes
    -----
    Proof: take a valid schedule of makespan T and a line (port p) with k nonzeros. Distinct
    entries of the line are distinct circuits of p; on switch b let ``K_b`` be the number of
    times a circuit of p is lit there afresh (a configuration under all-stop, a new circuit under
    partial). Every such lighting is preceded by ``d_b`` during which p is dark on b (all-stop:
    the whole switch is dark; partial: the new circuit's ports are), and the circuits of p on b
    are lit only while b is up and p's link works, so p is lit on b for at most
    ``A_b(T) - d_b K_b`` and receives at most ``c_b (A_b(T) - d_b K_b)`` there. Each entry is
    lit at least once, so ``sum K_b >= k``, and a switch used at all has ``K_b >= 1``. With U the
    switches used, m = |U|, the line receives at most ``sum_U c_b (A_b - d_b) - (k - m)^+ min_U
    c_b d_b``, which is at most the expression above (the m largest terms, the minimum over all
    switches). The schedule serves the line, so the expression is >= r at T. It is
    non-decreasing in T (``A_b`` is), so the set of T where it holds is a half-line, and bisection
    returns a value on its infeasible side (within ``rtol``). On identical rate-1 switches that
    never fail this is :func:`~ocsched.bounds.lines.line_bound`.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 1], [1, 0]])
    >>> round(fabric_line_bound(d, Fabric.uniform(2, 0.1)), 9)
    0.6
    >>> round(fabric_line_bound(d, Fabric.from_deltas([0.1, 0.1], rates=[1.0, 3.0])), 9)
    0.35
    """
    if demand.nnz == 0:
        return 0.0
    s = fabric.size
    rate = np.array(fabric.rates)
    delta = np.array(fabric.deltas)
    n = demand.n
    sums = np.concatenate([demand.row_sums(), demand.col_sums()])
    counts = np.concatenate([demand.row_nnz(), demand.col_nnz()])
    # Per line, the earliest failure of its port's link on each switch (rows: input, cols: output).
    fails: dict[int, NDArray[np.float64]] = {}
    for x in fabric.failed_links:
        for line in (x.port, x.port + n):
            f = fails.setdefault(line, np.full(s, math.inf))
            f[x.switch] = min(f[x.switch], x.start)
    lines = np.nonzero(counts > 0)[0]
    # Lines without failed links differ only in (r, k): keep the binding ones.
    plain = [int(q) for q in lines if int(q) not in fails]
    special = [int(q) for q in lines if int(q) in fails]
    keep: dict[tuple[float, int], None] = {}
    for q in plain:
        keep[(float(sums[q]), int(counts[q]))] = None
    cands = sorted(keep, reverse=True)
    # a line dominates another with smaller sum and no more entries
    front: list[tuple[float, int]] = []
    for r, k in cands:
        if not any(r2 >= r and k2 >= k for r2, k2 in front):
            front.append((r, k))

    fr = np.array([r for r, _ in front])
    fk = np.array([k for _, k in front])

    def ok(t: float) -> bool:
        base = np.array([available_time(fabric, b, t) for b in range(s)])
        if fr.size and not np.all(_served_many(base, rate, delta, fk) >= fr):
            return False
        for q in special:
            av = np.array([available_time(fabric, b, t, port_fails=float(fails[q][b])) for b in range(s)])
            if _served_max(av, rate, delta, int(counts[q])) < float(sums[q]):
                return False
        return True

    hi = float(sums.max()) / float(rate.sum()) + float(delta.max())
    for _ in range(2000):
        if ok(hi):
            break
        hi *= 2.0
        if hi > 1e300:  # no finite makespan serves this line (the fabric loses it for good)
            return math.inf
    else:
        return math.inf
    # Invariant: lo fails (or is 0), hi holds.
    return bisect_threshold(ok, 0.0, hi, rtol)


def _entry_served_ub(
    entries: NDArray[np.float64],
    avail: NDArray[np.float64],
    rate: NDArray[np.float64],
    delta: NDArray[np.float64],
) -> float:
    """Upper bound on what a line (entries sorted decreasing) can receive (:func:`fabric_entry_bound`)."""
    k = entries.size
    big_k = np.arange(k + 1)
    cap = np.concatenate([[0.0], np.cumsum(entries)])  # S_K: the K largest entries
    room = rate[:, None] * (avail[:, None] - delta[:, None] * big_k[None, :])
    f = np.where(room >= 0, np.minimum(room, cap[None, :]), -np.inf)
    f[:, 0] = 0.0
    lams = np.unique(np.concatenate([[0.0], rate * delta, entries]))
    tops = (f[None, :, :] + lams[:, None, None] * big_k[None, None, :]).max(axis=2).sum(axis=1)
    # lambda k cancels only up to rounding: add that error, so the value stays an upper bound
    g = tops - lams * k + 16 * np.finfo(np.float64).eps * (np.abs(tops) + lams * k)
    return float(g.min())


def fabric_entry_bound(demand: Demand, fabric: Fabric, *, lines: int = 8, rtol: float = 1e-12) -> float:
    """Return a line bound that also caps what a few lightings of a port can carry by its largest entries.

    Checked on the ``lines`` lines with the largest ``sum + entries * mean delta`` (any subset of
    lines gives a valid bound; these are the likely binding ones).

    Notes
    -----
    Proof: as in :func:`fabric_line_bound`, port p is lit afresh ``K_b`` times on switch b, so it
    receives at most ``c_b (A_b(T) - d_b K_b)`` there (and ``K_b d_b <= A_b``). Each lighting
    carries one entry, so the entries served on b are at most K_b distinct ones: the demand b
    serves for the line is also at most ``S_{K_b}``, the sum of the ``K_b`` largest entries. With
    ``f_b(K) = min(c_b (A_b - d_b K), S_K)`` (``f_b(0) = 0``) and ``sum_b K_b >= k``,
    ``r <= max sum_b f_b(K_b)`` (K_b above k never helps: ``S_K`` stops growing). For any
    ``lambda >= 0``, that maximum is at most ``sum_b max_K (f_b(K) + lambda K) - lambda k`` (weak
    duality); the minimum over a few lambdas (0, every ``c_b d_b``, every entry) is taken. So a
    schedule ending at T has that minimum >= r on every line; it is non-decreasing in T
    (``A_b`` is), and bisection returns a T on the infeasible side. The lambda ``min_b c_b d_b``
    reproduces :func:`fabric_line_bound`'s inequality, so on the lines checked this bound is at
    least as large.

    Examples
    --------
    One switch of delay 1 (rate 1) beside one of delay 0.1: the slow one can carry at most the
    largest entry per lighting.

    >>> d = Demand.from_matrix([[0, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    >>> f = Fabric.from_deltas([0.1, 1.0])
    >>> round(fabric_line_bound(d, f), 6), round(fabric_entry_bound(d, f), 6)
    (2.1, 2.2)
    """
    if demand.nnz == 0:
        return 0.0
    s, n = fabric.size, demand.n
    rate, delta = np.array(fabric.rates), np.array(fabric.deltas)
    line = np.concatenate([demand.rows, demand.cols + n])
    vals = np.concatenate([demand.values, demand.values])
    sums = np.bincount(line, weights=vals, minlength=2 * n)
    counts = np.bincount(line, minlength=2 * n)
    score = sums + counts * float(delta.mean())
    chosen = [int(q) for q in np.argsort(-score, kind="stable")[:lines] if counts[q] > 0]
    fails: dict[int, NDArray[np.float64]] = {}
    for x in fabric.failed_links:
        for q in (x.port, x.port + n):
            f = fails.setdefault(q, np.full(s, math.inf))
            f[x.switch] = min(f[x.switch], x.start)
    best = 0.0
    for q in chosen:
        entries = np.sort(vals[line == q])[::-1]
        r = float(np.cumsum(entries)[-1])  # the same sum as S_k, so a full fit compares equal
        port_fails = fails.get(q, np.full(s, math.inf))

        def ok(
            t: float,
            entries: NDArray[np.float64] = entries,
            pf: NDArray[np.float64] = port_fails,
            r: float = r,
        ) -> bool:
            av = np.array([available_time(fabric, b, t, port_fails=float(pf[b])) for b in range(s)])
            return _entry_served_ub(entries, av, rate, delta) >= r

        hi = max(best, r / float(rate.sum()) + float(delta.max()))
        for _ in range(2000):
            if ok(hi):
                break
            hi *= 2.0
            if hi > 1e300:
                return math.inf
        else:
            return math.inf
        lo = best
        if ok(lo) and lo > 0:
            continue  # this line cannot raise the bound
        best = max(best, bisect_threshold(ok, lo, hi, rtol))
    return best
