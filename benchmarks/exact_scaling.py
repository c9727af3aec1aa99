"""How large an instance can ``ocsched.exact.solve_exact`` solve to proved optimality within its node limit?

Run from the repository root::

    .venv/bin/python benchmarks/exact_scaling.py      # n = 3..6, default node limit (deterministic)
    .venv/bin/python benchmarks/exact_scaling.py --max-n 5 --node-limit 1000 --time-limit 60

For each n, solves the same seeded instances from two families, ``random`` (each off-diagonal
entry nonzero with probability 0.5, uniform values) and ``standard`` (the skewed benchmark with
``flows = min(4, n - 1)``), each with s in ``--switches`` and delta = 0.04 (line sums are 1), and
prints how many were proved optimal within the node limit (``--node-limit``, default
``ocsched.exact.DEFAULT_NODE_LIMIT``; ``--time-limit`` adds a wall-clock limit, which makes the
counts depend on the machine), the median and largest solve time,
the largest model size (maximal matchings of the support) and the worst remaining gap. Stops
after the first n at which nothing is proved optimal.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ocsched.exact import DEFAULT_NODE_LIMIT, solve_exact
from ocsched.model import Demand
from ocsched.workloads import generate
from ocsched.workloads.random import random_instance


def instances(n: int, seeds: int) -> list[tuple[str, Demand]]:
    out = []
    for seed in range(seeds):
        out.append((f"random/{seed}", Demand.from_matrix(random_instance(n, density=0.5, rng=seed))))
        m = generate("standard", n=n, flows=min(4, n - 1), rng=seed, normalize=True).copy()
        np.fill_diagonal(m, 0.0)
        out.append((f"standard/{seed}", Demand.from_matrix(m)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--min-n", type=int, default=3)
    parser.add_argument("--max-n", type=int, default=6)
    parser.add_argument("--seeds", type=int, default=2, help="instances per family and n")
    parser.add_argument("--switches", type=str, default="2,4")
    parser.add_argument("--delta", type=float, default=0.04)
    parser.add_argument("--node-limit", type=int, default=DEFAULT_NODE_LIMIT)
    parser.add_argument("--time-limit", type=float, default=None, help="seconds (default: none)")
    parser.add_argument("--verbose", action="store_true", help="one line per solve")
    args = parser.parse_args()
    sw = [int(x) for x in args.switches.split(",")]
    print(
        f"delta={args.delta:g}, switches {sw}, {2 * args.seeds} instances per n (random + standard), "
        f"node limit {args.node_limit}"
        + ("" if args.time_limit is None else f", time limit {args.time_limit:g} s")
    )
    print(
        f"{'n':>3}{'solves':>8}{'optimal':>9}{'median s':>10}{'max s':>8}{'matchings':>11}{'worst gap':>11}"
    )
    for n in range(args.min_n, args.max_n + 1):
        times, gaps, opt, total, mats = [], [], 0, 0, 0
        for name, dem in instances(n, args.seeds):
            for s in sw:
                t0 = time.perf_counter()
                res = solve_exact(
                    dem, switches=s, delta=args.delta, time_limit=args.time_limit, node_limit=args.node_limit
                )
                times.append(time.perf_counter() - t0)
                gaps.append(res.gap)
                opt += res.optimal
                total += 1
                mats = max(mats, res.matchings)
                if args.verbose:
                    print(
                        f"    n={n} {name} s={s}: {res.status} makespan {res.makespan:.6g} bound "
                        f"{res.dual_bound:.6g} ({times[-1]:.1f} s, {res.nodes} nodes, "
                        f"{res.matchings} matchings)",
                        flush=True,
                    )
        print(
            f"{n:>3}{total:>8}{opt:>9}{statistics.median(times):>10.2f}{max(times):>8.1f}{mats:>11}"
            f"{100 * max(gaps):>10.2f}%",
            flush=True,
        )
        if opt == 0:
            break


if __name__ == "__main__":
    main()
