"""`ocsched serve` as a real process on a loopback port, called with httpx: every endpoint, every refusal."""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from ocsched import schedule, validate  # noqa: E402
from ocsched.bounds import lower_bound  # noqa: E402
from ocsched.fabric import Fabric  # noqa: E402
from ocsched.iteration import IterationSchedule  # noqa: E402
from ocsched.model import Demand, Schedule  # noqa: E402
from ocsched.model.failures import SwitchFailure  # noqa: E402
from ocsched.reschedule import reschedule  # noqa: E402
from ocsched.schedulers import ALIASES  # noqa: E402
from ocsched.sequence import validate_iteration  # noqa: E402
from ocsched.serve import simai  # noqa: E402
from ocsched.workloads import generate  # noqa: E402

OCSCHED = str(Path(sys.executable).with_name("ocsched"))
# Small limits, so that each refusal is cheap to provoke.
LIMITS = ["--max-ports", "64", "--max-switches", "16", "--max-body-mb", "1", "--time-budget", "20"]


class Server:
    """``ocsched serve --port 0`` in a subprocess, its base URL once /healthz answers."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [OCSCHED, "serve", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        if match is None:
            self.proc.kill()
            raise AssertionError(f"no address printed: {line!r} {self.proc.communicate()[0]!r}")
        self.url = match.group(1)
        self.log: list[str] = []
        # Drain the log, so that a full pipe never blocks the server.
        self.drain = threading.Thread(target=lambda: self.log.extend(self.proc.stdout or []), daemon=True)
        self.drain.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        self.stop()
        raise AssertionError("the server never answered /healthz")

    def stop(self) -> int:
        """SIGTERM, and the exit status."""
        self.proc.terminate()
        code = self.proc.wait(timeout=60)
        self.drain.join(timeout=10)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    srv = Server(*LIMITS)
    yield srv.url
    srv.stop()


@pytest.fixture(scope="module")
def client(server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=60) as c:
        yield c


D3 = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]


def post(client: httpx.Client, path: str, body: Any) -> httpx.Response:
    return client.post(path, content=body if isinstance(body, bytes) else json.dumps(body))


def ok(client: httpx.Client, path: str, body: Any) -> Any:
    r = post(client, path, body)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    return r.json()


def without_runtime(d: dict[str, Any]) -> dict[str, Any]:
    return {**d, "meta": {k: v for k, v in d["meta"].items() if k != "runtime_s"}}


def npy(a: Any) -> str:
    buf = io.BytesIO()
    np.save(buf, np.asarray(a, dtype=np.float64))
    return base64.b64encode(buf.getvalue()).decode()


# --- the endpoints --------------------------------------------------------------------------------


def test_get_endpoints(client: httpx.Client) -> None:
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["pid"] > 0
    algs = client.get("/v1/algorithms").json()
    assert "spectra" in algs["schedulers"] and "spectra-seq" in algs["iteration"]
    assert algs["simai"][0] == simai.RING
    spec = client.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert set(spec["paths"]) == {
        "/healthz",
        "/v1/algorithms",
        "/v1/schedule",
        "/v1/validate",
        "/v1/bound",
        "/v1/reschedule",
        "/v1/iteration",
        "/api/oxc/allreduce",
        "/api/oxc/alltoall",
    }


def test_schedule_is_the_library_schedule(client: httpx.Client) -> None:
    m = generate("standard", n=32, rng=3)
    got = ok(client, "/v1/schedule", {"demand": m.tolist(), "switches": 4, "delta": 0.04})
    sched = Schedule.from_dict(got)
    assert validate(sched, m, switches=4, delta=0.04).ok
    ref = schedule(m, switches=4, delta=0.04, rng=0)
    assert without_runtime(got) == without_runtime(json.loads(ref.to_json()))


def test_former_scheduler_names_are_accepted(client: httpx.Client) -> None:
    assert client.get("/v1/algorithms").json()["aliases"] == ALIASES
    m = generate("standard", n=16, flows=4, rng=2)
    body = {"demand": m.tolist(), "switches": 3, "delta": 0.04}
    old = ok(client, "/v1/schedule", {**body, "algorithm": "spectra-noeq"})
    new = ok(client, "/v1/schedule", {**body, "algorithm": "spectra-greedy"})
    assert old["algorithm"] == "spectra-greedy" and without_runtime(old) == without_runtime(new)
    r = post(client, "/v1/schedule", {**body, "algorithm": "spectra-nope"})
    assert r.status_code == 422 and "spectra-nope" in r.text
    groups = {"dpCommDomain": [[0, 1, 2, 3]], "commDomainVolume": 4000}
    flows = [
        ok(client, "/api/oxc/alltoall", {**groups, "algName": a}) for a in ("spectra-noeq", "spectra-greedy")
    ]
    assert flows[0] == flows[1]


def test_demand_forms_agree(client: httpx.Client) -> None:
    m = generate("standard", n=24, rng=1)
    r, c = np.nonzero(m)
    forms = [
        m.tolist(),
        {"n": 24, "src": r.tolist(), "dst": c.tolist(), "value": m[r, c].tolist()},
        {"npy": npy(m)},
    ]
    replies = [ok(client, "/v1/schedule", {"demand": f, "switches": 2, "delta": 0.1}) for f in forms]
    assert all(without_runtime(x) == without_runtime(replies[0]) for x in replies)


def test_schedule_on_a_fabric(client: httpx.Client) -> None:
    fab = {"switches": [{"delta": 0.01, "count": 2}, {"delta": 0.1, "rate": 2.0}]}
    got = ok(client, "/v1/schedule", {"demand": D3, "fabric": fab, "algorithm": "spectra"})
    assert got["version"] == 2 and [s["rate"] for s in got["switches"]] == [1.0, 1.0, 2.0]
    assert validate(Schedule.from_dict(got), D3, fabric=Fabric.from_dict(fab)).ok
    got = ok(client, "/v1/schedule", {"demand": D3, "delta": [0.1, 0.2], "reconfiguration": "partial"})
    assert got["model"] == "partial"


def test_validate_reports(client: httpx.Client) -> None:
    good = schedule(D3, switches=2, delta=0.5).to_dict()
    rep = ok(client, "/v1/validate", {"demand": D3, "schedule": good})
    assert rep["ok"] and rep["violations"] == [] and rep["makespan"] == pytest.approx(2.75)
    bad = json.loads(json.dumps(good))
    bad["switches"][0]["configurations"][0]["duration"] /= 2
    bad.pop("makespan")
    rep = ok(client, "/v1/validate", {"demand": D3, "schedule": bad})
    assert not rep["ok"] and any("unserved" in v or "demand" in v for v in rep["violations"])
    rep = ok(client, "/v1/validate", {"demand": [[0, 1], [1, 0]], "schedule": good})
    assert not rep["ok"] and rep["violations"][0].startswith("ports")
    rep = ok(client, "/v1/validate", {"demand": D3, "schedule": good, "switches": 2, "delta": 5.0})
    assert not rep["ok"]  # checked against the fabric given: the delays are too short for delta 5


def test_bound(client: httpx.Client) -> None:
    m = generate("standard", n=20, rng=2)
    got = ok(client, "/v1/bound", {"demand": m.tolist(), "switches": 3, "delta": 0.05})
    assert got["lower_bound"] == pytest.approx(lower_bound(Demand.from_matrix(m), switches=3, delta=0.05))
    assert got["lower_bound"] == max(got["line_bound"], got["degree_bound"], got["refined_bound"])
    got = ok(client, "/v1/bound", {"demand": m.tolist(), "delta": [0.05, 0.5]})
    assert set(got) == {"lower_bound"}


def test_reschedule(client: httpx.Client) -> None:
    m = generate("standard", n=16 + 4, rng=5)
    old = schedule(m, switches=3, delta=0.05)
    at = old.makespan / 3
    got = ok(
        client,
        "/v1/reschedule",
        {"demand": m.tolist(), "schedule": old.to_dict(), "failure": {"switch": 1, "at": at}},
    )
    new = Schedule.from_dict(got)
    assert validate(new, m).ok and new.on_fabric().down[0].switch == 1
    assert new.makespan == pytest.approx(reschedule(old, m, SwitchFailure(1, at)).makespan)
    got = ok(
        client,
        "/v1/reschedule",
        {"demand": m.tolist(), "schedule": old.to_dict(), "failure": {"port": 2, "switch": 0, "at": at}},
    )
    assert Schedule.from_dict(got).on_fabric().failed_links[0].port == 2


def test_iteration(client: httpx.Client) -> None:
    a, b = generate("standard", n=20, rng=1), generate("standard", n=20, rng=2)
    it = {
        "format": "ocsched.sequence",
        "version": 1,
        "phases": [
            {"name": "fwd", "demand": a.tolist()},
            {"name": "bwd", "gap_before": 0.2, "demand": b.tolist()},
        ],
    }
    got = ok(client, "/v1/iteration", {"iteration": it, "switches": 2, "delta": 0.05})
    from ocsched.iteration import Iteration

    sched = IterationSchedule.from_dict(got)
    assert validate_iteration(sched, Iteration.from_dict(it), switches=2, delta=0.05).ok
    assert sched.num_phases == 2


def test_a_time_budget_withholds_never_changes(client: httpx.Client) -> None:
    m = generate("standard", n=64, rng=0).tolist()
    body = {"demand": m, "switches": 8, "delta": 0.04}
    r = post(client, "/v1/schedule", {**body, "time_budget_s": 1e-5})
    assert r.status_code == 504 and r.json()["error"]["field"] == "time_budget_s"
    full = ok(client, "/v1/schedule", body)
    budgeted = ok(client, "/v1/schedule", {**body, "time_budget_s": 19.0})
    assert without_runtime(full) == without_runtime(budgeted)


def test_health_answers_while_a_schedule_computes(client: httpx.Client, server: str) -> None:
    m = generate("standard", n=64, rng=4).tolist()
    done = threading.Event()

    def slow() -> None:
        with httpx.Client(base_url=server, timeout=60) as c:
            for _ in range(4):
                post(
                    c,
                    "/v1/schedule",
                    {"demand": m, "switches": 16, "delta": 0.01, "algorithm": "spectra-opt"},
                )
        done.set()

    t = threading.Thread(target=slow)
    t.start()
    seen_busy = False
    while not done.is_set():
        h = client.get("/healthz").json()  # answered by the event loop while a thread computes
        seen_busy |= h["busy"] > 0
    t.join()
    assert seen_busy


# --- refusals -------------------------------------------------------------------------------------

BIG = [[0.0] * 65 for _ in range(65)]
SCHED3 = {"format": "ocsched.schedule", "version": 1, "ports": 3, "delta": 0.5, "switches": []}

REFUSALS: list[tuple[str, Any, int, str | None]] = [
    ("/v1/schedule", b"{not json", 400, "body"),
    ("/v1/schedule", b"[1, 2]", 400, None),
    ("/v1/schedule", b"\xff\xfe", 400, "body"),
    ("/v1/schedule", b"[" * 100_000, 400, "body"),
    ("/v1/schedule", {"demand": D3, "switches": 2, "delta": 0.5, "algoritm": "x"}, 422, "algoritm"),
    ("/v1/schedule", {"switches": 2, "delta": 0.5}, 422, "demand"),
    ("/v1/schedule", {"demand": [[0, -1], [1, 0]], "switches": 2, "delta": 0.5}, 422, "demand"),
    ("/v1/schedule", {"demand": [[0, 1], [1]], "switches": 2, "delta": 0.5}, 422, "demand"),
    ("/v1/schedule", {"demand": [[0, 1, 2], [1, 0, 2]], "switches": 2, "delta": 0.5}, 422, "demand"),
    ("/v1/schedule", {"demand": [["0", "1"], ["1", "0"]], "switches": 2, "delta": 0.5}, 422, "demand"),
    ("/v1/schedule", {"demand": "abc", "switches": 2, "delta": 0.5}, 422, "demand"),
    ("/v1/schedule", {"demand": BIG, "switches": 2, "delta": 0.5}, 422, "demand"),
    ("/v1/schedule", {"demand": {"npy": "@@@"}, "switches": 2, "delta": 0.5}, 422, "demand.npy"),
    (
        "/v1/schedule",
        {"demand": {"npy": base64.b64encode(b"xyz").decode()}, "switches": 2, "delta": 0.5},
        422,
        "demand.npy",
    ),
    (
        "/v1/schedule",
        {"demand": {"npy": npy(np.zeros((65, 65)))}, "switches": 2, "delta": 0.5},
        422,
        "demand.npy",
    ),
    (
        "/v1/schedule",
        {"demand": {"n": 2, "src": [0], "dst": [5], "value": [1]}, "switches": 1, "delta": 0},
        422,
        "demand.dst",
    ),
    (
        "/v1/schedule",
        {"demand": {"n": 100, "src": [], "dst": [], "value": []}, "switches": 1, "delta": 0},
        422,
        "demand.n",
    ),
    (
        "/v1/schedule",
        {"demand": {"n": 2, "src": [0], "dst": [1], "value": ["a"]}, "switches": 1, "delta": 0},
        422,
        "demand.value",
    ),
    (
        "/v1/schedule",
        {"demand": {"n": 2, "src": [0, 1], "dst": [1], "value": [1]}, "switches": 1, "delta": 0},
        422,
        "demand",
    ),
    ("/v1/schedule", {"demand": D3, "switches": 2}, 422, "delta"),
    ("/v1/schedule", {"demand": D3, "delta": 0.5}, 422, "switches"),
    ("/v1/schedule", {"demand": D3, "switches": 17, "delta": 0.5}, 422, "switches"),
    ("/v1/schedule", {"demand": D3, "switches": 0, "delta": 0.5}, 422, "switches"),
    ("/v1/schedule", {"demand": D3, "switches": 2, "delta": -1}, 422, "delta"),
    ("/v1/schedule", {"demand": D3, "switches": 2, "delta": "fast"}, 422, "delta"),
    ("/v1/schedule", {"demand": D3, "switches": 3, "delta": [0.1, 0.2]}, 422, "switches"),
    ("/v1/schedule", {"demand": D3, "delta": [0.1] * 17}, 422, "delta"),
    (
        "/v1/schedule",
        {"demand": D3, "switches": 2, "delta": 0.5, "reconfiguration": "x"},
        422,
        "reconfiguration",
    ),
    ("/v1/schedule", {"demand": D3, "fabric": {"switches": [{"delta": 0.1, "count": 17}]}}, 422, "fabric"),
    ("/v1/schedule", {"demand": D3, "fabric": {"switches": [{"delta": 0.1, "rates": 2}]}}, 422, "fabric"),
    ("/v1/schedule", {"demand": D3, "fabric": {"switches": [{"delta": 1}]}, "delta": 1}, 422, "delta"),
    ("/v1/schedule", {"demand": D3, "switches": 2, "delta": 0.5, "algorithm": "fastest"}, 422, "algorithm"),
    ("/v1/schedule", {"demand": D3, "switches": 2, "delta": 0.5, "seed": -1}, 422, "seed"),
    ("/v1/schedule", {"demand": D3, "switches": 2, "delta": 0.5, "time_budget_s": 0}, 422, "time_budget_s"),
    ("/v1/schedule", {"demand": D3, "switches": 2, "delta": 0.5, "time_budget_s": 21}, 422, "time_budget_s"),
    ("/v1/schedule", {"demand": [[0, 1e308], [1e308, 0]], "switches": 1, "delta": 1e308}, 422, "demand"),
    (
        "/v1/schedule",
        {"demand": D3, "fabric": {"switches": [{"delta": 0.1}], "failed_links": [{"port": 0, "switch": 0}]}},
        422,
        "demand",
    ),
    ("/v1/validate", {"demand": D3}, 422, "schedule"),
    ("/v1/validate", {"demand": D3, "schedule": {"format": "x"}}, 422, "schedule"),
    ("/v1/validate", {"demand": D3, "schedule": [1]}, 422, "schedule"),
    ("/v1/validate", {"demand": D3, "schedule": {**SCHED3, "ports": 10**6}}, 422, "schedule"),
    (
        "/v1/validate",
        {"demand": D3, "schedule": {**SCHED3, "switches": [{"configurations": []}] * 17}},
        422,
        "schedule",
    ),
    ("/v1/bound", {"demand": D3, "switches": 2, "delta": 0.5, "algorithm": "spectra"}, 422, "algorithm"),
    ("/v1/reschedule", {"demand": D3, "schedule": SCHED3}, 422, "failure"),
    ("/v1/reschedule", {"demand": D3, "schedule": SCHED3, "failure": {"switch": 0}}, 422, "failure"),
    (
        "/v1/reschedule",
        {"demand": D3, "schedule": SCHED3, "failure": {"switch": 0, "at": 0, "when": 1}},
        422,
        "when",
    ),
    ("/v1/reschedule", {"demand": D3, "schedule": SCHED3, "failure": {"switch": 0, "at": 0}}, 422, "failure"),
    (
        "/v1/reschedule",
        {"demand": D3, "schedule": SCHED3, "failure": {"switch": 0, "at": 0}, "placement": "x"},
        422,
        "placement",
    ),
    ("/v1/iteration", {"switches": 2, "delta": 0.5}, 422, "iteration"),
    (
        "/v1/iteration",
        {"iteration": {"format": "ocsched.sequence", "version": 1, "phases": []}, "switches": 1, "delta": 0},
        422,
        "iteration",
    ),
    (
        "/v1/iteration",
        {
            "iteration": {"format": "ocsched.sequence", "version": 1, "phases": [{"demand": BIG}]},
            "switches": 1,
            "delta": 0,
        },
        422,
        "iteration",
    ),
    (
        "/v1/iteration",
        {
            "iteration": {"format": "ocsched.sequence", "version": 1, "phases": [{"demand": D3}]},
            "switches": 1,
            "delta": 0,
            "algorithm": "x",
        },
        422,
        "algorithm",
    ),
    (
        "/v1/iteration",
        {
            "iteration": {"format": "ocsched.sequence", "version": 1, "phases": [{"demand": D3}]},
            "switches": 1,
            "delta": 0,
            "base": "x",
        },
        422,
        "base",
    ),
    ("/api/oxc/allreduce", {"commDomainVolume": 8}, 422, "dpCommDomain"),
    ("/api/oxc/allreduce", {"dpCommDomain": [[0, 1], [1, 2]], "commDomainVolume": 8}, 422, "dpCommDomain"),
    ("/api/oxc/allreduce", {"dpCommDomain": [[0, "1"]], "commDomainVolume": 8}, 422, "dpCommDomain"),
    ("/api/oxc/allreduce", {"dpCommDomain": [list(range(65))], "commDomainVolume": 8}, 422, "dpCommDomain"),
    ("/api/oxc/allreduce", {"dpCommDomain": [[0, 1]], "commDomainVolume": -8}, 422, "commDomainVolume"),
    ("/api/oxc/allreduce", {"dpCommDomain": [[0, 1]], "commDomainVolume": 1.5}, 422, "commDomainVolume"),
    (
        "/api/oxc/allreduce",
        {"dpCommDomain": [[0, 1]], "commDomainVolume": 8, "algName": "ALGO_X"},
        422,
        "algName",
    ),
    (
        "/api/oxc/allreduce",
        {"dpCommDomain": [[0, 1]], "commDomainVolume": 8, "rankIdRackIdMap": {"a": "r"}},
        422,
        "rankIdRackIdMap",
    ),
    ("/api/oxc/allreduce", {"dpCommDomain": [[0, 1]], "commDomainVolume": 8, "extra": 1}, 422, "extra"),
    (
        "/api/oxc/allreduce",
        {
            "ranktable": {"rank_count": 1, "rank_list": [{"rank_id": 0}]},
            "dpCommDomain": [[0, 1]],
            "commDomainVolume": 8,
        },
        422,
        "dpCommDomain",
    ),
    (
        "/api/oxc/alltoall",
        {
            "ranktable": {"rank_count": 3, "rank_list": [{"rank_id": 0}]},
            "dpCommDomain": [[0, 1]],
            "commDomainVolume": 8,
        },
        422,
        "ranktable",
    ),
    (
        "/api/oxc/alltoall",
        {"dpCommDomain": [[0, 1]], "commDomainVolume": 8, "algName": "spectra", "fabric": {"switches": []}},
        422,
        "fabric",
    ),
]


@pytest.mark.parametrize(("path", "body", "status", "field"), REFUSALS)
def test_refusals_name_the_field(
    client: httpx.Client, path: str, body: Any, status: int, field: str | None
) -> None:
    r = post(client, path, body)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["status"] == status and err["field"] == field
    assert err["message"] and "\n" not in err["message"] and "Traceback" not in err["message"]


def test_body_size_limit(client: httpx.Client) -> None:
    big = b'{"demand": [' + b"0," * 600_000 + b"0]}"
    r = post(client, "/v1/schedule", big)
    assert r.status_code == 413 and r.json()["error"]["field"] == "body"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while reading
        for _ in range(40):
            yield b" " * 50_000

    r = client.post("/v1/schedule", content=chunks())
    assert r.status_code == 413 and r.json()["error"]["field"] == "body"


def test_unknown_routes_are_json(client: httpx.Client) -> None:
    r = client.get("/v2/schedule")
    assert r.status_code == 404 and r.json()["error"]["status"] == 404
    r = client.get("/v1/schedule")
    assert r.status_code == 405 and r.json()["error"]["status"] == 405


def test_bad_bodies_never_kill_the_worker(client: httpx.Client) -> None:
    pid = client.get("/healthz").json()["pid"]
    for path, body, _, _ in REFUSALS[:12]:
        post(client, path, body)
    assert client.get("/healthz").json()["pid"] == pid
    assert ok(client, "/v1/schedule", {"demand": D3, "switches": 2, "delta": 0.5})["makespan"] == 2.75


# --- SimAI ----------------------------------------------------------------------------------------


def check_flows(flows: list[list[int]], groups: list[list[int]]) -> None:
    """SimAI's invariants: steps contiguous from 0; each rank once per step as source and as destination."""
    assert all(len(f) == 4 and all(isinstance(x, int) for x in f) for f in flows)
    steps = sorted({f[2] for f in flows})
    assert steps == list(range(len(steps)))
    for t in steps:
        srcs = [f[0] for f in flows if f[2] == t]
        dsts = [f[1] for f in flows if f[2] == t]
        assert len(srcs) == len(set(srcs)) and len(dsts) == len(set(dsts))
    ranks = {r for g in groups for r in g}
    assert {f[0] for f in flows} <= ranks and {f[1] for f in flows} <= ranks
    for g in groups:  # a flow stays inside its communicator
        assert all((f[0] in g) == (f[1] in g) for f in flows)


