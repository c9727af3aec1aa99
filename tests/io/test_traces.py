"""Trace import: Kineto, PyTorch execution traces and Chakra ETs become iterations, exactly or not at all."""

from __future__ import annotations

import gzip
import json
import logging
import shutil
import tarfile
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ocsched
from helpers import run
from ocsched.errors import InvalidInputError
from ocsched.io import read_trace
from ocsched.io.traces import ALGORITHMS, _stream, kineto, pytorch_et
from ocsched.io.traces import synthetic as S
from ocsched.io.traces._collectives import collective_traffic

DATA = Path(__file__).parents[1] / "data" / "traces"
FORMATS = ("kineto", "pytorch-et", "chakra")
ROWS = [[0, 2, 1, 0], [3, 0, 0, 1], [1, 1, 0, 2], [0, 0, 5, 0]]


def dense(it: ocsched.Iteration) -> list[np.ndarray]:
    return [p.demand.to_dense() for p in it.phases]


def matrix(triplets: list[tuple[int, int, Fraction]], n: int) -> np.ndarray:
    m = np.zeros((n, n))
    for s, d, b in triplets:
        m[s, d] += float(b)
    return m


# --------------------------------------------------------------------------------------------
# Round trips: known traffic -> trace -> the same traffic, in every format
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_every_format(tmp_path: Path, fmt: str) -> None:
    ops = [
        S.collective("all_reduce", 8192, ranks=[0, 1, 2, 3], gap_us=100),
        S.send(0, 3, 4096, gap_us=50),
        S.collective("all_gather", 1024, ranks=[0, 2], gap_us=20),
        S.collective("all_gather", 1024, ranks=[1, 3], parallel=True),
        S.collective("reduce_scatter", 4096, ranks=[0, 1, 2, 3], gap_us=5),
    ]
    if fmt != "chakra":  # Chakra's ALL_TO_ALL is uniform: per-peer splits are Kineto/ET only
        ops.insert(0, S.all_to_allv(ROWS, row_bytes=1024))
    S.write(tmp_path, ops, format=fmt)
    kw = {"comm_groups": tmp_path / "comm_groups.json"} if fmt == "chakra" else {}
    it = read_trace(tmp_path, link_rate=1.0, **kw)  # 1 byte/s, seconds: entries are bytes
    expected = []
    if fmt != "chakra":
        a2a = np.array(ROWS, dtype=float) * 1024
        np.fill_diagonal(a2a, 0)
        expected.append(a2a)
    expected.append(matrix(collective_traffic("all_reduce", 4, Fraction(8192), algorithm="ring"), 4))
    p2p = np.zeros((4, 4))
    p2p[0, 3] = 4096
    expected.append(p2p)
    ag = np.zeros((4, 4))
    ag[0, 2] = ag[2, 0] = ag[1, 3] = ag[3, 1] = 1024  # two concurrent 2-rank groups, merged
    expected.append(ag)
    expected.append(matrix(collective_traffic("reduce_scatter", 4, Fraction(4096), algorithm="ring"), 4))
    got = dense(it)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("fmt", ["kineto", "pytorch-et"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_all_to_allv_splits_round_trip(
    tmp_path_factory: pytest.TempPathFactory, fmt: str, data: st.DataObject
) -> None:
    g = data.draw(st.integers(2, 6))
    rows = data.draw(st.lists(st.lists(st.integers(0, 9), min_size=g, max_size=g), min_size=g, max_size=g))
    row_bytes = data.draw(st.sampled_from([2, 14, 7168]))
    folder = tmp_path_factory.mktemp("a2a")
    S.write(
        folder,
        [S.all_to_allv(rows, row_bytes=row_bytes), S.collective("all_reduce", 64, ranks=range(g))],
        format=fmt,
    )
    it = read_trace(folder, link_rate=1.0)
    want = np.array(rows, dtype=float) * row_bytes
    np.fill_diagonal(want, 0)
    m = it.phases[0].demand.to_dense() if want.any() else np.zeros((g, g))
    np.testing.assert_array_equal(m, want)
    # Row sums are what each rank's splits send to others; column sums what the others send it.
    np.testing.assert_array_equal(m.sum(axis=1), want.sum(axis=1))
    np.testing.assert_array_equal(m.sum(axis=0), want.sum(axis=0))


def test_p2p_pairs_in_order_and_both_directions(tmp_path: Path) -> None:
    ops = [S.send(0, 1, 100), S.send(1, 0, 300), S.send(0, 1, 200, gap_us=10)]
    S.write(tmp_path, ops, format="kineto")
    it = read_trace(tmp_path, link_rate=1.0, concurrent="separate")
    assert [m[0, 1] + m[1, 0] for m in dense(it)] == [100, 300, 200]
    merged = read_trace(tmp_path, link_rate=1.0)  # a rank's consecutive sends/recvs are unordered
    assert len(merged) == 1 and dense(merged)[0].tolist() == [[0, 300], [300, 0]]


# --------------------------------------------------------------------------------------------
# Collective formulas (each documented; checked by hand and by invariants)
# --------------------------------------------------------------------------------------------


def test_formulas_by_hand() -> None:
    f = Fraction
    assert matrix(collective_traffic("all_reduce", 4, f(8), algorithm="ring"), 4).tolist() == [
        [0, 12, 0, 0], [0, 0, 12, 0], [0, 0, 0, 12], [12, 0, 0, 0]
    ]  # fmt: skip
    assert matrix(collective_traffic("all_reduce", 4, f(8), algorithm="halving-doubling"), 4).tolist() == [
        [0, 4, 8, 0], [4, 0, 0, 8], [8, 0, 0, 4], [0, 8, 4, 0]
    ]  # fmt: skip
    assert matrix(collective_traffic("all_reduce", 3, f(6), algorithm="direct"), 3).tolist() == [
        [0, 4, 4], [4, 0, 4], [4, 4, 0]
    ]  # fmt: skip
    assert matrix(collective_traffic("all_reduce", 3, f(5), algorithm="tree"), 3).tolist() == [
        [0, 5, 5], [5, 0, 0], [5, 0, 0]
    ]  # fmt: skip
    assert matrix(collective_traffic("all_gather", 3, f(2), algorithm="tree"), 3).tolist() == [
        [0, 4, 4], [2, 0, 0], [2, 0, 0]
    ]  # fmt: skip
    assert matrix(collective_traffic("broadcast", 4, f(1), algorithm="ring", root=2), 4).tolist() == [
        [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]
    ]  # fmt: skip
    assert matrix(collective_traffic("broadcast", 5, f(1), algorithm="halving-doubling"), 5).tolist() == [
        [0, 1, 1, 0, 1], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]
    ]  # fmt: skip


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("g", [2, 4, 8])
def test_formula_invariants(algorithm: str, g: int) -> None:
    b = Fraction(8 * g)
    for root in range(g):
        bc = matrix(collective_traffic("broadcast", g, b, algorithm=algorithm, root=root), g)
        assert bc.sum(axis=0).tolist() == [
            0 if k == root else float(b) for k in range(g)
        ]  # every rank gets B once
        rd = matrix(collective_traffic("reduce", g, b, algorithm=algorithm, root=root), g)
        np.testing.assert_array_equal(rd, bc.T)
    ag = matrix(collective_traffic("all_gather", g, b, algorithm=algorithm), g)
    np.testing.assert_array_equal(ag.sum(axis=0), (g - 1) * float(b))  # each rank receives every other chunk
    ar = matrix(collective_traffic("all_reduce", g, b, algorithm=algorithm), g)
    assert (np.diag(ar) == 0).all()
    if algorithm != "tree":  # bandwidth-optimal algorithms: every rank sends 2(G-1)/G B
        np.testing.assert_array_equal(ar.sum(axis=1), float(2 * (g - 1) * b / g))
        rs = matrix(collective_traffic("reduce_scatter", g, b, algorithm=algorithm), g)
        np.testing.assert_array_equal(rs.sum(axis=1), float((g - 1) * b / g))


def test_halving_doubling_needs_a_power_of_two() -> None:
    with pytest.raises(InvalidInputError, match="power-of-two size; got 6 ranks"):
        collective_traffic("all_reduce", 6, Fraction(1), algorithm="halving-doubling")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_trace_under_each_algorithm(tmp_path: Path, algorithm: str) -> None:
    ops = [
        S.collective(k, 4096, ranks=range(4), root=1)
        for k in ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
    ]
    S.write(tmp_path, ops, format="kineto")
    it = read_trace(tmp_path, link_rate=1.0, collective_algorithm=algorithm, concurrent="separate")
    for m, op in zip(dense(it), ops, strict=True):
        want = matrix(collective_traffic(op.kind, 4, Fraction(4096), algorithm=algorithm, root=op.root), 4)
        np.testing.assert_array_equal(m, want)
    assert it.meta["trace"]["collective_algorithm"] == algorithm


def test_astra_sim_ring_custom_collective_equals_the_ring_formula() -> None:
    # ASTRA-sim's own ring all-reduce (MSCCL, 8 ranks, 1 MiB), as sends and receives.
    it = read_trace(DATA / "astra-sim" / "custom-ring-allreduce-8npus", link_rate=1.0)
    total = sum(dense(it))
    want = matrix(collective_traffic("all_reduce", 8, Fraction(1 << 20), algorithm="ring"), 8)
    np.testing.assert_array_equal(total, want)
    # ...and its all-reduce microbenchmark under the ring formula gives the same matrix.
    micro = read_trace(DATA / "astra-sim" / "all_reduce-4npus", link_rate=1.0)
    np.testing.assert_array_equal(
        dense(micro)[0], matrix(collective_traffic("all_reduce", 4, Fraction(1 << 20), algorithm="ring"), 4)
    )


@pytest.mark.parametrize(
    ("name", "row0"),
    [
        ("all_to_all", [0, 262144, 262144, 262144]),  # comm_size / G to each peer
        ("all_gather", [0, 3 << 20, 0, 0]),  # ring: (G-1) x the 1 MiB contribution
        ("reduce_scatter", [0, 786432, 0, 0]),  # ring: (G-1)/G x the 1 MiB buffer
    ],
)
def test_astra_sim_microbenchmarks(name: str, row0: list[int]) -> None:
    it = read_trace(DATA / "astra-sim" / f"{name}-4npus", link_rate=1.0)
    m = dense(it)[0]
    assert m[0].tolist() == row0
    assert it.meta["trace"]["matching"] == {"": "order"}


# --------------------------------------------------------------------------------------------
# Public fixtures from real runs
# --------------------------------------------------------------------------------------------


def test_hta_nccl_trace_reads_and_needs_its_second_rank() -> None:
    path = DATA / "hta-nccl" / "nccl_data.rank-0.comms.json.gz"
    t = kineto.read_rank(path)
    assert (t.rank, t.world_size, t.timing) == (0, 2, "kernel")
    assert [op.kind for op in t.ops].count("all_reduce") == 15 and [op.kind for op in t.ops].count(
        "broadcast"
    ) == 6
    assert t.ops[0].in_bytes == 53120 * 4  # Float broadcast of 53120 elements
    assert t.groups["0"].ranks == (0, 1)
    with pytest.raises(InvalidInputError, match=r"includes rank 1, which has no trace file"):
        read_trace(path, link_rate=1.0)


def test_chakra_pytorch_et_fixture_reads_and_needs_its_second_rank() -> None:
    path = DATA / "chakra-et-1.0.2" / "1.0.2-chakra.0.0.4.json.gz"
    t = pytorch_et.read_rank(path)
    assert t.rank == 0 and t.groups["0"].ranks == (0, 1)  # rank from the world group; ranks [] = world
    assert [(op.kind, op.seq, op.in_bytes, op.out_bytes) for op in t.ops][:2] == [
        ("all_gather", 12, 4, 8),
        ("all_gather", 13, 4, 8),
    ]
    with pytest.raises(InvalidInputError, match="includes rank 1, which has no trace file"):
        read_trace(path, link_rate=1.0)


# --------------------------------------------------------------------------------------------
# Refusals: one line naming the file, rank and sequence number
# --------------------------------------------------------------------------------------------


def test_missing_seq_matches_by_order_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ops = [
        S.collective("all_reduce", 64, ranks=range(3)),
        S.all_to_allv([[0, 1, 2], [1, 0, 1], [2, 2, 0]], row_bytes=2),
    ]
    S.write(tmp_path / "a", ops, format="kineto")
    S.write(tmp_path / "b", ops, format="kineto", seq=False)
    with caplog.at_level(logging.WARNING, logger="ocsched.io.traces"):
        it = read_trace(tmp_path / "b", link_rate=1.0)
    assert "no sequence numbers" in caplog.text
    assert it.meta["trace"]["matching"] == {"0": "order"}
    for x, y in zip(dense(it), dense(read_trace(tmp_path / "a", link_rate=1.0)), strict=True):
        np.testing.assert_array_equal(x, y)


def test_seq_on_some_ranks_only(tmp_path: Path) -> None:
    ops = [S.collective("all_reduce", 64, ranks=range(4)), S.collective("all_reduce", 64, ranks=range(4))]
    S.write(tmp_path / "t", ops, format="kineto")
    S.write(tmp_path / "short", ops[:1], format="kineto", world=4)
    shutil.copy(tmp_path / "short" / "rank-3.json", tmp_path / "t" / "rank-3.json")
    with pytest.raises(
        InvalidInputError,
        match=r"seq 2 of process group '0' .*rank-0.json: event 2 .*\(rank 0\) but not in "
        r".*rank-3.json \(rank 3\)",
    ):
        read_trace(tmp_path / "t", link_rate=1.0)


def test_split_mismatch_names_files_and_seq(tmp_path: Path) -> None:
    S.write(tmp_path, [S.all_to_allv([[0, 1], [2, 0]], row_bytes=4)], format="kineto")
    p = tmp_path / "rank-1.json"
    p.write_text(p.read_text().replace('"Out split size": "[1, 0]"', '"Out split size": "[0, 1]"'))
    with pytest.raises(
        InvalidInputError, match=r"all_to_allv \(seq 1\).* rank 0 sends 4 bytes to rank 1 .*rank 1 receives 0"
    ):
        read_trace(tmp_path, link_rate=1.0)


def test_abbreviated_lists_are_refused_with_how_to_fix(tmp_path: Path) -> None:
    g = 31  # the profiler writes at most 30 entries
    rows = [[(i + j) % 3 for j in range(g)] for i in range(g)]
    S.write(tmp_path, [S.all_to_allv(rows, row_bytes=2)], format="kineto", abbreviate=True)
    with pytest.raises(InvalidInputError, match=r"'In split size' is abbreviated .*ExecutionTraceObserver"):
        read_trace(tmp_path, link_rate=1.0)


def test_abbreviated_group_ranks_are_rebuilt_from_the_files_and_checked(tmp_path: Path) -> None:
    g = 32
    S.write(tmp_path, [S.collective("all_reduce", 32 * 4, ranks=range(g))], format="kineto", abbreviate=True)
    it = read_trace(tmp_path, link_rate=1.0)  # every file says its rank and its group rank: exact
    assert dense(it)[0][g - 1, 0] == pytest.approx(2 * 31 / 32 * 128)


def test_missing_rank_file(tmp_path: Path) -> None:
    S.write(tmp_path, [S.collective("all_reduce", 64, ranks=range(4))], format="kineto", drop_rank=2)
    with pytest.raises(InvalidInputError, match=r"includes rank 2, which has no trace file"):
        read_trace(tmp_path, link_rate=1.0)


def test_send_without_its_receive(tmp_path: Path) -> None:
    S.write(tmp_path, [S.send(0, 1, 10), S.collective("all_reduce", 8, ranks=[0, 1])], format="kineto")
    p = tmp_path / "rank-1.json"
    data = json.loads(p.read_text())
    data["traceEvents"] = [e for e in data["traceEvents"] if e["args"].get("Collective name") != "recv"]
    p.write_text(json.dumps(data))
    with pytest.raises(
        InvalidInputError,
        match=r"rank-0.json: event .*send between rank 0 and rank 1 has no matching receive",
    ):
        read_trace(tmp_path, link_rate=1.0)


def test_file_of_another_format(tmp_path: Path) -> None:
    S.write(tmp_path / "k", [S.collective("all_reduce", 64, ranks=range(2))], format="kineto")
    S.write(tmp_path / "e", [S.collective("all_reduce", 64, ranks=range(2))], format="pytorch-et")
    shutil.copy(tmp_path / "e" / "et-rank-1.json", tmp_path / "k" / "rank-9.json")
    with pytest.raises(InvalidInputError, match="mixes formats"):
        read_trace(tmp_path / "k", link_rate=1.0)
    with pytest.raises(
        InvalidInputError, match=r"et-rank-0.json is not a kineto trace \(it is a pytorch-et trace\)"
    ):
        read_trace(tmp_path / "e", link_rate=1.0, format="kineto")
    (tmp_path / "x.json").write_text('{"traceEvents": [{"ph": "X"')
    with pytest.raises(InvalidInputError, match=r"x.json: malformed JSON at character"):
        read_trace(tmp_path / "x.json", link_rate=1.0)


def test_bad_options() -> None:
    with pytest.raises(InvalidInputError, match="`collective_algorithm` must be one of ring"):
        read_trace(DATA / "astra-sim" / "all_reduce-4npus", link_rate=1.0, collective_algorithm="bogus")
    with pytest.raises(InvalidInputError, match="`link_rate` must be"):
        read_trace(DATA / "astra-sim" / "all_reduce-4npus", link_rate="fast")
    with pytest.raises(InvalidInputError, match="`skip` must be one of"):
        read_trace(DATA / "astra-sim" / "all_reduce-4npus", link_rate=1.0, skip=["alltoall"])
    with pytest.raises(InvalidInputError, match="not found"):
        read_trace("nowhere", link_rate=1.0)


def test_is_trace_tells_traces_from_iterations(tmp_path: Path) -> None:
    from ocsched.io.traces import is_trace

    S.write(
        tmp_path / "c",
        [S.collective("all_reduce", 64, ranks=[0, 1]), S.collective("all_reduce", 64, ranks=[1, 2])],
        format="chakra",
    )
    assert (tmp_path / "c" / "comm_groups.json").exists() and is_trace(tmp_path / "c")
    (tmp_path / "m").mkdir()
    np.save(tmp_path / "m" / "p0.npy", np.eye(2))
    assert not is_trace(tmp_path / "m") and not is_trace(tmp_path / "m" / "p0.npy")
    assert is_trace(DATA / "hta-nccl" / "nccl_data.rank-0.comms.json.gz")


def test_chakra_broadcast_names_no_root(tmp_path: Path) -> None:
    S.write(
        tmp_path,
        [S.collective("broadcast", 64, ranks=range(2)), S.collective("all_reduce", 64, ranks=range(2))],
        format="chakra",
    )
    with pytest.raises(
        InvalidInputError, match=r"trace.0.et: node 0: BROADCAST names no root.*--skip broadcast"
    ):
        read_trace(tmp_path, link_rate=1.0)
    it = read_trace(tmp_path, link_rate=1.0, skip=["broadcast"])
    assert len(it) == 1 and it.meta["trace"]["skipped"] == {"broadcast": 2}


# --------------------------------------------------------------------------------------------
# Gaps, concurrency, ports, provenance, inputs
# --------------------------------------------------------------------------------------------


def test_gaps_from_timestamps_comp_or_none(tmp_path: Path) -> None:
    ops = [
        S.collective("all_reduce", 64, ranks=range(2)),
        S.collective("all_reduce", 64, ranks=range(2), gap_us=250),
        S.send(0, 1, 8, gap_us=40),
    ]
    for fmt in ("kineto", "chakra"):
        S.write(tmp_path / fmt, ops, format=fmt)
        it = read_trace(tmp_path / fmt, link_rate=1.0, time_unit="us", concurrent="separate")
        assert it.gaps == (0.0, 250.0, 40.0)
        assert it.meta["trace"]["gaps"] == ("timestamps" if fmt == "kineto" else "comp")
        assert read_trace(tmp_path / fmt, link_rate=1.0, gaps="none").gaps == (0.0,) * len(it)
    with pytest.raises(InvalidInputError, match="carry no timestamps"):
        read_trace(tmp_path / "chakra", link_rate=1.0, gaps="timestamps")


def test_concurrent_groups_merge_or_stay_apart(tmp_path: Path) -> None:
    ops = [S.collective("all_reduce", 64, ranks=[2 * k, 2 * k + 1], parallel=k > 0) for k in range(4)]
    ops += [S.collective("all_reduce", 64, ranks=range(8), gap_us=10)]
    S.write(tmp_path, ops, format="kineto")
    assert len(read_trace(tmp_path, link_rate=1.0)) == 2
    assert len(read_trace(tmp_path, link_rate=1.0, concurrent="separate")) == 5
    # Not concurrent in time: no merge even on disjoint ranks.
    seq_ops = [S.collective("all_reduce", 64, ranks=[2 * k, 2 * k + 1], gap_us=5) for k in range(4)]
    S.write(tmp_path / "seq", seq_ops, format="kineto")
    assert len(read_trace(tmp_path / "seq", link_rate=1.0)) == 4


def test_ranks_to_ports(tmp_path: Path) -> None:
    rows = [[0, 1, 2, 3], [4, 0, 5, 6], [7, 8, 0, 9], [1, 2, 3, 0]]
    S.write(tmp_path / "t", [S.all_to_allv(rows, row_bytes=2)], format="kineto")
    it = read_trace(tmp_path / "t", link_rate=1.0, ranks_per_port=2)
    r = np.array(rows, dtype=float) * 2
    assert it.n == 2
    assert dense(it)[0].tolist() == [[0, r[0:2, 2:4].sum()], [r[2:4, 0:2].sum(), 0]]
    assert it.meta["trace"]["phases"][0]["local_bytes"] == r[0:2, 0:2].sum() + r[2:4, 2:4].sum()
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"0": 1, "1": 0, "2": 1, "3": 0}))
    m = dense(read_trace(tmp_path / "t", link_rate=1.0, port_map=mapping))[0]
    assert m.tolist() == [[0, r[[1, 3]][:, [0, 2]].sum()], [r[[0, 2]][:, [1, 3]].sum(), 0]]
    (tmp_path / "map.csv").write_text("rank,port\n0,0\n1,0\n2,1\n")
    with pytest.raises(InvalidInputError, match="`port_map` gives no port for rank 3"):
        read_trace(tmp_path / "t", link_rate=1.0, port_map=tmp_path / "map.csv")


