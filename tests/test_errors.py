"""The error hierarchy, and one test per failure mode of the public entry points."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import ocsched
from ocsched import errors
from ocsched import io as ocsched_io
from ocsched.errors import InfeasibleError, InvalidInputError, InvalidScheduleError, OcschedError

D3 = [[0.0, 2.0, 1.0], [1.0, 0.0, 2.0], [2.0, 1.0, 0.0]]


def test_hierarchy() -> None:
    assert issubclass(InvalidInputError, OcschedError) and issubclass(InvalidInputError, ValueError)
    assert issubclass(InvalidScheduleError, OcschedError) and not issubclass(InvalidScheduleError, ValueError)
    assert issubclass(InfeasibleError, OcschedError) and not issubclass(InfeasibleError, ValueError)
    assert issubclass(OcschedError, Exception)
    assert set(errors.__all__) == {
        "OcschedError",
        "InvalidInputError",
        "InvalidScheduleError",
        "InfeasibleError",
    }


def test_errors_are_exported_at_top_level() -> None:
    for name in errors.__all__:
        assert name in ocsched.__all__
        assert getattr(ocsched, name) is getattr(errors, name)


def _schedule(**kw: Any) -> Any:
    args: dict[str, Any] = {"demand": D3, "switches": 2, "delta": 0.1}
    args.update(kw)
    return ocsched.schedule(args.pop("demand"), **args)


def _lower_bound(**kw: Any) -> Any:
    args: dict[str, Any] = {"demand": D3, "switches": 2, "delta": 0.1}
    args.update(kw)
    return ocsched.lower_bound(args.pop("demand"), **args)


ENTRY_POINTS: dict[str, Callable[..., Any]] = {"schedule": _schedule, "lower_bound": _lower_bound}

BAD_ARGS = [
    pytest.param(
        {"demand": [[0, 1, 2], [1, 0, 2]]}, r"^`demand` must be a square n x n matrix", id="non-square"
    ),
    pytest.param({"demand": np.zeros((0, 0))}, r"^`demand` must not be empty", id="empty"),
    pytest.param(
        {"demand": [[0, -1], [1, 0]]}, r"^`demand` must be non-negative; demand\[0, 1\] = -1", id="negative"
    ),
    pytest.param(
        {"demand": [[0, np.nan], [1, 0]]}, r"^`demand` must be finite; demand\[0, 1\] = nan", id="nan"
    ),
    pytest.param(
        {"demand": [[0, 1], [np.inf, 0]]}, r"^`demand` must be finite; demand\[1, 0\] = inf", id="inf"
    ),
    pytest.param({"demand": [["a", "b"], ["c", "d"]]}, r"^`demand` must hold real numbers", id="strings"),
    pytest.param({"switches": 0}, r"^`switches` must be an integer >= 1; got 0$", id="switches-0"),
    pytest.param({"switches": 2.5}, r"^`switches` must be an integer >= 1; got 2\.5$", id="switches-2.5"),
    pytest.param({"switches": "3"}, r"^`switches` must be an integer >= 1; got '3'$", id="switches-str"),
    pytest.param({"switches": True}, r"^`switches` must be an integer >= 1; got True$", id="switches-bool"),
    pytest.param({"delta": -0.1}, r"^`delta` must be a finite number >= 0; got -0\.1$", id="delta-negative"),
    pytest.param({"delta": float("nan")}, r"^`delta` must be a finite number >= 0; got nan$", id="delta-nan"),
    pytest.param({"delta": float("inf")}, r"^`delta` must be a finite number >= 0; got inf$", id="delta-inf"),
    pytest.param({"delta": "0.1"}, r"^`delta` must be a finite number >= 0; got '0\.1'$", id="delta-str"),
    pytest.param({"delta": False}, r"^`delta` must be a finite number >= 0; got False$", id="delta-bool"),
]


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize(("kwargs", "pattern"), BAD_ARGS)
def test_entry_point_rejects(entry: str, kwargs: dict[str, Any], pattern: str) -> None:
    with pytest.raises(InvalidInputError, match=pattern):
        ENTRY_POINTS[entry](**kwargs)


def test_unknown_algorithm_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidInputError, match=r"^unknown algorithm 'nope'; choose one of ") as info:
        _schedule(algorithm="nope")
    listed = str(info.value).split("choose one of ", 1)[1].split(", ")
    assert sorted(listed) == sorted(ocsched.algorithms())


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        ocsched.schedule(D3, 2, 0.1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ocsched.lower_bound(D3, 2, 0.1)  # type: ignore[call-arg]


def test_validate_rejects_a_malformed_demand() -> None:
    s = ocsched.schedule(D3, switches=2, delta=0.1)
    with pytest.raises(InvalidInputError, match=r"^`demand` must be finite"):
        ocsched.validate(s, np.array([[0, np.nan, 0], [0, 0, 0], [0, 0, 0]]))


def test_invalid_schedule_error_from_report() -> None:
    s = ocsched.schedule(D3, switches=2, delta=0.1)
    report = ocsched.validate(s, np.array(D3) * 2)  # serves only half of each entry
    with pytest.raises(InvalidScheduleError, match=r"^invalid schedule: unserved: "):
        report.raise_if_invalid()
    with pytest.raises(OcschedError):
        report.raise_if_invalid()


def test_library_never_prints(capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        s = ocsched.schedule([[1.0, 2.0], [3.0, 4.0]], switches=2, delta=0.1)  # diagonal dropped, logged
        ocsched.validate(s, [[0.0, 2.0], [3.0, 0.0]])
        ocsched.lower_bound([[0.0, 2.0], [3.0, 0.0]], switches=2, delta=0.1)
        with pytest.raises(InvalidInputError):
            ocsched.schedule([[0, -1], [1, 0]], switches=2, delta=0.1)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert any("diagonal" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------------------------------
# Hostile input through the real command: one line on stderr, exit 2, bounded memory and time
# ---------------------------------------------------------------------------------------------

GB = 1 << 30


def _limited() -> None:  # runs in the child before exec: 2 GB of address space, 60 s of CPU
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 * GB, 2 * GB))
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))


def run_ocsched(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m ocsched ARGS`` in a subprocess under a memory and a time limit."""
    return subprocess.run(
        [sys.executable, "-m", "ocsched", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,
    )


def assert_refused(res: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert res.stdout == ""
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def _npy_header(shape: tuple[int, ...], dtype: str = "<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Small files that claim, or would lead to, huge allocations."""
    d = tmp_path_factory.mktemp("hostile")
    (d / "port.csv").write_text("src,dst,value\n0,100000000,1\n")  # 30 bytes, port 10^8
    wide = sp.csr_array(([1.0, 2.0], ([0, 999_999], [999_998, 3])), shape=(10**6, 10**6))
    sp.save_npz(d / "wide.npz", wide)  # n = 10^6, 2 nonzeros
    claim = _npy_header((100_000, 100_000))
    (d / "claim.npy").write_bytes(claim + b"\0" * (128 - len(claim)))  # 128 bytes claiming 80 GB
    with zipfile.ZipFile(d / "bomb.npz", "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("demand.npy", _npy_header((20_000, 20_000)) + b"\0" * (4 << 20))
    sparse_bomb = io.BytesIO()
    with zipfile.ZipFile(sparse_bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for key, arr in (("format", np.array("csr")), ("shape", np.array([10**9, 10**9]))):
            buf = io.BytesIO()
            np.save(buf, arr)
            z.writestr(f"{key}.npy", buf.getvalue())
        for key in ("data", "indices", "indptr"):
            z.writestr(f"{key}.npy", _npy_header((10**9,), "<i8") + b"\0" * (1 << 20))
    (d / "sparse_bomb.npz").write_bytes(sparse_bomb.getvalue())
    np.save(d / "d3.npy", np.array(D3))
    return d


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["schedule", "port.csv", "-s", "2", "-d", "0.1"], ["port.csv", "0..999999"]),
        (["schedule", "claim.npy", "-s", "2", "-d", "0.1"], ["claim.npy", "(100000, 100000)", "limit"]),
        (["schedule", "bomb.npz", "-s", "2", "-d", "0.1"], ["bomb.npz", "(20000, 20000)", "limit"]),
        (["bound", "sparse_bomb.npz", "-s", "2", "-d", "0.1"], ["sparse_bomb.npz", "limit"]),
        (["schedule", "d3.npy", "-s", "1000000", "-d", "0.1"], ["`--switches`", "1000000"]),
        (["generate", "gpt", "--tp", "100000", "-o", "x.npy"], ["`tp`", "4096"]),
    ],
)
def test_hostile_input_is_refused_within_limits(hostile: Path, args: list[str], needles: list[str]) -> None:
    assert_refused(run_ocsched(hostile, *args), *needles)
    assert not (hostile / "x.npy").exists()


def test_wide_sparse_demand_is_scheduled_without_an_n_by_n_array(hostile: Path) -> None:
    # n = 10^6 with 2 nonzeros: an n x n array would need 7 TiB; the limit is 2 GB.
    res = run_ocsched(hostile, "schedule", "wide.npz", "-s", "2", "-d", "0.1", "-o", "wide.json", "--force")
    assert res.returncode == 0, res.stderr
    sched = ocsched_io.read_schedule(hostile / "wide.json")
    assert sched.ports == 10**6
    assert sorted({p for sw in sched.switches for c in sw for p in c.circuits}) == [
        (0, 999_998),
        (999_999, 3),
    ]
    demand = ocsched_io.read_demand(hostile / "wide.npz")
    assert sched.lower_bound == ocsched.lower_bound(demand, switches=2, delta=0.1)
    res = run_ocsched(hostile, "validate", "wide.npz", "wide.json")
    assert res.returncode == 0 and res.stdout.startswith("valid:"), (res.stdout, res.stderr)
    res = run_ocsched(hostile, "bound", "wide.npz", "-s", "2", "-d", "0.1")
    assert res.returncode == 0 and "lower bound" in res.stdout, res.stderr


def test_wide_sparse_schedule_matches_the_compact_one() -> None:
    # The same flows on ports {0, 1, 2}: identical makespan, circuits mapped back to the wide ports.
    wide = ocsched.Demand.from_matrix(
        sp.coo_array(([3.0, 1.0, 2.0], ([0, 50_000, 20_000], [20_000, 0, 50_000])), shape=(60_000, 60_000))
    )
    small = ocsched.Demand.from_matrix(sp.coo_array(([3.0, 1.0, 2.0], ([0, 2, 1], [1, 0, 2])), shape=(3, 3)))
    got = ocsched.schedule(wide, switches=2, delta=0.5)  # wider than schedulers.DENSE_PORTS
    want = ocsched.schedule(small, switches=2, delta=0.5)
    back = {0: 0, 1: 20_000, 2: 50_000}
    assert got.makespan == want.makespan and got.ports == 60_000
    assert [[(c.start, c.duration, c.circuits) for c in sw] for sw in got.switches] == [
        [(c.start, c.duration, [(back[i], back[j]) for i, j in c.circuits]) for c in sw]
        for sw in want.switches
    ]
    assert ocsched.validate(got, wide).ok


@pytest.fixture
def cli_files(tmp_path: Path) -> Path:
    np.save(tmp_path / "d3.npy", np.array(D3))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "deep_schedule.json").write_text(
        '{"format": "ocsched.schedule", "version": 1, "ports": 3, "delta": 0, "switches": [], "meta": '
        + "[" * 100_000
        + "]" * 100_000
        + "}"
    )
    np.save(tmp_path / "td.npy", np.array([[0, 1], [1, 0]], dtype="timedelta64[s]"))
    (tmp_path / "afile").write_text("x")
    (tmp_path / "port.csv").write_text("src,dst,value\n0,100000000,1\n")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["bound", "port.csv", "-s", "2", "-d", "0.1"], ["port.csv", "0..999999"]),
        (["bound", "d3.npy", "-s", "9" * 30, "-d", "0.1"], ["`--switches`", "9" * 30]),
        (["generate", "standard", "--n", "1000000000", "-o", "x.npy"], ["`n`", "1000000000"]),
        (["generate", "gpt32", "--copies", "1000000", "-o", "x.npy"], ["`copies`", "1000000"]),
        (["generate", "moe8", "--copies", "1000000", "-o", "x.npy"], ["`copies`", "1000000"]),
        (["generate", "moe", "--gpus", "100000", "--experts", "100000", "-o", "x.npy"], ["`gpus`"]),
        (["generate", "standard", "--sigma", "1e308", "-o", "x.npy"], ["`sigma`", "1e+308"]),
        (["schedule", "deep.json", "-s", "2", "-d", "0.1"], ["deep.json", "nested too deeply"]),
        (["schedule", "d3.npy", "-s", "1", "-d", "1e308"], ["overflows", "`--delta` = 1e+308"]),
        (["bound", "d3.npy", "-s", "1", "-d", "1e308"], ["overflows", "`--delta` = 1e+308"]),
        (["validate", "d3.npy", "deep_schedule.json"], ["deep_schedule.json", "nested too deeply"]),
        (["schedule", "d3.npy", "-s", "2", "-d", "0.1", "--seed", "-1"], ["`--seed`", "'-1'"]),
        (["generate", "standard", "--seed", "-1", "-o", "x.npy"], ["`--seed`", "'-1'"]),
        (["schedule", "td.npy", "-s", "2", "-d", "0.1"], ["td.npy", "real numbers", "timedelta64"]),
        (["bound", "td.npy", "-s", "2", "-d", "0.1"], ["td.npy", "timedelta64"]),
        (["schedule", "d3.npy", "-s", "2", "-d", "0.1", "-o", "afile/s.json"], ["`--out`", "not a folder"]),
        (["schedule", "d3.npy", "-s", "2", "-d", "0.1", "-o", "/proc/s.json"], ["`--out`", "/proc/s.json"]),
        (["generate", "moe8", "-o", "afile/x/y.npy"], ["`--out`", "afile"]),
        (["generate", "moe8", "-o", "/proc/x.npy"], ["`--out`", "/proc/x.npy"]),
        (["schedule", "d3.npy"], ["give `--delta`", "--fabric"]),
        (["schedule", "d3.npy", "-s", "2"], ["give `--delta`", "--fabric"]),
        (["schedule"], ["Missing argument"]),
        (["bound", "d3.npy", "-d", "0.1"], ["give `--switches` with a single `--delta`"]),
        (["generate", "moe8"], ["Missing option", "--out"]),
        (["validate", "d3.npy"], ["Missing argument"]),
        (["export"], ["Missing argument"]),
        (
            ["schedule", "d3.npy", "-s", "2", "-d", "0.1", "-a", "nope"],
            ["`--algorithm`", "'nope'", "spectra"],
        ),
        (["generate", "nope", "-o", "x.npy"], ["'nope'", "moe8"]),
        (["generate", "standard", "--disjoint", "maybe", "-o", "x.npy"], ["`disjoint`", "'maybe'"]),
        (["nope"], ["No such command"]),
    ],
)
def test_bad_cli_input_is_one_line(cli_files: Path, args: list[str], needles: list[str]) -> None:
    from typer.testing import CliRunner

    from ocsched.cli import app

    cwd = os.getcwd()
    os.chdir(cli_files)
    try:
        res = CliRunner().invoke(app, args)
    finally:
        os.chdir(cwd)
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr, res.exception)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert res.stdout == ""
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert not (cli_files / "x.npy").exists()


