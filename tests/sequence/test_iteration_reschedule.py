"""Rescheduling an iteration after a failure: valid on the degraded fabric, the past kept as it ran."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ocsched
from helpers import D3_SKEWED as D3
from helpers import kept_prefix, run
from ocsched import Fabric, InvalidInputError, Iteration, LinkDown, Phase, Switch, SwitchDown
from ocsched.io import write_iteration_schedule
from ocsched.model.failures import LinkFailure, SwitchFailure
from ocsched.sequence import schedule_iteration, validate_iteration
from ocsched.sequence.reschedule import reschedule_iteration

IT = Iteration([Phase(D3, 0.0, "a"), Phase(D3.T.copy(), 1.0, "b"), Phase(D3, 0.5, "c")])


def _random_iteration(rng: np.random.Generator, n: int, phases: int) -> Iteration:
    out = []
    for k in range(phases):
        d = rng.random((n, n)) * (rng.random((n, n)) < 0.6) * (1 - np.eye(n))
        d[k % n, (k + 1) % n] += 0.5
        out.append(Phase(d, float(rng.choice([0.0, 0.05, 0.5])), f"p{k}"))
    return Iteration(out)


FABRICS = [
    Fabric.uniform(3, 0.1),
    Fabric.from_deltas([0.1, 0.2, 0.05], rates=[1.0, 2.0, 0.5]),
    Fabric((Switch(0.1),) * 3, (SwitchDown(1, 0.3, 0.9),), (LinkDown(2, 0, 1.5),)),
    Fabric.uniform(3, 0.1, model="partial"),
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31),
    fab=st.sampled_from(range(len(FABRICS))),
    algorithm=st.sampled_from(["spectra-seq", "independent"]),
    kind=st.sampled_from(["switch", "link"]),
    frac=st.floats(0.0, 1.1),
)
def test_rescheduled_iterations_are_valid_and_keep_the_past(
    seed: int, fab: int, algorithm: str, kind: str, frac: float
) -> None:
    rng = np.random.default_rng(seed)
    it = _random_iteration(rng, 4, 3)
    fabric = FABRICS[fab]
    old = schedule_iteration(it, fabric=fabric, algorithm=algorithm, base="spectra-pack")
    at = frac * old.makespan
    sw = int(rng.integers(0, fabric.size))
    failure = SwitchFailure(sw, at) if kind == "switch" else LinkFailure(int(rng.integers(0, 4)), sw, at)
    new = reschedule_iteration(old, it, failure)
    assert new.fabric is not None and new.fabric != fabric
    report = validate_iteration(new, it, fabric=new.fabric)
    assert report.ok, report.violations[:3]
    assert new.meta["failure"] == str(failure)
    for a, b in zip(old.switches, new.switches, strict=True):
        assert kept_prefix(a, b, at)
    if at >= old.makespan:
        assert new.makespan == old.makespan  # a failure after the iteration costs nothing


def test_switch_failure_mid_phase_on_the_readme_matrix() -> None:
    old = schedule_iteration(IT, switches=2, delta=0.5)
    mid = (old.releases[1] + old.ends[1]) / 2
    new = reschedule_iteration(old, IT, SwitchFailure(1, mid))
    assert validate_iteration(new, IT, fabric=new.fabric).ok
    # Nothing runs on the failed switch after the failure.
    assert all(c.end <= mid for c in new.switches[1])
    assert new.makespan > old.makespan
    # The repair keeps the base scheduler that built the schedule.
    assert new.algorithm == old.algorithm


def test_failure_in_a_compute_gap_reschedules_the_next_phases() -> None:
    old = schedule_iteration(IT, switches=2, delta=0.5, algorithm="independent")
    gap_mid = old.ends[0] + IT.phases[1].gap_before / 2
    new = reschedule_iteration(old, IT, LinkFailure(0, 0, gap_mid))
    assert validate_iteration(new, IT, fabric=new.fabric).ok
    # Phase 0 is untouched; no later configuration on switch 0 uses port 0's link.
    p0 = [c for c, p in zip(new.switches[0], new.phase_of[0], strict=True) if p == 0]
    assert p0 == [c for c, p in zip(old.switches[0], old.phase_of[0], strict=True) if p == 0]
    later = [c for c, p in zip(new.switches[0], new.phase_of[0], strict=True) if p > 0]
    assert all(0 not in c.perm and c.perm[0] < 0 for c in later)


def test_ocsched_reschedule_takes_iterations_too() -> None:
    old = schedule_iteration(IT, switches=2, delta=0.5)
    failure = SwitchFailure(0, old.ends[0] / 2)
    a, b = ocsched.reschedule(old, IT, failure), reschedule_iteration(old, IT, failure)
    assert a.to_dict()["switches"] == b.to_dict()["switches"] and a.makespan == b.makespan
    with pytest.raises(InvalidInputError, match="rescheduled with its Iteration"):
        ocsched.reschedule(old, D3, failure)


def test_bad_input_is_refused() -> None:
    old = schedule_iteration(IT, switches=2, delta=0.5)
    with pytest.raises(InvalidInputError, match="failed switch 5"):
        reschedule_iteration(old, IT, SwitchFailure(5, 1.0))
    with pytest.raises(InvalidInputError, match="failed link port 9"):
        reschedule_iteration(old, IT, LinkFailure(9, 0, 1.0))
    other = Iteration([Phase(D3 * 10.0), Phase(D3)])
    with pytest.raises(InvalidInputError, match="not valid for `iteration`"):
        reschedule_iteration(old, other, SwitchFailure(0, 1.0))
    with pytest.raises(InvalidInputError, match="unknown base"):
        reschedule_iteration(old, IT, SwitchFailure(0, 1.0), base="nope")


def test_cli_reschedules_an_iteration_schedule(tmp_path: Path) -> None:
    it_file, old_file, new_file = tmp_path / "it.json", tmp_path / "s.json", tmp_path / "new.json"
    it_file.write_text(IT.to_json())
    write_iteration_schedule(schedule_iteration(IT, switches=2, delta=0.5), old_file)
    res = run("reschedule", it_file, old_file, "--fail-switch", "1", "--at", "2.0", "--out", new_file)
    assert res.exit_code == 0, res.stderr
    assert "makespan after" in res.stdout
    res = run("validate", it_file, new_file)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "valid" in res.stdout
    res = run("reschedule", it_file, old_file, "--fail-switch", "7", "--at", "2.0")
    assert res.exit_code == 2 and "failed switch 7" in res.stderr and "Traceback" not in res.stderr
