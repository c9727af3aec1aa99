"""Laying configurations out on a fabric: around down windows (all-stop), and under the partial model."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from ocsched.timing.pools import PortPools, kept_circuits

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
    ports_per_endpoint: int = 1,
    bidirectional: bool = False,
) -> list[float]:
    """Return the earliest starts of configurations run in order under the partial model.

    Configuration k starts at the later of the previous end and, for each of its new circuits
    (not in configuration k-1), ``delta`` after the last end of a configuration using its input
    or output port (``t0 + delta`` for ports not used yet). On a switch with k ports per
    endpoint, or bidirectional circuits, a new circuit takes at each end one of the endpoint's
    ports holding no kept circuit, dark longest first (:class:`~ocsched.timing.pools.PortPools`,
    the validator's rule).

    >>> a = (np.array([0, 1]), np.array([1, 0]))
    >>> b = (np.array([0, 2]), np.array([1, 3]))   # keeps 0 -> 1, lights 2 -> 3
    >>> partial_starts([a, b], [1.0, 1.0], 0.5)
    [0.5, 1.5]

    Bidirectional, one port per endpoint: {0, 1} is kept either way round; {1, 2} waits for 1's
    port, dark from 1.5.

    >>> one = (np.array([0]), np.array([1]))
    >>> kept, waits = (np.array([1, 2]), np.array([0, 3])), (np.array([2]), np.array([1]))
    >>> partial_starts([one, kept], [1.0, 1.0], 0.5, bidirectional=True)
    [0.5, 1.5]
    >>> partial_starts([one, waits], [1.0, 1.0], 0.5, bidirectional=True)
    [0.5, 2.0]
    """
    sizes = [np.size(i) for i, _ in circuits]
    owner = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    empty = np.zeros(0, np.int64)
    ins = np.concatenate([empty, *(np.asarray(i, np.int64) for i, _ in circuits)])
    outs = np.concatenate([empty, *(np.asarray(j, np.int64) for _, j in circuits)])
    kept = kept_circuits(owner, ins, outs, bidirectional)
    pools = PortPools(ins, outs, kept, ports=ports_per_endpoint, bidirectional=bidirectional, t0=t0)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    end = t0
    starts: list[float] = []
    for k, w in enumerate(durations):
        start = end if starts else t0 + delta
        step = pools.step(int(offsets[k]), int(offsets[k + 1]))
        if step[0].size:
            start = max(start, float(pools.dark_since(step).max()) + delta)
        starts.append(start)
        end = start + float(w)
        pools.light(step, end)
    return starts
