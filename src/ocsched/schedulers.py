"""Whole schedulers by name, and :func:`schedule`, the one entry point.

Every scheduler is an entry of :data:`SCHEDULERS`, a literal dict complete on import. Most are a
*pipeline*: a decomposer from :data:`ocsched.decompose.DECOMPOSERS` followed by a placement from
:data:`ocsched.assign.PLACEMENTS`. The others (the split-based baselines, the exact solver) are
functions. Either way a scheduler returns a :class:`Result`, which :func:`schedule` wraps in a
:class:`~ocsched.model.Schedule` with its status, dual bound, lower bound and provenance.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_choice, check_delta, check_switches
from ocsched._version import __version__
from ocsched.assign import place, timeline
from ocsched.bounds import lower_bound
from ocsched.decompose import Decomposition, decompose
from ocsched.errors import InfeasibleError, InvalidInputError
from ocsched.exact import DEFAULT_TIME_LIMIT, MAX_PORTS, solve_exact
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand, Schedule, as_demand
from ocsched.split import Order, balanced_split, split_flows

__all__ = [
    "FEATURES",
    "SCHEDULERS",
    "Result",
    "Scheduler",
    "algorithms",
    "as_fabric",
    "fabric_features",
    "schedule",
    "split_schedule",
]

log = logging.getLogger(__name__)

Switches = tuple[tuple[Configuration, ...], ...]
RngLike = np.random.Generator | int | None


@dataclass(frozen=True)
class Result:
    """What a scheduler returns: per-switch configurations and how they were found.

    Attributes
    ----------
    switches : tuple of tuple of Configuration
        Per switch, its configurations in time order.
    splits : int
        Extra pieces of permutations or flows.
    status : str
        ``"heuristic"``, or an exact solver's status.
    dual_bound : float or None
        A proved lower bound on the optimum, if the scheduler has one.
    """

    switches: Switches
    splits: int = 0
    status: str = "heuristic"
    dual_bound: float | None = None


SchedulerFn = Callable[[Demand, Fabric, RngLike], Result]

#: Fabric features a scheduler may support beyond identical all-stop switches that never fail.
FEATURES = ("heterogeneous", "failures", "partial")


@dataclass(frozen=True)
class Scheduler:
    """A registered scheduler.

    Attributes
    ----------
    run : callable
        ``run(demand, fabric, rng) -> Result`` on a validated demand and fabric.
    description : str
        One line for listings.
    max_ports : int or None
        Larger demands are refused (the exact solver).
    supports : frozenset of str
        Fabric features (:data:`FEATURES`) it handles; others are refused with a clear error.
    """

    run: SchedulerFn
    description: str
    max_ports: int | None = None
    supports: frozenset[str] = frozenset()


def pipeline(decomposer: str, placement: str) -> SchedulerFn:
    """Return a scheduler that decomposes with ``decomposer`` and places with ``placement``."""

    def run(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
        delta = fabric.deltas[0]
        dec = decompose(demand, method=decomposer, delta=delta)
        return Result(*place(dec, switches=fabric.size, delta=delta, method=placement))

    return run


def _single_switch(dec: Decomposition, delta: float) -> tuple[Configuration, ...]:
    """All of a decomposition on one switch, largest weight first."""
    return timeline([[(l, float(w)) for l, w in enumerate(dec.weights)]], dec.perms, delta)[0]


def split_schedule(
    demand: Demand,
    *,
    switches: int,
    delta: float,
    rng: RngLike = None,
    method: Literal["spectra", "eclipse"] = "spectra",
    order: Order = "index",
) -> tuple[Switches, int]:
    """Schedule each switch alone on its own part of a balanced split (the paper's baseline).

    Parameters
    ----------
    demand : Demand
        The demand D.
    switches : int
        Number of switches s; D is split into s sub-matrices with
        :func:`~ocsched.split.balanced_split`, each carrying 1/s of every line sum.
    delta : float
        Reconfiguration delay.
    rng : Generator, int or None
        Randomises the split.
    method : {"spectra", "eclipse"}
        How each switch decomposes its sub-matrix (a key of
        :data:`~ocsched.decompose.DECOMPOSERS`). Every matching costs ``delta`` plus its weight.
    order : {"index", "random"}
        The split's cycle-search order (see :func:`~ocsched.split.split_share`).

    Returns
    -------
    configurations : tuple of tuple of Configuration
        Switch k serves sub-matrix k, its matchings largest first.
    splits : int
        Extra pieces the split made of flows (:func:`~ocsched.split.split_flows`).

    Raises
    ------
    InvalidInputError
        If ``method`` or ``order`` is unknown.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 2], [2, 0]])
    >>> confs, splits = split_schedule(d, switches=2, delta=0.5)
    >>> [[(c.start, c.duration) for c in sw] for sw in confs], splits
    ([[(0.5, 1.0)], [(0.5, 1.0)]], 2)
    """
    check_choice(method, "method", ("spectra", "eclipse"))
    parts = balanced_split(demand, switches, rng=rng, order=order)
    out = []
    for values in parts:
        on = values > 0
        sub = Demand(demand.n, demand.rows[on], demand.cols[on], values[on])
        out.append(_single_switch(decompose(sub, method=method, delta=delta), delta))
    return tuple(out), split_flows(parts)


def _split(method: Literal["spectra", "eclipse"]) -> SchedulerFn:
    def run(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
        sched = split_schedule(demand, switches=fabric.size, delta=fabric.deltas[0], rng=rng, method=method)
        return Result(*sched)

    return run


def _naive(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """Spectra's decomposition of D/s, the same single-switch schedule on every switch."""
    one = _single_switch(decompose(demand.scaled(1.0 / fabric.size)), fabric.deltas[0])
    return Result((one,) * fabric.size)


