"""Drift models for the generators: exact relative L1 steps, default off (byte-identical)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocsched.errors import InvalidInputError
from ocsched.online import relative_l1
from ocsched.workloads import generate
from ocsched.workloads.drift import drift_step


def test_moe_without_drift_is_byte_identical() -> None:
    plain = generate("moe", gpus=16, rng=3)
    for options in ({"drift": 0.0, "step": 7}, {"drift": 0.3, "step": 0}):
        assert generate("moe", gpus=16, rng=3, **options).tobytes() == plain.tobytes()


@pytest.mark.parametrize("drift", [0.025, 0.1, 0.3])
def test_moe_steps_are_the_drift_apart(drift: float) -> None:
    mats = [generate("moe", gpus=16, rng=1, drift=drift, step=t) for t in range(4)]
    for before, after in itertools.pairwise(mats):
        assert relative_l1(before, after) == pytest.approx(drift, rel=1e-9)
        assert ((after > 0) == (before > 0)).all()


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 2.0), st.integers(0, 2**32 - 1))
def test_drift_step_keeps_support_and_sign(drift: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = rng.random((6, 6)) * (rng.random((6, 6)) < 0.6)
    out = drift_step(m, drift, np.random.default_rng(seed))
    assert (out >= 0).all() and ((out > 0) <= (m > 0)).all()
    if m.any():
        # Rounding of m + lam (noisy - m) is relative to the entries, so to ||m||, not to drift.
        assert relative_l1(m, out) <= drift + 1e-12


def test_bad_drift_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="drift"):
        generate("moe", gpus=8, rng=0, drift=-0.1, step=1)
    with pytest.raises(InvalidInputError, match="step"):
        generate("moe", gpus=8, rng=0, drift=0.1, step=-1)
