"""Lower bounds on any fabric: per-switch delay and rate, down windows, failed links, both models.

For a line (a row or column of D, i.e. one port's traffic) with sum ``r`` and ``k`` nonzeros, and
a makespan ``T``, switch b (rate ``c_b``, delay ``d_b``) can light that port for at most
``A_b(T)``: the part of ``[0, min(T, f_b)]`` outside the union of its down windows, ``f_b`` the
time the port's link to b fails (inf if never). A circuit (i, j) is lit on b only while both
links work, so it sees ``f_b = min(f_b(i), f_b(j))``: a *circuit* is a line with one entry.

Each search brackets its threshold by bisection, then evaluates the threshold exactly on the
linear piece it lies on (see :mod:`ocsched.bounds._exact`): ``A_b`` is piecewise linear, with
slope 1 or 0 between the window edges and the failure times.

This module holds :func:`fabric_line_bound`; :func:`fabric_entry_bound` is in
:mod:`ocsched.bounds.fabric_entry`, ``A_b`` in :mod:`ocsched.bounds.availability` and the exact
search they share in :mod:`ocsched.bounds._fabric_exact`. All are importable from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ocsched.bounds._exact import exact_sum
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
from ocsched.bounds.availability import (
    EDGE_SLACK,
    _port_fails,
    available_time,
    merged_windows,
    tolerant_fabric,
)
from ocsched.bounds.fabric_entry import fabric_entry_bound
from ocsched.bounds.lines import bisect_bracket
from ocsched.fabric import Fabric
from ocsched.model import Demand

__all__ = [
    "EDGE_SLACK",
    "available_time",
    "fabric_entry_bound",
    "fabric_line_bound",
    "merged_windows",
    "tolerant_fabric",
]


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


def _line_root(
    avails: list[_Avail],
    rate: list[Fraction],
    delta: list[Fraction],
    k: int,
    need: Fraction,
    lo: float,
    hi: float,
) -> float | None:
    """The exact end of :func:`fabric_line_bound`'s search for one condition (see its Notes)."""
    base = sorted({Fraction(lo), Fraction(hi), *(Fraction(x) for av in avails for x in av.kinks(lo, hi))})
    cuts = set(base)
    for av, d in zip(avails, delta, strict=True):
        cuts.update(av.crossings(d, base))  # where a switch becomes able to carry the line
    if len(cuts) > _MAX_CUTS:
        return None
    cost = min(c * d for c, d in zip(rate, delta, strict=True))

    def value(t: Fraction, mid: Fraction) -> Sloped:
        # The switches usable inside the piece, their gains linear there: a maximum of linear
        # functions of t (convex), at least the served maximum on the piece. Gains sort by value,
        # then by slope (the order just after t), which gives the right derivative.
        gains = sorted(
            (
                (c * (av.at(t) - d), c * av.slope(mid))
                for av, c, d in zip(avails, rate, delta, strict=True)
                if av.at(mid) > d
            ),
            reverse=True,
        )
        best: Sloped = (Fraction(0), Fraction(0))
        acc, rise = Fraction(0), Fraction(0)
        for m, (g, dg) in enumerate(gains, start=1):
            acc += g
            rise += dg
            best = max(best, (acc - max(k - m, 0) * cost, rise))
        return best

    return _piecewise_root(sorted(cuts), value, need)


@dataclass(frozen=True)
class _Need:
    """One condition of :func:`fabric_line_bound`: a line or a circuit that must receive its entries."""

    entries: NDArray[np.float64]
    fails: NDArray[np.float64] | None  # per switch, when its links fail (None: never)

    @property
    def k(self) -> int:
        return int(self.entries.size)


