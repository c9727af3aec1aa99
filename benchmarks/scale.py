"""Speed and memory at real scale: the fast Spectra decomposition against the reference solver.

Run ``python benchmarks/scale.py [--quick]`` (``make bench`` calls it). Each measurement runs in
its own subprocess, so the peak memory column (the peak resident memory of that process: the
interpreter, numpy/scipy/numba, the instance and the solver) belongs to one solver on one instance. Times are
CPU seconds of that process for decomposition + placement (``spectra``: equalize placement,
``spectra-pack``: pack), after a warm-up call so that numba's compilation (cached on disk) is
not counted. The reference solver is skipped where it would take minutes (dense n >= 1024).

Columns: instance, algorithm, n, nnz, reference time, new time, ratio, peak memory of the new
run, makespan new/reference, makespan/lower bound. Then the time of ``validate`` and
``lower_bound`` on the new schedule, and the peers at standard n=2048 (against the previous code
for Eclipse, kept as ``eclipse_decompose(..., method="reference")``; the other peers' previous
code is not kept).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

S, DELTA = 16, 0.04


def _dense(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.random((n, n))
    np.fill_diagonal(d, 0.0)
    return d / max(d.sum(0).max(), d.sum(1).max())


def _instance(name: str) -> np.ndarray:
    from ocsched.workloads import generate
    from ocsched.workloads._common import block_diagonal

    kind, _, arg = name.partition(":")
    if kind == "dense":
        return _dense(int(arg))
    if kind == "moe":
        block = generate("moe", gpus=256, experts=256, rng=0, normalize=True)
        return block_diagonal(block, int(arg) // 256)
    if kind == "standard":
        # The generator caps n for its CLI users (each of its 16 flows is an n x n assignment);
        # the benchmark lifts the cap for itself only.
        mod = sys.modules["ocsched.workloads.standard"]
        cap = mod.MAX_N
        mod.MAX_N = max(cap, int(arg))
        try:
            return generate("standard", n=int(arg), flows=16, rng=0, normalize=True)
        finally:
            mod.MAX_N = cap
    if kind == "gpt32":
        return generate("gpt32", copies=int(arg), normalize=True)
    raise ValueError(name)


def _makespan(switches: Any) -> float:
    return max((c.end for sw in switches for c in sw), default=0.0)


def _child(path: str, mode: str) -> None:
    """Run one solver on the saved instance; print one JSON line."""
    from ocsched.assign import place
    from ocsched.bounds import lower_bound
    from ocsched.decompose import DECOMPOSERS, decompose
    from ocsched.model import Demand
    from ocsched.schedulers import SCHEDULERS, schedule
    from ocsched.validation import validate

    z = np.load(path)
    dem = Demand(int(z["n"]), z["rows"], z["cols"], z["values"])
    out: dict[str, Any] = {}
    warm = Demand.from_matrix(_dense(6))
    if mode in ("new", "ref"):
        method = "spectra" if mode == "new" else "spectra-reference"
        for placement in ("equalize", "pack"):  # load (or compile) every kernel timed below
            place(decompose(warm, method=method), switches=S, delta=DELTA, method=placement)
        t = time.process_time()
        dec = decompose(dem, method=method)
        t_dec = time.process_time() - t
        for alg, placement in (("spectra", "equalize"), ("spectra-pack", "pack")):
            t = time.process_time()
            sw, _ = place(dec, switches=S, delta=DELTA, method=placement)
            out[alg] = {"time": t_dec + time.process_time() - t, "makespan": _makespan(sw)}
        if mode == "new":
            t = time.process_time()
            sched = schedule(dem, switches=S, delta=DELTA, algorithm="spectra")
            out["schedule_time"] = time.process_time() - t
            t = time.process_time()
            validate(sched, dem)
            out["validate"] = time.process_time() - t
            t = time.process_time()
            out["bound"] = lower_bound(dem, switches=S, delta=DELTA)
            out["bound_time"] = time.process_time() - t
    elif mode == "eclipse-reference":  # Eclipse's previous search, kept as method="reference"
        from ocsched.decompose.eclipse import eclipse_decompose

        eclipse_decompose(warm, delta=DELTA, method="reference")
        t = time.process_time()
        dec = eclipse_decompose(dem, delta=DELTA, method="reference")
        sw, _ = place(dec, switches=S, delta=DELTA, method="equalize")  # the eclipse scheduler's placement
        out[mode] = {"time": time.process_time() - t, "makespan": _makespan(sw)}
    else:  # a peer scheduler
        assert (mode in SCHEDULERS and mode not in DECOMPOSERS) or mode in SCHEDULERS
        schedule(warm, switches=2, delta=DELTA, algorithm=mode, rng=0)
        t = time.process_time()
        sched = schedule(dem, switches=S, delta=DELTA, algorithm=mode, rng=0)
        out[mode] = {"time": time.process_time() - t, "makespan": sched.makespan}
    out["peak_mb"] = _peak_mb()
    print(json.dumps(out))


def _peak_mb() -> float:
    """This process's peak resident memory. ``ru_maxrss`` keeps the parent's peak across
    fork + exec on Linux, so the kernel's per-image high-water mark is read where it exists."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run(path: Path, mode: str, timeout: float) -> dict[str, Any] | None:
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(path), mode],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return None
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small instances only (a minute)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per measurement")
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    from ocsched.model import Demand

    # (instance, run the reference?)
    if args.quick:
        cases = [("dense:256", True), ("moe:256", True), ("standard:1024", True), ("gpt32:64", True)]
        peers: list[str] = []
    else:
        cases = [
            ("dense:512", True),
            ("dense:1024", False),
            ("dense:2048", False),
            ("moe:256", True),
            ("moe:1024", False),
            ("standard:1024", True),
            ("standard:4096", True),
            ("gpt32:64", True),
        ]
        peers = ["baseline", "baseline-eclipse", "eclipse", "bvn", "solstice"]
    header = (
        f"{'instance':<15} {'algorithm':<16} {'n':>5} {'nnz':>8} {'ref s':>8} {'new s':>8} "
        f"{'ratio':>7} {'peak MB':>8} {'mk new/ref':>10} {'mk/LB':>7}"
    )
    print(f"s={S}, delta={DELTA}, line sums 1; CPU seconds; '-' = not run (see the docstring)")
    print(header)
    print("-" * len(header))
    extra: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, with_ref in [*cases, *[("standard:2048", False)] * bool(peers)]:
            dem = Demand.from_matrix(_instance(name))
            path = Path(tmp) / "d.npz"
            np.savez(path, n=dem.n, rows=dem.rows, cols=dem.cols, values=dem.values)
            if name == "standard:2048" and peers:
                for peer in peers:
                    got = _run(path, peer, args.timeout)
                    new_t = f"{got[peer]['time']:.2f}" if got else "timeout"
                    peak = f"{got['peak_mb']:.0f}" if got else "-"
                    ref_t, ratio, mk = "-", "-", "-"
                    if peer == "eclipse" and got:  # the one peer whose previous code is kept
                        ref = _run(path, "eclipse-reference", args.timeout)
                        if ref:
                            r = ref["eclipse-reference"]
                            ref_t, ratio = f"{r['time']:.2f}", f"{r['time'] / got[peer]['time']:.1f}x"
                            mk = f"{got[peer]['makespan'] / r['makespan']:.5f}"
                    print(
                        f"{name:<15} {peer:<16} {dem.n:>5} {dem.nnz:>8} {ref_t:>8} {new_t:>8} "
                        f"{ratio:>7} {peak:>8} {mk:>10} {'-':>7}",
                        flush=True,
                    )
                continue
            new = _run(path, "new", args.timeout)
            ref = _run(path, "ref", args.timeout) if with_ref else None
            for alg in ("spectra", "spectra-pack"):
                if new is None:
                    print(f"{name:<15} {alg:<16} {dem.n:>5} {dem.nnz:>8} new run failed or timed out")
                    continue
                nt, nm = new[alg]["time"], new[alg]["makespan"]
                rt = f"{ref[alg]['time']:.2f}" if ref else "-"
                ratio = f"{ref[alg]['time'] / nt:.1f}x" if ref else "-"
                mk = f"{nm / ref[alg]['makespan']:.5f}" if ref else "-"
                print(
                    f"{name:<15} {alg:<16} {dem.n:>5} {dem.nnz:>8} {rt:>8} {nt:>8.2f} {ratio:>7} "
                    f"{new['peak_mb']:>8.0f} {mk:>10} {nm / new['bound']:>7.4f}",
                    flush=True,
                )
            if new is not None:
                extra.append(
                    f"{name:<15} schedule() {new['schedule_time']:.2f} s, validate {new['validate']:.2f} s, "
                    f"lower_bound {new['bound_time']:.2f} s"
                )
    print()
    print("validate / lower_bound on the new schedule (CPU s):")
    print("\n".join(extra))


if __name__ == "__main__":
    main()