def _exact(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    res = solve_exact(demand, switches=fabric.size, delta=fabric.deltas[0], time_limit=DEFAULT_TIME_LIMIT)
    if res.status not in ("optimal", "time_limit"):
        raise InfeasibleError(f"exact solver ended with status {res.status!r} and no schedule")
    if not res.optimal:
        log.warning(
            "exact: %s after %.1f s; returning the best schedule found (makespan %.6g, gap %.2g%%)",
            res.status,
            res.runtime,
            res.makespan,
            100 * res.gap,
        )
    return Result(res.schedule.switches, 0, res.status, res.dual_bound)


SCHEDULERS: dict[str, Scheduler] = {
    "spectra": Scheduler(
        pipeline("spectra", "equalize"),
        "Spectra: Delta permutations, LP-refit weights, greedy placement, equalization",
    ),
    "spectra-noeq": Scheduler(
        pipeline("spectra", "greedy"), "Spectra without the equalization step (greedy placement only)"
    ),
    "spectra-pack": Scheduler(
        pipeline("spectra", "pack"),
        "Spectra's permutations placed by bisection on the makespan (never worse than spectra)",
    ),
    "baseline": Scheduler(
        _split("spectra"), "Paper's baseline: balanced split into s sub-matrices, Spectra per switch"
    ),
    "baseline-eclipse": Scheduler(
        _split("eclipse"), "Balanced split into s sub-matrices, Eclipse per switch"
    ),
    "naive": Scheduler(_naive, "Every switch carries D/s with the same single-switch Spectra schedule"),
    "eclipse": Scheduler(
        pipeline("eclipse", "equalize"),
        "Eclipse greedy decomposition (max served/(alpha+delta)), Spectra placement",
    ),
    "solstice": Scheduler(
        pipeline("solstice", "equalize"), "Solstice: QuickStuff + power-of-two slicing, Spectra placement"
    ),
    "bvn": Scheduler(
        pipeline("bvn", "equalize"),
        "Birkhoff-von Neumann on the stuffed matrix (max-bottleneck matchings), Spectra placement",
    ),
    "exact": Scheduler(
        _exact,
        f"Exact MILP optimum for tiny instances (n <= {MAX_PORTS}; "
        f"best found after {DEFAULT_TIME_LIMIT:g} s)",
        max_ports=MAX_PORTS,
    ),
}


def algorithms() -> dict[str, str]:
    """Return ``{name: one-line description}`` of every scheduler.

    >>> "spectra" in algorithms()
    True
    """
    return {k: a.description for k, a in SCHEDULERS.items()}


def fabric_features(fabric: Fabric) -> set[str]:
    """Return the :data:`FEATURES` a fabric uses.

    >>> sorted(fabric_features(Fabric.uniform(2, 0.1)))
    []
    """
    out = set()
    if len(set(fabric.switches)) > 1 or any(r != 1.0 for r in fabric.rates):
        out.add("heterogeneous")
    if fabric.down or fabric.failed_links:
        out.add("failures")
    if fabric.model == "partial":
        out.add("partial")
    return out


def as_fabric(switches: object = None, delta: object = None, fabric: Fabric | None = None) -> Fabric:
    """Return the fabric of ``schedule()``'s arguments: ``fabric=``, or ``switches=`` and ``delta=``.

    >>> as_fabric(2, 0.1).size
    2
    """
    if fabric is not None:
        if switches is not None or delta is not None:
            raise InvalidInputError("give either `fabric` or `switches` and `delta`, not both")
        if not isinstance(fabric, Fabric):
            raise InvalidInputError(f"`fabric` must be an ocsched.Fabric; got {type(fabric).__name__}")
        return fabric
    if switches is None or delta is None:
        raise InvalidInputError("give `switches` and `delta` (or a `fabric`)")
    return Fabric.uniform(check_switches(switches), check_delta(delta))


def schedule(
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    *,
    switches: int | None = None,
    delta: float | None = None,
    fabric: Fabric | None = None,
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
        Number of parallel switches s >= 1 (the shortcut for ``Fabric.uniform(switches, delta)``).
    delta : float
        Reconfiguration delay >= 0, in the unit of ``demand``.
    fabric : Fabric, optional
        The general form: per-switch delays and rates, failures, the reconfiguration model.
    algorithm : str
        A key of :data:`SCHEDULERS` (see :func:`algorithms`).
    rng : Generator, int or None
        Seed for randomised algorithms (ignored by deterministic ones).

    Returns
    -------
    Schedule
        A valid schedule, with its ``status`` (``"heuristic"``, or the exact solver's),
        ``dual_bound`` where the scheduler proves one, ``lower_bound`` and provenance in ``meta``.

    Raises
    ------
    InvalidInputError
        For a malformed demand, ``switches`` < 1 or not an integer, ``delta`` < 0, or an unknown
        algorithm.

    Examples
    --------
    >>> d = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]
    >>> s = schedule(d, switches=2, delta=0.5)
    >>> s.makespan, s.num_configurations, round(s.lower_bound, 6), s.status
    (2.75, 3, 2.75, 'heuristic')
    """
    dem = as_demand(demand)
    fab = as_fabric(switches, delta, fabric)
    fab.check_ports(dem.n)
    if algorithm not in SCHEDULERS:
        raise InvalidInputError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(SCHEDULERS)}")
    sch = SCHEDULERS[algorithm]
    if sch.max_ports is not None and dem.n > sch.max_ports:
        raise InvalidInputError(
            f"algorithm {algorithm!r} supports at most {sch.max_ports} ports; `demand` has {dem.n}"
        )
    missing = fabric_features(fab) - sch.supports
    if missing:
        can = ", ".join(sorted(sch.supports)) or "identical all-stop switches without failures only"
        raise InvalidInputError(
            f"algorithm {algorithm!r} does not support {', '.join(sorted(missing))} fabrics "
            f"(it supports: {can})"
        )
    s, d = fab.size, fab.deltas[0]
    t0 = time.perf_counter()
    res = sch.run(dem, fab, rng)
    elapsed = time.perf_counter() - t0
    return Schedule(
        ports=dem.n,
        delta=d,
        switches=res.switches,
        algorithm=algorithm,
        lower_bound=lower_bound(dem, switches=s, delta=d),
        splits=res.splits,
        meta={
            "ocsched_version": __version__,
            "switches": s,
            "seed": rng if isinstance(rng, int) and not isinstance(rng, bool) else None,
            "runtime_s": elapsed,
        },
        status=res.status,
        dual_bound=res.dual_bound,
    )
