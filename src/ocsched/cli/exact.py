"""The ``gap`` command: heuristics against the exact optimum on sampled tiny instances."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ocsched.cli._app import app, cli_errors, parse_delta, parse_switches
from ocsched.errors import InvalidInputError


def _split_list(text: str, parse: Any) -> list[Any]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise InvalidInputError(f"expected a comma-separated list; got {text!r}")
    return [parse(t) for t in items]


def _parse_option(text: str, defaults: dict[str, Any], workload: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise InvalidInputError(f"`--option` must look like KEY=VALUE; got {text!r}")
    if key not in defaults:
        raise InvalidInputError(
            f"workload {workload!r} has no option {key!r}; its options are {', '.join(defaults) or 'none'}"
        )
    kind = type(defaults[key])
    try:
        if kind is bool:
            return key, value.lower() in ("1", "true", "yes", "on")
        if kind is int:
            return key, int(value)
        if kind is float:
            return key, float(value)
    except ValueError:
        raise InvalidInputError(f"`--option {key}` expects a {kind.__name__}; got {value!r}") from None
    return key, value


@app.command("gap")
@cli_errors
def gap_cmd(
    workload: Annotated[
        str,
        typer.Option(
            "--workload", "-w", help="Workload name (`ocsched workloads`), or 'random' (uniform sparse)."
        ),
    ],
    n: Annotated[int, typer.Option("--n", help="Ports of each sampled instance (tiny: <= 5 or so).")],
    switches: Annotated[
        str, typer.Option("--switches", "-s", help="Comma-separated switch counts.")
    ] = "1,2,4",
    delta: Annotated[
        str, typer.Option("--delta", "-d", help="Comma-separated delays (line sums are 1).")
    ] = "0.01,0.04,0.1",
    samples: Annotated[int, typer.Option("--samples", "-k", help="Instances per (switches, delta).")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the first instance.")] = 0,
    time_limit: Annotated[float, typer.Option("--time-limit", "-t", help="Seconds per exact solve.")] = 60.0,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="Workload option KEY=VALUE (repeatable).")
    ] = None,
    density: Annotated[float, typer.Option("--density", help="Nonzero probability for 'random'.")] = 0.5,
    algorithm: Annotated[
        str | None,
        typer.Option(
            "--algorithms", "-a", help="Comma-separated heuristics to compare (default: all registered)."
        ),
    ] = None,
) -> None:
    """Sample tiny instances; print heuristic / exact and exact / lower bound (mean and max).

    Each (switches, delta) row solves the same --samples instances (seeds seed, seed + 1, ...).
    The opt column counts the solves proved optimal within --time-limit; for the others the
    best schedule found stands in for the optimum.
    """
    import numpy as np

    from ocsched.exact import solve_exact
    from ocsched.model import Demand
    from ocsched.schedulers import SCHEDULERS as ALGORITHMS
    from ocsched.schedulers import algorithms, schedule
    from ocsched.validate import validate
    from ocsched.workloads import WORKLOADS, generate, workloads
    from ocsched.workloads.random import random_instance

    sw_list = _split_list(switches, parse_switches)
    dl_list = _split_list(delta, parse_delta)
    if samples < 1:
        raise InvalidInputError(f"`--samples` must be >= 1; got {samples}")
    if not time_limit > 0:
        raise InvalidInputError(f"`--time-limit` must be > 0; got {time_limit}")
    if n < 2:
        raise InvalidInputError(f"`--n` must be >= 2; got {n}")
    algorithms()  # loads the peer modules, so every registered heuristic is compared
    workloads()
    options: dict[str, Any] = {}
    if workload == "random":
        if option:
            raise InvalidInputError("workload 'random' takes no `--option`; use `--density`")
    else:
        if workload not in WORKLOADS:
            raise InvalidInputError(
                f"unknown workload {workload!r}; choose one of random, {', '.join(sorted(WORKLOADS))}"
            )
        defaults = WORKLOADS[workload].options()
        if "n" not in defaults:
            raise InvalidInputError(
                f"workload {workload!r} has no `n` option, so `--n` cannot size it; its options are "
                f"{', '.join(defaults) or 'none'}"
            )
        options = dict(_parse_option(o, defaults, workload) for o in option or [])
    heuristics = [a for a in ALGORITHMS if a != "exact"]
    if algorithm is not None:
        chosen = _split_list(algorithm, str)
        unknown = [a for a in chosen if a not in heuristics]
        if unknown:
            raise InvalidInputError(
                f"unknown algorithm {unknown[0]!r} for `--algorithms`; choose from {', '.join(heuristics)}"
            )
        heuristics = chosen

    def instance(k: int) -> Demand:
        if workload == "random":
            matrix = random_instance(n, density=density, rng=seed + k)
        else:
            matrix = generate(workload, seed=seed + k, normalized=True, n=n, **options).copy()
            np.fill_diagonal(matrix, 0.0)  # a port's traffic to itself is local
        return Demand.from_matrix(matrix)

    demands = [instance(k) for k in range(samples)]
    typer.echo(
        f"workload {workload}, n={n}, {samples} instance(s) per row, seeds {seed}..{seed + samples - 1}, "
        f"time limit {time_limit:g} s per solve; ratios are mean/max"
    )
    head = f"{'s':>3}{'delta':>8}{'opt':>5}{'exact/LB':>16}" + "".join(f"{h:>18}" for h in heuristics)
    typer.echo(head)
    all_rows: dict[str, list[float]] = {h: [] for h in [*heuristics, "lb"]}

    def cell(vals: list[float]) -> str:
        return f"{np.mean(vals):.4f}/{np.max(vals):.4f}" if vals else "n/a"

    total_opt = 0
    for s in sw_list:
        for d in dl_list:
            ratios: dict[str, list[float]] = {h: [] for h in [*heuristics, "lb"]}
            n_opt = 0
            for dem in demands:
                if dem.nnz == 0:
                    continue
                res = solve_exact(dem, switches=s, delta=d, time_limit=time_limit)
                if not validate(res.schedule, dem).ok:  # pragma: no cover - solve_exact guarantees it
                    raise RuntimeError("solve_exact returned an invalid schedule")
                n_opt += res.optimal
                lb = res.schedule.lower_bound or 0.0
                if lb > 0:
                    ratios["lb"].append(res.makespan / lb)
                for h in heuristics:
                    sched = schedule(dem, switches=s, delta=d, algorithm=h, rng=seed)
                    ratios[h].append(sched.makespan / res.makespan)
            total_opt += n_opt
            for key, vals in ratios.items():
                all_rows[key].extend(vals)
            typer.echo(
                f"{s:>3}{d:>8g}{n_opt:>5}{cell(ratios['lb']):>16}"
                + "".join(f"{cell(ratios[h]):>18}" for h in heuristics)
            )
    typer.echo(
        f"{'all':>11}{total_opt:>5}{cell(all_rows['lb']):>16}"
        + "".join(f"{cell(all_rows[h]):>18}" for h in heuristics)
    )
    typer.echo(
        "\nopt = instances solved to proved optimality (the others use the best schedule found, so their "
        "heuristic/exact ratios may be understated); heuristic/exact < 1 can only happen on those."
    )
