"""An endpoint's ports on a switch as a pool: the partial model on multi-port and bidirectional switches.

On a switch with k ports per endpoint an endpoint has k interchangeable ports there (directed:
k inputs and k outputs, two pools; bidirectional: k ports, one pool, either end of a circuit
takes one). Under the partial model a circuit kept from the previous configuration holds its
ports, and every new circuit takes, at each of its two ends, a port of the pool that holds no
kept circuit and has been dark for the delay. Ports of a pool are interchangeable, so a pool is
only the times its ports went dark, sorted: taking the ports dark longest is never worse than
any other choice, since a port dark by ``s_k - delta`` stays usable for every later
configuration (they start later), whichever of the usable ports are taken. The check of a switch
(:func:`ocsched.timing.check_switch`) and the partial layout
(:func:`ocsched.timing.partial_starts`) both run their configurations through a
:class:`PortPools`, so the scheduler and the validator apply one rule. With k = 1 on a directed
switch the pool rule is the plain rule of :mod:`ocsched.timing.tolerance`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched.timing.tolerance import FloatArray, IntArray

__all__ = ["PortPools", "kept_circuits"]


def kept_circuits(owner: IntArray, ins: IntArray, outs: IntArray, bidirectional: bool) -> NDArray[np.bool_]:
    """Per circuit, whether configuration ``owner - 1`` holds the same circuit (as many times).

    ``owner`` must be non-decreasing (the circuits of configuration 0, then 1, ...). A circuit held
    twice in a configuration (two parallel circuits on a multi-port switch) is kept twice only if
    the previous configuration holds it twice; on a bidirectional switch ``(a, b)`` and ``(b, a)``
    are one circuit. The gap's own conditions (no down window, links up) are the caller's.

    >>> kept_circuits(np.array([0, 0, 1, 1]), np.array([0, 2, 1, 3]), np.array([1, 3, 0, 2]), True).tolist()
    [False, False, True, True]
    """
    out = np.zeros(owner.size, dtype=bool)
    if not owner.size:
        return out
    a, b = (np.minimum(ins, outs), np.maximum(ins, outs)) if bidirectional else (ins, outs)
    order = np.lexsort((owner, b, a))
    a, b, o = a[order], b[order], owner[order]
    # Runs of one circuit in one configuration; a run is kept up to the previous run's length
    # when that run is the same circuit in the configuration just before.
    new_run = np.concatenate([[True], (a[1:] != a[:-1]) | (b[1:] != b[:-1]) | (o[1:] != o[:-1])])
    first = np.flatnonzero(new_run)
    run = np.cumsum(new_run) - 1
    length = np.diff(np.concatenate([first, [o.size]]))
    copy = np.arange(o.size) - first[run]
    prev = np.maximum(run - 1, 0)
    p = first[prev]
    same = (run > 0) & (a[p] == a) & (b[p] == b) & (o[p] == o - 1)
    out[order] = same & (copy < length[prev])
    return out


class PortPools:
    """The ports of every pool a switch's circuits use: when each went dark, sorted per pool.

    Parameters
    ----------
    ins, outs : ndarray of int64
        Every circuit of the switch's configurations, configuration after configuration.
    kept : ndarray of bool
        Per circuit, whether it is kept from the previous configuration.
    ports : int
        Ports per pool (the switch's ports per endpoint).
    bidirectional : bool
        One pool per endpoint, either end of a circuit takes a port of it; otherwise an input
        pool and an output pool per endpoint.
    t0 : float
        When every port is dark from.

    Examples
    --------
    Two ports per endpoint, bidirectional: {0, 1}, then {0, 1} kept while {0, 2} lights on 0's
    second port (dark since 0) and 2's first.

    >>> ins, outs = np.array([0, 0, 0]), np.array([1, 1, 2])
    >>> p = PortPools(ins, outs, np.array([False, True, False]), ports=2, bidirectional=True)
    >>> p.light(p.step(0, 1), 1.0)
    >>> p.dark_since(p.step(1, 3)).tolist()
    [0.0, -inf, 0.0]
    """

    def __init__(
        self,
        ins: IntArray,
        outs: IntArray,
        kept: NDArray[np.bool_],
        *,
        ports: int,
        bidirectional: bool,
        t0: float = 0.0,
    ) -> None:
        # Pool ids: directed, 2 i (input i) and 2 j + 1 (output j); bidirectional, i and j.
        self.ends = (ins, outs) if bidirectional else (2 * ins, 2 * outs + 1)
        self.kept = kept
        self.ids = np.unique(np.concatenate(self.ends))
        self.ports = int(ports)
        self.dark = np.full((self.ids.size, self.ports), float(t0))

    def step(self, lo: int, hi: int) -> tuple[IntArray, IntArray, IntArray]:
        """For the configuration of circuits ``lo:hi``: the rows of the pools it takes ports of,
        and per row the ends of its new and of its kept circuits."""
        a, b = self.ends
        uses = np.concatenate([a[lo:hi], b[lo:hi]])
        kept = np.concatenate([self.kept[lo:hi], self.kept[lo:hi]])
        rows, inv = np.unique(np.searchsorted(self.ids, uses), return_inverse=True)
        keep = np.bincount(inv, weights=kept.astype(np.float64), minlength=rows.size).astype(np.int64)
        new = np.bincount(inv, minlength=rows.size).astype(np.int64) - keep
        return rows, new, keep

    def dark_since(self, step: tuple[IntArray, IntArray, IntArray]) -> FloatArray:
        """Per row of a :meth:`step`, since when the ports its new circuits take have all been
        dark (-inf: none new).

        The kept circuits hold the ports lit last (the largest times); the new ones take the
        others, dark longest first, so the time is the ``new``-th smallest of those.
        """
        rows, new, keep = step
        since = self.dark[rows, np.clip(new - 1, 0, np.maximum(self.ports - 1 - keep, 0))]
        return np.where(new > 0, since, -np.inf)

    def light(self, step: tuple[IntArray, IntArray, IntArray], end: float) -> None:
        """Record that a :meth:`step`'s configuration ran until ``end``: its kept ports and the new
        ones lit till then."""
        rows, new, keep = step
        q = np.arange(self.ports)
        block = self.dark[rows]
        lit = (q[None, :] < new[:, None]) | (q[None, :] >= self.ports - keep[:, None])
        # Never earlier than a port's own last end (configurations out of time order are reported
        # as such; the ports still count their latest use, as the plain rule does).
        block[lit] = np.maximum(block[lit], end)
        block.sort(axis=1)
        self.dark[rows] = block
