"""The fabric entry bound: a line bound that also caps what a few lightings of a port carry.

:func:`fabric_entry_bound` and its proof: each lighting of a port carries one entry, so ``K``
lightings on a switch serve at most the ``K`` largest entries; weak duality over a few
multipliers, then each threshold evaluated exactly (as in :mod:`ocsched.bounds.fabric`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ocsched.bounds._fabric_exact import (
    _FINISH,
    _MAX_CUTS,
    _NEAR,
    Sloped,
    _Avail,
    _avails,
    _beyond,
    _expand,
    _piecewise_root,
)
from ocsched.bounds.availability import _port_fails, available_time, tolerant_fabric
from ocsched.bounds.lines import bisect_bracket
from ocsched.fabric import Fabric
from ocsched.model import Demand

__all__ = ["fabric_entry_bound"]


def _entry_duals(
    entries: NDArray[np.float64],
    avail: NDArray[np.float64],
    rate: NDArray[np.float64],
    delta: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The multipliers of :func:`fabric_entry_bound`, each with its upper bound on what the line receives."""
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
    return lams, g


def _entry_served_ub(
    entries: NDArray[np.float64],
    avail: NDArray[np.float64],
    rate: NDArray[np.float64],
    delta: NDArray[np.float64],
) -> float:
    """Upper bound on what a line (entries sorted decreasing) can receive (:func:`fabric_entry_bound`)."""
    return float(_entry_duals(entries, avail, rate, delta)[1].min())


