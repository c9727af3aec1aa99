"""Place weighted permutations on s parallel switches: greedy LPT, equalization, timeline.

An *assignment* is, per switch, a list of pieces ``(l, length)``: permutation l held for
``length``. A switch's load is the sum over its pieces of ``delta + length``.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from ocsched.model import Configuration

__all__ = ["Assignment", "equalize", "greedy", "loads", "place", "timeline"]

log = logging.getLogger(__name__)

Assignment = list[list[tuple[int, float]]]


def loads(assignment: Assignment, delta: float) -> NDArray[np.float64]:
    """Return each switch's load: the sum of ``delta + length`` over its pieces."""
    return np.array([sum(delta + w for _, w in sw) for sw in assignment], dtype=np.float64)


def greedy(weights: NDArray[np.float64], switches: int, delta: float) -> Assignment:
    """Longest-processing-time-first: each weight, largest first, onto the least-loaded switch.

    Ties go to the lowest switch index, and equal weights keep their order (stable sort).

    >>> greedy(np.array([3.0, 1.0, 2.0]), 2, 0.5)
    [[(0, 3.0)], [(2, 2.0), (1, 1.0)]]
    """
    out: Assignment = [[] for _ in range(switches)]
    load = np.zeros(switches)
    for l in np.argsort(-np.asarray(weights), kind="stable"):
        b = int(np.argmin(load))
        out[b].append((int(l), float(weights[l])))
        load[b] += delta + float(weights[l])
    return out


def equalize(
    assignment: Assignment, delta: float, *, max_rounds: int | None = None
) -> tuple[Assignment, int]:
    """Split pieces of the most-loaded switch onto the least-loaded one until loads are within delta.

    Repeat: A = the most loaded switch, B = the least loaded; stop if ``load(A) - load(B) <=
    delta`` (plus a relative 1e-9 of load(A), so that delta = 0 terminates). Let
    ``mid = (load(A) + load(B) + delta) / 2`` and ``x = load(A) - mid``; stop if the largest piece ``a`` on A has ``a <= x``; otherwise shorten ``a`` by x and put a new piece of
    length x of the same permutation on B (paying one more delta there). A and B both end at mid.

    Returns the new assignment (the input is not modified) and the number of splits.

    Notes
    -----
    Never raises the largest load: each step lowers load(A) to mid < load(A) and raises load(B)
    to mid. Each step either stops or splits, and every split brings the gap between the two
    touched switches to 0; ``max_rounds`` (default ``100 * (s + pieces)``) guards against slow
    convergence.

    Examples
    --------
    >>> equalize([[(0, 4.0)], []], 0.0)
    ([[(0, 2.0)], [(0, 2.0)]], 1)
    """
    out = [list(sw) for sw in assignment]
    s = len(out)
    if s < 2:
        return out, 0
    load = loads(out, delta)
    cap = max_rounds if max_rounds is not None else 100 * (s + sum(len(sw) for sw in out))
    splits = 0
    for _ in range(cap):
        a_sw, b_sw = int(np.argmax(load)), int(np.argmin(load))
        # The relative slack stops the geometric tail when delta = 0 (float noise, no gain).
        if load[a_sw] - load[b_sw] <= delta + 1e-9 * load[a_sw] or not out[a_sw]:
            break
        mid = float(load[a_sw] + load[b_sw] + delta) / 2.0
        x = float(load[a_sw]) - mid
        k = max(range(len(out[a_sw])), key=lambda t: out[a_sw][t][1])
        l, a = out[a_sw][k]
        if a <= x:
            break
        out[a_sw][k] = (l, a - x)
        out[b_sw].append((l, x))
        load[a_sw] = mid
        load[b_sw] = mid
        splits += 1
    else:
        log.info("equalize stopped after %d rounds without converging", cap)
    return out, splits


def timeline(
    assignment: Assignment, perms: NDArray[np.int64], delta: float
) -> tuple[tuple[Configuration, ...], ...]:
    """Turn an assignment into configurations: each switch runs its pieces largest first.

    Each piece starts ``delta`` after the previous one ends (the first at ``delta``).
    Zero-length pieces are dropped.
    """
    perms = np.array(perms, dtype=np.int64)  # private read-only copy shared by the configurations
    perms.flags.writeable = False
    result = []
    for sw in assignment:
        t = 0.0
        confs = []
        for l, w in sorted(sw, key=lambda p: -p[1]):
            if w <= 0:
                continue
            t += delta
            confs.append(Configuration(t, w, perms[l]))
            t += w
        result.append(tuple(confs))
    return tuple(result)


def place(
    perms: NDArray[np.int64],
    weights: NDArray[np.float64],
    switches: int,
    delta: float,
    *,
    balance: bool = True,
) -> tuple[tuple[tuple[Configuration, ...], ...], int]:
    """Spectra's steps 2-4: greedy placement, optional equalization, then the timeline.

    Returns the per-switch configurations and the number of splits.
    """
    assignment = greedy(weights, switches, delta)
    splits = 0
    if balance:
        assignment, splits = equalize(assignment, delta)
    return timeline(assignment, perms, delta), splits
