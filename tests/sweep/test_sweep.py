"""Tests of ocsched.sweep and the `ocsched sweep` command."""

from __future__ import annotations

import json
import re
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
from ocsched._extras import install_hint
from ocsched.cli import app
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.model import Configuration
from ocsched.schedulers import SCHEDULERS, Result, Scheduler
from ocsched.workloads import generate

pytest.importorskip("pyarrow")

CONFIG: dict[str, Any] = {
    "switches": [2, 4],
    "delta": [0.02, 0.08],
    "algorithms": ["spectra", "spectra-greedy"],
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
        sweep.RunSpec(**{**spec.__dict__, "algorithm": "spectra-greedy"}),
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
    assert {r.algorithm for r in paper} >= {"spectra", "spectra-greedy", "baseline", "eclipse"}
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
        opts = {k[4:]: v for k, v in r.items() if k.startswith("opt_") and v is not None}
        m = generate("standard", rng=wl_seed, normalize=True, **opts)
        np.fill_diagonal(m, 0.0)
        sched = ocsched.schedule(
            m, switches=r["switches"], delta=r["delta"], algorithm=r["algorithm"], rng=alg_seed
        )
        assert r["makespan"] == sched.makespan
        assert r["lower_bound"] == sched.lower_bound
        assert r["configurations"] == sched.num_configurations
        assert r["splits"] == sched.splits
        assert r["ports"] == m.shape[0] and r["nonzeros"] == int((m > 0).sum())
        assert (r["status"], r["dual_bound"]) == (sched.status, sched.dual_bound) == ("heuristic", None)
        assert r["makespan"] >= r["lower_bound"] * (1 - 1e-9)


def test_matrix_generated_once_per_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    import ocsched.sweep.run

    calls: list[int] = []
    real = ocsched.sweep.run.generate

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["rng"])
        return real(*args, **kwargs)

    monkeypatch.setattr(ocsched.sweep.run, "generate", counting)
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
    with pytest.raises(OcschedError, match=re.escape(install_hint("dask"))):
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


def test_extending_the_grid_runs_only_new_runs(serial: list[dict[str, Any]], tmp_path: Path) -> None:
    out = tmp_path / "r"
    small = {**CONFIG, "delta": [0.02]}
    first = sweep.run_sweep(small, out, workers=1)
    summary = sweep.run_sweep(CONFIG, out, workers=1)  # one more delta: no --force needed
    assert summary.skipped == first.done and summary.done == N_RUNS - first.done
    assert _comparable(_rows(out)) == _comparable(serial)
    # A new workload option adds a typed column; the old parts are rewritten to carry it.
    more = {**CONFIG, "workloads": [*CONFIG["workloads"], {"name": "gpt32", "options": {"copies": 1}}]}
    sweep.run_sweep(more, out, workers=1)
    pd = pytest.importorskip("pandas")
    df = pd.read_parquet(out)
    assert len(df) == N_RUNS + 2 * 2 * 2 and df["key"].is_unique
    assert df.loc[df.workload == "gpt32", "opt_copies"].eq(1).all()
    assert df.loc[df.workload == "standard", "opt_copies"].isna().all()
    summary = sweep.run_sweep(other := {**CONFIG, "delta": [0.01]}, out, workers=1, force=True)
    assert summary.skipped == 0 and {r["delta"] for r in _rows(out)} == {0.01, 0.04}
    assert len(_rows(out)) == len(sweep.expand(other))


