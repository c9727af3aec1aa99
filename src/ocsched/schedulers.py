"""Whole schedulers by name, and :func:`schedule`, the one entry point.

Every scheduler is an entry of :data:`SCHEDULERS`, a literal dict complete on import. Most are a
*pipeline*: a decomposer from :data:`ocsched.decompose.DECOMPOSERS` followed by a placement from
:data:`ocsched.assign.PLACEMENTS`. The others (the split-based baselines, the exact solver) are
functions. Either way a scheduler returns a :class:`Result`, which :func:`schedule` wraps in a
:class:`~ocsched.model.Schedule` with its status, dual bound, lower bound and provenance.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_delta, check_switches
from ocsched._jit import clock
from ocsched._version import __version__
from ocsched.assign import PLACEMENTS, bff_timeline, place, place_on_fabric, timeline
from ocsched.assign.ports import schedule_on_ports
from ocsched.baseline import capacity_split_schedule, single_switch, split_schedule
from ocsched.bounds import lower_bound
from ocsched.decompose import decompose
from ocsched.errors import InfeasibleError, InvalidInputError
from ocsched.exact import DEFAULT_NODE_LIMIT, MAX_EXACT_PORTS, near_optimal, solve_exact
from ocsched.exact.hybrid import solve_hybrid_exact
from ocsched.exact.near import NEAR_OPTIMAL_NODES
from ocsched.exact.ports import MAX_EXACT_ENDPOINTS, solve_ports_exact
from ocsched.fabric import Fabric
from ocsched.hybrid import HybridResult, mixnet_greedy, solstice_hybrid, spectra_hybrid
from ocsched.model import Configuration, Demand, Schedule, as_demand

__all__ = [
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
    eps : Demand or None
        What goes on the fabric's packet switch (hybrid schedulers only).
    """

    switches: Switches
    splits: int = 0
    status: str = "heuristic"
    dual_bound: float | None = None
    eps: Demand | None = None


#: ``run(demand, fabric, rng, **options)``: the options are the scheduler's declared ones, checked.
SchedulerFn = Callable[..., Result]


@dataclass(frozen=True)
class Option:
    """A per-algorithm option of :func:`schedule` (``options={...}``, the CLI's ``--option KEY=VALUE``).

    Attributes
    ----------
    default : object
        The value used when the option is not given.
    kind : {"int", "float", "choice"}
        What the value is; text (from the command line) is converted.
    description : str
        One line for listings and errors.
    minimum : float or None
        The smallest accepted value (int and float options).
    choices : tuple of str
        The accepted values of a ``"choice"`` option.
    optional : bool
        ``None`` is accepted (and means the option is off).
    """

    default: object
    kind: Literal["int", "float", "choice"]
    description: str
    minimum: float | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False
    #: The value must exceed ``minimum`` (a time limit of 0 is no time at all).
    above: bool = False

    def facts(self) -> dict[str, object]:
        """The option as plain data (``ocsched algorithms --json``; ``type`` as in ``workloads --json``).

        >>> Option(5, "int", "nodes", 1).facts()
        {'type': 'int', 'default': 5, 'description': 'nodes', 'minimum': 1}
        """
        out: dict[str, object] = {"type": self.kind, "default": self.default, "description": self.description}
        if self.minimum is not None:
            out["exclusive_minimum" if self.above else "minimum"] = self.minimum
        if self.choices:
            out["choices"] = list(self.choices)
        return out

    def summary(self) -> str:
        """One line: the accepted values and the default.

        >>> Option("none", "choice", "order", choices=("none", "size")).summary()
        'one of none, size; default none'
        >>> Option(None, "float", "seconds", 0.0, optional=True, above=True).summary()
        'number > 0 or none; default none'
        """
        if self.kind == "choice":
            what = f"one of {', '.join(self.choices)}"
        else:
            what = "integer" if self.kind == "int" else "number"
            if self.minimum is not None:
                what += f" {'>' if self.above else '>='} {self.minimum:g}"
        if self.optional:
            what += " or none"
        default = "none" if self.default is None else self.default
        return f"{what}; default {default}"

    def check(self, value: object, name: str) -> object:
        """Return ``value`` converted and checked; raise :class:`InvalidInputError` naming ``name``."""
        if value is None or (self.optional and isinstance(value, str) and value.lower() == "none"):
            if self.optional:
                return None
            raise InvalidInputError(f"option `{name}` must be given a value; got None")
        if self.kind == "choice":
            if value not in self.choices:
                raise InvalidInputError(
                    f"option `{name}` must be one of {', '.join(self.choices)}; got {value!r}"
                )
            return value
        out: float | int
        try:
            if isinstance(value, bool):
                raise TypeError
            if self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise TypeError
                out = (
                    int(value)
                    if isinstance(value, int | float | np.integer | np.floating)
                    else int(str(value))
                )
            else:
                out = (
                    float(value)
                    if isinstance(value, int | float | np.integer | np.floating)
                    else float(str(value))
                )
        except (TypeError, ValueError):
            what = "an integer" if self.kind == "int" else "a number"
            raise InvalidInputError(f"option `{name}` must be {what}; got {value!r}") from None
        low_ok = self.minimum is None or (out > self.minimum if self.above else out >= self.minimum)
        if not np.isfinite(out) or not low_ok:
            sign = ">" if self.above else ">="
            low = f" {sign} {self.minimum:g}" if self.minimum is not None else ""
            raise InvalidInputError(f"option `{name}` must be a finite number{low}; got {value!r}")
        return out