def pair_bytes(flows: list[list[int]]) -> dict[tuple[int, int], int]:
    out: dict[tuple[int, int], int] = {}
    for s, d, _, b in flows:
        out[s, d] = out.get((s, d), 0) + b
    return out


SIMAI_EXAMPLE = {
    "ranktable": {
        "version": "2.0",
        "status": "completed",
        "rank_count": 16,
        "rank_list": [
            {
                "rank_id": r,
                "device_id": r % 8,
                "local_id": r % 8,
                "level_list": [
                    {"net_layer": 0, "net_instance_id": f"superpod1_{r // 8}", "net_type": "TOPO_FILE_DESC"}
                ],
            }
            for r in range(16)
        ],
    },
    "dpCommDomain": [[7, 15]],
    "commDomainVolume": 134217728,
    "rankIdRackIdMap": {"7": "superpod1_0", "15": "superpod1_1"},
    "algName": "ALGO_OXC_RING",
}


def test_simai_example(client: httpx.Client) -> None:
    flows = ok(client, "/api/oxc/allreduce", SIMAI_EXAMPLE)
    check_flows(flows, [[7, 15]])
    assert sorted(map(tuple, flows)) == sorted(
        [(7, 15, 0, 67108864), (15, 7, 0, 67108864), (15, 7, 1, 67108864), (7, 15, 1, 67108864)]
    )


