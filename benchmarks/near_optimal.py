"""Issue 12 acceptance numbers: makespan / best bound for spectra, spectra-pack and spectra-opt.

"Best bound" is ``lower_bound(..., strong=True)`` (line, refined, packing, band and slot bounds).
Prints the paper grid per family, the fresh instances (standard n=128, moe gpus=64, 5 seeds
each), the fresh MoE decompositions against their floor with Delta permutations (``sides``),
times (best of 3: the machine is shared), and spectra-opt / exact on tiny random instances.

Run: ``.venv/bin/python benchmarks/near_optimal.py [--tiny 100] [--tiny-n 5] [--exact 50]
[--exact-nodes N] [--exact-limit SECONDS] [--skip grid fresh sides time tiny exact]`` (the tiny
and exact parts take tens of minutes). The exact solves stop after ``--exact-nodes``
branch-and-bound nodes (default ``ocsched.exact.DEFAULT_NODE_LIMIT``: the same counts on any
machine); ``--exact-limit`` adds a wall-clock limit.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import ocsched
from ocsched.bounds import band_bound, packing_bound, slot_bound
from ocsched.decompose import decompose
from ocsched.decompose._grouped import grouped_decompose
from ocsched.exact import DEFAULT_NODE_LIMIT, solve_exact
from ocsched.model import as_demand
from ocsched.workloads import generate
from ocsched.workloads.random import random_instance

ALGS = ("spectra", "spectra-pack", "spectra-opt")
SWITCHES = (4, 16)
DELTAS = (0.01, 0.02, 0.04, 0.08)


def ratios(mats: list[np.ndarray]) -> dict[str, list[tuple[int, float]]]:
    """Per algorithm: (s, makespan / best bound) for every matrix, s and delta."""
    out: dict[str, list[tuple[int, float]]] = {a: [] for a in ALGS}
    for m in mats:
        dem = as_demand(m)
        for s in SWITCHES:
            for delta in DELTAS:
                lb = ocsched.lower_bound(dem, switches=s, delta=delta, strong=True)
                for a in ALGS:
                    sch = ocsched.schedule(dem, switches=s, delta=delta, algorithm=a)
                    out[a].append((s, sch.makespan / lb))
    return out


def table(title: str, families: dict[str, list[np.ndarray]]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    print(f"\n## {title}: makespan / best bound, mean (max)\n")
    print("| family | " + " | ".join(ALGS) + " |")
    print("|---|" + "---|" * len(ALGS))
    res = {name: ratios(mats) for name, mats in families.items()}
    for name, r in res.items():
        cells = []
        for a in ALGS:
            v = np.array([x for _, x in r[a]])
            s16 = np.array([x for s, x in r[a] if s == 16])
            cells.append(f"{v.mean():.3f} ({v.max():.3f}); s=16 {s16.mean():.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    allv = {a: np.array([x for r in res.values() for _, x in r[a]]) for a in ALGS}
    print("| all | " + " | ".join(f"{allv[a].mean():.3f} ({allv[a].max():.3f})" for a in ALGS) + " |")
    return res


def best_of(run: Callable[..., object], *args: object, **kwargs: object) -> float:
    """Smallest wall time of 3 runs: the machine is shared, the minimum is the least noisy."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        run(*args, **kwargs)
        times.append(time.perf_counter() - t0)
    return min(times)


def timing() -> None:
    print("\n## Time per instance (s, best of 3)\n")
    cases = {
        "standard n=100": generate("standard", n=100, rng=0, normalize=True),
        "dense n=128": random_instance(128, density=1.0, rng=0),
    }
    for a in ("spectra-pack", "spectra-opt"):  # warm up: imports and first-call costs
        ocsched.schedule(cases["standard n=100"], switches=4, delta=0.01, algorithm=a)
    for name, m in cases.items():
        dem = as_demand(m)
        for s in SWITCHES:
            for delta in (0.01, 0.08):
                t = {}
                for a in ("spectra-pack", "spectra-opt"):
                    t[a] = best_of(ocsched.schedule, dem, switches=s, delta=delta, algorithm=a)
                tb = best_of(ocsched.lower_bound, dem, switches=s, delta=delta, strong=True)
                tband = best_of(band_bound, dem, switches=s, delta=delta)
                start = max(
                    band_bound(dem, switches=s, delta=delta), packing_bound(dem, switches=s, delta=delta)
                )
                tslot = best_of(slot_bound, dem, switches=s, delta=delta, start=start)
                print(
                    f"{name:<15} s={s:<3} delta={delta:<5} pack {t['spectra-pack']:.3f}  "
                    f"opt {t['spectra-opt']:.3f} ({t['spectra-opt'] / t['spectra-pack']:.1f}x)  "
                    f"strong bound {tb:.3f} (band {tband:.4f}, slot {tslot:.4f})"
                )


