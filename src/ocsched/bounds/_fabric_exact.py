"""The exact end of the fabric bounds' searches: ``A_b`` exactly, and the root of a piecewise convex function.

``A_b(t)`` (:mod:`ocsched.bounds.availability`) is piecewise linear, with slope 1 or 0 between
the window edges and the failure times; :class:`_Avail` evaluates it in exact fractions, and
:func:`_piecewise_root` walks the pieces of a bracket to the threshold (its docstring holds the
argument). Also the searches' shared limits and their bracket's growth (:func:`_expand`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ocsched.bounds._exact import to_float
from ocsched.bounds.availability import merged_windows
from ocsched.fabric import Fabric


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
