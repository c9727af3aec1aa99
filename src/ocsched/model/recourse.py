"""Recourse: how many cross-connects a switch changes from one configuration to the next.

An OCS controller moving a switch from configuration A to configuration B deletes the circuits of
A that B does not hold and adds the circuits of B that A does not hold; a circuit held by both is
kept (neither deleted nor re-added). The *recourse* of a boundary is the number of circuits
deleted plus the number added, and a schedule's recourse sums it over every boundary of every
switch, the first configuration of a switch counted as set up from an empty switch (all its
circuits added); the tear-down after the last one is not counted. The ``oxc-orders`` export
reports it. (Between two *consecutive schedules* the online schedulers count a different thing,
the circuits a switch sets up in one and not the other: :func:`ocsched.online.recourse.recourse`.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

from ocsched._types import IntArray
from ocsched.model.configuration import Configuration
from ocsched.timing.pools import kept_circuits

__all__ = ["Changes", "changes", "recourse", "switch_recourse"]


class _HasSwitches(Protocol):
    @property
    def switches(self) -> Sequence[Sequence[Configuration]]: ...


def _bidirectional(schedule: _HasSwitches) -> list[bool]:
    """Per switch, whether the schedule's fabric (if it names one) makes its circuits bidirectional."""
    fab = getattr(schedule, "fabric", None)
    n = len(schedule.switches)
    if fab is None:
        return [False] * n
    return [b < fab.size and fab.switches[b].bidirectional for b in range(n)]


class Changes(tuple[IntArray, IntArray]):
    """``(deleted, added)``: two ``(k, 2)`` int arrays of ``[input, output]`` circuits, by input port."""

    __slots__ = ()

    @property
    def deleted(self) -> IntArray:
        """Circuits of the previous configuration the next one does not hold."""
        return self[0]

    @property
    def added(self) -> IntArray:
        """Circuits of the next configuration the previous one did not hold."""
        return self[1]

    @property
    def total(self) -> int:
        """The recourse of the boundary: deleted plus added."""
        return int(self[0].shape[0] + self[1].shape[0])


def _keys(conf: Configuration | None) -> tuple[IntArray, IntArray]:
    if conf is None:
        empty = np.zeros(0, np.int64)
        return empty, empty
    ins, outs = conf.circuit_arrays()
    keep = outs >= 0
    return ins[keep], outs[keep]


def changes(
    previous: Configuration | None, conf: Configuration | None, *, bidirectional: bool = False
) -> Changes:
    """Return the circuits to delete and to add to go from ``previous`` to ``conf``.

    Either may be None (an empty switch: everything is added, or everything deleted).

    Parameters
    ----------
    previous, conf
        Consecutive configurations of one switch.
    bidirectional
        The switch's circuits join their two ends both ways: ``(i, j)`` and ``(j, i)`` are one
        circuit, kept as the partial model keeps it (:func:`ocsched.timing.pools.kept_circuits`).

    Returns
    -------
    Changes
        ``(deleted, added)``, each a ``(k, 2)`` array of ``[input, output]`` rows by input port;
        ``.total`` is the boundary's recourse.

    Notes
    -----
    O(k log k) for k circuits: one sort, no loop over circuits. A circuit held several times (a
    switch with several ports per endpoint) is kept as many times as both configurations hold it.

    Examples
    --------
    >>> a = Configuration.from_circuits(0.5, 1.0, [(0, 1), (1, 0), (2, 3)], ports=4)
    >>> b = Configuration.from_circuits(2.0, 1.0, [(0, 1), (1, 2), (3, 0)], ports=4)
    >>> d = changes(a, b)
    >>> d.deleted.tolist(), d.added.tolist(), d.total
    ([[1, 0], [2, 3]], [[1, 2], [3, 0]], 4)
    >>> changes(None, a).total
    3
    >>> c = Configuration.from_circuits(0.5, 1.0, [(0, 1), (2, 3)], ports=4)
    >>> e = Configuration.from_circuits(2.0, 1.0, [(1, 0), (2, 3)], ports=4)
    >>> changes(c, e).total, changes(c, e, bidirectional=True).total  # (1, 0) is (0, 1) there
    (2, 0)
    """
    pi, po = _keys(previous)
    ni, no = _keys(conf)
    # Each side's circuits the other holds too: the second configuration of the pair keeps them.
    first, second = np.zeros(pi.size, np.int64), np.ones(ni.size, np.int64)
    kept_new = kept_circuits(
        np.concatenate([first, second]), np.concatenate([pi, ni]), np.concatenate([po, no]), bidirectional
    )[pi.size :]
    first, second = np.zeros(ni.size, np.int64), np.ones(pi.size, np.int64)
    kept_old = kept_circuits(
        np.concatenate([first, second]), np.concatenate([ni, pi]), np.concatenate([no, po]), bidirectional
    )[ni.size :]
    deleted = np.stack([pi[~kept_old], po[~kept_old]], axis=1)
    added = np.stack([ni[~kept_new], no[~kept_new]], axis=1)
    return Changes((deleted.astype(np.int64), added.astype(np.int64)))


def switch_recourse(confs: Iterable[Configuration], *, bidirectional: bool = False) -> int:
    """Return the recourse of one switch's configurations (in time order), its first set-up included.

    >>> a = Configuration.from_circuits(0.5, 1.0, [(0, 1), (1, 0)], ports=2)
    >>> b = Configuration.from_circuits(2.0, 1.0, [(0, 1)], ports=2)
    >>> switch_recourse([a, b])  # 2 added, then (1, 0) deleted
    3
    """
    total = 0
    previous: Configuration | None = None
    for conf in confs:
        total += changes(previous, conf, bidirectional=bidirectional).total
        previous = conf
    return total


def recourse(schedule: _HasSwitches) -> int:
    """Return the total recourse of a schedule: circuits deleted plus added, over all switches.

    Works for any object with a ``switches`` attribute holding each switch's configurations in
    time order (a :class:`~ocsched.model.Schedule` or an iteration schedule).

    >>> from ocsched.model import Schedule
    >>> a = Configuration.from_circuits(0.5, 1.0, [(0, 1), (1, 0)], ports=2)
    >>> b = Configuration.from_circuits(2.0, 1.0, [(0, 1), (1, 0)], ports=2)
    >>> recourse(Schedule(ports=2, delta=0.5, switches=((a, b), (a,))))  # b keeps a's circuits
    4
    """
    both = _bidirectional(schedule)
    return sum(switch_recourse(sw, bidirectional=x) for sw, x in zip(schedule.switches, both, strict=True))
