"""slot_bound: never above the line optimum, a heuristic or the exact optimum; tight on a hand case."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ocsched
from ocsched.bounds import band_bound, line_bound, line_slot_bound, lower_bound, packing_bound, slot_bound
from ocsched.exact import optimal_split
from ocsched.model import Demand, as_demand
from ocsched.schedulers import SCHEDULERS
from ocsched.workloads import generate
from strategies import deltas_for, demands, line_entries


@st.composite
def small_and_large(draw: st.DrawFn) -> np.ndarray:
    """Many similar small entries and a few large ones: the shape where the slot bound rises."""
    k_small = draw(st.integers(1, 7))
    k_large = draw(st.integers(0, 3))
    small = draw(st.floats(0.05, 0.3))
    large = draw(st.floats(1.0, 4.0)) * small
    jitter = draw(st.lists(st.floats(1.0, 1.3), min_size=k_small + k_large, max_size=k_small + k_large))
    return np.array([small] * k_small + [large] * k_large) * np.array(jitter)


def test_hand_case_is_the_line_optimum() -> None:
    d = np.concatenate([np.full(60, 0.97 / 60), [0.05, 0.05, 0.05]])
    line = (d.sum() + 63 * 0.04) / 16
    got = line_slot_bound(d, switches=16, delta=0.04, start=line)
    # A switch holding a large entry and three small ones: the schedule that reaches it.
    assert got == pytest.approx(0.05 + 3 * 0.97 / 60 + 4 * 0.04, rel=1e-5)
    assert got <= 0.05 + 3 * 0.97 / 60 + 4 * 0.04


def test_nothing_to_add_returns_start() -> None:
    d = np.full(4, 0.25)
    assert line_slot_bound(d, switches=4, delta=0.1, start=0.35) == 0.35
    assert line_slot_bound(d, switches=4, delta=0.0, start=0.25) == 0.25
    assert slot_bound(Demand.from_matrix(np.zeros((3, 3))), switches=2, delta=0.1, start=0.0) == 0.0


@settings(max_examples=60, deadline=None)
def _never_above_the_line_optimum(d: np.ndarray, s: int, delta: float) -> None:
    # One line alone is exactly what optimal_split solves (its entries as permutations): the bound,
    # from any start at or below the optimum's proven floor, must never exceed the optimum.
    opt = optimal_split(d, s, delta)
    start = (float(d.sum()) + delta * max(d.size, s)) / s  # the line bound
    got = line_slot_bound(d, switches=s, delta=delta, start=start)
    assert got <= opt.makespan * (1 + 1e-7) + 1e-12


@settings(max_examples=25)
@given(
    d=line_entries(max_k=4) | small_and_large(),
    s=st.integers(1, 4),
    delta=st.sampled_from([0.01, 0.05, 0.2, 1.0]),
)
def test_never_above_the_line_optimum(d: np.ndarray, s: int, delta: float) -> None:
    _never_above_the_line_optimum(d, s, delta)


@pytest.mark.slow
@given(
    d=line_entries(max_k=7) | small_and_large(),
    s=st.integers(1, 4),
    delta=st.sampled_from([0.01, 0.05, 0.2, 1.0]),
)
def test_never_above_the_line_optimum_up_to_seven_entries(d: np.ndarray, s: int, delta: float) -> None:
    _never_above_the_line_optimum(d, s, delta)


@settings(max_examples=20, deadline=None)
@given(d=demands(max_n=6), s=st.integers(1, 6), data=st.data())
def test_strong_bound_below_every_heuristic(d: np.ndarray, s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    strong = lower_bound(d, switches=s, delta=delta, strong=True)
    for name, sch in SCHEDULERS.items():
        if sch.max_ports is not None or sch.requires:
            continue
        assert (
            strong
            <= ocsched.schedule(d, switches=s, delta=delta, algorithm=name).makespan * (1 + 1e-9) + 1e-12
        )


@pytest.mark.parametrize(("s", "delta"), [(16, 0.04), (16, 0.08)])
def test_rises_on_dense_moe_with_many_switches(s: int, delta: float) -> None:
    dem = as_demand(generate("moe", gpus=64, rng=0, normalize=True))
    others = max(
        line_bound(dem, switches=s, delta=delta),
        packing_bound(dem, switches=s, delta=delta),
        band_bound(dem, switches=s, delta=delta),
    )
    got = slot_bound(dem, switches=s, delta=delta, start=others)
    assert got > 1.02 * others
    sch = ocsched.schedule(dem, switches=s, delta=delta, algorithm="spectra-opt")
    assert got <= sch.makespan
