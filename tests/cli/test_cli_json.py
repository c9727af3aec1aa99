"""``--json`` on the commands: one JSON object on stdout, snake_case keys, the table's facts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import D3, run
from ocsched import io
from ocsched.schedulers import SCHEDULERS
from ocsched.workloads import ITERATION_WORKLOADS, WORKLOADS

SNAKE = re.compile(r"[a-z][a-z0-9_]*")


def as_json(*args: str | Path, code: int = 0) -> Any:
    res = run(*args, "--json")
    assert res.exit_code == code, (res.stdout, res.stderr)
    assert res.stdout.count("\n") == 1, res.stdout  # one object, one line
    return json.loads(res.stdout)


def table(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("  ")
        if sep:
            out[key.strip()] = value.strip()
    return out


def keys_are_snake(obj: Any, skip: frozenset[str] = frozenset()) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in skip:
                assert SNAKE.fullmatch(k), k
            keys_are_snake(v, skip)
    elif isinstance(obj, list):
        for v in obj:
            keys_are_snake(v, skip)


def test_schedule_json_has_the_table_facts(d3: Path) -> None:
    human = table(run("schedule", d3, "-s", "2", "-d", "0.5").stdout)
    got = as_json("schedule", d3, "-s", "2", "-d", "0.5")
    keys_are_snake(got)
    # the same facts: every row of the table is a key (spaces as underscores; time as time_s)
    assert {k.replace(" ", "_") for k in human} - {"time"} <= set(got)
    assert "time_s" in got
    assert got["makespan"] == pytest.approx(float(human["makespan"]), rel=1e-5)
    assert got["lower_bound"] == pytest.approx(float(human["lower bound"]), rel=1e-5)
    assert got["switches"] == 2 and got["delta"] == 0.5 and got["ports"] == 3
    assert got["unit"] is None  # not given


def test_schedule_json_of_an_iteration(tmp_path: Path) -> None:
    np.save(tmp_path / "it.npy", np.stack([D3, D3]))
    got = as_json("schedule", tmp_path / "it.npy", "-s", "1", "-d", "0.5", "--gaps", "0.2")
    keys_are_snake(got)
    assert got["phases"] == 2 and len(got["phase_rows"]) == 2
    assert got["gaps"] == pytest.approx(0.4)
    assert got["ratio"] == pytest.approx(got["makespan"] / got["lower_bound"])


def test_bound_json(d3: Path) -> None:
    got = as_json("bound", d3, "-s", "2", "-d", "0.5")
    keys_are_snake(got)
    assert got["lower_bound"] == max(got["line_bound"], got["degree_bound"], got["refined_bound"])
    human = table(run("bound", d3, "-s", "2", "-d", "0.5").stdout)
    assert float(human["lower bound"]) == pytest.approx(got["lower_bound"], rel=1e-5)


def test_validate_json_valid_and_invalid(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert run("schedule", d3, "-s", "2", "-d", "0.5", "-o", out).exit_code == 0
    got = as_json("validate", d3, out)
    assert got["valid"] is True and got["violations"] == [] and got["configurations"] >= 1
    np.save(tmp_path / "more.npy", D3 * 2)
    bad = as_json("validate", tmp_path / "more.npy", out, code=1)
    assert bad["valid"] is False and bad["violations"]


def test_algorithms_json_lists_the_registry() -> None:
    got = as_json("algorithms")
    assert list(got["algorithms"]) == list(SCHEDULERS)
    assert all(
        set(v) == {"description", "supports", "requires", "options"} for v in got["algorithms"].values()
    )
    exact = got["algorithms"]["exact"]["options"]
    assert exact["node_limit"] == {
        "type": "int",
        "default": SCHEDULERS["exact"].options["node_limit"].default,
        "description": SCHEDULERS["exact"].options["node_limit"].description,
        "minimum": 1,
    }
    assert exact["time_limit"]["default"] is None and exact["time_limit"]["exclusive_minimum"] == 0
    assert got["algorithms"]["baseline"]["options"]["order"]["choices"] == ["index", "random"]


def test_workloads_json_lists_every_generator() -> None:
    got = as_json("workloads")
    assert set(got["workloads"]) == {*WORKLOADS, *ITERATION_WORKLOADS}
    assert got["workloads"]["moe"]["unit"] == "bytes"
    assert got["workloads"]["moe"]["options"]["gpus"]["type"] == "int"
    moe = got["workloads"]["moe"]["options"]
    assert moe["popularity"]["choices"] == ["uniform", "zipf", "dirichlet"] and moe["gpus"]["choices"] == []
    assert got["workloads"]["tpu-pod"]["options"]["phase_ms"]["unit"] == "ms"
    assert got["workloads"]["coflow"]["options"]["path"] == {
        "type": "str",
        "default": None,
        "unit": "",
        "choices": [],
        "help": "A trace file in the same format to read instead of the packaged one.",
    }


def test_reschedule_json(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert run("schedule", d3, "-s", "2", "-d", "0.5", "-o", out).exit_code == 0
    got = as_json("reschedule", d3, out, "--fail-switch", "1", "--at", "0.5")
    keys_are_snake(got)
    assert got["failure_kind"] == "switch" and got["at"] == 0.5
    assert got["makespan_after"] >= got["makespan_before"]


def test_gap_json() -> None:
    got = as_json("gap", "-w", "random", "--n", "3", "-s", "1", "-d", "0.1", "-k", "2", "-a", "spectra")
    keys_are_snake(got, skip=frozenset({"spectra"}))
    assert got["heuristics"] == ["spectra"] and len(got["rows"]) == 1
    row = got["rows"][0]
    assert row["switches"] == 1 and row["optimal"] <= 2
    assert row["heuristics"]["spectra"]["over_exact"]["mean"] >= 1.0 - 1e-9


def test_json_and_out_to_stdout_conflict(d3: Path) -> None:
    res = run("schedule", d3, "-s", "2", "-d", "0.5", "-o", "-", "--json")
    assert res.exit_code == 2 and "stdout" in res.stderr


def test_schedule_json_file_is_compact_and_gz_round_trips(d3: Path, tmp_path: Path) -> None:
    plain, packed = tmp_path / "s.json", tmp_path / "s.json.gz"
    assert run("schedule", d3, "-s", "2", "-d", "0.5", "-o", plain).exit_code == 0
    assert run("schedule", d3, "-s", "2", "-d", "0.5", "-o", packed).exit_code == 0
    assert plain.read_text().count("\n") == 0  # compact: no indentation
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    a, b = io.read_schedule(packed).to_dict(), io.read_schedule(plain).to_dict()
    a["meta"].pop("runtime_s"), b["meta"].pop("runtime_s")  # the only part measured, not computed
    assert a == b
    assert run("validate", d3, packed).exit_code == 0
