"""Whole schedulers by name, and :func:`schedule`, the one entry point.

Each scheduler is a function ``f(demand, *, switches, delta, rng) -> (configurations, splits)``
registered in :data:`ALGORITHMS`; :func:`schedule` validates the input, dispatches, and wraps the
result in a :class:`~ocsched.model.Schedule` with its lower bound and provenance.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched.assign import place
from ocsched.bounds import lower_bound
from ocsched.decompose import spectra_decompose
from ocsched.errors import InvalidInputError
from ocsched.model import Configuration, Demand, Schedule, as_demand, check_delta, check_switches

__all__ = ["ALGORITHMS", "Algorithm", "algorithms", "register", "schedule"]

Switches = tuple[tuple[Configuration, ...], ...]
SchedulerFn = Callable[..., tuple[Switches, int]]
RngLike = np.random.Generator | int | None


@dataclass(frozen=True)
class Algorithm:
    """A registered scheduler: its function and a one-line description."""

    name: str
    func: SchedulerFn
    description: str
    max_ports: int | None = None  # larger inputs are refused (exact solvers)


ALGORITHMS: dict[str, Algorithm] = {}


def register(
    name: str, description: str, *, max_ports: int | None = None
) -> Callable[[SchedulerFn], SchedulerFn]:
    """Decorator adding a scheduler to :data:`ALGORITHMS`.

    The function is called as ``func(demand, *, switches, delta, rng)`` with a validated
    :class:`~ocsched.model.Demand` and must return ``(configurations per switch, splits)``.
    """

    def deco(func: SchedulerFn) -> SchedulerFn:
        ALGORITHMS[name] = Algorithm(name, func, description, max_ports)
        return func

    return deco


def algorithms() -> dict[str, str]:
    """Return ``{name: one-line description}`` of every scheduler.

    >>> "spectra" in algorithms()
    True
    """
    _load_all()
    return {k: a.description for k, a in ALGORITHMS.items()}


@register("spectra", "Spectra: Delta permutations, LP-refit weights, greedy placement, equalization")
def _spectra(demand: Demand, *, switches: int, delta: float, rng: RngLike = None) -> tuple[Switches, int]:
    dec = spectra_decompose(demand)
    return place(dec.perms, dec.weights, switches, delta, balance=True)


@register("spectra-noeq", "Spectra without the equalization step (greedy placement only)")
def _spectra_noeq(
    demand: Demand, *, switches: int, delta: float, rng: RngLike = None
) -> tuple[Switches, int]:
    dec = spectra_decompose(demand)
    return place(dec.perms, dec.weights, switches, delta, balance=False)


@register(
    "spectra-pack",
    "Spectra's permutations placed by bisection on the makespan (never worse than spectra)",
)
def _spectra_pack(
    demand: Demand, *, switches: int, delta: float, rng: RngLike = None
) -> tuple[Switches, int]:
    dec = spectra_decompose(demand)
    return place(dec.perms, dec.weights, switches, delta, packing=True)


def schedule(
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    *,
    switches: int,
    delta: float,
    algorithm: str = "spectra",
    rng: RngLike = None,
) -> Schedule:
    """Schedule ``demand`` on ``switches`` parallel OCSes with reconfiguration delay ``delta``.

    Parameters
    ----------
    demand : array_like, sparse matrix or Demand
        n x n non-negative, finite demand; ``demand[i, j]`` is the time to send i -> j at one
        link's line rate. Diagonal entries (local traffic) are dropped with a warning.
    switches : int
        Number of parallel switches s >= 1.
    delta : float
        Reconfiguration delay >= 0, in the unit of ``demand``.
    algorithm : str
        A name from :func:`algorithms`.
    rng : Generator, int or None
        Seed for randomised algorithms (ignored by deterministic ones).

    Returns
    -------
    Schedule
        A valid schedule, with ``lower_bound`` filled in and provenance in ``meta``.

    Raises
    ------
    InvalidInputError
        For a malformed demand, ``switches`` < 1 or not an integer, ``delta`` < 0, or an unknown
        algorithm.

    Examples
    --------
    >>> d = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]
    >>> s = schedule(d, switches=2, delta=0.5)
    >>> s.makespan, s.num_configurations, round(s.lower_bound, 6)
    (2.75, 3, 2.75)
    """
    from ocsched import __version__

    dem = as_demand(demand)
    s = check_switches(switches)
    d = check_delta(delta)
    _load_all()
    if algorithm not in ALGORITHMS:
        raise InvalidInputError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    limit = ALGORITHMS[algorithm].max_ports
    if limit is not None and dem.n > limit:
        raise InvalidInputError(
            f"algorithm {algorithm!r} supports at most {limit} ports; `demand` has {dem.n}"
        )
    t0 = time.perf_counter()
    confs, splits = ALGORITHMS[algorithm].func(dem, switches=s, delta=d, rng=rng)
    elapsed = time.perf_counter() - t0
    return Schedule(
        ports=dem.n,
        delta=d,
        switches=confs,
        algorithm=algorithm,
        lower_bound=lower_bound(dem, switches=s, delta=d),
        splits=splits,
        meta={
            "ocsched_version": __version__,
            "switches": s,
            "seed": rng if isinstance(rng, int) and not isinstance(rng, bool) else None,
            "runtime_s": elapsed,
        },
    )


def _load_all() -> None:
    # Peer schedulers live in their own modules and register on import.
    import importlib
    import importlib.util

    for mod in _PEER_MODULES:
        if importlib.util.find_spec(mod) is not None:
            importlib.import_module(mod)


_PEER_MODULES: tuple[str, ...] = ("ocsched.peers", "ocsched.exact")
