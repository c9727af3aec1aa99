"""The first run in a fresh environment: compile waits, a light command's overhead, import time.

Each measurement runs the ``ocsched`` console script (or ``python -c``) in a subprocess, with
an empty ``NUMBA_CACHE_DIR`` (a temporary directory) for the first runs:

- first ``ocsched schedule d.npy -s 4 -d 0.04`` of a 100 x 100 matrix (the standard workload,
  seed 0), wall and CPU seconds, and the second one (the cache now warm);
- ``ocsched bound`` on a 3 x 3 (warm: the median of three calls);
- ``python -c "import ocsched"`` (the median of three).

``--ref SRC`` runs the same commands on another source tree as well (e.g. an older commit
unpacked with ``git archive <commit> | tar -x -C /tmp/ref``; ``--ref /tmp/ref/src``), through
``PYTHONPATH``, and prints both columns:

    python benchmarks/cold_start.py --ref /tmp/ref/src
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BIN = Path(sys.executable).parent


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, of the child) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def measure(src: str | None, work: Path) -> dict[str, tuple[float, float]]:
    """Every measurement for one source tree (None: the installed ocsched)."""
    env = dict(os.environ)
    env.pop("NUMBA_DISABLE_JIT", None)
    if src is not None:
        env["PYTHONPATH"] = src
    cli = [sys.executable, "-c", "import sys; from ocsched.cli import main; sys.exit(main())"]
    out: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        sched = [*cli, "schedule", "d.npy", "-s", "4", "-d", "0.04"]
        out["first schedule (empty cache)"] = _run(sched, env, work)
        out["second schedule"] = _run(sched, env, work)
        runs = [_run([*cli, "bound", "s3.npy", "-s", "2", "-d", "0.1"], env, work) for _ in range(3)]
        out["bound 3x3 (warm)"] = (
            statistics.median(r[0] for r in runs),
            statistics.median(r[1] for r in runs),
        )
        runs = [_run([sys.executable, "-c", "import ocsched"], env, work) for _ in range(3)]
        out["import ocsched"] = _median(runs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ref", help="another source tree (its src/ directory) to measure as well")
    args = parser.parse_args()
    from ocsched.workloads import generate

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        np.save(work / "d.npy", generate("standard", n=100, seed=0, normalized=True))
        np.save(work / "s3.npy", np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0]], float))
        cols = {}
        if args.ref:
            cols["before (--ref)"] = measure(args.ref, work)
        cols["this tree"] = measure(None, work)
    names = list(next(iter(cols.values())))
    header = "| measurement | " + " | ".join(f"{c} wall / CPU s" for c in cols) + " |"
    print(header)
    print("|" + "---|" * (len(cols) + 1))
    for name in names:
        cells = " | ".join(f"{cols[c][name][0]:.2f} / {cols[c][name][1]:.2f}" for c in cols)
        print(f"| {name} | {cells} |")
    print(f"\nload: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
