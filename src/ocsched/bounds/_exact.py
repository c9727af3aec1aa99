"""Exact arithmetic on the input floats, for the closed-form ends of the bounds' searches.

A bound found by bisection lands within a relative ``rtol`` below its threshold; the threshold
itself is a closed form of the input (a line sum plus delays over the switches, a breakpoint
``delta + d_e / j``, the root of a linear piece), and the searches finish by evaluating it.
Evaluated in floats, with a rounding at every step, it can land a few ulps off either way; these
helpers evaluate it in rationals (every float is one) and round once, to the nearest float.

**Why nearest is still a lower bound.** A schedule's makespan is the largest ``start +
duration`` of its configurations, each computed in floats: the real end rounded to the nearest
float. If every valid schedule ends (in reals) at or after T*, its makespan is at least
``fl(T*)``, since rounding to nearest is monotone. So ``fl(T*)`` is the best float a bound can
return: a schedule ending at T* has exactly that makespan, and none has less.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["exact_sum", "to_float"]


def exact_sum(values: ArrayLike) -> Fraction:
    """Return the exact sum of floats.

    Each float is ``mantissa * 2**exponent`` with an integer mantissa of at most 53 bits, so the
    sum is an integer over a power of two. The mantissas are summed per exponent in int64 (split
    into 27-bit halves, so no sum overflows below 2**36 terms), then the few per-exponent sums
    are shifted together as Python integers.

    >>> exact_sum([0.1, 0.2]) == Fraction(0.1) + Fraction(0.2), float(exact_sum([0.1, 0.2]))
    (True, 0.30000000000000004)
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        return Fraction(0)
    m, e = np.frexp(v)
    mant = (m * 2.0**53).astype(np.int64)  # exact: |m| < 1
    exp = e.astype(np.int64) - 53
    order = np.argsort(exp, kind="stable")
    exp, mant = exp[order], mant[order]
    starts = np.concatenate([[0], np.flatnonzero(np.diff(exp)) + 1])
    high = np.add.reduceat(mant >> 27, starts)  # floor halves: mant = high * 2**27 + low
    low_part = np.add.reduceat(mant & ((1 << 27) - 1), starts)
    first = int(exp[0])
    total = 0
    for h, lo, x in zip(high.tolist(), low_part.tolist(), exp[starts].tolist(), strict=True):
        total += ((h << 27) + lo) << (x - first)
    return Fraction(total, 1 << -first) if first < 0 else Fraction(total << first)


def to_float(q: Fraction) -> float:
    """Return the float nearest ``q`` (ties to even), the one rounding of an exact bound.

    >>> to_float(Fraction(11, 4)), to_float(Fraction(1, 3)) == 1 / 3
    (2.75, True)
    """
    try:
        return float(q)  # Fraction.__float__ divides two integers, which Python rounds correctly
    except OverflowError:  # beyond the largest float: rounds to infinity
        return math.inf if q > 0 else -math.inf
