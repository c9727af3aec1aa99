"""spectra-seq's carry run: permutations planned to end one phase and start the next."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from ocsched.decompose import decompose
from ocsched.fabric import Fabric
from ocsched.iteration import Iteration, IterationSchedule
from ocsched.model import Configuration, Demand
from ocsched.sequence import schedule_iteration, validate_iteration
from ocsched.sequence._common import BaseSchedules, perm_key
from ocsched.sequence.carry import can_carry, carried_out, carry
from ocsched.sequence.placement import joint, rebalance
from ocsched.sequence.seq import Seq
from ocsched.workloads.iteration import moe_iteration


@st.composite
def neighbours(draw: st.DrawFn) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two n x n matrices with zero diagonals and some holes, the second near the first or its transpose."""
    n = draw(st.integers(3, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = rng.random((n, n)) * (rng.random((n, n)) > draw(st.sampled_from([0.0, 0.2, 0.5])))
    np.fill_diagonal(a, 0.0)
    b = (a.T if draw(st.booleans()) else a) * rng.uniform(0.5, 1.5, (n, n))
    return a, b


def covered_by(perms: list[NDArray[np.int64]], n: int) -> NDArray[np.bool_]:
    out = np.zeros((n, n), dtype=bool)
    for p in perms:
        on = np.nonzero(p >= 0)[0]
        assert not out[on, p[on]].any(), "permutations overlap"
        out[on, p[on]] = True
    return out


@given(pair=neighbours(), count=st.integers(0, 9), hole=st.booleans())
def test_carried_out_are_disjoint_perfect_matchings_of_shared_nonzeros(
    pair: tuple[NDArray[np.float64], NDArray[np.float64]], count: int, hole: bool
) -> None:
    a, b = pair
    n = a.shape[0]
    taken = np.zeros((n, n), dtype=bool)
    if hole:
        taken[0, :] = np.arange(n) % 2 == 1  # an earlier phase's carried entries
    out = carried_out(a, b, taken, count)
    assert len(out) <= count
    cov = covered_by(out, n)
    assert not (cov & taken).any()
    for p in out:
        assert sorted(p.tolist()) == list(range(n))  # a perfect matching
        assert (a[np.arange(n), p] > 0).all() and (b[np.arange(n), p] > 0).all()


def test_carried_out_takes_the_small_entries() -> None:
    # Entries 1 on the cyclic shift by one, 9 elsewhere (off the diagonal): the carried permutation
    # is the shift, whose weight is 1 in both phases; the 9s are left to the free decomposition.
    n = 5
    a = np.full((n, n), 9.0) - 8.0 * np.roll(np.eye(n), 1, axis=1)
    np.fill_diagonal(a, 0.0)
    (p,) = carried_out(a, a.copy(), np.zeros((n, n), dtype=bool), 1)
    assert p.tolist() == [1, 2, 3, 4, 0]


def test_can_carry_needs_a_perfect_matching_of_shared_nonzeros() -> None:
    dense = np.ones((4, 4)) - np.eye(4)
    assert can_carry(Demand.from_matrix(dense), Demand.from_matrix(dense.T))
    # Every line has a shared nonzero, but rows 0 and 2 have only column 1: no perfect matching.
    hall = np.array([[0, 1, 0, 0], [1, 0, 1, 1], [0, 1, 0, 0], [1, 0, 1, 0]])
    assert not can_carry(Demand.from_matrix(dense), Demand.from_matrix(hall))
    assert can_carry(Demand.from_matrix(dense), Demand.from_matrix(hall + np.eye(4)[[3, 2, 0, 1]]))
    ring = np.roll(np.eye(4), 1, axis=1)
    assert not can_carry(Demand.from_matrix(ring), Demand.from_matrix(ring.T))  # nothing shared
    assert not can_carry(Demand.from_matrix(np.zeros((4, 4))), Demand.from_matrix(dense))


@given(pair=neighbours(), count=st.integers(0, 4), keep=st.integers(0, 2))
def test_carry_serves_the_demand_with_the_held_first_and_the_tails_apart(
    pair: tuple[NDArray[np.float64], NDArray[np.float64]], count: int, keep: int
) -> None:
    a, b = pair
    demand, following = Demand.from_matrix(a), Demand.from_matrix(b)
    held_perms = list(decompose(demand).perms[:keep]) if demand.nnz else []
    held: list[Configuration | None] = [Configuration(0.0, 1.0, p) for p in held_perms] + [None]
    got = carry(demand, following, held, "spectra", 0.1, count)
    if got is None:
        assert demand.nnz == 0 or (not held_perms and not carried_out(a, b, np.zeros(a.shape, bool), count))
        return
    pieces, tails = got
    assert len(tails) <= count
    served = np.zeros_like(a)
    for p, w in pieces + tails:
        on = np.nonzero(p >= 0)[0]
        served[on, p[on]] += w
    assert (served >= a * (1 - 1e-9) - 1e-12).all()
    keys = [perm_key(p) for p, _ in pieces]
    useful = [q for q in held_perms if (a[np.arange(a.shape[0]), q] > 0).sum() * 2 >= (q >= 0).sum()]
    assert keys[: len(useful)] == [perm_key(q) for q in useful]  # the held permutations come first


@settings(max_examples=50)
@given(
    loads=st.lists(st.floats(0.0, 3.0), min_size=2, max_size=6),
    sizes=st.lists(st.floats(0.01, 2.0), min_size=1, max_size=14),
    ntails=st.integers(0, 6),
    delta=st.sampled_from([0.0, 0.1, 1.0]),
)
def test_rebalance_keeps_every_piece_and_never_raises_the_largest_load(
    loads: list[float], sizes: list[float], ntails: int, delta: float
) -> None:
    s = len(loads)
    ntails = min(ntails, s, len(sizes))
    perms = [np.full(3, i, dtype=np.int64) for i in range(len(sizes))]  # labels only
    last: list[tuple[NDArray[np.int64], float] | None] = [None] * s
    for t in range(ntails):
        last[t] = (perms[t], sizes[t])
    placed: list[list[list[Any]]] = [[] for _ in range(s)]
    for i in range(ntails, len(sizes)):
        placed[i % s].append([perms[i], sizes[i]])
    base = np.array(loads)

    def load_of(b: int) -> float:
        body = sum(delta + float(w) for _, w in placed[b])
        tail = last[b]
        return float(base[b] + body + (0.0 if tail is None else delta + tail[1]))

    load = np.array([load_of(b) for b in range(s)])
    before = float(load.max())
    rebalance(placed, last, load, np.arange(s), delta)
    assert float(load.max()) <= before + 1e-12
    assert np.allclose(load, [load_of(b) for b in range(s)])  # its loads are the pieces' loads
    labels = sorted(int(p[0]) for sw in placed for p, _ in sw) + [int(t[0][0]) for t in last if t]
    assert sorted(labels) == list(range(len(sizes)))


def test_joint_puts_each_tail_last_on_its_own_switch() -> None:
    n = 4
    shift = [np.roll(np.arange(n), k).astype(np.int64) for k in range(1, n)]
    pieces = [(shift[0], 0.5), (shift[1], 0.2)]
    tails = [(np.array([1, 0, 3, 2]), 0.1), (np.array([2, 3, 0, 1]), 0.3)]
    plan = joint(pieces, [None, None, None], np.zeros(3), 1.0, set(), tails=tails)
    ends = [perm_key(sw[-1][0]) for sw in plan if sw]
    for p, _ in tails:
        assert ends.count(perm_key(p)) == 1


def run_carrying(it: Iteration, s: int, delta: float) -> IterationSchedule:
    """The carry run alone (spectra-seq keeps it only when it ends earlier than its first run)."""
    fabric = Fabric.uniform(s, delta)
    cached = BaseSchedules("spectra", fabric, None)
    tagged = Seq(it, fabric, cached, "spectra", carrying=True).run()
    return IterationSchedule(
        ports=it.n,
        delta=delta,
        switches=tuple(tuple(c for _, c in sw) for sw in tagged),
        phase_of=tuple(tuple(k for k, _ in sw) for sw in tagged),
        gaps=it.gaps,
        names=it.names,
        algorithm="carry",
    )


@settings(max_examples=30, deadline=None)
@given(
    pair=neighbours(),
    phases=st.integers(1, 5),
    s=st.integers(1, 4),
    delta=st.sampled_from([0.0, 0.05, 1.0]),
    gap=st.sampled_from([0.0, 0.0, 0.5]),
)
def test_carry_run_is_valid(
    pair: tuple[NDArray[np.float64], NDArray[np.float64]], phases: int, s: int, delta: float, gap: float
) -> None:
    a, b = pair
    it = Iteration.from_matrices([a if k % 2 == 0 else b for k in range(phases)], gaps=gap)
    rep = validate_iteration(run_carrying(it, s, delta), it)
    assert rep.ok, rep.violations


def test_carrying_is_what_spectra_seq_keeps_on_moe_layers_without_gaps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    it = moe_iteration(gpus=16, layers=4, gaps=0.0, rng=1)
    carried = run_carrying(it, 4, 1e-3)
    seq = schedule_iteration(it, switches=4, delta=1e-3)
    assert validate_iteration(carried, it).ok
    assert seq.makespan == pytest.approx(carried.makespan, rel=1e-12)
    monkeypatch.setattr(Seq, "carry_candidate", lambda *args: None)
    without = schedule_iteration(it, switches=4, delta=1e-3)
    assert seq.makespan < 0.97 * without.makespan
