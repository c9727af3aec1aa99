"""Shared pytest configuration: hypothesis profiles, and the fixtures several test modules use."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from helpers import D3

# "default" keeps the default run quick and the same on every run (derandomized: CI and a
# developer see the same examples); "thorough" (HYPOTHESIS_PROFILE=thorough) digs deeper with
# fresh random examples each run, where new counterexamples are found.
settings.register_profile(
    "default",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def d3(tmp_path: Path) -> Path:
    """:data:`helpers.D3` saved as ``d.npy`` (a module may define its own ``d3``: a CSV, say)."""
    p = tmp_path / "d.npy"
    np.save(p, D3)
    return p
