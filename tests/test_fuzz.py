"""Fuzzing the boundary: hostile files and arguments never get past as a traceback.

Every reader either returns a value or raises :class:`InvalidInputError`; every command exits
0, 1 (an invalid schedule) or 2 (bad input, one ``error:`` line on stderr). The default run tries
a few dozen examples per test; ``make slow`` runs the same properties much longer.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from helpers import D3
from ocsched import io as ocsched_io
from ocsched.cli import app
from ocsched.errors import InvalidInputError
from ocsched.validation import validate

SLOW = settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------

NUMBERS = st.sampled_from(
    ["0", "1", "2.5", "-1", "1e308", "1e309", "nan", "inf", "-0", "1e-320", "x", "", " ", "1_0", "0x10"]
)
SHAPES = st.lists(st.sampled_from([0, 1, 2, 3, 10**5, 10**9, 2**62, -1]), min_size=0, max_size=3).map(tuple)
DTYPES = st.sampled_from(["<f8", "<i8", "|b1", "<c16", "<m8[s]", "<M8[D]", "|O", "<U3", "|V8", "<f2", ">f8"])


def _npy_bytes(shape: tuple[int, ...], descr: str, tail: bytes) -> bytes:
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    text = repr(header).encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    body = text + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body + tail


@st.composite
def demand_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """A (suffix, content) pair: garbage, a crafted header, or a text file of odd tokens."""
    kind = draw(st.sampled_from(["bytes", "npy", "npz", "csv", "long", "json"]))
    if kind == "bytes":
        return draw(st.sampled_from([".npy", ".npz", ".csv", ".json"])), draw(st.binary(max_size=300))
    if kind == "npy":
        tail = draw(st.binary(max_size=200))
        return ".npy", _npy_bytes(draw(SHAPES), draw(DTYPES), tail)
    if kind == "npz":
        import zipfile

        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name in draw(
                st.lists(
                    st.sampled_from(
                        ["demand", "format", "shape", "data", "indices", "indptr", "row", "col", "x"]
                    ),
                    max_size=5,
                    unique=True,
                )
            ):
                z.writestr(
                    f"{name}.npy", _npy_bytes(draw(SHAPES), draw(DTYPES), draw(st.binary(max_size=100)))
                )
        return ".npz", buf.getvalue()
    if kind in ("csv", "long"):
        rows = draw(st.lists(st.lists(NUMBERS, min_size=1, max_size=4), min_size=0, max_size=5))
        head = ["src,dst,value"] if kind == "long" else draw(st.sampled_from([[], [",a,b"], ["a,b"]]))
        text = "\n".join(head + [",".join(r) for r in rows])
        return ".csv", text.encode()
    value = draw(
        st.recursive(
            st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=3),
            lambda inner: (
                st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["demand", "x"]), inner)
            ),
            max_leaves=20,
        )
    )
    return ".json", json.dumps(value).encode()


def _read_demand_or_refuse(tmp: Path, suffix: str, content: bytes) -> None:
    p = tmp / f"fuzz{suffix}"
    p.write_bytes(content)
    try:
        dem = ocsched_io.read_demand(p)
    except InvalidInputError as exc:
        assert "\n" not in str(exc)
        return
    assert dem.n >= 1 and np.isfinite(dem.values).all() and (dem.values > 0).all()


@FAST
@given(demand_files())
def test_fuzz_demand_files(tmp_path_factory: pytest.TempPathFactory, file: tuple[str, bytes]) -> None:
    _read_demand_or_refuse(tmp_path_factory.mktemp("f"), *file)


@pytest.mark.slow
@SLOW
@given(demand_files())
def test_fuzz_demand_files_long(tmp_path_factory: pytest.TempPathFactory, file: tuple[str, bytes]) -> None:
    _read_demand_or_refuse(tmp_path_factory.mktemp("f"), *file)


# ---------------------------------------------------------------------------------------------
# Schedule files
# ---------------------------------------------------------------------------------------------

JSON_ATOMS = st.none() | st.booleans() | st.integers(-3, 5) | st.floats() | st.text(max_size=2)


@st.composite
def schedule_docs(draw: st.DrawFn) -> Any:
    """A schedule document with some fields replaced by odd values."""
    circuits = st.lists(st.lists(st.integers(-1, 4), min_size=2, max_size=2) | JSON_ATOMS, max_size=5)
    conf = st.fixed_dictionaries(
        {
            "start": st.floats(allow_nan=True) | JSON_ATOMS,
            "duration": st.floats(allow_nan=True) | JSON_ATOMS,
            "circuits": circuits | JSON_ATOMS,
        }
    )
    doc: dict[str, Any] = {
        "format": draw(st.sampled_from(["ocsched.schedule", "x"])),
        "version": draw(st.sampled_from([1, 1, 1, 2, "1", True])),
        "ports": draw(st.sampled_from([3, 3, 3, 0, 10**6, 10**7, -1, 2.5])),
        "delta": draw(st.floats(allow_nan=True) | JSON_ATOMS),
        "switches": draw(
            st.lists(
                st.fixed_dictionaries({"configurations": st.lists(conf, max_size=3)}) | JSON_ATOMS, max_size=3
            )
        ),
    }
    for key in draw(
        st.lists(st.sampled_from(["makespan", "lower_bound", "splits", "meta", "status"]), max_size=2)
    ):
        doc[key] = draw(JSON_ATOMS)
    return doc


def _read_and_validate(tmp: Path, doc: Any) -> None:
    p = tmp / "s.json"
    p.write_text(json.dumps(doc))
    try:
        sched, found = ocsched_io.read_schedule_checked(p)
    except InvalidInputError as exc:
        assert "\n" not in str(exc)
        return
    report = validate(sched, D3)
    if found:
        assert all("used twice" in f for f in found)
    assert isinstance(report.ok, bool)


@FAST
@given(schedule_docs())
def test_fuzz_schedule_files(tmp_path_factory: pytest.TempPathFactory, doc: Any) -> None:
    _read_and_validate(tmp_path_factory.mktemp("s"), doc)


@pytest.mark.slow
@SLOW
@given(schedule_docs())
def test_fuzz_schedule_files_long(tmp_path_factory: pytest.TempPathFactory, doc: Any) -> None:
    _read_and_validate(tmp_path_factory.mktemp("s"), doc)


# ---------------------------------------------------------------------------------------------
# Command lines
# ---------------------------------------------------------------------------------------------

VALUES = ["-1", "0", "1", "2", "3", "0.5", "1e308", "nan", "inf", "abc", "", "9" * 30, "true", "maybe"]
FILES = ["d3.npy", "d3.csv", "named.csv", "s.json", "dup.json", "missing.npy", "deep.json", "afile/x.json"]
COMMANDS: dict[str, list[str]] = {
    "schedule": ["--switches", "-s", "--delta", "-d", "--algorithm", "--seed", "--out", "--force"],
    "bound": ["--switches", "--delta"],
    "validate": ["--delta"],
    "export": ["--format", "--out", "--force"],
    "generate": ["--out", "--seed", "--normalize", "--copies", "--n", "--flows", "--sigma", "--gpus", "--tp"],
}
ALGORITHMS = ["spectra", "spectra-pack", "baseline", "eclipse", "bvn", "solstice", "naive", "nope"]


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    cmd = draw(st.sampled_from(sorted(COMMANDS)))
    args = [cmd]
    if cmd == "generate":
        args.append(draw(st.sampled_from(["moe8", "gpt32", "standard", "gpt", "nope"])))
    else:
        args += draw(st.lists(st.sampled_from(FILES), min_size=0, max_size=2))
    for opt in draw(st.lists(st.sampled_from(COMMANDS[cmd]), max_size=4)):
        args.append(opt)
        if opt in ("--algorithm",):
            args.append(draw(st.sampled_from(ALGORITHMS)))
        elif opt in ("--out",):
            args.append(draw(st.sampled_from(["o.json", "o.npy", "o.csv", "afile/o.npy", "/proc/o.npy"])))
        elif opt == "--format":
            args.append(draw(st.sampled_from(["circuits-csv", "circuits-parquet", "xml"])))
        elif opt not in ("--force", "--normalize"):
            args.append(draw(st.sampled_from(VALUES)))
    return args


def _files(tmp: Path) -> None:
    np.save(tmp / "d3.npy", D3)
    np.savetxt(tmp / "d3.csv", D3, delimiter=",")
    (tmp / "named.csv").write_text(",a,b,c\na,0,2,1\nb,1,0,2\nc,2,1,0\n")
    doc = {
        "format": "ocsched.schedule",
        "version": 1,
        "ports": 3,
        "delta": 0.5,
        "switches": [{"configurations": [{"start": 0.5, "duration": 3, "circuits": [[0, 1], [0, 2]]}]}],
    }
    (tmp / "dup.json").write_text(json.dumps(doc))
    doc["switches"] = [
        {"configurations": [{"start": 0.5, "duration": 3, "circuits": [[0, 1], [1, 2], [2, 0]]}]}
    ]
    (tmp / "s.json").write_text(json.dumps(doc))
    (tmp / "deep.json").write_text("[" * 50_000 + "]" * 50_000)
    (tmp / "afile").write_text("x")


def _run_cli(tmp: Path, args: list[str], setup: Callable[[Path], None]) -> None:
    setup(tmp)
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        res = CliRunner().invoke(app, args)
    finally:
        os.chdir(cwd)
    assert res.exit_code in (0, 1, 2), (args, res.exit_code, res.stderr)
    assert res.exception is None or isinstance(res.exception, SystemExit), (args, repr(res.exception))
    assert "Traceback" not in res.stderr
    if res.exit_code == 2:
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, res.stderr)


@FAST
@given(command_lines())
def test_fuzz_command_lines(tmp_path_factory: pytest.TempPathFactory, args: list[str]) -> None:
    _run_cli(tmp_path_factory.mktemp("c"), args, _files)


@pytest.mark.slow
@SLOW
@given(command_lines())
def test_fuzz_command_lines_long(tmp_path_factory: pytest.TempPathFactory, args: list[str]) -> None:
    _run_cli(tmp_path_factory.mktemp("c"), args, _files)