def test_link_rate_and_units() -> None:
    it = read_trace(DATA / "astra-sim" / "all_to_all-4npus", link_rate="400Gbps", time_unit="us")
    # 262144 bytes at 50 GB/s = 5.24288 us
    assert dense(it)[0][0, 1] == pytest.approx(262144 / 50e9 * 1e6, rel=1e-15)


def test_provenance_in_meta_and_files(tmp_path: Path) -> None:
    S.write(
        tmp_path / "t",
        [S.all_to_allv(ROWS, row_bytes=2), S.collective("all_reduce", 64, ranks=range(4))],
        format="kineto",
    )
    it = read_trace(tmp_path / "t", link_rate="1GB/s")
    meta = it.meta["trace"]
    assert meta["format"] == "kineto" and sorted(meta["files"].values()) == [0, 1, 2, 3]
    assert [op["collective"] for ph in meta["phases"] for op in ph["ops"]] == ["all_to_allv", "allreduce"]
    assert [op["seq"] for ph in meta["phases"] for op in ph["ops"]] == [1, 2]
    ocsched.io.write_iteration(it, tmp_path / "it.json")
    back = ocsched.io.read_iteration(tmp_path / "it.json")
    assert back.names == it.names
    assert json.loads((tmp_path / "it.json").read_text())["meta"]["trace"]["format"] == "kineto"


