"""Lower bounds on any fabric: per-switch delay and rate, down windows, failed links, both models.

For a line (a row or column of D, i.e. one port's traffic) with sum ``r`` and ``k`` nonzeros, and
a makespan ``T``, switch b (rate ``c_b``, delay ``d_b``) can light that port for at most
``A_b(T)``: the part of ``[0, min(T, f_b)]`` outside the union of its down windows, ``f_b`` the
time the port's link to b fails (inf if never). A circuit (i, j) is lit on b only while both
links work, so it sees ``f_b = min(f_b(i), f_b(j))``: a *circuit* is a line with one entry.

Each search brackets its threshold by bisection, then evaluates the threshold exactly on the
linear piece it lies on (see :mod:`ocsched.bounds._exact`): ``A_b`` is piecewise linear, with
slope 1 or 0 between the window edges and the failure times.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ocsched.bounds._exact import exact_sum, to_float
from ocsched.bounds.lines import bisect_bracket
from ocsched.fabric import Fabric, LinkDown, SwitchDown
from ocsched.model import Demand

__all__ = [
    "EDGE_SLACK",
    "available_time",
    "fabric_entry_bound",
    "fabric_line_bound",
    "merged_windows",
    "tolerant_fabric",
]


def merged_windows(windows: Iterable[tuple[float, float]], end: float) -> list[tuple[float, float]]:
    """Return the union of ``windows`` within ``[0, end]`` as sorted, disjoint ``(start, end)`` pairs.

    Windows may overlap or repeat (a fabric lists them as given); a bound that sums their lengths
    must sum the union's, or it counts the same down time twice.

    >>> merged_windows([(0.25, 0.35), (0.2, 0.3), (0.2, 0.3), (0.5, 0.6)], 0.55)
    [(0.2, 0.35), (0.5, 0.55)]
    """
    out: list[tuple[float, float]] = []
    for a, b in sorted(windows):
        lo, hi = max(a, 0.0), min(b, end)
        if hi <= lo:
            continue
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


#: How far a window edge or a failure time is relaxed, relative to it. The validator compares
#: times with a slack of 8 ulps of the times compared (:func:`ocsched.timing.slack`), so a valid
#: schedule may run a configuration that far into a window or past a link's failure; near the
#: edge that is at most 16 ulps of it, below 2^-48 of its magnitude.
EDGE_SLACK = 2.0**-47


def tolerant_fabric(fabric: Fabric) -> Fabric:
    """Return ``fabric`` with every down window shrunk and every link failure delayed by :data:`EDGE_SLACK`.

    The bounds are computed on this fabric: every schedule the validator accepts on ``fabric``
    is valid on it in exact arithmetic (a float schedule ends a few ulps into a window where its
    exact end and the window's start differ by less than rounding), so a bound proved for exact
    schedules on it holds for every accepted schedule. Without it, a demand that fits before a
    window up to an ulp (accepted) would be bounded as waiting for the window's end. Windows
    are merged first (their union), and dropped where nothing is left.

    >>> from ocsched.fabric import LinkDown, SwitchDown
    >>> f = Fabric.uniform(1, 0.1).with_failures([SwitchDown(0, 1.0, 2.0)], [LinkDown(0, 0, 4.0)])
    >>> g = tolerant_fabric(f)
    >>> g.down[0].start == 1 + 2**-47, g.down[0].end == 2 - 2**-46, g.failed_links[0].start == 4 + 2**-45
    (True, True, True)
    """
    if not fabric.down and not fabric.failed_links:
        return fabric
    down = []
    for b in range(fabric.size):
        for a, z in merged_windows(fabric.windows(b), math.inf):
            lo = a + EDGE_SLACK * abs(a)
            hi = z if z == math.inf else z - EDGE_SLACK * abs(z)
            if hi > lo:
                down.append(SwitchDown(b, lo, hi))
    links = tuple(LinkDown(x.port, x.switch, x.start + EDGE_SLACK * x.start) for x in fabric.failed_links)
    return Fabric(fabric.switches, tuple(down), links, model=fabric.model)


def available_time(fabric: Fabric, switch: int, horizon: float, *, port_fails: float = math.inf) -> float:
    """Return how long ``switch`` can light a port within ``[0, horizon]``: up, and before its link fails.

    The time outside the union of the switch's down windows (:func:`merged_windows`) in
    ``[0, min(horizon, port_fails)]``.

    >>> from ocsched.fabric import SwitchDown
    >>> f = Fabric.uniform(2, 0.1).with_failures([SwitchDown(0, 1.0, 2.0)])
    >>> available_time(f, 0, 3.0), available_time(f, 1, 3.0, port_fails=0.5)
    (2.0, 0.5)
    >>> twice = f.with_failures([SwitchDown(0, 1.0, 2.0), SwitchDown(0, 1.5, 2.5)])
    >>> available_time(twice, 0, 3.0)  # down during [1, 2.5): the union, not 1 + 1 + 1
    1.5
    """
    end = min(horizon, port_fails)
    if end <= 0:
        return 0.0
    # Sum the up-time between the windows (not end minus the down time: a window lasting for
    # good would cancel a late horizon to nothing).
    total, up = 0.0, 0.0
    for a, b in merged_windows(fabric.windows(switch), end):
        total += a - up
        up = b
    return total + max(end - up, 0.0)


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


class _Avail:
    """``A_b(t)`` for one switch and one port, exactly: its value, kinks and level crossings."""

    def __init__(self, windows: list[tuple[float, float]], fails: float) -> None:
        self.windows = merged_windows(windows, math.inf)
        self.fails = fails

    def at(self, t: Fraction) -> Fraction:
        end = t if t < self.fails else Fraction(self.fails)
        if end <= 0:
            return Fraction(0)
        down = Fraction(0)
        for a, b in self.windows:
            if a >= end:
                break
            down += (end if b == math.inf else min(Fraction(b), end)) - Fraction(a)
        return end - down

    def kinks(self, lo: float, hi: float) -> list[float]:
        """The window edges and the failure time strictly inside ``(lo, hi)``."""
        edges = [x for w in self.windows for x in w] + [self.fails]
        return [x for x in edges if lo < x < hi]

    def slope(self, t: Fraction) -> int:
        """1 where the port is lit-able around t (t not a kink), else 0."""
        return int(t < self.fails and not any(a <= t < b for a, b in self.windows))

    def crossings(self, level: Fraction, cuts: list[Fraction]) -> list[Fraction]:
        """The points strictly inside each piece between consecutive ``cuts`` where A reaches ``level``."""
        out = []
        for a, b in itertools.pairwise(cuts):
            if self.slope((a + b) / 2):
                t = a + (level - self.at(a))
                if a < t < b:
                    out.append(t)
        return out


def _avails(fabric: Fabric, fails: NDArray[np.float64] | None) -> list[_Avail]:
    return [
        _Avail(fabric.windows(b), math.inf if fails is None else float(fails[b])) for b in range(fabric.size)
    ]


#: A value and its right derivative, exactly.
Sloped = tuple[Fraction, Fraction]


def _piecewise_root(
    cuts: list[Fraction], value: Callable[[Fraction, Fraction], Sloped], need: Fraction
) -> float | None:
    """Return a point before which a piecewise convex function stays below ``need``.

    ``cuts`` are ``lo < ... < hi``; on each piece ``[a, b)`` the function is at most the convex
    function ``value(., mid)`` (mid, the piece's midpoint, picks it; it returns the value and the
    right derivative), below its chords and above its tangents. Walking the pieces in order, the
    first that reaches ``need`` at its end holds the root; from a point x below it, the chord to
    the piece's end gives a point still below the root, and the tangent at x a point at or past
    it. Where the tangent's point reaches ``need`` exactly, the function is linear from x to it
    (above the tangent, below the chord, which coincide), so that point is the root; else the
    chord through x and the tangent's point moves x on (a few times, past the kinks in between).
    Returned: the root or the last point below it; None if ``need`` is reached at lo already;
    hi if no piece reaches it. Rounded to the nearest float (see :mod:`ocsched.bounds._exact`).
    """
    for a, b in itertools.pairwise(cuts):
        mid = (a + b) / 2
        at_b = value(b, mid)[0]
        if at_b < need:
            continue
        x, (fx, slope) = a, value(a, mid)
        if fx >= need:
            return None if a == cuts[0] else to_float(a)
        end, f_end = b, at_b
        for _ in range(_STEPS):
            if slope > 0:
                t = x + (need - fx) / slope
                if t < end:
                    ft = value(t, mid)[0]
                    if ft == need:
                        return to_float(t)  # linear from x to t: the root
                    end, f_end = t, ft  # a kink in between: the root precedes t
            c = x + (need - fx) * (end - x) / (f_end - fx)
            fc, slope = value(c, mid)
            if fc >= need:  # the chord met the function: c is the root
                return to_float(c)
            x, fx = c, fc
        return to_float(x)
    return to_float(cuts[-1])


#: Tangent-and-chord steps inside the piece that holds the root.
_STEPS = 8


#: At most this many pieces are walked (more kinks in a bracket of relative width 1e-12 are
#: not expected; past it the search keeps the bisection's value).
_MAX_CUTS = 256


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


def _port_fails(fabric: Fabric, n: int) -> dict[int, NDArray[np.float64]]:
    """Per port with a failed link: on each switch, when its link fails (the earliest if listed twice)."""
    fails: dict[int, NDArray[np.float64]] = {}
    for x in fabric.failed_links:
        if x.port < n:
            f = fails.setdefault(x.port, np.full(fabric.size, math.inf))
            f[x.switch] = min(f[x.switch], x.start)
    return fails


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


#: Binding conditions (lines, circuits, multipliers) whose threshold is evaluated exactly; any
#: subset gives a valid bound.
_FINISH = 8
#: A condition met at the bracket's low end by less than this relative margin is finished too:
#: its float test (the entry bound's carries a margin of 16 ulps) may hold before its threshold.
_NEAR = 1e-12


def _beyond(hi: float) -> float:
    """The end of the bracket walked exactly: a little past hi, where the float test may hold early."""
    return hi * (1 + 1e-9)


def _expand(ok: Callable[[float], bool], hi: float) -> float:
    """Double ``hi`` until ``ok`` holds; 0.0 if it never does (no finite makespan serves the demand)."""
    if not ok(_HORIZON):  # monotone: failing this late, it fails everywhere (checked first: cheap)
        return 0.0
    while not ok(hi):
        hi *= 2.0
    return min(hi, _HORIZON)


#: The latest makespan tried; a condition still failing there is taken to fail for good.
_HORIZON = 1e300


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
