"""Lower bounds: hand-checked cases, dominance, monotonicity, scaling."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ocsched
from cases import CASES, Case
from ocsched.bounds import degree_bound, line_bound, lower_bound, refined_bound
from ocsched.model import Demand
from strategies import demands


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