def _needs(demand: Demand, fabric: Fabric) -> tuple[list[_Need], list[_Need]]:
    """The conditions to check: lines without failed links (the binding ones), then the others.

    Lines without failed links differ only in (r, k): a line dominates another with a smaller
    sum and no more entries. Every line with a failed link is kept, and so is every circuit
    whose two ports both have one (its switches are those both links reach; with one failing
    port the circuit's line has the same failures and dominates it).
    """
    n = demand.n
    fails = _port_fails(fabric, n)
    line = np.concatenate([demand.rows, demand.cols + n])
    vals = np.concatenate([demand.values, demand.values])
    order = np.argsort(line, kind="stable")
    starts = np.searchsorted(line[order], np.arange(2 * n + 1))
    sums = np.bincount(line, weights=vals, minlength=2 * n)

    def entries(q: int) -> NDArray[np.float64]:
        return np.asarray(vals[order[starts[q] : starts[q + 1]]], dtype=np.float64)

    plain: dict[tuple[float, int], int] = {}
    exact: dict[int, Fraction] = {}

    def total(q: int) -> Fraction:
        if q not in exact:
            exact[q] = exact_sum(entries(q))
        return exact[q]

    special: list[_Need] = []
    for q in range(2 * n):
        k = int(starts[q + 1] - starts[q])
        if k == 0:
            continue
        if q % n in fails:  # rows are ports 0..n-1, columns ports again from n
            special.append(_Need(entries(q), fails[q % n]))
            continue
        rk = (float(sums[q]), k)
        # equal float sums may differ exactly: keep the larger (the bound is exact)
        if rk not in plain or total(q) > total(plain[rk]):
            plain[rk] = q
    # Dominance in floats only where the sums differ by more than their rounding; closer, exactly.
    front: list[tuple[float, int]] = []
    for r, k in sorted(plain, reverse=True):
        if not any(
            k2 >= k
            and (
                r2 > r * (1 + 1e-12) or (r2 >= r * (1 - 1e-12) and total(plain[r2, k2]) >= total(plain[r, k]))
            )
            for r2, k2 in front
        ):
            front.append((r, k))
    needs = [_Need(entries(plain[key]), None) for key in front]
    circuits: dict[bytes, tuple[float, NDArray[np.float64]]] = {}
    both = np.isin(demand.rows, list(fails)) & np.isin(demand.cols, list(fails))
    for i, j, v in zip(
        demand.rows[both].tolist(), demand.cols[both].tolist(), demand.values[both].tolist(), strict=True
    ):
        f = np.minimum(fails[i], fails[j])
        key = f.tobytes()
        if key not in circuits or circuits[key][0] < v:
            circuits[key] = (v, f)
    special.extend(_Need(np.array([v]), f) for v, f in circuits.values())
    return needs, special


