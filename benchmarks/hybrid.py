"""Issue 29's acceptance numbers: hybrid fabrics (circuits plus a packet switch of per-port rate rho).

Run: ``.venv/bin/python benchmarks/hybrid.py [--seeds 2] [--tiny 30]``.

- grid: paper families (standard n=100 x seeds, gpt32, moe8, normalised) and
  ``generate("moe", gpus=64, normalized=True)``; s in {4, 16}, delta in {.01, .04, .08}, rho in
  {.1, .5, 1}. Per instance: spectra-hybrid / hybrid bound, the peers' ratios, the best simple
  split (the better of a small-entry trim and a proportional split, each the best of a grid of
  its parameter with spectra-pack on the rest), and spectra-hybrid's run time against
  spectra-pack's on the plain fabric (same process, same instance).
- tiny: the exact optimum (exact-hybrid) against the hybrid bound on random instances, n <= 5.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

import ocsched
from ocsched import Fabric
from ocsched.hybrid import HybridResult, _finish
from ocsched.model import Demand
from ocsched.workloads import generate

SWITCHES = (4, 16)
DELTAS = (0.01, 0.04, 0.08)
RHOS = (0.1, 0.5, 1.0)
PEERS = ("solstice-hybrid", "mixnet-greedy")


def families(seeds: int) -> dict[str, list[Demand]]:
    def dem(m: Any) -> Demand:
        return Demand.from_matrix(m)

    return {
        "standard": [dem(generate("standard", n=100, seed=k, normalized=True)) for k in range(seeds)],
        "gpt32": [dem(generate("gpt32", normalized=True))],
        "moe8": [dem(generate("moe8", normalized=True))],
        "moe64": [dem(generate("moe", gpus=64, normalized=True, seed=0))],
    }


def simple_splits(d: Demand, fab: Fabric) -> float:
    """The best simple split (spectra-pack on the rest): circuits only; every entry up to a
    threshold on the EPS (thresholds at 15 entry quantiles); a share f of every entry on the EPS
    (f on a grid around the balance point rho / (s + rho))."""
    v = d.values
    best = _finish(d, np.zeros(d.nnz), fab).makespan
    for q in (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99):
        theta = float(np.quantile(v, q))
        res: HybridResult = _finish(d, np.where(v <= theta, v, 0.0), fab)
        best = min(best, res.makespan)
    balance = fab.eps_rate / (fab.size + fab.eps_rate)
    for k in np.linspace(0.25, 1.5, 11):
        best = min(best, _finish(d, min(1.0, k * balance) * v, fab).makespan)
    return float(best)


def grid(seeds: int) -> None:
    print("## Hybrid fabrics: spectra-hybrid against the hybrid bound and the best simple split\n")
    print(
        "| family | s | delta | rho | hybrid / bound | best simple / bound | gain vs simple | "
        "solstice-hybrid / bound | mixnet-greedy / bound | time / spectra-pack |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios: list[float] = []
    gains: dict[str, list[float]] = {}
    times: list[float] = []
    for name, mats in families(seeds).items():
        for s in SWITCHES:
            for delta in DELTAS:
                for rho in RHOS:
                    row: dict[str, list[float]] = {}
                    for d in mats:
                        fab = Fabric.uniform(s, delta).with_eps(rho)
                        t0 = time.perf_counter()
                        ocsched.schedule(d, fabric=fab.without_eps(), algorithm="spectra-pack")
                        t_pack = time.perf_counter() - t0
                        t0 = time.perf_counter()
                        hyb = ocsched.schedule(d, fabric=fab, algorithm="spectra-hybrid")
                        t_hyb = time.perf_counter() - t0
                        assert ocsched.validate(hyb, d).ok
                        lb = float(hyb.lower_bound or 0.0)
                        simple = simple_splits(d, fab)
                        peers = [ocsched.schedule(d, fabric=fab, algorithm=p).makespan / lb for p in PEERS]
                        for k, val in (
                            ("r", hyb.makespan / lb),
                            ("simple", simple / lb),
                            ("gain", 1 - hyb.makespan / simple),
                            ("p0", peers[0]),
                            ("p1", peers[1]),
                            ("t", t_hyb / t_pack),
                        ):
                            row.setdefault(k, []).append(val)
                    mean = {k: statistics.fmean(v) for k, v in row.items()}
                    ratios.extend(row["r"])
                    times.extend(row["t"])
                    if rho >= 0.5:
                        gains.setdefault(name, []).extend(row["gain"])
                    print(
                        f"| {name} | {s} | {delta} | {rho} | {mean['r']:.3f} | {mean['simple']:.3f} | "
                        f"{100 * mean['gain']:.1f} % | {mean['p0']:.3f} | {mean['p1']:.3f} | "
                        f"{mean['t']:.2f} |"
                    )
    print()
    print(
        f"spectra-hybrid / bound: mean {statistics.fmean(ratios):.3f}, max {max(ratios):.3f} "
        f"over {len(ratios)} instances"
    )
    for name, g in gains.items():
        print(
            f"gain over the best simple split at rho >= 0.5, {name}: mean {100 * statistics.fmean(g):.1f} %, "
            f"min {100 * min(g):.1f} %"
        )
    print(
        f"run time / spectra-pack: mean {statistics.fmean(times):.2f}, median "
        f"{statistics.median(times):.2f}, max {max(times):.2f}"
    )


def tiny(count: int) -> None:
    print("\n## Tiny instances: exact optimum (exact-hybrid) against the hybrid bound\n")
    rng = np.random.default_rng(29)
    ratios, heur, statuses = [], [], []
    while len(ratios) < count:
        n = int(rng.integers(3, 6))
        d = rng.random((n, n)) * (rng.random((n, n)) < 0.7)
        d[rng.random((n, n)) < 0.3] *= 0.05
        np.fill_diagonal(d, 0.0)
        if not d.any():
            continue
        s = 1 if n == 5 else int(rng.integers(1, 3))
        fab = Fabric.uniform(s, float(rng.choice([0.01, 0.04, 0.1]))).with_eps(float(rng.choice(RHOS)))
        ex = ocsched.schedule(d, fabric=fab, algorithm="exact-hybrid")
        assert ocsched.validate(ex, d).ok
        lb = float(ex.lower_bound or 0.0)
        ratios.append(ex.makespan / lb)
        statuses.append(ex.status)
        heur.append(ocsched.schedule(d, fabric=fab, algorithm="spectra-hybrid").makespan / ex.makespan)
    print(f"{count} instances (n in 3..5, s in 1..2): {statuses.count('optimal')} proved optimal")
    print(f"exact / bound: mean {statistics.fmean(ratios):.4f}, max {max(ratios):.4f}")
    print(f"spectra-hybrid / exact: mean {statistics.fmean(heur):.4f}, max {max(heur):.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--tiny", type=int, default=30)
    ap.add_argument("--part", default="grid,tiny")
    args = ap.parse_args()
    parts = args.part.split(",")
    if "grid" in parts:
        grid(args.seeds)
    if "tiny" in parts:
        tiny(args.tiny)


if __name__ == "__main__":
    main()
