"""In-process tests of the core commands: schedule, validate, bound, algorithms, demo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from helpers import D3, run
from ocsched import io, lower_bound, schedule, validate
from ocsched.cli import app
from ocsched.schedulers import SCHEDULERS, algorithms

DATA = Path(__file__).parents[1] / "data" / "core"


def table(text: str) -> dict[str, str]:
    """Parse the ``key  value`` summary printed by schedule and bound."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("  ")
        if sep:
            out[key.strip()] = value.strip()
    return out


@pytest.fixture
def d3(tmp_path: Path) -> Path:
    # File named m.csv so that "demand" in a message comes from the argument name, not the file.
    p = tmp_path / "m.csv"
    shutil.copy(DATA / "d3.csv", p)
    return p


def assert_one_error_line(res: Result, *needles: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr, res.exception)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in res.output
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# ---------------------------------------------------------------------------------------------
# schedule
# ---------------------------------------------------------------------------------------------


def test_schedule_prints_summary(d3: Path) -> None:
    res = run("schedule", d3, "--switches", "2", "--delta", "0.1")
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    got = table(res.stdout)
    expected = schedule(D3, switches=2, delta=0.1)
    lb = lower_bound(D3, switches=2, delta=0.1)
    assert got["algorithm"] == "spectra"
    assert got["ports"] == "3" and got["switches"] == "2" and got["delta"] == "0.1"
    assert got["makespan"] == f"{expected.makespan:.6g}"
    assert got["lower bound"] == f"{lb:.6g}"
    assert got["ratio"] == f"{expected.makespan / lb:.4f}"
    assert got["configurations"] == str(expected.num_configurations)
    assert got["splits"] == str(expected.splits)
    assert got["time"].endswith(" s") and float(got["time"][:-2]) >= 0
    assert "written to" not in got


@pytest.mark.parametrize("fname", ["d3.npy", "d3_sparse.npz", "d3_long.csv", "d3.json", "d3_obj.json"])
def test_schedule_reads_every_format(fname: str) -> None:
    res = run("schedule", DATA / fname, "-s", "2", "-d", "0.1", "-a", "spectra-greedy")
    assert res.exit_code == 0, res.output
    got = table(res.stdout)
    assert got["algorithm"] == "spectra-greedy"
    want = schedule(D3, switches=2, delta=0.1, algorithm="spectra-greedy").makespan
    assert got["makespan"] == f"{want:.6g}"


def test_schedule_zero_demand_ratio_na(tmp_path: Path) -> None:
    p = tmp_path / "z.csv"
    p.write_text("0,0\n0,0\n")
    res = run("schedule", p, "-s", "2", "-d", "0.1")
    assert res.exit_code == 0, res.output
    got = table(res.stdout)
    assert (got["makespan"], got["lower bound"], got["ratio"], got["configurations"]) == (
        "0",
        "0",
        "n/a",
        "0",
    )