def test_never_writes_into_a_foreign_folder(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("mine")
    for force in (False, True):
        with pytest.raises(InvalidInputError, match="not empty and holds no sweep"):
            sweep.run_sweep(CONFIG, junk, workers=1, force=force)
    assert sorted(p.name for p in junk.iterdir()) == ["notes.txt"]


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
    with pytest.raises(InvalidInputError, match=r"no _manifest\.parquet"):
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
        (["sweep", "--preset", "huge", "--out", "x"], "'huge' is not one of 'iterations', 'paper', 'quick'"),
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
    assert f"--cluster needs Dask distributed: {install_hint('dask')}" in res.stderr


def test_missing_pyarrow_gives_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for mod in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(OcschedError, match=re.escape(install_hint("sweep"))):
        sweep.run_sweep(CONFIG, tmp_path / "r", workers=1)
    assert len(sweep.expand(CONFIG)) == N_RUNS  # planning needs no extra


# --------------------------------------------------------------------------- the results folder

SMALL: dict[str, Any] = {**CONFIG, "workloads": CONFIG["workloads"][:1]}  # 24 runs


def _cli(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def _one_line_error(res: Any) -> str:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    return str(lines[0])


def test_folder_is_a_dataset_for_pandas_polars_and_pyarrow(
    serial: list[dict[str, Any]], tmp_path: Path
) -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    import pyarrow.dataset as ds

    out = tmp_path / "r"
    sweep.run_sweep(CONFIG, out, workers=1)
    df = pd.read_parquet(out)
    assert len(df) == N_RUNS and df["key"].is_unique
    assert "options" not in df and "flows" not in df  # no JSON column, no name with two meanings
    assert str(df["opt_n"].dtype) == "int64" and df["nonzeros"].gt(0).all()
    assert sorted(df.loc[df.label.str.startswith("F"), "opt_flows"].unique()) == [2, 6]
    assert pl.read_parquet(out).height == N_RUNS
    table = ds.dataset(out).to_table()
    assert table.num_rows == N_RUNS and table.schema.field("opt_flows").type == "int64"
    assert sorted(df.key) == sorted(r["key"] for r in serial)


def test_rerunning_a_finished_sweep_runs_nothing(tmp_path: Path) -> None:
    workers = 2
    out = tmp_path / "r"
    sweep.run_sweep(SMALL, out, workers=workers)
    again = sweep.run_sweep(SMALL, out, workers=workers)  # used to crash: Pool(0) for 0 batches
    assert (again.done, again.skipped, again.batches) == (0, 24, 0)
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(SMALL))
    res = _cli("sweep", cfg, "--out", out, "-j", "2")
    assert res.exit_code == 0 and "24 already done, 0 run now" in res.stdout


def test_second_sweep_into_a_locked_folder_is_refused(tmp_path: Path) -> None:
    import filelock

    out = tmp_path / "r"
    sweep.run_sweep(SMALL, out, workers=1)
    with filelock.FileLock(out / ".lock", timeout=0):  # as a running sweep holds it
        with pytest.raises(InvalidInputError, match="in use by another sweep"):
            sweep.run_sweep(CONFIG, out, workers=1)
        cfg = tmp_path / "c.toml"
        cfg.write_text(_toml(CONFIG))
        assert "in use by another sweep" in _one_line_error(_cli("sweep", cfg, "--out", out, "-j", "1"))
    assert len(_rows(out)) == 24
    assert sweep.run_sweep(CONFIG, out, workers=1).done == N_RUNS - 24  # free again


def test_readers_ignore_duplicate_keys(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import shutil

    from ocsched import report

    out = tmp_path / "r"
    sweep.run_sweep(SMALL, out, workers=1)
    part = sorted((out / "parts").glob("part-*.parquet"))[0]
    shutil.copy(part, out / "parts" / "part-999999-copy0000.parquet")  # as two writers would leave
    with caplog.at_level("WARNING"):
        assert len(_rows(out)) == 24
    assert "duplicate" in caplog.text
    assert sum(int(line[2]) for line in report.summarize(report.load_rows(out)).data) == 24
    assert sweep.run_sweep(SMALL, out, workers=1).done == 0


def test_truncated_part_is_quarantined_and_redone(
    serial: list[dict[str, Any]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "r"
    sweep.run_sweep(CONFIG, out, workers=1, batch_size=8)
    part = sorted((out / "parts").glob("part-*.parquet"))[1]
    part.write_bytes(part.read_bytes()[:100])
    with caplog.at_level("WARNING"):
        partial = _rows(out)  # a reader skips it, with a warning
    assert 0 < len(partial) < N_RUNS and "unreadable result part" in caplog.text
    summary = sweep.run_sweep(CONFIG, out, workers=1)
    assert summary.done == N_RUNS - len(partial)
    assert (tmp_path / "r.quarantine" / part.name).is_file() and not part.exists()
    assert _comparable(_rows(out)) == _comparable(serial)
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(CONFIG))
    assert _cli("report", out).exit_code == 0


@pytest.mark.parametrize("garbage", [b"", b"not parquet at all", b"PAR1" + b"\0" * 64])
def test_corrupt_manifest_is_one_line(tmp_path: Path, garbage: bytes) -> None:
    out = tmp_path / "r"
    sweep.run_sweep(SMALL, out, workers=1)
    (out / "_manifest.parquet").write_bytes(garbage)
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(SMALL))
    assert "_manifest.parquet" in _one_line_error(_cli("sweep", cfg, "--out", out, "-j", "1"))
    assert "_manifest.parquet" in _one_line_error(_cli("report", out))
    with pytest.raises(InvalidInputError, match=r"_manifest\.parquet"):
        sweep.read_results(out)


def test_report_on_garbage_files_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "g.parquet").write_bytes(b"PAR1garbage")
    (tmp_path / "g.csv").write_text("a,b\n1,2\n")
    (tmp_path / "bin.csv").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "notes.txt").write_text("x")
    for target in ("g.parquet", "g.csv", "bin.csv", "notes.txt", "missing.parquet", "."):
        _one_line_error(_cli("report", tmp_path / target))


def test_old_results_folders_are_read(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    old = tmp_path / "old"
    (old / "parts").mkdir(parents=True)
    (old / "manifest.json").write_text('{"format": "ocsched.sweep", "version": 1}')
    rows = [{"key": "k", "family": "f", "label": "l", "workload": "standard", "options": '{"flows": 8}',
             "normalized": True, "link_gbps": None, "seed": 0, "algorithm": "spectra", "switches": 4,
             "delta": 0.1, "flows": 40, "makespan": 1.5, "lower_bound": 1.0, "ok": True}]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows), old / "parts" / "part-000000-aaaaaaaa.parquet")
    (row,) = _rows(old)
    assert (row["opt_flows"], row["nonzeros"], row["status"]) == (8, 40, None)
    assert "older ocsched" in _one_line_error(_cli("sweep", "--preset", "quick", "--out", old))


