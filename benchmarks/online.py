"""The online path on a 64-GPU MoE: fit / oracle, fit latency and recourse, under drift.

Run: ``.venv/bin/python benchmarks/online.py [--seeds 3] [--steps 8] [--repeat 200] [--part latency]``.

For each drift (relative L1 between consecutive steps of ``generate("moe", gpus=64, drift=...)``),
s in {4, 16} and delta in {.01, .04}: a plan on step 0 fitted to step 1 (``plan.fit``, default
fallback above 20 % error, and without fallback), against the oracle (spectra-pack on step 1)
and against running the plan then serving the residual. Latency: warm ``fit`` calls, median
CPU time of the calling thread, on one core (the process is pinned to one CPU where the OS
allows). Recourse: an
:class:`~ocsched.online.OnlineScheduler` (last-matrix predictor) over ``--steps`` steps
(recourse weight 0 and 1e-5 per circuit; the demands are scaled to a largest line sum of
about 1) against independent spectra-pack schedules: circuits added + removed between
consecutive schedules, and the mean makespans.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time

import numpy as np

import ocsched
from ocsched.online import OnlineScheduler, Plan, plan, recourse
from ocsched.online.predict import Last
from ocsched.workloads import generate

DRIFTS = (0.025, 0.10, 0.30)
FABRICS = ((4, 0.01), (4, 0.04), (16, 0.01), (16, 0.04))


def _steps(gpus: int, drift: float, seed: int, count: int, experts: int | None = None) -> list[np.ndarray]:
    """``count`` consecutive steps, all scaled by step 0's largest line sum (the drift is kept)."""
    extra = {} if experts is None else {"experts": experts}
    mats = [generate("moe", gpus=gpus, rng=seed, drift=drift, step=t, **extra) for t in range(count)]
    scale = max(float(mats[0].sum(axis=0).max()), float(mats[0].sum(axis=1).max()))
    return [m / scale for m in mats]


def _plan_then_residual(p: Plan, actual: np.ndarray) -> float:
    cover = np.zeros_like(actual)
    for confs in p.schedule.switches:
        for c in confs:
            perm = np.asarray(c.perm)
            (i,) = np.nonzero(perm >= 0)
            cover[i, perm[i]] += c.duration
    resid = np.maximum(actual - cover, 0.0)
    if not (resid > 0).any():
        return p.makespan
    return p.makespan + ocsched.schedule(resid, fabric=p.fabric, algorithm=p.algorithm).makespan


def _latency_us(p: Plan, actual: np.ndarray, repeat: int) -> float:
    p.fit(actual)  # warm: compiled kernels loaded
    times = []
    for _ in range(repeat):
        # CPU time of this thread: on a shared machine the wall clock also counts other jobs.
        t0 = time.thread_time()
        p.fit(actual)
        times.append(time.thread_time() - t0)
    return 1e6 * statistics.median(times)


