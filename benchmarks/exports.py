"""Issue 28's exporter targets: each format of a dense n=1024 schedule in <= 2 s, and the slice
grid's quantization loss at T = delta/4 on the paper grid (<= 2 %).

Part 1 exports one dense n=1024 schedule (uniform random demand, normalised to line sum 1,
s = 8 switches, delta = 0.01; spectra) in every format of ``ocsched.io.EXPORTERS`` and reports
the wall time of each export (the schedule is built once, outside the timing), with the circuit
table's time as the in-process reference. Part 2 schedules the paper preset's instances with
spectra (standard n=100, GPT, MoE; s in {4, 16}, delta in {0.01, 0.02, 0.04, 0.08}; the standard
workload's first seeds only) and fits each to the grid of T = delta/4, by the fit and by rounding
every configuration up, reporting the quantization loss (grid makespan / makespan - 1).

Run: ``.venv/bin/python benchmarks/exports.py [--quick]``.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
import tomllib
from importlib import resources
from pathlib import Path

import numpy as np

from ocsched import io, schedule
from ocsched.io.exports.slices import fit_to_grid
from ocsched.workloads import generate

OPTIONS = {
    "slices": {"slice_length": 0.01 / 4},
    "astra-sim": {"link_rate": "400Gbps", "time_unit": "ms"},
    "chrome-trace": {"time_unit": "ms"},
}


def part1(n: int, s: int) -> None:
    rng = np.random.default_rng(0)
    d = rng.random((n, n))
    np.fill_diagonal(d, 0.0)
    d /= max(d.sum(axis=1).max(), d.sum(axis=0).max())
    t0 = time.perf_counter()
    sched = schedule(d, switches=s, delta=0.01, rng=0)
    circuits = sum(len(c.circuits) for sw in sched.switches for c in sw)
    print(
        f"dense n={n}, s={s}: {sched.num_configurations} configurations, {circuits} circuits "
        f"(scheduled in {time.perf_counter() - t0:.1f} s)"
    )
    t0 = time.perf_counter()
    io.circuit_table(sched)
    print(f"reference: circuit table {time.perf_counter() - t0:.2f} s")
    print(f"{'format':<18}{'seconds':>9}{'MB':>9}  extra")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, exp in io.EXPORTERS.items():
            path = Path(tmp) / f"out-{fmt}{exp.extension}"
            t0 = time.perf_counter()
            res = io.export(sched, format=fmt, path=path, **OPTIONS.get(fmt, {}))  # type: ignore[arg-type]
            wall = time.perf_counter() - t0
            size = sum(f.stat().st_size for f in res.paths) / 1e6
            extra = {k: v for k, v in res.info.items() if k in ("recourse", "quantization_loss")}
            print(f"{fmt:<18}{wall:>9.2f}{size:>9.1f}  {extra}")


def part2(quick: bool) -> None:
    preset = tomllib.loads((resources.files("ocsched.presets") / "paper.toml").read_text())
    deltas = preset["delta"]
    rows: dict[tuple[str, str], list[float]] = {}
    for w in preset["workloads"]:
        if "grid" in w:
            continue  # the flows-per-port and synthetic-MoE grids: left out (time)
        seeds = min(int(w.get("seeds", 1)), 1 if quick else 3)
        for seed, s, delta in itertools.product(range(seeds), preset["switches"], deltas):
            d = generate(
                w["name"], rng=seed, normalize=True, link_gbps=preset["link_gbps"], **w.get("options", {})
            )
            sched = schedule(d, switches=s, delta=delta, rng=0)
            for method, dem in (("fit+demand", d), ("fit", None), ("round-up", None)):
                _, rep = fit_to_grid(sched, delta / 4, method=method.split("+")[0], demand=dem)
                rows.setdefault((w["label"], method), []).append(rep["quantization_loss"])
        if quick:
            break
    print(f"{'workload':<18}{'method':<12}{'runs':>5}{'mean %':>8}{'max %':>8}")
    every: dict[str, list[float]] = {}
    for (label, method), losses in rows.items():
        every.setdefault(method, []).extend(losses)
        _row(label, method, losses)
    for method, losses in every.items():
        _row("all", method, losses)


def _row(label: str, method: str, losses: list[float]) -> None:
    mean, top = 100 * statistics.mean(losses), 100 * max(losses)
    print(f"{label:<18}{method:<12}{len(losses):>5}{mean:>8.2f}{top:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="n=256 and one workload")
    parser.add_argument("--part", choices=["1", "2", "both"], default="both")
    args = parser.parse_args()
    if args.part in ("1", "both"):
        part1(256 if args.quick else 1024, 8)
    if args.part in ("2", "both"):
        part2(args.quick)


if __name__ == "__main__":
    main()
