"""Core commands: schedule, validate, bound, algorithms, demo."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from ocsched.cli._app import app, cli_errors, fail, parse_delta, parse_switches

DemandArg = Annotated[
    Path, typer.Argument(help="Demand matrix file: .npy, .npz, .csv or .json.", show_default=False)
]
SwitchesOpt = Annotated[
    str, typer.Option("--switches", "-s", help="Number of parallel OCSes (integer >= 1).")
]
DeltaOpt = Annotated[
    str, typer.Option("--delta", "-d", help="Reconfiguration delay, in the demand's time unit.")
]


def _summary(rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        typer.echo(f"{k:<{width}}  {v}")


@app.command("schedule")
@cli_errors
def schedule_cmd(
    demand: DemandArg,
    switches: SwitchesOpt,
    delta: DeltaOpt,
    algorithm: Annotated[
        str, typer.Option("--algorithm", "-a", help="Scheduler (see `ocsched algorithms`).")
    ] = "spectra",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the schedule as JSON here.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for randomised algorithms.")] = None,
) -> None:
    """Schedule a demand matrix and print makespan, lower bound and statistics."""
    from ocsched import io
    from ocsched.schedulers import schedule

    s, d = parse_switches(switches), parse_delta(delta)
    if out is not None:
        io.check_writable(out, force=force, name="--out")
    dem = io.read_demand(demand)
    t0 = time.perf_counter()
    sched = schedule(dem, switches=s, delta=d, algorithm=algorithm, rng=seed)
    elapsed = time.perf_counter() - t0
    lb = sched.lower_bound or 0.0
    rows = [
        ("algorithm", sched.algorithm),
        ("ports", str(sched.ports)),
        ("switches", str(s)),
        ("delta", f"{d:g}"),
        ("makespan", f"{sched.makespan:.6g}"),
        ("lower bound", f"{lb:.6g}"),
        ("ratio", f"{sched.makespan / lb:.4f}" if lb > 0 else "n/a"),
        ("configurations", str(sched.num_configurations)),
        ("splits", str(sched.splits)),
        ("time", f"{elapsed:.3f} s"),
    ]
    if out is not None:
        io.write_schedule(sched, out, force=force)
        rows.append(("written to", str(out)))
    _summary(rows)


@app.command("validate")
@cli_errors
def validate_cmd(
    demand: DemandArg,
    schedule_file: Annotated[
        Path, typer.Argument(metavar="SCHEDULE", help="Schedule JSON file.", show_default=False)
    ],
    delta: Annotated[
        str | None, typer.Option("--delta", "-d", help="Check timing against this delay, not the file's own.")
    ] = None,
) -> None:
    """Check a schedule file against a demand; exit 1 and list the violations if invalid."""
    from ocsched import io
    from ocsched.validate import validate

    dem = io.read_demand(demand)
    sched = io.read_schedule(schedule_file)
    report = validate(sched, dem, delta=None if delta is None else parse_delta(delta))
    if report.ok:
        typer.echo(f"valid: makespan {report.makespan:.6g}, {sched.num_configurations} configurations")
        return
    typer.echo(f"INVALID: {len(report.violations)} violation(s)")
    for v in report.violations:
        typer.echo(f"  {v}")
    raise typer.Exit(1)


@app.command("bound")
@cli_errors
def bound_cmd(demand: DemandArg, switches: SwitchesOpt, delta: DeltaOpt) -> None:
    """Print the lower bound on the makespan (and the simpler bounds it dominates)."""
    from ocsched import io
    from ocsched.bounds import degree_bound, line_bound, refined_bound

    s, d = parse_switches(switches), parse_delta(delta)
    dem = io.read_demand(demand)
    lb = line_bound(dem, switches=s, delta=d)
    db = degree_bound(dem, switches=s, delta=d)
    rb = refined_bound(dem, switches=s, delta=d)
    _summary(
        [
            ("lower bound", f"{max(lb, db, rb):.6g}"),
            ("line bound", f"{lb:.6g}"),
            ("degree bound", f"{db:.6g}"),
            ("refined bound", f"{rb:.6g}"),
        ]
    )


@app.command("algorithms")
@cli_errors
def algorithms_cmd() -> None:
    """List the schedulers with one-line descriptions."""
    from ocsched.schedulers import algorithms

    algs = algorithms()
    width = max(len(k) for k in algs)
    for name, desc in algs.items():
        typer.echo(f"{name:<{width}}  {desc}")


@app.command("demo")
@cli_errors
def demo_cmd(
    n: Annotated[int, typer.Option(help="Ports.")] = 100,
    switches: Annotated[int, typer.Option(help="Parallel OCSes.")] = 16,
    delta: Annotated[float, typer.Option(help="Reconfiguration delay (line sums are 1).")] = 0.04,
    seed: Annotated[int, typer.Option(help="Seed of the instance.")] = 0,
) -> None:
    """Schedule a built-in instance (the standard skewed benchmark) and compare with the lower bound."""
    from ocsched.model import Demand
    from ocsched.schedulers import algorithms, schedule
    from ocsched.validate import validate
    from ocsched.workloads import generate

    if n < 17:
        raise fail(f"`--n` must be >= 17 (the benchmark has 16 flows per port); got {n}")
    dem = Demand.from_matrix(generate("standard", n=n, seed=seed))
    typer.echo(
        f"Standard skewed benchmark: n={n} ports, {dem.nnz} flows (at most {dem.max_degree} per port), "
        f"largest line sum 1\nScheduling on s={switches} OCSes with reconfiguration delay {delta:g} "
        f"(seed {seed}).\n"
    )
    known = algorithms()
    names = [a for a in ("spectra", "spectra-pack", "spectra-noeq", "baseline") if a in known]
    lb = None
    typer.echo(
        f"{'algorithm':<14}{'makespan':>10}{'/ bound':>9}{'configs':>9}{'splits':>8}{'valid':>7}{'time':>9}"
    )
    for name in names:
        t0 = time.perf_counter()
        sched = schedule(dem, switches=switches, delta=delta, algorithm=name, rng=seed)
        elapsed = time.perf_counter() - t0
        lb = sched.lower_bound or 0.0
        ok = validate(sched, dem).ok
        ratio = sched.makespan / lb if lb > 0 else float("nan")
        typer.echo(
            f"{name:<14}{sched.makespan:>10.4f}{ratio:>9.3f}{sched.num_configurations:>9}"
            f"{sched.splits:>8}{'yes' if ok else 'NO':>7}{elapsed:>8.2f}s"
        )
    typer.echo(f"{'lower bound':<14}{lb:>10.4f}")
    typer.echo(
        "\nNext:\n"
        "  ocsched algorithms                                  list the schedulers\n"
        "  ocsched generate gpt32 --normalize --out d.npy      a workload (`ocsched workloads` lists them)\n"
        "  ocsched schedule d.npy -s 16 -d 0.04 -o s.json      schedule a matrix (.npy/.npz/.csv/.json)\n"
        "  ocsched validate d.npy s.json                       check a schedule file\n"
        "  ocsched plot s.json --out s.png                     draw it\n"
        "  ocsched sweep --preset quick --out results/quick    a small evaluation; then `ocsched report`\n"
        "The README explains the model, the algorithms and the file formats."
    )
