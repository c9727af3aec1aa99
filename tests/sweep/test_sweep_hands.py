"""Sweeps in the user's hands: the CSV is derived data, dry runs keep their runs, any Dask cluster."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ocsched import sweep
from ocsched.cli import app

pytest.importorskip("pyarrow")

CONFIG: dict[str, Any] = {
    "switches": [2, 4],
    "delta": 0.05,
    "algorithms": ["spectra", "spectra-greedy"],
    "workloads": [{"name": "standard", "label": "S", "seeds": 3, "options": {"n": 10, "flows": 3}}],
}
N_RUNS = 3 * 2 * 2

TOML = """switches = [2, 4]
delta = 0.05
algorithms = ["spectra", "spectra-greedy"]

[[workloads]]
name = "standard"
label = "S"
seeds = 3
options = { n = 10, flows = 3 }
"""


def _comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: v for k, v in r.items() if k != "wall_time_s"} for r in rows), key=lambda r: r["key"])


def _cli(*args: object) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_csv_is_rewritten_on_rerun_without_force(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(TOML)
    out, csv = tmp_path / "r", tmp_path / "r.csv"
    first = _cli("sweep", cfg, "--out", out, "-j", "1", "--csv", csv)
    assert first.exit_code == 0, first.output
    csv.write_text("stale\n")
    again = _cli("sweep", cfg, "--out", out, "-j", "1", "--csv", csv)
    assert again.exit_code == 0, again.output
    assert f"{N_RUNS} already done, 0 run now" in again.stdout  # nothing deleted, nothing rerun
    assert _comparable(sweep.read_results(csv).to_pylist()) == _comparable(
        sweep.read_results(out).to_pylist()
    )
    assert len(sweep.read_results(out)) == N_RUNS


def test_csv_inside_the_results_or_a_folder_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(TOML)
    res = _cli("sweep", cfg, "--out", tmp_path / "r", "--csv", tmp_path)
    assert res.exit_code == 2 and "`--csv` is a directory" in res.output
    res = _cli("sweep", cfg, "--out", tmp_path / "r", "--csv", tmp_path / "r" / "x.csv")
    assert res.exit_code == 2 and "outside the results folder" in res.output
    assert not (tmp_path / "r").exists()


def test_dry_run_keeps_its_sample_runs(tmp_path: Path) -> None:
    out = tmp_path / "r"
    est = sweep.estimate_sweep(CONFIG, out, sample=3)
    assert (est.runs, est.sampled, est.todo) == (N_RUNS, 3, N_RUNS - 3)
    assert len(sweep.read_results(out)) == 3
    summary = sweep.run_sweep(CONFIG, out, workers=1)
    assert (summary.skipped, summary.done) == (3, N_RUNS - 3)
    fresh = tmp_path / "fresh"
    sweep.run_sweep(CONFIG, fresh, workers=1)
    assert _comparable(sweep.read_results(out).to_pylist()) == _comparable(
        sweep.read_results(fresh).to_pylist()
    )


def test_cli_dry_run_counts_toward_the_sweep(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(TOML)
    out = tmp_path / "r"
    dry = _cli("sweep", cfg, "--out", out, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"{N_RUNS} runs (8 already done, {N_RUNS - 8} to run)" in dry.stdout
    assert "sample runs are kept" in dry.stderr
    real = _cli("sweep", cfg, "--out", out, "-j", "1")
    assert real.exit_code == 0 and f"{N_RUNS} runs: 8 already done, {N_RUNS - 8} run now" in real.stdout
    # without --out there is nowhere to keep them: nothing is written
    assert _cli("sweep", cfg, "--dry-run").exit_code == 0


def test_read_results_dedupes_a_run_stored_twice(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "r"
    sweep.run_sweep(CONFIG, out, workers=1)
    parts = sorted((out).rglob("part-*.parquet"))
    dup = parts[0].with_name("part-999999-dup.parquet")
    dup.write_bytes(parts[0].read_bytes())
    naive = sum(pq.read_table(p).num_rows for p in (out).rglob("part-*.parquet"))
    assert naive > N_RUNS and len(sweep.read_results(out)) == N_RUNS


@pytest.fixture(scope="module")
def local_cluster() -> Any:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        yield cluster


def test_run_sweep_takes_a_client_or_a_cluster_object(tmp_path: Path, local_cluster: Any) -> None:
    distributed = pytest.importorskip("distributed")
    serial = tmp_path / "serial"
    sweep.run_sweep(CONFIG, serial, workers=1)
    want = _comparable(sweep.read_results(serial).to_pylist())
    seen: list[str | None] = []
    s = sweep.run_sweep(
        CONFIG, tmp_path / "obj", cluster=local_cluster, progress=lambda p: seen.append(p.dashboard)
    )
    assert s.done == N_RUNS and _comparable(sweep.read_results(tmp_path / "obj").to_pylist()) == want
    assert seen and seen[0] is not None and seen[0].startswith("http")  # the dashboard link
    with distributed.Client(local_cluster) as client:
        s = sweep.run_sweep(CONFIG, tmp_path / "client", cluster=client)
        assert client.status == "running"  # the caller's client stays open
    assert s.done == N_RUNS and _comparable(sweep.read_results(tmp_path / "client").to_pylist()) == want


def test_run_sweep_refuses_other_objects(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from ocsched.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=r"a distributed\.Client or a cluster object"):
        sweep.run_sweep(CONFIG, tmp_path / "r", cluster=42)
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_ctrl_c_on_a_local_cluster_prints_one_line(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    cfg = tmp_path / "c.toml"
    cfg.write_text(TOML.replace("seeds = 3", "seeds = 400").replace("n = 10", "n = 40"))
    out = tmp_path / "r"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ocsched",
            "sweep",
            str(cfg),
            "--out",
            str(out),
            "--cluster",
            "local",
            "-j",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the signal reaches the CLI and its workers
    )
    deadline = time.monotonic() + 120
    while not any(out.rglob("part-*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    lines = [
        line
        for line in err.splitlines()
        if line.strip() and not line.startswith(("sweep:", "Dask dashboard"))
    ]
    assert len(lines) == 1 and "interrupted; finished batches are saved" in lines[0], err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


# --- figures ------------------------------------------------------------------------------------

FIG_CONFIG: dict[str, Any] = {
    "switches": [2, 3],
    "delta": [0.02, 0.04, 0.08],
    "algorithms": ["spectra", "solstice"],
    "workloads": [{"name": "standard", "label": "S", "seeds": 2, "options": {"n": 10, "flows": 3}}],
}


@pytest.fixture(scope="module")
def fig_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("fig") / "r"
    sweep.run_sweep(FIG_CONFIG, out, workers=1)
    return out


def _figure(plot: Any, *args: Any, **kw: Any) -> Any:
    from ocsched.report import figures

    captured: list[Any] = []
    real = figures.save
    figures.save = lambda fig, stem, formats, dpi=150: captured.append(fig) or [stem]  # type: ignore[assignment]
    try:
        plot(*args, **kw)
    finally:
        figures.save = real  # type: ignore[assignment]
    (fig,) = captured
    return fig


def test_doubling_axes_are_log2_others_linear(fig_results: Path) -> None:
    from ocsched import report
    from ocsched.report.figures import pyplot

    rows = report.load_rows(fig_results)
    fig = _figure(report.plot_delta, rows, "unused", label="S")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2  # 0.02, 0.04, 0.08 double
    assert ax.get_xlabel() == "reconfiguration delay δ (largest line sum = 1)"
    assert ax.get_ylabel().startswith("makespan (largest line sum = 1;")
    pyplot().close(fig)
    fig = _figure(report.plot_switches, rows, "unused", label="S")
    assert fig.axes[0].get_xscale() == "linear"  # s = 2, 3 does not double
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["2", "3"]
    pyplot().close(fig)


def test_headline_is_the_ratio_to_the_bound(fig_results: Path) -> None:
    from ocsched import report
    from ocsched.report.figures import pyplot

    rows = report.load_rows(fig_results)
    fig = _figure(report.plot_ratios, rows, "unused")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "makespan / lower bound (mean; 1 = optimal)"
    bars = [p for p in ax.patches if p.get_gid() == "ratio"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["spectra", "solstice"]  # every algorithm against the bound, none against spectra
    ok = [r for r in rows if r["ok"]]
    for name, bar in zip(legend, bars, strict=True):
        want = sum(r["makespan"] / r["lower_bound"] for r in ok if r["algorithm"] == name) / (len(ok) / 2)
        assert bar.get_height() == pytest.approx(want)
        assert bar.get_height() >= 1.0
    pyplot().close(fig)


def test_report_figure_format_and_dpi(fig_results: Path, tmp_path: Path) -> None:
    from matplotlib.image import imread

    out = tmp_path / "rep"
    res = _cli(
        "report", fig_results, "--out", out, "--figure-format", "svg", "--figure-format", "png", "--dpi", "40"
    )
    assert res.exit_code == 0, res.output
    names = {p.suffix for p in out.iterdir() if p.stem.startswith(("delta-", "ratios"))}
    assert names == {".svg", ".png"}
    low = imread(out / "ratios.png").shape
    out2 = tmp_path / "rep2"
    assert _cli("report", fig_results, "--out", out2, "--figure-format", "png", "--dpi", "80").exit_code == 0
    high = imread(out2 / "ratios.png").shape
    assert high[1] == pytest.approx(2 * low[1], rel=0.05)  # width in pixels follows the dpi
    bad = _cli("report", fig_results, "--out", tmp_path / "x", "--figure-format", "gif")
    assert bad.exit_code == 2 and "gif" in bad.output
    bad = _cli("report", fig_results, "--out", tmp_path / "x", "--dpi", "5")
    assert bad.exit_code == 2 and "--dpi" in bad.output
