"""One failed link on a fabric of four switches: what it costs spectra-pack (and spectra).

Run: ``.venv/bin/python benchmarks/failures.py [--seeds 5] [--before /path/to/old/src]``.

Random dense matrices (``random_instance(n, density=1.0, rng=seed)``), n in {8, 32, 64}, four
identical switches, delta in {0.01, 0.04, 0.1}; one link fails from t = 0 (a random port on a
random switch, drawn from the seed). Per (n, delta), the means over the seeds of the makespan with
the failure over the makespan without it, and over the fabric lower bound
(``lower_bound(D, fabric=f)``), with the worst seed. Every schedule is validated. ``--before``
runs the same measurement with another source tree (e.g. the code before a change) in a
subprocess and prints both.

The bound itself rises with the failure: the failed port's line must be served by three
switches, which on dense matrices costs up to a third more at n = 64 (the delays of its n - 1
entries dominate), so the fail / no-failure ratio cannot reach 1 there; fail / bound says how
close to what is possible a schedule is.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

NS = (8, 32, 64)
DELTAS = (0.01, 0.04, 0.1)
SWITCHES = 4
ALGORITHMS = ("spectra-pack", "spectra")


def measure(seeds: int) -> dict[str, list[float]]:
    """``{"n,delta,algorithm": [fail/unfail, fail/LB, LB_fail/unfail, seconds] per seed}``."""
    from ocsched import lower_bound, schedule, validate
    from ocsched.fabric import Fabric, LinkDown
    from ocsched.workloads.random import random_instance

    out: dict[str, list[float]] = {}
    for n in NS:
        for delta in DELTAS:
            for seed in range(seeds):
                d = random_instance(n, density=1.0, rng=seed)
                rng = np.random.default_rng(seed)
                port, switch = int(rng.integers(n)), int(rng.integers(SWITCHES))
                healthy = Fabric.uniform(SWITCHES, delta)
                failed = healthy.with_failures(failed_links=[LinkDown(port, switch)])
                lb = lower_bound(d, fabric=failed)
                for alg in ALGORITHMS:
                    base = schedule(d, fabric=healthy, algorithm=alg)
                    t = time.perf_counter()
                    s = schedule(d, fabric=failed, algorithm=alg)
                    elapsed = time.perf_counter() - t
                    report = validate(s, d)
                    if not report.ok:
                        raise SystemExit(f"invalid schedule: n={n} delta={delta} seed={seed} {alg}")
                    row = [s.makespan / base.makespan, s.makespan / lb, lb / base.makespan, elapsed]
                    out.setdefault(f"{n},{delta},{alg}", []).extend(row)
    return out


def table(now: dict[str, list[float]], before: dict[str, list[float]] | None) -> None:
    for alg in ALGORITHMS:
        print(f"\n## {alg}: one failed link from t = 0, s = {SWITCHES}\n")
        head = "| n | delta | fail/unfail | worst | fail/LB | worst | LB/unfail | s per run |"
        if before is not None:
            head += " before: fail/unfail | before: fail/LB |"
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for n in NS:
            for delta in DELTAS:
                key = f"{n},{delta},{alg}"
                rows = np.array(now[key]).reshape(-1, 4)
                cells = [
                    f"{rows[:, 0].mean():.4f}",
                    f"{rows[:, 0].max():.4f}",
                    f"{rows[:, 1].mean():.4f}",
                    f"{rows[:, 1].max():.4f}",
                    f"{rows[:, 2].mean():.4f}",
                    f"{rows[:, 3].mean():.2f}",
                ]
                if before is not None:
                    old = np.array(before[key]).reshape(-1, 4)
                    cells += [f"{old[:, 0].mean():.4f}", f"{old[:, 1].mean():.4f}"]
                print(f"| {n} | {delta} | " + " | ".join(cells) + " |")
        ratios = np.concatenate(
            [np.array(now[f"{n},{d},{alg}"]).reshape(-1, 4)[:, 0] for n in NS for d in DELTAS]
        )
        print(f"\nmean fail/unfail over every cell: {ratios.mean():.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--before", help="source tree (its src/) to measure the same way, in a subprocess")
    ap.add_argument("--json", action="store_true", help="print the raw measurements as JSON")
    args = ap.parse_args()
    before = None
    if args.before:
        env = {**os.environ, "PYTHONPATH": os.path.join(args.before, "src")}
        res = subprocess.run(
            [sys.executable, __file__, "--seeds", str(args.seeds), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        before = json.loads(res.stdout)
    now = measure(args.seeds)
    if args.json:
        print(json.dumps(now))
        return
    table(now, before)


if __name__ == "__main__":
    main()
