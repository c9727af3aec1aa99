"""Run every benchmark in this folder and print one summary table (``make bench``).

Each ``benchmarks/*.py`` (this file aside) runs in its own process, with ``--quick`` when it
accepts that flag (``BENCH_FULL=1`` runs the full versions). Its output goes to
``benchmarks/results/<name>.txt``; the table lists each benchmark's exit status, wall time and the
file holding its own tables. Benchmarks time themselves against a reference run in the same
process where they can: this machine is shared, so read ratios rather than absolute times.

Run: ``.venv/bin/python benchmarks/run.py [NAME ...] [--timeout SECONDS]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per benchmark")
    args = parser.parse_args()
    scripts = sorted(p for p in HERE.glob("*.py") if p.name != "run.py")
    if args.names:
        scripts = [p for p in scripts if p.stem in args.names]
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    full = os.environ.get("BENCH_FULL") == "1"
    rows = []
    for script in scripts:
        cmd = [sys.executable, str(script)]
        if not full and "--quick" in script.read_text():
            cmd.append("--quick")
        out = out_dir / f"{script.stem}.txt"
        print(f"running {' '.join(cmd[1:])} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=False)
            status = "ok" if done.returncode == 0 else f"exit {done.returncode}"
            out.write_text(done.stdout + (f"\n--- stderr ---\n{done.stderr}" if done.stderr else ""))
        except subprocess.TimeoutExpired:
            status = f"timeout {args.timeout:g} s"
            out.write_text("")
        rows.append((script.stem, status, time.perf_counter() - t0, out.relative_to(HERE.parent)))
    width = max((len(r[0]) for r in rows), default=9)
    print(f"{'benchmark':<{width}}  {'status':<14} {'wall s':>8}  output")
    for name, status, secs, path in rows:
        print(f"{name:<{width}}  {status:<14} {secs:8.1f}  {path}")
    return 0 if all(r[1] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
