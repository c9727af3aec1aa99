"""``ocsched export SCHEDULE --format F --out PATH``: every format, its options, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers import run
from ocsched import io, schedule, validate
from ocsched.fabric import Fabric

D = np.array([[0, 3.0, 1.0], [1.0, 0, 2.0], [2.0, 2.0, 0]])


@pytest.fixture
def sched_file(tmp_path: Path) -> Path:
    sched = schedule(D, fabric=Fabric.from_deltas([0.4, 0.2], rates=[2.0, 1.0]))
    return io.write_schedule(sched, tmp_path / "s.json")


@pytest.mark.parametrize(
    ("fmt", "extra"),
    [
        ("circuits", []),
        ("chrome-trace", ["--time-unit", "ms"]),
        ("oxc-orders", []),
        ("slices", ["--slice", "0.05"]),
        ("ns3", []),
        ("astra-sim", ["--link-rate", "100Gbps", "--time-unit", "us"]),
    ],
)
def test_every_format_writes_and_reads_back(
    sched_file: Path, tmp_path: Path, fmt: str, extra: list[str]
) -> None:
    out = tmp_path / f"out{io.EXPORTERS[fmt].extension}"
    res = run("export", sched_file, "--format", fmt, "--out", out, *extra)
    assert res.exit_code == 0, res.output
    assert f"as {fmt} to" in res.stderr
    assert validate(io.read_export(out, format=fmt), D).ok


def test_oxc_orders_report_recourse_and_slices_the_loss(sched_file: Path, tmp_path: Path) -> None:
    res = run("export", sched_file, "-f", "oxc-orders", "-o", tmp_path / "o.json")
    doc = json.loads((tmp_path / "o.json").read_text())
    assert f"recourse {doc['recourse']}" in res.stderr
    res = run("export", sched_file, "-f", "slices", "--slice", "0.1", "-o", tmp_path / "g.txt")
    assert "quantization_loss" in res.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-f", "slices", "-o", "x.txt"], "--slice"),
        (["-f", "astra-sim", "-o", "x"], "--link-rate"),
        (["-f", "oxc-orders"], "--out"),
        (["-f", "oxc-orders", "-o", "x.json", "--merge", "k.json"], "--merge"),
        (["-f", "slices", "-o", "x.txt", "--slice", "-1"], "slice_length"),
    ],
)
def test_bad_options_give_one_line(sched_file: Path, tmp_path: Path, args: list[str], needle: str) -> None:
    res = run("export", sched_file, *[str(tmp_path / a) if a.startswith(("x", "k.")) else a for a in args])
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0], res.stderr


def test_slices_with_the_demand_never_lose_more() -> None:
    from ocsched.io.exports.slices import fit_to_grid

    rng = np.random.default_rng(5)
    d = rng.random((8, 8)) * (rng.random((8, 8)) < 0.5)
    np.fill_diagonal(d, 0)
    sched = schedule(d, switches=2, delta=0.1)
    with_demand, a = fit_to_grid(sched, 0.025, demand=d)
    _, b = fit_to_grid(sched, 0.025)
    assert validate(with_demand, d).ok
    assert a["quantization_loss"] <= b["quantization_loss"] + 1e-12


def test_slices_take_the_demand_file(sched_file: Path, tmp_path: Path) -> None:
    np.save(tmp_path / "d.npy", D)
    out = tmp_path / "g.txt"
    res = run(
        "export", sched_file, "-f", "slices", "--slice", "0.05", "--demand", tmp_path / "d.npy", "-o", out
    )
    assert res.exit_code == 0, res.output
    assert validate(io.read_export(out, format="slices"), D).ok
    bad = run(
        "export",
        sched_file,
        "-f",
        "slices",
        "--slice",
        "0.05",
        "--demand",
        tmp_path / "no.npy",
        "-o",
        tmp_path / "h.txt",
    )
    assert bad.exit_code == 2 and "--demand" in bad.stderr
