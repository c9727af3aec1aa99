"""What a switch can give a port: up time outside its down windows, before the port's link fails.

Holds :func:`available_time` (``A_b(T)`` of :mod:`ocsched.bounds.fabric`), the union of a
switch's down windows (:func:`merged_windows`), the fabric the bounds are computed on
(:func:`tolerant_fabric`, its edges relaxed by :data:`EDGE_SLACK` as the validator accepts them)
and when each port's links fail.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from ocsched.fabric import Fabric, LinkDown, SwitchDown

__all__ = [
    "EDGE_SLACK",
    "available_time",
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


def _port_fails(fabric: Fabric, n: int) -> dict[int, NDArray[np.float64]]:
    """Per port with a failed link: on each switch, when its link fails (the earliest if listed twice)."""
    fails: dict[int, NDArray[np.float64]] = {}
    for x in fabric.failed_links:
        if x.port < n:
            f = fails.setdefault(x.port, np.full(fabric.size, math.inf))
            f[x.switch] = min(f[x.switch], x.start)
    return fails
