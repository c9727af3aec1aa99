"""Spectra's decomposition: Delta permutations that cover the demand, LP-optimal weights."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from scipy.optimize import linprog

from ocsched.decompose import DECOMPOSERS, decompose, refit_weights, spectra_decompose, top_up
from ocsched.decompose._common import cover_exactly
from ocsched.errors import InvalidInputError
from ocsched.model import Demand
from ocsched.workloads import generate
from strategies import demands


def _check_decomposition(dem: Demand, perms: np.ndarray, weights: np.ndarray) -> None:
    n = dem.n
    for p in perms:
        used = p[p >= 0]
        assert len(np.unique(used)) == used.size  # a matching
        assert (used < n).all()
    cover = np.zeros((n, n))
    for p, w in zip(perms, weights, strict=True):
        rows = np.nonzero(p >= 0)[0]
        cover[rows, p[rows]] += w
    assert (weights > 0).all()
    assert (cover[dem.rows, dem.cols] >= dem.values * (1 - 1e-12) - 1e-15).all()


@given(d=demands(max_n=8))
def test_spectra_uses_exactly_delta_permutations_and_covers(d: np.ndarray) -> None:
    dem = Demand.from_matrix(d)
    dec = spectra_decompose(dem)
    assert len(dec) <= dem.max_degree
    _check_decomposition(dem, dec.perms, dec.weights)
    # circuits are kept only on demand entries
    on = dec.perms >= 0
    for l, i in zip(*np.nonzero(on), strict=True):
        assert d[i, dec.perms[l, i]] > 0


def test_exactly_delta_on_the_standard_benchmark() -> None:
    dem = Demand.from_matrix(generate("standard", n=60, rng=3))
    dec = spectra_decompose(dem)
    assert dem.max_degree == 16
    assert len(dec) == 16
    _check_decomposition(dem, dec.perms, dec.weights)


def test_hand_checked_decomposition() -> None:
    dec = spectra_decompose(Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]]))
    assert dec.weights.tolist() == [3.0, 1.0]
    assert dec.perms.tolist() == [[1, 2, 0], [2, 0, 1]]


def test_refit_is_the_lp_optimum_for_fixed_permutations() -> None:
    rng = np.random.default_rng(5)
    d = rng.random((6, 6)) * (rng.random((6, 6)) < 0.6)
    np.fill_diagonal(d, 0)
    dem = Demand.from_matrix(d)
    dec = spectra_decompose(dem)
    # straightforward dense LP for comparison
    a = np.array(
        [[1.0 if p[i] == j else 0.0 for p in dec.perms] for i, j in zip(dem.rows, dem.cols, strict=True)]
    )
    ref = linprog(np.ones(len(dec)), A_ub=-a, b_ub=-dem.values, bounds=(0, None), method="highs")
    assert dec.weights.sum() == pytest.approx(ref.fun, rel=1e-7)


def test_top_up_covers_from_zero_weights() -> None:
    dem = Demand.from_matrix([[0, 2, 1], [1, 0, 2], [2, 1, 0]])
    perms = np.array([[1, 2, 0], [2, 0, 1]])
    w = top_up(dem, perms, np.zeros(2))
    assert w.tolist() == [2.0, 1.0]
    assert refit_weights(dem, perms).tolist() == pytest.approx([2.0, 1.0])


def test_registry_and_unknown_method() -> None:
    assert "spectra" in DECOMPOSERS
    with pytest.raises(
        InvalidInputError,
        match=r"`method` must be one of spectra, spectra-reference, eclipse, solstice, bvn; got .nope.",
    ):
        decompose(Demand.from_matrix([[0, 1], [1, 0]]), method="nope")


def test_empty_demand_decomposes_to_nothing() -> None:
    dec = spectra_decompose(Demand.from_matrix(np.zeros((3, 3))))
    assert len(dec) == 0 and dec.perms.shape == (0, 3)


def test_cover_exactly_never_shortens_a_covered_entry() -> None:
    # Entry 0 lengthens column 1, which also covers entry 1: entry 1 must not give it back.
    inc = sp.csr_array(np.array([[1.0, 1.0], [0.0, 1.0]]))
    x = cover_exactly(inc, np.array([0.0, 1.0]), np.array([2.0, 1.5]))
    assert (inc @ x >= np.array([2.0, 1.5])).all()
    assert x.tolist() == [0.0, 2.0]
