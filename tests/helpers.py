"""Helpers shared by the test modules (fixtures live in conftest.py, strategies in strategies.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typer.testing import CliRunner, Result

import ocsched.exact.solve as exact_solve
from ocsched.bounds import lower_bound
from ocsched.cli import app
from ocsched.exact import ExactResult, solve_exact
from ocsched.model import Configuration

#: The 3 x 3 demand most tests use: every line sums to 3 (two permutations, weights 2 and 1).
D3 = np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 2.0], [2.0, 1.0, 0.0]])
#: A skewed 3 x 3 (weights 3 and 1, line sums 4), where the placement and the delays matter more.
D3_SKEWED = np.array([[0.0, 3.0, 1.0], [1.0, 0.0, 3.0], [3.0, 1.0, 0.0]])


def run(*args: str | Path) -> Result:
    """Run the ``ocsched`` CLI in-process; typer keeps ``result.stdout`` and ``result.stderr`` apart."""
    return CliRunner().invoke(app, [str(a) for a in args])


def kept_prefix(old: tuple[Configuration, ...], new: tuple[Configuration, ...], at: float) -> bool:
    """Every configuration of a switch that ended by ``at`` is still there, unchanged, in order."""
    done = [c for c in old if c.end <= at]
    return [(c.start, c.duration, c.circuits) for c in done] == [
        (c.start, c.duration, c.circuits) for c in new[: len(done)]
    ]


def conf(start: float, duration: float, perm: list[int]) -> Configuration:
    """A configuration from a permutation list (``perm[i] = j``, -1 idle)."""
    return Configuration(start, duration, np.array(perm, dtype=np.int64))


def exact_without_strong_bounds(d: np.ndarray, s: int, delta: float, limit: float) -> ExactResult:
    """``solve_exact`` given only the cheap lower bound.

    solve_exact takes ``lower_bound(strong=True)`` as a constraint on T and as its proof of
    optimality, so checking the strong bounds against its optimum would be circular (a bound
    that is too high could not fail).
    """
    patched = exact_solve.lower_bound

    def cheap(dem: object, **kw: object) -> float:
        return lower_bound(dem, switches=kw["switches"], delta=kw["delta"])  # type: ignore[arg-type]

    exact_solve.lower_bound = cheap  # type: ignore[assignment]
    try:
        return solve_exact(d, switches=s, delta=delta, time_limit=limit)
    finally:
        exact_solve.lower_bound = patched
