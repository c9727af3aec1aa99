"""The ``gap`` command: heuristics against the exact optimum on sampled tiny instances."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ocsched.cli._app import (
    app,
    cli_errors,
    float_option,
    int_option,
    parse_delta,
    parse_switches,
)
from ocsched.cli._output import JsonOpt, emit
from ocsched.cli._progress import ProgressLine
from ocsched.errors import InvalidInputError
from ocsched.exact import DEFAULT_NODE_LIMIT
from ocsched.sweep.gap import MAX_GAP_PORTS


def _split_list(text: str, parse: Any, name: str) -> list[Any]:
    # ASCII blanks only: str.strip() would also take "\u00a0" and "\u2003" away (then read as "1").
    items = [t for t in text.split(",") if t.strip(" \t")]
    if not items:
        raise InvalidInputError(f"`{name}` expects a comma-separated list; got {text!r}")
    return [parse(t) for t in items]


GAP_EXAMPLES = """\
ocsched gap --workload random --n 4 --samples 5
ocsched gap -w moe --n 4 -s 2 -d 0.04 --option gpus=4 --json
"""


@app.command("gap", epilog=GAP_EXAMPLES)
@cli_errors
def gap_cmd(
    workload: Annotated[
        str,
        typer.Option(
            "--workload", "-w", help="Workload name (`ocsched workloads`), or 'random' (uniform sparse)."
        ),
    ],
    n: Annotated[
        int,
        typer.Option(
            "--n",
            parser=int_option("--n", minimum=2, maximum=MAX_GAP_PORTS),
            metavar="INTEGER",
            help=f"Ports of each sampled instance, 2..{MAX_GAP_PORTS} (tiny: <= 5 or so).",
        ),
    ],
    switches: Annotated[
        str, typer.Option("--switches", "-s", help="Comma-separated switch counts.")
    ] = "1,2,4",
    delta: Annotated[
        str, typer.Option("--delta", "-d", help="Comma-separated delays (line sums are 1).")
    ] = "0.01,0.04,0.1",
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            "-k",
            parser=int_option("--samples", minimum=1),
            metavar="INTEGER",
            help="Instances per (switches, delta).",
        ),
    ] = 10,
    seed: Annotated[
        int,
        typer.Option(
            "--seed",
            parser=int_option("--seed", minimum=0),
            metavar="INTEGER",
            help="Seed of the first instance.",
        ),
    ] = 0,
    node_limit: Annotated[
        int,
        typer.Option(
            "--node-limit",
            parser=int_option("--node-limit", minimum=1),
            metavar="INTEGER",
            help="Branch-and-bound nodes per exact solve (a work limit: the same table on any machine).",
        ),
    ] = DEFAULT_NODE_LIMIT,
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            "-t",
            parser=float_option("--time-limit", low=0.0, closed=False),
            metavar="SECONDS",
            help="Also stop each solve after this many seconds (> 0; the table then depends on the machine).",
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", metavar="KEY=VALUE", help="Workload option (repeatable)."),
    ] = None,
    density: Annotated[
        float,
        typer.Option(
            "--density",
            parser=float_option("--density", low=0.0, high=1.0),
            metavar="FLOAT",
            help="Nonzero probability for 'random', in (0, 1].",
        ),
    ] = 0.5,
    algorithm: Annotated[
        str | None,
        typer.Option(
            "--algorithms", "-a", help="Comma-separated heuristics to compare (default: all registered)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Sample tiny instances; print heuristic / exact and exact / lower bound (mean and max).

    Each (switches, delta) row solves the same --samples instances (seeds seed, seed + 1, ...).
    The opt column counts the solves proved optimal within --node-limit; for the others the
    best schedule found stands in for the optimum.
    """
    from ocsched.sweep.gap import run_gap
    from ocsched.workloads import workload_options
    from ocsched.workloads.options import parse_options

    sw_list = _split_list(switches, parse_switches, "--switches")
    dl_list = _split_list(delta, parse_delta, "--delta")
    options: dict[str, Any] = {}
    if workload == "random":
        if option:
            raise InvalidInputError("workload 'random' takes no `--option`; use `--density`")
    elif option:
        options = parse_options(workload, workload_options(workload), option)
    algs = None if algorithm is None else _split_list(algorithm, str, "--algorithms")
    bar = ProgressLine("gap: exact solves")
    with bar:
        result = run_gap(
            workload,
            n=n,
            switches=sw_list,
            deltas=dl_list,
            samples=samples,
            seed=seed,
            time_limit=time_limit,
            node_limit=node_limit,
            options=options,
            density=density,
            algorithms=algs,
            progress=lambda p: bar.update(p.done, p.total, p.eta_s),
        )
    if not as_json:
        typer.echo(result.text(), nl=False)
        return

    def stats(vals: list[float]) -> dict[str, float] | None:
        return {"mean": sum(vals) / len(vals), "max": max(vals)} if vals else None

    def row(r: Any) -> dict[str, Any]:
        return {
            "switches": r.switches,
            "delta": r.delta,
            "optimal": r.optimal,
            "exact_over_lb": stats(r.ratios["lb"]),
            "heuristics": {
                h: {"over_exact": stats(r.ratios[h]), "over_lb": stats(r.ratios[h + "/lb"])}
                for h in result.heuristics
            },
        }

    emit(
        {
            "workload": result.workload,
            "n": result.n,
            "samples": result.samples,
            "seed": result.seed,
            "node_limit": result.node_limit,
            "time_limit_s": result.time_limit,
            "heuristics": list(result.heuristics),
            "rows": [row(r) for r in result.rows],
            "all": row(result.total),
        },
        as_json=True,
    )
