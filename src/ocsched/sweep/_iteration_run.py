"""One iteration run of a sweep: schedule, validate, and its metrics beside ``independent``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ocsched._jit import clock
from ocsched.fabric import Fabric
from ocsched.iteration import Iteration, IterationSchedule
from ocsched.sequence import iteration_row, schedule_iteration, validate_iteration
from ocsched.sweep.config import iteration_algorithm
from ocsched.sweep.results import RunSpec, derive_seeds, result_row


def _iteration_run(
    spec: RunSpec,
    types: Mapping[str, str],
    it: Iteration,
    independent: dict[tuple[Any, ...], IterationSchedule],
) -> dict[str, Any]:
    """One iteration run: schedule, validate, and its metrics beside ``independent`` on the same base."""
    base = {"ports": it.n, "nonzeros": sum(p.demand.nnz for p in it.phases), "phases": len(it)}
    alg, base_alg = iteration_algorithm(spec.algorithm)
    rng = derive_seeds(spec.seed)[1]
    # A grid setting is identical all-stop switches; a `fabrics` setting carries its fabric.
    where: dict[str, Any] = (
        {"switches": spec.switches, "delta": spec.delta}
        if spec.fabric_spec is None
        else {"fabric": Fabric.from_dict(json.loads(spec.fabric_spec))}
    )
    try:
        t0 = clock()
        sched = schedule_iteration(it, algorithm=alg, base=base_alg, rng=rng, **where)
        wall = clock() - t0
        report = validate_iteration(sched, it, **where)
        ref_key = (spec.instance, spec.switches, spec.delta, spec.fabric_spec, base_alg)
        if alg == "independent":
            independent[ref_key] = sched
        elif ref_key not in independent:
            ind = "independent"
            independent[ref_key] = schedule_iteration(it, algorithm=ind, base=base_alg, rng=rng, **where)
    except Exception as exc:
        return result_row(spec, types, **base, ok=False, error=f"{type(exc).__name__}: {exc}")
    if not report.ok:
        shown = "; ".join(str(v) for v in report.violations[:3])
        error = f"invalid schedule ({len(report.violations)} violations): {shown}"
        return result_row(spec, types, **base, wall_time_s=wall, ok=False, error=error)
    m = iteration_row(sched, independent=independent[ref_key])
    return result_row(
        spec,
        types,
        **base,
        makespan=sched.makespan,
        lower_bound=sched.lower_bound,
        best_bound=sched.lower_bound,
        status="heuristic",
        configurations=sched.num_configurations,
        wall_time_s=wall,
        ok=True,
        **{
            k: m[k] for k in ("exposed", "delay_hidden_pct", "reused_pct", "ratio_independent", "ratio_bound")
        },
    )