#: Fabric features a scheduler may support beyond identical all-stop switches that never fail.
FEATURES = ("heterogeneous", "failures", "partial", "bidirectional", "ports", "eps")
#: Bidirectional circuits and several ports per endpoint per switch: a configuration there is not
#: a matching, so only the schedulers built for them (``spectra-ports``, ``exact-ports``) run.
PORT_FEATURES = frozenset({"bidirectional", "ports"})


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
    requires : frozenset of str
        Fabric features it cannot do without (``spectra-bff`` needs ``"partial"``).
    options : mapping of str to Option
        The keyword options ``run`` accepts (:func:`schedule`'s ``options=``), with defaults.
    """

    run: SchedulerFn
    description: str
    max_ports: int | None = None
    supports: frozenset[str] = frozenset()
    requires: frozenset[str] = frozenset()
    options: Mapping[str, Option] = field(default_factory=dict)

    def check_options(self, name: str, options: Mapping[str, object] | None) -> dict[str, object]:
        """Return ``options`` checked against :attr:`options` (unknown keys list the allowed ones)."""
        if options is None:
            return {}
        if not isinstance(options, Mapping):
            raise InvalidInputError(
                f"`options` must be a dict of option values; got {type(options).__name__}"
            )
        unknown = [k for k in options if k not in self.options]
        if unknown:
            allowed = f"allowed options: {', '.join(self.options)}" if self.options else "it takes none"
            raise InvalidInputError(f"unknown option {unknown[0]!r} for algorithm {name!r}; {allowed}")
        return {k: self.options[k].check(v, k) for k, v in options.items()}


def pipeline(decomposer: str, placement: str) -> SchedulerFn:
    """Return a scheduler that decomposes with ``decomposer`` and places with ``placement``."""

    def run(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
        if fabric.is_uniform:
            delta = fabric.deltas[0]
            dec = decompose(demand, method=decomposer, delta=delta)
            return Result(*place(dec, switches=fabric.size, delta=delta, method=placement))
        # The decomposers see one delay: the rate-weighted mean, what a unit of work pays on average.
        mean = float(np.average(fabric.deltas, weights=fabric.rates))
        dec = decompose(demand, method=decomposer, delta=mean)
        return Result(*place_on_fabric(dec, fabric, method=placement, demand=demand))

    return run


#: Every matching fabric feature: pipelines place by finish time on any fabric (``place_on_fabric``);
#: a packet switch only the hybrid schedulers use.
ALL_FEATURES = frozenset(FEATURES) - PORT_FEATURES - {"eps"}


def _split(method: Literal["spectra", "eclipse"]) -> SchedulerFn:
    def run(
        demand: Demand, fabric: Fabric, rng: RngLike, order: Literal["index", "random"] = "index"
    ) -> Result:
        if fabric.is_uniform:
            sched = split_schedule(
                demand, switches=fabric.size, delta=fabric.deltas[0], rng=rng, method=method, order=order
            )
            return Result(*sched)
        if order != "index":
            raise InvalidInputError(
                f"option `order` = {order!r} applies to identical switches only (the capacity split has no "
                "cycle search)"
            )
        return Result(*capacity_split_schedule(demand, fabric, rng=rng, method=method))

    return run


def _bff(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """Spectra (partial reconfig), after the Spectra authors' ``alg2_BFF``.

    Spectra's permutations are placed by greedy + equalization (as ``spectra``); each switch then
    serves the sum of its pieces circuit by circuit with :func:`~ocsched.assign.bff_timeline`.

    Delay model assumed: this package's partial model (:mod:`ocsched.timing`): a port whose
    circuit changes is dark for its switch's delta before the new circuit (input *and* output),
    every port starts dark (the first circuits at delta), and circuits never change mid-entry.
    The authors' code charges the delay on the input port only (an output is reused the moment
    its circuit ends), starts at time 0 without a delay, stops once the residual's Frobenius
    norm is below epsilon (leaving demand unserved), and places with one delta for all switches;
    here every entry is served and each switch's own delta and rate are used.
    """
    deltas, rates = np.array(fabric.deltas), np.array(fabric.rates)
    mean = float(np.average(deltas, weights=rates))
    dec = decompose(demand, method="spectra", delta=mean)
    assignment, splits = PLACEMENTS["equalize"].func(dec.weights, fabric.size, mean)
    out = []
    for b, sw in enumerate(assignment):
        sub = np.zeros((demand.n, demand.n))
        for l, w in sw:
            (i,) = np.nonzero(dec.perms[l] >= 0)
            sub[i, dec.perms[l][i]] += w / rates[b]
        confs = bff_timeline(sub, float(deltas[b]))
        if confs is None:  # entries below the times' resolution: one configuration per piece
            confs = timeline([[(l, w / rates[b]) for l, w in sw]], dec.perms, float(deltas[b]))[0]
        out.append(confs)
    return Result(tuple(out), splits)


def _naive(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """Spectra's decomposition of D/s, the same single-switch schedule on every switch."""
    one = single_switch(decompose(demand.scaled(1.0 / fabric.size)), fabric.deltas[0])
    return Result((one,) * fabric.size)


