"""Tests of ocsched.sweep and the `ocsched sweep` command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import ocsched
from ocsched import sweep
from ocsched.cli import app
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.model import Configuration
from ocsched.schedulers import SCHEDULERS, Result, Scheduler
from ocsched.workloads import generate

pytest.importorskip("pyarrow")

CONFIG: dict[str, Any] = {
    "switches": [2, 4],
    "delta": [0.02, 0.08],
    "algorithms": ["spectra", "spectra-noeq"],
    "workloads": [
        {"name": "standard", "label": "S", "seeds": 3, "options": {"n": 12, "flows": 4}},
        {
            "name": "standard",
            "label": "F",
            "seeds": [7],
            "options": {"n": 10},
            "grid": {"flows": [2, 6]},
            "delta": 0.04,
        },
    ],
}
N_RUNS = 3 * 2 * 2 * 2 + 2 * 2 * 2  # S: seeds x algs x s x delta; F: flows x algs x s


def _toml(cfg: dict[str, Any]) -> str:
    """Minimal TOML writer for the test configs (tomllib reads only)."""

    def val(v: Any) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return json.dumps(v)

    lines = [f"{k} = {val(v)}" for k, v in cfg.items() if k != "workloads"]
    for w in cfg["workloads"]:
        lines += ["", "[[workloads]]", *(f"{k} = {val(v)}" for k, v in w.items())]
    return "\n".join(lines) + "\n"


def _comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows sorted by key, without the one column allowed to differ between runs."""
    return sorted(({k: v for k, v in r.items() if k != "wall_time_s"} for r in rows), key=lambda r: r["key"])


def _rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = sweep.read_results(out).to_pylist()
    return rows


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("serial") / "res"
    sweep.run_sweep(CONFIG, out, workers=1)
    return _rows(out)


# --------------------------------------------------------------------------- grid


def test_expand_counts_and_unique_keys() -> None:
    runs = sweep.expand(CONFIG)
    assert len(runs) == N_RUNS
    assert len({r.key for r in runs}) == N_RUNS
    f_runs = [r for r in runs if r.label.startswith("F")]
    assert {r.label for r in f_runs} == {"F flows=2", "F flows=6"}
    assert {r.delta for r in f_runs} == {0.04}  # per-workload override
    assert {json.loads(r.options)["flows"] for r in f_runs} == {2, 6}
    assert {r.seed for r in runs if r.label == "S"} == {0, 1, 2}


def test_keys_are_stable_and_independent_of_grid_order() -> None:
    cfg = json.loads(json.dumps(CONFIG))
    cfg["algorithms"] = cfg["algorithms"][::-1]
    cfg["switches"] = cfg["switches"][::-1]
    assert {r.key for r in sweep.expand(cfg)} == {r.key for r in sweep.expand(CONFIG)}
    spec = sweep.expand(CONFIG)[0]
    changed = [
        sweep.RunSpec(**{**spec.__dict__, "seed": spec.seed + 1}),
        sweep.RunSpec(**{**spec.__dict__, "delta": spec.delta * 2}),
        sweep.RunSpec(**{**spec.__dict__, "algorithm": "spectra-noeq"}),
        sweep.RunSpec(**{**spec.__dict__, "options": '{"n": 13}'}),
    ]
    assert len({spec.key, *(c.key for c in changed)}) == 5


def test_derive_seeds_uses_seed_sequence() -> None:
    ss = np.random.SeedSequence(5).spawn(2)
    assert sweep.derive_seeds(5) == tuple(int(c.generate_state(1, np.uint32)[0]) for c in ss)


@pytest.mark.parametrize(
    ("patch", "match"),
    [
        ({"colour": 1}, "unknown key 'colour'"),
        ({"algorithms": ["nope"]}, "unknown algorithm 'nope'"),
        ({"switches": [0]}, r"switches. must be an integer >= 1; got 0"),
        ({"delta": [-1.0]}, r"delta. must be a finite number >= 0; got -1.0"),
        ({"workloads": []}, "non-empty"),
        ({"workloads": [{"name": "nope"}]}, r"workloads\[0\].name. is 'nope'"),
        ({"workloads": [{"name": "standard", "options": {"m": 3}}]}, "has no option 'm'"),
        ({"workloads": [{"name": "standard", "grid": {"flowz": [1]}}]}, "has no option 'flowz'"),
        ({"workloads": [{"name": "standard", "seeds": 0}]}, r"seeds. must be >= 1"),
        ({"workloads": [{"name": "standard", "seeds": [1, -2]}]}, r"seeds. must be a count or a list"),
        ({"workloads": [{"name": "standard", "sizes": 3}]}, "unknown key 'sizes'"),
        ({"workloads": [{"name": "standard"}, {"name": "standard"}]}, "same run twice"),
        ({"normalized": "yes"}, "normalized. must be true or false"),
    ],
)
def test_bad_config_raises(patch: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        sweep.expand({**CONFIG, **patch})


def test_load_config_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="not found"):
        sweep.load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("switches = [4,\n")
    with pytest.raises(InvalidInputError, match="not valid TOML"):
        sweep.load_config(bad)


