"""Fingerprint every scheduler's output on fixed instances, to show a refactoring changes nothing.

Each case (an instance, a fabric, a scheduler or an iteration scheduler, a reschedule, a bound)
is run through the public API only, and its result is reduced to a SHA-256 of its JSON form
without the run time (``meta.runtime_s``) and under the current scheduler names (:data:`RENAMES`). Run it
before and after a change and compare:

    python benchmarks/fingerprint.py --out before.json
    ... change the code ...
    python benchmarks/fingerprint.py --out after.json --compare before.json

``--compare`` prints every case whose fingerprint differs (exit code 1 if any) and the count of
identical ones. Instances: the standard benchmark (n = 100, two seeds, 8 and 64 flows per port),
the paper's GPT32/64 and MoE8/64, synthetic MoE with 16 and 64 GPUs, a dense 256 x 256 matrix;
uniform fabrics at three (s, delta) points; a mixed-delay-and-rate fabric, one with a down window
and a failed link, and a partial one; tiny instances for the exact solver; two iteration
workloads; reschedules after a switch and a link failure; plain and strong lower bounds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import ocsched
from ocsched import Fabric, LinkDown, LinkFailure, Switch, SwitchDown, SwitchFailure
from ocsched.workloads import generate, generate_iteration
from ocsched.workloads.random import random_instance

#: Schedulers renamed since fingerprints were first taken (old name: new name). Outputs and case
#: names are compared under the new names, so a run of an older version compares with this one.
RENAMES = {"spectra-noeq": "spectra-greedy", "spectra-bff": "spectra-partial"}


def _renamed(text: str) -> str:
    for old, new in RENAMES.items():
        text = text.replace(old, new)
    return text


def _digest(data: Any) -> str:
    text = _renamed(json.dumps(data, sort_keys=True, allow_nan=True))
    return hashlib.sha256(text.encode()).hexdigest()


def _schedule_digest(sched: Any) -> str:
    data = sched.to_dict()
    meta = dict(data.get("meta", {}))
    meta.pop("runtime_s", None)
    data["meta"] = meta
    return _digest(data)


def _instances() -> dict[str, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a deprecated spelling must not stop the comparison
        out = {
            "standard-s0": generate("standard", n=100, rng=0, normalize=True),
            "standard-s1": generate("standard", n=100, rng=1, normalize=True),
            "standard-f8": generate("standard", n=100, flows=8, rng=0, normalize=True),
            "standard-f64": generate("standard", n=100, flows=64, rng=0, normalize=True),
            "gpt32": generate("gpt32", normalize=True),
            "gpt64": generate("gpt32", copies=2, normalize=True),
            "moe8": generate("moe8", normalize=True),
            "moe64": generate("moe8", copies=8, normalize=True),
            "moe-16": generate("moe", gpus=16, rng=0, normalize=True, link_gbps=100),
            "moe-64": generate("moe", gpus=64, rng=0, normalize=True, link_gbps=100),
        }
    d = np.random.default_rng(0).random((256, 256))
    np.fill_diagonal(d, 0.0)
    out["dense256"] = d / max(d.sum(0).max(), d.sum(1).max())
    return out


def _fabrics(delta: float) -> dict[str, Fabric]:
    mixed = Fabric.from_deltas([delta, 10 * delta, delta, 10 * delta], rates=[1.0, 1.0, 2.0, 2.0])
    failing = Fabric.uniform(4, delta).with_failures(
        down=[SwitchDown(1, 0.05, 0.12)], failed_links=[LinkDown(port=3, switch=2)]
    )
    return {"mixed": mixed, "failing": failing, "partial": Fabric.uniform(4, delta, model="partial")}


def cases() -> dict[str, Callable[[], str]]:
    """Every case by name: a function returning its fingerprint."""
    out: dict[str, Callable[[], str]] = {}
    mats = _instances()
    algs = list(ocsched.SCHEDULERS)
    for name, d in mats.items():
        for s, delta in ((4, 0.01), (16, 0.04), (4, 0.08)):
            for alg in algs:
                if alg == "exact" or (alg == "spectra-opt" and d.shape[0] > 64):
                    continue
                if ocsched.SCHEDULERS[alg].requires:
                    continue

                def run(d: np.ndarray = d, s: int = s, delta: float = delta, alg: str = alg) -> str:
                    return _schedule_digest(
                        ocsched.schedule(d, switches=s, delta=delta, algorithm=alg, rng=0)
                    )

                out[f"{name}/s{s}/d{delta}/{alg}"] = run

            def bounds(d: np.ndarray = d, s: int = s, delta: float = delta) -> str:
                return _digest(
                    [
                        ocsched.lower_bound(d, switches=s, delta=delta).hex(),
                        ocsched.lower_bound(d, switches=s, delta=delta, strong=True).hex(),
                    ]
                )

            out[f"{name}/s{s}/d{delta}/bounds"] = bounds
    for name in ("standard-s0", "moe8", "gpt32"):
        d = mats[name]
        for fname, fab in _fabrics(0.04).items():
            for alg in algs:
                if alg == "exact" or (alg == "spectra-opt" and d.shape[0] > 64):
                    continue

                def run_f(d: np.ndarray = d, fab: Fabric = fab, alg: str = alg) -> str:
                    try:
                        return _schedule_digest(ocsched.schedule(d, fabric=fab, algorithm=alg, rng=0))
                    except ocsched.InvalidInputError as exc:  # refused: the refusal is the result
                        return _digest(["refused", str(exc)])

                out[f"{name}/{fname}/{alg}"] = run_f

            def bound_f(d: np.ndarray = d, fab: Fabric = fab) -> str:
                return _digest(ocsched.lower_bound(d, fabric=fab).hex())

            out[f"{name}/{fname}/bound"] = bound_f
    for seed in range(6):
        d = random_instance(4, density=0.6, rng=seed)

        def run_x(d: np.ndarray = d) -> str:
            return _schedule_digest(ocsched.schedule(d, switches=2, delta=0.04, algorithm="exact"))

        out[f"random4-{seed}/exact"] = run_x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        its = {
            "gpt-iteration": generate_iteration("gpt-iteration", rng=0),
            "moe-iteration": generate_iteration("moe-iteration", gpus=16, layers=4, rng=0),
        }
    for name, it in its.items():
        for delta in (1e-4, 1e-3):
            for ialg in ("independent", "spectra-seq"):

                def run_i(it: Any = it, delta: float = delta, ialg: str = ialg) -> str:
                    return _schedule_digest(
                        ocsched.schedule_iteration(it, switches=16, delta=delta, algorithm=ialg, rng=0)
                    )

                out[f"{name}/d{delta}/{ialg}"] = run_i
        mixed = Fabric((Switch(1e-4), Switch(1e-3, rate=2.0)) * 4)

        def run_if(it: Any = it, fab: Fabric = mixed) -> str:
            return _schedule_digest(ocsched.schedule_iteration(it, fabric=fab, rng=0))

        out[f"{name}/mixed/spectra-seq"] = run_if
    d = mats["standard-s0"]
    for kind in ("switch", "link"):

        def run_r(d: np.ndarray = d, kind: str = kind) -> str:
            sched = ocsched.schedule(d, switches=4, delta=0.04, algorithm="spectra-pack")
            at = sched.makespan / 2
            failure = SwitchFailure(1, at) if kind == "switch" else LinkFailure(port=5, switch=1, at=at)
            return _schedule_digest(ocsched.reschedule(sched, d, failure))

        out[f"standard-s0/reschedule-{kind}"] = run_r
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="write the fingerprints here (JSON)")
    parser.add_argument("--compare", type=Path, help="an earlier --out file to compare with")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    args = parser.parse_args()
    t0 = time.perf_counter()
    got: dict[str, str] = {}
    for name, run in cases().items():
        if args.only in name:
            try:
                got[_renamed(name)] = run()
            except Exception as exc:  # a crash is a result too: it must not change either
                got[_renamed(name)] = _digest(["error", type(exc).__name__, str(exc)])
    args.out.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    print(f"{len(got)} cases in {time.perf_counter() - t0:.1f} s -> {args.out}")
    if args.compare is None:
        return 0
    old = json.loads(args.compare.read_text())
    common = sorted(set(old) & set(got))
    differ = [k for k in common if old[k] != got[k]]
    for k in differ:
        print(f"DIFFERS {k}")
    for k in sorted(set(old) ^ set(got)):
        print(f"ONLY IN {'before' if k in old else 'after'} {k}")
    print(f"{len(common) - len(differ)} of {len(common)} cases identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