def _entry_root(
    avails: list[_Avail],
    entries: NDArray[np.float64],
    prefix: list[Fraction],
    lam: Fraction,
    rate: NDArray[np.float64],
    delta: NDArray[np.float64],
    lo: float,
    hi: float,
) -> float | None:
    """The exact end of :func:`fabric_entry_bound`'s search for one line and one multiplier.

    Cut the bracket where some ``A_b`` has a kink and where some ``c_b (A_b - d_b K)`` crosses 0
    or ``S_K``: between the cuts every ``f_b(K)`` is linear in T (or ``-inf``), so the dual
    function ``sum_b max_K (f_b(K) + lam K) - lam k`` is convex there.
    """
    k = entries.size
    big_k = np.arange(k + 1)
    cap = np.concatenate([[0.0], np.cumsum(entries)])
    base = sorted({Fraction(lo), Fraction(hi), *(Fraction(x) for av in avails for x in av.kinks(lo, hi))})
    cuts = set(base)
    fl, fh = Fraction(lo), Fraction(hi)
    for av, c, d in zip(avails, rate.tolist(), delta.tolist(), strict=True):
        a_lo, a_hi = float(av.at(fl)), float(av.at(fh))
        # The levels of A where room_K = 0 (A = d K) and room_K = S_K (A = d K + S_K / c), near
        # the range A sweeps over the bracket; only those are solved exactly.
        for level, with_cap in ((d * big_k, False), (d * big_k + cap / c, True)):
            span = 1e-9 * (abs(a_hi) + d * k + cap[-1] / c) + 1e-300
            for kk in np.nonzero((level >= a_lo - span) & (level <= a_hi + span))[0].tolist():
                target = Fraction(d) * kk + (prefix[kk] / Fraction(c) if with_cap else 0)
                cuts.update(av.crossings(target, base))
    if len(cuts) > _MAX_CUTS:
        return None
    fracs = [(Fraction(c), Fraction(d)) for c, d in zip(rate.tolist(), delta.tolist(), strict=True)]

    def value(t: Fraction, mid: Fraction) -> Sloped:
        # For each switch, max over K of g(K) = min(room_K, S_K) + lam K, room_K = c (A - d K),
        # over the K usable inside the piece (room_K >= 0 at mid). room_K - S_K strictly
        # decreases in K, so g is S_K + lam K (increasing) up to the last K0 with room_K >= S_K,
        # then room_K + lam K (linear): its maximum is at K0, K0 + 1 or the last usable K. Those
        # are located in floats, with two neighbours each for rounding, and evaluated exactly.
        # The right derivative: of each switch's maximiser with the steepest piece there.
        total, rise = -lam * k, Fraction(0)
        for av, (c, d), cf, df in zip(avails, fracs, rate.tolist(), delta.tolist(), strict=True):
            a_t, a_mid, up = av.at(t), av.at(mid), av.slope(mid)
            usable = np.nonzero(cf * (float(a_mid) - df * big_k) >= 0)[0]
            last = int(usable[-1]) if usable.size else 0
            k0 = int(np.searchsorted(-(cf * (float(a_t) - df * big_k) - cap), 0.0, side="right")) - 1
            best: Sloped = (Fraction(0), Fraction(0))  # K = 0: nothing served
            for kk in {*range(k0 - 2, k0 + 4), *range(last - 2, last + 3)}:
                if 0 < kk <= k and c * (a_mid - d * kk) >= 0:
                    room = c * (a_mid - d * kk) <= prefix[kk]  # the branch inside the piece
                    g = (c * (a_t - d * kk) if room else prefix[kk]) + lam * kk
                    best = max(best, (g, c * up if room else Fraction(0)))
            total += best[0]
            rise += best[1]
        return total, rise

    return _piecewise_root(sorted(cuts), value, prefix[-1])


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
    (``A_b`` is), and bisection brackets the threshold. The lambda ``min_b c_b d_b`` reproduces
    :func:`fabric_line_bound`'s inequality, so on the lines checked this bound is at least as
    large.

    **The exact threshold.** Each lambda alone gives a valid bound, the first T where its dual
    function reaches r. Cut the bracket at the kinks of the ``A_b`` and where some
    ``c_b (A_b - d_b K)`` crosses 0 or ``S_K``: on each piece every ``f_b(K)`` is linear in T or
    ``-inf``, so the dual function is a sum of maxima of linear functions, convex, and below its
    chord. As in :func:`fabric_line_bound`, the root of the first chord reaching r (exact values
    at the pieces' ends, rounded to the nearest float) bounds the makespan, and equals the
    threshold where the dual function is linear on its piece. It is taken for the multipliers
    that fail at lo.

    Examples
    --------
    One switch of delay 1 (rate 1) beside one of delay 0.1: the slow one can carry at most the
    largest entry per lighting.

    >>> from ocsched.bounds import fabric_line_bound
    >>> d = Demand.from_matrix([[0, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    >>> f = Fabric.from_deltas([0.1, 1.0])
    >>> fabric_line_bound(d, f), fabric_entry_bound(d, f)
    (2.1, 2.2)
    """
    if demand.nnz == 0:
        return 0.0
    fabric = tolerant_fabric(fabric)  # the edges as the validator accepts them
    s, n = fabric.size, demand.n
    rate, delta = np.array(fabric.rates), np.array(fabric.deltas)
    line = np.concatenate([demand.rows, demand.cols + n])
    vals = np.concatenate([demand.values, demand.values])
    sums = np.bincount(line, weights=vals, minlength=2 * n)
    counts = np.bincount(line, minlength=2 * n)
    score = sums + counts * float(delta.mean())
    chosen = [int(q) for q in np.argsort(-score, kind="stable")[:lines] if counts[q] > 0]
    fails = _port_fails(fabric, n)
    best = 0.0
    for q in chosen:
        entries = np.sort(vals[line == q])[::-1]
        r = float(np.cumsum(entries)[-1])  # the same sum as S_k, so a full fit compares equal
        port_fails = fails.get(q % n, np.full(s, math.inf))

        def avail(t: float, pf: NDArray[np.float64] = port_fails) -> NDArray[np.float64]:
            return np.array([available_time(fabric, b, t, port_fails=float(pf[b])) for b in range(s)])

        def ok(t: float, entries: NDArray[np.float64] = entries, r: float = r) -> bool:
            return _entry_served_ub(entries, avail(t), rate, delta) >= r

        hi = _expand(ok, max(best, r / float(rate.sum()) + float(delta.max())))
        if not hi:
            return math.inf
        lo = best
        lams, g = _entry_duals(entries, avail(lo), rate, delta)
        near = g < r * (1 + _NEAR)  # the multipliers failing at lo, or passing by rounding only
        if lo > 0 and ok(lo):
            if not near.any():
                continue  # this line cannot raise the bound
            hi = lo  # the float test holds, but perhaps a few ulps early: look just past lo
        else:
            lo, hi = bisect_bracket(ok, lo, hi, rtol)
            best = max(best, lo)
            lams, g = _entry_duals(entries, avail(lo), rate, delta)
            near = g < r * (1 + _NEAR)
        avails = _avails(fabric, port_fails)
        prefix = [Fraction(0)]
        for x in entries.tolist():
            prefix.append(prefix[-1] + Fraction(x))
        # their thresholds lie in the bracket (or just past it): the largest is the line's bound
        for lam in lams[near][np.argsort(g[near], kind="stable")][:_FINISH].tolist():
            root = _entry_root(avails, entries, prefix, Fraction(lam), rate, delta, lo, _beyond(hi))
            if root is not None:
                best = max(best, root)
    return best
