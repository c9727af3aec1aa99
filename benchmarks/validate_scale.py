"""Reading and validating version-2 schedule files: time against file size (linear, not quadratic).

Run ``python benchmarks/validate_scale.py [--quick]`` (``make bench`` calls it). Each row builds
one schedule file and times ``Schedule.from_json`` and ``validate`` on it (best of three, CPU
seconds of this process). Three shapes, each doubled from row to row:

- ``windows``: all-stop, 2 switches, a down window between every two configurations and a link
  failing late (every configuration is checked against every window by a scan of the windows);
- ``partial``: the partial model, 2 switches, consecutive configurations sharing half of their
  circuits (kept circuits, new circuits whose ports' last use must be found), windows as above;
- ``switches``: many switches, few configurations each, a failed link per switch (per-switch costs).

The ``x`` columns are the ratio to the previous row: about 2 when the time is linear in the file
size (the file doubles each row), 4 when quadratic (as it was while each configuration was
checked against every window). Target: a 300 KB file read and validated in under a second.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.model import Configuration, Demand, Schedule
from ocsched.validation import validate

N = 32  # ports
WIDTH = 6  # circuits per configuration


def build(shape: str, k: int, seed: int = 0) -> tuple[str, Demand]:
    """A valid schedule of about ``k`` configurations of the given shape, as JSON, and its demand."""
    rng = np.random.default_rng(seed)
    delta = 0.1
    s = 2 if shape != "switches" else max(1, k // 4)
    per = -(-k // s)
    model = "partial" if shape == "partial" else "all-stop"
    switches, down, links = [], [], []
    served: dict[tuple[int, int], float] = {}
    for b in range(s):
        confs = []
        t = delta
        prev: tuple[np.ndarray, np.ndarray] | None = None
        for c in range(per):
            if shape == "partial" and prev is not None and c % 2:
                # keep the first half of the previous circuits, light new ones on unused ports
                keep = WIDTH // 2
                ins = np.concatenate(
                    [
                        prev[0][:keep],
                        rng.choice(np.setdiff1d(np.arange(N), prev[0]), WIDTH - keep, replace=False),
                    ]
                )
                outs = np.concatenate(
                    [
                        prev[1][:keep],
                        rng.choice(np.setdiff1d(np.arange(N), prev[1]), WIDTH - keep, replace=False),
                    ]
                )
                t = t + delta  # new circuits: their ports were dark for delta (the kept ones wait)
            else:
                ins = rng.choice(N, WIDTH, replace=False)
                outs = rng.choice(N, WIDTH, replace=False)
            w = 0.5
            confs.append(Configuration.sparse(t, w, ins, outs, ports=N))
            for i, j in zip(ins.tolist(), outs.tolist(), strict=True):
                served[(i, j)] = served.get((i, j), 0.0) + w  # kept gaps add more: D stays served
            prev = (ins, outs)
            end = t + w
            if shape != "switches":
                down.append(SwitchDown(b, end + 0.1, end + 0.2))
                t = end + 0.2 + delta
            else:
                t = end + delta
        links.append(LinkDown(int(rng.integers(N)), b, 1e9))
        switches.append(tuple(confs))
    fabric = Fabric((Switch(delta),) * s, tuple(down), tuple(links), model)
    sched = Schedule(ports=N, delta=delta, switches=tuple(switches), algorithm="bench", fabric=fabric)
    keys = sorted(served)
    dem = Demand(
        N,
        np.array([i for i, _ in keys], np.int64),
        np.array([j for _, j in keys], np.int64),
        np.array([served[x] for x in keys]),
    )
    return sched.to_json(), dem


def _best(fn: object, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()  # type: ignore[operator]
        times.append(time.process_time() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller files (up to ~600 KB)")
    args = parser.parse_args()
    sizes = [500, 1000, 2000, 4000] if args.quick else [500, 1000, 2000, 4000, 8000, 16000]
    print(f"{'shape':9} {'configs':>8} {'KB':>8} {'read s':>8} {'x':>5} {'validate s':>11} {'x':>5}  ok")
    for shape in ("windows", "partial", "switches"):
        prev: tuple[float, float] | None = None
        for k in sizes:
            text, dem = build(shape, k)
            sched = Schedule.from_json(text)
            report = validate(sched, dem)
            read = _best(lambda: Schedule.from_json(text))  # noqa: B023 (called at once)
            check = _best(lambda: validate(sched, dem))  # noqa: B023
            rx = f"{read / prev[0]:5.2f}" if prev and prev[0] > 0 else "    -"
            vx = f"{check / prev[1]:5.2f}" if prev and prev[1] > 0 else "    -"
            print(
                f"{shape:9} {sched.num_configurations:8d} {len(text) / 1e3:8.0f} {read:8.3f} {rx} "
                f"{check:11.3f} {vx}  {report.ok}"
            )
            prev = (read, check)


if __name__ == "__main__":
    main()