def test_out_is_checked_before_the_work(cli_files: Path) -> None:
    # An unwritable --out fails at once, before the demand is even read.
    res = run_ocsched(cli_files, "schedule", "missing.npy", "-s", "2", "-d", "0.1", "-o", "afile/s.json")
    assert_refused(res, "`--out`", "afile")


# ---------------------------------------------------------------------------------------------
# The system refuses a write: a full disk is one line, and nothing written before is lost
# ---------------------------------------------------------------------------------------------


def test_a_full_disk_during_a_sweep_is_one_line_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    pq = pytest.importorskip("pyarrow.parquet")
    from helpers import run
    from ocsched import sweep

    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'switches = [2]\ndelta = [0.01, 0.04]\nalgorithms = ["spectra"]\n\n'
        '[[workloads]]\nname = "standard"\nseeds = 3\noptions = { n = 8, flows = 2 }\n'
    )
    out = tmp_path / "r"
    real = pq.write_table
    calls = {"n": 0}

    def full_after_two(table: Any, where: Any, **kw: Any) -> None:
        calls["n"] += 1
        if calls["n"] > 2:  # the manifest and the first part fit; then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(table, where, **kw)

    monkeypatch.setattr(pq, "write_table", full_after_two)
    res = run("sweep", cfg, "--out", out, "-j", "1", "--batch-size", "2")
    assert res.exit_code == 2, (res.output, res.exception)
    assert res.exception is None or isinstance(res.exception, SystemExit)
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error")]
    assert len(lines) == 1 and "Traceback" not in res.output
    assert lines[0].startswith("error: no space left on device writing ") and str(out / "parts") in lines[0]
    # What was written stays, nothing half-written is left, and a rerun finishes the rest.
    parts = list((out / "parts").iterdir())
    assert len(parts) == 1 and not parts[0].name.startswith(".")
    done = len(sweep.read_results(out))
    assert done == 2
    monkeypatch.setattr(pq, "write_table", real)
    summary = sweep.run_sweep(cfg, out, workers=1)
    assert (summary.skipped, summary.done) == (2, 4)


def test_write_atomic_turns_an_os_refusal_into_one_line_and_keeps_the_old_file(
    tmp_path: Path,
) -> None:
    import errno

    path = tmp_path / "s.json"
    path.write_text("old")

    def failing(f: Any) -> None:
        f.write(b"partial")
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))

    with pytest.raises(OcschedError, match=rf"^disk quota exceeded writing {path}$"):
        ocsched_io.write_atomic(path, failing, force=True)
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_any_os_error_reaching_the_cli_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A refusal no reader foresaw (here: the results folder cannot be opened) is still one line.
    import errno

    from helpers import run
    from ocsched.sweep import run as sweep_run

    def refused(out: Path) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(out))

    monkeypatch.setattr(sweep_run, "check_out", refused)
    cfg = tmp_path / "c.toml"
    cfg.write_text('switches = [2]\ndelta = [0.1]\n\n[[workloads]]\nname = "standard"\n')
    res = run("sweep", cfg, "--out", tmp_path / "r")
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert res.stderr.splitlines() == [f"error: permission denied: {tmp_path / 'r'}"]
