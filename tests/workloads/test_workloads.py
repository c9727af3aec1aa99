"""Tests of the workload generators (ocsched.workloads) and their CLI commands."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ocsched
from ocsched import io
from ocsched.cli import app
from ocsched.errors import InvalidInputError
from ocsched.io import read_coflow_trace as read_trace
from ocsched.workloads import ITERATION_WORKLOADS, WORKLOADS, block_diagonal, generate, normalize, workloads
from ocsched.workloads.coflow import coflow, coflow_matrix, packaged_trace
from ocsched.workloads.gpt import PRESETS as GPT_PRESETS
from ocsched.workloads.gpt import gpt, gpt32, gpt32_block
from ocsched.workloads.moe import (
    MOE8,
    calibrate,
    dirichlet_expected_gini,
    gini,
    moe,
    moe8,
    zipf_gini,
)
from ocsched.workloads.standard import standard

DATA = Path(__file__).parents[1] / "data" / "workloads"
SMALL_TRACE = DATA / "coflow_small.txt"
SHARED_TRACE = Path(__file__).parents[2] / ".." / "shared" / "FB2010-1Hr-150-0.txt"


def line_sums(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    off = d - np.diag(np.diag(d))
    return off.sum(axis=1), off.sum(axis=0)


def max_line_sum(d: np.ndarray) -> float:
    r, c = line_sums(d)
    return float(max(r.max(), c.max()))


def max_nnz(d: np.ndarray) -> int:
    off = (d > 0) & ~np.eye(len(d), dtype=bool)
    return int(max(off.sum(axis=1).max(), off.sum(axis=0).max()))


# ---------------------------------------------------------------- registry and generate()


def test_registry_lists_every_family() -> None:
    assert set(workloads()) >= {"standard", "gpt", "gpt32", "moe", "moe8", "coflow"}
    assert {k: WORKLOADS[k].unit for k in ("gpt", "gpt32", "moe", "moe8", "coflow")} == {
        "gpt": "bytes",
        "gpt32": "time",
        "moe": "bytes",
        "moe8": "time",
        "coflow": "bytes",
    }
    assert WORKLOADS["gpt32"].defaults() == {"copies": 1}
    assert WORKLOADS["moe8"].defaults() == {"copies": 1}


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("standard", {"n": 30}),
        ("gpt", {"preset": "gpt3-125m"}),
        ("gpt32", {}),
        ("moe", {}),
        ("moe8", {}),
        ("coflow", {"id": 2}),
    ],
)
def test_every_workload_normalises_to_line_sum_one(name: str, options: dict[str, object]) -> None:
    d = generate(name, rng=1, normalize=True, **options)
    assert d.shape[0] == d.shape[1]
    assert (d >= 0).all()
    assert math.isclose(max(d.sum(axis=0).max(), d.sum(axis=1).max()), 1.0, rel_tol=1e-12)


@pytest.mark.parametrize(("name", "options"), [("standard", {"n": 40}), ("moe", {"gpus": 16})])
def test_random_workloads_are_determined_by_the_seed(name: str, options: dict[str, object]) -> None:
    a = generate(name, rng=7, **options)
    b = generate(name, rng=7, **options)
    c = generate(name, rng=8, **options)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(("name", "options"), [("gpt", {}), ("moe", {}), ("coflow", {"rank": 3})])
def test_link_gbps_converts_bytes_to_seconds(name: str, options: dict[str, object]) -> None:
    raw = generate(name, rng=3, **options)
    secs = generate(name, rng=3, link_gbps=400, **options)
    np.testing.assert_allclose(secs, raw * 8 / (400 * 1e9), rtol=1e-15)


def test_link_gbps_leaves_time_workloads_alone() -> None:
    assert np.array_equal(generate("moe8", link_gbps=100), moe8())
    assert np.array_equal(generate("gpt32", link_gbps=100, normalize=True), normalize(gpt32()))


def test_block_diagonal_places_copies() -> None:
    blk = np.arange(9.0).reshape(3, 3)
    out = block_diagonal(blk, 3)
    assert out.shape == (9, 9)
    for a in range(3):
        for b in range(3):
            expected = blk if a == b else np.zeros((3, 3))
            assert np.array_equal(out[3 * a : 3 * a + 3, 3 * b : 3 * b + 3], expected)


# ---------------------------------------------------------------- standard (lead's generator)


def test_standard_has_at_most_16_nonzeros_per_line() -> None:
    d = generate("standard", rng=0)
    assert d.shape == (100, 100)
    assert max_nnz(d) <= 16
    assert math.isclose(max_line_sum(d), 1.0, rel_tol=1e-9)


# ---------------------------------------------------------------- gpt32 and moe8 (the paper's instances)


def test_gpt32_entries_follow_the_paper_rules() -> None:
    d = gpt32_block()
    for i in range(32):
        for j in range(32):
            expected = 0.0
            if i != j:
                expected += (i // 2 == j // 2) * 680 * 125 / 1024
                expected += (abs(i - j) == 8) * 16 * 125 / 1024
                expected += (j == (i + 2 if i % 8 < 6 else i - 6)) * 741 / 1024
                expected += (abs(i - j) == 24) * 96 / 1024
            assert d[i, j] == pytest.approx(expected, abs=1e-15), (i, j)
    assert max_nnz(d) == 4
    # Every GPU has its TP partner, a DP ring neighbour and 1 (end stage) or 2 PP neighbours.
    assert ((d > 0).sum(axis=1) == 4).all()


def test_moe8_is_the_paper_matrix() -> None:
    d = moe8()
    assert np.array_equal(d, np.array(MOE8))
    assert np.array_equal(np.diag(d), np.zeros(8))
    assert ((d > 0).sum(axis=1) == 7).all() and ((d > 0).sum(axis=0) == 7).all()
    assert d[7, 0] == 4.15 and d[3, 4] == 4.16


@pytest.mark.parametrize(
    ("func", "size", "copies"), [(gpt32, 32, 2), (gpt32, 32, 4), (moe8, 8, 8), (moe8, 8, 16)]
)
def test_copies_are_blocks_on_the_diagonal(func: Callable[..., np.ndarray], size: int, copies: int) -> None:
    one = func()
    d = func(copies=copies)
    assert d.shape == (size * copies, size * copies)
    mask = np.kron(np.eye(copies, dtype=bool), np.ones((size, size), dtype=bool))
    assert not d[~mask].any()
    for c in range(copies):
        sl = slice(c * size, (c + 1) * size)
        assert np.array_equal(d[sl, sl], one)
    assert max_nnz(d) == max_nnz(one)


def test_paper_instances_schedule_validly() -> None:
    for name, s in (("gpt32", 16), ("moe8", 4)):
        d = generate(name, normalize=True)
        sched = ocsched.schedule(d, switches=s, delta=0.04)
        assert ocsched.validate(sched, d).ok
        assert (
            sched.makespan
            >= ocsched.lower_bound(ocsched.Demand.from_matrix(d), switches=s, delta=0.04) - 1e-12
        )


# ---------------------------------------------------------------- gpt (Megatron-style volumes)


def test_gpt_volumes_match_the_formulas_on_a_small_model() -> None:
    h, n_layers, s, v, b, m, e = 64, 4, 16, 100, 2, 3, 2
    t, p, dp = 2, 2, 3
    d = gpt(tp=t, pp=p, dp=dp, hidden=h, layers=n_layers, seq_len=s, vocab=v, micro_batch=b,
            micro_batches=m, param_bytes=e)  # fmt: skip
    assert d.shape == (12, 12)
    act = b * s * h * e

    def g(k: int, r: int, q: int) -> int:
        return k * dp * t + r * t + q

    tp = 8 * (n_layers / p) * m * (t - 1) / t * act
    layer_params = (n_layers / p) * (12 * h * h + 13 * h) / t
    p0 = layer_params + v * h / t + s * h
    p1 = layer_params + v * h / t + 2 * h
    emb = v * h * e / t
    expected = np.zeros((12, 12))
    for r in range(dp):
        for q in range(t):
            for k, params in ((0, p0), (1, p1)):
                expected[g(k, r, q), g(k, r, 1 - q)] += tp
                expected[g(k, r, q), g(k, (r + 1) % dp, q)] += 2 * (dp - 1) / dp * params * e
            expected[g(0, r, q), g(1, r, q)] += m * act + emb
            expected[g(1, r, q), g(0, r, q)] += m * act + emb
    np.testing.assert_allclose(d, expected, rtol=1e-12)


def test_gpt_layout_matches_gpt32_support() -> None:
    # Same parallel layout as the paper's GPT32: the supports coincide.
    d = gpt(tp=2, pp=4, dp=4)
    assert np.array_equal(d > 0, gpt32_block() > 0)


def test_gpt_without_parallelism_has_no_traffic() -> None:
    assert gpt(tp=1, pp=1, dp=1).tolist() == [[0.0]]
    d = gpt(tp=1, pp=1, dp=4, preset="gpt3-125m")  # pure DP: a ring
    assert max_nnz(d) == 1 and ((d > 0).sum(axis=1) == 1).all()


def test_gpt_explicit_options_override_the_preset() -> None:
    assert gpt(preset="gpt3-175b", pp=4).shape == (32, 32)
    base = gpt(preset="gpt3-6.7b")
    same = gpt(preset="gpt3-1.3b", hidden=GPT_PRESETS["gpt3-6.7b"]["hidden"], layers=32)
    np.testing.assert_array_equal(base, same)
    assert not np.array_equal(gpt(preset="gpt3-6.7b", hidden=1024), base)


def test_gpt_volumes_grow_with_the_model() -> None:
    sizes = [gpt(preset=name, pp=4).sum() for name in ("gpt3-125m", "gpt3-1.3b", "gpt3-6.7b", "gpt3-175b")]
    assert sizes == sorted(sizes)


# ---------------------------------------------------------------- moe


def test_moe_has_zero_diagonal_and_conserves_tokens() -> None:
    # Uniform popularity over 64 experts on 8 GPUs: 1/8 of the slots stay local on average.
    d = moe(gpus=8, popularity="uniform", tokens=4096, rng=0)
    assert np.array_equal(np.diag(d), np.zeros(8))
    slots = d / (2048 * 2)
    assert np.array_equal(slots, np.round(slots))  # whole tokens times bytes per token
    assert (slots.sum(axis=1) <= 4096 * 8).all()
    # Binomial(32768, 7/8) per row: sd ~ 60 tokens; 1% is > 5 sd.
    np.testing.assert_allclose(slots.sum(axis=1), 4096 * 8 * 7 / 8, rtol=0.01)


def test_moe_combine_adds_the_transpose() -> None:
    a = moe(gpus=4, rng=5)
    b = moe(gpus=4, rng=5, combine=True)
    np.testing.assert_array_equal(b, a + a.T)


def test_moe_presets_and_overrides() -> None:
    d = moe(preset="qwen1.5-moe-a2.7b", gpus=8, popularity="uniform", rng=1)  # 60 experts: blocks of 7 or 8
    assert d.shape == (8, 8)
    slots = d.sum() / (2048 * 2)
    assert slots < 8 * 4096 * 4  # top-4
    big = moe(preset="qwen3-30b-a3b", gpus=16, rng=1)
    assert big.shape == (16, 16) and max_nnz(big) == 15
    h = moe(gpus=8, hidden=1000, bytes_per_element=1, popularity="uniform", rng=1)
    assert np.array_equal(h / 1000, np.round(h / 1000))


def test_moe_skew_raises_the_imbalance() -> None:
    flat = moe(gpus=64, experts=64, shared_popularity=True, gini=0.1, rng=2)
    skew = moe(gpus=64, experts=64, shared_popularity=True, gini=0.4, rng=2)
    assert gini(skew.sum(axis=0)) > gini(flat.sum(axis=0))


@pytest.mark.parametrize("target", [0.1, 0.25, 0.4])
def test_moe_realised_expert_load_hits_the_gini_target(target: float) -> None:
    # One expert per GPU and one shared Zipf popularity: column j / (h e) counts the slots of the
    # 63 other sources routed to expert j, ~ 63 * T * k * p_j (over 10^4 each at these sizes), so the
    # multinomial noise moves each load by < 1% and the Gini by well under 0.01.
    d = moe(gpus=64, experts=64, shared_popularity=True, gini=target, tokens=4096, rng=3)
    assert gini(d.sum(axis=0)) == pytest.approx(target, abs=0.01)


# ---------------------------------------------------------------- Gini calibration


def test_gini_definition() -> None:
    assert gini([2, 2, 2]) == 0.0
    assert gini([0, 0, 0, 0, 5]) == pytest.approx(0.8)
    assert gini([1, 3]) == pytest.approx(0.25)  # |1-3| * 2 / (2 * 4 * 2)
    assert gini([0, 0]) == 0.0


@pytest.mark.parametrize("experts", [8, 64, 128])
@pytest.mark.parametrize("target", [0.0, 0.1, 0.25, 0.4, 0.7])
def test_zipf_calibration_is_exact(experts: int, target: float) -> None:
    a = calibrate(target, experts=experts, popularity="zipf")
    # Zipf's Gini is a deterministic, continuous function of a: bisection reaches float resolution.
    assert zipf_gini(a, experts) == pytest.approx(target, abs=1e-9)


def test_dirichlet_expected_gini_closed_form_small_cases() -> None:
    # E = 2, alpha = 1: p_1 ~ U(0, 1), G = |p_1 - p_2| / 2 = |2U - 1| / 2, mean 1/4.
    assert dirichlet_expected_gini(1.0, 2) == pytest.approx(0.25, rel=1e-12)
    # alpha -> 0 concentrates on one expert: (E - 1) / E; large alpha flattens: -> 0.
    assert dirichlet_expected_gini(1e-8, 16) == pytest.approx(15 / 16, rel=1e-6)
    assert dirichlet_expected_gini(1e6, 16) < 1e-3
    values = [dirichlet_expected_gini(a, 64) for a in np.geomspace(1e-3, 1e3, 50)]
    assert all(x > y for x, y in itertools.pairwise(values))


@pytest.mark.parametrize("experts", [8, 64])
@pytest.mark.parametrize("target", [0.1, 0.25, 0.4])
def test_dirichlet_calibration_hits_the_target_in_expectation(experts: int, target: float) -> None:
    alpha = calibrate(target, experts=experts, popularity="dirichlet")
    assert dirichlet_expected_gini(alpha, experts) == pytest.approx(target, abs=1e-9)
    # Monte Carlo check of the closed form: the mean of N sampled Ginis lies within 4 standard
    # errors of the target (a two-sided 4-sigma band: false alarm ~6e-5 for a correct formula; the
    # seed is fixed, so the test is deterministic). N = 20000 gives SE ~ 5e-4 here.
    gen = np.random.default_rng(11)
    p = gen.dirichlet(np.full(experts, alpha), size=20000)
    ginis = np.array([gini(row) for row in p])
    se = ginis.std(ddof=1) / math.sqrt(len(ginis))
    assert abs(ginis.mean() - target) < 4 * se


def test_moe_dirichlet_uses_the_calibrated_alpha() -> None:
    alpha = calibrate(0.3, experts=64, popularity="dirichlet")
    np.testing.assert_array_equal(
        moe(popularity="dirichlet", gini=0.3, rng=4),
        moe(popularity="dirichlet", dirichlet_alpha=alpha, rng=4),
    )
    a = calibrate(0.3, experts=64, popularity="zipf")
    np.testing.assert_array_equal(moe(gini=0.3, rng=4), moe(zipf_a=a, rng=4))


# ---------------------------------------------------------------- coflow


def test_packaged_trace_has_as_many_coflows_as_its_header() -> None:
    text = resources.files("ocsched.workloads").joinpath("data", "FB2010-1Hr-150-0.txt").read_text()
    ports, count = (int(x) for x in text.splitlines()[0].split())
    trace = packaged_trace()
    assert (trace.ports, len(trace.coflows)) == (ports, count) == (150, 526)
    assert len({c.id for c in trace.coflows}) == 526


@pytest.mark.skipif(not SHARED_TRACE.is_file(), reason="../shared is not present")
def test_packaged_trace_is_the_shared_benchmark() -> None:
    text = resources.files("ocsched.workloads").joinpath("data", "FB2010-1Hr-150-0.txt").read_bytes()
    assert text == SHARED_TRACE.read_bytes()


def test_known_coflows_total_bytes() -> None:
    # Trace lines: "1 0 1 22 1 65:1.0" and "2 10833 2 104 132 1 140:48.0".
    one = coflow(id=1)
    assert one.sum() == 1e6 and one[22, 65] == 1e6 and np.count_nonzero(one) == 1
    two = coflow(id=2)
    assert two.sum() == 48e6 and two[104, 140] == two[132, 140] == 24e6
    # Coflow 5: one mapper on rack 64, 51 reducers, 64 MB in all, 2 MB of it to rack 64 (local).
    five = coflow(id=5)
    assert five.sum() == pytest.approx(62e6) and five[64, 64] == 0 and np.count_nonzero(five) == 50


def test_small_fixture_reads_like_the_trace() -> None:
    trace = read_trace(SMALL_TRACE)
    assert [c.id for c in trace.coflows] == [1, 2, 3, 5]
    for c in trace.coflows:
        np.testing.assert_array_equal(coflow(trace=read_trace(SMALL_TRACE), id=c.id), coflow(id=c.id))
    assert io.generate("coflow", path=str(SMALL_TRACE), rank=0).sum() == pytest.approx(
        62e6
    )  # coflow 5: 64 MB


def test_rank_orders_by_total_size() -> None:
    trace = packaged_trace()
    totals = sorted((c.total_mb for c in trace.coflows), reverse=True)
    for r in (0, 1, 5):
        d = coflow(rank=r)
        local = sum(
            mb / len(c.mappers) * c.mappers.count(rack)
            for c in trace.coflows
            if c.total_mb == totals[r]
            for rack, mb in c.reducers
        )
        assert d.sum() == pytest.approx((totals[r] - local) * 1e6)
    np.testing.assert_array_equal(coflow(), coflow(rank=0))


def test_window_sums_the_coflows_that_arrive_in_it() -> None:
    trace = packaged_trace()
    np.testing.assert_allclose(coflow(start_ms=0, end_ms=10834), coflow(id=1) + coflow(id=2))
    np.testing.assert_allclose(coflow(end_ms=10833), coflow(id=1))  # half-open [start, end)
    whole = coflow(start_ms=0)
    total_local = sum(
        mb / len(c.mappers) * c.mappers.count(rack) for c in trace.coflows for rack, mb in c.reducers
    )
    assert whole.sum() == pytest.approx(
        (sum(c.total_mb for c in trace.coflows) - total_local) * 1e6, rel=1e-12
    )
    assert np.array_equal(np.diag(whole), np.zeros(150))
    assert not coflow(start_ms=1e12).any()


def test_coflow_matrix_splits_reducers_over_mappers() -> None:
    trace = read_trace(SMALL_TRACE)
    c = trace.coflows[1]  # 2 mappers (104, 132), 1 reducer 140:48 MB
    d = coflow_matrix(c, 150)
    assert d[104, 140] == d[132, 140] == 24e6


@pytest.mark.parametrize(
    ("content", "line", "what"),
    [
        ("", None, "empty"),
        ("150\n", 1, "header"),
        ("150 x\n", 1, "header"),
        ("150 1\n1 0 2 5 1 7:1.0\n", 2, "expected"),
        ("150 1\n1 0 1 5 2 7:1.0\n", 2, "reducers"),
        ("150 1\n1 0 1 5 1 7-1.0\n", 2, "expected"),
        ("150 1\n1 0 1 500 1 7:1.0\n", 2, "rack 500"),
        ("150 1\n1 0 1 5 1 7:-1.0\n", 2, "shuffle size"),
        ("150 1\n1 -4 1 5 1 7:1.0\n", 2, "arrival"),
        ("150 2\n1 0 1 5 1 7:1.0\n1 3 1 5 1 7:1.0\n", 3, "twice"),
        ("150 3\n1 0 1 5 1 7:1.0\n", 1, "announces 3"),
    ],
)
def test_malformed_trace_names_file_and_line(
    tmp_path: Path, content: str, line: int | None, what: str
) -> None:
    bad = tmp_path / "bad_trace.txt"
    bad.write_text(content)
    where = f"line {line}" if line else ""
    with pytest.raises(InvalidInputError, match=rf"bad_trace\.txt.*{where}.*{what}"):
        coflow(trace=read_trace(bad), id=1)


def test_coflow_option_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="only one of"):
        coflow(id=1, rank=0)
    with pytest.raises(InvalidInputError, match="only one of"):
        coflow(rank=0, end_ms=5)
    with pytest.raises(InvalidInputError, match="`id` 999999 is not a coflow"):
        coflow(id=999999)
    with pytest.raises(InvalidInputError, match="`rank` must be < 526"):
        coflow(rank=526)
    with pytest.raises(InvalidInputError, match="`rank` must be an integer >= 0; got -1"):
        coflow(rank=-1)
    with pytest.raises(InvalidInputError, match="`start_ms` must be <= `end_ms`"):
        coflow(start_ms=10, end_ms=5)
    with pytest.raises(InvalidInputError, match="`path`: coflow trace file not found"):
        read_trace(tmp_path / "missing.txt")


# ---------------------------------------------------------------- option validation


@pytest.mark.parametrize(
    ("func", "options", "match"),
    [
        (gpt, {"tp": 0}, "`tp` must be an integer >= 1; got 0"),
        (gpt, {"dp": 2.5}, "`dp` must be an integer >= 1; got 2.5"),
        (gpt, {"pp": True}, "`pp` must be an integer >= 1; got True"),
        (gpt, {"preset": "gpt5"}, "`preset` must be one of gpt3-125m, .*; got 'gpt5'"),
        (gpt, {"pp": 5}, "`pp` must divide `layers` = 24; got pp = 5"),
        (gpt, {"hidden": -3}, "`hidden` must be an integer in 1..1000000000; got -3"),
        (gpt32, {"copies": 0}, "`copies` must be an integer in 1..128; got 0"),
        (moe8, {"copies": "2"}, "`copies` must be an integer in 1..512; got '2'"),
        (
            moe,
            {"gpus": 65},
            r"`gpus` must be at most `experts` = 64 \(preset 'olmoe-1b-7b'; give experts >= 65",
        ),
        (moe, {"gpus": 9, "experts": 8}, "`gpus` must be at most `experts` = 8; got 9"),
        (moe, {"top_k": 65}, "`top_k` must be at most `experts` = 64; got 65"),
        (moe, {"popularity": "pareto"}, "`popularity` must be one of uniform, zipf, dirichlet; got 'pareto'"),
        (moe, {"gini": 1.0}, r"`gini` must be in \[0, 0.984375\) .*; got 1.0"),
        (
            moe,
            {"gini": -0.1},
            r"`gini` must be in \[0, 0.984375\) for zipf popularity over 64 experts; got -0.1",
        ),
        (moe, {"gini": float("nan")}, "`gini` must be a finite number; got nan"),
        (moe, {"popularity": "dirichlet", "gini": 0.0}, r"`gini` must be in \(0,"),
        (moe, {"zipf_a": 1.0, "popularity": "uniform"}, "`zipf_a` applies to popularity 'zipf' only"),
        (moe, {"dirichlet_alpha": 1.0}, "`dirichlet_alpha` applies to popularity 'dirichlet' only"),
        (
            moe,
            {"popularity": "dirichlet", "dirichlet_alpha": 0.0},
            "`dirichlet_alpha` must be a finite number",
        ),
        (moe, {"zipf_a": -1.0}, "`zipf_a` must be a finite number >= 0"),
        (moe, {"tokens": 0}, "`tokens` must be an integer in 1..1000000000; got 0"),
        (moe, {"combine": "yes"}, "`combine` must be true or false; got 'yes'"),
        # sizes are bounded before anything is allocated
        (standard, {"n": 10**9}, "`n` must be an integer in 1..4096; got 1000000000"),
        (standard, {"sigma": 1e308}, r"`sigma` must be a finite number in \[0, 1e\+06\]; got 1e\+308"),
        (gpt, {"tp": 100_000}, "`tp` \\* `pp` \\* `dp` must be at most 4096 GPUs; got 1600000"),
        (gpt, {"hidden": 10**30}, "`hidden` must be an integer in 1..1000000000"),
        (gpt32, {"copies": 10**6}, "`copies` must be an integer in 1..128; got 1000000"),
        (moe8, {"copies": 10**6}, "`copies` must be an integer in 1..512; got 1000000"),
        (moe, {"gpus": 10**5}, "`gpus` must be an integer in 1..4096"),
        (moe, {"experts": 100_000, "gpus": 4096}, r"`gpus` \* `experts` must be at most 16777216"),
        (moe, {"tokens": 10**20}, "`tokens` must be an integer in 1..1000000000"),
    ],
)
def test_generators_validate_their_options(
    func: Callable[..., np.ndarray], options: dict[str, object], match: str
) -> None:
    with pytest.raises(InvalidInputError, match=match):
        func(**options)


def test_generate_rejects_unknown_names_and_options() -> None:
    with pytest.raises(InvalidInputError, match="unknown workload 'gpt4'; choose one of coflow, gpt"):
        generate("gpt4")
    with pytest.raises(InvalidInputError, match="workload 'moe8' has no option 'n'; its options are copies"):
        generate("moe8", n=3)
    with pytest.raises(InvalidInputError, match="`link_gbps` must be a finite number > 0; got 0"):
        generate("moe", link_gbps=0)


# ---------------------------------------------------------------- CLI


runner = CliRunner()


def test_cli_generate_round_trip(tmp_path: Path) -> None:
    moe_kwargs = {"gpus": 16, "popularity": "dirichlet", "combine": True}
    for name, args, kwargs, suffix in [
        ("gpt32", ["--copies", "2"], {"copies": 2}, ".npy"),
        ("moe", ["--gpus", "16", "--popularity", "dirichlet", "--combine"], moe_kwargs, ".npz"),
        ("coflow", ["--id=2"], {"id": 2}, ".csv"),
        ("standard", ["--n", "12", "--flows", "4", "--small-fraction", "0.5"],
         {"n": 12, "flows": 4, "small_fraction": 0.5}, ".json"),
    ]:  # fmt: skip
        out = tmp_path / f"{name}{suffix}"
        res = runner.invoke(app, ["generate", name, *args, "--seed", "5", "--out", str(out), "--normalize"])
        assert res.exit_code == 0, res.output
        assert "max line sum  1" in res.output and "normalised" in res.output
        expected = generate(name, rng=5, normalize=True, **kwargs)
        np.testing.assert_allclose(
            io.read_demand(out).to_dense(), expected - np.diag(np.diag(expected)), rtol=1e-15
        )


def test_cli_generate_summary_and_units(tmp_path: Path) -> None:
    out = tmp_path / "g.npy"
    res = runner.invoke(
        app, ["generate", "gpt", "--preset", "gpt3-125m", "--out", str(out), "--link-gbps", "100"]
    )
    assert res.exit_code == 0, res.output
    assert "shape         32 x 32" in res.output
    assert "at most 4 per row" in res.output
    assert "seconds at 100 Gb/s" in res.output
    np.testing.assert_allclose(np.load(out), gpt(preset="gpt3-125m") * 8 / 100e9, rtol=1e-15)
    res = runner.invoke(app, ["generate", "moe8", "--out", str(tmp_path / "m.npy")])
    assert res.exit_code == 0 and "unit          time" in res.output


def test_cli_generate_errors(tmp_path: Path) -> None:
    out = tmp_path / "x.npy"
    res = runner.invoke(app, ["generate", "nope", "--out", str(out)])
    assert res.exit_code == 2
    assert (
        "error: `NAME`: 'nope' is not one of 'coflow', 'coflow-sequence', 'gpt', 'gpt-iteration', "
        "'gpt32', 'moe', 'moe-iteration', 'moe8', 'standard'" in res.stderr
    )
    res = runner.invoke(app, ["generate", "gpt32", "--bogus", "3", "--out", str(out)])
    assert res.exit_code == 2
    assert "error: workload 'gpt32' has no option 'bogus'; its options are copies" in res.stderr
    assert "Traceback" not in res.output
    res = runner.invoke(app, ["generate", "gpt32", "--copies", "two", "--out", str(out)])
    assert res.exit_code == 2 and "`copies` must be an integer; got 'two'" in res.stderr
    res = runner.invoke(app, ["generate", "gpt32", "--copies", "0", "--out", str(out)])
    assert res.exit_code == 2 and "`copies` must be an integer in 1..128; got 0" in res.stderr
    res = runner.invoke(app, ["generate", "moe", "--combine", "maybe", "--out", str(out)])
    assert res.exit_code == 2 and "`combine` must be true or false; got 'maybe'" in res.stderr
    res = runner.invoke(app, ["generate", "gpt32", "--copies", "--out", str(out)])
    assert res.exit_code == 2
    res = runner.invoke(app, ["generate", "gpt32", "--copies", "1", "--copies", "2", "--out", str(out)])
    assert res.exit_code == 2 and "given twice" in res.stderr
    assert not out.exists()


def test_cli_generate_never_overwrites_without_force(tmp_path: Path) -> None:
    out = tmp_path / "x.npy"
    out.write_bytes(b"keep")
    res = runner.invoke(app, ["generate", "moe8", "--out", str(out)])
    assert res.exit_code == 2 and "already exists" in res.stderr
    assert out.read_bytes() == b"keep"
    res = runner.invoke(app, ["generate", "moe8", "--out", str(out), "--force"])
    assert res.exit_code == 0
    np.testing.assert_array_equal(np.load(out), moe8())


def test_cli_workloads_lists_options_and_defaults() -> None:
    res = runner.invoke(app, ["workloads"])
    assert res.exit_code == 0
    for name in ("standard", "gpt", "gpt32", "moe", "moe8", "coflow"):
        assert any(line.startswith(f"{name} [") for line in res.output.splitlines())
    assert "--copies INT" in res.output and "(default: 1)" in res.output
    assert "--preset STR" in res.output and "(default: gpt3-1.3b)" in res.output
    assert "--gini FLOAT" in res.output and "(default: 0.25)" in res.output
    assert "--combine BOOL" in res.output and "(default: false)" in res.output
    assert "--start-ms FLOAT" in res.output and "(ms, default: unset)" in res.output
    assert "One of: uniform, zipf, dirichlet." in res.output


@pytest.mark.parametrize("name", sorted([*WORKLOADS, *ITERATION_WORKLOADS]))
def test_declared_options_are_the_generators_keywords(name: str) -> None:
    """The registry's options are the generator's keywords, in order, with its defaults and types."""
    import inspect
    import typing

    from ocsched.workloads import workload_options

    func = (WORKLOADS.get(name) or ITERATION_WORKLOADS[name]).func
    params = {k: p for k, p in inspect.signature(func).parameters.items() if k != "rng"}
    hints = typing.get_type_hints(func)
    declared = workload_options(name)
    # A `trace` keyword (a parsed trace) is offered as the text option `path` (a file read for you).
    assert [("trace" if o.name == "path" else o.name) for o in declared] == list(params)
    for o in declared:
        if o.name == "path":
            assert o.kind is str and o.default is None
            continue
        p = params[o.name]
        assert o.default == p.default and type(o.default) is type(p.default), o.name
        assert o.kind in typing.get_args(hints[o.name]) or hints[o.name] is o.kind, o.name
        assert o.help.endswith(".") and o.help[0].isupper(), o.name
        if o.choices:
            assert o.default in o.choices, o.name


def test_one_option_parser_types_by_declaration() -> None:
    from ocsched.workloads import workload_options
    from ocsched.workloads.options import flag_pairs, parse_options

    def options(name: str, pairs: list[str | tuple[str, str]]) -> dict[str, object]:
        return parse_options(name, workload_options(name), pairs)

    kinds = {o.name: o.kind for o in workload_options("standard")}
    assert kinds["disjoint"] is bool and {o.name: o.kind for o in workload_options("moe")}["gini"] is float
    assert workload_options("coflow")[0].name == "path"
    assert options("standard", ["n=8", "disjoint=no", ("sigma", "0.1")]) == {
        "n": 8,
        "disjoint": False,
        "sigma": 0.1,
    }
    assert options("gpt32", ["copies=2.0"]) == {"copies": 2}  # integral text counts as an integer
    assert options("moe", list(flag_pairs("moe", workload_options("moe"), ["--combine", "--top-k=2"]))) == {
        "combine": True,
        "top_k": 2,
    }
    bad = [
        (["disjoint=maybe"], "`disjoint` must be true or false; got 'maybe'"),
        (["flows"], "must look like KEY=VALUE; got 'flows'"),
        (["flows=2", "flows=3"], "'flows' given twice"),
        (["n=2.5"], "`n` must be an integer; got '2.5'"),
        (["sigma=x"], "`sigma` must be a number; got 'x'"),
        (["m=3"], "workload 'standard' has no option 'm'; its options are n, flows"),
    ]
    for pairs, message in bad:
        with pytest.raises(InvalidInputError, match=re.escape(message)):
            options("standard", pairs)
    with pytest.raises(InvalidInputError, match=r"`workload` .*'nope'"):
        workload_options("nope")
