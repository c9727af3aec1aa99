"""Whole schedulers by name, and :func:`schedule`, the one entry point.

Every scheduler is an entry of :data:`SCHEDULERS`, a literal dict complete on import. Most are a
*pipeline*: a decomposer from :data:`ocsched.decompose.DECOMPOSERS` followed by a placement from
:data:`ocsched.assign.PLACEMENTS`. The others (the split-based baselines, the exact solver) are
functions. Either way a scheduler returns a :class:`Result`, which :func:`schedule` wraps in a
:class:`~ocsched.model.Schedule` with its status, dual bound, lower bound and provenance.

The package holds one family per module, each building on :mod:`~ocsched.schedulers._registry`
(the types, the fabric features): :mod:`~ocsched.schedulers.spectra` (the pipelines and the
Spectra variants), :mod:`~ocsched.schedulers.baselines` (the split-based ones and ``naive``),
:mod:`~ocsched.schedulers.exact`, :mod:`~ocsched.schedulers.ports` (bidirectional and multi-port
switches) and :mod:`~ocsched.schedulers.hybrid` (a packet switch beside the circuits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._jit import clock
from ocsched._version import __version__
from ocsched.baseline import split_schedule
from ocsched.bounds import lower_bound
from ocsched.errors import InfeasibleError, InvalidInputError
from ocsched.exact import DEFAULT_NODE_LIMIT, MAX_EXACT_PORTS
from ocsched.exact.ports import MAX_EXACT_ENDPOINTS
from ocsched.fabric import Fabric
from ocsched.hybrid import mixnet_greedy, solstice_hybrid, spectra_hybrid
from ocsched.model import Configuration, Demand, Schedule, as_demand
from ocsched.schedulers._registry import (
    ALL_FEATURES,
    FEATURES,
    PORT_FEATURES,
    Option,
    Result,
    RngLike,
    Scheduler,
    as_fabric,
    fabric_features,
)
from ocsched.schedulers._registry import SchedulerFn as SchedulerFn
from ocsched.schedulers._registry import Switches as Switches
from ocsched.schedulers.baselines import _ORDER, _naive, _split
from ocsched.schedulers.exact import _exact
from ocsched.schedulers.hybrid import _exact_hybrid, _hybrid
from ocsched.schedulers.ports import EXACT_PORTS_NODES, _exact_ports, _ports
from ocsched.schedulers.spectra import _OPT_NODES, _PACK, _bff, _opt, pipeline

__all__ = [
    "ALIASES",
    "FALLBACKS",
    "FEATURES",
    "PORT_FEATURES",
    "SCHEDULERS",
    "Option",
    "Result",
    "Scheduler",
    "algorithms",
    "as_fabric",
    "fabric_features",
    "schedule",
    "scheduler_name",
    "split_schedule",
    "supporting",
]

SCHEDULERS: dict[str, Scheduler] = {
    "spectra": Scheduler(
        pipeline("spectra", "equalize"),
        "Spectra: Delta permutations, LP-refit weights, greedy placement, equalization",
        supports=ALL_FEATURES,
    ),
    "spectra-greedy": Scheduler(
        pipeline("spectra", "greedy"),
        "Spectra without the equalization step (greedy placement only)",
        supports=ALL_FEATURES,
    ),
    "spectra-pack": Scheduler(
        pipeline("spectra", "pack"),
        "Spectra's permutations placed by bisection on the makespan (never worse than spectra)",
        supports=ALL_FEATURES,
    ),
    "spectra-opt": Scheduler(
        _opt,
        "best of Spectra's and grouped permutations, packed or placed whole; piece lengths re-fit by LP, "
        "pieces dropped; a short MILP on tiny supports",
        supports=ALL_FEATURES,
        options={"node_limit": _OPT_NODES},
    ),
    "spectra-partial": Scheduler(
        _bff,
        "Spectra authors' partial-reconfiguration variant: Spectra placement, per-port BFF per switch",
        supports=frozenset({"partial"}),
        requires=frozenset({"partial"}),
    ),
    "baseline": Scheduler(
        _split("spectra"),
        "Paper's baseline: balanced split into s sub-matrices (by capacity on a fabric), Spectra per switch",
        supports=frozenset({"heterogeneous"}),
        options={"order": _ORDER},
    ),
    "baseline-eclipse": Scheduler(
        _split("eclipse"), "Balanced split into s sub-matrices, Eclipse per switch", options={"order": _ORDER}
    ),
    "naive": Scheduler(_naive, "Every switch carries D/s with the same single-switch Spectra schedule"),
    "eclipse": Scheduler(
        pipeline("eclipse", "equalize"),
        "Eclipse greedy decomposition (max served/(alpha+delta)), Spectra placement",
        supports=ALL_FEATURES,
    ),
    "solstice": Scheduler(
        pipeline("solstice", "equalize"),
        "Solstice: QuickStuff + power-of-two slicing, Spectra placement",
        supports=ALL_FEATURES,
    ),
    "bvn": Scheduler(
        pipeline("bvn", "equalize"),
        "Birkhoff-von Neumann on the stuffed matrix (max-bottleneck matchings), Spectra placement",
        supports=ALL_FEATURES,
    ),
    "spectra-ports": Scheduler(
        _ports,
        "bidirectional / multi-port switches: Spectra on W = max(D, D^T) oriented along Euler tours, "
        "k/2 permutations per configuration, LP-refit, packed; never worse than the directed model; "
        "around down windows and failed links; under partial, each port also as a layer of its own",
        supports=PORT_FEATURES | {"failures", "partial"},
    ),
    "exact-ports": Scheduler(
        _exact_ports,
        f"Exact MILP optimum on bidirectional / multi-port switches for tiny instances "
        f"(n <= {MAX_EXACT_ENDPOINTS}; maximal b-matchings per switch, {EXACT_PORTS_NODES} nodes; "
        "partial model: the all-stop optimum or spectra-ports, unproved)",
        max_ports=MAX_EXACT_ENDPOINTS,
        supports=PORT_FEATURES | {"partial"},
    ),
    "exact": Scheduler(
        _exact,
        f"Exact MILP optimum for tiny instances (n <= {MAX_EXACT_PORTS}; best found within "
        f"{DEFAULT_NODE_LIMIT:,} branch-and-bound nodes; partial model: the all-stop optimum, unproved)",
        max_ports=MAX_EXACT_PORTS,
        supports=ALL_FEATURES,
        options={
            "node_limit": Option(
                DEFAULT_NODE_LIMIT, "int", "branch-and-bound nodes before stopping (status node_limit)", 1
            ),
            "time_limit": Option(
                None,
                "float",
                "seconds before stopping (status time_limit); off by default, as it makes results "
                "depend on the machine",
                0.0,
                optional=True,
                above=True,
            ),
        },
    ),
    "spectra-hybrid": Scheduler(
        _hybrid(spectra_hybrid, _PACK),
        "Hybrid fabric: the best split of D between the packet switch and spectra-pack "
        "(bound-guided, trim, proportional, circuits only, EPS only)",
        supports=frozenset({"eps"}),
    ),
    "solstice-hybrid": Scheduler(
        _hybrid(solstice_hybrid, pipeline("solstice", "equalize")),
        "Hybrid fabric: Solstice's trim of small entries to the packet switch, then Solstice",
        supports=frozenset({"eps"}),
    ),
    "exact-hybrid": Scheduler(
        _exact_hybrid,
        f"Hybrid fabric: exact MILP optimum (circuits and packet switch) for tiny instances (n <= 5; "
        f"{DEFAULT_NODE_LIMIT:,} nodes)",
        max_ports=5,
        supports=frozenset({"eps"}),
    ),
    "mixnet-greedy": Scheduler(
        _hybrid(mixnet_greedy, _PACK),
        "Hybrid fabric: the largest symmetrised pairs on circuits (s per port), the rest on the EPS",
        supports=frozenset({"eps"}),
    ),
}


#: Former names of schedulers, accepted wherever a scheduler is named (Python, CLI, sweep configs,
#: the service, schedule files); results record the current name.
ALIASES: dict[str, str] = {"spectra-noeq": "spectra-greedy", "spectra-bff": "spectra-partial"}


def scheduler_name(name: object, argument: str = "algorithm") -> str:
    """Return the key of :data:`SCHEDULERS` that ``name`` names (itself, or what an alias stands for).

    Raises
    ------
    InvalidInputError
        When ``name`` is no scheduler's name nor an alias; the message names ``argument`` and lists
        the schedulers.

    Examples
    --------
    >>> scheduler_name("spectra-bff"), scheduler_name("spectra")
    ('spectra-partial', 'spectra')
    """
    if isinstance(name, str):
        name = ALIASES.get(name, name)
        if name in SCHEDULERS:
            return name
    raise InvalidInputError(f"unknown {argument} {name!r}; choose one of {', '.join(SCHEDULERS)}")


def algorithms() -> dict[str, str]:
    """Return ``{name: one-line description}`` of every scheduler.

    >>> "spectra" in algorithms()
    True
    """
    return {k: a.description for k, a in SCHEDULERS.items()}


def supporting(fabric: Fabric) -> list[str]:
    """Return the schedulers that run on ``fabric`` (it has every feature they need, they support all it has).

    >>> from ocsched.fabric import Switch
    >>> supporting(Fabric((Switch(0.1, bidirectional=True),)))
    ['spectra-ports', 'exact-ports']
    """
    features = fabric_features(fabric)
    return [k for k, x in SCHEDULERS.items() if features <= x.supports and x.requires <= features]


#: Wider demands are scheduled on the sub-matrix of the ports that carry traffic (the schedulers
#: and their peers use arrays of n entries per matching, some n x n), and mapped back.
DENSE_PORTS = 10_000


def _run_on_active_ports(
    sch: Scheduler, dem: Demand, fab: Fabric, rng: RngLike, options: Mapping[str, Any]
) -> Result:
    """Run ``sch`` on the ports that carry traffic, then map the circuits back to ``dem.n`` ports.

    Idle ports never hold a circuit that serves anything, so the schedule is the same one the
    scheduler would build on the sub-matrix; memory follows the active ports, not n.
    """
    active = np.unique(np.concatenate([dem.rows, dem.cols]))
    if active.size > DENSE_PORTS:
        raise InvalidInputError(
            f"`demand` has {active.size} ports that carry traffic; at most {DENSE_PORTS} are supported"
        )
    # Invariant: `active` is sorted and holds every row and column index, so the map is exact.
    small = Demand(
        max(int(active.size), 1),
        np.searchsorted(active, dem.rows),
        np.searchsorted(active, dem.cols),
        dem.values,
    )
    on = set(active.tolist())
    links = tuple(
        dataclasses.replace(link, port=int(np.searchsorted(active, link.port)))
        for link in fab.failed_links
        if link.port in on
    )
    res = sch.run(small, dataclasses.replace(fab, failed_links=links), rng, **options)
    switches = tuple(
        tuple(
            Configuration.sparse(c.start, c.duration, active[ins], active[outs], ports=dem.n)
            for c in sw
            for ins, outs in [c.circuit_arrays()]
        )
        for sw in res.switches
    )
    eps = res.eps
    if eps is not None:
        eps = Demand(dem.n, active[eps.rows], active[eps.cols], eps.values)
    return dataclasses.replace(res, switches=switches, eps=eps)


def _run(
    sch: Scheduler, dem: Demand, fab: Fabric, rng: RngLike, options: Mapping[str, Any] | None = None
) -> Result:
    opts = options or {}
    if dem.n > DENSE_PORTS:
        return _run_on_active_ports(sch, dem, fab, rng, opts)
    return sch.run(dem, fab, rng, **opts)


#: Tried in this order when a scheduler finds no placement before the links fail and nothing is
#: proved impossible: the first that schedules is used (``meta["fallback"]`` names it).
FALLBACKS = ("spectra-pack", "eclipse", "spectra", "bvn", "solstice")


def _fallback(
    algorithm: str, dem: Demand, fab: Fabric, rng: RngLike, error: InfeasibleError
) -> tuple[Result, str]:
    """The first of :data:`FALLBACKS` (other than ``algorithm``) that schedules ``dem`` on ``fab``."""
    features = fabric_features(fab)
    for name in FALLBACKS:
        other = SCHEDULERS[name]
        if name == algorithm or not features <= other.supports or other.requires - features:
            continue
        try:
            return _run(other, dem, fab, rng), name
        except InfeasibleError as exc:
            if exc.proved:
                raise
    raise error


def schedule(
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    *,
    switches: int | None = None,
    delta: float | None = None,
    fabric: Fabric | None = None,
    algorithm: str = "spectra",
    rng: RngLike = None,
    options: Mapping[str, object] | None = None,
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
        A key of :data:`SCHEDULERS` (see :func:`algorithms`) or one of its former names in
        :data:`ALIASES`; ``Schedule.algorithm`` records the key.
    rng : Generator, int or None
        Seed for randomised algorithms (ignored by deterministic ones).
    options : dict, optional
        The algorithm's own options (like ``scipy.optimize.minimize``'s ``options``), declared in
        its registry entry (``SCHEDULERS[algorithm].options``): ``exact`` takes ``node_limit``
        and ``time_limit``, ``spectra-opt`` ``node_limit`` (its effort), ``baseline`` and
        ``baseline-eclipse`` ``order``. Given options are recorded in ``meta["options"]``.

    Returns
    -------
    Schedule
        A valid schedule, with its ``status`` (``"heuristic"``, or the exact solver's),
        ``dual_bound`` where the scheduler proves one, ``lower_bound`` and provenance in ``meta``.
        When links fail and ``algorithm`` finds no placement that serves everything before they
        do (without proving it impossible), the first of :data:`FALLBACKS` that does is used and
        ``meta["fallback"]`` names it.

    Raises
    ------
    InvalidInputError
        For a malformed demand, ``switches`` < 1 or not an integer, ``delta`` < 0, an unknown
        algorithm, or an unknown or bad option (the message lists the allowed ones).
    InfeasibleError
        When links fail too early: ``proved`` with the entry or port that cannot be served in
        time, or not proved when no scheduler (``algorithm`` and the fallbacks) found a placement.

    Examples
    --------
    >>> d = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]
    >>> s = schedule(d, switches=2, delta=0.5)
    >>> s.makespan, s.num_configurations, round(s.lower_bound, 6), s.status
    (2.75, 3, 2.75, 'heuristic')
    >>> schedule(d, switches=2, delta=0.5, algorithm="exact", options={"node_limit": 50}).meta["options"]
    {'node_limit': 50}
    """
    dem = as_demand(demand)
    fab = as_fabric(switches, delta, fabric)
    fab.check_ports(dem.n)
    algorithm = scheduler_name(algorithm)
    sch = SCHEDULERS[algorithm]
    opts = sch.check_options(algorithm, options)
    if sch.max_ports is not None and dem.n > sch.max_ports:
        raise InvalidInputError(
            f"algorithm {algorithm!r} supports at most {sch.max_ports} ports; `demand` has {dem.n}"
        )
    missing = fabric_features(fab) - sch.supports
    if missing:
        can = ", ".join(sorted(sch.supports)) or "identical all-stop switches without failures only"
        raise InvalidInputError(
            f"algorithm {algorithm!r} does not support {', '.join(sorted(missing))} fabrics "
            f"(it supports: {can}; these do: {', '.join(supporting(fab)) or 'none'})"
        )
    lacking = sch.requires - fabric_features(fab)
    if lacking:
        raise InvalidInputError(
            f"algorithm {algorithm!r} needs a fabric with {', '.join(sorted(lacking))} "
            "(for partial: Fabric(..., model='partial'), --reconfiguration partial)"
        )
    s, d = fab.size, max(fab.deltas)
    t0 = clock()
    fallback = None
    try:
        res = _run(sch, dem, fab, rng, opts)
    except InfeasibleError as exc:
        if exc.proved:
            raise
        # Nothing was proved: the failing links left this heuristic without a placement, and
        # another one may find one (they order and cut pieces differently).
        res, fallback = _fallback(algorithm, dem, fab, rng, exc)
    elapsed = clock() - t0
    return Schedule(
        ports=dem.n,
        delta=d,
        switches=res.switches,
        algorithm=algorithm,
        lower_bound=lower_bound(dem, fabric=fab),
        splits=res.splits,
        meta={
            "ocsched_version": __version__,
            "switches": s,
            "seed": rng if isinstance(rng, int) and not isinstance(rng, bool) else None,
            "runtime_s": elapsed,
            **({"fallback": fallback} if fallback is not None else {}),
            **({"options": opts} if opts else {}),
            **({"port_names": list(dem.port_names)} if dem.port_names is not None else {}),
        },
        status=res.status,
        dual_bound=res.dual_bound,
        fabric=None if fab.is_uniform else fab,
        eps=res.eps,
    )