def test_toml_config_equals_dict(tmp_path: Path) -> None:
    p = tmp_path / "c.toml"
    p.write_text(_toml(CONFIG))
    assert sweep.expand(sweep.load_config(p)) == sweep.expand(CONFIG)


def test_presets_expand() -> None:
    quick = sweep.expand(sweep.load_config("quick"))
    assert {r.workload for r in quick} == {"standard"}
    assert {r.delta for r in quick} == {0.01, 0.02, 0.04, 0.08}
    if not {"baseline", "eclipse", "solstice", "bvn", "naive", "baseline-eclipse"} <= set(
        ocsched.algorithms()
    ):
        pytest.skip("peer algorithms not available")
    paper = sweep.expand(sweep.load_config("paper"))
    assert {r.switches for r in paper} == {4, 16}
    assert {r.algorithm for r in paper} >= {"spectra", "spectra-noeq", "baseline", "eclipse"}
    assert {r.label for r in paper} >= {"GPT32", "GPT64", "GPT128", "MoE8", "MoE64", "MoE128"}
    std = {r.seed for r in paper if r.family == "Standard"}
    assert std == set(range(50))
    flows = {json.loads(r.options).get("flows") for r in paper if r.family == "Standard (flows per port)"}
    assert flows == {8, 16, 32, 64}


def test_make_batches_keeps_instances_together() -> None:
    runs = sweep.expand(CONFIG)
    per_instance = 8  # 2 algorithms x 2 s x 2 delta for label S
    for size in (1, 5, 8, 20):
        batches = sweep.make_batches(runs, size)
        assert sorted(r.key for b in batches for r in b) == sorted(r.key for r in runs)
        assert all(1 <= len(b) <= size for b in batches)
        if size >= per_instance:
            # No instance is cut when it fits in a batch.
            homes = {}
            for k, b in enumerate(batches):
                for r in b:
                    assert homes.setdefault(r.instance, k) == k


# --------------------------------------------------------------------------- running


