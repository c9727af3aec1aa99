"""Units on the command line: --unit, --link-rate, delays with units, meta.unit; CSV columns; iterations."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from helpers import D3, run
from ocsched import io


def facts(*args: str | Path) -> dict[str, object]:
    res = run(*args, "--json")
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_bytes_and_link_rate_give_the_seconds_schedule(d3: Path, tmp_path: Path) -> None:
    # 400 Gb/s = 5e10 B/s: D3 x 5e10 bytes is D3 seconds, and -d 500ms is 0.5 s
    np.save(tmp_path / "bytes.npy", D3 * 5e10)
    got = facts("schedule", tmp_path / "bytes.npy", "-s", "2", "-d", "500ms", "--link-rate", "400Gbps")
    want = facts("schedule", d3, "-s", "2", "-d", "0.5", "--unit", "s")
    assert got["unit"] == "s" and got["converted_from"] == "bytes at 400Gbps"
    assert got["makespan"] == pytest.approx(want["makespan"], rel=1e-12)
    assert got["lower_bound"] == pytest.approx(want["lower_bound"], rel=1e-12)
    # --unit bytes says the same, and needs the rate
    same = facts(
        "bound", tmp_path / "bytes.npy", "-s", "2", "-d", "0.5s", "--unit", "bytes", "--link-rate", "50GB/s"
    )
    assert same["lower_bound"] == pytest.approx(facts("bound", d3, "-s", "2", "-d", "0.5")["lower_bound"])
    res = run("bound", tmp_path / "bytes.npy", "-s", "2", "-d", "0.5", "--unit", "bytes")
    assert res.exit_code == 2 and "--link-rate" in res.stderr


def test_delay_units_convert_to_the_demand_unit(d3: Path) -> None:
    a = facts("bound", d3, "-s", "2", "-d", "500us", "--unit", "ms")
    b = facts("bound", d3, "-s", "2", "-d", "0.5", "--unit", "ms")
    assert a == b
    assert facts("schedule", d3, "-s", "2", "-d", "500us", "--unit", "ms")["delta"] == 0.5
    per_switch = facts("bound", d3, "-d", "10us,1ms", "--unit", "us")
    assert per_switch["delta"] == [10.0, 1000.0]


def test_a_delay_unit_needs_the_demand_unit(d3: Path) -> None:
    res = run("schedule", d3, "-s", "2", "-d", "10us")
    assert res.exit_code == 2 and "--unit" in res.stderr and res.stderr.count("\n") == 1
    res = run("schedule", d3, "-s", "2", "-d", "10parsecs", "--unit", "s")
    assert res.exit_code == 2 and "--delta" in res.stderr


def test_link_rate_with_a_time_unit_is_refused(d3: Path) -> None:
    res = run("bound", d3, "-s", "2", "-d", "0.1", "--unit", "ms", "--link-rate", "400Gbps")
    assert res.exit_code == 2 and "--link-rate" in res.stderr


def test_meta_unit_is_recorded_printed_and_checked(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    res = run("schedule", d3, "-s", "2", "-d", "0.5", "--unit", "ms", "-o", out)
    assert res.exit_code == 0
    assert any(line.split() == ["unit", "ms"] for line in res.stdout.splitlines())
    assert io.read_schedule(out).meta["unit"] == "ms"
    assert run("validate", d3, out, "--unit", "ms").exit_code == 0
    wrong = run("validate", d3, out, "--unit", "s")
    assert wrong.exit_code == 2 and "meta.unit" in wrong.stderr


def test_reschedule_at_takes_a_unit(d3: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert run("schedule", d3, "-s", "2", "-d", "0.5", "--unit", "s", "-o", out).exit_code == 0
    got = facts("reschedule", d3, out, "--fail-switch", "1", "--at", "600ms", "--unit", "s")
    assert got["at"] == pytest.approx(0.6)


@pytest.mark.parametrize(
    "header",
    ["src,dst,value", "source,target,weight", "from,to,bytes", "Source,Target,Weight", "dst,value,src"],
)
def test_long_form_csv_header_names(tmp_path: Path, header: str) -> None:
    names = header.lower().split(",")
    row = {
        "src": "gpu01",
        "source": "gpu01",
        "from": "gpu01",
        "dst": "gpu02",
        "target": "gpu02",
        "to": "gpu02",
    }
    line = ",".join(row.get(n, "3") for n in names)
    p = tmp_path / "flows.csv"
    p.write_text(f"{header}\n{line}\n")
    got = facts("bound", p, "-s", "1", "-d", "0.5")
    assert got["lower_bound"] == pytest.approx(3.5)


def test_columns_option_and_the_error_listing_columns(tmp_path: Path) -> None:
    p = tmp_path / "flows.csv"
    p.write_text("time,gpu_a,gpu_b,size\n0,a,b,4\n1,b,a,2\n")
    got = facts("bound", p, "-s", "1", "-d", "0", "--columns", "gpu_a,gpu_b,size")
    assert got["lower_bound"] == pytest.approx(4.0)
    res = run("bound", p, "-s", "1", "-d", "0", "--columns", "gpu_a,gpu_c,size")
    assert res.exit_code == 2 and "'gpu_c'" in res.stderr and "'time', 'gpu_a', 'gpu_b', 'size'" in res.stderr
    q = tmp_path / "odd.csv"
    q.write_text("src,dst,count\n0,1,2\n")
    res = run("bound", q, "-s", "1", "-d", "0")
    assert res.exit_code == 2 and "'count'" in res.stderr and "--columns" in res.stderr
    res = run("bound", p, "-s", "1", "-d", "0", "--columns", "a,b")
    assert res.exit_code == 2 and "SRC,DST,VALUE" in res.stderr
    np.save(tmp_path / "d.npy", D3)
    res = run("bound", tmp_path / "d.npy", "-s", "1", "-d", "0", "--columns", "a,b,c")
    assert res.exit_code == 2 and "`--columns`" in res.stderr


def _phases(folder: Path, names: list[str]) -> None:
    folder.mkdir()
    for k, name in enumerate(names):
        np.save(folder / f"{name}.npy", D3 * (k + 1))


def test_phases_in_natural_order_and_one_gap_for_all(tmp_path: Path) -> None:
    _phases(tmp_path / "it", ["phase1", "phase2", "phase10"])
    got = facts("schedule", tmp_path / "it", "-s", "1", "-d", "0.1", "--gaps", "0.2")
    assert [r["name"] for r in got["phase_rows"]] == ["phase1", "phase2", "phase10"]  # type: ignore[index]
    assert [r["gap"] for r in got["phase_rows"]] == [0.2, 0.2, 0.2]  # type: ignore[index]


def test_gaps_csv_is_matched_by_name(tmp_path: Path) -> None:
    _phases(tmp_path / "it", ["phase1", "phase2", "phase10"])
    (tmp_path / "it" / "gaps.csv").write_text("name,gap\nphase10,0.3\nphase1,0.1\nphase2,0.2\n")
    got = facts("schedule", tmp_path / "it", "-s", "1", "-d", "0.1")
    assert [(r["name"], r["gap"]) for r in got["phase_rows"]] == [  # type: ignore[index]
        ("phase1", 0.1),
        ("phase2", 0.2),
        ("phase10", 0.3),
    ]
    (tmp_path / "it" / "gaps.csv").write_text("name,gap\nphase1,0.1\nphase2,0.2\nphase3,0.3\n")
    res = run("schedule", tmp_path / "it", "-s", "1", "-d", "0.1")
    assert res.exit_code == 2 and "'phase3'" in res.stderr
    (tmp_path / "it" / "gaps.csv").write_text("name,gap\nphase1,0.1\nphase2,0.2\n")
    res = run("schedule", tmp_path / "it", "-s", "1", "-d", "0.1")
    assert res.exit_code == 2 and "'phase10'" in res.stderr


def test_iteration_algorithm_is_checked_by_its_own_name(tmp_path: Path) -> None:
    _phases(tmp_path / "it", ["a", "b"])
    res = run("schedule", tmp_path / "it", "-s", "1", "-d", "0.1", "--iteration-algorithm", "nope")
    assert res.exit_code == 2 and "`--iteration-algorithm`" in res.stderr and "spectra-seq" in res.stderr


def test_summary_echoes_the_fabric_file(d3: Path, tmp_path: Path) -> None:
    f = tmp_path / "fabric.toml"
    f.write_text(
        "[[switches]]\ndelta = 0.1\n[[switches]]\ndelta = 0.2\nrate = 2.0\n"
        "[[down]]\nswitch = 1\nstart = 0.5\nend = 0.7\n[[failed_links]]\nport = 2\nswitch = 0\n"
    )
    got = facts("schedule", d3, "--fabric", f)
    assert got["rates"] == [1.0, 2.0] and got["delta"] == [0.1, 0.2]
    assert got["down"] == ["switch 1 0.5..0.7"] and got["failed_links"] == ["port 2 switch 0 from 0"]
    human = run("schedule", d3, "--fabric", f).stdout
    assert "failed links" in human and "switch 1 0.5..0.7" in human and "rates" in human


def test_a_demand_that_looks_like_bytes_gets_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def warned(*args: str | Path) -> bool:
        caplog.clear()
        assert run("bound", *args, "-s", "1", "-d", "0.1").exit_code == 0
        return any("--link-rate" in r.getMessage() for r in caplog.records)

    np.save(tmp_path / "bytes.npy", np.round(D3 * 1e7))
    assert warned(tmp_path / "bytes.npy")
    assert not warned(tmp_path / "bytes.npy", "--unit", "s")  # the unit was said
    assert not warned(tmp_path / "bytes.npy", "--quiet")
    np.save(tmp_path / "times.npy", D3 * 1e-3)
    assert not warned(tmp_path / "times.npy")


def test_a_trace_records_its_time_unit(tmp_path: Path) -> None:
    from ocsched.io.traces import synthetic as S

    S.write(tmp_path / "t", [S.collective("all_reduce", 1 << 20, ranks=range(4), gap_us=50)], format="kineto")
    out = tmp_path / "s.json"
    args = ["schedule", tmp_path / "t", "--link-rate", "400Gbps", "-T", "unit=us", "-s", "2", "-d", "10us"]
    res = run(*args, "-o", out)
    assert res.exit_code == 0, res.stderr
    assert json.loads(out.read_text())["meta"]["unit"] == "us"
    got = facts(*args)
    assert got["delta"] == 10.0 and got["unit"] == "us"


def test_gzipped_demands_and_iterations_are_read(tmp_path: Path) -> None:
    # Every text demand format also reads gzip-compressed, and writes so by its name.
    for suffix in (".csv.gz", ".json.gz"):
        p = tmp_path / f"d{suffix}"
        io.write_demand(D3, p)
        assert p.read_bytes()[:2] == b"\x1f\x8b"
        assert io.read_demand(p).to_dense().tolist() == D3.tolist()
        assert facts("bound", p, "-s", "1", "-d", "0")["lower_bound"] == pytest.approx(D3.sum(1).max())
    flows = tmp_path / "flows.csv.gz"
    flows.write_bytes(gzip.compress(b"gpu_a,gpu_b,size\na,b,4\nb,a,2\n"))
    assert io.read_demand(flows, columns=("gpu_a", "gpu_b", "size")).to_dense().max() == 4
    # A folder of gzipped phases: the phase names drop the whole suffix, in natural order.
    folder = tmp_path / "it"
    folder.mkdir()
    io.write_demand(D3, folder / "phase10.csv.gz")
    io.write_demand(D3 * 2, folder / "phase2.json.gz")
    got = facts("schedule", folder, "-s", "1", "-d", "0.1")
    assert [r["name"] for r in got["phase_rows"]] == ["phase2", "phase10"]  # type: ignore[index]
    np.save(folder / "phase2.npy", D3)
    res = run("schedule", folder, "-s", "1", "-d", "0.1")
    assert res.exit_code == 2 and "two files for phase 'phase2'" in res.stderr
    # An iteration file written as .json.gz reads back whole and is recognised as an iteration.
    (folder / "phase2.npy").unlink()
    iteration = io.read_iteration(folder, gaps=0.2)
    packed = tmp_path / "it.json.gz"
    io.write_iteration(iteration, packed)
    assert io.is_iteration(packed)
    assert io.read_iteration(packed).to_json() == iteration.to_json()
    sched = tmp_path / "s.json.gz"
    assert run("schedule", packed, "-s", "1", "-d", "0.1", "-o", sched).exit_code == 0
    assert run("validate", packed, sched, "-s", "1", "-d", "0.1").exit_code == 0
