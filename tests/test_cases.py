"""The hand-checked case table (``cases.py``) against every registered scheduler."""

from __future__ import annotations

import pytest

import ocsched
from cases import CASES, Case
from ocsched.schedulers import SCHEDULERS

REL = 1e-9  # float slack between a makespan and a hand-derived value


# Schedulers that need a fabric feature (spectra-partial: the partial model) run the table on that fabric.
UNIFORM = sorted(a for a, s in SCHEDULERS.items() if not s.requires)


@pytest.mark.parametrize("algorithm", UNIFORM)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_table(case: Case, algorithm: str) -> None:
    """Every scheduler: valid, not below the hand-derived bound or optimum; exact reaches the optimum."""
    sched = ocsched.schedule(
        case.demand, switches=case.switches, delta=case.delta, algorithm=algorithm, rng=0
    )
    report = ocsched.validate(sched, case.demand)
    assert report.ok, report.violations
    assert sched.num_switches == case.switches
    assert sched.lower_bound == pytest.approx(case.bound, rel=REL, abs=1e-12)
    assert sched.makespan >= case.bound * (1 - REL)
    if case.optimum is not None:
        assert sched.makespan >= case.optimum * (1 - REL)
        if algorithm == "exact":
            assert sched.status == "optimal"
            assert sched.makespan == pytest.approx(case.optimum, rel=1e-6, abs=1e-12)
    if not case.demand.any():
        assert sched.makespan == 0.0 and sched.num_configurations == 0


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_table_pack_never_worse_than_spectra(case: Case) -> None:
    kw = {"switches": case.switches, "delta": case.delta}
    pack = ocsched.schedule(case.demand, algorithm="spectra-pack", **kw)
    assert pack.makespan <= ocsched.schedule(case.demand, algorithm="spectra", **kw).makespan * (1 + REL)


def test_every_scheduler_is_registered_on_import() -> None:
    # The registry is a literal dict: complete right after `import ocsched`, the same as algorithms().
    assert set(ocsched.SCHEDULERS) == set(ocsched.algorithms())
    assert len(ocsched.SCHEDULERS) >= 10
