"""Unix conventions: ``-`` for stdin and stdout, ``generate`` into a pipe, ``--quiet``/``--verbose``."""

from __future__ import annotations

import io as stdio
import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from helpers import D3, run
from ocsched import io
from ocsched.cli import app
from ocsched.iteration import Iteration
from ocsched.model import Schedule


def run_in(data: bytes | str, *args: str | Path) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], input=data)


def test_demand_from_stdin_in_every_format(tmp_path: Path) -> None:
    want = run("bound", _save(tmp_path, "d.npy"), "-s", "2", "-d", "0.5", "--json").stdout
    for name in ("d.npy", "d.csv", "d.json", "d.npz"):
        data = _save(tmp_path, name).read_bytes()
        res = run_in(data, "bound", "-", "-s", "2", "-d", "0.5", "--json")
        assert res.exit_code == 0, (name, res.stderr)  # type: ignore[attr-defined]
        assert res.stdout == want, name  # type: ignore[attr-defined]


def _save(tmp_path: Path, name: str) -> Path:
    p = tmp_path / name
    if not p.exists():
        io.write_demand(D3, p)
    return p


def test_long_form_csv_from_stdin_keeps_names() -> None:
    res = run_in(
        "source,target,weight\ngpu1,gpu2,3\ngpu2,gpu1,1\n", "schedule", "-", "-s", "1", "-d", "0.5", "-o", "-"
    )
    assert res.exit_code == 0, res.stderr  # type: ignore[attr-defined]
    doc = json.loads(res.stdout)  # type: ignore[attr-defined]
    assert doc["meta"]["port_names"] == ["gpu1", "gpu2"]
    assert "makespan" in res.stderr  # type: ignore[attr-defined]  # the summary moved to stderr


def test_out_dash_writes_the_schedule_to_stdout_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    d = _save(tmp_path, "d.npy")
    res = run("schedule", d, "-s", "2", "-d", "0.5", "-o", "-")
    assert res.exit_code == 0, res.stderr
    sched = Schedule.from_json(res.stdout)
    assert sched.makespan > 0 and not (tmp_path / "-").exists()
    assert "written to" not in res.stderr
    # and it pipes into validate as a file would
    (tmp_path / "s.json").write_text(res.stdout)
    assert run("validate", d, tmp_path / "s.json").exit_code == 0


def test_reschedule_out_dash(tmp_path: Path) -> None:
    d = _save(tmp_path, "d.npy")
    assert run("schedule", d, "-s", "2", "-d", "0.5", "-o", tmp_path / "s.json").exit_code == 0
    res = run("reschedule", d, tmp_path / "s.json", "--fail-switch", "0", "--at", "0.6", "-o", "-")
    assert res.exit_code == 0, res.stderr
    assert Schedule.from_json(res.stdout).makespan > 0


def test_generate_to_stdout_pipes_into_schedule() -> None:
    gen = run("generate", "gpt32", "--normalize", "-o", "-")
    assert gen.exit_code == 0, gen.stderr
    assert "written to" in gen.stderr and "stdout" in gen.stderr
    rows = gen.stdout.strip().splitlines()
    assert len(rows) == 32 and all(len(r.split(",")) == 32 for r in rows)
    res = run_in(gen.stdout, "schedule", "-", "-s", "4", "-d", "0.04", "--json")
    assert res.exit_code == 0, res.stderr  # type: ignore[attr-defined]
    assert json.loads(res.stdout)["ports"] == 32  # type: ignore[attr-defined]


def test_generate_iteration_to_stdout() -> None:
    res = run("generate", "gpt-iteration", "-o", "-")
    assert res.exit_code == 0, res.stderr
    assert len(Iteration.from_json(res.stdout)) >= 1


def test_export_out_dash_is_stdout(tmp_path: Path) -> None:
    d = _save(tmp_path, "d.npy")
    assert run("schedule", d, "-s", "2", "-d", "0.5", "-o", tmp_path / "s.json").exit_code == 0
    assert run("export", tmp_path / "s.json", "-o", "-").stdout == run("export", tmp_path / "s.json").stdout


