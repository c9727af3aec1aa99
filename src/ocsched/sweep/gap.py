"""The ``gap`` experiment: heuristics against the exact optimum on sampled tiny instances."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ocsched._checks import check_choice, check_delta, check_int, check_number, check_switches
from ocsched._jit import clock
from ocsched.bounds import lower_bound
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.exact import DEFAULT_NODE_LIMIT, solve_exact
from ocsched.io import generate
from ocsched.model import Demand
from ocsched.schedulers import SCHEDULERS, schedule
from ocsched.validation import validate
from ocsched.workloads import WORKLOADS
from ocsched.workloads.random import random_instance

__all__ = ["MAX_GAP_PORTS", "GapProgress", "GapReport", "GapRow", "run_gap"]

#: Most ports of a sampled instance: the exact MILP is out of reach well before (about 6), and the
#: cap keeps one instance, and the solver's model of it, small whatever ``n`` is asked for.
MAX_GAP_PORTS = 32


@dataclass(frozen=True)
class GapRow:
    """Ratios of one (switches, delta): ``ratios["lb"]`` is exact / best bound, ``ratios[h]`` is
    h / exact and ``ratios[h + "/lb"]`` is h / best bound (``lower_bound(..., strong=True)``)."""

    switches: int | None
    delta: float | None
    optimal: int
    ratios: dict[str, list[float]]


@dataclass(frozen=True)
class GapProgress:
    """Progress of :func:`run_gap`: exact solves done of ``total``, and an ETA once one is done."""

    total: int
    done: int
    elapsed_s: float
    eta_s: float | None


@dataclass(frozen=True)
class GapReport:
    """Result of :func:`run_gap`; :meth:`text` is the table ``ocsched gap`` prints."""

    workload: str
    n: int
    samples: int
    seed: int
    time_limit: float | None
    heuristics: list[str]
    node_limit: int | None = DEFAULT_NODE_LIMIT
    rows: list[GapRow] = field(default_factory=list)

    @property
    def total(self) -> GapRow:
        """All rows pooled."""
        pooled: dict[str, list[float]] = {k: [] for k in _keys(self.heuristics)}
        for row in self.rows:
            for key, vals in row.ratios.items():
                pooled[key].extend(vals)
        return GapRow(None, None, sum(r.optimal for r in self.rows), pooled)

    def _limits(self) -> str:
        nodes = "no node limit" if self.node_limit is None else f"{self.node_limit} branch-and-bound nodes"
        return nodes if self.time_limit is None else f"{nodes}, time limit {self.time_limit:g} s"

    def text(self) -> str:
        """The table: per (s, delta) the proved optima, exact / best bound, and for every heuristic
        heuristic / exact beside heuristic / best bound (mean/max)."""

        def cell(vals: list[float]) -> str:
            return f"{np.mean(vals):.4f}/{np.max(vals):.4f}" if vals else "n/a"

        def cells(row: GapRow) -> str:
            return f"{row.optimal:>5}{cell(row.ratios['lb']):>16}" + "".join(
                f"{cell(row.ratios[h]):>{_width(h)}}{cell(row.ratios[h + '/lb']):>{_width(h)}}"
                for h in self.heuristics
            )

        lines = [
            f"workload {self.workload}, n={self.n}, {self.samples} instance(s) per row, seeds "
            f"{self.seed}..{self.seed + self.samples - 1}, {self._limits()} per solve; "
            "ratios are mean/max",
            f"{'s':>3}{'delta':>8}{'opt':>5}{'exact/LB':>16}"
            + "".join(f"{h + '/exact':>{_width(h)}}{h + '/LB':>{_width(h)}}" for h in self.heuristics),
        ]
        lines += [f"{row.switches:>3}{row.delta:>8g}{cells(row)}" for row in self.rows]
        lines.append(f"{'all':>11}{cells(self.total)}")
        lines.append(
            "\nLB = the best lower bound (ocsched.lower_bound(..., strong=True)); opt = instances solved "
            "to proved optimality (the others use the best schedule found, so their heuristic/exact ratios "
            "may be understated); heuristic/exact < 1 can only happen on those."
        )
        return "\n".join(lines) + "\n"


def _width(heuristic: str) -> int:
    return max(16, len(heuristic) + 8)


def _keys(heuristics: Sequence[str]) -> list[str]:
    return [*heuristics, *(h + "/lb" for h in heuristics), "lb"]


def _instance(workload: str, n: int, seed: int, options: Mapping[str, Any], density: float, k: int) -> Demand:
    """Sample k (seed ``seed + k``): built again for each row, so memory stays one instance."""
    if workload == "random":
        matrix = random_instance(n, density=density, rng=seed + k)
    else:
        matrix = generate(workload, rng=seed + k, normalize=True, n=n, **options).copy()
        np.fill_diagonal(matrix, 0.0)  # a port's traffic to itself is local
    return Demand.from_matrix(matrix)


def run_gap(
    workload: str,
    *,
    n: int,
    switches: Sequence[int] = (1, 2, 4),
    deltas: Sequence[float] = (0.01, 0.04, 0.1),
    samples: int = 10,
    seed: int = 0,
    time_limit: float | None = None,
    node_limit: int | None = DEFAULT_NODE_LIMIT,
    options: Mapping[str, Any] | None = None,
    density: float = 0.5,
    algorithms: Sequence[str] | None = None,
    progress: Callable[[GapProgress], None] | None = None,
) -> GapReport:
    """Sample tiny instances and compare every heuristic with the exact optimum.

    Each (switches, delta) row solves the same ``samples`` instances (seeds ``seed``, ``seed + 1``,
    ...), normalised to largest line sum 1. Solves not proved optimal within ``time_limit`` use the
    best schedule found in place of the optimum (counted in :attr:`GapRow.optimal`).

    The exact solves stop after ``node_limit`` branch-and-bound nodes (a work limit: the same
    report on any machine); ``time_limit`` (seconds) is only there if you ask for it, and then
    the report depends on the machine's speed and load.

    Parameters
    ----------
    workload : str
        ``"random"`` (uniform sparse, nonzero probability ``density``) or a workload with an ``n``
        option (sized by ``n``, configured by ``options``).
    n : int
        Ports of each instance, in 2..MAX_GAP_PORTS (the exact solver handles up to about 5).
    switches, deltas : sequences
        The grid of switch counts and delays.
    algorithms : sequence of str, optional
        Heuristics to compare (default: every registered scheduler except ``exact`` and those
        that need fabric features, such as partial reconfiguration).
    progress : callable, optional
        Called with a :class:`GapProgress` after each exact solve (and once at the start).

    Raises
    ------
    InvalidInputError
        For an unknown workload, option or algorithm, or a bad number.

    Examples
    --------
    >>> rep = run_gap("random", n=3, switches=[1], deltas=[0.05], samples=1, algorithms=["spectra"])
    >>> [r.optimal for r in rep.rows], rep.total.ratios["spectra"][0] >= 1 - 1e-6
    ([1], True)
    """
    sw_list = [check_switches(s) for s in switches]
    dl_list = [check_delta(d) for d in deltas]
    if not sw_list or not dl_list:
        raise InvalidInputError("`switches` and `deltas` must not be empty")
    samples = check_int(samples, "samples", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    if time_limit is not None:
        time_limit = check_number(time_limit, "time_limit", low=0.0, closed=False)
    if node_limit is not None:
        node_limit = check_int(node_limit, "node_limit", minimum=1)
    n = check_int(n, "n", minimum=2, maximum=MAX_GAP_PORTS)
    options = dict(options or {})
    if workload == "random":
        if options:
            raise InvalidInputError("workload 'random' takes no options; use `density`")
        density = check_number(density, "density", high=1.0, low=0.0, closed=False)
    else:
        check_choice(workload, "workload", ["random", *sorted(WORKLOADS)])
        defaults = WORKLOADS[workload].defaults()
        if "n" not in defaults:
            raise InvalidInputError(
                f"workload {workload!r} has no `n` option, so `n` cannot size it; its options are "
                f"{', '.join(defaults) or 'none'}"
            )
    # Every scheduler that runs on the uniform all-stop fabric of these instances, the exact one aside.
    heuristics = [a for a, sch in SCHEDULERS.items() if a != "exact" and not sch.requires]
    if algorithms is not None:
        for a in algorithms:
            check_choice(a, "algorithms", heuristics)
        heuristics = list(algorithms)
    _instance(workload, n, seed, options, density, 0)  # bad options fail now, before any solve
    report = GapReport(workload, n, samples, seed, time_limit, heuristics, node_limit)
    total = len(sw_list) * len(dl_list) * samples
    done = 0
    t0 = clock()

    def tick() -> None:
        if progress is not None:
            elapsed = clock() - t0
            eta = elapsed / done * (total - done) if done else None
            progress(GapProgress(total, done, elapsed, eta))

    tick()
    for s in sw_list:
        for d in dl_list:
            ratios: dict[str, list[float]] = {k: [] for k in _keys(heuristics)}
            n_opt = 0
            for k in range(samples):
                dem = _instance(workload, n, seed, options, density, k)
                done += 1
                if dem.nnz == 0:
                    tick()
                    continue
                res = solve_exact(dem, switches=s, delta=d, time_limit=time_limit, node_limit=node_limit)
                if not validate(res.schedule, dem).ok:  # pragma: no cover - solve_exact guarantees it
                    raise OcschedError("solve_exact returned an invalid schedule")
                n_opt += res.optimal
                lb = lower_bound(dem, switches=s, delta=d, strong=True)
                if lb > 0:
                    ratios["lb"].append(res.makespan / lb)
                for h in heuristics:
                    sched = schedule(dem, switches=s, delta=d, algorithm=h, rng=seed)
                    ratios[h].append(sched.makespan / res.makespan)
                    if lb > 0:
                        ratios[h + "/lb"].append(sched.makespan / lb)
                tick()
            report.rows.append(GapRow(s, d, n_opt, ratios))
    return report
