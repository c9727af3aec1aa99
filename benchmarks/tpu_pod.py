"""TPU-v4-shaped pods: spectra-ports against its bound and against the directed model.

Instances: 64 cubes, 48 bidirectional OCSes with 2 ports per cube (``tpu_pod_fabric``), delta
1 ms and 10 ms; traffic of one phase of 4 ms (the busiest cube's load over its 96 links): the
all-reduce torus rings, MoE dispatch + combine (three seeds) and a GPT pipeline with data
parallelism. For each: ``spectra-ports``' makespan over ``ports_bound`` (target <= 1.10 on
average), its run time (target <= 1 s per instance; the first, warm-up run is not timed), and the
directed model, today's ``spectra-pack`` on ``max(D, D^T)`` over the same 48 switches read as
directed ones (each permutation's circuits are bidirectional ones there; it must never be
shorter). Prints a Markdown table.

With ``--compose``: the same pod with failures and in training iterations (``spectra-ports`` as
the base). A failed link (cube 5 on switch 3) and a switch down from the start, each against the
healthy pod; ``reschedule`` after a switch and a link failure at a third of the makespan; and an
iteration of 8 MoE layers (dispatch + combine, a seed each, 0.5 ms of compute between them) then
the GPT pipeline and the all-reduce rings, by ``independent`` and ``spectra-seq`` against the
iteration bound. Every schedule is validated.

With ``--partial``: the same instances under the partial model (an endpoint's ports as a pool:
kept circuits stay lit, new ones need a port dark for delta): ``spectra-ports`` there against
the partial bound and against its all-stop schedule, and a failed link and a reschedule there;
then 120 seeded random small instances (n 3-11, 1-4 switches of 2-3 ports, directed or
bidirectional, densities 0.2-0.9, delta 0.01-2): partial against all-stop, both by spectra-ports.

    python benchmarks/tpu_pod.py [--compose | --partial]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ocsched
from ocsched import Iteration, LinkDown, LinkFailure, Phase, SwitchDown, SwitchFailure
from ocsched.sequence import validate_iteration
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


def compose() -> None:
    """Failures, reschedule and iterations on the pod (see the module docstring)."""
    print(
        "| traffic | delta (ms) | healthy (ms) | failed link | switch down | reschedule: switch | link "
        "| time (s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for delta in (1.0, 10.0):
        fab = tpu_pod_fabric(delta_ms=delta)
        for traffic, seed in CASES:
            d = tpu_pod(traffic=traffic, rng=seed)
            healthy = ocsched.schedule(d, fabric=fab, algorithm="spectra-ports")
            t0 = time.perf_counter()
            cells = []
            for failed in (
                fab.with_failures(failed_links=[LinkDown(5, 3)]),
                fab.with_failures(down=[SwitchDown(7, 0.0)]),
            ):
                sched = ocsched.schedule(d, fabric=failed, algorithm="spectra-ports")
                assert ocsched.validate(sched, d).ok
                cells.append(sched.makespan / healthy.makespan)
            at = healthy.makespan / 3
            for failure in (SwitchFailure(7, at), LinkFailure(5, 3, at)):
                new = ocsched.reschedule(healthy, d, failure)
                assert ocsched.validate(new, d).ok
                cells.append(new.makespan / healthy.makespan)
            elapsed = (time.perf_counter() - t0) / 4
            shown = " | ".join(f"{x:.3f}" for x in cells)
            print(
                f"| {traffic} (seed {seed}) | {delta:g} | {healthy.makespan:.3f} | {shown} | {elapsed:.2f} |"
            )
    print(
        "\n| delta (ms) | bound (ms) | independent (ms) | spectra-seq (ms) | seq / bound | seq / independent "
        "| persisted | time (s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    layers = [Phase(tpu_pod(traffic="moe", rng=10 + k), 0.5, f"moe{k}") for k in range(8)]
    tail = [Phase(tpu_pod(traffic="gpt"), 0.5, "gpt"), Phase(tpu_pod(traffic="allreduce"), 0.5, "allreduce")]
    it = Iteration(layers + tail)
    for delta in (1.0, 10.0):
        fab = tpu_pod_fabric(delta_ms=delta)
        ind = ocsched.schedule_iteration(it, fabric=fab, algorithm="independent", base="spectra-ports")
        t0 = time.perf_counter()
        seq = ocsched.schedule_iteration(it, fabric=fab, base="spectra-ports")
        elapsed = time.perf_counter() - t0
        assert validate_iteration(seq, it).ok and validate_iteration(ind, it).ok
        print(
            f"| {delta:g} | {seq.lower_bound:.3f} | {ind.makespan:.3f} | {seq.makespan:.3f} "
            f"| {seq.makespan / seq.lower_bound:.3f} | {seq.makespan / ind.makespan:.3f} | {seq.persisted} "
            f"| {elapsed:.2f} |"
        )


def partial() -> None:
    """The pod under the partial model (see the module docstring)."""
    print(
        "| traffic | delta (ms) | partial bound (ms) | all-stop (ms) | partial (ms) | partial / bound "
        "| failed link / healthy | reschedule: link | time (s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios = []
    for delta in (1.0, 10.0):
        stop = tpu_pod_fabric(delta_ms=delta)
        fab = stop.with_model("partial")
        for traffic, seed in CASES:
            d = tpu_pod(traffic=traffic, rng=seed)
            before = ocsched.schedule(d, fabric=stop, algorithm="spectra-ports")
            t0 = time.perf_counter()
            ours = ocsched.schedule(d, fabric=fab, algorithm="spectra-ports")
            elapsed = time.perf_counter() - t0
            assert ocsched.validate(ours, d).ok and ours.lower_bound is not None
            failed = ocsched.schedule(
                d, fabric=fab.with_failures(failed_links=[LinkDown(5, 3)]), algorithm="spectra-ports"
            )
            assert ocsched.validate(failed, d).ok
            new = ocsched.reschedule(ours, d, LinkFailure(5, 3, ours.makespan / 3))
            assert ocsched.validate(new, d).ok
            ratios.append(ours.makespan / ours.lower_bound)
            print(
                f"| {traffic} (seed {seed}) | {delta:g} | {ours.lower_bound:.3f} | {before.makespan:.3f} "
                f"| {ours.makespan:.3f} | {ratios[-1]:.3f} | {failed.makespan / ours.makespan:.3f} "
                f"| {new.makespan / ours.makespan:.3f} | {elapsed:.2f} |"
            )
    print(f"\naverage partial / bound {np.mean(ratios):.3f} (max {max(ratios):.3f})")
    gains, tight = [], 0
    for seed in range(120):
        rng = np.random.default_rng(seed)
        n, s, k = int(rng.integers(3, 12)), int(rng.integers(1, 5)), int(rng.integers(2, 4))
        both = bool(rng.integers(0, 2))
        d = rng.random((n, n)) * (rng.random((n, n)) < float(rng.choice([0.2, 0.5, 0.9])))
        np.fill_diagonal(d, 0.0)
        d[0, 1] = max(d[0, 1], 0.3)
        sw = ocsched.Switch(
            float(rng.choice([0.01, 0.1, 0.5, 2.0])), bidirectional=both, ports_per_endpoint=k
        )
        fab = ocsched.Fabric((sw,) * s, model="partial")
        ours = ocsched.schedule(d, fabric=fab, algorithm="spectra-ports")
        stop = ocsched.schedule(d, fabric=fab.with_model("all-stop"), algorithm="spectra-ports")
        assert ocsched.validate(ours, d).ok and ours.lower_bound is not None
        gains.append(stop.makespan / ours.makespan - 1)
        tight += ours.makespan <= ours.lower_bound * (1 + 1e-9)
    g = np.array(gains)
    print(
        f"random small instances: all-stop / partial - 1: mean {100 * g.mean():.1f} %, median "
        f"{100 * np.median(g):.1f} %, max {100 * g.max():.1f} %; shorter in {(g > 1e-9).sum()} of "
        f"{g.size}, never longer: {bool((g >= -1e-12).all())}; at the partial bound: {tight}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--compose", action="store_true", help="failures, reschedule and iterations")
    group.add_argument("--partial", action="store_true", help="the partial model")
    args = parser.parse_args()
    if args.compose:
        compose()
    elif args.partial:
        partial()
    else:
        main()
