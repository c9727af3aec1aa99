"""Reproduce the core issue's reference numbers: Spectra on MoE8 and the standard benchmark.

Run: ``.venv/bin/python benchmarks/core_reference.py [--seeds 20]``. Prints measured means next to
the values from a reproduction of the paper's code.
"""

from __future__ import annotations

import argparse

import numpy as np

import ocsched
from ocsched.workloads import generate

REFERENCE = {
    "spectra": {0.01: 0.086, 0.02: 0.104, 0.04: 0.139, 0.08: 0.209},
    "spectra-greedy": {0.01: 0.194, 0.02: 0.204, 0.04: 0.224, 0.08: 0.264},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    moe8 = generate("moe8", normalize=True)
    s = ocsched.schedule(moe8, switches=4, delta=0.04)
    print(f"MoE8 s=4 delta=0.04: spectra {s.makespan:.4f} (reference ~0.351), bound {s.lower_bound:.4f}")
    print(f"\nStandard benchmark n=100 s=16, mean over {args.seeds} seeds (reference in brackets):")
    print(f"{'delta':>6} {'spectra':>16} {'spectra-greedy':>16} {'bound':>8}")
    mats = [generate("standard", n=100, rng=k) for k in range(args.seeds)]
    for delta in (0.01, 0.02, 0.04, 0.08):
        row = {}
        bounds = []
        for alg in ("spectra", "spectra-greedy"):
            ms = []
            for d in mats:
                sched = ocsched.schedule(d, switches=16, delta=delta, algorithm=alg)
                ocsched.validate(sched, d).raise_if_invalid()
                ms.append(sched.makespan)
                bounds.append(sched.lower_bound or 0.0)
            row[alg] = float(np.mean(ms))
        cells = " ".join(f"{row[a]:>8.4f} [{REFERENCE[a][delta]:.3f}]" for a in row)
        print(f"{delta:>6} {cells} {np.mean(bounds):>8.4f}")


if __name__ == "__main__":
    main()