def test_gzip_archives_globs_and_parallel_workers(tmp_path: Path) -> None:
    ops = [S.all_to_allv(ROWS, row_bytes=6), S.send(2, 1, 30), S.collective("all_gather", 8, ranks=range(4))]
    S.write(tmp_path / "gz", ops, format="kineto", gzip_files=True)
    S.write(tmp_path / "plain", ops, format="pytorch-et")
    want = dense(read_trace(tmp_path / "gz", link_rate=1.0))
    with tarfile.open(tmp_path / "t.tar.gz", "w:gz") as t:
        for f in sorted((tmp_path / "gz").iterdir()):
            t.add(f, arcname=f"run/{f.name}")
    with zipfile.ZipFile(tmp_path / "t.zip", "w") as z:
        for f in sorted((tmp_path / "plain").iterdir()):
            z.write(f, f.name)
    for source in (tmp_path / "t.tar.gz", tmp_path / "t.zip", str(tmp_path / "gz" / "rank-*.json.gz")):
        got = dense(read_trace(source, link_rate=1.0))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
    par = read_trace(tmp_path / "gz", link_rate=1.0, workers=2)
    assert par.to_json() == read_trace(tmp_path / "gz", link_rate=1.0, workers=1).to_json()


def test_unsafe_archive_member(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as z:
        z.writestr("../evil.json", "{}")
    with pytest.raises(InvalidInputError, match="unsafe member path"):
        read_trace(tmp_path / "bad.zip", link_rate=1.0)


# --------------------------------------------------------------------------------------------
# Streaming JSON
# --------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    doc=st.dictionaries(
        st.text(max_size=5),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
            lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c, max_size=4),
            max_leaves=12,
        ),
        max_size=4,
    ),
    items=st.lists(
        st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=6), max_size=3), max_size=8
    ),
    chunk=st.integers(1, 9),
    whole=st.sampled_from([0, 7, _stream.WHOLE_BYTES]),
)
def test_scan_json_equals_json_load_at_any_chunk(
    doc: dict[str, object], items: list[object], chunk: int, whole: int
) -> None:
    """Streamed (``whole`` 0: the first byte read ahead, then chained to the rest; 7: a few bytes)
    or decoded in one call (small files), the items and the other keys are json.load's."""
    import io as _io

    doc = {k: v for k, v in doc.items() if k != "xs"}
    text = json.dumps({**doc, "xs": items}, indent=1).encode()
    seen: list[object] = []
    old = _stream.CHUNK, _stream.WHOLE_BYTES
    _stream.CHUNK, _stream.WHOLE_BYTES = chunk, whole
    try:
        other, found = _stream.scan_json(_io.BytesIO(text), "xs", seen.append, "t.json")
    finally:
        _stream.CHUNK, _stream.WHOLE_BYTES = old
    assert found and seen == items and other == doc


