"""Counts read from files are checked before anything is built: a small file never makes a big job.

A fabric file's switch counts (summed), down windows and failed links, a sweep config's seeds,
grid and switch counts, a ``--delta`` list, a coflow trace's header: each has a cap, applied to
the description before it is expanded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ocsched.fabric as fabric_module
from helpers import run
from ocsched import io, sweep
from ocsched.errors import InvalidInputError
from ocsched.fabric import MAX_DOWN_WINDOWS, MAX_FAILED_LINKS, MAX_SWITCHES, Fabric
from ocsched.sweep.config import MAX_RUNS

HOSTILE_FABRIC = "[[switches]]\ndelta = 0.1\ncount = 100000\n[[switches]]\ndelta = 0.1\ncount = 100000\n"


def assert_one_line(res: Any, *needles: str) -> None:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_fabric_switch_counts_are_summed_before_anything_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.toml"
    path.write_text(HOSTILE_FABRIC)
    assert len(path.read_bytes()) < 100
    built: list[object] = []

    class Counting(fabric_module.Switch):
        def __post_init__(self) -> None:
            built.append(self)
            super().__post_init__()

    with monkeypatch.context() as m:
        m.setattr(fabric_module, "Switch", Counting)
        with pytest.raises(InvalidInputError, match=rf"describes more than {MAX_SWITCHES} switches"):
            io.read_fabric(path)
    assert built == []  # refused from the counts alone
    # The total counts, not each entry: 1024 in one entry passes, 1024 + 1 in two does not.
    assert Fabric.from_dict({"switches": [{"delta": 0.1, "count": MAX_SWITCHES}]}).size == MAX_SWITCHES
    with pytest.raises(InvalidInputError, match=r"1025 up to `fabric.switches\[1\]`"):
        Fabric.from_dict({"switches": [{"delta": 0.1, "count": MAX_SWITCHES}, {"delta": 0.2}]})
    # And many entries of count 1.
    with pytest.raises(InvalidInputError, match="at most 1024"):
        Fabric.from_dict({"switches": [{"delta": 0.1}] * (MAX_SWITCHES + 1)})


@pytest.mark.parametrize(
    ("key", "entry", "cap"),
    [
        ("down", {"switch": 0, "start": 1.0, "end": 2.0}, "MAX_DOWN_WINDOWS"),
        ("failed_links", {"port": 0, "switch": 0}, "MAX_FAILED_LINKS"),
    ],
)
def test_fabric_failure_lists_are_capped(
    key: str, entry: dict[str, Any], cap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (MAX_DOWN_WINDOWS, MAX_FAILED_LINKS) == (10_000, 100_000)  # as the README says
    limit = 50  # the same rule at a smaller cap, so the test stays quick
    monkeypatch.setattr(fabric_module, cap, limit)
    ok = Fabric.from_dict({"switches": [{"delta": 0.1}], key: [entry] * limit})
    assert len(getattr(ok, key)) == limit
    with pytest.raises(
        InvalidInputError, match=rf"`fabric.{key}` lists {limit + 1} entries; at most {limit}"
    ):
        Fabric.from_dict({"switches": [{"delta": 0.1}], key: [entry] * (limit + 1)})


def test_hostile_fabric_file_is_one_line_for_schedule_bound_and_sweep(tmp_path: Path) -> None:
    (tmp_path / "f.toml").write_text(HOSTILE_FABRIC)
    np.save(tmp_path / "d.npy", np.array([[0.0, 1.0], [1.0, 0.0]]))
    for cmd in ("schedule", "bound"):
        assert_one_line(run(cmd, tmp_path / "d.npy", "--fabric", tmp_path / "f.toml"), "f.toml", "1024")
    cfg = tmp_path / "c.toml"
    cfg.write_text('algorithms = ["spectra"]\n[[workloads]]\nname = "standard"\nfabrics = ["f.toml"]\n')
    assert_one_line(run("sweep", cfg, "--out", tmp_path / "r"), "f.toml", "1024")
    assert not (tmp_path / "r").exists()


def test_delta_list_is_capped_at_the_switch_limit(tmp_path: Path) -> None:
    np.save(tmp_path / "d.npy", np.array([[0.0, 1.0], [1.0, 0.0]]))
    many = ",".join(["0.1"] * (MAX_SWITCHES + 1))
    assert_one_line(run("bound", tmp_path / "d.npy", "--delta", many), "`--delta` lists 1025 delays")
    with pytest.raises(InvalidInputError, match="at most 1024"):
        io.fabric_from_options(delta=",".join(["x"] * 10**6))  # counted before parsed


BASE: dict[str, Any] = {"switches": [2], "delta": [0.1], "algorithms": ["spectra"]}


#: A grid of 6 options x 10 values: 10**6 combinations, times 10 seeds (never built).
HUGE_GRID = {
    k: [float(v) for v in range(1, 11)] for k in ("n", "flows", "small_fraction", "large_share", "sigma")
}


@pytest.mark.parametrize(
    ("patch", "match"),
    [
        (
            {"workloads": [{"name": "standard", "seeds": 10**12}]},
            rf"seeds. = 1000000000000 is above .*{MAX_RUNS}",
        ),
        (
            {"workloads": [{"name": "standard", "seeds": 100, "grid": HUGE_GRID}]},
            rf"`workloads\[0\]` expands to 10000000 runs; a config may have at most {MAX_RUNS} runs in all",
        ),
        (
            {"switches": [100_000], "workloads": [{"name": "standard"}]},
            r"switches. must be integers in 1..1024",
        ),
        (
            {"workloads": [{"name": "moe-iteration", "switches": [5000], "delta": [0.1]}]},
            r"switches. must be integers in 1..1024",
        ),
        ({"workloads": [{"name": "standard", "options": 3}]}, r"options. must be a table; got 3"),
        ({"workloads": [{"name": "standard", "grid": [1]}]}, r"grid. must be a table; got \[1\]"),
    ],
)
def test_sweep_config_counts_are_checked_before_expanding(patch: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        sweep.expand({**BASE, **patch})


def test_runs_are_counted_over_the_whole_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import ocsched.sweep.config as config

    monkeypatch.setattr(config, "MAX_RUNS", 10)
    four = {"name": "standard", "seeds": 4}
    assert len(sweep.expand({**BASE, "workloads": [four, {**four, "label": "b"}]})) == 8
    with pytest.raises(
        InvalidInputError, match=r"`workloads\[2\]` expands to 4 runs; .* at most 10 runs in all"
    ):
        sweep.expand({**BASE, "workloads": [four, {**four, "label": "b"}, {**four, "label": "c"}]})
    for k in range(3):
        np.save(tmp_path / f"m{k}.npy", np.eye(2)[::-1])
    with pytest.raises(InvalidInputError, match=r"`workloads\[2\]` expands to 3 runs"):
        sweep.expand(
            {**BASE, "workloads": [four, {**four, "label": "b", "seeds": 4}, {"path": "m*.npy"}]},
            base=tmp_path,
        )


def test_coflow_trace_header_is_capped(tmp_path: Path) -> None:
    trace = tmp_path / "t.txt"
    trace.write_text("100000000 1\n1 0 1 0 1 1:5\n")
    with pytest.raises(InvalidInputError, match=r"100000000 racks in its header, above the limit of 10000"):
        io.read_coflow_trace(trace)
    assert_one_line(run("generate", "coflow", "--path", trace, "-o", tmp_path / "x.npy"), "100000000 racks")
