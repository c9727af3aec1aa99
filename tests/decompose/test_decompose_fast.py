"""The fast Spectra decomposition against the reference solver, and coverage at every magnitude."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from ocsched.assign import place
from ocsched.decompose import DECOMPOSERS, decompose, spectra_decompose
from ocsched.decompose._common import Decomposition, incidence
from ocsched.decompose._rounds import spectra_rounds
from ocsched.errors import InvalidInputError
from ocsched.model import Demand
from ocsched.schedulers import schedule
from strategies import demands, make_demand


def _covers(dem: Demand, dec: Decomposition, rtol: float = 1e-9) -> bool:
    cover = incidence(dem, dec.perms) @ dec.weights
    return bool((cover >= dem.values * (1 - rtol)).all())


def _makespan(dec: Decomposition, s: int, delta: float, placement: str) -> float:
    switches, _ = place(dec, switches=s, delta=delta, method=placement)
    return max((c.end for sw in switches for c in sw), default=0.0)


def _round_optimum(dem: Demand, residual: np.ndarray, uncovered: np.ndarray, left: int) -> float:
    """The reference's objective for one round: a dense LSAP, scored as (critical lines, residual)."""
    n = dem.n
    crit_r = np.bincount(dem.rows[uncovered], minlength=n) == left
    crit_c = np.bincount(dem.cols[uncovered], minlength=n) == left
    gain = np.zeros((n, n))
    gain[dem.rows, dem.cols] = residual
    bonus = np.zeros((n, n))
    bonus[dem.rows[uncovered], dem.cols[uncovered]] = 1.0
    big = 4.0 * float(np.sort(dem.values)[-n:].sum())
    score = gain + big * bonus * (crit_r[:, None].astype(float) + crit_c[None, :])
    r, c = linear_sum_assignment(score, maximize=True)
    return float(score[r, c].sum())


def _check_rounds_are_optimal(d: np.ndarray) -> None:
    """Replay the fast rounds: every round's matching must be an optimum of that round's problem."""
    dem = Demand.from_matrix(d)
    if dem.nnz == 0:
        return
    big_delta = dem.max_degree
    ent, ptr, weights = spectra_rounds(dem.n, dem.rows, dem.cols, dem.values, big_delta)
    residual = dem.values.copy()
    uncovered = np.ones(dem.nnz, dtype=bool)
    big = 4.0 * float(np.sort(dem.values)[-dem.n :].sum())
    for l in range(big_delta):
        left = big_delta - l
        crit_r = np.bincount(dem.rows[uncovered], minlength=dem.n) == left
        crit_c = np.bincount(dem.cols[uncovered], minlength=dem.n) == left
        e = ent[ptr[l] : ptr[l + 1]]
        assert np.unique(dem.rows[e]).size == e.size and np.unique(dem.cols[e]).size == e.size
        got = float(residual[e].sum()) + big * float(
            (uncovered[e] * (crit_r[dem.rows[e]].astype(float) + crit_c[dem.cols[e]])).sum()
        )
        want = _round_optimum(dem, residual, uncovered, left)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12 * big)
        pos = residual[e][residual[e] > 0]
        w = float(pos.min()) if pos.size else 0.0
        assert weights[l] == w
        residual[e] = np.maximum(residual[e] - w, 0.0)
        uncovered[e] = False
    assert not uncovered.any()


@given(d=demands(max_n=7))
def test_every_fast_round_is_an_optimal_matching(d: np.ndarray) -> None:
    _check_rounds_are_optimal(d)


@pytest.mark.parametrize("kind", ["dense", "sparse", "skewed", "wide_range", "perm_sum"])
# Seeds 4 and 5 (n = 33, 40) only under `make slow`: the default run keeps n <= 26.
@pytest.mark.parametrize("seed", [*range(4), *(pytest.param(k, marks=pytest.mark.slow) for k in (4, 5))])
def test_fast_equals_reference_on_seeded_inputs(kind: str, seed: int) -> None:
    n = 5 + 7 * seed
    dem = Demand.from_matrix(make_demand(kind, n, seed))
    fast = spectra_decompose(dem)
    ref = spectra_decompose(dem, method="reference")
    assert _covers(dem, fast) and _covers(dem, ref)
    # Continuous random entries: no ties, so the two solvers find the same permutations.
    if kind != "perm_sum":
        assert len(fast) == len(ref) == dem.max_degree
        assert fast.weights.sum() == pytest.approx(ref.weights.sum(), rel=1e-9)
    for s, delta in ((4, 0.04), (16, 0.01)):
        for placement in ("equalize", "pack"):
            m_fast, m_ref = _makespan(fast, s, delta, placement), _makespan(ref, s, delta, placement)
            assert m_fast == pytest.approx(m_ref, rel=1e-9) if kind != "perm_sum" else m_fast > 0


@pytest.mark.parametrize(
    ("kind", "n", "seed"),
    [("skewed", 40, 7), pytest.param("dense", 100, 3, marks=pytest.mark.slow), ("dense", 150, 1)],
)
def test_fast_rounds_optimal_on_larger_inputs(kind: str, n: int, seed: int) -> None:
    # Dense n >= 100 runs the candidate graph with pricing (more than 64 live entries a row).
    _check_rounds_are_optimal(make_demand(kind, n, seed))


@given(d=demands(max_n=7), mag=st.integers(-18, 15), s=st.integers(1, 4))
@settings(max_examples=60, deadline=None)
def test_every_decomposer_covers_at_any_magnitude(d: np.ndarray, mag: int, s: int) -> None:
    dem = Demand.from_matrix(d * 10.0**mag)
    for name in DECOMPOSERS:
        dec = decompose(dem, method=name, delta=0.0)
        assert _covers(dem, dec, rtol=1e-9), name
        assert (len(dec) > 0) == (dem.nnz > 0), name
    if dem.nnz:
        sched = schedule(dem, switches=s, delta=0.0)
        assert sched.makespan >= dem.max_line_sum / s * (1 - 1e-9)


@pytest.mark.parametrize("value", [1e-300, 1e-18, 1e-15, 1e-12, 1.0, 1e15, 1e300, 1.7e308])
def test_tiny_and_huge_single_entries_are_covered(value: float) -> None:
    dem = Demand.from_matrix(np.array([[0, value], [0, 0]]))
    for method in ("fast", "reference"):
        dec = spectra_decompose(dem, method=method)
        assert len(dec) == 1 and dec.weights.tolist() == [value]


@pytest.mark.parametrize("top", [1e300, 1.7e308])
def test_huge_entries_decompose_without_overflow(top: float) -> None:
    # Line sums of these overflow a float: every method must work in scaled units.
    d = np.array([[0, top, top / 3], [top / 2, 0, top], [top, top / 5, 0]])
    dem = Demand.from_matrix(d)
    for name in DECOMPOSERS:
        dec = decompose(dem, method=name, delta=0.0)
        assert _covers(dem, dec) and np.isfinite(dec.weights).all(), name


def test_unknown_method_lists_the_choices() -> None:
    with pytest.raises(InvalidInputError, match="`method` must be one of fast, reference; got 'nope'"):
        spectra_decompose(Demand.from_matrix([[0, 1], [1, 0]]), method="nope")
