"""Tests of ocsched.io: demand files in every format, schedule files, safe writes."""

from __future__ import annotations

import gc
import json
import logging
import os
import re
import shutil
import warnings
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import D3
from ocsched import io, schedule, validate
from ocsched.errors import InvalidInputError
from ocsched.model import Configuration, Demand, Schedule

DATA = Path(__file__).parents[1] / "data" / "core"


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


# ---------------------------------------------------------------------------------------------
# read_demand: every supported format
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fname",
    [
        "d3.npy",
        "d3_sparse.npz",  # scipy.sparse.save_npz
        "d3_dense.npz",  # np.savez with one unnamed array
        "d3_named.npz",  # two arrays, one named 'demand'
        "d3.csv",  # dense, with comments
        "d3_long.csv",  # src,dst,value with comments and a repeated pair
        "d3.json",  # list of lists
        "d3_obj.json",  # {"demand": ...}
    ],
)
def test_read_demand_fixtures(fname: str) -> None:
    d = io.read_demand(DATA / fname)
    assert isinstance(d, Demand)
    np.testing.assert_array_equal(d.to_dense(), D3)


def test_read_demand_accepts_str_path_and_upper_case_suffix(tmp_path: Path) -> None:
    p = tmp_path / "D.CSV"
    shutil.copy(DATA / "d3.csv", p)
    np.testing.assert_array_equal(io.read_demand(str(p)).to_dense(), D3)


def test_read_csv_long_form_sizes_and_adds(tmp_path: Path) -> None:
    p = tmp_path / "long.csv"
    p.write_text("# flows\n Src , DST , Value \n0,3,1.5  # first\n\n0,3,2\n2,1,0.25\n")
    d = io.read_demand(p)
    expected = np.zeros((4, 4))
    expected[0, 3], expected[2, 1] = 3.5, 0.25
    np.testing.assert_array_equal(d.to_dense(), expected)


def test_read_csv_single_row_and_scientific(tmp_path: Path) -> None:
    p = tmp_path / "one.csv"
    p.write_text("1e-3\n")
    d = io.read_demand(p)
    assert d.n == 1 and d.nnz == 0  # a 1x1 matrix only holds a diagonal entry


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("0,\uff11\n2,0\n", "row 0 column 1"),  # a full-width digit: float() takes it, ocsched does not
        ("0,1_000\n2,0\n", "row 0 column 1"),
        ("src,dst,value\na,b,\uff11\n", "column 'value' must be a number"),
    ],
)
def test_csv_numbers_are_ascii(tmp_path: Path, text: str, bad: str) -> None:
    # Every number ocsched reads follows one ASCII grammar (io._text); the CSV cells too.
    p = tmp_path / "d.csv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInputError, match=bad):
        io.read_demand(p)


def test_read_npz_sparse_keeps_values_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    dense = rng.random((40, 40)) * (rng.random((40, 40)) < 0.1)
    np.fill_diagonal(dense, 0.0)
    m = sp.csr_array(dense)
    p = tmp_path / "m.npz"
    sp.save_npz(p, m)
    np.testing.assert_array_equal(io.read_demand(p).to_dense(), m.toarray())


def test_read_json_nan_is_rejected_as_non_finite(tmp_path: Path) -> None:
    p = tmp_path / "nan.json"
    p.write_text("[[0, NaN], [1, 0]]")
    with pytest.raises(InvalidInputError, match=r"must be finite; .*\[0, 1\] = nan"):
        io.read_demand(p)


# ---------------------------------------------------------------------------------------------
# read_demand: errors (InvalidInputError naming the argument and the file)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fname", "pattern"),
    [
        ("ragged.csv", r"row 1 has 2 values, the first row 3"),
        ("nonnumeric.csv", r"could not be read as \.csv: row 0 column 2 is not a number: 'x'"),
        ("truncated.json", r"could not be read as \.json"),
        ("negative.csv", r"must be non-negative; .*\[0, 1\] = -1\.0"),
        ("nan.csv", r"must be finite; .*\[0, 1\] = nan"),
        ("inf.csv", r"must be finite; .*\[0, 1\] = inf"),
        ("nonsquare.csv", r"must be a square n x n matrix; got shape \(2, 3\)"),
    ],
)
def test_read_demand_rejects_fixture(fname: str, pattern: str) -> None:
    with pytest.raises(InvalidInputError, match=pattern) as info:
        io.read_demand(DATA / fname, name="traffic")
    assert "traffic" in str(info.value)
    assert fname in str(info.value)


