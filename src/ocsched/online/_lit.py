"""The circuits a schedule lights, as sorted keys, and those of the schedules a fit returned.

:meth:`~ocsched.online.Plan.fit` counts recourse (circuits added plus removed) against the
planned schedule or ``previous=``: :func:`_keys` lists a schedule's lit circuits
``switch * n * n + i * n + j``, :func:`_changes` compares two such lists, and the keys of every
schedule a fit returned are remembered while it lives (:func:`_remember`, :func:`_keys_of`), so
passing it back as ``previous=`` costs nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from ocsched._types import IntArray
from ocsched.model import Configuration, Schedule
from ocsched.online.recourse import lit

#: The lit circuits (keys, see :func:`_keys`) of the schedules fit() returned, with their switch
#: count, by id while they live: comparing against one as ``previous=`` then costs nothing.
_LIT: dict[int, tuple[IntArray, int]] = {}


def _keys(switches: Sequence[Sequence[Configuration]], n: int, s: int) -> IntArray:
    """The circuits the first ``s`` switches set up: sorted keys ``switch * n * n + i * n + j``."""
    sw = (tuple(switches) + ((),) * s)[:s]  # extra switches of another fabric: ignored
    return np.nonzero(lit(sw, n))[0].astype(np.int64)


def _changes(before: IntArray, after: IntArray) -> tuple[int, int]:
    common = np.intersect1d(before, after, assume_unique=True).size
    return int(after.size - common), int(before.size - common)


def _remember(out: Schedule, keys: IntArray, s: int) -> None:
    _LIT[id(out)] = (keys, s)
    weakref.finalize(out, _LIT.pop, id(out), None)


def _keys_of(sched: Schedule, n: int, s: int) -> IntArray:
    got = _LIT.get(id(sched))
    if got is not None and got[1] == s and sched.ports == n:
        return got[0]
    return _keys(sched.switches, n, s)
