"""Placement: greedy LPT, equalization, timeline."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocsched.assign import equalize, fill, greedy, loads, pack, place, spectra_placement, timeline
from ocsched.assign._kernels import fill_pieces
from ocsched.decompose import Decomposition


def test_greedy_is_lpt_with_lowest_index_ties() -> None:
    a = greedy(np.array([1.0, 5.0, 3.0, 3.0]), 2, 0.5)
    # 5 -> sw0 (5.5); 3 -> sw1 (3.5); 3 -> sw1 (7.0); 1 -> sw0 (6.5)
    assert a == [[(1, 5.0), (0, 1.0)], [(2, 3.0), (3, 3.0)]]
    assert loads(a, 0.5).tolist() == [7.0, 7.0]


def test_equalize_follows_the_paper_rule_step_by_step() -> None:
    # loads 1.1, 1.1, 0 with delta 0.1 (row-s3 case): three splits, ends at 0.8, 0.8, 0.9
    a, splits = equalize([[(0, 1.0)], [(1, 1.0)], []], 0.1)
    assert splits == 3
    assert sorted(np.round(loads(a, 0.1), 12).tolist()) == [0.8, 0.8, 0.9]


def test_equalize_stops_when_the_largest_piece_is_too_small() -> None:
    # A holds many small pieces: splitting one cannot bring A down to mid
    a, splits = equalize([[(l, 0.1) for l in range(10)], []], 0.5)
    assert splits == 0
    assert a == [[(l, 0.1) for l in range(10)], []]


def test_equalize_does_not_modify_its_input() -> None:
    before = [[(0, 4.0)], []]
    equalize(before, 0.0)
    assert before == [[(0, 4.0)], []]


def test_timeline_runs_largest_first_with_delta_before_each() -> None:
    perms = np.array([[1, 0], [1, -1], [-1, 0]])
    confs = timeline([[(1, 1.0), (0, 2.0)], [(2, 0.5)], []], perms, 0.25)
    assert [(c.start, c.duration) for c in confs[0]] == [(0.25, 2.0), (2.5, 1.0)]
    assert confs[0][0].perm.tolist() == [1, 0]
    assert [(c.start, c.duration) for c in confs[1]] == [(0.25, 0.5)]
    assert confs[2] == ()
    with pytest.raises(ValueError):
        confs[0][0].perm[0] = 5  # read-only: schedules are immutable


def test_place_counts_splits() -> None:
    perms = np.array([[1, 0]])
    dec = Decomposition(perms, np.array([4.0]))
    confs, splits = place(dec, switches=2, delta=0.0)
    assert splits == 1
    assert [c.duration for sw in confs for c in sw] == [2.0, 2.0]
    confs, splits = place(dec, switches=2, delta=0.0, method="greedy")
    assert splits == 0 and len(confs[1]) == 0


@given(
    weights=st.lists(st.floats(0.001, 10.0), min_size=1, max_size=25),
    s=st.integers(1, 8),
    delta=st.sampled_from([0.0, 0.01, 0.5, 5.0]),
)
def test_pack_is_never_worse_than_equalize_and_serves_every_weight(
    weights: list[float], s: int, delta: float
) -> None:
    w = np.array(weights)
    eq, _ = equalize(greedy(w, s, delta), delta)
    packed, splits = pack(w, s, delta)
    assert loads(packed, delta).max() <= loads(eq, delta).max()
    total = np.zeros(w.size)
    for sw in packed:
        for l, x in sw:
            assert x > 0
            total[l] += x
    np.testing.assert_allclose(total, w, rtol=1e-12)
    assert splits == sum(len(sw) for sw in packed) - w.size


def test_pack_beats_equalize_on_four_equal_weights() -> None:
    w = np.array([3.0, 3.0, 3.0, 3.0])
    assert loads(equalize(greedy(w, 3, 0.5), 0.5)[0], 0.5).max() == pytest.approx(5.375)
    assert loads(pack(w, 3, 0.5)[0], 0.5).max() == pytest.approx(5.0, rel=1e-9)


@given(
    weights=st.lists(st.floats(0.0, 10.0), min_size=1, max_size=25),
    s=st.integers(1, 8),
    delta=st.sampled_from([0.0, 0.01, 0.5, 5.0]),
    fraction=st.floats(0.3, 1.5),
)
def test_compiled_fill_matches_its_python_source(
    weights: list[float], s: int, delta: float, fraction: float
) -> None:
    # The kernel runs compiled; its plain-Python source (numba keeps it as py_func) must agree
    # piece for piece, including the overflow signal that makes the caller grow its arrays.
    kernel = fill_pieces.py_func if hasattr(fill_pieces, "py_func") else fill_pieces
    w = np.array(weights)
    order = np.argsort(-w, kind="stable")
    horizon = fraction * (w.sum() + delta * w.size) / s + delta
    for cap in (2, w.size + s + 1):
        out = [(np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros(cap)) for _ in range(2)]
        k_fast = fill_pieces(w, order, s, delta, horizon, *out[0])
        k_slow = kernel(w, order, s, delta, horizon, *out[1])
        assert k_fast == k_slow
        if k_fast > 0:
            for fast, slow in zip(out[0], out[1], strict=True):
                np.testing.assert_array_equal(fast[:k_fast], slow[:k_fast])
    packed = fill(w, s, delta, horizon)
    if packed is not None:  # every weight served exactly, no switch over the horizon
        total = np.zeros(w.size)
        for sw in packed:
            for l, x in sw:
                total[l] += x
        np.testing.assert_allclose(total, w, rtol=1e-12, atol=0)
        # a cut weight's float crumbs (< 1e-12 of it) go to its last piece
        assert (loads(packed, delta) <= horizon * (1 + 1e-12) + 1e-12 * w.max()).all()


@given(
    weights=st.lists(st.floats(0.0, 10.0), min_size=1, max_size=30),
    s=st.integers(1, 12),
    delta=st.sampled_from([0.0, 1e-9, 0.01, 0.5, 5.0]),
)
def test_compiled_spectra_placement_is_greedy_then_equalize(
    weights: list[float], s: int, delta: float
) -> None:
    w = np.array(weights)
    assert spectra_placement(w, s, delta) == equalize(greedy(w, s, delta), delta)


@given(
    st.lists(
        st.floats(0.0, 1e6, allow_subnormal=False) | st.floats(0.0, 1e-6, allow_subnormal=False),
        max_size=700,
    )
)
def test_compiled_pairwise_sum_is_numpys_sum(xs: list[float]) -> None:
    # The compiled placement computes pack's lower end itself; it must be numpy's float exactly.
    from ocsched.assign._kernels import pairwise_sum

    a = np.array(xs, dtype=np.float64)
    assert pairwise_sum(a) == float(a.sum())


@given(
    w=st.lists(st.floats(0.0, 10.0, allow_subnormal=False), min_size=1, max_size=14),
    s=st.integers(1, 6),
    delta=st.sampled_from([0.0, 0.01, 0.5]),
    t0=st.sampled_from([0.0, 0.3]),
)
def test_compiled_uniform_placement_and_layout_match(w: list[float], s: int, delta: float, t0: float) -> None:
    from ocsched.assign._kernels import lay_out_pieces, uniform_pieces
    from ocsched.assign.uniform import _pieces_to_assignment

    weights = np.array(w)
    perms = np.arange(3 * len(w)).reshape(len(w), 3)
    # pack computes its bisection's lower end in the kernel (numpy's sum order); with a start given
    # it comes from numpy itself: the same assignment either way.
    start = equalize(greedy(weights, s, delta), delta)[0]
    for packing, (ref, ref_splits) in (
        (False, spectra_placement(weights, s, delta)),
        (True, pack(weights, s, delta, start=start)),
    ):
        sw, perm, length, splits, _ = uniform_pieces(weights, s, delta, packing)
        assert _pieces_to_assignment(s, sw, perm, length) == ref and splits == ref_splits
        idx, starts = lay_out_pieces(sw, length, s, delta, t0)
        got = [
            (int(sw[e]), int(perm[e]), float(x), float(length[e])) for e, x in zip(idx, starts, strict=True)
        ]
        laid = timeline(ref, perms, delta, t0=t0)
        assert got == [
            (b, int(c.perm[0]) // 3, c.start, c.duration) for b, sw_ in enumerate(laid) for c in sw_
        ]
