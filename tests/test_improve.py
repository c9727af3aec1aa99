"""spectra-opt (ocsched.improve): valid, never worse than spectra-pack, deterministic."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ocsched
from ocsched.errors import InvalidInputError
from ocsched.exact import solve_exact
from ocsched.fabric import Fabric
from ocsched.improve import improve_schedule, refit_pieces
from ocsched.model import Demand, Schedule
from strategies import deltas_for, demands


@settings(max_examples=30, deadline=None)
@given(d=demands(), s=st.integers(1, 6), data=st.data())
def test_never_worse_than_spectra_pack_and_valid(d: np.ndarray, s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    opt = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-opt")
    pack = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-pack")
    ocsched.validate(opt, d).raise_if_invalid()
    assert opt.makespan <= pack.makespan * (1 + 1e-12)
    assert opt.makespan >= ocsched.lower_bound(d, switches=s, delta=delta, strong=True) * (1 - 1e-9) - 1e-12


@settings(max_examples=10, deadline=None)
@given(d=demands(), s=st.integers(1, 4), data=st.data())
def test_same_input_same_schedule(d: np.ndarray, s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    a = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-opt", rng=1)
    b = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-opt", rng=1)
    assert a.same_as(b)


def test_refit_frees_a_delay_where_a_piece_is_not_needed() -> None:
    # Permutation 1 duplicates permutation 0's entry (0, 1); the LP serves it from 0 and drops 1.
    d = Demand.from_matrix([[0, 2, 0], [0, 0, 0], [0, 0, 0]])
    perms = np.array([[1, -1, -1], [1, 2, -1]])
    x = refit_pieces(d, perms, np.array([0, 1]), np.array([0, 1]), 2, 0.5)
    assert x is not None
    assert x.sum() == pytest.approx(2.0)


def test_refit_refuses_pieces_that_cannot_cover() -> None:
    d = Demand.from_matrix([[0, 2], [1, 0]])
    assert refit_pieces(d, np.array([[1, -1]]), np.array([0]), np.array([0]), 1, 0.5) is None


def test_zero_steps_is_spectra_pack_or_its_refit() -> None:
    d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    confs, _ = improve_schedule(d, switches=2, delta=0.5, max_steps=0)
    pack = ocsched.schedule(d, switches=2, delta=0.5, algorithm="spectra-pack")
    assert Schedule(ports=3, delta=0.5, switches=confs, algorithm="x").makespan <= pack.makespan


def test_heterogeneous_fabric_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="spectra-opt"):
        ocsched.schedule([[0, 1], [1, 0]], fabric=Fabric.from_deltas([0.1, 0.2]), algorithm="spectra-opt")


def test_tiny_support_runs_the_milp_and_keeps_its_proof() -> None:
    # n <= 6: spectra-opt runs a node-limited MILP from its incumbent; here it proves optimality.
    d = [[0, 2, 1], [2, 0, 1], [1, 1, 0]]
    opt = ocsched.schedule(d, switches=1, delta=0.25, algorithm="spectra-opt")
    ex = solve_exact(d, switches=1, delta=0.25)
    assert opt.status == "optimal"
    assert opt.makespan == pytest.approx(ex.makespan, rel=1e-9)
    assert opt.dual_bound is not None
    assert opt.dual_bound <= opt.makespan * (1 + 1e-12)


@settings(max_examples=10, deadline=None)
@given(d=demands(max_n=4), s=st.integers(1, 3), data=st.data())
def test_tiny_result_between_exact_and_spectra_pack(d: np.ndarray, s: int, data: st.DataObject) -> None:
    delta = data.draw(deltas_for(d))
    opt = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-opt")
    ex = solve_exact(d, switches=s, delta=delta, time_limit=30)
    pack = ocsched.schedule(d, switches=s, delta=delta, algorithm="spectra-pack")
    assert opt.makespan <= pack.makespan * (1 + 1e-12)
    if ex.optimal:
        assert opt.makespan >= ex.makespan * (1 - 1e-6)
    if opt.status == "optimal":
        assert opt.makespan <= ex.makespan * (1 + 1e-6)


def test_node_limit_is_checked() -> None:
    with pytest.raises(InvalidInputError, match="node_limit"):
        solve_exact([[0, 1], [1, 0]], switches=1, delta=0.1, node_limit=0)
