"""band_bound: never above a valid schedule (heuristic or exact), dominates the line bound, wired in."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ocsched
from helpers import exact_without_strong_bounds
from ocsched.bounds import band_bound, line_bound, lower_bound
from ocsched.fabric import Fabric
from ocsched.model import Demand, as_demand
from ocsched.schedulers import SCHEDULERS
from ocsched.workloads import generate
from strategies import deltas_for, demands

# Dense matrices with entries of mixed sizes: the shape where the band bound rises above the
# line bounds (each line's large entries at different ranks).
_ENTRY = st.floats(0.05, 1.0, allow_nan=False, allow_infinity=False)


@st.composite
def dense_mixed(draw: st.DrawFn, max_n: int = 4) -> np.ndarray:
    n = draw(st.integers(2, max_n))
    d = draw(hnp.arrays(np.float64, (n, n), elements=_ENTRY))
    np.fill_diagonal(d, 0.0)
    return d


def test_hand_case_is_the_optimum() -> None:
    d = Demand.from_matrix([[0, 4, 1], [2.5, 0, 2.5], [2.5, 1, 0]])
    assert band_bound(d, switches=1, delta=1.0) == pytest.approx(8.0, rel=1e-12)
    assert line_bound(d, switches=1, delta=1.0) == pytest.approx(7.0, rel=1e-12)
    assert exact_without_strong_bounds(d, 1, 1.0, 30).makespan == pytest.approx(8.0, rel=1e-7)
    assert lower_bound(d, switches=1, delta=1.0, strong=True) == pytest.approx(8.0, rel=1e-12)


def test_zero_demand_and_zero_delta() -> None:
    assert band_bound(Demand.from_matrix(np.zeros((3, 3))), switches=2, delta=0.1) == 0.0
    d = Demand.from_matrix([[0, 4, 1], [2.5, 0, 2.5], [2.5, 1, 0]])
    assert band_bound(d, switches=2, delta=0.0) == pytest.approx(2.5)  # the largest line sum / s


@settings(max_examples=40, deadline=None)
@given(d=demands(), s=st.integers(1, 8), data=st.data())
def test_dominates_the_line_bound(d: np.ndarray, s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    dem = as_demand(d)
    assert band_bound(dem, switches=s, delta=delta) >= line_bound(dem, switches=s, delta=delta) * (1 - 1e-12)


@settings(max_examples=25, deadline=None)
@given(d=demands(max_n=6) | dense_mixed(max_n=6), s=st.integers(1, 6), data=st.data())
def test_below_every_heuristic(d: np.ndarray, s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    bound = band_bound(as_demand(d), switches=s, delta=delta)
    for name, sch in SCHEDULERS.items():
        if sch.max_ports is not None or sch.requires:  # exact-only or another fabric model
            continue
        ms = ocsched.schedule(d, switches=s, delta=delta, algorithm=name).makespan
        assert bound <= ms * (1 + 1e-9) + 1e-12, name


@settings(max_examples=12, deadline=None)
@given(d=dense_mixed(max_n=3), s=st.integers(1, 2), delta=st.sampled_from([0.02, 0.2, 1.0]))
def test_below_the_exact_optimum_dense(d: np.ndarray, s: int, delta: float) -> None:
    res = exact_without_strong_bounds(d, s, delta, 20)
    if res.optimal:
        assert band_bound(as_demand(d), switches=s, delta=delta) <= res.makespan * (1 + 1e-7) + 1e-12


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(d=demands(max_n=4) | dense_mixed(max_n=4), s=st.integers(1, 3), data=st.data())
def test_strong_bound_below_the_exact_optimum(d: np.ndarray, s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    res = exact_without_strong_bounds(d, s, delta, 30)
    if res.optimal:
        assert lower_bound(d, switches=s, delta=delta, strong=True) <= res.makespan * (1 + 1e-7) + 1e-12


def test_rises_above_the_line_bounds_on_dense_moe() -> None:
    # Not only the hand case: a generated 16-GPU MoE matrix (dense, skewed columns).
    m = generate("moe", gpus=16, rng=3, normalize=True)
    dem = as_demand(m)
    weak = lower_bound(dem, switches=4, delta=0.02)
    assert band_bound(dem, switches=4, delta=0.02) > weak * 1.001


@pytest.mark.parametrize("s", [1, 2, 4])
@pytest.mark.parametrize("delta", [0.01, 0.1, 1.0])
def test_left_out_under_partial_reconfiguration(s: int, delta: float) -> None:
    # Kept circuits stay lit through a partial reconfiguration, so a schedule can beat the band
    # bound there (Spectra's own schedules do, on s = 1); the strong bound must not use it.
    m = generate("moe", gpus=16, rng=0, normalize=True)
    fab = Fabric.uniform(s, delta, model="partial")
    strong = lower_bound(m, fabric=fab, strong=True)
    for name in ("spectra", "spectra-pack", "spectra-partial"):
        assert strong <= ocsched.schedule(m, fabric=fab, algorithm=name).makespan * (1 + 1e-9)


def test_partial_schedules_can_beat_the_band_bound() -> None:
    # Why it is left out: the all-stop argument fails under the partial model.
    m = generate("moe", gpus=16, rng=0, normalize=True)
    fab = Fabric.uniform(1, 0.1, model="partial")
    ms = ocsched.schedule(m, fabric=fab, algorithm="spectra").makespan
    assert ms < band_bound(as_demand(m), switches=1, delta=0.1)
