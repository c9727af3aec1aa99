"""Schedule.gap and IterationSchedule.gap: the distance to the lower bound, without float comparisons."""

from __future__ import annotations

import math

import numpy as np

import ocsched
from ocsched import Iteration, Phase, Schedule
from ocsched.model import Configuration
from ocsched.model.schedule import relative_gap


def test_gap_is_zero_exactly_on_a_proven_optimum() -> None:
    # The README example: the bound used to be 2.749999999998181, so the optimal schedule
    # showed a gap of 6.6e-13 (and makespan == lower_bound was False).
    sched = ocsched.schedule([[0, 3, 1], [1, 0, 3], [3, 1, 0]], switches=2, delta=0.5)
    assert sched.makespan == sched.lower_bound == 2.75
    assert sched.gap == 0.0


def test_gap_values() -> None:
    c = Configuration.from_circuits(0.5, 2.5, [(0, 1)], ports=2)
    assert Schedule(ports=2, delta=0.5, switches=((c,),), lower_bound=2.0).gap == 0.5
    assert Schedule(ports=2, delta=0.5, switches=((c,),)).gap is None
    assert Schedule(ports=2, delta=0.5, switches=((),), lower_bound=0.0).gap == 0.0
    assert math.isinf(Schedule(ports=2, delta=0.5, switches=((c,),), lower_bound=0.0).gap or 0.0)
    # Below its bound: a bug, shown as a negative gap rather than clamped to 0.
    assert Schedule(ports=2, delta=0.5, switches=((c,),), lower_bound=4.0).gap == -0.25
    assert relative_gap(3.0, None) is None


def test_iteration_schedule_gap() -> None:
    it = Iteration([Phase([[0, 1], [1, 0]]), Phase([[0, 1], [1, 0]], gap_before=0.2)])
    sched = ocsched.schedule_iteration(it, switches=1, delta=0.5)
    assert sched.lower_bound is not None
    assert sched.gap == sched.makespan / sched.lower_bound - 1.0
    assert sched.gap is not None and sched.gap >= 0.0
    rng = np.random.default_rng(0)
    it = Iteration([Phase(rng.random((4, 4)) * (1 - np.eye(4))) for _ in range(3)])
    sched = ocsched.schedule_iteration(it, switches=2, delta=0.1)
    assert sched.gap is not None and sched.gap >= 0.0
