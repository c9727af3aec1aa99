"""TPU-v4-shaped pods: spectra-ports against its bound and against the directed model.

Instances: 64 cubes, 48 bidirectional OCSes with 2 ports per cube (``tpu_pod_fabric``), delta
1 ms and 10 ms; traffic of one phase of 4 ms (the busiest cube's load over its 96 links): the
all-reduce torus rings, MoE dispatch + combine (three seeds) and a GPT pipeline with data
parallelism. For each: ``spectra-ports``' makespan over ``ports_bound`` (target <= 1.10 on
average), its run time (target <= 1 s per instance; the first, warm-up run is not timed), and the
directed model, today's ``spectra-pack`` on ``max(D, D^T)`` over the same 48 switches read as
directed ones (each permutation's circuits are bidirectional ones there; it must never be
shorter). Prints a Markdown table.

    python benchmarks/tpu_pod.py
"""

from __future__ import annotations

import time

import numpy as np

import ocsched
from ocsched.workloads.tpu_pod import tpu_pod, tpu_pod_fabric

CASES = [("allreduce", 0), ("moe", 0), ("moe", 1), ("moe", 2), ("gpt", 0)]


def main() -> None:
    ocsched.schedule(tpu_pod(traffic="gpt"), fabric=tpu_pod_fabric(), algorithm="spectra-ports")  # warm-up
    rows, ratios, slow, worse = [], [], 0, 0
    for delta in (1.0, 10.0):
        fab = tpu_pod_fabric(delta_ms=delta)
        for traffic, seed in CASES:
            d = tpu_pod(traffic=traffic, rng=seed)
            t0 = time.perf_counter()
            ours = ocsched.schedule(d, fabric=fab, algorithm="spectra-ports")
            elapsed = time.perf_counter() - t0
            assert ocsched.validate(ours, d).ok
            w = np.maximum(d, d.T)
            directed = ocsched.schedule(w, switches=fab.size, delta=delta, algorithm="spectra-pack")
            assert ours.lower_bound is not None
            ratio = ours.makespan / ours.lower_bound
            ratios.append(ratio)
            slow += elapsed > 1.0
            worse += ours.makespan > directed.makespan
            rows.append(
                f"| {traffic} (seed {seed}) | {delta:g} | {ours.lower_bound:.3f} | {ours.makespan:.3f} "
                f"| {ratio:.3f} | {ours.num_configurations} | {elapsed:.2f} | {directed.makespan:.3f} "
                f"| {100 * (directed.makespan / ours.makespan - 1):+.1f} % |"
            )
    print(
        "| traffic | delta (ms) | bound (ms) | spectra-ports (ms) | ratio | pieces | time (s) "
        "| directed model (ms) | gain |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    print(
        f"\naverage ratio {np.mean(ratios):.3f} (max {max(ratios):.3f}); "
        f"{slow} instance(s) over 1 s; {worse} worse than the directed model"
    )


if __name__ == "__main__":
    main()