def sides() -> None:
    """Where the fresh MoE gap lies: the decomposition's total against its floor with Delta configurations."""
    print("\n## Fresh MoE (gpus=64): decomposition total vs its floor with Delta configurations\n")
    print("sum_t max_L d_L(t) is the least total length of any Delta permutations (band_bound, K = Delta).")
    print("| seed | floor | spectra | grouped (spectra-opt) |")
    print("|---|---|---|---|")
    for k in range(5):
        dem = as_demand(generate("moe", gpus=64, rng=k, normalize=True))
        dense = np.zeros((dem.n, dem.n))
        dense[dem.rows, dem.cols] = dem.values
        ranks = np.maximum(-np.sort(-dense, axis=1), -np.sort(-dense.T, axis=1)).max(axis=0)[: dem.max_degree]
        spectra = decompose(dem, method="spectra", delta=0.01).weights.sum()
        grouped = grouped_decompose(dem).weights.sum()
        print(f"| {k} | {ranks.sum():.4f} | {spectra:.4f} | {grouped:.4f} |")


def _limits(nodes: int, limit: float | None) -> str:
    return f"{nodes} nodes" + ("" if limit is None else f" or {limit:g} s")


def tiny(count: int, max_n: int, nodes: int, limit: float | None) -> None:
    print(f"\n## Tiny random instances (n <= {max_n}), exact within {_limits(nodes, limit)}\n")
    rng = np.random.default_rng(2026)
    rows = []
    proved = 0
    for _ in range(count):
        n = int(rng.integers(3, max_n + 1))
        s = int(rng.integers(1, 5))
        delta = float(rng.choice(DELTAS))
        d = as_demand(random_instance(n, density=float(rng.uniform(0.3, 1.0)), rng=int(rng.integers(2**31))))
        ex = solve_exact(d, switches=s, delta=delta, time_limit=limit, node_limit=nodes)
        if not ex.optimal:
            continue
        proved += 1
        row = [ocsched.schedule(d, switches=s, delta=delta, algorithm=a).makespan / ex.makespan for a in ALGS]
        lb = ocsched.lower_bound(d, switches=s, delta=delta)
        lbs = ocsched.lower_bound(d, switches=s, delta=delta, strong=True)
        rows.append([*row, ex.makespan / lb, ex.makespan / lbs])
    v = np.array(rows)
    print(f"proved optimal: {proved} of {count}")
    names = [f"{a} / exact" for a in ALGS] + ["exact / lower_bound", "exact / strong bound"]
    for k, name in enumerate(names):
        print(f"{name:<24} mean {v[:, k].mean():.4f}  max {v[:, k].max():.4f}")


def proving(count: int, nodes: int, limit: float | None) -> None:
    print(
        f"\n## Exact solver: optimality proved within {_limits(nodes, limit)} "
        "(random_instance, n <= 6, s <= 4)\n"
    )
    rng = np.random.default_rng(12)
    by_n: dict[int, list[bool]] = {}
    for _ in range(count):
        n = int(rng.integers(2, 7))
        s = int(rng.integers(1, 5))
        delta = float(rng.choice(DELTAS))
        d = as_demand(random_instance(n, rng=int(rng.integers(2**31))))
        res = solve_exact(d, switches=s, delta=delta, time_limit=limit, node_limit=nodes)
        by_n.setdefault(n, []).append(res.optimal)
    allv = [x for v in by_n.values() for x in v]
    for n in sorted(by_n):
        print(f"n={n}: {sum(by_n[n])} of {len(by_n[n])}")
    big = by_n.get(5, []) + by_n.get(6, [])
    print(
        f"all: {sum(allv)} of {len(allv)} ({100 * sum(allv) / len(allv):.0f}%); "
        f"n=5-6: {sum(big)} of {len(big)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiny", type=int, default=100)
    parser.add_argument("--tiny-n", type=int, default=5)
    parser.add_argument("--exact-nodes", type=int, default=DEFAULT_NODE_LIMIT)
    parser.add_argument("--exact-limit", type=float, default=None, help="seconds (default: none)")
    parser.add_argument("--exact", type=int, default=50, help="instances for the proving rate")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["grid", "fresh", "sides", "time", "tiny", "exact"]
    )
    args = parser.parse_args()
    if "grid" not in args.skip:
        table(
            "Paper grid",
            {
                "standard": [generate("standard", n=100, rng=k, normalize=True) for k in range(5)],
                "GPT": [generate("gpt32", normalize=True), generate("gpt32", copies=4, normalize=True)],
                "MoE": [generate("moe8", normalize=True), generate("moe8", copies=8, normalize=True)],
            },
        )
    if "fresh" not in args.skip:
        table(
            "Fresh instances (not tuned to the grid)",
            {
                "standard n=128": [
                    generate("standard", n=128, rng=100 + k, normalize=True) for k in range(5)
                ],
                "moe gpus=64": [generate("moe", gpus=64, rng=k, normalize=True) for k in range(5)],
            },
        )
    if "sides" not in args.skip:
        sides()
    if "time" not in args.skip:
        timing()
    if "tiny" not in args.skip:
        tiny(args.tiny, args.tiny_n, args.exact_nodes, args.exact_limit)
    if "exact" not in args.skip:
        proving(args.exact, args.exact_nodes, args.exact_limit)


if __name__ == "__main__":
    main()
