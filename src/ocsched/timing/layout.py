"""Laying configurations out on a fabric: around down windows (all-stop), and under the partial model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["lay_out_windows", "partial_starts"]


def lay_out_windows(
    durations: Iterable[float],
    delta: float,
    windows: Sequence[tuple[float, float]] = (),
    *,
    t0: float = 0.0,
) -> list[list[tuple[float, float]]]:
    """Lay out configurations back to back (all-stop) from ``t0``, cutting each around down windows.

    Returns, per configuration, its ``(start, duration)`` segments: a configuration that would
    overlap a down window runs until the window starts (if a positive time remains after the
    delay) and resumes ``delta`` after the window ends. What a switch down for good cannot serve
    is missing from the segments (callers compare their total with the duration).

    >>> lay_out_windows([2.0, 1.0], 0.5, [(1.5, 2.0)])
    [[(0.5, 1.0), (2.5, 1.0)], [(4.0, 1.0)]]
    >>> lay_out_windows([2.0, 1.0], 0.5, [(1.5, float("inf"))])
    [[(0.5, 1.0)], []]
    """
    wins = sorted(windows)
    out: list[list[tuple[float, float]]] = []
    free = t0  # the switch is dark from here on
    for w in durations:
        segs: list[tuple[float, float]] = []
        left = float(w)
        while free < np.inf:
            start = free + delta
            nxt = next(((a, b) for a, b in wins if b > free), None)
            if nxt is not None and start >= nxt[0]:  # the delay itself runs into the window
                free = nxt[1]
                continue
            if nxt is None or start + left <= nxt[0]:
                segs.append((start, left))
                free = start + left
                break
            part = nxt[0] - start
            segs.append((start, part))
            left -= part
            free = nxt[1]
        out.append(segs)
    return out


def partial_starts(
    circuits: Sequence[tuple[NDArray[np.int64], NDArray[np.int64]]],
    durations: Sequence[float],
    delta: float,
    *,
    t0: float = 0.0,
) -> list[float]:
    """Return the earliest starts of configurations run in order under the partial model.

    Configuration k starts at the later of the previous end and, for each of its new circuits
    (not in configuration k-1), ``delta`` after the last end of a configuration using its input
    or output port (``t0 + delta`` for ports not used yet).

    >>> a = (np.array([0, 1]), np.array([1, 0]))
    >>> b = (np.array([0, 2]), np.array([1, 3]))   # keeps 0 -> 1, lights 2 -> 3
    >>> partial_starts([a, b], [1.0, 1.0], 0.5)
    [0.5, 1.5]
    """
    last_in: dict[int, float] = {}
    last_out: dict[int, float] = {}
    prev: set[tuple[int, int]] = set()
    end = t0
    starts: list[float] = []
    for (ins, outs), w in zip(circuits, durations, strict=True):
        start = end if starts else t0 + delta
        cur = set(zip(ins.tolist(), outs.tolist(), strict=True))
        for i, j in cur - prev:
            start = max(start, last_in.get(i, t0) + delta, last_out.get(j, t0) + delta)
        starts.append(start)
        end = start + float(w)
        for i, j in cur:
            last_in[i] = end
            last_out[j] = end
        prev = cur
    return starts
