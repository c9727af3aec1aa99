"""Eclipse's fast candidate search: the same decomposition as the reference, and valid bounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from ocsched.decompose._eclipse_bounds import ScoreBounds, search
from ocsched.decompose.eclipse import eclipse_decompose
from ocsched.errors import InvalidInputError
from ocsched.model import Demand
from ocsched.workloads import generate
from strategies import deltas_for, demands, make_demand

FloatArray = NDArray[np.float64]


def _same(d: Demand, delta: float) -> None:
    fast = eclipse_decompose(d, delta=delta)
    ref = eclipse_decompose(d, delta=delta, method="reference")
    np.testing.assert_array_equal(fast.perms, ref.perms)
    np.testing.assert_array_equal(fast.weights, ref.weights)


def _value(m: FloatArray, cap: float) -> float:
    """W(cap): the maximum-weight matching value on min(m, cap), by a dense assignment."""
    w = np.minimum(m, cap)
    r, c = linear_sum_assignment(w, maximize=True)
    return float(w[r, c].sum())


@st.composite
def many_values(draw: st.DrawFn) -> FloatArray:
    """A matrix with more than 64 distinct entries (Eclipse's coarse candidates and refinement)."""
    n = draw(st.integers(9, 12))
    d = draw(hnp.arrays(np.float64, (n, n), elements=st.floats(0.001, 1.0), unique=True))
    np.fill_diagonal(d, 0.0)
    return d


# ------------------------------------------------------------------ fast == reference


@settings(max_examples=40, deadline=None)
@given(data=st.data(), dm=demands(max_n=7))
def test_fast_is_the_reference_on_small_matrices(data: st.DataObject, dm: FloatArray) -> None:
    delta = data.draw(deltas_for(dm))
    _same(Demand.from_matrix(dm), delta)


@settings(max_examples=15, deadline=None)
@given(dm=many_values(), delta=st.sampled_from([0.001, 0.01, 0.04, 0.3]))
def test_fast_is_the_reference_with_refinement(dm: FloatArray, delta: float) -> None:
    _same(Demand.from_matrix(dm), delta)


@pytest.mark.parametrize(
    ("name", "options"),
    [
        # dense residual: scipy's assignment per candidate
        pytest.param("standard", {"n": 100}, marks=pytest.mark.slow),
        ("standard", {"n": 160, "flows": 4}),  # sparse residual: the compiled solver
        ("moe", {"gpus": 16}),
        ("gpt32", {"copies": 2}),
    ],
)
@pytest.mark.parametrize("delta", [0.01, pytest.param(0.04, marks=pytest.mark.slow)])
def test_fast_is_the_reference_on_workloads(name: str, options: dict[str, int], delta: float) -> None:
    m = generate(name, rng=0, normalize=True, link_gbps=100, **options)
    _same(Demand.from_matrix(m), delta)


@pytest.mark.parametrize("kind", ["dense", "skewed", "ties", "wide_range"])
def test_fast_is_the_reference_on_seeded_matrices(kind: str) -> None:
    _same(Demand.from_matrix(make_demand(kind, 24, 3)), 0.02)


def test_eclipse_rejects_an_unknown_method() -> None:
    with pytest.raises(InvalidInputError, match=r"`method` must be one of fast, reference; got 'nope'"):
        eclipse_decompose(Demand.from_matrix([[0, 1], [1, 0]]), delta=0.1, method="nope")


# ------------------------------------------------------------------ the bounds


@settings(max_examples=40, deadline=None)
@given(
    dm=demands(max_n=7, kinds=("dense", "sparse", "skewed", "ties", "wide_range")),
    q=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3),
)
def test_bounds_are_upper_bounds(dm: FloatArray, q: list[float]) -> None:
    d = Demand.from_matrix(dm)
    if d.nnz == 0:
        return
    vals = np.unique(d.values)
    b1, a, b2 = np.sort(vals[np.minimum((np.array(q) * vals.size).astype(int), vals.size - 1)])
    bounds = ScoreBounds(d.n, d.rows, d.cols, d.values.copy())
    caps = np.array([a])
    w = _value(dm, a)
    slack = 1e-12 * max(w, 1.0)
    # Invariant: every bound is >= W(a), which search's pruning depends on.
    assert bounds.lines(caps)[0] >= w - slack
    assert bounds.slope(caps, float(b1), _value(dm, b1))[0] >= w - slack
    assert bounds.slope(caps, float(b2), _value(dm, b2))[0] >= w - slack
    chord = bounds.chord(caps, np.array([b1, b2]), np.array([_value(dm, b1), _value(dm, b2)]))[0]
    assert chord >= w - slack
    if b1 < a < b2:
        assert np.isfinite(chord)


def test_search_scores_every_candidate_near_the_best() -> None:
    dm = make_demand("dense", 12, 5)
    d = Demand.from_matrix(dm)
    vals = np.unique(d.values)
    delta = 0.05
    keys = list(range(vals.size))
    truth = {k: _value(dm, float(vals[k])) / (float(vals[k]) + delta) for k in keys}
    calls: list[int] = []

    def score(k: int) -> tuple[float, NDArray[np.int64]]:
        calls.append(k)
        return truth[k], np.zeros(0, dtype=np.int64)

    exact: dict[int, tuple[float, NDArray[np.int64]]] = {}
    search(keys, vals, delta, ScoreBounds(d.n, d.rows, d.cols, d.values.copy()), [], exact, score, 1e-3)
    best = max(truth.values())
    assert max(k for k in exact) >= 0 and max(t[0] for t in exact.values()) == best
    assert {k for k in keys if truth[k] >= best * (1 - 1e-3)} <= set(exact)
    assert len(calls) == len(set(calls)) < len(keys)  # each at most once, and some ruled out


@pytest.mark.parametrize("kind", ["dense", "skewed", "ties", "wide_range"])
def test_chords_between_every_pair_are_upper_bounds(kind: str) -> None:
    dm = make_demand(kind, 10, 7)
    d = Demand.from_matrix(dm)
    vals = np.unique(d.values)[:: max(1, d.values.size // 25)]
    w = np.array([_value(dm, float(v)) for v in vals])
    bounds = ScoreBounds(d.n, d.rows, d.cols, d.values.copy())
    for i in range(vals.size):
        for j in range(i + 2, vals.size):
            pa, pw = vals[[i, j]], w[[i, j]]
            chord = bounds.chord(vals[i + 1 : j], pa, pw)
            assert np.isfinite(chord).all()
            assert (chord >= w[i + 1 : j] * (1 - 1e-12)).all()
