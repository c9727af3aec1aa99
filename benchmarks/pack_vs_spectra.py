"""spectra-pack against spectra and the lower bound on the reference workloads.

Run: ``.venv/bin/python benchmarks/pack_vs_spectra.py [--seeds 5]``.
"""

from __future__ import annotations

import argparse

import numpy as np

import ocsched
from ocsched.workloads import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    families = {
        "standard n=100": [generate("standard", n=100, rng=k) for k in range(args.seeds)],
        "moe8": [generate("moe8", normalize=True)],
        "gpt32": [generate("gpt32", normalize=True)],
    }
    print(f"{'instance':<16}{'s':>3}{'delta':>7}{'spectra':>10}{'pack':>10}{'gain':>8}{'bound':>9}")
    for name, mats in families.items():
        for s in (4, 16):
            for delta in (0.01, 0.02, 0.04, 0.08):
                rows = []
                for d in mats:
                    a = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra")
                    b = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-pack")
                    ocsched.validate(b, d).raise_if_invalid()
                    rows.append((a.makespan, b.makespan, a.lower_bound or 0.0))
                sp, pk, lb = np.mean(rows, axis=0)
                print(
                    f"{name:<16}{s:>3}{delta:>7}{sp:>10.4f}{pk:>10.4f}{100 * (1 - pk / sp):>7.1f}%{lb:>9.4f}"
                )


if __name__ == "__main__":
    main()
