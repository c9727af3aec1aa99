"""Spectra's fast rounds on dense input: the candidate graph, the rows kept in order of cost, and
every round still an optimal matching of the problem the reference solves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from scipy.optimize import linear_sum_assignment

import ocsched
from ocsched.assign import place
from ocsched.decompose import _rounds as rounds
from ocsched.decompose import spectra_decompose
from ocsched.decompose._rounds import _DENSE_AT, spectra_rounds
from ocsched.model import Demand
from strategies import dense_demands, make_demand


def _replay(d: np.ndarray, slack: float = 0.0) -> int:
    """Check every fast round against a dense LSAP of the reference's objective; return the rounds.

    The objective counts, per matched entry, its residual plus a large bonus per critical endpoint
    when the entry is uncovered (what the reference's penalty enforces), so equal optima mean the
    fast round solved the reference's round exactly (ties may pick another matching). With
    ``slack`` a round may fall short of the optimum by that much (eps-optimal rounds).
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
        best = float(score[r, c].sum())
        if slack:
            assert best - slack - 1e-12 * big <= got <= best + 1e-12 * big
        else:
            assert got == pytest.approx(best, rel=1e-12, abs=1e-12 * big)
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


def _eps(d: np.ndarray) -> float:
    """The auction's eps for ``d`` (what :func:`spectra_rounds` picks from its entries)."""
    return rounds.approx_eps(d[d > 0], d.shape[0])


def _record(mp: pytest.MonkeyPatch) -> list[tuple[np.ndarray, float, int]]:
    """Record each run of the rounds' kernel: the values it matched on, its eps, what it gave."""
    runs: list[tuple[np.ndarray, float, int]] = []
    run = rounds._run_rounds

    def spy(*args: object) -> int:
        left = int(run(*args))
        runs.append((np.array(args[5]), float(args[12]), left))  # type: ignore[arg-type]
        return left

    mp.setattr(rounds, "_run_rounds", spy)
    return runs


def _eps_rounds(d: np.ndarray, mp: pytest.MonkeyPatch) -> list[int]:
    """Force eps-optimal rounds on ``d`` (small) and replay them; return what each run gave."""
    runs = _record(mp)
    mp.setattr(rounds, "_APPROX_AT", 0)
    _replay(d, slack=d.shape[0] * _eps(d) * (1 + 1e-9))
    return [left for _, _, left in runs]


@given(d=dense_demands(min_n=20, max_n=44))
@settings(max_examples=25, deadline=None)
def test_eps_optimal_rounds_are_within_n_eps_of_optimal(d: np.ndarray) -> None:
    # From _APPROX_AT ports on, perfect rounds on the candidate graph stop at an eps-optimal
    # matching (auction steps only). Forced on small inputs here: every round is still a
    # perfect matching taking an uncovered entry on every critical line (checked by _replay),
    # the rounds cover every entry, and each round's gain is within n * eps of the optimum
    # (eps-complementary slackness on every live entry).
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_DENSE_AT", 8)
        _eps_rounds(d, mp)


@pytest.mark.parametrize(("kind", "n", "seed"), [("dense", 40, 0), ("dense", 120, 1), ("sparse", 120, 2)])
def test_eps_optimal_rounds_on_larger_inputs(kind: str, n: int, seed: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        if n < 100:
            mp.setattr(rounds, "_DENSE_AT", 8)
        runs = _eps_rounds(make_demand(kind, n, seed), mp)
    assert runs == [0]  # the eps-optimal run finished: no exact restart


def _hot_columns(n: int, seed: int) -> np.ndarray:
    """Three popular columns hold every row's three best entries (MoE's hot experts)."""
    rng = np.random.default_rng(seed)
    d = rng.random((n, n)) * 0.1 + 0.01
    d[:, :3] += 5.0
    np.fill_diagonal(d, 0.0)
    return d


def test_eps_optimal_rounds_when_the_candidate_graph_has_no_perfect_matching() -> None:
    # The auction leaves rows unmatched; they bid again after pricing gave them candidates.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_DENSE_AT", 8)
        assert _eps_rounds(_hot_columns(60, 0), mp) == [0]


def test_eps_optimal_rounds_that_give_up_restart_exactly(caplog: pytest.LogCaptureFixture) -> None:
    # One pricing pass a round is too few for the hot columns: the eps-optimal run gives up
    # and the exact rounds start over, so the result is the exact one, bit for bit.
    dem = Demand.from_matrix(_hot_columns(60, 1))
    args = (dem.n, dem.rows, dem.cols, dem.values, dem.max_degree)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_CANDIDATES", 3)
        mp.setattr(rounds, "_APPROX_CANDIDATES", 3)
        mp.setattr(rounds, "_DENSE_AT", 8)
        mp.setattr(rounds, "_MAX_PRICING", 1)
        exact = spectra_rounds(*args)
        mp.setattr(rounds, "_APPROX_AT", 0)
        with caplog.at_level("DEBUG", logger=rounds.__name__):
            restarted = spectra_rounds(*args)
    assert "gave up" in caplog.text
    for a, b in zip(exact, restarted, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize(("n", "seed"), [(512, 0), (520, 1)])
def test_eps_optimal_rounds_keep_the_makespan(n: int, seed: int) -> None:
    # At the sizes they run at by default (dense, n >= _APPROX_AT) the schedules are the exact
    # rounds' to 5e-4 (measured on line sums 1, s=16, delta=0.04, 8 seeds x 2 placements: at
    # most 5e-5 at n = 512 and 640, either sign), and no entry is left uncovered.
    d = make_demand("dense", n, seed)
    d /= max(d.sum(0).max(), d.sum(1).max())
    dem = Demand.from_matrix(d)
    assert n >= rounds._APPROX_AT
    fast = spectra_decompose(dem)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_APPROX_AT", n + 1)
        exact = spectra_decompose(dem)
    assert len(fast) == len(exact) == n - 1
    covered = np.zeros((n, n), dtype=bool)
    for perm in fast.perms:
        covered[np.arange(n), perm] = True
    assert covered[d > 0].all()
    for method in ("equalize", "pack"):
        spans = []
        for dec in (fast, exact):
            switches, _ = place(dec, switches=16, delta=0.04, method=method)
            spans.append(max(c.end for sw in switches for c in sw))
        assert spans[0] == pytest.approx(spans[1], rel=5e-4)


@pytest.mark.parametrize("kind", ["ints", "constant"])
def test_ties_are_broken_with_the_same_total_weight(kind: str) -> None:
    # Dense input with many equal entries (integer counts, a uniform all-to-all) is matched on
    # slightly perturbed entries from _TIE_BREAK_AT ports on: 5-10x faster, and on these the
    # same total weight as the rounds on the entries as they are (measured at n = 256-1024).
    n = rounds._TIE_BREAK_AT
    rng = np.random.default_rng(3)
    d = rng.integers(1, 4, (n, n)).astype(float) if kind == "ints" else np.ones((n, n))
    np.fill_diagonal(d, 0.0)
    with pytest.MonkeyPatch.context() as mp:
        runs = _record(mp)
        broken = spectra_decompose(Demand.from_matrix(d))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_TIE_BREAK_AT", n + 1)
        plain = spectra_decompose(Demand.from_matrix(d))
    unit = d[d > 0] / d.max()
    assert len(runs) == 1
    seen = runs[0][0]
    assert not np.array_equal(seen, unit)
    assert np.allclose(seen, unit, rtol=rounds._TIE_BREAK, atol=0)
    assert len(broken) == len(plain) == n - 1
    assert broken.weights.sum() == pytest.approx(plain.weights.sum(), rel=1e-9)


def test_continuous_entries_are_matched_as_they_are() -> None:
    d = make_demand("dense", rounds._TIE_BREAK_AT, 4)
    with pytest.MonkeyPatch.context() as mp:
        runs = _record(mp)
        spectra_decompose(Demand.from_matrix(d))
    assert np.array_equal(runs[0][0], d[d > 0] / d.max())


@given(d=dense_demands(min_n=20, max_n=30))
@settings(max_examples=25, deadline=None)
def test_tie_broken_rounds_give_valid_schedules(d: np.ndarray) -> None:
    # Forced on small inputs (ties or not): still Delta permutations, every entry served.
    dem = Demand.from_matrix(d)
    if dem.nnz == 0:
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_TIE_BREAK_AT", 0)
        mp.setattr(rounds, "_DENSE_AT", 8)
        assert len(spectra_decompose(dem)) == dem.max_degree
        sched = ocsched.schedule(d, switches=4, delta=0.05)
    assert ocsched.validate(sched, d).ok


def test_rounds_whose_candidates_would_all_tie_stay_exact() -> None:
    # Entries in {1, 2, 3}: a row holds about 170 equal entries per value, far more than the
    # auction's candidates, so no eps-optimal run is tried (measured: 10 s against 0.9 s).
    n = rounds._APPROX_AT
    d = np.random.default_rng(5).integers(1, 4, (n, n)).astype(float)
    np.fill_diagonal(d, 0.0)
    with pytest.MonkeyPatch.context() as mp:
        runs = _record(mp)
        dec = spectra_decompose(Demand.from_matrix(d))
    assert [eps for _, eps, _ in runs] == [0.0]
    assert len(dec) == n - 1