@pytest.mark.parametrize("k", [3, 5, 8])
def test_simai_ring_allreduce(client: httpx.Client, k: int) -> None:
    ranks = [0, 9, 1, 8, 16, 2, 17, 10][:k]  # racks 0, 1, 2 (rank // 8), interleaved
    volume = 10**6 + 7
    flows = ok(client, "/api/oxc/allreduce", {"dpCommDomain": [ranks], "commDomainVolume": volume})
    check_flows(flows, [ranks])
    assert max(f[2] for f in flows) + 1 == 2 * (k - 1)
    for t in range(2 * (k - 1)):  # every rank sends and receives once per step (SimAI's `prev`)
        assert sorted(f[0] for f in flows if f[2] == t) == sorted(ranks)
        assert sorted(f[1] for f in flows if f[2] == t) == sorted(ranks)
    # Each rank sends (k - 1) chunks in each half: 2 (k - 1) / k of the volume, within a byte per step.
    for r in ranks:
        sent = sum(f[3] for f in flows if f[0] == r)
        assert abs(sent - 2 * (k - 1) * volume / k) <= 2 * (k - 1)
    # The ring crosses between racks once per rack it visits.
    succ = {f[0]: f[1] for f in flows if f[2] == 0}
    racks = {r // 8 for r in ranks}
    assert sum(succ[r] // 8 != r // 8 for r in ranks) == (len(racks) if len(racks) > 1 else 0)


@pytest.mark.parametrize("alg", [simai.RING, "spectra", "spectra-pack"])
def test_simai_alltoall(client: httpx.Client, alg: str) -> None:
    groups = [[0, 1, 2, 3, 4], [8, 9, 10]]
    volume = 1001
    flows = ok(
        client, "/api/oxc/alltoall", {"dpCommDomain": groups, "commDomainVolume": volume, "algName": alg}
    )
    check_flows(flows, groups)
    got = pair_bytes(flows)
    for g in groups:
        order = sorted(g)  # the ring order of racks 0 and 1: ranks ascending
        size = simai.chunks(volume, len(g))
        for i in g:
            for j in g:
                if i != j:
                    assert got[i, j] == size[order.index(j)]


def test_simai_scheduled_allreduce(client: httpx.Client) -> None:
    group = [0, 1, 2, 3]
    body = {
        "dpCommDomain": [group],
        "commDomainVolume": 4000,
        "algName": "spectra",
        "fabric": {"switches": [{"delta": 100.0, "count": 2}]},
    }
    flows = ok(client, "/api/oxc/allreduce", body)
    check_flows(flows, [group])
    # Reduce-scatter sends chunk j to j, the all-gather sends it back: 2 x 1000 bytes per pair.
    assert all(v == 2000 for v in pair_bytes(flows).values()) and len(pair_bytes(flows)) == 12


def test_simai_cache(client: httpx.Client) -> None:
    body = {**SIMAI_EXAMPLE, "dpCommDomain": [[3, 11, 5]], "rankIdRackIdMap": {}}
    before = client.get("/healthz").json()["cache"]
    first = post(client, "/api/oxc/allreduce", body).content
    again = post(client, "/api/oxc/allreduce", body).content
    # The same request in another spelling (keys reordered, spaces) is the same canonical request.
    other = json.dumps(dict(reversed(list(body.items()))), indent=1).encode()
    third = post(client, "/api/oxc/allreduce", other).content
    after = client.get("/healthz").json()["cache"]
    assert first == again == third
    assert after["misses"] == before["misses"] + 1 and after["hits"] >= before["hits"] + 2
    # The sibling endpoint has its own replies.
    assert post(client, "/api/oxc/alltoall", body).content != first


# --- the command line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--port", "70000"], "--port"),
        (["--workers", "0"], "--workers"),
        (["--time-budget", "0"], "--time-budget"),
        (["--max-ports", "1"], "--max-ports"),
        (["--host", "no-such-host.invalid"], "--host"),
    ],
)
def test_bad_options_exit_2_with_one_line(args: list[str], says: str) -> None:
    from typer.testing import CliRunner

    from ocsched.cli import app

    r = CliRunner().invoke(app, ["serve", *args])
    assert r.exit_code == 2, r.output
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0]
    assert "Traceback" not in r.output


def test_a_busy_port_exits_2() -> None:
    import socket

    from typer.testing import CliRunner

    from ocsched.cli import app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        r = CliRunner().invoke(app, ["serve", "--port", str(port)])
    assert r.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in r.stderr
