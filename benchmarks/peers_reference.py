"""Compare Spectra with the paper's baseline (and the other peers) on the reference workloads.

Run from the repository root::

    .venv/bin/python benchmarks/peers_reference.py            # about a minute on one core
    .venv/bin/python benchmarks/peers_reference.py --peers    # also every peer at the reference points
    .venv/bin/python benchmarks/peers_reference.py --split-order random   # shuffled cycle search

Prints, for each workload, Spectra's makespan and the baseline's (mean over ``--seeds`` seeds of
its random split) for s in {4, 16} and delta in {0.01, 0.02, 0.04, 0.08}, then the reference
points and the mean baseline/Spectra ratio next to the values from a reproduction of the paper's
code. Every matrix is normalised so its largest line sum is 1.

The MoE and GPT matrices are built here with numpy from their formulas, so this script does not
depend on the workload generators; ``standard`` uses ``ocsched.workloads.generate``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

import ocsched
from ocsched.model import Demand
from ocsched.schedulers import split_schedule
from ocsched.split import Order
from ocsched.workloads import generate

SWITCHES = (4, 16)
DELTAS = (0.01, 0.02, 0.04, 0.08)
PEERS = ("naive", "baseline-eclipse", "eclipse", "solstice", "bvn")

MOE8 = np.array(
    [
        [0, 4.14, 3.21, 3.27, 3.21, 3.25, 3.25, 3.21],
        [3.20, 0, 4.10, 3.19, 3.17, 3.17, 3.20, 3.17],
        [3.21, 3.16, 0, 4.16, 3.15, 3.17, 3.20, 3.16],
        [3.27, 3.19, 3.22, 0, 4.16, 3.22, 3.25, 3.19],
        [3.21, 3.17, 3.15, 3.23, 0, 4.13, 3.22, 3.17],
        [3.25, 3.17, 3.17, 3.22, 3.19, 0, 4.17, 3.18],
        [3.25, 3.20, 3.20, 3.25, 3.22, 3.23, 0, 4.14],
        [4.15, 3.17, 3.16, 3.19, 3.17, 3.18, 3.20, 0],
    ]
)

# (workload, s, delta): (Spectra, baseline) makespans from the reproduction of the paper's code.
REFERENCE_POINTS = {
    ("moe8", 4, 0.04): (0.351, 0.587),
    ("gpt32", 16, 0.04): (0.130, 0.194),
    ("standard", 16, 0.04): (0.139, 0.42),
}
# Mean baseline/Spectra ratio over SWITCHES x DELTAS.
REFERENCE_RATIOS = {"moe8": 1.9, "moe64": 2.4, "gpt32": 1.4, "gpt64": 1.4, "gpt128": 1.4, "standard": 2.5}


def normalize(m: NDArray[np.float64]) -> NDArray[np.float64]:
    return m / float(max(m.sum(axis=0).max(), m.sum(axis=1).max()))


def gpt32() -> NDArray[np.float64]:
    """32 GPUs: tensor-parallel pairs, pipeline (|i-j| = 8), DP ring (step 2 in groups of 8), |i-j| = 24."""
    n = 32
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    off = i != j
    d = np.zeros((n, n))
    d += off * (i // 2 == j // 2) * (680 * 125 / 1024)
    d += off * (np.abs(i - j) == 8) * (16 * 125 / 1024)
    ring = np.where(i % 8 < 6, j == i + 2, j == i - 6)
    d += off * ring * (741 / 1024)
    d += off * (np.abs(i - j) == 24) * (96 / 1024)
    return d


def workloads(standard_seeds: int) -> dict[str, list[NDArray[np.float64]]]:
    g = gpt32()
    return {
        "moe8": [normalize(MOE8)],
        "moe64": [normalize(scipy.linalg.block_diag(*[MOE8] * 8))],
        "gpt32": [normalize(g)],
        "gpt64": [normalize(scipy.linalg.block_diag(*[g] * 2))],
        "gpt128": [normalize(scipy.linalg.block_diag(*[g] * 4))],
        "standard": [normalize(generate("standard", n=100, rng=k)) for k in range(standard_seeds)],
    }


def makespan(
    d: NDArray[np.float64], s: int, delta: float, algorithm: str, seed: int = 0, order: Order = "index"
) -> float:
    if algorithm == "baseline" and order != "index":
        confs, _ = split_schedule(Demand.from_matrix(d), switches=s, delta=delta, rng=seed, order=order)
        sched = ocsched.Schedule(ports=d.shape[0], delta=delta, switches=confs)
    else:
        sched = ocsched.schedule(d, switches=s, delta=delta, algorithm=algorithm, rng=seed)
    ocsched.validate(sched, d).raise_if_invalid()
    return sched.makespan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5, help="baseline seeds per matrix (default 5)")
    ap.add_argument("--standard-seeds", type=int, default=5, help="standard matrices (seeds 0..k-1)")
    ap.add_argument("--peers", action="store_true", help="also run every peer at the reference points")
    ap.add_argument(
        "--split-order",
        choices=("index", "random"),
        default="index",
        help="the baseline split's cycle-search order (default index, as `baseline`)",
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    mats = workloads(args.standard_seeds)
    results: dict[tuple[str, int, float], tuple[float, float, float]] = {}
    print(
        f"{'workload':9} {'s':>3} {'delta':>6} {'spectra':>8} {'baseline':>9} {'(min..max)':>17} {'ratio':>6}"
    )
    for name, ds in mats.items():
        for s in SWITCHES:
            for delta in DELTAS:
                spec = [makespan(d, s, delta, "spectra") for d in ds]
                base = [
                    [makespan(d, s, delta, "baseline", k, args.split_order) for k in range(args.seeds)]
                    for d in ds
                ]
                flat = np.array(base).ravel()
                sp_mean, b_mean = float(np.mean(spec)), float(flat.mean())
                # ratio per matrix, then averaged (equal to b/s for a single matrix)
                ratio = float(np.mean([np.mean(b) / x for b, x in zip(base, spec, strict=True)]))
                results[name, s, delta] = (sp_mean, b_mean, ratio)
                print(
                    f"{name:9} {s:>3} {delta:>6} {sp_mean:>8.4f} {b_mean:>9.4f} "
                    f"({flat.min():.4f}..{flat.max():.4f}) {ratio:>6.3f}"
                )
    print("\nReference points (Spectra / baseline makespan):")
    for (name, s, delta), (ref_sp, ref_b) in REFERENCE_POINTS.items():
        sp_mean, b_mean, _ = results[name, s, delta]
        point = f"{name} s={s} delta={delta}"
        print(f"  {point:26} ours {sp_mean:.3f} / {b_mean:.3f}   reference ~{ref_sp:.3f} / ~{ref_b:.3f}")
    print("\nMean baseline/Spectra ratio over s in {4, 16} and delta in {0.01, 0.02, 0.04, 0.08}:")
    for name, ref in REFERENCE_RATIOS.items():
        ours = float(np.mean([results[name, s, d][2] for s in SWITCHES for d in DELTAS]))
        print(f"  {name:9} ours {ours:.2f}   reference ~{ref}")
    if args.peers:
        print("\nEvery peer at the reference points (mean over matrices; randomised peers seed 0):")
        print(f"  {'point':28}" + "".join(f"{a:>17}" for a in ("spectra", "baseline", *PEERS)))
        for name, s, delta in REFERENCE_POINTS:
            row = [results[name, s, delta][0], results[name, s, delta][1]]
            row += [float(np.mean([makespan(d, s, delta, a) for d in mats[name]])) for a in PEERS]
            print(f"  {f'{name} s={s} delta={delta}':28}" + "".join(f"{x:>17.4f}" for x in row))
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
