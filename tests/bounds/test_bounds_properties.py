"""The lower bounds against every scheduler and the exact optimum, over random fabrics."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

import ocsched
import ocsched.exact.solve as exact_solve
from ocsched import Fabric, InfeasibleError, InvalidInputError
from ocsched.exact import solve_exact
from ocsched.schedulers import SCHEDULERS
from strategies import demands, hostile_fabrics

REL = 1e-9  # a schedule is valid within this relative tolerance, so it may undercut a bound by as much
#: The MILP solver's own tolerances (its optimum is exact to about 1e-8 relative).
MILP_REL = 1e-7
#: "exact" is checked below through solve_exact with a work limit (the scheduler has a time limit).
NAMES = [name for name in SCHEDULERS if name != "exact"]


def check_against_schedulers(d: NDArray[np.float64], fab: Fabric, *, refusals: bool = False) -> None:
    """Every schedule of every scheduler that takes ``fab`` validates and ends no earlier than the bounds.

    A scheduler may report the instance infeasible (InfeasibleError) when the bound is finite:
    a finite bound does not prove a schedule exists (links failing at different times on
    different ports can leave no joint schedule that any one line or circuit shows). With
    ``refusals``, it may not when another scheduler found a valid schedule.
    """
    lb = ocsched.lower_bound(d, fabric=fab)
    strong = ocsched.lower_bound(d, fabric=fab, strong=True)
    assert strong >= lb
    refused: list[str] = []
    found: list[str] = []
    for name in NAMES:
        try:
            sched = ocsched.schedule(d, fabric=fab, algorithm=name, rng=0)
        except InvalidInputError:
            continue  # the scheduler does not take this fabric's features
        except InfeasibleError:
            refused.append(name)
            continue
        report = ocsched.validate(sched, d)
        assert report.ok, (name, [str(v) for v in report.violations[:3]])
        assert not math.isinf(lb), (name, sched.makespan)
        assert strong <= sched.makespan * (1 + REL), (name, sched.makespan, lb, strong)
        found.append(name)
    if refusals:
        assert not (refused and found), f"{refused} report infeasible, {found} found valid schedules"


@contextmanager
def no_bound_in_exact() -> Iterator[None]:
    """solve_exact constrains T by lower_bound(strong=True): patch it to 0, or the check is circular."""
    patched = exact_solve.lower_bound
    exact_solve.lower_bound = lambda *a, **k: 0.0  # type: ignore[assignment]
    try:
        yield
    finally:
        exact_solve.lower_bound = patched


def check_against_exact(d: NDArray[np.float64], s: int, delta: float, model: str) -> None:
    """On a uniform fabric, the bounds are at most the exact optimum (found without any bound)."""
    with no_bound_in_exact():
        res = solve_exact(d, switches=s, delta=delta, time_limit=None, node_limit=20_000)
    if res.status != "optimal":
        return
    fab = Fabric.uniform(s, delta, model=model)
    for strong in (False, True):
        # The all-stop optimum is also a partial schedule, so it bounds the partial bound too.
        assert ocsched.lower_bound(d, fabric=fab, strong=strong) <= res.makespan * (1 + MILP_REL)


def _fabric_case(data: st.DataObject, max_n: int) -> tuple[NDArray[np.float64], Fabric]:
    d = data.draw(demands(max_n=max_n, kinds=("dense", "sparse", "skewed", "single", "perm_sum", "ties")))
    top = float(d.max(initial=0.0)) or 1.0
    if data.draw(st.integers(0, 3)) == 0:  # identical switches: the line and strong bounds, both models
        s = data.draw(st.integers(1, 4))
        delta = data.draw(st.sampled_from([0.0, 1e-3, 0.05, 0.5, 3.0])) * top
        return d, Fabric.uniform(s, delta, model=data.draw(st.sampled_from(["all-stop", "partial"])))
    return d, data.draw(hostile_fabrics(d.shape[0], top))


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_bound_below_every_scheduler_on_random_fabrics(data: st.DataObject) -> None:
    check_against_schedulers(*_fabric_case(data, 5))


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(data=st.data())
def test_bound_below_every_scheduler_on_random_fabrics_slow(data: st.DataObject) -> None:
    # Also: no scheduler reports infeasible where another finds a valid schedule.
    check_against_schedulers(*_fabric_case(data, 7), refusals=True)


def _uniform_case(data: st.DataObject) -> tuple[NDArray[np.float64], int, float, str]:
    d = data.draw(demands(max_n=4, kinds=("dense", "sparse", "skewed", "single", "perm_sum", "ties")))
    top = float(d.max(initial=0.0)) or 1.0
    s = data.draw(st.integers(1, 3))
    delta = data.draw(st.sampled_from([0.0, 0.01, 0.1, 0.5, 2.0])) * top
    return d, s, delta, data.draw(st.sampled_from(["all-stop", "partial"]))


@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_bound_below_the_exact_optimum(data: st.DataObject) -> None:
    check_against_exact(*_uniform_case(data))


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_bound_below_the_exact_optimum_slow(data: st.DataObject) -> None:
    check_against_exact(*_uniform_case(data))