def fabric_line_bound(demand: Demand, fabric: Fabric, *, rtol: float = 1e-12) -> float:
    """Return the smallest T at which every line and circuit could be served on ``fabric``.

    For each line: ``max over m of (sum of the m largest c_b (A_b(T) - d_b)) - (k - m)^+ min_b c_b d_b
    >= r``, with ``A_b(T)`` the time switch b can light that port (see the module docstring); the
    same for each circuit whose two ports both have failed links (k = 1, the switches both links
    reach). Infinite when no makespan serves some line or circuit.

    Notes
    -----
    Proof: take a valid schedule of makespan T and a line (port p) with k nonzeros. Distinct
    entries of the line are distinct circuits of p; on switch b let ``K_b`` be the number of
    times a circuit of p is lit there afresh (a configuration under all-stop, a new circuit under
    partial). Every such lighting is preceded by ``d_b`` during which p is dark on b (all-stop:
    the whole switch is dark; partial: the new circuit's ports are), inside ``[0, T]`` and
    outside b's down windows (the switch comes back from a window dark, so the delay follows the
    window; a window cannot fall inside the delay either, or it would overlap the configuration
    it precedes). The circuits of p on b are lit only while b is up and p's link works, so the
    lit time and the delays are disjoint parts of the available set, whose measure is ``A_b(T)``
    (windows that overlap are counted once: their union). So p is lit on b for at most
    ``A_b(T) - d_b K_b`` and receives at most ``c_b (A_b(T) - d_b K_b)`` there. Each entry is
    lit at least once for a positive time, so ``sum K_b >= k``, and a switch used at all has
    ``K_b >= 1`` and ``A_b > d_b``. With U the switches used, m = |U|, the line receives at most
    ``sum_U c_b (A_b - d_b) - (k - m)^+ min_U c_b d_b``, which is at most the expression above
    (the m largest terms, the minimum over all switches). The schedule serves the line, so the
    expression is >= r at T. A circuit is the same argument for one entry, on the time both its
    links work. It is non-decreasing in T (``A_b`` is), so the set of T where it holds is a
    half-line. On identical rate-1 switches that never fail this is
    :func:`~ocsched.bounds.lines.line_bound`.

    **The exact threshold.** Bisection brackets it in ``(lo, hi]``. Cut the bracket at the
    window edges and failure times inside it, and where some ``A_b`` reaches ``d_b`` (a switch
    becomes usable): on each piece every ``A_b`` is linear and the usable switches are fixed
    (those usable at the piece's midpoint, a superset of the ones usable at its left end), so
    the expression, taken over those switches with their gains extended linearly, is a maximum
    of linear functions of T, convex, and at least the expression on the piece. A convex
    function stays below its chord, so walking the pieces in order, the root of the first chord
    (through exact values at the piece's ends) that reaches r precedes every T where the
    condition holds: that root, rounded to the nearest float (see :mod:`ocsched.bounds._exact`),
    is a lower bound too, and equals the threshold where the expression is linear on its piece.
    The bound is the largest of lo and these roots over the conditions failing at lo.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 1], [1, 0]])
    >>> fabric_line_bound(d, Fabric.uniform(2, 0.1))
    0.6
    >>> fabric_line_bound(d, Fabric.from_deltas([0.1, 0.1], rates=[1.0, 3.0]))
    0.35
    """
    if demand.nnz == 0:
        return 0.0
    fabric = tolerant_fabric(fabric)  # the edges as the validator accepts them
    s = fabric.size
    rate = np.array(fabric.rates)
    delta = np.array(fabric.deltas)
    front, special = _needs(demand, fabric)
    fr = np.array([float(np.sum(x.entries)) for x in front])
    fk = np.array([x.k for x in front], dtype=np.int64)
    sr = [float(np.sum(x.entries)) for x in special]

    def failing(t: float, first: bool, near: float = 0.0) -> list[_Need]:
        """The conditions not met at t (only the first one found, if ``first``; with ``near``, also
        those met by less than that relative margin, which rounding may have met early)."""
        out: list[_Need] = []
        base = np.array([available_time(fabric, b, t) for b in range(s)])
        if fr.size:
            bad = np.nonzero(_served_many(base, rate, delta, fk) < fr * (1 + near))[0]
            out.extend(front[int(q)] for q in bad[: 1 if first else None])
            if first and out:
                return out
        for x, r in zip(special, sr, strict=True):
            assert x.fails is not None
            av = np.array([available_time(fabric, b, t, port_fails=float(x.fails[b])) for b in range(s)])
            if _served_max(av, rate, delta, x.k) < r * (1 + near):
                out.append(x)
                if first:
                    return out
        return out

    def ok(t: float) -> bool:
        return not failing(t, True)

    hi = float(max([*fr, *sr])) / float(rate.sum()) + float(delta.max())
    hi = _expand(ok, hi)
    if not hi:
        return math.inf
    # Invariant: lo fails (or is 0), hi holds.
    lo, hi = bisect_bracket(ok, 0.0, hi, rtol)
    best = lo
    exact_rate = [Fraction(c) for c in fabric.rates]
    exact_delta = [Fraction(d) for d in fabric.deltas]
    for x in failing(lo, False, _NEAR)[:_FINISH]:
        avails = _avails(fabric, x.fails)
        root = _line_root(avails, exact_rate, exact_delta, x.k, exact_sum(x.entries), lo, _beyond(hi))
        if root is not None:
            best = max(best, root)
    return best