def test_file_workload_reads_the_users_matrices(tmp_path: Path) -> None:
    from ocsched import io

    data = tmp_path / "data"
    data.mkdir()
    mats = {f"m{k}.npy": generate("standard", n=10, flows=3, rng=k) * (k + 2) for k in range(2)}
    for name, m in mats.items():
        np.fill_diagonal(m, 0.0)
        np.save(data / name, m)
    (data / "ignored.txt").write_text("x")
    cfg = tmp_path / "c.toml"
    cfg.write_text('switches = [2]\ndelta = [0.05]\n\n[[workloads]]\npath = "data/*.npy"\nlabel = "Mine"\n')
    out = tmp_path / "r"
    res = _cli("sweep", cfg, "--out", out, "-j", "1")
    assert res.exit_code == 0, res.output
    rows = sorted(_rows(out), key=lambda r: r["label"])
    assert [r["label"] for r in rows] == ["Mine m0.npy", "Mine m1.npy"]
    assert [r["opt_path"] for r in rows] == ["data/m0.npy", "data/m1.npy"]
    for r, (name, m) in zip(rows, sorted(mats.items()), strict=True):
        direct = ocsched.schedule(m / io.read_demand(data / name).max_line_sum, switches=2, delta=0.05)
        assert r["workload"] == "file" and r["makespan"] == pytest.approx(direct.makespan, rel=1e-12)
    bad = tmp_path / "bad.toml"
    bad.write_text('switches = 2\ndelta = 0.1\n[[workloads]]\npath = "nothing/*.npy"\n')
    assert "matches no file" in _one_line_error(_cli("sweep", bad, "--out", tmp_path / "x"))
    assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------- progress


def test_progress_eta_waits_for_every_worker(tmp_path: Path) -> None:
    seen: list[sweep.SweepProgress] = []
    sweep.run_sweep(CONFIG, tmp_path / "r", workers=2, batch_size=4, progress=seen.append)
    assert seen[0].done == 0 and seen[0].eta_s is None
    assert seen[1].eta_s is None  # one batch done, the other worker's still running: no rate yet
    assert all(p.eta_s is not None and p.eta_s >= 0 for p in seen[2:])
    assert seen[-1].done == N_RUNS and seen[-1].eta_s == 0


def test_plain_progress_lines_without_a_terminal(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(SMALL))
    res = _cli("sweep", cfg, "--out", tmp_path / "r", "-j", "1")
    assert res.exit_code == 0
    lines = [line for line in res.stderr.splitlines() if line.startswith("sweep: ")]
    assert lines[0].startswith("sweep: 0/24, 0 failed") and lines[0].endswith("ETA estimating")
    assert lines[-1].startswith("sweep: 24/24") and lines[-1].endswith("ETA 0 s")
    assert "\x1b[" not in res.stderr  # no terminal control codes in a log


def test_progress_line_prints_periodically() -> None:
    from ocsched.cli._progress import ProgressLine

    now = [0.0]
    lines: list[str] = []
    bar = ProgressLine("x", interval=10.0, clock=lambda: now[0], echo=lines.append)
    with bar:
        for step in range(1, 40):
            now[0] = float(step)
            bar.update(step, 100, None if step < 5 else 2.0 * (100 - step))
    assert [int(line.split()[1].split("/")[0]) for line in lines] == [1, 11, 21, 31, 39]  # every 10 s + last
    assert lines[0] == "x: 1/100; elapsed 1.0 s, ETA estimating"
    assert lines[-1] == "x: 39/100; elapsed 39.0 s, ETA 2.0 min"


# --------------------------------------------------------------------------- Dask


@pytest.mark.parametrize("address", ["not a url", "tcp://", "http://x:y", "tcp://127.0.0.1:99999999"])
def test_cluster_garbage_address_is_one_line(tmp_path: Path, address: str) -> None:
    pytest.importorskip("distributed")
    msg = _one_line_error(_cli("sweep", "--preset", "quick", "--out", tmp_path / "r", "--cluster", address))
    assert "--cluster" in msg
    assert not (tmp_path / "r").exists()


def test_cluster_unreachable_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    res = _cli(
        "sweep", "--preset", "quick", "--out", tmp_path / "r", "--cluster", "tcp://127.0.0.1:1", "--wait", "1"
    )
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in _one_line_error(res)
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_cluster_without_workers_waits_then_says_so(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None, protocol="tcp") as c:
        res = _cli(
            "sweep",
            "--preset",
            "quick",
            "--out",
            tmp_path / "r",
            "--cluster",
            c.scheduler_address,
            "--wait",
            "2",
        )
    assert "has no workers after 2 s" in _one_line_error(res) and "dask worker" in res.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_cluster_local_starts_a_local_cluster(serial: list[dict[str, Any]], tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(CONFIG))
    res = _cli("sweep", cfg, "--out", tmp_path / "r", "--cluster", "local", "-j", "2")
    assert res.exit_code == 0, res.output
    assert _comparable(_rows(tmp_path / "r")) == _comparable(serial)


