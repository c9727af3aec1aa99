"""Peer schedulers (baseline, baseline-eclipse, naive, eclipse, solstice, bvn) and the balanced split."""

from __future__ import annotations

import itertools
from typing import Literal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

import ocsched
from ocsched.decompose import spectra_decompose
from ocsched.decompose._stuffing import quick_stuff
from ocsched.decompose.bvn import bvn_slices
from ocsched.decompose.eclipse import _eclipse_candidates, eclipse_decompose
from ocsched.decompose.solstice import solstice_decompose, solstice_slices
from ocsched.errors import InvalidInputError
from ocsched.model import Demand
from ocsched.schedulers import split_schedule
from ocsched.split import balanced_split, split_flows, split_share
from strategies import deltas_for, demands, make_demand

PEERS = ("baseline", "baseline-eclipse", "naive", "eclipse", "solstice", "bvn")
RANDOMISED = ("baseline", "baseline-eclipse")
KINDS = ("dense", "sparse", "skewed", "perm_sum", "ties", "wide_range")

# 2 x 2 block on rows {0, 1} x columns {2, 3}: [[1, 3], [3, 1]].
BLOCK = np.zeros((4, 4))
BLOCK[:2, 2:] = [[1.0, 3.0], [3.0, 1.0]]
CYCLIC = np.array([[0.0, 3, 1], [1, 0, 3], [3, 1, 0]])
SWAP = np.array([[0.0, 2], [2, 0]])
SKEW2 = np.array([[0.0, 1.0], [0.1, 0.0]])

# (algorithm, demand, switches, delta, makespan, splits), derived by hand:
PEER_CASES = [
    # Halving [[1,3],[3,1]] cancels its one cycle: one half is [[1,1],[1,1]] (2 matchings,
    # 2 + 2 delta), the other [[0,2],[2,0]] (1 matching); the two 3s are split. Any seed.
    ("baseline", BLOCK, 2, 0.5, 3.0, 2),
    ("baseline-eclipse", BLOCK, 2, 0.5, 3.0, 2),
    # No cycle: each switch gets D/2, one matching of 1; both flows are split.
    ("baseline", SWAP, 2, 0.5, 1.5, 2),
    # s = 1: Spectra's decomposition on one switch: matchings of 3 and 1.
    ("baseline", CYCLIC, 1, 0.5, 5.0, 0),
    # D/2 = matchings of 1.5 and 0.5 on every switch.
    ("naive", CYCLIC, 2, 0.5, 3.0, 0),
    ("naive", SWAP, 3, 0.1, 0.1 + 2 / 3, 0),
    # Eclipse: alpha = 1 serves 1.1 per 2 time units, alpha = 0.1 serves 0.2 per 1.1: one matching.
    ("eclipse", SKEW2, 1, 1.0, 2.0, 0),
    # With delta = 0.01, alpha = 0.1 (0.2 / 0.11) beats alpha = 1 (1.1 / 1.01): then 0.9 is left.
    ("eclipse", SKEW2, 1, 0.01, 1.02, 0),
    # Already equal line sums: slices 3 (the 3s) then 1 (the 1s), for both.
    ("solstice", CYCLIC, 1, 0.5, 5.0, 0),
    ("bvn", CYCLIC, 1, 0.5, 5.0, 0),
    # alpha = 3 serves 9 per 3.5, alpha = 1 serves 3 per 1.5: the 3s first, then the 1s.
    ("eclipse", CYCLIC, 1, 0.5, 5.0, 0),
    # Two switches: greedy puts 3 and 1 apart (loads 3.5 and 1.5); equalization moves 0.75 of
    # the 3 to the second switch, and both end at (3.5 + 1.5 + 0.5) / 2.
    ("bvn", CYCLIC, 2, 0.5, 2.75, 1),
    ("solstice", CYCLIC, 2, 0.5, 2.75, 1),
]


