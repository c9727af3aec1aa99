"""Iterations on fabrics: both schedulers on every fabric feature, the fabric's bound, the JSON form."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.iteration import Iteration, IterationSchedule, Phase
from ocsched.model import Configuration
from ocsched.sequence import (
    fabric_iteration_lower_bound,
    iteration_lower_bound,
    schedule_iteration,
    validate_iteration,
)
from ocsched.sequence.on_fabric import seen_from
from strategies import fabrics, iterations

REL = 1e-9
RING = np.roll(np.eye(6), 1, axis=1)
DENSE = np.random.default_rng(0).random((6, 6)) * (1 - np.eye(6))
# Recurring all-reduces with other traffic and compute between them.
IT = Iteration([Phase(RING, 0.05), Phase(DENSE, 0.3), Phase(RING, 0.01), Phase(DENSE, 0.0), Phase(RING, 0.2)])

#: One fabric per feature (and one mixing them); every one is scheduled by both schedulers.
FEATURES = {
    "per-switch delay": Fabric.from_deltas([0.1, 0.2, 0.05]),
    "per-switch rate": Fabric.from_deltas([0.1, 0.1, 0.1], rates=[1.0, 2.0, 0.5]),
    "identical rate 2": Fabric((Switch(0.1, 2.0),) * 3),
    "down windows": Fabric((Switch(0.1),) * 3, (SwitchDown(1, 0.5, 1.5), SwitchDown(2, 2.0))),
    "failed links": Fabric((Switch(0.1),) * 3, (), (LinkDown(2, 1), LinkDown(3, 2, 1.0))),
    "partial": Fabric.uniform(3, 0.1, model="partial"),
    "everything": Fabric(
        (Switch(0.1), Switch(0.2, 2.0), Switch(0.1)),
        (SwitchDown(1, 0.5, 1.5),),
        (LinkDown(3, 2, 1.0),),
        model="partial",
    ),
}


@pytest.mark.parametrize("name", list(FEATURES))
def test_every_fabric_feature_is_scheduled_validly(name: str) -> None:
    fab = FEATURES[name]
    ind = schedule_iteration(IT, fabric=fab, algorithm="independent")
    seq = schedule_iteration(IT, fabric=fab)
    bound = fabric_iteration_lower_bound(IT, fabric=fab)
    for sched in (ind, seq):
        rep = validate_iteration(sched, IT, fabric=fab)
        assert rep.ok, rep.violations
        assert sched.fabric == fab and sched.delta == max(fab.deltas)
        assert sched.lower_bound == bound and sched.makespan >= bound * (1 - REL)
    # The extras apply on every feature: delays hidden in the gaps, the ring persisting.
    assert seq.makespan < ind.makespan


def test_independent_places_each_phase_from_its_release() -> None:
    # Switch 1 is down over [0.5, 1.5): a phase released inside the window cannot use it before
    # 1.5 + delta, one released after it can. Windows and failures are absolute times.
    fab = Fabric((Switch(0.1), Switch(0.1)), (SwitchDown(1, 0.5, 1.5),))
    it = Iteration([Phase(RING * 0.2), Phase(RING, gap_before=0.4), Phase(RING, gap_before=1.0)])
    ind = schedule_iteration(it, fabric=fab, algorithm="independent")
    assert validate_iteration(ind, it, fabric=fab).ok
    on_1 = [(c.start, k) for c, k in zip(ind.switches[1], ind.phase_of[1], strict=True)]
    assert all(not (0.5 - 0.1 < t < 1.5 + 0.1) for t, _ in on_1)
    assert {k for _, k in on_1} >= {0, 2}  # used before and after the window


def test_the_uniform_walk_runs_on_identical_switches_where_it_avoids_failures() -> None:
    # Identical switches of rate 2: the uniform spectra-seq of the halved demands (re-placement,
    # reuse, dedication) is one of the runs. A window long after the iteration and a link that
    # fails then change nothing; a window inside it is respected.
    uniform = schedule_iteration(
        Iteration(Phase(p.demand.scaled(0.5), p.gap_before) for p in IT.phases), switches=3, delta=0.1
    )
    fast = Fabric((Switch(0.1, 2.0),) * 3)
    assert schedule_iteration(IT, fabric=fast).makespan <= uniform.makespan
    late = fast.with_failures([SwitchDown(1, 1e6)], [LinkDown(0, 2, 1e6)])
    assert schedule_iteration(IT, fabric=late).makespan <= uniform.makespan
    early = fast.with_failures([SwitchDown(1, 0.2, 0.6)])
    sched = schedule_iteration(IT, fabric=early)
    assert validate_iteration(sched, IT, fabric=early).ok


def test_seen_from_moves_time_zero() -> None:
    fab = Fabric((Switch(0.1), Switch(0.1)), (SwitchDown(1, 2.0, 3.0), SwitchDown(0, 0.1, 0.2)))
    fab = fab.with_failures(failed_links=[LinkDown(0, 1, 1.0), LinkDown(1, 0, 5.0)])
    seen = seen_from(fab, 2.5)
    assert seen.down == (SwitchDown(1, 0.0, 0.5),)  # the window over before 2.5 is gone
    assert seen.failed_links == (LinkDown(0, 1, 0.0), LinkDown(1, 0, 2.5))
    assert seen_from(Fabric.from_deltas([0.1, 0.2]), 7.0) == Fabric.from_deltas([0.1, 0.2])


@st.composite
def fabric_iterations(draw: st.DrawFn) -> tuple[Iteration, Fabric]:
    mats, gaps = draw(iterations(max_phases=3, max_n=4))
    it = Iteration.from_matrices(mats, gaps=gaps)
    top = max(float(m.max(initial=0.0)) for m in mats) or 1.0
    fab = draw(fabrics(it.n, top, max_switches=4))
    if fab.size > 1:  # links that fail part-way (switch 0 stays whole: every demand stays servable)
        for _ in range(draw(st.integers(0, 2))):
            port, sw = draw(st.integers(0, it.n - 1)), draw(st.integers(1, fab.size - 1))
            start = draw(st.sampled_from([0.0, 0.5, 2.0])) * top
            fab = fab.with_failures(failed_links=[LinkDown(port, sw, start)])
    return it, fab


def check_on_fabric(it: Iteration, fab: Fabric, base: str = "spectra") -> None:
    ind = schedule_iteration(it, fabric=fab, algorithm="independent", base=base, rng=1)
    seq = schedule_iteration(it, fabric=fab, base=base, rng=1)
    bound = fabric_iteration_lower_bound(it, fabric=fab)
    for sched in (ind, seq):
        rep = validate_iteration(sched, it, fabric=fab)
        assert rep.ok, rep.violations
        assert sched.makespan >= bound * (1 - REL)
    assert seq.makespan <= ind.makespan  # exactly: independent's phases are among the candidates


@settings(max_examples=40)
@given(data=fabric_iterations())
def test_both_schedulers_valid_on_random_fabrics_seq_never_later(data: tuple[Iteration, Fabric]) -> None:
    check_on_fabric(*data)


@pytest.mark.slow
@settings(max_examples=600)
@given(data=fabric_iterations(), base=st.sampled_from(["spectra", "spectra-pack", "eclipse"]))
def test_both_schedulers_valid_on_random_fabrics_many(data: tuple[Iteration, Fabric], base: str) -> None:
    check_on_fabric(*data, base=base)


@settings(max_examples=20)
@given(data=iterations(max_phases=3, max_n=4), s=st.integers(1, 3), rate=st.sampled_from([0.5, 2.0]))
def test_fabric_bound_is_the_uniform_one_of_the_demand_over_the_rate(
    data: tuple[list[np.ndarray], list[float]], s: int, rate: float
) -> None:
    mats, gaps = data
    it = Iteration.from_matrices(mats, gaps=gaps)
    fab = Fabric((Switch(0.2, rate),) * s)
    over = Iteration.from_matrices([m / rate for m in mats], gaps=gaps)
    assert fabric_iteration_lower_bound(it, fabric=fab) == pytest.approx(
        iteration_lower_bound(over, switches=s, delta=0.2), rel=1e-12
    )


def test_bases_refused_only_where_they_cannot_run() -> None:
    with pytest.raises(InvalidInputError, match="base 'naive' does not support failures"):
        schedule_iteration(IT, fabric=FEATURES["down windows"], base="naive")
    part = schedule_iteration(IT, fabric=FEATURES["partial"], base="spectra-partial")  # a partial-only base
    assert validate_iteration(part, IT, fabric=FEATURES["partial"]).ok
    base = schedule_iteration(IT, fabric=FEATURES["per-switch rate"], base="baseline", rng=0)
    assert validate_iteration(base, IT, fabric=FEATURES["per-switch rate"]).ok


# --- the JSON form ---------------------------------------------------------------------------------


def test_uniform_iteration_schedules_keep_the_version_1_form() -> None:
    sched = schedule_iteration(IT, switches=2, delta=0.1)
    data = json.loads(sched.to_json())
    assert data["version"] == 1 and data["delta"] == 0.1
    assert list(data) == [
        "format",
        "version",
        "ports",
        "delta",
        "makespan",
        "exposed",
        "algorithm",
        "lower_bound",
        "phases",
        "switches",
        "meta",
    ]
    assert list(data["switches"][0]) == ["configurations"]
    assert list(data["switches"][0]["configurations"][0]) == ["phase", "start", "duration", "circuits"]
    back = IterationSchedule.from_json(sched.to_json())
    assert back.fabric is None and back.to_json() == sched.to_json()


@pytest.mark.parametrize("name", list(FEATURES))
def test_fabric_iteration_schedules_round_trip_with_their_fabric(name: str) -> None:
    fab = FEATURES[name]
    sched = schedule_iteration(IT, fabric=fab)
    data = json.loads(sched.to_json())
    assert data["version"] == 2 and "delta" not in data and data["model"] == fab.model
    assert [(sw["delta"], sw["rate"]) for sw in data["switches"]] == list(
        zip(fab.deltas, fab.rates, strict=True)
    )
    back = IterationSchedule.from_json(sched.to_json())
    assert back.fabric == fab and back.to_json() == sched.to_json()
    assert back.phase_of == sched.phase_of and back.makespan == sched.makespan
    assert validate_iteration(back, IT, fabric=fab).ok


def test_hidden_delay_and_reuse_count_each_switch_delay() -> None:
    # Delays 0.1 and 1.0; on each switch the same circuit from 1.0 to 2.0 (phase a), then from the
    # release 2.5 of phase b. Switch 1 saved its delay by persisting (2.5 < 2.0 + 1.0), switch 0
    # did not (its delay fits in the gap); each hides its own delay before 2.5 (0.1 + 1.0).
    fab = Fabric.from_deltas([0.1, 1.0])
    conf = (Configuration.from_circuits(1.0, 1.0, [(0, 1)], ports=2),)
    conf += (Configuration.from_circuits(2.5, 1.0, [(0, 1)], ports=2),)
    sched = IterationSchedule(2, 1.0, (conf, conf), ((0, 1), (0, 1)), (0.0, 0.5), ("a", "b"), fabric=fab)
    it = Iteration([Phase([[0, 1], [0, 0]]), Phase([[0, 1], [0, 0]], gap_before=0.5)])
    assert validate_iteration(sched, it).ok
    assert sched.persisted == 1
    assert sched.hidden_delay == pytest.approx(1.1)
