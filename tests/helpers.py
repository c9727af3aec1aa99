"""Helpers shared by the test modules (fixtures live in conftest.py, strategies in strategies.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typer.testing import CliRunner, Result

from ocsched.cli import app
from ocsched.model import Configuration


def run(*args: str | Path) -> Result:
    """Run the ``ocsched`` CLI in-process; typer keeps ``result.stdout`` and ``result.stderr`` apart."""
    return CliRunner().invoke(app, [str(a) for a in args])


def conf(start: float, duration: float, perm: list[int]) -> Configuration:
    """A configuration from a permutation list (``perm[i] = j``, -1 idle)."""
    return Configuration(start, duration, np.array(perm, dtype=np.int64))