def _dense(demand: Demand, values: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.zeros((demand.n, demand.n))
    out[demand.rows, demand.cols] = values
    return out


# ------------------------------------------------------------------ case table


@pytest.mark.parametrize(("algorithm", "demand", "s", "delta", "makespan", "splits"), PEER_CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hand_checked_cases(
    algorithm: str, demand: NDArray[np.float64], s: int, delta: float, makespan: float, splits: int, seed: int
) -> None:
    sched = ocsched.schedule(demand, switches=s, delta=delta, algorithm=algorithm, rng=seed)
    assert ocsched.validate(sched, demand).ok
    assert sched.makespan == pytest.approx(makespan, rel=1e-12)
    assert sched.splits == splits


def test_peers_are_listed_with_descriptions() -> None:
    listed = ocsched.algorithms()
    for name in PEERS:
        assert name in listed
        assert listed[name] and "\n" not in listed[name]


# ------------------------------------------------------------------ every peer validates


@pytest.mark.parametrize("algorithm", PEERS)
@pytest.mark.parametrize("kind", KINDS)
def test_peers_validate_on_seeded_inputs(algorithm: str, kind: str) -> None:
    for seed, (s, delta_rel) in enumerate(itertools.product((1, 3, 4), (0.0, 0.05))):
        d = make_demand(kind, 7, seed)
        delta = delta_rel * float(d.max())
        sched = ocsched.schedule(d, switches=s, delta=delta, algorithm=algorithm, rng=seed)
        report = ocsched.validate(sched, d)
        assert report.ok, (kind, s, delta, report.violations)
        assert sched.num_switches == s
        assert sched.makespan >= ocsched.lower_bound(d, switches=s, delta=delta) * (1 - 1e-9)


@settings(max_examples=15)
@given(data=st.data())
def test_peers_validate_property(data: st.DataObject) -> None:
    d = data.draw(demands(max_n=6))
    s = data.draw(st.integers(1, 5))
    delta = data.draw(deltas_for(d))
    algorithm = data.draw(st.sampled_from(PEERS))
    sched = ocsched.schedule(
        d, switches=s, delta=delta, algorithm=algorithm, rng=data.draw(st.integers(0, 99))
    )
    assert ocsched.validate(sched, d).ok


@pytest.mark.parametrize("algorithm", PEERS)
def test_peers_validate_on_a_larger_skewed_input(algorithm: str) -> None:
    d = make_demand("skewed", 24, 5)
    d /= max(d.sum(axis=0).max(), d.sum(axis=1).max())
    sched = ocsched.schedule(d, switches=4, delta=0.02, algorithm=algorithm, rng=3)
    assert ocsched.validate(sched, d).ok


@pytest.mark.parametrize("algorithm", RANDOMISED)
def test_same_seed_same_schedule(algorithm: str) -> None:
    d = make_demand("dense", 8, 11)
    a = ocsched.schedule(d, switches=4, delta=0.05, algorithm=algorithm, rng=7)
    b = ocsched.schedule(d, switches=4, delta=0.05, algorithm=algorithm, rng=7)
    assert a.same_as(b)


@pytest.mark.parametrize("order", ["index", "random"])
def test_baseline_seed_changes_the_split(order: Literal["index", "random"]) -> None:
    d = Demand.from_matrix(make_demand("dense", 8, 11))
    splits = [balanced_split(d, 4, rng=k, order=order) for k in range(6)]
    assert any(not np.array_equal(splits[0], other) for other in splits[1:])
    again = balanced_split(d, 4, rng=3, order=order)
    assert np.array_equal(again, splits[3])


@pytest.mark.parametrize("s", [2, 3, 4])
def test_baseline_switch_k_serves_sub_matrix_k(s: int) -> None:
    d = Demand.from_matrix(make_demand("sparse", 9, 4))
    sched = ocsched.schedule(d, switches=s, delta=0.1, algorithm="baseline", rng=21)
    parts = balanced_split(d, s, rng=21)
    for k, configs in enumerate(sched.switches):
        served = np.zeros((d.n, d.n))
        for c in configs:
            (i,) = np.nonzero(c.perm >= 0)
            served[i, c.perm[i]] += c.duration
        sub = _dense(d, parts[k])
        assert (served >= sub - 1e-12).all()
        assert (served[sub == 0] == 0).all()  # a switch serves nothing outside its sub-matrix
        on = parts[k] > 0
        dec = spectra_decompose(Demand(d.n, d.rows[on], d.cols[on], parts[k][on]))
        assert len(configs) == len(dec)


def test_naive_is_the_same_schedule_on_every_switch() -> None:
    d = make_demand("dense", 6, 2)
    sched = ocsched.schedule(d, switches=3, delta=0.1, algorithm="naive")
    first = sched.switches[0]
    for sw in sched.switches[1:]:
        assert len(sw) == len(first)
        assert all(a.same_as(b) for a, b in zip(sw, first, strict=True))


# ------------------------------------------------------------------ balanced split


SPLIT_KINDS = ("dense", "sparse", "skewed", "perm_sum", "wide_range", "single")


@pytest.mark.parametrize("order", ["index", "random"])
@pytest.mark.parametrize("kind", SPLIT_KINDS)
@pytest.mark.parametrize("s", [1, 2, 3, 4, 5, 8, 16])
def test_split_invariants(kind: str, s: int, order: Literal["index", "random"]) -> None:
    dm = make_demand(kind, 10, s)
    d = Demand.from_matrix(dm)
    parts = balanced_split(d, s, rng=s, order=order)
    assert parts.shape == (s, d.nnz)
    top = d.max_line_sum
    # entries within [0, D]
    assert (parts >= 0).all()
    assert (parts <= d.values[None, :]).all()
    # the parts add up to D
    total = parts.sum(axis=0)
    assert np.all(total >= d.values * (1 - 1e-12))
    assert np.allclose(total, d.values, rtol=1e-12, atol=0)
    # each part carries exactly 1/s of every line sum
    for values in parts:
        sub = _dense(d, values)
        assert np.abs(sub.sum(axis=1) - dm.sum(axis=1) / s).max() <= 1e-9 * top
        assert np.abs(sub.sum(axis=0) - dm.sum(axis=0) / s).max() <= 1e-9 * top
    # each of the s - 1 binary splits adds at most 2n - 1 split flows
    assert split_flows(parts) <= (s - 1) * (2 * d.n - 1)
    if s == 1:
        assert np.array_equal(parts[0], d.values)


def _is_forest(rows: NDArray[np.int64], cols: NDArray[np.int64], n: int) -> bool:
    parent = list(range(2 * n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        a, b = find(i), find(n + j)
        if a == b:
            return False
        parent[a] = b
    return True


@pytest.mark.parametrize("order", ["index", "random"])
@pytest.mark.parametrize("kind", ("dense", "sparse", "skewed", "ties"))
@pytest.mark.parametrize("share", [0.5, 1 / 3, 0.75])
def test_split_share_leaves_a_forest_of_split_flows(
    kind: str, share: float, order: Literal["index", "random"]
) -> None:
    dm = make_demand(kind, 12, 3)
    d = Demand.from_matrix(dm)
    y = split_share(d, share, rng=5, order=order)
    loose = (y > 0) & (y < d.values)
    assert loose.sum() <= 2 * d.n - 1
    assert _is_forest(d.rows[loose], d.cols[loose], d.n)
    sub = _dense(d, y)
    assert np.allclose(sub.sum(axis=1), share * dm.sum(axis=1), rtol=0, atol=1e-12 * d.max_line_sum)
    assert np.allclose(sub.sum(axis=0), share * dm.sum(axis=0), rtol=0, atol=1e-12 * d.max_line_sum)
    # the dense matrix has many cycles, so most flows must have become whole or empty
    if kind == "dense":
        assert loose.sum() < d.nnz


@pytest.mark.parametrize("order", ["index", "random"])
def test_split_share_hand_checked_cycle(order: Literal["index", "random"]) -> None:
    d = Demand.from_matrix(BLOCK)
    seen = set()
    for seed in range(12):
        y = split_share(d, 0.5, rng=seed, order=order)
        seen.add(tuple(y.tolist()))
    # values in row-major order (0,2)=1, (0,3)=3, (1,2)=3, (1,3)=1: the two directions of the cycle
    assert seen == {(1.0, 1.0, 1.0, 1.0), (0.0, 2.0, 2.0, 0.0)}


def test_split_without_cycles_halves_every_flow() -> None:
    d = Demand.from_matrix(SWAP)
    assert balanced_split(d, 4, rng=0).tolist() == [[0.5, 0.5]] * 4


def test_split_of_an_empty_demand() -> None:
    d = Demand.from_matrix(np.zeros((3, 3)))
    assert balanced_split(d, 3, rng=0).shape == (3, 0)


@pytest.mark.parametrize("parts", [0, -1, 1.5, "2", True])
def test_split_rejects_bad_parts(parts: object) -> None:
    with pytest.raises(InvalidInputError, match="parts"):
        balanced_split(Demand.from_matrix(SWAP), parts, rng=0)  # type: ignore[arg-type]


def test_split_rejects_unknown_order() -> None:
    with pytest.raises(InvalidInputError, match=r"`order`.*'sorted'"):
        balanced_split(Demand.from_matrix(SWAP), 2, order="sorted")  # type: ignore[arg-type]


def test_split_schedule_rejects_unknown_method() -> None:
    with pytest.raises(InvalidInputError, match=r"`method`.*'bvn'"):
        split_schedule(Demand.from_matrix(SWAP), switches=2, delta=0.1, method="bvn")  # type: ignore[arg-type]


@pytest.mark.parametrize("order", ["index", "random"])
def test_split_schedule_orders_both_validate(order: Literal["index", "random"]) -> None:
    d = make_demand("skewed", 12, 8)
    confs, splits = split_schedule(Demand.from_matrix(d), switches=4, delta=0.05, rng=2, order=order)
    sched = ocsched.Schedule(ports=12, delta=0.05, switches=confs, splits=splits)
    assert ocsched.validate(sched, d).ok


@pytest.mark.parametrize("share", [0, 1, -0.5, 1.5, float("nan"), "0.5"])
def test_split_share_rejects_bad_share(share: object) -> None:
    with pytest.raises(InvalidInputError, match="share"):
        split_share(Demand.from_matrix(SWAP), share, rng=0)  # type: ignore[arg-type]


# ------------------------------------------------------------------ Solstice and BvN


@pytest.mark.parametrize("kind", ("dense", "sparse", "skewed", "single", "wide_range"))
@pytest.mark.parametrize("seed", range(4))
def test_quick_stuff_gives_equal_line_sums(kind: str, seed: int) -> None:
    d = make_demand(kind, 9, seed)
    stuffed = quick_stuff(d)
    top = max(d.sum(axis=0).max(), d.sum(axis=1).max())
    assert (stuffed >= d).all()
    np.testing.assert_allclose(stuffed.sum(axis=0), top, rtol=1e-9)
    np.testing.assert_allclose(stuffed.sum(axis=1), top, rtol=1e-9)


def test_quick_stuff_raises_nonzeros_before_adding_entries() -> None:
    # Rows sum to 2, 1, 1 and columns to 1, 2, 1: raising the two 1s is enough.
    d = np.array([[0.0, 2, 0], [0, 0, 1], [1, 0, 0]])
    assert quick_stuff(d).tolist() == [[0, 2, 0], [0, 0, 2], [2, 0, 0]]
    # Nothing to raise: the zero between the row and the column with slack gets the entry.
    assert quick_stuff(np.array([[0.0, 1], [0, 0]])).tolist() == [[0, 1], [1, 0]]
    assert quick_stuff(np.zeros((2, 2))).tolist() == [[0, 0], [0, 0]]


@pytest.mark.parametrize("slicer", [solstice_slices, bvn_slices])
@pytest.mark.parametrize("kind", ("dense", "sparse", "skewed", "perm_sum", "wide_range"))
def test_slices_are_perfect_matchings_on_the_stuffed_matrix(slicer: object, kind: str) -> None:
    for seed in range(3):
        stuffed = quick_stuff(make_demand(kind, 8, seed))
        perms, w = slicer(stuffed)  # type: ignore[operator]
        n = stuffed.shape[0]
        assert perms.shape == (w.size, n)
        assert (w > 0).all()
        for p in perms:
            assert sorted(p.tolist()) == list(range(n))  # perfect
            assert (stuffed[np.arange(n), p] > 0).all()  # on the stuffed matrix
        rebuilt = np.zeros_like(stuffed)
        for p, x in zip(perms, w, strict=True):
            rebuilt[np.arange(n), p] += x
        np.testing.assert_allclose(rebuilt, stuffed, rtol=0, atol=1e-9 * stuffed.max())


@pytest.mark.parametrize("seed", range(6))
def test_bvn_takes_the_max_bottleneck_matching(seed: int) -> None:
    n = 5
    stuffed = quick_stuff(make_demand("dense", n, seed))
    _, w = bvn_slices(stuffed)
    best = max(min(stuffed[i, p[i]] for i in range(n)) for p in itertools.permutations(range(n)))
    assert w[0] == pytest.approx(best, rel=1e-12)
    assert (np.diff(w) <= 1e-12 * w[0]).all()  # bottlenecks never increase


def test_solstice_slices_by_powers_of_two() -> None:
    # Largest entry 5 -> r = 4: the matching of 5s first (duration 5), then r halves to 1.
    perms, w = solstice_slices([[5.0, 1], [1, 5]])
    assert perms.tolist() == [[0, 1], [1, 0]]
    assert w.tolist() == [5.0, 1.0]


def test_solstice_drops_stuffing_circuits() -> None:
    d = Demand.from_matrix([[0, 1, 0], [0, 0, 0], [0, 0, 0]])
    dec = solstice_decompose(d)
    assert dec.perms.tolist() == [[1, -1, -1]]
    assert dec.weights.tolist() == [1.0]


@pytest.mark.parametrize(
    "bad", [[[1, -1], [0, 0]], [[1, 2, 3]], [[np.inf, 0], [0, 0]], np.zeros((0, 0)), [["a", "b"], ["c", "d"]]]
)
@pytest.mark.parametrize("func", [quick_stuff, solstice_slices, bvn_slices])
def test_stuff_and_slices_reject_bad_matrices(bad: object, func: object) -> None:
    with pytest.raises(InvalidInputError, match=r"`(matrix|stuffed)`"):
        func(bad)  # type: ignore[operator]


# ------------------------------------------------------------------ Eclipse


def test_eclipse_candidates_are_all_values_when_few() -> None:
    vals = np.arange(1.0, 41.0)
    assert _eclipse_candidates(vals) == list(range(40))
    many = np.sort(np.random.default_rng(0).uniform(1e-3, 1.0, 500))
    cand = _eclipse_candidates(many)
    assert cand[0] == 0 and cand[-1] == 499
    assert len(cand) < 100


def test_eclipse_serves_everything_with_many_distinct_values() -> None:
    d = Demand.from_matrix(make_demand("dense", 20, 1))  # 380 distinct values: coarse candidates
    dec = eclipse_decompose(d, delta=0.05)
    assert (dec.coverage(d) >= d.values * (1 - 1e-12)).all()
    assert (dec.perms >= 0).any(axis=1).all()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("delta", [0.0, 0.05, 1.0])
def test_eclipse_first_step_is_the_brute_force_best(seed: int, delta: float) -> None:
    n = 4
    dm = make_demand("dense", n, seed)
    d = Demand.from_matrix(dm)
    dec = eclipse_decompose(d, delta=delta)
    served = np.minimum(dm[np.arange(n), np.maximum(dec.perms[0], 0)], dec.weights[0]) * (dec.perms[0] >= 0)
    got = served.sum() / (dec.weights[0] + delta)
    best = max(
        sum(min(dm[i, p[i]], a) for i in range(n)) / (a + delta)
        for a in np.unique(dm[dm > 0])
        for p in itertools.permutations(range(n))
    )
    assert got == pytest.approx(best, rel=1e-9)


def test_eclipse_rejects_negative_delta() -> None:
    with pytest.raises(InvalidInputError, match="delta"):
        eclipse_decompose(Demand.from_matrix(SWAP), delta=-1.0)


# ------------------------------------------------------------------ a full-size input


@pytest.mark.parametrize("algorithm", PEERS)
def test_peers_on_the_standard_benchmark(algorithm: str) -> None:
    from ocsched.workloads.standard import standard

    d = standard(n=100, rng=0)
    sched = ocsched.schedule(d, switches=16, delta=0.04, algorithm=algorithm, rng=0)
    assert ocsched.validate(sched, d).ok


def _reference_split_share(demand: Demand, share: float, seed: int, order: str) -> np.ndarray:
    """The straightforward walk (dicts and lists) that the compiled one in split.py replaced."""
    gen = np.random.default_rng(seed)
    n, x, y = demand.n, demand.values, demand.values * share
    us, vs = demand.rows.tolist(), (demand.cols + n).tolist()
    shuffle = order == "random"
    adj: list[dict[int, None]] = [{} for _ in range(2 * n)]
    for e in (gen.permutation(x.size) if shuffle else np.arange(x.size)).tolist():
        adj[us[e]][e] = None
        adj[vs[e]][e] = None

    def drop(f: int) -> None:
        del adj[us[f]][f]
        del adj[vs[f]][f]

    pos = [-1] * (2 * n)
    for start in (gen.permutation(2 * n) if shuffle else np.arange(2 * n)).tolist():
        if not adj[start]:
            continue
        path, edges = [start], []
        pos[start] = 0
        while path:
            a = path[-1]
            came = edges[-1] if edges else -1
            nxt = next((f for f in adj[a] if f != came), -1)
            if nxt < 0:
                pos[a] = -1
                path.pop()
                if edges:
                    drop(edges.pop())
                continue
            b = us[nxt] + vs[nxt] - a
            if pos[b] < 0:
                pos[b] = len(path)
                path.append(b)
                edges.append(nxt)
                continue
            p0 = pos[b]
            cyc = np.array([*edges[p0:], nxt])
            sign = np.where(np.arange(cyc.size) % 2 == 0, 1.0, -1.0)
            if gen.random() < 0.5:
                sign = -sign
            room = np.where(sign > 0, x[cyc] - y[cyc], y[cyc])
            k = int(np.argmin(room))
            yc, xc = y[cyc] + sign * float(room[k]), x[cyc]
            yc[k] = xc[k] if sign[k] > 0 else 0.0
            low, high = yc <= 1e-12 * xc, xc - yc <= 1e-12 * xc
            yc[low], yc[high] = 0.0, xc[high]
            y[cyc] = yc
            tight = set(cyc[low | high].tolist())
            for f in tight:
                drop(f)
            cut = next((k for k in range(p0, len(edges)) if edges[k] in tight), None)
            if cut is not None:
                for node in path[cut + 1 :]:
                    pos[node] = -1
                del path[cut + 1 :]
                del edges[cut:]
    return y


@pytest.mark.parametrize("order", ["index", "random"])
@pytest.mark.parametrize(("kind", "n", "seed"), [("dense", 12, 0), ("sparse", 30, 1), ("skewed", 40, 2)])
def test_compiled_split_walk_equals_the_straightforward_one(
    kind: str, n: int, seed: int, order: Literal["index", "random"]
) -> None:
    dem = Demand.from_matrix(make_demand(kind, n, seed))
    for share in (0.5, 0.25):
        got = split_share(dem, share, rng=seed, order=order)
        assert np.array_equal(got, _reference_split_share(dem, share, seed, order))


@given(
    m=st.integers(1, 5).flatmap(
        lambda n: st.lists(
            st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.0, 3.5]), min_size=n, max_size=n),
            min_size=n,
            max_size=n,
        )
    ),
    cap=st.sampled_from([1.0, 2.0, 10.0]),
    warm=st.integers(0, 2),
)
def test_compiled_bottleneck_matches_brute_force(m: list[list[float]], cap: float, warm: int) -> None:
    from ocsched.decompose._bottleneck import bottleneck

    a = np.array(m)
    n = a.shape[0]
    rows, cols = np.nonzero(a)
    vals = a[rows, cols]
    # brute force: the best smallest entry over perfect matchings, among the values <= cap
    cands = [v for v in np.unique(vals) if v <= cap]
    want = max(
        (
            v
            for v in cands
            for p in itertools.permutations(range(n))
            if all(a[i, p[i]] >= v for i in range(n))
        ),
        default=None,
    )
    start = [None, np.arange(n)[::-1].copy(), np.full(n, -1)][warm]  # any warm start, even a bad one
    assert bottleneck(n, rows.astype(np.int64), cols.astype(np.int64), vals, cap, warm=start) == want