def test_quiet_silences_warnings_verbose_shows_info(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # a 1-based long-form file logs a warning (ocsched.io); --quiet drops it
    p = tmp_path / "one.csv"
    p.write_text("src,dst,value\n1,2,1\n2,1,1\n")
    loud = run("bound", p, "-s", "1", "-d", "0.1")
    assert any(r.levelname == "WARNING" for r in caplog.records)
    caplog.clear()
    quiet = run("bound", p, "-s", "1", "-d", "0.1", "--quiet")
    assert not caplog.records and quiet.stdout == loud.stdout
    both = run("bound", p, "-s", "1", "-d", "0.1", "-q", "-v")
    assert both.exit_code == 2 and "--quiet" in both.stderr


@pytest.mark.slow  # a fresh process: ~2 s alone, far more on a loaded machine
def test_quiet_in_a_process_of_its_own(tmp_path: Path) -> None:
    p = tmp_path / "one.csv"
    p.write_text("src,dst,value\n1,2,1\n2,1,1\n")
    cmd = [sys.executable, "-m", "ocsched", "bound", str(p), "-s", "1", "-d", "0.1"]
    loud = subprocess.run(cmd, capture_output=True, text=True, check=True)
    quiet = subprocess.run([*cmd, "--quiet"], capture_output=True, text=True, check=True)
    assert "WARNING" in loud.stderr and quiet.stderr == "" and quiet.stdout == loud.stdout


def test_quiet_sets_every_library_logger(tmp_path: Path) -> None:
    _save(tmp_path, "d.npy")
    assert run("bound", tmp_path / "d.npy", "-s", "1", "-d", "0.1", "-q").exit_code == 0
    assert logging.getLogger("ocsched.kernels").level == logging.ERROR
    assert logging.getLogger("ocsched").level == logging.ERROR
    assert run("bound", tmp_path / "d.npy", "-s", "1", "-d", "0.1", "--verbose").exit_code == 0
    assert logging.getLogger("ocsched.kernels").level == logging.INFO
    assert run("bound", tmp_path / "d.npy", "-s", "1", "-d", "0.1").exit_code == 0
    assert logging.getLogger("ocsched.kernels").level == logging.WARNING


@pytest.mark.parametrize("command", ["schedule", "bound", "validate", "gap", "generate", "export", "sweep"])
def test_every_command_takes_quiet_and_verbose(command: str) -> None:
    text = run(command, "-h").stdout
    assert "--quiet" in text and "--verbose" in text


@pytest.mark.slow  # exact solves
def test_quiet_gap_prints_no_progress() -> None:
    args = ["gap", "-w", "random", "--n", "3", "-s", "1", "-d", "0.1", "-k", "1", "-a", "spectra"]
    assert "gap: exact solves" in run(*args).stderr
    res = run(*args, "--quiet")
    assert res.exit_code == 0 and res.stderr == ""


def test_spool_tells_formats_apart() -> None:
    from ocsched.io.demand import spool_stdin

    buf = stdio.BytesIO()
    np.save(buf, D3)
    assert spool_stdin(stream=stdio.BytesIO(buf.getvalue())).suffix == ".npy"
    assert spool_stdin(stream=stdio.BytesIO(b" [[0, 1], [1, 0]]")).suffix == ".json"
    assert spool_stdin(stream=stdio.BytesIO(b"0,1\n1,0\n")).suffix == ".csv"


def test_a_schedule_piped_into_validate_and_export(tmp_path: Path) -> None:
    d = _save(tmp_path, "d.npy")
    text = run("schedule", d, "-s", "2", "-d", "0.5", "-o", "-").stdout
    res = run_in(text, "validate", d, "-")
    assert res.exit_code == 0 and res.stdout.startswith("valid:")  # type: ignore[attr-defined]
    res = run_in(text, "export", "-")
    assert res.exit_code == 0 and res.stdout.startswith("switch,start")  # type: ignore[attr-defined]
    res = run_in(text, "validate", "-", "-")
    assert res.exit_code == 2 and "only one" in res.stderr  # type: ignore[attr-defined]
    res = run_in("", "validate", d, "-")
    assert res.exit_code == 2 and "stdin is empty" in res.stderr  # type: ignore[attr-defined]