def test_rows_match_direct_calls(serial: list[dict[str, Any]]) -> None:
    assert len(serial) == N_RUNS
    assert all(r["ok"] and r["error"] is None for r in serial)
    assert {r["ocsched_version"] for r in serial} == {ocsched.__version__}
    for r in serial[:: max(1, len(serial) // 6)]:
        wl_seed, alg_seed = sweep.derive_seeds(r["seed"])
        assert (r["workload_seed"], r["algorithm_seed"]) == (wl_seed, alg_seed)
        m = generate("standard", seed=wl_seed, normalized=True, **json.loads(r["options"]))
        np.fill_diagonal(m, 0.0)
        sched = ocsched.schedule(
            m, switches=r["switches"], delta=r["delta"], algorithm=r["algorithm"], rng=alg_seed
        )
        assert r["makespan"] == sched.makespan
        assert r["lower_bound"] == sched.lower_bound
        assert r["configurations"] == sched.num_configurations
        assert r["splits"] == sched.splits
        assert r["ports"] == m.shape[0] and r["flows"] == int((m > 0).sum())
        assert r["makespan"] >= r["lower_bound"] * (1 - 1e-9)


def test_matrix_generated_once_per_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    import ocsched.workloads

    calls: list[int] = []
    real = ocsched.workloads.generate

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["seed"])
        return real(*args, **kwargs)

    monkeypatch.setattr(ocsched.workloads, "generate", counting)
    runs = sweep.expand(CONFIG)
    rows = sweep.run_batch(runs)
    assert len(rows) == len(runs)
    assert len(calls) == len({r.instance for r in runs})


def _broken(demand: Any, fabric: Any, rng: Any) -> Any:
    raise RuntimeError("boom")


def _invalid(demand: Any, fabric: Any, rng: Any) -> Any:
    # One tiny configuration: serves almost nothing, so the schedule must be reported invalid.
    conf = Configuration.from_circuits(fabric.deltas[0], 1e-6, [(0, 1)], ports=demand.n)
    return Result(((conf,), *(() for _ in range(fabric.size - 1))))


def test_failures_are_recorded_not_numbers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(SCHEDULERS, "broken", Scheduler(_broken, "raises"))
    monkeypatch.setitem(SCHEDULERS, "invalid", Scheduler(_invalid, "serves nothing"))
    cfg = {**CONFIG, "algorithms": ["spectra", "broken", "invalid"], "workloads": CONFIG["workloads"][:1]}
    summary = sweep.run_sweep(cfg, tmp_path / "r", workers=1)
    rows = _rows(tmp_path / "r")
    bad = [r for r in rows if r["algorithm"] != "spectra"]
    assert summary.failed == len(bad) == 2 * 3 * 2 * 2
    assert all(not r["ok"] and r["makespan"] is None for r in bad)
    assert all("RuntimeError: boom" in r["error"] for r in bad if r["algorithm"] == "broken")
    assert all(
        r["error"].startswith("invalid schedule") and "unserved" in r["error"]
        for r in bad
        if r["algorithm"] == "invalid"
    )
    assert all(r["ok"] for r in rows if r["algorithm"] == "spectra")
    assert len(summary.failures) == len(bad)


def test_workload_error_is_recorded(tmp_path: Path) -> None:
    cfg = {**CONFIG, "workloads": [{"name": "standard", "options": {"n": 0}}]}
    sweep.run_sweep(cfg, tmp_path / "r", workers=1)
    rows = _rows(tmp_path / "r")
    assert len(rows) == 8
    assert all(not r["ok"] and r["error"].startswith("workload: InvalidInputError") for r in rows)


def test_process_pool_equals_serial(serial: list[dict[str, Any]], tmp_path: Path) -> None:
    summary = sweep.run_sweep(CONFIG, tmp_path / "r", workers=2, batch_size=5)
    assert summary.batches > 2
    assert _comparable(_rows(tmp_path / "r")) == _comparable(serial)


@pytest.mark.parametrize("processes", [False, True])
def test_dask_local_cluster_equals_serial(
    serial: list[dict[str, Any]], tmp_path: Path, processes: bool
) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=processes,
        protocol="tcp",  # threads would default to in-process comms; test the real transport
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        summary = sweep.run_sweep(CONFIG, tmp_path / "r", cluster=cluster.scheduler_address, batch_size=6)
    assert summary.done == N_RUNS and summary.batches >= 4
    assert _comparable(_rows(tmp_path / "r")) == _comparable(serial)


def test_missing_dask_gives_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # makes `import distributed` fail
    with pytest.raises(OcschedError, match=r"pip install 'ocsched\[dask\]'"):
        sweep.run_sweep(CONFIG, tmp_path / "r", cluster="tcp://127.0.0.1:1")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_interrupt_then_resume(serial: list[dict[str, Any]], tmp_path: Path, workers: int) -> None:
    out = tmp_path / "r"
    seen: list[int] = []

    def stop_after_three_batches(p: sweep.SweepProgress) -> None:
        seen.append(p.done)
        if len(seen) == 4:  # the start report plus three batches
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep.run_sweep(CONFIG, out, workers=workers, batch_size=4, progress=stop_after_three_batches)
    partial = _rows(out)
    assert len(partial) == seen[-1] == 12
    summary = sweep.run_sweep(CONFIG, out, workers=1, batch_size=4)
    assert summary.skipped == 12 and summary.done == N_RUNS - 12
    rows = _rows(out)
    assert len({r["key"] for r in rows}) == len(rows) == N_RUNS
    assert _comparable(rows) == _comparable(serial)


def test_sigint_subprocess_then_resume(serial: list[dict[str, Any]], tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(CONFIG))
    out = tmp_path / "r"
    cmd = [
        sys.executable,
        "-c",
        "from ocsched.cli import main; main()",
        "sweep",
        str(cfg),
        "--out",
        str(out),
        "-j",
        "1",
        "--batch-size",
        "1",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((out / "parts").glob("part-*.parquet"))) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the sweep finished before the interrupt arrived")
    assert proc.returncode == 130, err
    assert "rerun the same command to resume" in err
    partial = _rows(out)
    assert 3 <= len(partial) < N_RUNS
    assert len({r["key"] for r in partial}) == len(partial)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert f"{len(partial)} already done" in done.stdout
    assert _comparable(_rows(out)) == _comparable(serial)


def test_killed_write_leaves_no_partial_part(tmp_path: Path) -> None:
    out = tmp_path / "r"
    sweep.run_sweep(CONFIG, out, workers=1, batch_size=8)
    # A batch killed mid-write leaves only a temporary file: never read, removed on resume.
    (out / "parts" / ".part-dead.tmp").write_bytes(b"PAR1 truncated")
    assert len(_rows(out)) == N_RUNS
    sweep.run_sweep(CONFIG, out, workers=1)
    assert not list((out / "parts").glob(".part-*"))


def test_never_overwrites_without_force(tmp_path: Path) -> None:
    out = tmp_path / "r"
    sweep.run_sweep(CONFIG, out, workers=1)
    other = {**CONFIG, "delta": [0.01]}
    with pytest.raises(InvalidInputError, match="different config"):
        sweep.run_sweep(other, out, workers=1)
    assert len(_rows(out)) == N_RUNS
    summary = sweep.run_sweep(other, out, workers=1, force=True)
    assert summary.skipped == 0
    assert {r["delta"] for r in _rows(out)} == {0.01, 0.04}
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("mine")
    with pytest.raises(InvalidInputError, match="not empty and holds no sweep"):
        sweep.run_sweep(CONFIG, junk, workers=1, force=True)
    assert (junk / "notes.txt").read_text() == "mine"


def test_estimate(tmp_path: Path) -> None:
    est = sweep.estimate_sweep(CONFIG, workers=2, sample=3)
    assert (est.runs, est.todo, est.sampled, est.workers) == (N_RUNS, N_RUNS, 3, 2)
    assert est.seconds == pytest.approx(N_RUNS * est.seconds_per_run / 2)
    sweep.run_sweep(CONFIG, tmp_path / "r", workers=1)
    assert sweep.estimate_sweep(CONFIG, tmp_path / "r").todo == 0


def test_csv_export_round_trip(serial: list[dict[str, Any]], tmp_path: Path) -> None:
    out = tmp_path / "r"
    sweep.run_sweep(CONFIG, out, workers=1)
    csv = sweep.export_csv(out, tmp_path / "rows.csv")
    back = sweep.read_results(csv).to_pylist()
    assert _comparable(back) == _comparable(serial)
    with pytest.raises(InvalidInputError, match="already exists"):
        sweep.export_csv(out, tmp_path / "rows.csv")


def test_read_results_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"no manifest\.json"):
        sweep.read_results(tmp_path)
    with pytest.raises(InvalidInputError, match=r"sweep directory, \.parquet or \.csv"):
        sweep.read_results(tmp_path / "x.txt")


