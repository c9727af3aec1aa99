"""Lower bounds a fit computes from :func:`~ocsched.online._kernels.scan`'s line sums.

:func:`_bound_of` is the line bound of the actual demand (the fitted schedule's
``lower_bound``); :func:`_residual_bound` bounds any schedule of what the plan leaves unserved,
which decides whether a fit compares itself with the plan followed by the residual.
"""

from __future__ import annotations

from ocsched._types import FloatArray


def _bound_of(lines: FloatArray, deltas: FloatArray, rates: FloatArray) -> float:
    """``min delta + max line sum / total rate`` from :func:`scan`'s line sums (0 without demand)."""
    line = float(lines[0].max(initial=0.0))
    return 0.0 if line <= 0.0 else float(deltas.min()) + line / float(rates.sum())


def _residual_bound(lines: FloatArray, deltas: FloatArray, rates: FloatArray) -> float:
    """A lower bound on any schedule of the residual whose line sums and counts :func:`scan` found.

    The line bound, and: a port with k entries needs k configurations in all, each after its
    switch's delay, so the s switches together are busy at least ``k * min delta + line / max
    rate`` on its behalf.
    """
    line = float(lines[1].max(initial=0.0))
    if line <= 0.0:
        return 0.0
    dmin, rmax = float(deltas.min()), float(rates.max())
    port = float((lines[2] * dmin + lines[1] / rmax).max())
    return max(dmin + line / float(rates.sum()), port / deltas.size)