def test_schedule_writes_out(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "s.json"
    res = run("schedule", d3, "-s", "3", "-d", "0.25", "--out", out)
    assert res.exit_code == 0, res.output
    got = table(res.stdout)
    assert got["written to"] == str(out)
    doc = json.loads(out.read_text())
    assert doc["format"] == "ocsched.schedule" and doc["version"] == 1 and len(doc["switches"]) == 3
    sched = io.read_schedule(out)
    assert validate(sched, D3).ok
    assert got["makespan"] == f"{sched.makespan:.6g}"
    assert sched.same_as(schedule(D3, switches=3, delta=0.25))
    assert sorted(os.listdir(out.parent)) == ["s.json"]


def test_schedule_refuses_existing_out_without_force(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    out.write_text("precious")
    res = run("schedule", d3, "-s", "2", "-d", "0.1", "--out", out)
    assert_one_error_line(res, "`--out`", "already exists", "--force")
    assert out.read_text() == "precious"
    assert sorted(os.listdir(tmp_path)) == ["m.csv", "s.json"]


def test_schedule_force_overwrites(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    out.write_text("precious")
    res = run("schedule", d3, "-s", "2", "-d", "0.1", "--out", out, "--force")
    assert res.exit_code == 0, res.output
    assert validate(io.read_schedule(out), D3).ok
    assert sorted(os.listdir(tmp_path)) == ["m.csv", "s.json"]


# ---------------------------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------------------------


def test_validate_valid(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert run("schedule", d3, "-s", "2", "-d", "0.1", "-o", out).exit_code == 0
    res = run("validate", d3, out)
    assert res.exit_code == 0, res.output
    n_conf = io.read_schedule(out).num_configurations
    assert res.stdout.startswith("valid: makespan ")
    assert res.stdout.rstrip().endswith(f"{n_conf} configurations")


def test_validate_hand_written_fixture() -> None:
    res = run("validate", DATA / "d3.json", DATA / "sched3.json")
    assert res.exit_code == 0, res.output
    assert res.stdout == "valid: makespan 2.5, 2 configurations\n"


def test_validate_tampered(d3: Path, tmp_path: Path) -> None:
    doc = json.loads((DATA / "sched3.json").read_text())
    conf0 = doc["switches"][0]["configurations"][0]
    conf0["circuits"] = [[0, 1], [1, 2]]  # drop 2->0: demand[2, 0] = 2 is no longer served
    doc["switches"][1]["configurations"][0]["start"] = 0.25  # before delta = 0.5
    doc["makespan"] = 2.5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    res = run("validate", d3, bad)
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "INVALID: 2 violation(s)"
    assert sorted(lines[1:]) == [
        "  timing: switch 1 configuration 0: starts at 0.25, before the previous end 0 + delta 0.5",
        "  unserved: demand[2, 0] = 2 but only 0 served",
    ]


def test_validate_rejects_inconsistent_makespan(d3: Path, tmp_path: Path) -> None:
    doc = json.loads((DATA / "sched3.json").read_text())
    doc["makespan"] = 1.0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert_one_error_line(run("validate", d3, bad), "`schedule` file", "`makespan` = 1.0 disagrees")


def test_validate_missing_schedule(d3: Path, tmp_path: Path) -> None:
    assert_one_error_line(run("validate", d3, tmp_path / "none.json"), "`schedule` file not found")


def test_validate_schedule_with_bad_splits(d3: Path, tmp_path: Path) -> None:
    doc = json.loads((DATA / "sched3.json").read_text())
    doc["splits"] = "many"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert_one_error_line(run("validate", d3, bad), "`schedule`", "splits")


# ---------------------------------------------------------------------------------------------
# bound, algorithms, demo
# ---------------------------------------------------------------------------------------------


def test_bound(d3: Path) -> None:
    res = run("bound", d3, "--switches", "2", "--delta", "0.5")
    assert res.exit_code == 0, res.output
    got = table(res.stdout)
    assert list(got) == ["lower bound", "line bound", "degree bound", "refined bound"]
    assert got["lower bound"] == f"{lower_bound(D3, switches=2, delta=0.5):.6g}"
    assert float(got["lower bound"]) == max(
        float(got[k]) for k in ("line bound", "degree bound", "refined bound")
    )


def test_algorithms_lists_every_scheduler() -> None:
    res = run("algorithms")
    assert res.exit_code == 0, res.output
    listing, former = res.stdout.rstrip("\n").split("\n\n")
    lines = [line for line in listing.splitlines() if not line.startswith(" ")]
    names = [line.split()[0] for line in lines]
    assert "spectra" in names and "spectra-greedy" in names
    # The renamed schedulers' former names are listed after the table, each with its new name.
    assert former == (
        "Former names, still accepted: spectra-noeq (now spectra-greedy), spectra-bff (now spectra-partial)."
    )
    assert names == list(algorithms())
    for line, desc in zip(lines, algorithms().values(), strict=True):
        assert line.endswith(desc)
    # Each algorithm's options follow it, one indented line each, in the registry's order.
    shown = [line.split()[1].split("=")[0] for line in listing.splitlines() if line.startswith(" ")]
    assert shown == [k for s in SCHEDULERS.values() for k in s.options]
    assert "--option node_limit=...  branch-and-bound nodes" in res.stdout


def test_demo_runs_without_arguments() -> None:
    res = run("demo")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "n=100 ports" in out and "s=16 OCSes" in out
    rows = {
        line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("spectra", "baseline"))
    }
    assert {"spectra", "spectra-greedy"} <= set(rows)
    assert all(row[5] == "yes" for row in rows.values())  # every schedule validated
    bound_lines = [line for line in out.splitlines() if line.startswith("lower bound")]
    assert len(bound_lines) == 1
    lb = float(bound_lines[0].split()[-1])
    assert lb > 0
    assert all(float(row[1]) >= lb - 1e-4 for row in rows.values())  # printed with 4 decimals
    assert "\nNext:\n" in out and "ocsched schedule" in out


def test_demo_small_instance_and_bad_n() -> None:
    res = run("demo", "--n", "20", "--switches", "4", "--delta", "0.1", "--seed", "3")
    assert res.exit_code == 0, res.output
    assert "n=20 ports" in res.stdout and "s=4 OCSes" in res.stdout
    assert_one_error_line(run("demo", "--n", "1"), "`--n`")


def test_demo_shows_baseline_in_a_fresh_process() -> None:
    # In a fresh process the peer schedulers are registered only once something loads them.
    if "baseline" not in algorithms():
        pytest.skip("no baseline scheduler registered")
    argv = ["ocsched", "demo", "--n", "20", "--switches", "4"]
    code = f"import sys; from ocsched.cli import main; sys.argv = {argv!r}; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert any(line.startswith("baseline ") for line in proc.stdout.splitlines()), proc.stdout


# ---------------------------------------------------------------------------------------------
# Bad input: exit 2, one line on stderr starting with "error:" and naming the argument
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fname", "needles"),
    [
        ("nonsquare.csv", ["`demand", "square", "(2, 3)"]),
        ("negative.csv", ["`demand", "non-negative", "[0, 1] = -1.0"]),
        ("nan.csv", ["`demand", "finite", "[0, 1] = nan"]),
        ("inf.csv", ["`demand", "finite", "[0, 1] = inf"]),
        ("ragged.csv", ["`demand`", "ragged.csv", "row 1 has 2 values"]),
        ("nonnumeric.csv", ["`demand` file", "could not be read"]),
        ("truncated.json", ["`demand` file", "could not be read"]),
        ("garbage.npz", ["`demand` file", "could not be read"]),
        ("empty.csv", ["`demand", "empty"]),
        ("empty.npy", ["`demand", "empty.npy"]),  # numpy's EOFError would become click's "Aborted."
    ],
)
def test_bad_demand_file(tmp_path: Path, fname: str, needles: list[str]) -> None:
    p = tmp_path / fname.replace("nonsquare", "m").replace("negative", "m")
    shutil.copy(DATA / fname, p)
    assert_one_error_line(run("schedule", p, "-s", "2", "-d", "0.1"), *needles)


@pytest.mark.parametrize("command", ["schedule", "bound"])
@pytest.mark.parametrize(
    ("option", "value", "needles"),
    [
        ("--switches", "0", [f"`--switches` must be an integer in 1..{io.MAX_SWITCHES}; got '0'"]),
        ("--switches", "-3", [f"`--switches` must be an integer in 1..{io.MAX_SWITCHES}; got '-3'"]),
        ("--switches", "2.5", ["`--switches` must be an integer", "got '2.5'"]),
        ("--switches", "two", ["`--switches`", "'two'"]),
        ("--switches", "1" * 30, [f"`--switches` must be an integer in 1..{io.MAX_SWITCHES}", "got '111"]),
        ("--switches", "²", ["`--switches` must be an integer", "got '²'"]),
        ("--switches", "２", ["`--switches` must be an integer", "got '２'"]),
        ("--switches", "1_0", ["`--switches` must be an integer", "got '1_0'"]),
        ("--delta", "０.１", ["`--delta` must be finite numbers >= 0", "got '０.１'"]),
        ("--delta", "1e999", ["`--delta` must be finite numbers >= 0", "got '1e999'"]),
        ("--delta", "-1", ["`--delta` must be finite numbers >= 0", "got '-1'"]),
        ("--delta", "nan", ["`--delta`", "nan"]),
        ("--delta", "inf", ["`--delta`", "inf"]),
        ("--delta", "fast", ["`--delta`", "'fast'"]),
    ],
)
def test_bad_switches_or_delta(d3: Path, command: str, option: str, value: str, needles: list[str]) -> None:
    opts = {"--switches": "2", "--delta": "0.1"}
    opts[option] = value
    args = [command, str(d3)] + [f"{k}={v}" for k, v in opts.items()]
    assert_one_error_line(run(*args), *needles)


def test_bad_switches_checked_before_reading_the_file(tmp_path: Path) -> None:
    assert_one_error_line(run("schedule", tmp_path / "none.csv", "-s", "0", "-d", "0.1"), "`--switches`")


def test_missing_demand_file(tmp_path: Path) -> None:
    assert_one_error_line(
        run("schedule", tmp_path / "none.csv", "-s", "2", "-d", "0.1"), "`demand` file not found"
    )


def test_unknown_file_type(tmp_path: Path) -> None:
    p = tmp_path / "m.txt"
    p.write_text("0,1\n1,0\n")
    commands: list[list[str | Path]] = [
        ["schedule", p, "-s", "2", "-d", "0.1"],
        ["bound", p, "-s", "2", "-d", "0.1"],
        ["validate", p, p],
    ]
    for cmd in commands:
        assert_one_error_line(run(*cmd), "`demand` has unknown file type '.txt'", ".npy, .npz, .csv, .json")


def test_unreadable_file_binary_garbage(tmp_path: Path) -> None:
    p = tmp_path / "m.csv"
    p.write_bytes(b"\x00\xff\xfe\x80 not text")
    assert_one_error_line(run("schedule", p, "-s", "2", "-d", "0.1"), "`demand` file", "could not be read")


def test_unreadable_file_directory(tmp_path: Path) -> None:
    (tmp_path / "m.csv").mkdir()
    assert_one_error_line(run("bound", tmp_path / "m.csv", "-s", "2", "-d", "0.1"), "`demand` file")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_unreadable_file_permissions(d3: Path) -> None:
    d3.chmod(0)
    try:
        assert_one_error_line(
            run("schedule", d3, "-s", "2", "-d", "0.1"), "`demand` file", "could not be read"
        )
    finally:
        d3.chmod(0o600)


def test_unknown_algorithm_lists_the_valid_ones(d3: Path) -> None:
    line = assert_one_error_line(
        run("schedule", d3, "-s", "2", "-d", "0.1", "--algorithm", "nope"), "algorithm", "'nope'"
    )
    for name in algorithms():
        assert name in line


def test_missing_required_option_is_a_usage_error(d3: Path) -> None:
    res = run("schedule", d3, "--switches", "2")
    assert res.exit_code == 2
    assert "--delta" in res.stderr and "Traceback" not in res.output


def test_validate_against_the_fabric_delta(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert run("schedule", d3, "-s", "2", "-d", "0.1", "--out", out).exit_code == 0
    assert run("validate", d3, out, "--delta", "0.1").exit_code == 0
    res = run("validate", d3, out, "--delta", "0.3")
    assert res.exit_code == 1 and "delta" in res.output


# ---------------------------------------------------------------------------------------------
# Typed options, --version, -h, export, port names (issues 8 and 13)
# ---------------------------------------------------------------------------------------------


def wide(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})


def test_version_and_short_help() -> None:
    from ocsched._version import __version__

    res = run("--version")
    assert res.exit_code == 0 and res.stdout.strip() == f"ocsched {__version__}"
    res = wide("schedule", "-h")
    assert res.exit_code == 0
    for word in ("--switches", "--delta", "--algorithm", "spectra-pack", f"1..{io.MAX_SWITCHES}", ">= 0"):
        assert word in res.stdout, word


def test_help_lists_choices() -> None:
    assert "circuits-parquet" in wide("export", "-h").stdout
    assert "moe8" in wide("generate", "-h").stdout


def test_cli_package_imports_its_commands_by_name() -> None:
    # No discovery: every command module is named in ocsched.cli (imported when its command runs,
    # all of them for `ocsched.cli.app`).
    source = (Path(__file__).parents[2] / "src" / "ocsched" / "cli" / "__init__.py").read_text()
    assert "pkgutil" not in source and "walk_packages" not in source
    names = {c.name for c in app.registered_commands}
    assert {"schedule", "validate", "bound", "export", "generate", "workloads"} <= names


def test_validate_reports_an_input_port_used_twice(d3: Path, tmp_path: Path) -> None:
    doc = {
        "format": "ocsched.schedule",
        "version": 1,
        "ports": 3,
        "delta": 0.5,
        "switches": [
            {"configurations": [{"start": 0.1, "duration": 9, "circuits": [[0, 1], [0, 2], [1, 2]]}]}
        ],
    }
    p = tmp_path / "dup.json"
    p.write_text(json.dumps(doc))
    res = run("validate", d3, p)
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("INVALID: ")
    assert "  matching: switch 0 configuration 0: input port 0 used twice" in lines
    assert any(
        line.startswith("  timing: switch 0 configuration 0") for line in lines
    )  # listed with the others
    assert int(lines[0].split()[1]) == len(lines) - 1


def test_export_circuits_csv(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert run("schedule", d3, "-s", "2", "-d", "0.1", "-o", out).exit_code == 0
    sched = io.read_schedule(out)
    res = run("export", out)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "switch,start,end,src,dst,served"
    rows = [
        (int(b), float(s), float(e), int(i), int(j), float(v))
        for b, s, e, i, j, v in (line.split(",") for line in lines[1:])
    ]
    want = [
        (b, c.start, c.end, i, j, c.duration)
        for b, sw in enumerate(sched.switches)
        for c in sw
        for i, j in c.circuits
    ]
    assert rows == want  # exact: floats are written with repr
    csv = tmp_path / "c.csv"
    res = run("export", out, "--format", "circuits-csv", "--out", csv)
    assert res.exit_code == 0 and csv.read_text() == "\n".join(lines) + "\n"
    assert run("export", out, "--format", "circuits-csv", "--out", csv).exit_code == 2  # no overwrite


def test_export_circuits_parquet(d3: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "s.json"
    assert run("schedule", d3, "-s", "2", "-d", "0.1", "-o", out).exit_code == 0
    res = run("export", out, "-f", "circuits-parquet", "-o", tmp_path / "c.parquet")
    assert res.exit_code == 0, res.output
    table = pq.read_table(tmp_path / "c.parquet").to_pydict()
    assert list(table) == ["switch", "start", "end", "src", "dst", "served"]
    assert table == {k: v.tolist() for k, v in io.circuit_table(io.read_schedule(out)).items()}
    assert_one_error_line(run("export", out, "-f", "circuits-parquet"), "--out")


def test_schedule_keeps_port_names(tmp_path: Path) -> None:
    p = tmp_path / "named.csv"
    p.write_text(",gpu0,gpu1,gpu2\ngpu0,0,2,1\ngpu1,1,0,2\ngpu2,2,1,0\n")  # DataFrame.to_csv
    out = tmp_path / "s.json"
    res = run("schedule", p, "-s", "2", "-d", "0.1", "-o", out)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["version"] == 1 and doc["meta"]["port_names"] == ["gpu0", "gpu1", "gpu2"]
    assert io.read_schedule(out).same_as(schedule(D3, switches=2, delta=0.1))
    res = run("export", out)
    assert res.stdout.splitlines()[0] == "switch,start,end,src,dst,served,src_name,dst_name"
    assert all(line.split(",")[6].startswith("gpu") for line in res.stdout.splitlines()[1:])


def test_one_based_ports_are_warned_about(tmp_path: Path) -> None:
    p = tmp_path / "one.csv"
    p.write_text("src,dst,value\n1,2,1.0\n2,1,2.0\n")
    res = subprocess.run(
        [sys.executable, "-m", "ocsched", "bound", str(p), "-s", "1", "-d", "0.1"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert res.stderr.startswith("WARNING: ") and "1-based" in res.stderr and "port 0" in res.stderr


def test_schedule_time_excludes_imports() -> None:
    # After the CLI's warm-up, scheduling imports (and compiles) nothing: the time is scheduling alone.
    code = (
        "import sys, numpy as np\n"
        "from ocsched.cli import core\n"
        "from ocsched.errors import InvalidInputError\n"
        "from ocsched.schedulers import SCHEDULERS, schedule\n"
        "d = np.array([[0, 3, 1], [1, 0, 3], [3, 1, 0.0]])\n"
        "new = []\n"
        "for name in SCHEDULERS:\n"
        "    core._preload(name)\n"
        "    before = set(sys.modules)\n"
        "    try:\n"
        "        schedule(d, switches=2, delta=0.5, algorithm=name, rng=0)\n"
        "    except InvalidInputError:\n"
        "        pass  # a scheduler for another kind of fabric\n"
        "    new += sorted(set(sys.modules) - before)\n"
        "print(new)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_schedule_validates_before_writing(d3: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A scheduler bug must never reach the user as a schedule: one line, exit 2, nothing written.
    from ocsched.model import Configuration
    from ocsched.schedulers import SCHEDULERS, Result, Scheduler

    def serves_almost_nothing(demand: Any, fabric: Any, rng: Any) -> Result:
        conf = Configuration.from_circuits(fabric.deltas[0], 1e-6, [(0, 1)], ports=demand.n)
        return Result(((conf,), *(() for _ in range(fabric.size - 1))))

    monkeypatch.setitem(SCHEDULERS, "spectra", Scheduler(serves_almost_nothing, "broken"))
    out = tmp_path / "s.json"
    res = run("schedule", d3, "-s", "2", "-d", "0.1", "--out", out)
    assert_one_error_line(res, "invalid", "unserved")
    assert not out.exists()


def test_generate_and_schedule_an_iteration_workload(tmp_path: Path) -> None:
    out = tmp_path / "moe-it.json"
    res = run("generate", "moe-iteration", "--gpus", "8", "--layers", "2", "--link-gbps", "400", "--out", out)
    assert res.exit_code == 0, res.output
    assert "phases" in res.stdout and out.exists()
    res = run("schedule", out, "-s", "4", "-d", "1e-5", "--out", tmp_path / "sched.json")
    assert res.exit_code == 0, res.output
    assert "makespan" in res.stdout and "ratio independent" in res.stdout  # the single-matrix words
    assert run("validate", out, tmp_path / "sched.json").exit_code == 0
    assert_one_error_line(run("generate", "gpt-iteration", "--out", tmp_path / "g.npy"), "JSON")
    assert_one_error_line(
        run("generate", "moe-iteration", "--normalize", "--out", tmp_path / "n.json"), "--normalize"
    )


def test_workloads_lists_iteration_generators() -> None:
    res = run("workloads")
    assert res.exit_code == 0
    for name in ("gpt-iteration", "moe-iteration", "coflow-sequence"):
        assert name in res.stdout


def test_plot_shades_the_phases_of_an_iteration_schedule(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    it = tmp_path / "it.npy"
    np.save(it, np.array([[[0, 1, 0], [0, 0, 1], [1, 0, 0]]] * 2, dtype=float))
    sched = tmp_path / "it-sched.json"
    assert run("schedule", it, "-s", "1", "-d", "0.5", "--gaps", "0,0.2", "--out", sched).exit_code == 0
    res = run("plot", sched, "--out", tmp_path / "g.png")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "g.png").stat().st_size > 0


def test_plot_iteration_schedule_marks_phases_and_persistence() -> None:
    pytest.importorskip("matplotlib")
    from ocsched.iteration import Iteration, Phase
    from ocsched.report.figures import pyplot
    from ocsched.report.gantt import plot_iteration_schedule
    from ocsched.sequence import schedule_iteration

    ring = [[0, 1], [1, 0]]
    seq = schedule_iteration(
        Iteration([Phase(ring, name="a"), Phase(ring, gap_before=0.3, name="b")]), switches=1, delta=0.1
    )
    ax = plot_iteration_schedule(seq)
    # Two phases shaded; the second configuration persists, so only one hatched delay is drawn.
    assert [t.get_text() for t in ax.texts if t.get_text() in ("a", "b")] == ["a", "b"]
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 1
    pyplot().close(ax.figure)
