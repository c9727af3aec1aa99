"""Shared state of the iteration schedulers: type aliases, the cached base schedules, keys."""

from __future__ import annotations

from contextvars import ContextVar

import numpy as np
from numpy.typing import NDArray

from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand
from ocsched.schedulers import SCHEDULERS

RngLike = np.random.Generator | int | None
Tagged = list[list[tuple[int, Configuration]]]  # per switch: (phase, configuration) in time order
Held = list[Configuration | None]  # per switch: the configuration it holds (its last one)
Pieces = list[tuple[NDArray[np.int64], float]]  # (permutation, total time held)


#: While ``schedule_iteration(predicted=...)`` runs: the base configurations of each phase (by
#: its demand's key), its prediction's plan fitted to it, used instead of the base scheduler.
FITTED: ContextVar[dict[bytes, tuple[tuple[Configuration, ...], ...]] | None] = ContextVar(
    "fitted", default=None
)


class BaseSchedules:
    """The base scheduler's per-phase configurations (relative to the phase's start), cached by demand."""

    def __init__(self, base: str, fabric: Fabric, rng: RngLike) -> None:
        self.run = SCHEDULERS[base].run
        self.fabric = fabric
        self.rng = rng
        # A Generator changes state between calls: the same matrix may then get another schedule.
        self.cacheable = not isinstance(rng, np.random.Generator)
        self.cache: dict[bytes, tuple[tuple[Configuration, ...], ...]] = {}

    def __call__(self, demand: Demand) -> tuple[tuple[Configuration, ...], ...]:
        key = demand_key(demand)
        fitted = FITTED.get()
        if fitted is not None and key in fitted:
            return fitted[key]
        if self.cacheable and key in self.cache:
            return self.cache[key]
        out = self.run(demand, self.fabric, self.rng).switches
        if self.cacheable:
            self.cache[key] = out
        return out


def demand_key(demand: Demand) -> bytes:
    return b"|".join(
        (str(demand.n).encode(), demand.rows.tobytes(), demand.cols.tobytes(), demand.values.tobytes())
    )


def perm_key(perm: NDArray[np.int64]) -> bytes:
    return np.ascontiguousarray(perm, dtype=np.int64).tobytes()


def tagged_end(tagged: Tagged) -> float:
    return max((c.end for sw in tagged for _, c in sw), default=0.0)


def in_both(first: Demand, second: Demand) -> NDArray[np.bool_]:
    """Which of ``first``'s entries are nonzero in ``second`` too (a mask over its entries)."""
    n = first.n
    keys, other = first.rows * n + first.cols, second.rows * n + second.cols
    if other.size == 0:
        return np.zeros(keys.size, dtype=bool)
    if other.size > 1 and (other[1:] < other[:-1]).any():  # Demand keeps them sorted; a hand-made one may not
        other = np.sort(other)
    at = np.minimum(np.searchsorted(other, keys), other.size - 1)
    return np.asarray(other[at] == keys)  # no hashing: np.intersect1d / np.isin cost more here