@pytest.mark.parametrize(
    "text",
    [
        b'{"xs": [1, 2], "a": 1, "xs": [3]}',  # the key twice: both arrays, as streamed
        b'{"xs": 5, "a": [1]}',  # not an array: a value like the others
        b'{"xs": []}',
        b'{"a": 1}',
    ],
)
def test_whole_file_decoding_reads_what_streaming_reads(text: bytes) -> None:
    import io as _io

    got = []
    for whole in (0, _stream.WHOLE_BYTES):
        seen: list[object] = []
        old = _stream.WHOLE_BYTES
        _stream.WHOLE_BYTES = whole
        try:
            got.append((_stream.scan_json(_io.BytesIO(text), "xs", seen.append, "t.json"), seen))
        finally:
            _stream.WHOLE_BYTES = old
    assert got[0] == got[1]


@pytest.mark.parametrize("text", [b'{"xs": [1, 2]', b'{"xs": [1]} x', b"\xff\xfe", b"[1, 2]"])
def test_whole_file_decoding_leaves_errors_to_the_streaming_reader(text: bytes) -> None:
    import io as _io

    messages = []
    for whole in (0, _stream.WHOLE_BYTES):
        old = _stream.WHOLE_BYTES
        _stream.WHOLE_BYTES = whole
        try:
            with pytest.raises(InvalidInputError) as info:
                _stream.scan_json(_io.BytesIO(text), "xs", lambda _: None, "t.json")
        finally:
            _stream.WHOLE_BYTES = old
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "t.json" in messages[0]


