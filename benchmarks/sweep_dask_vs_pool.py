"""Time a 1,000-run sweep on the local process pool and on a Dask LocalCluster (with and without batching).

Run by hand (not part of the test suite)::

    .venv/bin/python benchmarks/sweep_dask_vs_pool.py --workers 2

Each mode writes a fresh results directory in a temporary folder; the timings cover
``run_sweep`` only (the pool's process start-up is included, the cluster's is reported apart,
since a cluster is started once and reused across sweeps). Rows of every mode are checked equal
(except wall time) before the timings are printed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from ocsched import sweep

CONFIG: dict[str, Any] = {
    "switches": [4, 16],
    "delta": [0.04, 0.08],
    "algorithms": ["spectra", "spectra-greedy"],
    "workloads": [{"name": "standard", "label": "Standard n=64", "seeds": 125, "options": {"n": 64}}],
}


def _rows(out: Path) -> list[dict[str, Any]]:
    rows = sweep.read_results(out).to_pylist()
    return sorted(({k: v for k, v in r.items() if k != "wall_time_s"} for r in rows), key=lambda r: r["key"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--repeat", type=int, default=2, help="Time each mode this many times; keep the best."
    )
    args = parser.parse_args()

    import distributed

    runs = len(sweep.expand(CONFIG))
    print(f"{runs} runs, {args.workers} workers, best of {args.repeat}")
    times: dict[str, float] = {}
    rows: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        startup = time.perf_counter() - t0
        modes: dict[str, dict[str, Any]] = {
            "local pool": {"workers": args.workers},
            "dask, batched": {"cluster": cluster.scheduler_address},
            "dask, 1 run per task": {"cluster": cluster.scheduler_address, "batch_size": 1},
        }
        try:
            for k in range(args.repeat):
                for name, kwargs in modes.items():
                    out = Path(tmp) / f"{name.replace(' ', '_').replace(',', '')}-{k}"
                    summary = sweep.run_sweep(CONFIG, out, **kwargs)
                    assert summary.done == runs and summary.failed == 0, summary
                    times[name] = min(times.get(name, float("inf")), summary.elapsed_s)
                    rows[name] = _rows(out)
                    print(f"  {name:<22} {summary.elapsed_s:7.2f} s  ({summary.batches} tasks)", flush=True)
        finally:
            cluster.close()
    first = next(iter(rows.values()))
    assert all(r == first for r in rows.values()), "modes disagree"
    print(f"\nLocalCluster start-up: {startup:.2f} s (not included)")
    base = times["local pool"]
    for name, t in times.items():
        print(f"{name:<22} {t:7.2f} s   {t / base:5.2f}x the local pool")


if __name__ == "__main__":
    main()
