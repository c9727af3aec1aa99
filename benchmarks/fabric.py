"""Issue 9's acceptance numbers: heterogeneous fabrics, rescheduling after a failure, partial model.

Run: ``.venv/bin/python benchmarks/fabric.py [--seeds 5] [--part grid,reschedule,partial,v1]``.

- grid: paper grid (standard n=100 x seeds, gpt32, moe8; s in {4, 16}; base delta in
  {.01, .02, .04, .08}), half the switches at delta and half at 10 delta: spectra-pack / fabric
  lower bound, and the gain over scheduling as if every switch had the worst delta.
- reschedule: a switch (the busiest) fails at half the makespan: ``reschedule`` is valid, its
  makespan against ``at`` + a fresh spectra-pack schedule of the same residual on the surviving
  switches, and its run time against the original schedule's.
- partial: the same instances (and a 64-GPU MoE matrix) under the partial model against
  all-stop, for spectra-pack and spectra-partial.
- v1: every schedule file in tests/data/schedules (written before fabrics) reads back identically.

Validity on random fabrics is a test (tests/model/test_fabric.py), not a benchmark.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import ocsched
from ocsched.fabric import Fabric
from ocsched.model import Schedule
from ocsched.reschedule import SwitchFailure, _kept, _residual, reschedule
from ocsched.workloads import generate

DELTAS = (0.01, 0.02, 0.04, 0.08)
SWITCHES = (4, 16)


def families(seeds: int) -> dict[str, list[Any]]:
    return {
        "standard": [generate("standard", n=100, rng=k) for k in range(seeds)],
        "gpt32": [generate("gpt32", normalize=True)],
        "moe8": [generate("moe8", normalize=True)],
    }


def mixed(s: int, delta: float, model: str = "all-stop") -> Fabric:
    return Fabric.from_deltas([delta] * (s // 2) + [10 * delta] * (s - s // 2), model=model)


def grid(fams: dict[str, list[Any]]) -> None:
    print("## Heterogeneous fabrics: half the switches at delta, half at 10 delta (spectra-pack)\n")
    print("| family | s | delta | makespan | fabric bound | ratio | as-if-worst | gain |")
    print("|---|---|---|---|---|---|---|---|")
    per_family: dict[str, list[tuple[float, float]]] = {}
    for name, mats in fams.items():
        for s in SWITCHES:
            for delta in DELTAS:
                rows = []
                for d in mats:
                    fab = mixed(s, delta)
                    sch = ocsched.schedule(d, fabric=fab, algorithm="spectra-pack")
                    ocsched.validate(sch, d).raise_if_invalid()
                    worst = ocsched.schedule(d, switches=s, delta=10 * delta, algorithm="spectra-pack")
                    rows.append((sch.makespan, float(sch.lower_bound or 0.0), worst.makespan))
                ms, lb, wm = np.mean(rows, axis=0)
                ratio = float(np.mean([a / b for a, b, _ in rows]))
                gain = float(np.mean([1 - a / c for a, _, c in rows]))
                per_family.setdefault(name, []).append((ratio, gain))
                print(
                    f"| {name} | {s} | {delta} | {ms:.4f} | {lb:.4f} | {ratio:.3f} | {wm:.4f} | "
                    f"{100 * gain:.1f}% |"
                )
    print("\n| family | mean spectra-pack / fabric bound | mean gain over as-if-worst-delta |")
    print("|---|---|---|")
    for name, vals in per_family.items():
        r, g = np.mean(vals, axis=0)
        print(f"| {name} | {r:.3f} | {100 * g:.1f}% |")
    allv = [v for vals in per_family.values() for v in vals]
    print(f"| all | {np.mean([r for r, _ in allv]):.3f} | {100 * np.mean([g for _, g in allv]):.1f}% |\n")


def _best_times(*calls: Callable[[], Any], repeat: int = 21) -> tuple[list[Any], list[float]]:
    """Each call's result and best of ``repeat`` wall times, the calls interleaved round by round.

    The machine is shared: the minimum is the signal, and interleaving keeps a slow spell from
    landing on one call only (their ratio is what is reported).
    """
    best, out = [np.inf] * len(calls), [None] * len(calls)
    for _ in range(repeat):
        for k, call in enumerate(calls):
            t0 = time.perf_counter()
            out[k] = call()
            best[k] = min(best[k], time.perf_counter() - t0)
    return out, best


def resched(fams: dict[str, list[Any]]) -> None:
    print("## A switch failing at half the makespan (spectra-pack, uniform fabric)\n")
    print("| family | s | delta | valid | makespan | fresh | ratio | time ratio |")
    print("|---|---|---|---|---|---|---|---|")
    worst_ratio, worst_time, times = 0.0, 0.0, []
    fam_of: list[str] = []
    for name, mats in fams.items():
        for s in SWITCHES:
            for delta in DELTAS:
                for d in mats[:2]:
                    sch = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-pack")
                    at = sch.makespan / 2
                    b = int(np.argmax(sch.loads()))
                    (_, new), (t_orig, t_new) = _best_times(
                        lambda d=d, s=s, delta=delta: ocsched.schedule(
                            d, switches=s, delta=delta, algorithm="spectra-pack"
                        ),
                        lambda d=d, sch=sch, b=b, at=at: reschedule(sch, d, SwitchFailure(b, at)),
                    )
                    ok = ocsched.validate(new, d).ok
                    # fresh: spectra-pack of the same residual on the surviving switches, from `at`
                    res = _residual(ocsched.model.as_demand(d), _kept(sch, at), new.on_fabric())
                    surv = Fabric.uniform(s - 1, delta) if s > 1 else None
                    fresh = at + ocsched.schedule(res, fabric=surv, algorithm="spectra-pack").makespan
                    ratio, tr = new.makespan / fresh, t_new / t_orig
                    worst_ratio, worst_time = max(worst_ratio, ratio), max(worst_time, tr)
                    times.append((t_new, t_orig))
                    fam_of.append(name)
                    print(
                        f"| {name} | {s} | {delta} | {ok} | {new.makespan:.4f} | {fresh:.4f} | "
                        f"{ratio:.3f} | {tr:.3f} |"
                    )
    for name in fams:
        r = [a / b for (a, b), fam in zip(times, fam_of, strict=True) if fam == name]
        print(f"{name}: time ratio median {np.median(r):.3f}, worst {max(r):.3f}")
    tn, to = np.array(times).T
    print(
        f"\nworst makespan ratio {worst_ratio:.3f} (target <= 1.05); time ratio median "
        f"{np.median(tn / to):.3f}, worst {worst_time:.3f} (target <= 0.2); median times: reschedule "
        f"{1e3 * np.median(tn):.1f} ms, original schedule {1e3 * np.median(to):.1f} ms\n"
    )


def partial(fams: dict[str, list[Any]]) -> None:
    print("## Partial reconfiguration against all-stop (uniform fabric, same scheduler)\n")
    fams = {**fams, "moe64": [generate("moe", gpus=64, rng=0, normalize=True)]}
    print("| family | algorithm | mean gain | worst (partial / all-stop) |")
    print("|---|---|---|---|")
    for name, mats in fams.items():
        for alg in ("spectra-pack", "spectra-partial"):
            ratios = []
            for s in SWITCHES:
                for delta in DELTAS:
                    for d in mats:
                        a = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-pack")
                        p = ocsched.schedule(
                            d, fabric=Fabric.uniform(s, delta, model="partial"), algorithm=alg
                        )
                        ocsched.validate(p, d).raise_if_invalid()
                        ratios.append(p.makespan / a.makespan)
            print(f"| {name} | {alg} | {100 * (1 - np.mean(ratios)):.2f}% | {max(ratios):.4f} |")
    print()


def v1() -> None:
    files = sorted((Path(__file__).parents[1] / "tests" / "data" / "schedules").glob("v1_*.json"))
    same = sum(
        Schedule.from_json(f.read_text()).to_json(indent=None if "compact" in f.name else 1) == f.read_text()
        for f in files
    )
    print(f"## v1 files\n\n{same} of {len(files)} v1 files written before fabrics read back byte for byte\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--part", default="grid,reschedule,partial,v1")
    args = parser.parse_args()
    fams = families(args.seeds)
    parts = set(args.part.split(","))
    if "grid" in parts:
        grid(fams)
    if "reschedule" in parts:
        resched(fams)
    if "partial" in parts:
        partial(fams)
    if "v1" in parts:
        v1()


if __name__ == "__main__":
    main()
