"""The ``/v1`` endpoints: one function per endpoint, from a parsed body to the JSON-ready reply.

Each runs in a compute thread (:mod:`ocsched.serve.app`), reads its fields with
:mod:`ocsched.serve.requests` and calls one library function. A schedule is validated before
it is returned; one that is not valid is a bug, reported as a 500 and never returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ocsched._checks import check_choice
from ocsched.model.schedule_json import schedule_to_dict
from ocsched.schedulers import ALIASES, SCHEDULERS
from ocsched.serve import requests as rq
from ocsched.serve import simai
from ocsched.serve.limits import Limits
from ocsched.serve.requests import RequestError

BUDGET = frozenset({"time_budget_s"})
SCHEDULE_KEYS = rq.FABRIC_KEYS | BUDGET | {"demand", "algorithm", "seed"}
VALIDATE_KEYS = rq.FABRIC_KEYS | BUDGET | {"demand", "schedule"}
BOUND_KEYS = rq.FABRIC_KEYS | BUDGET | {"demand"}
RESCHEDULE_KEYS = BUDGET | {"demand", "schedule", "failure", "placement"}
ITERATION_KEYS = rq.FABRIC_KEYS | BUDGET | {"iteration", "algorithm", "base", "seed"}


def _finite(values: dict[str, float]) -> None:
    """Refuse results that overflowed: they say nothing about the instance."""
    for k, v in values.items():
        if not math.isfinite(v):
            raise RequestError(
                422,
                "demand",
                f"the {k} overflows to {v}: the demand's entries and delays must keep times below 1.8e308",
            )


def _algorithm(
    body: Mapping[str, Any],
    default: str,
    choices: Mapping[str, Any],
    key: str = "algorithm",
    aliases: Mapping[str, str] | None = None,
) -> str:
    """The key of ``choices`` that ``body[key]`` names (a former name in ``aliases`` read as its key)."""
    name = rq.get_str(body, key, default)
    with rq.field(key):
        return check_choice((aliases or {}).get(name, name), key, choices)


def schedule(body: Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """``POST /v1/schedule``: ``demand``, the fabric, ``algorithm`` (spectra), ``seed`` (0) -> schedule."""
    from ocsched.schedulers import schedule as run
    from ocsched.validation import validate

    rq.only(body, SCHEDULE_KEYS)
    algorithm = _algorithm(body, "spectra", SCHEDULERS, aliases=ALIASES)
    dem = rq.demand(rq.required(body, "demand"), limits)
    fab = rq.fabric(body, limits)
    seed = rq.seed(body)
    with rq.field("demand"), np.errstate(over="ignore", invalid="ignore"):
        sched = run(dem, fabric=fab, algorithm=algorithm, rng=seed)
    _finite({"makespan": sched.makespan, "lower bound": sched.lower_bound or 0.0})
    report = validate(sched, dem, fabric=fab)
    if not report.ok:
        raise RuntimeError(f"internal error: the schedule found is invalid ({report.violations[0]})")
    return schedule_to_dict(sched)


def validate(body: Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """``POST /v1/validate``: ``demand``, ``schedule`` and optionally a fabric -> the report."""
    from ocsched.validation import validate as check

    rq.only(body, VALIDATE_KEYS)
    dem = rq.demand(rq.required(body, "demand"), limits)
    sched = rq.schedule(rq.required(body, "schedule"), limits)
    given = any(body.get(k) is not None for k in ("fabric", "delta"))
    with rq.field("schedule"):
        if given:
            report = check(sched, dem, fabric=rq.fabric(body, limits))
        else:
            switches = rq.get_int(body, "switches", None, minimum=1)
            report = check(sched, dem, switches=switches)
    return {
        "ok": report.ok,
        "makespan": report.makespan,
        "configurations": sched.num_configurations,
        "violations": [str(v) for v in report.violations],
    }


def bound(body: Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """``POST /v1/bound``: ``demand`` and the fabric -> ``lower_bound`` (and the bounds it dominates)."""
    from ocsched.bounds import degree_bound, line_bound, lower_bound, refined_bound

    rq.only(body, BOUND_KEYS)
    dem = rq.demand(rq.required(body, "demand"), limits)
    fab = rq.fabric(body, limits)
    with rq.field("demand"), np.errstate(over="ignore", invalid="ignore"):
        if not fab.is_uniform:
            out = {"lower_bound": lower_bound(dem, fabric=fab)}
        else:
            s, d = fab.size, max(fab.deltas)
            lb, db, rb = (f(dem, switches=s, delta=d) for f in (line_bound, degree_bound, refined_bound))
            out = {"lower_bound": max(lb, db, rb), "line_bound": lb, "degree_bound": db, "refined_bound": rb}
    _finite(out)
    return out


def reschedule(body: Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """``POST /v1/reschedule``: ``demand``, ``schedule``, ``failure`` (, ``placement``) -> new schedule."""
    from ocsched.assign import PLACEMENTS
    from ocsched.reschedule import reschedule as repair
    from ocsched.validation import validate as check

    rq.only(body, RESCHEDULE_KEYS)
    dem = rq.demand(rq.required(body, "demand"), limits)
    old = rq.schedule(rq.required(body, "schedule"), limits)
    fail = rq.failure(rq.required(body, "failure"))
    placement = _algorithm(body, "pack", PLACEMENTS, "placement")
    with rq.field("failure"):
        new = repair(old, dem, fail, placement=placement)
    report = check(new, dem)
    if not report.ok:
        raise RuntimeError(f"internal error: the rescheduled schedule is invalid ({report.violations[0]})")
    return schedule_to_dict(new)


def iteration(body: Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """``POST /v1/iteration``: ``iteration`` (``ocsched.sequence``), the fabric -> the iteration schedule."""
    from ocsched.sequence import ITERATION_SCHEDULERS, schedule_iteration, validate_iteration

    rq.only(body, ITERATION_KEYS)
    algorithm = _algorithm(body, "spectra-seq", ITERATION_SCHEDULERS)
    base = _algorithm(body, "spectra", SCHEDULERS, "base", ALIASES)
    it = rq.iteration(rq.required(body, "iteration"), limits)
    fab = rq.fabric(body, limits)
    with rq.field("iteration"), np.errstate(over="ignore", invalid="ignore"):
        sched = schedule_iteration(it, fabric=fab, algorithm=algorithm, base=base, rng=rq.seed(body))
    _finite({"makespan": sched.makespan})
    report = validate_iteration(sched, it, fabric=fab)
    if not report.ok:
        raise RuntimeError(f"internal error: the iteration schedule is invalid ({report.violations[0]})")
    return sched.to_dict()


def algorithms() -> dict[str, Any]:
    """``GET /v1/algorithms``: schedulers, their former names, iteration schedulers, SimAI's ``algName``."""
    from ocsched.schedulers import algorithms as single
    from ocsched.sequence import iteration_algorithms

    return {
        "schedulers": single(),
        "aliases": dict(ALIASES),
        "iteration": iteration_algorithms(),
        "simai": simai.algorithms(),
    }


#: The POST endpoints under ``/v1``.
ENDPOINTS: dict[str, Callable[[Mapping[str, Any], Limits], dict[str, Any]]] = {
    "schedule": schedule,
    "validate": validate,
    "bound": bound,
    "reschedule": reschedule,
    "iteration": iteration,
}
