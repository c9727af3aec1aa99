"""Lower bounds: hand-checked cases, dominance, monotonicity, scaling."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ocsched
from cases import CASES, Case
from ocsched.bounds import degree_bound, line_bound, line_packing_bound, lower_bound, refined_bound
from ocsched.exact import optimal_split
from ocsched.model import Demand
from ocsched.schedulers import SCHEDULERS
from strategies import deltas_for, demands, line_entries


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_table(case: Case) -> None:
    assert lower_bound(case.demand, switches=case.switches, delta=case.delta) == pytest.approx(
        case.bound, rel=1e-9, abs=1e-12
    )


@pytest.mark.parametrize("case", [c for c in CASES if c.optimum is not None], ids=lambda c: c.name)
def test_bound_never_above_a_known_optimum(case: Case) -> None:
    assert case.optimum is not None
    assert lower_bound(case.demand, switches=case.switches, delta=case.delta) <= case.optimum * (1 + 1e-9)


def test_hand_computed_line_and_degree_bounds() -> None:
    d = Demand.from_matrix([[0, 1, 1], [0, 0, 0], [0, 0, 0]])
    assert line_bound(d, switches=3, delta=0.1) == pytest.approx((2 + 0.3) / 3)
    assert degree_bound(d, switches=3, delta=0.1) == pytest.approx(0.1)
    assert degree_bound(d, switches=1, delta=0.1) == pytest.approx(0.2)
    assert refined_bound(d, switches=3, delta=0.1) == pytest.approx(0.8, rel=1e-9)


@given(d=demands(), s=st.integers(1, 8), delta=st.sampled_from([0.0, 0.01, 0.2, 2.0]))
def test_refined_dominates_and_is_monotone(d: np.ndarray, s: int, delta: float) -> None:
    dem = Demand.from_matrix(d)
    r = refined_bound(dem, switches=s, delta=delta)
    assert r >= line_bound(dem, switches=s, delta=delta) * (1 - 1e-12)
    assert r >= degree_bound(dem, switches=s, delta=delta) * (1 - 1e-12)
    lb = lower_bound(dem, switches=s, delta=delta)
    # more delay never helps; more switches never hurt
    assert lower_bound(dem, switches=s, delta=delta + 0.1) >= lb * (1 - 1e-9)
    assert lower_bound(dem, switches=s + 1, delta=delta) <= lb * (1 + 1e-9)
    # scaling time scales the bound
    assert lower_bound(dem.scaled(3.0), switches=s, delta=3 * delta) == pytest.approx(3 * lb, rel=1e-9)


def test_zero_demand_bound_is_zero() -> None:
    assert ocsched.lower_bound(np.zeros((4, 4)), switches=2, delta=1.0) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"switches": 0, "delta": 0.1}, "switches"),
        ({"switches": 2.5, "delta": 0.1}, "switches"),
        ({"switches": 2, "delta": -0.1}, "delta"),
        ({"switches": 2, "delta": float("nan")}, "delta"),
    ],
)
def test_bad_arguments(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ocsched.InvalidInputError, match=match):
        ocsched.lower_bound([[0, 1], [1, 0]], **kwargs)  # type: ignore[arg-type]


# --- packing bound (ocsched.bounds.packing) ----------------------------------------------------


def test_packing_bound_hand_case_is_the_line_optimum() -> None:
    # Seven entries of 1/7 on four switches: below 2/7 + 2 delta no switch holds two whole
    # entries, and splitting enough of them costs more; at 2/7 + 2 delta three switches hold two
    # entries and one holds one, so the bound is the line's optimum.
    got = line_packing_bound(np.full(7, 1 / 7), switches=4, delta=0.08)
    assert got == pytest.approx(2 / 7 + 0.16, rel=1e-8)
    assert got <= 2 / 7 + 0.16
    d = Demand.from_matrix(np.full((8, 8), 1 / 7) - np.eye(8) / 7)
    assert lower_bound(d, switches=4, delta=0.08) == pytest.approx(0.39)
    assert lower_bound(d, switches=4, delta=0.08, strong=True) == pytest.approx(2 / 7 + 0.16, rel=1e-8)


def test_packing_bound_three_equal_entries_on_two_switches() -> None:
    # Line bound (3 + 3 * 0.5) / 2 = 2.25. Two whole entries on one switch need 3; otherwise an
    # entry is split and the fourth delay gives (3 + 4 * 0.5) / 2 = 2.5, the optimum.
    d = Demand.from_matrix([[0, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert lower_bound(d, switches=2, delta=0.5) == pytest.approx(2.25)
    assert lower_bound(d, switches=2, delta=0.5, strong=True) == pytest.approx(2.5, rel=1e-8)
    assert optimal_split([1.0, 1.0, 1.0], 2, 0.5).makespan == pytest.approx(2.5)


@settings(max_examples=60, deadline=None)
@given(d=line_entries(), s=st.integers(1, 4), delta=st.sampled_from([0.0, 0.01, 0.05, 0.2, 1.0]))
def test_line_packing_bound_never_above_the_line_optimum(d: np.ndarray, s: int, delta: float) -> None:
    # One line alone is exactly the problem optimal_split solves (its entries as permutations):
    # the bound must never beat that optimum, and never fall below the refined bound.
    opt = optimal_split(d, s, delta)
    got = line_packing_bound(d, switches=s, delta=delta)
    if opt.status == "optimal":
        assert got <= opt.makespan * (1 + 1e-7) + 1e-12
    assert got <= opt.makespan * (1 + 1e-7) + 1e-12 or got <= opt.dual_bound * (1 + 1e-7) + 1e-12
    dem = Demand.from_matrix(np.vstack([np.concatenate([[0.0], d]), np.zeros((d.size, d.size + 1))]))
    strong = lower_bound(dem, switches=s, delta=delta, strong=True)
    assert strong >= lower_bound(dem, switches=s, delta=delta) * (1 - 1e-12)


@settings(max_examples=20, deadline=None)
@given(d=demands(max_n=6), s=st.integers(1, 6), data=st.data())
def test_strong_bound_below_every_heuristic(d: np.ndarray, s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    strong = lower_bound(d, switches=s, delta=delta, strong=True)
    assert strong >= lower_bound(d, switches=s, delta=delta) * (1 - 1e-12)
    for name, sch in SCHEDULERS.items():
        if sch.max_ports is not None:
            continue
        if sch.requires:  # a scheduler for another fabric model
            continue
        ms = ocsched.schedule(d, switches=s, delta=delta, algorithm=name).makespan
        assert strong <= ms * (1 + 1e-9) + 1e-12, name


def test_refined_bound_with_entries_far_below_delta() -> None:
    # An entry below delta's ulp puts a breakpoint delta + d_e / j at delta itself in floats; it
    # used to raise "tau must exceed delta" from schedule() (hypothesis, delta 1e15, entry 0.0625).
    d = np.array([[0.0, 1.0], [0.0625, 0.0]])
    lb = ocsched.lower_bound(d, switches=2, delta=1e15)
    s = ocsched.schedule(d, switches=2, delta=1e15, algorithm="spectra-pack")
    assert 1e15 < lb <= s.makespan and ocsched.validate(s, d).ok