def test_gzip_member_with_wrong_suffix_is_still_read(tmp_path: Path) -> None:
    S.write(tmp_path, [S.collective("all_reduce", 64, ranks=range(2))], format="kineto")
    p = tmp_path / "rank-0.json"
    p.write_bytes(gzip.compress(p.read_bytes()))  # gzip detected by its magic bytes
    assert len(read_trace(tmp_path, link_rate=1.0)) == 1


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------


def test_cli_import_then_schedule(tmp_path: Path) -> None:
    S.write(
        tmp_path / "t",
        [S.all_to_allv(ROWS, row_bytes=7168), S.collective("all_reduce", 1 << 20, ranks=range(4), gap_us=50)],
        format="kineto",
    )
    out = tmp_path / "it.json"
    res = run("import", tmp_path / "t", "--link-rate", "400Gbps", "--unit", "us", "--out", out)
    assert res.exit_code == 0, res.output
    assert "phases      2 (merge)" in res.stdout and "matched by  seq" in res.stdout
    res = run("schedule", out, "-s", "2", "-d", "10", "-o", tmp_path / "s.json")
    assert res.exit_code == 0, res.output
    meta = json.loads((tmp_path / "s.json").read_text())["meta"]
    assert meta["trace"]["format"] == "kineto"
    res = run(
        "schedule",
        tmp_path / "t",
        "--link-rate",
        "400Gbps",
        "-T",
        "unit=us",
        "-T",
        "collective-algorithm=tree",
        "-s",
        "2",
        "-d",
        "10",
    )
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["import", "{t}"], "`--link-rate` is needed"),
        (["import", "{t}", "--link-rate", "1Gbps", "--format", "chakra"], "is not a chakra trace"),
        (["import", "{t}", "--link-rate", "1Gbps", "--ranks-per-port", "0"], "--ranks-per-port"),
        (
            ["schedule", "{t}", "--link-rate", "1Gbps", "-T", "bogus=1", "-s", "1", "-d", "1"],
            "`--trace-option` must be NAME=VALUE",
        ),
        (
            ["schedule", "{npy}", "-T", "unit=us", "-s", "1", "-d", "1"],
            "to trace inputs only",
        ),  # --link-rate: bytes
    ],
)
def test_cli_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    S.write(tmp_path / "t", [S.collective("all_reduce", 64, ranks=range(2))], format="kineto")
    np.save(tmp_path / "d.npy", np.array([[0.0, 1.0], [1.0, 0.0]]))
    res = run(*[a.format(t=tmp_path / "t", npy=tmp_path / "d.npy") for a in args])
    assert res.exit_code == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