# --------------------------------------------------------------------------- CLI

runner = CliRunner()


def test_cli_sweep_csv_resume_and_dry_run(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(CONFIG))
    out = tmp_path / "r"
    res = runner.invoke(
        app, ["sweep", str(cfg), "--out", str(out), "-j", "1", "--csv", str(tmp_path / "r.csv")]
    )
    assert res.exit_code == 0, res.output
    assert f"{N_RUNS} runs: 0 already done, {N_RUNS} run now (0 failed)" in res.stdout
    assert (tmp_path / "r.csv").is_file()
    res = runner.invoke(app, ["sweep", str(cfg), "--out", str(out), "-j", "1"])
    assert res.exit_code == 0 and f"{N_RUNS} already done, 0 run now" in res.stdout
    res = runner.invoke(app, ["sweep", str(cfg), "--out", str(out), "--dry-run"])
    assert res.exit_code == 0 and f"{N_RUNS} runs ({N_RUNS} already done, 0 to run)" in res.stdout
    res = runner.invoke(app, ["sweep", str(cfg), "--dry-run"])
    assert res.exit_code == 0 and "estimated" in res.stdout


def test_cli_sweep_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(CONFIG))
    cases = [
        (["sweep", str(cfg), "--preset", "quick", "--out", "x"], "either CONFIG or --preset"),
        (["sweep", "--preset", "huge", "--out", "x"], "unknown preset 'huge'"),
        (["sweep", str(cfg)], "--out is required"),
        (["sweep", str(tmp_path / "none.toml"), "--out", "x"], "not found"),
    ]
    for args, msg in cases:
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert msg in res.stderr


def test_cli_sweep_exit_code_on_failures(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(SCHEDULERS, "broken", Scheduler(_broken, "raises"))
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml({**CONFIG, "algorithms": ["broken"], "workloads": CONFIG["workloads"][:1]}))
    res = runner.invoke(app, ["sweep", str(cfg), "--out", str(tmp_path / "r"), "-j", "1"])
    assert res.exit_code == 1
    assert "(12 failed)" in res.stdout and "RuntimeError: boom" in res.stderr


def test_cli_cluster_without_dask_hints_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    res = runner.invoke(
        app, ["sweep", "--preset", "quick", "--out", str(tmp_path / "r"), "--cluster", "tcp://x:1"]
    )
    assert res.exit_code == 2
    assert "--cluster needs Dask distributed: pip install 'ocsched[dask]'" in res.stderr


def test_missing_pyarrow_gives_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for mod in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(OcschedError, match=r"pip install 'ocsched\[sweep\]'"):
        sweep.run_sweep(CONFIG, tmp_path / "r", workers=1)
    assert len(sweep.expand(CONFIG)) == N_RUNS  # planning needs no extra
