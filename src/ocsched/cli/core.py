"""Core commands: schedule, algorithms, demo (validate, bound, reschedule: :mod:`~ocsched.cli.evaluate`)."""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer

from ocsched._jit import clock
from ocsched.cli._app import app, choice_type, cli_errors, int_option
from ocsched.cli._options import (
    SEED,
    SWITCHES,
    BidirOpt,
    ColumnsOpt,
    DeltaOpt,
    EpsLatencyOpt,
    EpsRateOpt,
    FabricOpt,
    GapsOpt,
    LinkRateOpt,
    PortsOpt,
    ReconfOpt,
    SeedOpt,
    SwitchesOpt,
    UnitOpt,
    Units,
    check_finite,
    check_out,
    check_valid,
    delta_list,
    deltas_text,
    fabric_facts,
    fabric_of,
    gap_list,
    in_unit,
    read_input,
    stdin_or_path,
    to_stdout,
    unit_meta,
    units,
    write_result,
)
from ocsched.cli._output import JsonOpt, emit
from ocsched.errors import InvalidInputError

if TYPE_CHECKING:
    from ocsched.fabric import Fabric
    from ocsched.iteration import Iteration

    AlgorithmName = str
else:  # typer shows and checks a Literal's values as choices
    from ocsched.schedulers import ALIASES, SCHEDULERS

    AlgorithmName = choice_type([*SCHEDULERS, *ALIASES])


def _preload(algorithm: str) -> None:
    """Import and warm up what the scheduler loads lazily (scipy, JIT-compiled kernels).

    Run on a 2-port instance before the clock starts, so the reported time is the scheduling alone.
    """
    import scipy.optimize
    import scipy.sparse.csgraph  # noqa: F401

    from ocsched.model import Demand
    from ocsched.schedulers import schedule

    # A failure here (e.g. a scheduler for another kind of fabric) is the real call's to report.
    with contextlib.suppress(Exception):
        schedule(Demand.from_matrix([[0.0, 1.0], [1.0, 0.0]]), switches=1, delta=0.0, algorithm=algorithm)


SCHEDULE_EXAMPLES = """\
ocsched schedule d.npy -s 4 -d 0.04                   # a matrix on 4 OCSes
ocsched schedule d.npy -s 4 -d 10us --unit bytes --link-rate 400Gbps -o s.json
ocsched schedule flows.csv --columns gpu_a,gpu_b,bytes --link-rate 50GB/s -s 2 -d 20us
ocsched schedule it/ -s 2 -d 0.1 --gaps 0.2             # an iteration (a folder of phases)
cat d.csv | ocsched schedule - -s 2 -d 0.04 --json      # stdin in, JSON out
"""


