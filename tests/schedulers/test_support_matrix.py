"""Every cell of the published support matrix (scheduler x fabric feature x iterations) is true.

The README's table is generated from the registries (``docs/hooks/support_table.py``); this file
checks that the registries tell the truth: where a cell says ``yes`` (or ``needed``) the scheduler
returns a schedule that ``validate`` accepts on a fabric with that feature, and where it says
``-`` it refuses with one line naming the feature. The iteration column is checked the same way:
every iteration scheduler with every single-matrix scheduler as its ``base`` on every feature the
base supports.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ocsched import (
    Fabric,
    InvalidInputError,
    Iteration,
    LinkDown,
    Phase,
    Switch,
    SwitchDown,
    schedule,
    validate,
)
from ocsched.schedulers import FEATURES, PORT_FEATURES, SCHEDULERS, fabric_features
from ocsched.sequence import ITERATION_SCHEDULERS, schedule_iteration, validate_iteration

RNG = np.random.default_rng(7)
DEMAND = RNG.random((4, 4)) * (RNG.random((4, 4)) < 0.7) * (1 - np.eye(4))
DEMAND[0, 1] = 0.8  # never all zero

#: One fabric per feature (3 switches); the key is the set of FEATURES it uses.
FABRICS: dict[frozenset[str], Fabric] = {
    frozenset(): Fabric.uniform(3, 0.1),
    frozenset({"heterogeneous"}): Fabric.from_deltas([0.1, 0.2, 0.05], rates=[1.0, 2.0, 0.5]),
    frozenset({"failures"}): Fabric(
        (Switch(0.1),) * 3, (SwitchDown(1, 0.3, 0.9),), (LinkDown(2, 1), LinkDown(3, 0, 0.5))
    ),
    frozenset({"partial"}): Fabric.uniform(3, 0.1, model="partial"),
}
FABRICS[frozenset({"bidirectional"})] = Fabric((Switch(0.1, bidirectional=True),) * 3)
FABRICS[frozenset({"ports"})] = Fabric((Switch(0.1, ports_per_endpoint=2),) * 3)
# Every combination of features too: a scheduler must handle them together, not only apart.
FABRICS[frozenset(PORT_FEATURES)] = Fabric((Switch(0.1, bidirectional=True, ports_per_endpoint=2),) * 3)
FABRICS[frozenset(PORT_FEATURES | {"failures"})] = Fabric(
    (Switch(0.1, bidirectional=True, ports_per_endpoint=2),) * 3,
    (SwitchDown(1, 0.3, 0.9),),
    (LinkDown(2, 1), LinkDown(3, 0, 0.5)),
)
FABRICS[frozenset({"bidirectional", "partial"})] = Fabric(
    (Switch(0.1, bidirectional=True),) * 3, model="partial"
)
FABRICS[frozenset({"ports", "partial"})] = Fabric((Switch(0.1, ports_per_endpoint=2),) * 3, model="partial")
FABRICS[frozenset(PORT_FEATURES | {"failures", "partial"})] = Fabric(
    (Switch(0.1, bidirectional=True, ports_per_endpoint=2),) * 3,
    (SwitchDown(1, 0.3, 0.9),),
    (LinkDown(2, 1), LinkDown(3, 0, 0.5)),
    model="partial",
)
FABRICS[frozenset({"eps"})] = Fabric.uniform(3, 0.1).with_eps(0.5)
# The matching features together, then with a packet switch.
FABRICS[frozenset(FEATURES) - PORT_FEATURES - {"eps"}] = Fabric(
    (Switch(0.1), Switch(0.2, 2.0), Switch(0.1)),
    (SwitchDown(1, 0.3, 0.9),),
    (LinkDown(3, 0, 0.5),),
    model="partial",
)
FABRICS[frozenset(FEATURES) - PORT_FEATURES] = FABRICS[
    frozenset(FEATURES) - PORT_FEATURES - {"eps"}
].with_eps(0.5)

ITERATION = Iteration([Phase(DEMAND, 0.2), Phase(DEMAND.T.copy(), 0.0), Phase(DEMAND, 0.1)])


def test_the_fabrics_have_exactly_their_features() -> None:
    for features, fab in FABRICS.items():
        assert fabric_features(fab) == set(features)


def _expected_ok(name: str, features: frozenset[str]) -> bool:
    sch = SCHEDULERS[name]
    return features <= sch.supports and sch.requires <= features


@pytest.mark.parametrize(
    ("name", "features"),
    list(itertools.product(SCHEDULERS, FABRICS)),
    ids=[f"{n}-{'+'.join(sorted(f)) or 'plain'}" for n, f in itertools.product(SCHEDULERS, FABRICS)],
)
def test_single_matrix_cell(name: str, features: frozenset[str]) -> None:
    fab = FABRICS[features]
    if _expected_ok(name, features):
        sched = schedule(DEMAND, fabric=fab, algorithm=name, rng=0)
        report = validate(sched, DEMAND, fabric=fab)
        assert report.ok, (name, sorted(features), report.violations[:3])
        return
    sch = SCHEDULERS[name]
    with pytest.raises(InvalidInputError) as info:
        schedule(DEMAND, fabric=fab, algorithm=name, rng=0)
    message = str(info.value)
    assert "\n" not in message
    named = (set(features) - sch.supports) | (sch.requires - set(features))
    assert any(f in message for f in named), message


#: The exact solver and spectra-opt as a base cost seconds per cell: their plain cell runs by
#: default, the others under ``make slow``.
HEAVY_BASES = {"exact", "spectra-opt", "exact-ports"}


def _iteration_cells() -> list[object]:
    cells: list[object] = []
    for a, b, f in itertools.product(ITERATION_SCHEDULERS, SCHEDULERS, FABRICS):
        if not _expected_ok(b, f) or "eps" in f:  # iterations refuse a packet switch
            continue
        marks = [pytest.mark.slow] if b in HEAVY_BASES and f else []
        cells.append(pytest.param(a, b, f, marks=marks, id=f"{a}-{b}-{'+'.join(sorted(f)) or 'plain'}"))
    return cells


@pytest.mark.parametrize(("algorithm", "base", "features"), _iteration_cells())
def test_iteration_cell(algorithm: str, base: str, features: frozenset[str]) -> None:
    fab = FABRICS[features]
    sched = schedule_iteration(ITERATION, fabric=fab, algorithm=algorithm, base=base, rng=0)
    report = validate_iteration(sched, ITERATION, fabric=fab)
    assert report.ok, (algorithm, base, sorted(features), report.violations[:3])


@pytest.mark.parametrize("base", list(SCHEDULERS))
def test_iteration_base_refuses_what_it_does_not_support(base: str) -> None:
    for features in FABRICS:
        if _expected_ok(base, features):
            continue
        with pytest.raises(InvalidInputError, match=r"does not support|needs a fabric with") as info:
            schedule_iteration(ITERATION, fabric=FABRICS[features], base=base)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("base", ["spectra-hybrid", "spectra-pack"])
def test_iterations_refuse_an_eps_fabric_in_one_line(base: str) -> None:
    with pytest.raises(InvalidInputError, match=r"does not support eps") as info:
        schedule_iteration(ITERATION, fabric=FABRICS[frozenset({"eps"})], base=base)
    assert "\n" not in str(info.value)
