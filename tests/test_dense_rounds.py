"""Spectra's fast rounds on dense input: the candidate graph, the rows kept in order of cost, and
every round still an optimal matching of the problem the reference solves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from scipy.optimize import linear_sum_assignment

from ocsched.assign import place
from ocsched.decompose import _rounds as rounds
from ocsched.decompose import spectra_decompose
from ocsched.decompose._rounds import _DENSE_AT, spectra_rounds
from ocsched.model import Demand
from strategies import dense_demands, make_demand


def _replay(d: np.ndarray) -> int:
    """Check every fast round against a dense LSAP of the reference's objective; return the rounds.

    The objective counts, per matched entry, its residual plus a large bonus per critical endpoint
    when the entry is uncovered (what the reference's penalty enforces), so equal optima mean the
    fast round solved the reference's round exactly (ties may pick another matching).
    """
    dem = Demand.from_matrix(d)
    n, big_delta = dem.n, dem.max_degree
    ent, ptr, weights = spectra_rounds(n, dem.rows, dem.cols, dem.values, big_delta)
    residual = dem.values.copy()
    uncovered = np.ones(dem.nnz, dtype=bool)
    big = 4.0 * float(np.sort(dem.values)[-n:].sum())
    for l in range(big_delta):
        left = big_delta - l
        crit_r = np.bincount(dem.rows[uncovered], minlength=n) == left
        crit_c = np.bincount(dem.cols[uncovered], minlength=n) == left
        score = np.zeros((n, n))
        score[dem.rows, dem.cols] = residual + big * uncovered * (crit_r[dem.rows] + 1.0 * crit_c[dem.cols])
        r, c = linear_sum_assignment(score, maximize=True)
        e = ent[ptr[l] : ptr[l + 1]]
        assert np.unique(dem.rows[e]).size == e.size and np.unique(dem.cols[e]).size == e.size
        got = float(score[dem.rows[e], dem.cols[e]].sum())
        assert got == pytest.approx(float(score[r, c].sum()), rel=1e-12, abs=1e-12 * big)
        # Invariant: every critical line takes one of its uncovered entries.
        assert crit_r[dem.rows[e[uncovered[e]]]].sum() == crit_r.sum()
        assert crit_c[dem.cols[e[uncovered[e]]]].sum() == crit_c.sum()
        pos = residual[e][residual[e] > 0]
        assert weights[l] == (float(pos.min()) if pos.size else 0.0)
        residual[e] = np.maximum(residual[e] - weights[l], 0.0)
        uncovered[e] = False
    assert not uncovered.any()
    return big_delta


@given(d=dense_demands())
@settings(max_examples=25, deadline=None)
def test_dense_rounds_are_optimal_matchings(d: np.ndarray) -> None:
    # More than _DENSE_AT live entries a row: the rounds run on the candidate graph with pricing.
    assert _DENSE_AT < 34
    _replay(d)


@pytest.mark.parametrize(
    ("kind", "n", "seed"),
    [
        ("dense", 120, 0),  # every line critical from the first round: rows stay in order of cost
        ("sparse", 130, 1),  # about 39 entries a line, lines turn critical one by one
        ("skewed", 90, 2),  # large and tiny entries: costs change in the rounds, orders get dropped
        ("ties", 80, 3),  # entries 0 or 1: ties everywhere
    ],
)
def test_dense_rounds_optimal_on_larger_inputs(kind: str, n: int, seed: int) -> None:
    assert _replay(make_demand(kind, n, seed)) > _DENSE_AT


def test_dense_schedule_matches_the_reference() -> None:
    # Continuous entries (no ties): both solvers find the same permutations, so the same makespan.
    dem = Demand.from_matrix(make_demand("dense", 70, 5))
    fast, ref = spectra_decompose(dem), spectra_decompose(dem, method="reference")
    assert fast.weights.sum() == pytest.approx(ref.weights.sum(), rel=1e-9)
    for method in ("equalize", "pack"):
        spans = []
        for dec in (fast, ref):
            switches, _ = place(dec, switches=16, delta=0.04 * float(dem.values.max()), method=method)
            spans.append(max(c.end for sw in switches for c in sw))
        assert spans[0] == pytest.approx(spans[1], rel=1e-9)


@given(d=dense_demands(min_n=20, max_n=30))
@settings(max_examples=25, deadline=None)
def test_rounds_optimal_with_a_tiny_candidate_graph(d: np.ndarray) -> None:
    # Three candidates a row from 8 live entries up: pricing (row bounds, the early-stopping scans
    # of rows kept in order of cost, column bounds) decides almost every round.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_CANDIDATES", 3)
        mp.setattr(rounds, "_DENSE_AT", 8)
        _replay(d)


def test_rounds_optimal_when_the_candidate_graph_has_no_perfect_matching() -> None:
    # Every line is critical from the first round, so the rounds are perfect matchings solved
    # without dummies. Three popular columns hold every row's three best entries: the first
    # candidate graph (three entries a row) has no perfect matching, so each round falls back
    # to the live graph after pricing (MoE's hot experts do this at scale).
    rng = np.random.default_rng(0)
    d = rng.random((40, 40)) * 0.1 + 0.01
    d[:, :3] += 5.0
    np.fill_diagonal(d, 0.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_CANDIDATES", 3)
        mp.setattr(rounds, "_DENSE_AT", 8)
        assert _replay(d) == 39


@pytest.mark.parametrize(("n", "seed"), [(40, 0), (150, 1)])
def test_one_permutation_per_entry_shortcut_gives_the_general_weights(n: int, seed: int) -> None:
    # Dense input: every entry on exactly one permutation, so the top-up, LP refit and drop
    # step are done in closed form. Same bits as the general path, at any magnitude.
    from ocsched.decompose import spectra as mod

    rng = np.random.default_rng(seed)
    d = rng.random((n, n)) * 10.0 ** rng.uniform(-6, 6)
    np.fill_diagonal(d, 0.0)
    dem = Demand.from_matrix(d)
    fast = spectra_decompose(dem)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mod, "_each_once", lambda ent, nnz: False)
        general = spectra_decompose(dem)
    assert len(fast) == n - 1
    assert np.array_equal(fast.perms, general.perms)
    assert np.array_equal(fast.weights, general.weights)
