"""Latency of ``ocsched serve`` on loopback: /v1/schedule at n=64, s=8 and cached SimAI replies.

Run: ``.venv/bin/python benchmarks/serve.py [--requests 1000] [--clients 8] [--workers 2]``.
Starts ``ocsched serve --port 0`` (127.0.0.1 only), warms it up, then sends ``--requests``
``/v1/schedule`` requests (the standard benchmark at n=64 on 8 switches, delta 0.04, over 50
seeds, so each worker schedules for real) from ``--clients`` concurrent clients with keep-alive
connections, and as many requests of one SimAI all-reduce (a cache hit after the first). Every
reply is checked (status 200; the schedules are validated afterwards). The same schedules are
then computed in this process (schedule, validate, encode), the reference the service adds to.
Bounded: at most ``--max-seconds`` per phase.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from ocsched import schedule, validate
from ocsched.model import Schedule
from ocsched.model.schedule_json import schedule_to_dict
from ocsched.workloads import generate

SEEDS = 50


def start(workers: int) -> tuple[subprocess.Popen[str], str]:
    exe = str(Path(sys.executable).with_name("ocsched"))
    proc = subprocess.Popen(
        [exe, "serve", "--port", "0", "--workers", str(workers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
    if match is None:
        raise SystemExit(f"server did not start: {line}")
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    url = match.group(1)
    for _ in range(2400):
        try:
            httpx.get(url + "/healthz")
            return proc, url
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit("server never answered /healthz")


def load(url: str, path: str, bodies: list[bytes], clients: int, max_seconds: float) -> dict[str, Any]:
    """Send every body once, from ``clients`` threads with one keep-alive connection each."""
    latencies: list[float] = []
    failures: list[str] = []
    replies: dict[int, bytes] = {}
    lock = threading.Lock()
    nxt = iter(range(len(bodies)))
    deadline = time.monotonic() + max_seconds

    def run() -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            while time.monotonic() < deadline:
                with lock:
                    k = next(nxt, None)
                if k is None:
                    return
                t0 = time.perf_counter()
                try:
                    r = c.post(path, content=bodies[k], headers={"content-type": "application/json"})
                    dt = time.perf_counter() - t0
                except httpx.HTTPError as exc:
                    with lock:
                        failures.append(repr(exc))
                    continue
                with lock:
                    latencies.append(dt)
                    if r.status_code != 200:
                        failures.append(f"{r.status_code}: {r.text[:200]}")
                    replies[k] = r.content

    t0 = time.perf_counter()
    threads = [threading.Thread(target=run) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    return {
        "count": len(lat),
        "failures": failures,
        "median_ms": 1e3 * statistics.median(lat),
        "p99_ms": 1e3 * lat[min(len(lat) - 1, int(0.99 * len(lat)))],
        "throughput": len(lat) / wall,
        "replies": replies,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    args = parser.parse_args()

    mats = [generate("standard", n=64, seed=k) for k in range(SEEDS)]
    bodies = [
        orjson.dumps(
            {"demand": mats[k % SEEDS], "switches": 8, "delta": 0.04}, option=orjson.OPT_SERIALIZE_NUMPY
        )
        for k in range(args.requests)
    ]
    simai_body = json.dumps(
        {
            "dpCommDomain": [list(range(0, 64, 8)), list(range(1, 64, 8))],
            "commDomainVolume": 134217728,
            "rankIdRackIdMap": {str(r): f"rack{r // 8}" for r in range(64)},
            "algName": "ALGO_OXC_RING",
        }
    ).encode()
    print(f"load before: {os.getloadavg()}")
    proc, url = start(args.workers)
    try:
        # Warm-up: every worker compiles nothing more and has every import done.
        load(url, "/v1/schedule", bodies[: 4 * args.clients], args.clients, args.max_seconds)
        sched = load(url, "/v1/schedule", bodies, args.clients, args.max_seconds)
        alone = load(url, "/v1/schedule", bodies[:200], 1, args.max_seconds)
        cached = load(url, "/api/oxc/allreduce", [simai_body] * args.requests, args.clients, args.max_seconds)
        single = load(url, "/api/oxc/allreduce", [simai_body] * 200, 1, args.max_seconds)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    print(f"load after: {os.getloadavg()}")

    bad = 0
    for k, raw in [*sched["replies"].items(), *alone["replies"].items()]:
        s = Schedule.from_dict(orjson.loads(raw))
        bad += not validate(s, mats[k % SEEDS], switches=8, delta=0.04).ok
    # The reference: what the service computes per request, in this process, one at a time.
    ref = []
    for k in range(min(200, args.requests)):
        t0 = time.perf_counter()
        s = schedule(mats[k % SEEDS], switches=8, delta=0.04, rng=0)
        validate(s, mats[k % SEEDS], switches=8, delta=0.04)
        orjson.dumps(schedule_to_dict(s), option=orjson.OPT_SERIALIZE_NUMPY)
        ref.append(time.perf_counter() - t0)
    ref_ms = 1e3 * statistics.median(ref)
    sched_only = []
    for k in range(min(200, args.requests)):
        t0 = time.perf_counter()
        schedule(mats[k % SEEDS], switches=8, delta=0.04, rng=0)
        sched_only.append(time.perf_counter() - t0)

    print(f"\n{args.requests} requests, {args.clients} clients, {args.workers} worker(s), loopback")
    print("| what | requests | median ms | p99 ms | req/s | failures |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, r in (
        (f"/v1/schedule n=64 s=8, {args.clients} clients", sched),
        ("/v1/schedule n=64 s=8, 1 client", alone),
        (f"/api/oxc/allreduce, cached, {args.clients} clients", cached),
        ("/api/oxc/allreduce, cached, 1 client", single),
    ):
        print(
            f"| {name} | {r['count']} | {r['median_ms']:.2f} | {r['p99_ms']:.2f} | "
            f"{r['throughput']:.0f} | {len(r['failures'])} |"
        )
    print(
        f"\nin-process, one at a time: schedule {1e3 * statistics.median(sched_only):.2f} ms, "
        f"schedule + validate + encode {ref_ms:.2f} ms (median of {len(ref)}); "
        f"invalid schedules served: {bad}"
    )
    print(
        f"Little's law: {args.clients} clients / {sched['throughput']:.0f} req/s = "
        f"{1e3 * args.clients / sched['throughput']:.1f} ms per request in the system"
    )
    for r in (sched, alone, cached, single):
        for f in r["failures"][:3]:
            print("failure:", f)


if __name__ == "__main__":
    main()
