"""Importing traces: speed of a 64-rank Kineto trace, peak memory of a 1 GB trace file.

Run ``python benchmarks/traces.py [--quick]`` (``make bench`` calls it with ``--quick``). The
traces are generated here (:mod:`ocsched.io.traces.synthetic`), in a temporary folder:

- ``speed``: 64 ranks (8 nodes x 8 GPUs) x 2,000 collectives each, Kineto JSON: per step a
  tensor-parallel all-reduce, all-gather and reduce-scatter in the 8 nodes' groups and an
  expert-parallel all-to-allv (per-peer splits) across the nodes, 8 groups running each at once,
  with a GEMM kernel and its CPU launch between collectives. Timed: ``read_trace`` in this
  process (wall seconds, best of three; ranks parsed by as many processes as CPUs), and
  ``ocsched import`` end to end in a subprocess. Target: <= 3 s on 2 cores.
- ``memory``: a 2-rank trace whose rank-0 file holds 1 GB of events (the collectives between
  millions of compute events); ``ocsched import`` runs in a subprocess whose resident memory is
  sampled every 20 ms (largest single process, and the proportional set size summed over the
  process and its workers). Target: <= 300 MB peak.

``--quick``: 8 ranks x 500 collectives, and a 100 MB file.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from ocsched.io import read_trace
from ocsched.io.traces import synthetic as S


def speed_trace(folder: Path, nodes: int, gpus: int, steps: int, filler: int) -> int:
    """Write the speed trace; return the collectives per rank."""
    ops: list[S.SyntheticOp] = []
    for step in range(steps):
        tp = [list(range(n * gpus, (n + 1) * gpus)) for n in range(nodes)]
        ep = [list(range(g, nodes * gpus, gpus)) for g in range(gpus)]
        for kind in ("all_reduce", "all_to_all", "all_gather", "reduce_scatter"):
            groups = ep if kind == "all_to_all" else tp
            for k, ranks in enumerate(groups):
                if kind == "all_to_all":
                    size = len(ranks)
                    rows = [[(3 * i + 5 * j + step) % 7 + 1 for j in range(size)] for i in range(size)]
                    ops.append(S.all_to_allv(rows, row_bytes=7168, ranks=ranks, gap_us=120.0, parallel=k > 0))
                else:
                    ops.append(S.collective(kind, 1 << 20, ranks=ranks, gap_us=80.0, parallel=k > 0))
    S.write(folder, ops, format="kineto", filler=filler)
    return 4 * steps


def memory_trace(folder: Path, target_bytes: int) -> int:
    """Write a 2-rank trace whose rank-0 file is about ``target_bytes``; return that file's size."""
    ops = [S.collective("all_reduce", 1 << 20, ranks=[0, 1], gap_us=1000.0) for _ in range(200)]
    # Measure one compute event's size, then pad rank 0 (only) with that many per collective.
    probe = folder / "probe"
    S.write(probe, ops[:2], format="kineto", filler=100)
    per_filler = (probe / "rank-0.json").stat().st_size / 200
    filler = max(1, int(target_bytes / len(ops) / per_filler))
    S.write(folder / "big", ops, format="kineto", filler=filler)
    S.write(folder / "small", ops, format="kineto")
    trace = folder / "trace"
    trace.mkdir()
    os.replace(folder / "big" / "rank-0.json", trace / "rank-0.json")
    os.replace(folder / "small" / "rank-1.json", trace / "rank-1.json")
    return (trace / "rank-0.json").stat().st_size


def peak_memory(cmd: list[str]) -> tuple[float, float, float, float]:
    """Run ``cmd``; return (wall s, peak RSS of its largest process MB, peak summed PSS MB, CPU s).

    CPU seconds: user + system of the process and the workers it waited for.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    top = psutil.Process(proc.pid)
    peak_rss = peak_pss = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak_rss, peak_pss
        while not stop.is_set():
            try:
                procs = [top, *top.children(recursive=True)]
                infos = []
                for p in procs:
                    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                        infos.append(p.memory_full_info())
                if infos:
                    peak_rss = max(peak_rss, max(i.rss for i in infos) / 2**20)
                    peak_pss = max(peak_pss, sum(getattr(i, "pss", i.rss) for i in infos) / 2**20)
            except psutil.NoSuchProcess:
                pass
            stop.wait(0.02)

    t0 = time.perf_counter()
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    thread.join()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.decode()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, peak_rss, peak_pss, cpu


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the parsing workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 ranks x 500 collectives, a 100 MB file")
    args = parser.parse_args()
    nodes, gpus, steps = (2, 4, 125) if args.quick else (8, 8, 500)
    size = (100 if args.quick else 1024) * 2**20
    ocsched = [sys.executable, "-m", "ocsched"]
    print(
        f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} at the start"
    )
    with tempfile.TemporaryDirectory(prefix="ocsched-bench-traces-") as tmp:
        root = Path(tmp)
        folder = root / "speed"
        per_rank = speed_trace(folder, nodes, gpus, steps, filler=1)
        total_mb = sum(f.stat().st_size for f in folder.iterdir()) / 2**20
        times, cpus = [], []
        for _ in range(3):
            t0, c0 = time.perf_counter(), _cpu()
            it = read_trace(folder, link_rate="400Gbps", time_unit="us")
            times.append(time.perf_counter() - t0)
            cpus.append(_cpu() - c0)
        cli, rss, pss, cli_cpu = peak_memory(
            [*ocsched, "import", str(folder), "--link-rate", "400Gbps", "--out", str(root / "it.json")]
        )
        print(f"\nspeed: {nodes * gpus} ranks x {per_rank} collectives, {total_mb:.0f} MB of Kineto JSON")
        print(
            f"  read_trace           {min(times):6.2f} s (best of 3: {', '.join(f'{t:.2f}' for t in times)})"
        )
        print(f"    CPU seconds (this process + parsing workers): {', '.join(f'{c:.2f}' for c in cpus)}")
        print(
            f"  ocsched import (CLI) {cli:6.2f} s, {cli_cpu:.2f} CPU s, peak RSS {rss:.0f} MB, "
            f"peak PSS {pss:.0f} MB"
        )
        print(f"  -> {len(it)} phases of {it.n} ports, {it.meta['trace']['operations']} operations")
        mem = root / "memory"
        mem.mkdir()
        big = memory_trace(mem, size)
        wall, rss, pss, _ = peak_memory(
            [*ocsched, "import", str(mem / "trace"), "--link-rate", "400Gbps", "--out", str(root / "m.json")]
        )
        print(f"\nmemory: a {big / 2**20:.0f} MB rank file (and a small one)")
        print(
            f"  ocsched import {wall:6.1f} s, peak RSS {rss:.0f} MB (largest process), peak PSS "
            f"{pss:.0f} MB (all)"
        )
        _, rss0, _, _ = peak_memory([sys.executable, "-c", "import ocsched.io, ocsched.cli"])
        print(f"  (the interpreter with ocsched imported alone: peak RSS {rss0:.0f} MB)")
    print(f"\nload average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} at the end")


if __name__ == "__main__":
    main()