_PACK = pipeline("spectra", "pack")


def _opt(demand: Demand, fabric: Fabric, rng: RngLike, node_limit: int = NEAR_OPTIMAL_NODES) -> Result:
    """spectra-opt: spectra-pack improved by LP re-fits and piece removal, then a short MILP on tiny models.

    Runs on every fabric feature. On identical always-up all-stop switches,
    :func:`ocsched.improve.improve_schedule` (better permutations, balanced placement, LP
    re-fit); on any other fabric, :func:`ocsched.improve.improve_on_fabric` from spectra-pack's
    schedule on that fabric, whose LP re-fit keeps each configuration on its switch, inside its
    phase between down windows and ending by its ports' link failures, with each switch's own
    delay and rate. Under the partial model the re-fits are all-stop schedules (valid there too)
    and spectra-pack's partial schedule is kept when shorter. On tiny models
    (:func:`ocsched.exact.near_optimal`) the exact MILP then runs for a fixed number of nodes. Never
    worse than spectra-pack on the same fabric; no wall-clock limit anywhere.
    """
    if fabric.is_uniform:
        return Result(*near_optimal(demand, fabric=fabric, node_limit=node_limit))
    start = _PACK(demand, fabric, rng)
    return Result(*near_optimal(demand, fabric=fabric, start=start.switches, node_limit=node_limit))


def _exact(
    demand: Demand,
    fabric: Fabric,
    rng: RngLike,
    node_limit: int = DEFAULT_NODE_LIMIT,
    time_limit: float | None = None,
) -> Result:
    """exact: the matching MILP of :func:`ocsched.exact.solve_exact`, from spectra-opt's schedule.

    Runs on every fabric feature (the model's columns follow each switch's delay and rate, its
    phases between down windows and its links' failure times). Under the partial model the
    all-stop optimum is returned with status ``"heuristic"``: kept circuits make the order of
    configurations matter, so a partial schedule can beat it and nothing is proved there. Stops
    after ``node_limit`` nodes (status ``"node_limit"``), on the clock only when ``time_limit``
    (seconds) is given (the result may then depend on the machine); never worse than spectra-opt.
    """
    opt = _opt(demand, fabric, rng)
    res = solve_exact(
        demand, fabric=fabric, node_limit=node_limit, time_limit=time_limit, incumbents=[opt.switches]
    )
    status, dual = res.status, res.dual_bound
    if status in ("infeasible", "error"):
        status = "heuristic"  # a solver failure: the schedule is the best incumbent, proved nothing more
    if status == "heuristic" and fabric.model == "partial":
        log.info(
            "exact: under the partial model the all-stop optimum is returned unproved (status heuristic)"
        )
    elif not res.optimal:
        log.warning(
            "exact: %s after %d nodes; returning the best schedule found (makespan %.6g, gap %.2g%%)",
            res.status,
            res.nodes,
            res.makespan,
            100 * res.gap,
        )
    return Result(res.schedule.switches, 0, status, dual)


