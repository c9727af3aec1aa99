"""Fabric lower bounds: down windows counted once, failed links from their time, circuits, ports."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ocsched
from ocsched import Fabric, InfeasibleError, InvalidInputError, LinkDown, Switch, SwitchDown
from ocsched.bounds import fabric_entry_bound, fabric_line_bound
from ocsched.bounds.fabric import available_time, merged_windows
from ocsched.model import Demand

D5 = np.random.default_rng(0).random((5, 5)) * (1 - np.eye(5))


@pytest.mark.parametrize(
    "windows",
    [
        [(0.2, 0.3), (0.25, 0.35)],  # overlapping
        [(0.2, 0.5)] * 5,  # identical
        [(0.2, 0.6), (0.3, 0.4)],  # nested
        [(0.2, 0.3), (0.3, 0.4)],  # touching
    ],
)
def test_overlapping_down_windows_count_once(windows: list[tuple[float, float]]) -> None:
    # Subtracting each window separately counted the shared down time twice, and the bound rose
    # above what the schedulers achieve (1.81 with five copies of [0.2, 0.5), 2.41 before).
    fab = Fabric.from_deltas([0.05, 0.05]).with_failures([SwitchDown(1, a, b) for a, b in windows])
    union = Fabric.from_deltas([0.05, 0.05]).with_failures(
        [SwitchDown(1, a, b) for a, b in merged_windows(windows, math.inf)]
    )
    assert available_time(fab, 1, 2.0) == pytest.approx(
        2.0 - sum(b - a for a, b in merged_windows(windows, 2.0))
    )
    assert ocsched.lower_bound(D5, fabric=fab) == ocsched.lower_bound(D5, fabric=union)
    for alg in ("spectra", "spectra-pack", "eclipse"):
        sched = ocsched.schedule(D5, fabric=fab, algorithm=alg)
        assert ocsched.validate(sched, D5).ok
        assert sched.gap is not None and sched.gap >= 0.0, alg


def test_merged_windows_clip_to_the_horizon() -> None:
    assert merged_windows([(-1.0, 0.5), (0.4, math.inf), (3.0, 4.0)], 2.0) == [(0.0, 2.0)]
    assert merged_windows([(1.0, 2.0)], 1.0) == []


def test_a_link_fails_from_its_time_not_from_zero() -> None:
    # A link failing long after the schedule ends changes nothing; failing at 0 loses the switch
    # for that port.
    d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    base = Fabric.from_deltas([0.5, 0.5], rates=[1.0, 2.0])
    late = base.with_failures(failed_links=[LinkDown(0, 1, 1000.0)])
    early = base.with_failures(failed_links=[LinkDown(0, 1, 0.0)])
    assert fabric_line_bound(d, late) == fabric_line_bound(d, base)
    assert fabric_entry_bound(d, late) == fabric_entry_bound(d, base)
    alone = Fabric.from_deltas([0.5])  # port 0 has only switch 0 left
    assert fabric_line_bound(d, early) == fabric_line_bound(
        Demand.from_matrix([[0, 3, 1], [0, 0, 0], [0, 0, 0]]), alone
    )


def test_a_circuit_both_of_whose_ports_lost_every_common_switch_is_infeasible() -> None:
    # Port 0 only reaches switch 1 and port 1 only switch 0: circuit (0, 1) can never be lit.
    # Each line alone still has a switch, so the line bounds stayed finite (4.0 before).
    fab = Fabric((Switch(0.0, 0.25),) * 2, failed_links=(LinkDown(0, 0), LinkDown(1, 1)))
    d = [[0, 1], [1, 0]]
    assert math.isinf(ocsched.lower_bound(d, fabric=fab))
    with pytest.raises(InfeasibleError):
        ocsched.schedule(d, fabric=fab)


def test_circuit_bound_uses_the_switches_both_links_reach() -> None:
    # Circuit (0, 1): port 0 lost switch 0 at 0, port 1 lost switch 1 at 1.0: only switch 1
    # until 1.0 serves it, at rate 1 after its delay 0.1, so at most 0.9 < 2 of it.
    fab = Fabric.from_deltas([0.1, 0.1]).with_failures(failed_links=[LinkDown(0, 0), LinkDown(1, 1, 1.0)])
    assert math.isinf(fabric_line_bound(Demand.from_matrix([[0, 2], [0, 0]]), fab))
    assert fabric_line_bound(Demand.from_matrix([[0, 0.5], [0, 0]]), fab) == 0.6


def test_a_failed_link_on_a_missing_port_is_refused() -> None:
    # It used to fail the link of column 1's port (line index n + 1): a bound of 5.0 where the
    # optimum is 2.75.
    fab = Fabric.uniform(2, 0.5).with_failures(failed_links=[LinkDown(4, 0)])
    with pytest.raises(InvalidInputError, match=r"port outside 0\.\.2"):
        ocsched.lower_bound([[0, 3, 1], [1, 0, 3], [3, 1, 0]], fabric=fab)


def test_failures_never_lower_the_bound_of_the_intact_fabric() -> None:
    # A failure only removes capacity: with a link failing late, the bound is still the
    # uniform fabric's 2.75 (the fabric line bound alone says 2.5).
    d = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]
    for model in ("all-stop", "partial"):
        fab = Fabric.uniform(2, 0.5, model=model).with_failures(failed_links=[LinkDown(0, 1, 1000.0)])
        assert ocsched.lower_bound(d, fabric=fab) == 2.75
        assert ocsched.lower_bound(d, fabric=fab, strong=True) >= 2.75


def test_fabric_bounds_are_exact_on_tight_instances() -> None:
    # The optimum equals the bound here, and the makespan matches it to the last bit.
    two = [[0, 1], [1, 0]]
    hetero = Fabric.from_deltas([0.1, 0.1], rates=[1.0, 3.0])
    assert ocsched.lower_bound(two, fabric=hetero) == 0.35
    assert ocsched.schedule(two, fabric=hetero, algorithm="baseline").gap == 0.0
    row = [[0, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    mixed = Fabric.from_deltas([0.1, 1.0])
    assert ocsched.lower_bound(row, fabric=mixed) == 2.2
    assert ocsched.schedule(row, fabric=mixed, algorithm="spectra").gap == 0.0


def test_available_time_at_a_late_horizon_keeps_the_time_before_a_final_window() -> None:
    # Down for good from 0.85: 0.85 of up-time at any later horizon (end minus the down time
    # cancelled to 0 at 1e300, and the bound became infinite).
    fab = Fabric.from_deltas([0.0], rates=[4.0]).with_failures([SwitchDown(0, 0.85)] * 3)
    assert available_time(fab, 0, 1e300) == 0.85
    assert ocsched.lower_bound([[0, 0.8], [0.8, 0]], fabric=fab) == 0.2


def test_a_schedule_ending_at_a_window_within_rounding_is_not_beaten() -> None:
    # One circuit fits on switch 1 right up to its window at 0.1: the schedule's exact end lies
    # 3.5e-18 past the window's start (rounding; the validator accepts it). In exact arithmetic
    # the circuit would wait for the window's end, and the bound rose above the makespan.
    fab = Fabric(
        (Switch(1 / 6, 4.0), Switch(1 / 60, 4.0)),
        down=(SwitchDown(1, 0.09999999999999999, 0.13333333333333333),),
        failed_links=(LinkDown(0, 0),),
    )
    d = np.zeros((4, 4))
    d[2, 0] = 1 / 3
    sched = ocsched.schedule(d, fabric=fab)
    assert ocsched.validate(sched, d).ok
    assert ocsched.lower_bound(d, fabric=fab) <= sched.makespan