def _read_garbage_npz() -> list[warnings.WarningMessage]:
    """Read the fake-zip fixture; return the ResourceWarnings it causes (an unclosed file)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(
            InvalidInputError, match=r"`traffic` file .*garbage\.npz could not be read as \.npz"
        ):
            io.read_demand(DATA / "garbage.npz", name="traffic")
        gc.collect()
    return [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_read_demand_rejects_garbage_npz_and_closes_the_file() -> None:
    # np.load(path) leaks its handle when a .npz is not a zip; the reader must not.
    assert _read_garbage_npz() == []


@pytest.mark.parametrize(
    ("fname", "pattern"),
    [
        ("multi.npz", r"holds 2 arrays \(a, b\); name one 'demand'"),
        ("empty.csv", r"is empty"),
        ("ragged.json", r"rows have different lengths \[1, 2\]"),
        ("nonnumeric.json", r"must hold only numbers"),
    ],
)
def test_read_demand_rejects_fixture_with_reader_message(fname: str, pattern: str) -> None:
    # messages raised inside a reader still name the argument
    with pytest.raises(InvalidInputError, match=r"^`traffic`.*" + pattern) as info:
        io.read_demand(DATA / fname, name="traffic")
    assert fname in str(info.value)


@pytest.mark.parametrize(
    ("name", "content", "pattern"),
    [
        ("hdr.csv", "src,dst,value\n", r"has a header but no flows"),
        ("short.csv", "src,dst,value\n0,1\n", r"line 2: expected src,dst,value; got '0,1'"),
        ("frac.csv", "src,dst,value\n0,1,2\n0,1.5,1\n", r"line 3: ports must be integers in 0\.\.999999"),
        ("negport.csv", "src,dst,value\n0,-1,1\n", r"line 2: ports must be integers in 0\.\.999999"),
        ("longx.csv", "src,dst,value\n0,1,x\n", r"could not be read as \.csv"),
        ("longneg.csv", "src,dst,value\n0,1,-2\n", r"must be non-negative; .*\[0, 1\] = -2\.0"),
        (
            "badhead.csv",
            "a,b,c\n0,1,2\n",
            r"must be a square n x n matrix; got shape \(1, 3\)",
        ),  # not long-form names
        ("utf.csv", b"0,1\n\xff\xfe,0\n", r"could not be read as \.csv: 'utf-8' codec"),
        ("empty.json", "", r"could not be read as \.json"),
        ("nodemand.json", '{"matrix": [[0]]}', r"object without a 'demand' key"),
        ("sched.json", '{"format": "ocsched.schedule"}', r"'ocsched\.schedule' document, not a"),
        ("scalar.json", "5", r"must hold a list of lists of numbers"),
        ("flat.json", "[1, 2]", r"must hold a list of lists of numbers"),
        ("bool.json", "[[0, true], [1, 0]]", r"must hold only numbers"),
        ("emptylist.json", "[]", r"shape \(0,\)"),
        ("nonsq.json", "[[0, 1, 2], [1, 0, 2]]", r"must be a square n x n matrix; got shape \(2, 3\)"),
        ("obj.npy", None, r"could not be read as \.npy"),  # object array needs pickle
        ("v1.npy", b"\x93NUMPY garbage", r"could not be read as \.npy"),
        ("npy_renamed.npz", None, r"could not be read as \.npz"),
    ],
)
def test_read_demand_rejects_malformed(tmp_path: Path, name: str, content: Any, pattern: str) -> None:
    p = tmp_path / name
    if name == "obj.npy":
        np.save(p, np.array([[0, 1], [1, None]], dtype=object), allow_pickle=True)
    elif name == "npy_renamed.npz":
        with open(p, "wb") as f:
            np.save(f, D3)
    elif isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content)
    with pytest.raises(InvalidInputError, match=r"^`demand.*" + pattern) as info:
        io.read_demand(p)
    assert name in str(info.value)


@pytest.mark.parametrize("fname", ["empty.npy", "empty.npz", "empty.csv", "empty.json"])
def test_read_demand_empty_file(tmp_path: Path, fname: str) -> None:
    # numpy raises EOFError on an empty file (and click would turn that into "Aborted.")
    p = tmp_path / fname
    p.write_bytes(b"")
    with pytest.raises(InvalidInputError, match=r"^`demand`.*" + re.escape(fname)):
        io.read_demand(p)


def test_read_demand_huge_json_integer(tmp_path: Path) -> None:
    # 10**400 is a valid JSON number but no float: OverflowError must not escape
    p = tmp_path / "huge.json"
    p.write_text("[[0, 1" + "0" * 400 + "], [1, 0]]")
    with pytest.raises(InvalidInputError, match=r"^`demand`.*huge\.json"):
        io.read_demand(p)


def test_read_demand_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"^`traffic` file not found: .*nope\.csv$"):
        io.read_demand(tmp_path / "nope.csv", name="traffic")


def test_read_demand_directory(tmp_path: Path) -> None:
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(InvalidInputError, match=r"^`demand` file not found: .*dir\.csv$"):
        io.read_demand(tmp_path / "dir.csv")


@pytest.mark.parametrize("fname", ["d3.txt", "d3", "d3.npy.gz", "d3.gz", "d3.mat"])
def test_read_demand_unknown_suffix(tmp_path: Path, fname: str) -> None:
    p = tmp_path / fname
    p.write_text("0,1\n1,0\n")
    with pytest.raises(
        InvalidInputError,
        match=r"^`traffic` has unknown file type .*use one of \.npy, \.npz, \.csv, \.json, "
        r"\.csv\.gz, \.json\.gz$",
    ):
        io.read_demand(p, name="traffic")


@pytest.mark.parametrize("fname", ["d3.csv.gz", "d3.json.gz"])
def test_read_demand_gz_that_is_not_gzip(tmp_path: Path, fname: str) -> None:
    p = tmp_path / fname
    p.write_text("0,1\n1,0\n")
    with pytest.raises(
        InvalidInputError, match=r"^`traffic` file .* could not be read as \.(csv|json)\.gz: "
    ):
        io.read_demand(p, name="traffic")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_read_demand_unreadable_file(tmp_path: Path) -> None:
    p = tmp_path / "locked.csv"
    shutil.copy(DATA / "d3.csv", p)
    p.chmod(0)
    try:
        with pytest.raises(InvalidInputError, match=r"`demand` file .*locked\.csv could not be read"):
            io.read_demand(p)
    finally:
        p.chmod(0o600)


# ---------------------------------------------------------------------------------------------
# write_demand / read_demand round trip
# ---------------------------------------------------------------------------------------------

ROUND_TRIP = np.array(
    [[0.0, 0.1, 1 / 3, 0.0], [1e-300, 0.0, 2.0**60, 7.0], [0.0, 0.0, 0.0, 0.0], [5e-324, 1.0, 0.0, 0.0]]
)


@pytest.mark.parametrize("suffix", io.DEMAND_SUFFIXES)
@pytest.mark.parametrize("form", ["ndarray", "list", "sparse", "Demand"])
def test_write_read_demand_round_trip(tmp_path: Path, suffix: str, form: str) -> None:
    matrix: Any = {
        "ndarray": ROUND_TRIP,
        "list": ROUND_TRIP.tolist(),
        "sparse": sp.csr_array(ROUND_TRIP),
        "Demand": Demand.from_matrix(ROUND_TRIP),
    }[form]
    p = tmp_path / f"d{suffix}"
    assert io.write_demand(matrix, p) == p
    back = io.read_demand(p)
    np.testing.assert_array_equal(back.to_dense(), ROUND_TRIP)  # bit-exact
    assert listing(tmp_path) == [p.name]


def test_write_demand_npz_is_sparse(tmp_path: Path) -> None:
    p = tmp_path / "d.npz"
    io.write_demand(D3, p)
    assert sp.issparse(sp.load_npz(p))


def test_write_demand_keeps_diagonal(tmp_path: Path) -> None:
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    p = tmp_path / "d.npy"
    io.write_demand(m, p)
    np.testing.assert_array_equal(np.load(p), m)


def test_write_demand_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"^`out` has unknown file type '\.txt'"):
        io.write_demand(D3, tmp_path / "d.txt")
    assert listing(tmp_path) == []


def test_write_demand_creates_parent_folders(tmp_path: Path) -> None:
    p = tmp_path / "a" / "b" / "d.csv"
    io.write_demand(D3, p)
    np.testing.assert_array_equal(io.read_demand(p).to_dense(), D3)


# ---------------------------------------------------------------------------------------------
# Schedules
# ---------------------------------------------------------------------------------------------


def test_read_schedule_fixture() -> None:
    s = io.read_schedule(DATA / "sched3.json")
    assert (s.ports, s.delta, s.makespan, s.num_configurations, s.algorithm) == (3, 0.5, 2.5, 2, "hand")
    np.testing.assert_array_equal(s.loads(), [2.5, 1.5])
    np.testing.assert_array_equal(s.served(), D3)
    assert "hand-built" in s.meta["note"]
    assert validate(s, io.read_demand(DATA / "d3.csv")).ok


def test_write_read_schedule_round_trip(tmp_path: Path) -> None:
    s = schedule(D3, switches=2, delta=0.1)
    p = tmp_path / "s.json"
    assert io.write_schedule(s, p) == p
    back = io.read_schedule(p)
    assert back.same_as(s) and dict(back.meta) == dict(s.meta)
    assert back.to_json() == s.to_json()
    assert listing(tmp_path) == ["s.json"]


def test_read_schedule_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"^`plan` file not found: .*none\.json$"):
        io.read_schedule(tmp_path / "none.json", name="plan")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidInputError, match=r"^`plan` file .*bad\.json: schedule is not valid JSON"):
        io.read_schedule(bad, name="plan")
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"format": "other"}')
    with pytest.raises(InvalidInputError, match=r"^`schedule` file .*wrong\.json: schedule `format` must be"):
        io.read_schedule(wrong)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InvalidInputError, match=r"^`schedule` file .*bin\.json could not be read"):
        io.read_schedule(binary)


# ---------------------------------------------------------------------------------------------
# Never overwrite without force; atomic writes leave no temporary files
# ---------------------------------------------------------------------------------------------


def _schedule_b() -> Schedule:
    c = Configuration(0.5, 1.0, np.array([1, 0], dtype=np.int64))
    return Schedule(ports=2, delta=0.5, switches=((c,),), algorithm="b")


WRITERS = {
    "demand.csv": lambda p, force: io.write_demand(D3, p, force=force),
    "demand.npy": lambda p, force: io.write_demand(D3, p, force=force),
    "demand.npz": lambda p, force: io.write_demand(D3, p, force=force),
    "demand.json": lambda p, force: io.write_demand(D3, p, force=force),
    "schedule.json": lambda p, force: io.write_schedule(_schedule_b(), p, force=force),
}


@pytest.mark.parametrize("fname", sorted(WRITERS))
def test_refuses_to_overwrite_without_force(tmp_path: Path, fname: str) -> None:
    p = tmp_path / fname
    p.write_bytes(b"original content")
    with pytest.raises(InvalidInputError, match=r"^`out` file already exists: .*use --force to overwrite"):
        WRITERS[fname](p, False)
    assert p.read_bytes() == b"original content"
    assert listing(tmp_path) == [fname]


@pytest.mark.parametrize("fname", sorted(WRITERS))
def test_force_overwrites(tmp_path: Path, fname: str) -> None:
    p = tmp_path / fname
    p.write_bytes(b"original content")
    WRITERS[fname](p, True)
    assert p.read_bytes() != b"original content"
    if fname.startswith("demand"):
        np.testing.assert_array_equal(io.read_demand(p).to_dense(), D3)
    else:
        assert io.read_schedule(p).same_as(_schedule_b())
    assert listing(tmp_path) == [fname]


def test_check_writable(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    assert io.check_writable(p) == p
    p.write_text("x")
    with pytest.raises(InvalidInputError, match=r"^`--out` file already exists"):
        io.check_writable(p, name="--out")
    assert io.check_writable(p, force=True) == p
    with pytest.raises(InvalidInputError, match=r"^`out` is a directory"):
        io.check_writable(tmp_path, force=True)


def test_write_atomic_failure_leaves_nothing(tmp_path: Path) -> None:
    def boom(f: IO[bytes]) -> None:
        f.write(b"half")
        raise RuntimeError("disk on fire")

    p = tmp_path / "out.bin"
    with pytest.raises(RuntimeError, match="disk on fire"):
        io.write_atomic(p, boom)
    assert listing(tmp_path) == []
    p.write_bytes(b"keep me")
    with pytest.raises(RuntimeError, match="disk on fire"):
        io.write_atomic(p, boom, force=True)
    assert p.read_bytes() == b"keep me"
    assert listing(tmp_path) == ["out.bin"]


def test_write_atomic_refuses_a_file_that_appears_meanwhile(tmp_path: Path) -> None:
    p = tmp_path / "race.txt"

    def racer(f: IO[bytes]) -> None:
        p.write_bytes(b"someone else")  # created after the first existence check
        f.write(b"mine")

    with pytest.raises(InvalidInputError, match="already exists"):
        io.write_atomic(p, racer)
    assert p.read_bytes() == b"someone else"
    assert listing(tmp_path) == ["race.txt"]


# ---------------------------------------------------------------------------------------------
# CSV as pandas writes it, port names, 1-based ids (issue 13)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (",a,b,c\na,0,2,1\nb,1,0,2\nc,2,1,0\n", ("a", "b", "c")),  # DataFrame.to_csv()
        (",0,1,2\n0,0,2,1\n1,1,0,2\n2,2,1,0\n", None),  # default integer labels: not names
        ("a,b,c\n0,2,1\n1,0,2\n2,1,0\n", ("a", "b", "c")),  # to_csv(index=False)
        ("0,1,2\n0,2,1\n1,0,2\n2,1,0\n", None),  # to_csv(index=False), integer columns
        ("a,0,2,1\nb,1,0,2\nc,2,1,0\n", ("a", "b", "c")),  # to_csv(header=False)
        ("port,a,b,c\na,0,2,1\nb,1,0,2\nc,2,1,0\n", ("a", "b", "c")),  # a named index
        ("0,2,1\n1,0,2\n2,1,0\n", None),  # plain
    ],
)
def test_read_csv_with_header_and_index(tmp_path: Path, text: str, names: tuple[str, ...] | None) -> None:
    p = tmp_path / "d.csv"
    p.write_text(text)
    dem, got = io.read_demand_named(p)
    assert dem.to_dense().tolist() == D3.tolist()
    assert got == names


def test_read_csv_from_pandas(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    p = tmp_path / "d.csv"
    pd.DataFrame(D3, index=["x", "y", "z"], columns=["x", "y", "z"]).to_csv(p)
    dem, names = io.read_demand_named(p)
    assert dem.to_dense().tolist() == D3.tolist() and names == ("x", "y", "z")
    pd.DataFrame({"src": [0, 1], "dst": [1, 0], "value": [2.5, 1.0]}).to_csv(p)  # long form + index
    assert io.read_demand(p).to_dense().tolist() == [[0.0, 2.5], [1.0, 0.0]]


def test_read_long_csv_with_port_names(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_text("src,dst,value\ngpu3,gpu1,2\ngpu1,gpu3,1\ngpu1,gpu3,0.5\n")
    dem, names = io.read_demand_named(p)
    assert names == ("gpu3", "gpu1")  # numbered in order of first appearance
    assert dem.to_dense().tolist() == [[0.0, 2.0], [1.5, 0.0]]


@pytest.mark.parametrize(
    "text",
    ["src,dst,value\n1,2,1\n2,1,1\n", ",1,2\n1,0,1\n2,1,0\n"],
)
def test_one_based_ports_warn(tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture) -> None:
    p = tmp_path / "d.csv"
    p.write_text(text)
    with caplog.at_level(logging.WARNING):
        io.read_demand(p)
    assert any("1" in r.getMessage() and "0" in r.getMessage() for r in caplog.records)
    assert any("based" in r.getMessage() or "1..2" in r.getMessage() for r in caplog.records)


def test_zero_based_ports_do_not_warn(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    p = tmp_path / "d.csv"
    p.write_text("src,dst,value\n0,1,1\n1,0,1\n")
    with caplog.at_level(logging.WARNING):
        io.read_demand(p)
    assert not caplog.records


# ---------------------------------------------------------------------------------------------
# Sizes are checked before allocating (issue 14)
# ---------------------------------------------------------------------------------------------


def _header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    import io as pyio

    buf = pyio.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def test_npy_header_claims_are_checked(tmp_path: Path) -> None:
    p = tmp_path / "big.npy"
    p.write_bytes(_header((100_000, 100_000)))
    with pytest.raises(InvalidInputError, match=r"shape \(100000, 100000\).*above the limit of 100000000"):
        io.read_demand(p)
    p.write_bytes(_header((4, 4)) + b"\0" * 16)  # 16 of 128 bytes
    with pytest.raises(InvalidInputError, match=r"claims shape \(4, 4\) of float64 but holds only 16 bytes"):
        io.read_demand(p)


def test_npz_members_are_checked_before_decompressing(tmp_path: Path) -> None:
    p = tmp_path / "bomb.npz"
    with zipfile.ZipFile(p, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("demand.npy", _header((50_000, 50_000)) + b"\0" * 1000)
    with pytest.raises(InvalidInputError, match=r"array 'demand' has shape \(50000, 50000\)"):
        io.read_demand(p)


def test_sparse_npz_limits(tmp_path: Path) -> None:
    p = tmp_path / "wide.npz"
    sp.save_npz(p, sp.csr_array(([1.0], ([0], [1])), shape=(io.MAX_PORTS + 1, io.MAX_PORTS + 1)))
    with pytest.raises(InvalidInputError, match=rf"above the limit of {io.MAX_PORTS} ports"):
        io.read_demand(p)
    sp.save_npz(p, sp.csr_array(([1.0], ([0], [1])), shape=(io.MAX_PORTS, io.MAX_PORTS)))
    assert io.read_demand(p).n == io.MAX_PORTS  # sparse: no n x n array


def test_long_csv_port_limit(tmp_path: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_text("src,dst,value\n0,100000000,1\n")
    with pytest.raises(InvalidInputError, match=r"line 2: ports must be integers in 0\.\.999999"):
        io.read_demand(p)


def test_deep_json_is_an_input_error(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(InvalidInputError, match="nested too deeply"):
        io.read_demand(p)
    with pytest.raises(InvalidInputError, match="nested too deeply"):
        io.read_schedule(p)


@pytest.mark.parametrize("dtype", ["timedelta64[s]", "datetime64[D]", "complex128"])
def test_non_real_arrays_are_refused(tmp_path: Path, dtype: str) -> None:
    p = tmp_path / "d.npy"
    np.save(p, np.zeros((2, 2), dtype=dtype))
    with pytest.raises(InvalidInputError, match=r"must hold real numbers; got dtype"):
        io.read_demand(p)


# ---------------------------------------------------------------------------------------------
# check_writable: before any work
# ---------------------------------------------------------------------------------------------


def test_check_writable_refuses_paths_that_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(
        InvalidInputError, match=r"`--out` cannot be created under .*afile, which is not a folder"
    ):
        io.check_writable(tmp_path / "afile" / "sub" / "s.json", name="--out")
    with pytest.raises(InvalidInputError, match=r"`--out` cannot be written: /proc/s\.json"):
        io.check_writable("/proc/s.json", name="--out")
    ok = tmp_path / "new" / "deeper" / "s.json"
    assert io.check_writable(ok) == ok
    assert not (tmp_path / "new").exists()  # the probe leaves nothing behind
    assert sorted(x.name for x in tmp_path.iterdir()) == ["afile"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_check_writable_read_only_folder(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(InvalidInputError, match=r"cannot be written.*Permission denied"):
            io.check_writable(ro / "s.json", name="--out")
    finally:
        ro.chmod(0o700)


def test_read_schedule_checked_reports_reused_inputs(tmp_path: Path) -> None:
    doc = {
        "format": "ocsched.schedule",
        "version": 1,
        "ports": 3,
        "delta": 0.5,
        "switches": [
            {"configurations": [{"start": 0.5, "duration": 1, "circuits": [[0, 1], [1, 2], [0, 2], [0, 1]]}]}
        ],
    }
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))
    sched, found = io.read_schedule_checked(p)
    assert sched.switches[0][0].circuits == [(0, 1), (1, 2)]
    assert found == ["switch 0 configuration 0: input port 0 used twice"] * 2
    with pytest.raises(InvalidInputError, match=r"input port 0 used twice"):
        io.read_schedule(p)
