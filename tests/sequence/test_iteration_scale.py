"""The iteration schedulers have no absolute floor: scaled iterations give the scaled schedule.

Scaling every demand, gap and delay by a power of two is exact in floating point, so a scheduler
whose comparisons are all relative returns exactly the scaled schedule; by a power of ten the
rounding differs (near-ties may break the other way), and the schedule must still be valid.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.iteration import Iteration, IterationSchedule, Phase
from ocsched.sequence import schedule_iteration, validate_iteration
from strategies import iterations

SCHEDULERS = ("spectra-seq", "independent")


def test_tiny_phases_schedule_without_a_traceback() -> None:
    # Phases of 1e-12 with delta 2e-13 once raised StopIteration in the packing of spectra-seq.
    it = Iteration([Phase([[0, 1e-12], [1e-12, 0]]), Phase([[0, 2e-12], [1e-12, 0]], gap_before=1e-13)])
    for algorithm in SCHEDULERS:
        sched = schedule_iteration(it, switches=2, delta=2e-13, algorithm=algorithm)
        assert validate_iteration(sched, it, delta=2e-13).ok


def scaled(mats: list[np.ndarray], gaps: list[float], factor: float) -> Iteration:
    return Iteration.from_matrices([m * factor for m in mats], gaps=[g * factor for g in gaps])


def same_scaled(a: IterationSchedule, b: IterationSchedule, factor: float) -> bool:
    """``a`` is ``b`` with every time multiplied by ``factor``, bit for bit."""
    return a.phase_of == b.phase_of and all(
        x.start == y.start * factor and x.duration == y.duration * factor and np.array_equal(x.perm, y.perm)
        for sa, sb in zip(a.switches, b.switches, strict=True)
        for x, y in zip(sa, sb, strict=True)
    )


def check_scale(data: tuple[list[np.ndarray], list[float]], s: int, rel_delta: float, k: int) -> None:
    mats, gaps = data
    top = max(float(m.max(initial=0.0)) for m in mats) or 1.0
    delta = rel_delta * top
    ref_it = scaled(mats, gaps, 1.0)
    two = 2.0 ** round(k * math.log2(10))  # 2^-40 ~ 1e-12 ... 2^40 ~ 1e12
    ten = 10.0**k
    for algorithm in SCHEDULERS:
        ref = schedule_iteration(ref_it, switches=s, delta=delta, algorithm=algorithm)
        it2 = scaled(mats, gaps, two)
        exact = schedule_iteration(it2, switches=s, delta=delta * two, algorithm=algorithm)
        assert same_scaled(exact, ref, two)
        it10 = scaled(mats, gaps, ten)
        sched = schedule_iteration(it10, switches=s, delta=delta * ten, algorithm=algorithm)
        rep = validate_iteration(sched, it10, delta=delta * ten, switches=s)
        assert rep.ok, rep.violations


@settings(max_examples=30)
@given(
    data=iterations(max_phases=3, max_n=5),
    s=st.integers(1, 4),
    rel_delta=st.sampled_from([0.0, 0.01, 0.2, 1.0]),
    k=st.integers(-12, 12),
)
def test_scaled_iterations_give_scaled_schedules(
    data: tuple[list[np.ndarray], list[float]], s: int, rel_delta: float, k: int
) -> None:
    check_scale(data, s, rel_delta, k)


@pytest.mark.slow
@settings(max_examples=400)
@given(
    data=iterations(max_phases=5, max_n=7),
    s=st.integers(1, 6),
    rel_delta=st.sampled_from([0.0, 0.01, 0.2, 1.0]),
    k=st.integers(-12, 12),
)
def test_scaled_iterations_give_scaled_schedules_many(
    data: tuple[list[np.ndarray], list[float]], s: int, rel_delta: float, k: int
) -> None:
    check_scale(data, s, rel_delta, k)


def scaled_fabric(fab: Fabric, x: float) -> Fabric:
    return Fabric(
        tuple(Switch(s.delta * x, s.rate) for s in fab.switches),
        tuple(SwitchDown(d.switch, d.start * x, d.end * x) for d in fab.down),
        tuple(LinkDown(x_.port, x_.switch, x_.start * x) for x_ in fab.failed_links),
        fab.model,
    )


FABRICS = [
    Fabric.from_deltas([0.1, 0.2, 0.05], rates=[1.0, 2.0, 0.5]),
    Fabric((Switch(0.1),) * 3, (SwitchDown(1, 0.5, 1.5), SwitchDown(2, 2.0)), (LinkDown(3, 2, 1.0),)),
    Fabric((Switch(0.1), Switch(0.2, 2.0), Switch(0.1)), (SwitchDown(1, 0.5, 1.5),), (), model="partial"),
]


@pytest.mark.parametrize("fab", FABRICS, ids=["rates", "failures", "partial"])
def test_scaled_fabric_iterations_give_scaled_schedules(fab: Fabric) -> None:
    ring = np.roll(np.eye(6), 1, axis=1)
    dense = np.random.default_rng(1).random((6, 6)) * (1 - np.eye(6))
    mats, gaps = [ring, dense, ring, dense], [0.05, 0.3, 0.0, 0.2]
    for algorithm in SCHEDULERS:
        ref = schedule_iteration(scaled(mats, gaps, 1.0), fabric=fab, algorithm=algorithm)
        for x in (2.0**-40, 2.0**40):
            it, f = scaled(mats, gaps, x), scaled_fabric(fab, x)
            sched = schedule_iteration(it, fabric=f, algorithm=algorithm)
            assert same_scaled(sched, ref, x) and validate_iteration(sched, it, fabric=f).ok