def _ports(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """spectra-ports: b-matchings (Euler-oriented Spectra, grouped) packed on identical switches.

    See :func:`ocsched.assign.ports.schedule_on_ports`; the construction kept is logged.
    """
    confs, splits, how = schedule_on_ports(demand, fabric)
    log.info("spectra-ports: kept the %r construction", how)
    return Result(confs, splits)


_ORDER = Option("index", "choice", "the balanced split's cycle-search order", choices=("index", "random"))
_OPT_NODES = Option(
    NEAR_OPTIMAL_NODES, "int", "effort: branch-and-bound nodes of the MILP run on tiny supports", 1
)


def _hybrid(fn: Callable[[Demand, Fabric], HybridResult], plain: SchedulerFn) -> SchedulerFn:
    """A hybrid scheduler: ``fn`` with a packet switch, ``plain`` (its circuits-only form) without."""

    def run(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
        if not fabric.eps_rate > 0:
            return plain(demand, fabric, rng)
        res = fn(demand, fabric)
        return Result(res.switches, res.splits, eps=res.eps)

    return run


def _exact_hybrid(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """exact-hybrid: :func:`ocsched.exact.hybrid.solve_hybrid_exact`, or spectra-hybrid's schedule if shorter.

    Without a packet switch (rho = 0), the ``exact`` scheduler.
    """
    if not fabric.eps_rate > 0:
        return _exact(demand, fabric, rng)
    heur = spectra_hybrid(demand, fabric)
    ex = solve_hybrid_exact(demand, fabric, node_limit=DEFAULT_NODE_LIMIT)
    if ex.makespan <= heur.makespan:
        return Result(ex.switches, 0, ex.status, ex.dual_bound, eps=ex.eps)
    # The MILP's schedule, rebuilt from its rounded solution, came out longer: keep the heuristic,
    # with the MILP's proved bound; shorter than a proved optimum's rebuild, it is optimal as well
    # (to HiGHS's tolerances, made relative by the scaling).
    status = "optimal" if ex.status == "optimal" else "heuristic"
    return Result(heur.switches, heur.splits, status, min(ex.dual_bound, heur.makespan), eps=heur.eps)


#: Branch-and-bound nodes of exact-ports (work, not time: the same result on any machine).
EXACT_PORTS_NODES = 100


def _exact_ports(demand: Demand, fabric: Fabric, rng: RngLike) -> Result:
    """exact-ports: the b-matching MILP of :func:`ocsched.exact.ports.solve_ports_exact`.

    Stops after :data:`EXACT_PORTS_NODES` nodes (its LPs are large: one column per maximal
    b-matching and switch); spectra-ports' schedule is
    returned instead where it ends earlier (never worse than it), with the MILP's status and
    dual bound.
    """
    heuristic = _ports(demand, fabric, rng)
    end = max((c.end for sw in heuristic.switches for c in sw), default=0.0)
    res = solve_ports_exact(demand, fabric, node_limit=EXACT_PORTS_NODES, upper=end)
    switches = heuristic.switches if end < res.makespan else res.switches
    return Result(switches, 0, res.status, res.dual_bound)


SCHEDULERS: dict[str, Scheduler] = {
    "spectra": Scheduler(
        pipeline("spectra", "equalize"),
        "Spectra: Delta permutations, LP-refit weights, greedy placement, equalization",
        supports=ALL_FEATURES,
    ),
    "spectra-noeq": Scheduler(
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
    "spectra-bff": Scheduler(
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
        "k/2 permutations per configuration, LP-refit, packed; never worse than the directed model",
        supports=PORT_FEATURES,
    ),
    "exact-ports": Scheduler(
        _exact_ports,
        f"Exact MILP optimum on bidirectional / multi-port switches for tiny instances "
        f"(n <= {MAX_EXACT_ENDPOINTS}; maximal b-matchings per switch, {EXACT_PORTS_NODES} nodes)",
        max_ports=MAX_EXACT_ENDPOINTS,
        supports=PORT_FEATURES,
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
    if any(x.bidirectional for x in fabric.switches):
        out.add("bidirectional")
    if any(x.ports_per_endpoint > 1 for x in fabric.switches):
        out.add("ports")
    if fabric.eps_rate > 0:
        out.add("eps")
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
        A key of :data:`SCHEDULERS` (see :func:`algorithms`).
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
    if algorithm not in SCHEDULERS:
        raise InvalidInputError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(SCHEDULERS)}")
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
            f"(it supports: {can})"
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