@pytest.mark.slow
def test_lost_scheduler_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    sched = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard", "--scheduler-file", str(tmp_path / "s.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "s.json").is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads((tmp_path / "s.json").read_text())["address"]
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        cfg = {**CONFIG, "workloads": [{"name": "standard", "seeds": 40, "options": {"n": 60}}]}
        (tmp_path / "c.toml").write_text(_toml(cfg))
        cmd = [
            sys.executable,
            "-c",
            "from ocsched.cli import main; main()",
            "sweep",
            str(tmp_path / "c.toml"),
        ]
        cmd += ["--out", str(tmp_path / "r"), "--cluster", address, "--batch-size", "2", "--wait", "5"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while time.monotonic() < deadline and len(list((tmp_path / "r" / "parts").glob("part-*"))) < 2:
            time.sleep(0.05)
        sched.kill()
        _, err = proc.communicate(timeout=120)
        worker.kill()
        worker.wait()
    finally:
        sched.kill()
        sched.wait()
    assert proc.returncode == 2, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Dask" in errors[0] and "rerun" in errors[0] and "Traceback" not in err


# --------------------------------------------------------------------------- kill -9


def _descendants(pid: int) -> set[int]:
    psutil = pytest.importorskip("psutil")
    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


@pytest.mark.slow
def test_kill_9_leaves_no_worker_processes(tmp_path: Path) -> None:
    psutil = pytest.importorskip("psutil")
    cfg = {**CONFIG, "workloads": [{"name": "standard", "seeds": 60, "options": {"n": 80}}]}
    (tmp_path / "c.toml").write_text(_toml(cfg))
    cmd = [sys.executable, "-c", "from ocsched.cli import main; main()", "sweep", str(tmp_path / "c.toml"),
           "--out", str(tmp_path / "r"), "-j", "2", "--batch-size", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list((tmp_path / "r" / "parts").glob("part-*")):
        time.sleep(0.05)
    workers = _descendants(proc.pid)
    assert len(workers) >= 2  # the forkserver and its pool workers
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    _, alive = psutil.wait_procs([psutil.Process(p) for p in workers if psutil.pid_exists(p)], timeout=10)
    assert not alive, [p.cmdline() for p in alive]


def test_rows_keep_the_exact_solvers_status_and_dual_bound(tmp_path: Path) -> None:
    pytest.importorskip("highspy")
    cfg = {
        "switches": 2,
        "delta": 0.05,
        "algorithms": ["exact", "spectra"],
        "workloads": [{"name": "standard", "seeds": 1, "options": {"n": 4, "flows": 2, "disjoint": False}}],
    }
    sweep.run_sweep(cfg, tmp_path / "r", workers=1)
    rows = {r["algorithm"]: r for r in _rows(tmp_path / "r")}
    exact, spectra = rows["exact"], rows["spectra"]
    assert exact["ok"] and exact["status"] == "optimal"
    assert exact["lower_bound"] <= exact["dual_bound"] * (1 + 1e-9) <= exact["makespan"] * (1 + 1e-6)
    assert (spectra["status"], spectra["dual_bound"]) == ("heuristic", None)


def test_missing_filelock_gives_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "filelock", None)
    with pytest.raises(OcschedError, match=re.escape(install_hint("sweep"))):
        sweep.run_sweep(SMALL, tmp_path / "r", workers=1)
    assert not (tmp_path / "r").exists()


# --------------------------------------------------------------------------- fabrics

#: Sorted-key digests of CONFIG and the quick preset, computed by ocsched before sweeps took
#: fabrics: a switches x delta grid must keep its keys (old results folders resume).
UNIFORM_KEY_DIGESTS = {"CONFIG": "fc7c7f8945fdfc8a", "quick": "38000025a89ec6b7"}

MIXED = {"name": "mixed", "switches": [{"delta": 0.01, "count": 2}, {"delta": 0.1, "count": 2}]}
PARTIAL = {"name": "partial", "model": "partial", "switches": [{"delta": 0.08, "count": 3}]}
FABRICS: dict[str, Any] = {
    "algorithms": ["spectra", "spectra-pack"],
    "workloads": [
        {
            "name": "standard",
            "label": "S",
            "seeds": 2,
            "options": {"n": 10, "flows": 3},
            "fabrics": [MIXED, PARTIAL],
        },
        {
            "name": "standard",
            "label": "S",
            "seeds": 2,
            "options": {"n": 10, "flows": 3},
            "algorithms": ["spectra-partial"],
            "fabrics": [PARTIAL],
        },
    ],
}
N_FABRIC_RUNS = 2 * 2 * 2 + 2  # seeds x algs x fabrics + seeds x spectra-partial


def _digest(keys: list[str]) -> str:
    import hashlib

    return hashlib.sha256("".join(sorted(keys)).encode()).hexdigest()[:16]


def test_uniform_grids_keep_their_keys_and_have_no_fabric(serial: list[dict[str, Any]]) -> None:
    assert _digest([r.key for r in sweep.expand(CONFIG)]) == UNIFORM_KEY_DIGESTS["CONFIG"]
    quick = sweep.expand(sweep.load_config("quick"))
    assert _digest([r.key for r in quick]) == UNIFORM_KEY_DIGESTS["quick"]
    assert {r["fabric"] for r in serial} == {None}


def test_fabric_rows_are_valid_and_match_direct_calls(tmp_path: Path) -> None:
    summary = sweep.run_sweep(FABRICS, tmp_path / "r", workers=1)
    assert (summary.runs, summary.failed) == (N_FABRIC_RUNS, 0)
    rows = _rows(tmp_path / "r")
    assert len(rows) == len({r["key"] for r in rows}) == N_FABRIC_RUNS
    assert all(r["ok"] and r["error"] is None for r in rows)
    assert {(r["fabric"], r["switches"], r["delta"]) for r in rows} == {
        ("mixed", 4, 0.1),
        ("partial", 3, 0.08),
    }
    assert {r["algorithm"] for r in rows if r["fabric"] == "partial"} == {
        "spectra",
        "spectra-pack",
        "spectra-partial",
    }
    fabrics = {
        name: ocsched.Fabric.from_dict({k: v for k, v in f.items() if k != "name"})
        for name, f in (("mixed", MIXED), ("partial", PARTIAL))
    }
    for r in rows:
        assert r["makespan"] >= r["lower_bound"] * (1 - 1e-9)
        _, alg_seed = sweep.derive_seeds(r["seed"])
        m = generate("standard", rng=r["workload_seed"], normalize=True, n=10, flows=3)
        np.fill_diagonal(m, 0.0)
        fab = fabrics[r["fabric"]]
        sched = ocsched.schedule(m, fabric=fab, algorithm=r["algorithm"], rng=alg_seed)
        assert ocsched.validate(sched, m, fabric=fab).ok
        assert r["makespan"] == sched.makespan
        assert r["lower_bound"] == ocsched.lower_bound(m, fabric=fab)
    # Resuming: a second run finds every key done.
    assert sweep.run_sweep(FABRICS, tmp_path / "r", workers=1).done == 0


def test_fabric_is_part_of_the_key() -> None:
    runs = sweep.expand(FABRICS)
    assert len({r.key for r in runs}) == N_FABRIC_RUNS
    other = {**MIXED, "name": "other", "switches": [{"delta": 0.01, "count": 3}, {"delta": 0.1}]}
    cfg = {**FABRICS, "workloads": [{**FABRICS["workloads"][0], "fabrics": [MIXED, other]}]}
    mixed, changed = ({r.fabric_spec for r in sweep.expand(cfg) if r.fabric == n} for n in ("mixed", "other"))
    assert len(mixed) == len(changed) == 1 and mixed != changed
    # Same switch count and largest delay, different fabric: different keys.
    same_shape = [r for r in sweep.expand(cfg) if r.seed == 0 and r.algorithm == "spectra"]
    assert {(r.switches, r.delta) for r in same_shape} == {(4, 0.1)} and len({r.key for r in same_shape}) == 2


def test_fabric_toml_path_is_read_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "fab").mkdir()
    (tmp_path / "fab" / "mems.toml").write_text(
        "[[switches]]\ndelta = 0.05\ncount = 2\n[[switches]]\ndelta = 0.2\n"
    )
    cfg = tmp_path / "c.toml"
    wl = {"name": "standard", "seeds": 1, "options": {"n": 8, "flows": 2}, "fabrics": ["fab/mems.toml"]}
    cfg.write_text(_toml({"algorithms": ["spectra"], "workloads": [wl]}))
    (run,) = sweep.expand(sweep.load_config(cfg), base=cfg.parent)
    assert (run.fabric, run.switches, run.delta) == ("mems.toml", 3, 0.2)
    (row,) = sweep.run_batch([run])
    assert row["ok"] and row["fabric"] == "mems.toml"
    wl["fabrics"] = ["fab/none.toml"]
    cfg.write_text(_toml({"algorithms": ["spectra"], "workloads": [wl]}))
    with pytest.raises(InvalidInputError, match=r"workloads\[0\]\.fabrics\[0\]. file not found"):
        sweep.load_config(cfg)