def quality(seeds: int, repeat: int) -> None:
    print(
        "| drift | s | delta | fit / oracle | mode | fit (no fallback) / oracle | plan+residual / oracle "
        "| fit latency (us, median) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for drift in DRIFTS:
        for s, delta in FABRICS:
            ratios, raw, base, lat, modes = [], [], [], [], []
            for seed in range(seeds):
                d0, d1 = _steps(64, drift, seed, 2)
                p = plan(d0, switches=s, delta=delta)
                fit = p.fit(d1)
                ocsched.validate(fit, d1).raise_if_invalid()
                pure = p.fit(d1, max_error=np.inf)
                ocsched.validate(pure, d1).raise_if_invalid()
                oracle = ocsched.schedule(d1, switches=s, delta=delta, algorithm="spectra-pack").makespan
                ratios.append(fit.makespan / oracle)
                raw.append(pure.makespan / oracle)
                base.append(_plan_then_residual(p, d1) / oracle)
                modes.append(fit.meta["online"]["mode"])
                if fit.meta["online"]["mode"] != "fallback":
                    lat.append(_latency_us(p, d1, repeat))
            mode = "/".join(sorted(set(modes)))
            latency = f"{statistics.median(lat):.0f}" if lat else "(fallback: a full schedule)"
            print(
                f"| {drift:.1%} | {s} | {delta} | {np.mean(ratios):.4f} (max {max(ratios):.4f}) | {mode} "
                f"| {np.mean(raw):.4f} | {np.mean(base):.4f} | {latency} |"
            )


def latency_large(repeat: int) -> None:
    print(
        "\n| n | s | delta | drift | configurations | fit latency (us, median) "
        "| fresh spectra-pack (us, median of 5) | fresh / fit | fit / oracle |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n, experts in ((64, None), (256, 256)):
        for s in (4, 16):
            d0, d1 = _steps(n, 0.025, 0, 2, experts)
            p = plan(d0, switches=s, delta=0.01)
            lat = _latency_us(p, d1, max(20, repeat // (1 if n == 64 else 4)))
            full = []
            for _ in range(5):  # the reference in the same process, at the same load
                t0 = time.thread_time()
                oracle = ocsched.schedule(d1, switches=s, delta=0.01, algorithm="spectra-pack").makespan
                full.append(time.thread_time() - t0)
            ref = 1e6 * statistics.median(full)
            ratio = p.fit(d1).makespan / oracle
            print(
                f"| {n} | {s} | 0.01 | 2.5% | {p.work.size} | {lat:.0f} | {ref:.0f} | {ref / lat:.0f} "
                f"| {ratio:.4f} |"
            )


def recourse_table(seeds: int, steps: int, weights: tuple[float, ...]) -> None:
    print(
        f"\n| drift | s | delta | recourse weight | recourse online / independent ({steps} steps) "
        "| makespan online / independent | steps fitted |"
    )
    print("|---|---|---|---|---|---|---|")
    for drift in DRIFTS:
        for s, delta in FABRICS:
            runs = [[_steps(64, drift, seed, steps)] for seed in range(seeds)]
            fresh = [
                [ocsched.schedule(m, switches=s, delta=delta, algorithm="spectra-pack") for m in run[0]]
                for run in runs
            ]
            for weight in weights:
                rec_ratio, mk_ratio, fitted = [], [], 0
                for run, theirs_run in zip(runs, fresh, strict=True):
                    mats = run[0]
                    online = OnlineScheduler(switches=s, delta=delta, predictor=Last(), recourse=weight)
                    outs = [online.step(m) for m in mats]
                    for m, o in zip(mats, outs, strict=True):
                        ocsched.validate(o, m).raise_if_invalid()
                    ours = sum(recourse(a, b) for a, b in itertools.pairwise(outs))
                    theirs = sum(recourse(a, b) for a, b in itertools.pairwise(theirs_run))
                    rec_ratio.append(ours / theirs)
                    mine = np.mean([o.makespan for o in outs[1:]])
                    mk_ratio.append(mine / np.mean([f.makespan for f in theirs_run[1:]]))
                    fitted += sum(h["mode"] in ("fit", "repair") for h in online.history[1:])
                print(
                    f"| {drift:.1%} | {s} | {delta} | {weight:g} | {np.mean(rec_ratio):.3f} "
                    f"| {np.mean(mk_ratio):.4f} | {fitted}/{seeds * (steps - 1)} |"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--part", choices=("all", "quality", "latency", "recourse"), default="all")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(f"uptime: {os.getloadavg()}\n")
    if args.part in ("all", "quality"):
        quality(args.seeds, args.repeat)
    if args.part in ("all", "latency"):
        latency_large(args.repeat)
    if args.part in ("all", "recourse"):
        recourse_table(args.seeds, args.steps, (0.0, 1e-5))
    print(f"\nuptime: {os.getloadavg()}")


if __name__ == "__main__":
    main()