@app.command("schedule", epilog=SCHEDULE_EXAMPLES)
@cli_errors
def schedule_cmd(
    demand: Annotated[
        Path,
        typer.Argument(
            metavar="DEMAND",
            help="Demand matrix (.npy, .npz, .csv, .json; - reads stdin) or an iteration "
            "(ocsched.sequence JSON, 3-D .npy, or a folder of per-phase matrices) or a trace.",
            show_default=False,
        ),
    ],
    switches: SwitchesOpt = None,
    delta: DeltaOpt = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
    eps_rate: EpsRateOpt = None,
    eps_latency: EpsLatencyOpt = None,
    bidirectional: BidirOpt = None,
    ports_per_endpoint: PortsOpt = None,
    algorithm: Annotated[
        AlgorithmName, typer.Option("--algorithm", "-a", help="Scheduler (see `ocsched algorithms`).")
    ] = "spectra",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the schedule as JSON here (.json.gz compressed; - stdout)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    seed: SeedOpt = None,
    unit: UnitOpt = None,
    link_rate: LinkRateOpt = None,
    columns: ColumnsOpt = None,
    gaps: GapsOpt = None,
    iteration_algorithm: Annotated[
        str | None,
        typer.Option(
            "--iteration-algorithm",
            metavar="NAME",
            help="Iterations: spectra-seq (default) or independent (`ocsched algorithms`).",
        ),
    ] = None,
    trace_option: Annotated[
        list[str] | None,
        typer.Option(
            "--trace-option",
            "-T",
            help="Traces: an `ocsched import` option as NAME=VALUE (repeat).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            help="An option of the algorithm as KEY=VALUE (repeat; an unknown KEY lists the allowed ones), "
            "e.g. --option node_limit=500 for exact.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Schedule a demand matrix, a training iteration or a trace; print makespan, bound and statistics."""
    from ocsched import io
    from ocsched.cli import traces

    def fabric_in(u: Units) -> Fabric:
        return fabric_of(
            switches,
            delta,
            reconfiguration,
            fabric,
            u,
            eps_rate=eps_rate,
            eps_latency=eps_latency,
            bidirectional=bidirectional,
            ports_per_endpoint=ports_per_endpoint,
        )

    out = check_out(out, as_json)
    demand = stdin_or_path(demand)
    if out is not None and not to_stdout(out):
        io.check_writable(out, force=force, name="--out")
    options = _algorithm_options(option)
    if options and (io.traces.is_trace(demand) or io.is_iteration(demand)):
        raise InvalidInputError("`--option` applies to single demand matrices, not iterations or traces")
    if io.traces.is_trace(demand):
        if unit not in (None, "bytes"):
            raise InvalidInputError(
                "a trace holds bytes: give `--link-rate`, and its time unit with -T unit=..."
            )
        it = traces.trace_iteration(demand, link_rate, **traces.trace_options(trace_option))
        trace_meta = it.meta.get("trace", {})
        u = Units(str(trace_meta.get("time_unit", "s")), 1.0, f"bytes at {link_rate}")
        fab = fabric_in(u)
        _schedule_iteration(
            it, fab, u, algorithm, iteration_algorithm, seed, out, force, as_json, dict(it.meta)
        )
        return
    if trace_option:
        raise InvalidInputError("`--trace-option` applies to trace inputs only")
    u = units(unit, link_rate)
    fab = fabric_in(u)
    if io.is_iteration(demand):
        if columns is not None:
            raise InvalidInputError("`--columns` applies to long-form CSV demands, not iterations")
        plain = in_unit(io.read_iteration(demand, gaps=gap_list(gaps)), u)
        meta = io.traces.provenance(demand)
        _schedule_iteration(plain, fab, u, algorithm, iteration_algorithm, seed, out, force, as_json, meta)
        return
    if gaps is not None or iteration_algorithm is not None:
        raise InvalidInputError("`--gaps` and `--iteration-algorithm` apply to iteration inputs only")
    dem, names = read_input(demand, u, columns)
    _preload(algorithm)
    from ocsched.schedulers import schedule
    from ocsched.validation import validate

    t0 = clock()
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, as bad input
        sched = schedule(dem, fabric=fab, algorithm=algorithm, rng=seed, options=options)
    elapsed = clock() - t0
    d = max(fab.deltas)
    check_finite({"makespan": sched.makespan, "lower bound": sched.lower_bound or 0.0}, d)
    check_valid(validate(sched, dem, fabric=fab))
    meta = {**sched.meta, **unit_meta(u)}
    if names is not None:
        meta["port_names"] = list(names)
    sched = dataclasses.replace(sched, meta=meta)
    lb = sched.lower_bound or 0.0
    facts: dict[str, Any] = {
        "algorithm": sched.algorithm,
        "ports": sched.ports,
        **fabric_facts(fab),
        "unit": u.shown,
        "makespan": sched.makespan,
        "lower_bound": lb,
        "ratio": sched.makespan / lb if lb > 0 else None,
        "configurations": sched.num_configurations,
        "splits": sched.splits,
    }
    if fab.eps_rate:
        eps = sched.eps
        facts["eps_rate"] = fab.eps_rate
        facts["eps_share"] = 0.0 if eps is None or not dem.nnz else float(eps.values.sum() / dem.values.sum())
        facts["eps_time"] = sched.eps_time
    if sched.status != "heuristic":
        facts["status"] = sched.status
        if sched.dual_bound:
            facts["dual_bound"] = sched.dual_bound
    facts["time_s"] = elapsed
    if as_json:
        facts["unit"] = u.unit
        if u.source is not None:
            facts["converted_from"] = u.source
    on_stdout = write_result(out, sched.to_json(), lambda p: io.write_schedule(sched, p, force=force), facts)
    emit(facts, as_json=as_json, err=on_stdout)


def _algorithm_options(texts: list[str] | None) -> dict[str, object] | None:
    """``--option KEY=VALUE`` flags as a dict (values stay text: the registry converts and checks them)."""
    if not texts:
        return None
    out: dict[str, object] = {}
    for text in texts:
        key, eq, value = text.partition("=")
        if not eq or not key.strip():
            raise InvalidInputError(f"`--option` must be KEY=VALUE; got {text!r}")
        out[key.strip()] = value.strip()
    return out


def _schedule_iteration(
    it: Iteration,
    fab: Fabric,
    u: Units,
    base: str,
    algorithm: str | None,
    seed: int | None,
    out: Path | None,
    force: bool,
    as_json: bool,
    meta: dict[str, Any] | None = None,
) -> None:
    """Schedule an iteration; print one line per phase and the totals against ``independent``.

    The totals use the single-matrix summary's words (makespan, lower bound, ratio, ...), then
    the iteration's own (gaps, exposed time, ...). ``meta`` (a trace's provenance) is added to
    the schedule's.
    """
    from ocsched import io
    from ocsched._checks import check_choice
    from ocsched.sequence import (
        ITERATION_SCHEDULERS,
        iteration_row,
        phase_rows,
        schedule_iteration,
        validate_iteration,
    )

    if algorithm is not None:
        check_choice(algorithm, "--iteration-algorithm", list(ITERATION_SCHEDULERS))
    kw: dict[str, Any] = {"fabric": fab, "base": base, "rng": seed}
    t0 = clock()
    sched = schedule_iteration(it, algorithm=algorithm or "spectra-seq", **kw)
    elapsed = clock() - t0
    check_valid(validate_iteration(sched, it, fabric=fab))
    independent = schedule_iteration(it, algorithm="independent", **kw)
    rows = phase_rows(sched)
    total = iteration_row(sched, independent=independent)
    lb = total.pop("lower_bound")
    makespan = total.pop("iteration_time")
    facts: dict[str, Any] = {
        "algorithm": total.pop("algorithm"),
        "ports": it.n,
        **fabric_facts(fab),
        "unit": u.unit if as_json else u.shown,
        "makespan": makespan,
        "lower_bound": lb,
        "ratio": makespan / lb if isinstance(lb, float) and lb > 0 and isinstance(makespan, float) else None,
        "configurations": total.pop("configurations"),
        **total,
        "time_s": elapsed,
    }
    sched = dataclasses.replace(sched, meta={**sched.meta, **(meta or {}), **unit_meta(u)})
    text = sched.to_json()
    on_stdout = write_result(out, text, lambda p: io.write_iteration_schedule(sched, p, force=force), facts)
    if as_json:
        emit({**facts, "phase_rows": rows}, as_json=True)
        return
    if rows:
        keys = list(rows[0])
        typer.echo("  ".join(f"{k:>12}" for k in keys), err=on_stdout)
        for r in rows:
            cells = (f"{v:>12.6g}" if isinstance(v, float) else f"{v!s:>12}" for v in r.values())
            typer.echo("  ".join(cells), err=on_stdout)
    emit(facts, err=on_stdout)


@app.command("algorithms", epilog="ocsched algorithms\nocsched algorithms --json | jq 'keys'\n")
@cli_errors
def algorithms_cmd(as_json: JsonOpt = False) -> None:
    """List the schedulers with one-line descriptions and their options (`--option KEY=VALUE`)."""
    from ocsched.schedulers import ALIASES, SCHEDULERS, algorithms

    algs = algorithms()
    if as_json:
        facts = {
            name: {
                "description": desc,
                "supports": sorted(SCHEDULERS[name].supports),
                "requires": sorted(SCHEDULERS[name].requires),
                "options": {k: o.facts() for k, o in SCHEDULERS[name].options.items()},
            }
            for name, desc in algs.items()
        }
        emit({"algorithms": facts, "aliases": ALIASES}, as_json=True)
        return
    width = max(len(k) for k in algs)
    for name, desc in algs.items():
        typer.echo(f"{name:<{width}}  {desc}")
        for key, opt in SCHEDULERS[name].options.items():  # `--option KEY=VALUE`
            typer.echo(f"{'':<{width}}    --option {key}=...  {opt.description} ({opt.summary()})")
    former = ", ".join(f"{old} (now {new})" for old, new in ALIASES.items())
    typer.echo(f"\nFormer names, still accepted: {former}.")


@app.command("demo")
@cli_errors
def demo_cmd(
    n: Annotated[
        int,
        typer.Option(
            "--n",
            parser=int_option("--n", minimum=17, maximum=2000),
            metavar="INTEGER",
            help="Ports, 17..2000.",
        ),
    ] = 100,
    switches: Annotated[
        int | None,
        typer.Option(
            "--switches",
            "-s",
            parser=SWITCHES,
            metavar="INTEGER",
            help="Parallel OCSes (default 16, or one per --delta).",
        ),
    ] = None,
    delta: Annotated[
        str | None,
        typer.Option(
            "--delta",
            "-d",
            parser=delta_list,
            metavar="DELTA[,DELTA...]",
            help="Reconfiguration delay (line sums are 1; default 0.04); a list gives one per switch.",
        ),
    ] = None,
    fabric: FabricOpt = None,
    reconfiguration: ReconfOpt = None,
    seed: Annotated[
        int, typer.Option("--seed", parser=SEED, metavar="INTEGER", help="Seed of the instance.")
    ] = 0,
) -> None:
    """Schedule a built-in instance (the standard skewed benchmark) and compare with the lower bound."""
    from ocsched.model import Demand
    from ocsched.schedulers import SCHEDULERS, fabric_features, schedule
    from ocsched.validation import validate
    from ocsched.workloads import generate

    if fabric is None:
        delta = "0.04" if delta is None else delta
        switches = 16 if switches is None and "," not in delta else switches
    fab = fabric_of(switches, delta, reconfiguration, fabric)
    dem = Demand.from_matrix(generate("standard", n=n, rng=seed))
    typer.echo(
        f"Standard skewed benchmark: n={n} ports, {dem.nnz} flows (at most {dem.max_degree} per port), "
        f"largest line sum 1\nScheduling on s={fab.size} OCSes with reconfiguration delay {deltas_text(fab)} "
        f"(seed {seed}).\n"
    )
    features = fabric_features(fab)
    names = [
        a
        for a in ("spectra", "spectra-pack", "spectra-greedy", "baseline")
        if features <= SCHEDULERS[a].supports and SCHEDULERS[a].requires <= features
    ]
    lb = None
    typer.echo(
        f"{'algorithm':<14}{'makespan':>10}{'/ bound':>9}{'configs':>9}{'splits':>8}{'valid':>7}{'time':>9}"
    )
    for name in names:
        t0 = clock()
        sched = schedule(dem, fabric=fab, algorithm=name, rng=seed)
        elapsed = clock() - t0
        lb = sched.lower_bound or 0.0
        ok = validate(sched, dem, fabric=fab).ok
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