@pytest.mark.parametrize(
    ("patch", "match"),
    [
        ({"switches": [2]}, r"^`workloads\[0\]`: give either `fabrics` or `switches`/`delta`, not both$"),
        (
            {"algorithms": ["baseline"]},
            r"^`workloads\[0\]`: algorithm 'baseline' cannot run on fabric 'partial': "
            r"it does not support partial \(it supports: heterogeneous\)$",
        ),
        (
            {"algorithms": ["spectra-partial"], "fabrics": [{"switches": [{"delta": 0.1, "count": 2}]}]},
            r"^`workloads\[0\]`: algorithm 'spectra-partial' cannot run on fabric '2 switches, delta 0.1': "
            r"it needs partial",
        ),
        ({"fabrics": [MIXED, {**PARTIAL, "name": "mixed"}]}, r"two different fabrics are named 'mixed'"),
        (
            {"fabrics": [{"switches": [{"delta": -1}]}]},
            r"^`workloads\[0\]\.fabrics\[0\]`: `switch delta` must be a finite number >= 0; got -1$",
        ),
        ({"fabrics": [{"switches": [{"delta": 1}], "colour": 1}]}, r"fabrics\[0\]. has unknown key 'colour'"),
        ({"fabrics": [3]}, r"fabrics\[0\]. must be a fabric table or a FABRIC.toml path; got 3"),
        ({"fabrics": []}, r"fabrics. must not be empty"),
    ],
)
def test_bad_fabric_config_raises(patch: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        sweep.expand({**FABRICS, "workloads": [{**FABRICS["workloads"][0], **patch}]})


def test_top_level_fabrics_and_overrides() -> None:
    wl = {"name": "standard", "seeds": 1, "options": {"n": 8, "flows": 2}}
    cfg = {"fabrics": [MIXED], "workloads": [wl, {**wl, "label": "grid", "switches": 2, "delta": 0.1}]}
    runs = sweep.expand(cfg)
    assert [(r.fabric, r.switches) for r in runs] == [("mixed", 4), (None, 2)]
    with pytest.raises(InvalidInputError, match=r"^`workloads\[0\]`: give either"):
        sweep.expand({**cfg, "switches": 2})


def test_cli_sweep_on_fabrics_end_to_end(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(_toml(FABRICS))
    out = tmp_path / "r"
    res = _cli("sweep", cfg, "--out", out, "-j", "1")
    assert res.exit_code == 0, res.output
    assert f"{N_FABRIC_RUNS} runs: 0 already done, {N_FABRIC_RUNS} run now (0 failed)" in res.stdout
    res = _cli("report", out)
    assert res.exit_code == 0, res.output
    assert "spectra-partial" in res.stdout
    bad = {**FABRICS, "workloads": [{**FABRICS["workloads"][0], "algorithms": ["baseline"]}]}
    cfg.write_text(_toml(bad))
    err = _one_line_error(_cli("sweep", cfg, "--out", tmp_path / "r2"))
    assert "algorithm 'baseline' cannot run on fabric 'partial'" in err


def test_folder_from_before_fabrics_gets_the_fabric_column(tmp_path: Path) -> None:
    _, pq = sweep.pyarrow_modules()
    out = tmp_path / "r"
    sweep.run_sweep(SMALL, out, workers=1)
    for f in [out / "_manifest.parquet", *(out / "parts").glob("*.parquet")]:  # as written before
        t = pq.read_table(f)
        pq.write_table(t.drop_columns(["fabric"]).replace_schema_metadata(t.schema.metadata), f)
    summary = sweep.run_sweep({**FABRICS, "workloads": FABRICS["workloads"][:1]}, out, workers=1)
    assert (summary.skipped, summary.done, summary.failed) == (0, 8, 0)
    assert all("fabric" in pq.read_schema(f).names for f in (out / "parts").glob("*.parquet"))
    rows = _rows(out)
    assert len(rows) == 24 + 8
    assert sorted({str(r["fabric"]) for r in rows}) == ["None", "mixed", "partial"]


# --------------------------------------------------------------------------- iteration workloads

ITERATIONS: dict[str, Any] = {
    "switches": 3,
    "delta": 0.04,
    "algorithms": ["spectra"],
    "workloads": [
        {"name": "standard", "seeds": 1, "options": {"n": 8, "flows": 2}},
        {
            "name": "moe-iteration",
            "seeds": 2,
            "options": {"gpus": 6, "layers": 2},
            "algorithms": ["spectra-seq", "independent", "spectra-seq:spectra-pack"],
            "delta": [0.001, 0.05],
        },
    ],
}


def test_iteration_rows_match_direct_calls(tmp_path: Path) -> None:
    from ocsched.sequence import iteration_row, schedule_iteration
    from ocsched.workloads import generate_iteration

    summary = sweep.run_sweep(ITERATIONS, tmp_path / "r", workers=1)
    assert (summary.runs, summary.failed) == (1 + 2 * 3 * 2, 0)
    rows = _rows(tmp_path / "r")
    single = [r for r in rows if r["phases"] is None]
    assert [r["workload"] for r in single] == ["standard"] and single[0]["exposed"] is None
    for r in rows:
        if r["phases"] is None:
            continue
        assert r["ok"] and r["normalized"] is False and r["phases"] == 4
        it = generate_iteration("moe-iteration", rng=r["workload_seed"], gpus=6, layers=2)
        alg, _, base = r["algorithm"].partition(":")
        kw = {"switches": 3, "delta": r["delta"], "base": base or "spectra", "rng": r["algorithm_seed"]}
        sched = schedule_iteration(it, algorithm=alg, **kw)
        ind = schedule_iteration(it, algorithm="independent", **kw)
        want = iteration_row(sched, independent=ind)
        assert r["makespan"] == sched.makespan and r["lower_bound"] == sched.lower_bound
        for key in ("exposed", "delay_hidden_pct", "reused_pct", "ratio_independent", "ratio_bound"):
            assert r[key] == want[key], key
        assert r["ratio_independent"] <= 1 + 1e-12  # never worse than independent
        assert r["nonzeros"] == sum(p.demand.nnz for p in it.phases)
    assert sweep.run_sweep(ITERATIONS, tmp_path / "r", workers=1).done == 0  # resumable


def test_iteration_runs_on_fabrics(tmp_path: Path) -> None:
    # Iteration schedulers run on every fabric their base supports: a sweep's `fabrics` reach them.
    from ocsched.fabric import Fabric
    from ocsched.sequence import iteration_row, schedule_iteration
    from ocsched.workloads import generate_iteration

    mixed = {"name": "mixed", "switches": [{"delta": 0.01, "rate": 2.0}, {"delta": 0.05}]}
    partial = {"name": "partial", "model": "partial", "switches": [{"delta": 0.02, "count": 2}], "down": []}
    entry = {
        "name": "moe-iteration",
        "options": {"gpus": 5, "layers": 1},
        "algorithms": ["spectra-seq", "spectra-seq:spectra-partial"],
        "fabrics": [mixed, partial],
    }
    with pytest.raises(InvalidInputError, match="'spectra-partial' cannot run on fabric 'mixed'"):
        sweep.expand({"workloads": [entry]})
    entry["algorithms"] = ["spectra-seq", "independent:spectra-pack"]
    sweep.run_sweep({"workloads": [entry]}, tmp_path / "r", workers=1)
    rows = _rows(tmp_path / "r")
    assert len(rows) == 4 and all(r["ok"] for r in rows)
    assert sorted({str(r["fabric"]) for r in rows}) == ["mixed", "partial"]
    for r in rows:
        fab = Fabric.from_dict(
            {k: v for k, v in (mixed if r["fabric"] == "mixed" else partial).items() if k != "name"}
        )
        it = generate_iteration("moe-iteration", rng=r["workload_seed"], gpus=5, layers=1)
        alg, _, base = r["algorithm"].partition(":")
        kw = {"fabric": fab, "base": base or "spectra", "rng": r["algorithm_seed"]}
        sched = schedule_iteration(it, algorithm=alg, **kw)
        want = iteration_row(sched, independent=schedule_iteration(it, algorithm="independent", **kw))
        assert r["makespan"] == sched.makespan and r["exposed"] == want["exposed"]


@pytest.mark.parametrize(
    ("patch", "match"),
    [
        ({"normalized": True}, "normalized` must be false"),
        ({"algorithms": ["spectra"]}, "'spectra' is not an iteration algorithm"),
        ({"algorithms": ["spectra-seq:nope"]}, "optionally as 'NAME:BASE'"),
        (
            {
                "algorithms": ["spectra-seq:naive"],
                "fabrics": [{"switches": [{"delta": 0.1}, {"delta": 0.2}]}],
            },
            "'naive' cannot run on fabric .*: it does not support heterogeneous",
        ),
        ({"algorithms": ["spectra-seq:spectra-partial"]}, "'spectra-partial' needs a fabric with partial"),
        ({"link_gbps": 100}, "link_gbps` is not allowed"),
        ({"options": {"experts": 3, "nope": 1}}, "has no option 'nope'"),
    ],
)
def test_bad_iteration_entry_raises(patch: dict[str, Any], match: str) -> None:
    entry = {"name": "moe-iteration", "options": {"gpus": 4, "layers": 1}, **patch}
    with pytest.raises(InvalidInputError, match=match):
        sweep.expand({"switches": 2, "delta": 0.1, "workloads": [entry]})


def test_best_bound_is_the_strong_bound_or_the_dual(serial: list[dict[str, Any]]) -> None:
    for r in serial:
        m = generate("standard", rng=r["workload_seed"], normalize=True, n=r["opt_n"], flows=r["opt_flows"])
        np.fill_diagonal(m, 0.0)
        strong = ocsched.lower_bound(m, switches=r["switches"], delta=r["delta"], strong=True)
        assert r["best_bound"] == max(strong, r["lower_bound"])
        assert r["lower_bound"] <= r["best_bound"] <= r["makespan"] * (1 + 1e-9)


# --------------------------------------------------------------------------- run identity


def _one_fabric(name: str, delta: float) -> dict[str, Any]:
    return {
        "algorithms": ["spectra", "baseline"],
        "workloads": [
            {
                "name": "standard",
                "seeds": 1,
                "options": {"n": 12, "flows": 3},
                "fabrics": [{"name": name, "switches": [{"delta": delta, "count": 2}]}],
            }
        ],
    }


def test_two_fabrics_of_one_name_in_one_folder_are_told_apart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from ocsched import report
    from ocsched.report.tables import ratios

    out = tmp_path / "r"
    sweep.run_sweep(_one_fabric("f", 0.01), out, workers=1)
    sweep.run_sweep(_one_fabric("f", 0.1), out, workers=1)  # another config, another fabric "f"
    rows = _rows(out)
    assert len(rows) == 4 and {r["fabric"] for r in rows} == {"f"}
    ids = {r["fabric_id"] for r in rows}
    assert len(ids) == 2 and None not in ids
    # Each fabric's baseline is compared with its own spectra: two ratios, from all four rows.
    assert len(ratios(rows, "baseline", "spectra")) == 2
    want = [
        next(r for r in rows if r["fabric_id"] == i and r["algorithm"] == "baseline")["makespan"]
        / next(r for r in rows if r["fabric_id"] == i and r["algorithm"] == "spectra")["makespan"]
        for i in sorted(ids)
    ]
    table = report.summarize(rows)
    assert table.data[0][2:4] == [4, 0]  # runs, failed
    assert table.data[0][-2] == pytest.approx(sum(want) / 2)
    # Named unambiguously, with a warning: "f [1a2b3c4d]" for each.
    with caplog.at_level("WARNING"):
        by = report.summarize(rows, by=["fabric"])
    shown = sorted(line[2] for line in by.rows)
    assert shown == sorted(f"f [{i[:8]}]" for i in ids)
    assert "2 different fabrics named 'f'" in caplog.text


def test_fabric_identity_is_its_content_not_its_layout() -> None:
    a = {
        "switches": [{"delta": 0.1, "count": 2}],
        "down": [{"switch": 1, "start": 2}, {"switch": 0, "start": 1}],
    }
    b = {
        "switches": [{"delta": 0.1}, {"delta": 0.1, "rate": 1}],
        "down": [{"switch": 0, "start": 1.0}, {"switch": 1, "start": 2.0}],
    }
    runs = [
        sweep.expand(
            {"algorithms": ["spectra"], "workloads": [{"name": "standard", "fabrics": [{**f, "name": "x"}]}]}
        )
        for f in (a, b)
    ]
    assert runs[0][0].key == runs[1][0].key and runs[0][0].fabric_id == runs[1][0].fabric_id
    c = {**a, "down": [{"switch": 1, "start": 2}]}
    other = sweep.expand(
        {"algorithms": ["spectra"], "workloads": [{"name": "standard", "fabrics": [{**c, "name": "x"}]}]}
    )
    assert other[0].key != runs[0][0].key and other[0].fabric_id != runs[0][0].fabric_id


def test_a_file_is_identified_by_its_bytes_not_its_path(tmp_path: Path) -> None:
    from ocsched.report.tables import ratios

    out = tmp_path / "r"
    cfg = {
        "switches": [2],
        "delta": [0.05],
        "algorithms": ["spectra", "baseline"],
        "workloads": [{"path": "m.npy"}],
    }
    cfg_text = _toml(cfg)
    rng = np.random.default_rng(0)
    for k in range(2):  # two projects, one file name, different matrices
        (tmp_path / f"p{k}").mkdir()
        m = rng.random((6, 6))
        np.fill_diagonal(m, 0.0)
        np.save(tmp_path / f"p{k}" / "m.npy", m)
        (tmp_path / f"p{k}" / "c.toml").write_text(cfg_text)
    first = sweep.run_sweep(tmp_path / "p0" / "c.toml", out, workers=1)
    second = sweep.run_sweep(tmp_path / "p1" / "c.toml", out, workers=1)
    assert (first.done, second.skipped, second.done) == (2, 0, 2)  # not taken for the first's runs
    rows = _rows(out)
    assert len({r["input_sha256"] for r in rows}) == 2
    assert len(ratios(rows, "baseline", "spectra")) == 2
    # The same bytes again: every run is found done.
    assert sweep.run_sweep(tmp_path / "p1" / "c.toml", out, workers=1).skipped == 2


def test_rows_from_before_fabric_ids_get_theirs_when_resumed(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "r"
    sweep.run_sweep(_one_fabric("f", 0.01), out, workers=1)
    # Make the folder look as an older ocsched wrote it: no fabric_id, input_sha256 columns.
    old = ["fabric_id", "input_sha256"]
    for part in (out / "parts").glob("*.parquet"):
        pq.write_table(pq.read_table(part).drop_columns(old), part)
    manifest = pq.read_schema(out / "_manifest.parquet")
    kept = manifest.empty_table().drop_columns(old).replace_schema_metadata(manifest.metadata)
    pq.write_table(kept, out / "_manifest.parquet")
    assert {r.get("fabric_id") for r in _rows(out)} == {None}
    summary = sweep.run_sweep(_one_fabric("f", 0.01), out, workers=1)
    assert summary.skipped == 2 and summary.done == 0  # the same runs: nothing redone ...
    (want,) = {r.fabric_id for r in sweep.expand(_one_fabric("f", 0.01))}
    assert {r["fabric_id"] for r in _rows(out)} == {want}  # ... and their identity filled in
