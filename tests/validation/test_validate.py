"""Tests of validate(): valid schedules pass, every violation of a broken one is listed."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import D3, conf
from ocsched import schedule, validate
from ocsched.errors import InvalidInputError, InvalidScheduleError
from ocsched.model import Configuration, Demand, Schedule
from ocsched.validation import TOL, ValidationReport, Violation

# d3 = 2 * (0->1, 1->2, 2->0) + 1 * (0->2, 1->0, 2->1)
P1 = [1, 2, 0]
P2 = [2, 0, 1]


def sched(*switches: tuple[Configuration, ...], delta: float = 0.5, ports: int = 3) -> Schedule:
    return Schedule(ports=ports, delta=delta, switches=tuple(switches), algorithm="hand")


def kinds(report: ValidationReport) -> list[str]:
    return [v.kind for v in report.violations]


def test_hand_built_valid_schedule_passes() -> None:
    s = sched((conf(0.5, 2.0, P1),), (conf(0.5, 1.0, P2),))
    r = validate(s, D3)
    assert r.ok and bool(r) and r.violations == []
    assert r.makespan == 2.5
    assert r.max_shortfall == 0.0
    r.raise_if_invalid()  # no exception


def test_same_switch_back_to_back_with_exact_delta_gap_passes() -> None:
    s = sched((conf(0.5, 2.0, P1), conf(3.0, 1.0, P2)))
    assert validate(s, D3).ok


def test_over_serving_is_fine_and_shortfall_is_negative() -> None:
    s = sched((conf(0.5, 3.0, P1),), (conf(0.5, 1.5, P2),))
    r = validate(s, D3)
    assert r.ok and r.max_shortfall == pytest.approx(-0.5)


@pytest.mark.parametrize("demand_form", ["list", "ndarray", "csr", "Demand"])
def test_accepts_every_demand_form(demand_form: str) -> None:
    s = sched((conf(0.5, 2.0, P1),), (conf(0.5, 1.0, P2),))
    form: Any = {
        "list": D3.tolist(),
        "ndarray": D3,
        "csr": sp.csr_array(D3),
        "Demand": Demand.from_matrix(D3),
    }[demand_form]
    assert validate(s, form).ok


# The core schedulers; peers and exact solvers have their own test files.
@pytest.mark.parametrize("algorithm", ["spectra", "spectra-greedy"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("n", "s", "delta"), [(2, 1, 0.0), (5, 2, 0.1), (8, 3, 0.02)])
def test_library_schedules_validate(algorithm: str, seed: int, n: int, s: int, delta: float) -> None:
    rng = np.random.default_rng(seed)
    m = rng.random((n, n)) * (rng.random((n, n)) < 0.7)
    np.fill_diagonal(m, 0.0)
    out = schedule(m, switches=s, delta=delta, algorithm=algorithm, rng=seed)
    r = validate(out, m)
    assert r.ok, r.violations
    assert r.makespan == out.makespan


def test_every_violation_is_listed() -> None:
    # switch 0: config 0 starts too early (0.2 < delta) and maps inputs 0 and 2 both to output 1;
    #           config 1 starts before config 0 ends + delta and has a negative duration;
    # switch 1: config 0 has a NaN duration.
    s = sched(
        (conf(0.2, 2.0, [1, 2, 1]), conf(2.5, -1.0, P2)),
        (conf(0.5, float("nan"), P2),),
    )
    r = validate(s, D3)
    assert not r.ok and not bool(r)
    msgs = [str(v) for v in r.violations]
    assert "matching: switch 0 configuration 0: output port 1 used twice" in msgs
    assert any(m.startswith("timing: switch 0 configuration 0: starts at 0.2") for m in msgs)
    assert "duration: switch 0 configuration 1: negative duration -1.0" in msgs
    assert any(
        m.startswith("timing: switch 0 configuration 1: starts at 2.5, before the previous end 2.2")
        for m in msgs
    )
    assert any(m.startswith("duration: switch 1 configuration 0:") and "nan" in m for m in msgs)
    # served: (0,1) 2.0 ok; (1,2) 2.0 ok; (2,1) 2.0 ok; (2,0) 0 of 2; (0,2), (1,0) 0 of 1
    unserved = sorted(m for m in msgs if m.startswith("unserved"))
    assert unserved == [
        "unserved: demand[0, 2] = 1 but only 0 served",
        "unserved: demand[1, 0] = 1 but only 0 served",
        "unserved: demand[2, 0] = 2 but only 0 served",
    ]
    assert sorted(kinds(r)) == sorted(
        ["matching", "timing", "duration", "timing", "duration", "unserved", "unserved", "unserved"]
    )
    assert r.max_shortfall == 2.0


def test_port_count_mismatch() -> None:
    s = sched((conf(0.5, 1.0, [1, 0]),), ports=2)
    r = validate(s, D3)
    assert kinds(r) == ["ports"]
    assert "2 ports" in r.violations[0].message and "3 x 3" in r.violations[0].message


def test_port_count_mismatch_does_not_allocate_ports_squared() -> None:
    # A schedule file claiming 10**7 ports must be reported, not crash with MemoryError (800 TB).
    r = validate(Schedule(ports=10**7, delta=0.1, switches=((),)), D3)
    assert kinds(r) == ["ports"]


@pytest.mark.parametrize("perm", [[1, 3, 0], [1, -2, 0]], ids=["too-high", "below--1"])
def test_port_out_of_range(perm: list[int]) -> None:
    s = sched((conf(0.5, 2.0, perm),), (conf(0.5, 1.0, P2),))
    r = validate(s, D3)
    assert "matching: switch 0 configuration 0: port out of range 0..2" in [str(v) for v in r.violations]
    assert not r.ok


def test_wrong_permutation_length() -> None:
    s = sched((conf(0.5, 2.0, [1, 2]),), (conf(0.5, 1.0, P2),))
    r = validate(s, D3)
    assert any(v.kind == "matching" and "has 2 ports" in v.message for v in r.violations)


def test_infinite_start_is_reported() -> None:
    s = sched((conf(float("inf"), 2.0, P1),), (conf(0.5, 1.0, P2),))
    r = validate(s, D3)
    assert "duration" in kinds(r)


def test_zero_delta_allows_start_at_zero_and_back_to_back() -> None:
    s = sched((conf(0.0, 2.0, P1), conf(2.0, 1.0, P2)), delta=0.0)
    assert validate(s, D3).ok


def test_timing_checked_even_after_a_bad_port() -> None:
    # config 0 holds 0.5..2.5 (with an out-of-range port); config 1 starts at 1.0, inside it.
    s = sched((conf(0.5, 2.0, [1, 2, 7]), conf(1.0, 2.0, P1)), (conf(0.5, 1.0, P2),))
    r = validate(s, D3)
    assert "matching" in kinds(r)
    assert "timing" in kinds(r)


@pytest.mark.parametrize("delta", [float("nan"), -1.0, float("inf")], ids=["nan", "negative", "inf"])
def test_bad_schedule_delta_is_reported_and_overlap_still_caught(delta: float) -> None:
    # Both configurations of switch 0 start at 0 and overlap. A NaN delta would make every timing
    # comparison False, and a negative one would excuse the overlap.
    s = sched((conf(0.0, 2.0, P1), conf(0.0, 1.0, P2)), delta=delta)
    r = validate(s, D3)
    assert not r.ok
    assert "delta" in kinds(r)
    assert any(v.kind == "timing" and v.message.startswith("switch 0 configuration 1:") for v in r.violations)


def test_unserved_names_the_entry_and_counts_overflow() -> None:
    n = 30
    m = np.ones((n, n))
    np.fill_diagonal(m, 0.0)
    r = validate(Schedule(ports=n, delta=0.1, switches=((),)), m)
    unserved = [v for v in r.violations if v.kind == "unserved"]
    assert len(unserved) == 21
    assert unserved[0].message == "demand[0, 1] = 1 but only 0 served"
    assert unserved[-1].message == f"... and {n * (n - 1) - 20} more unserved entries"


def test_max_violations_truncates() -> None:
    confs = tuple(conf(0.0, 1.0, [0, 0, 0]) for _ in range(10))  # each: timing + matching
    r = validate(sched(confs), D3, max_violations=5)
    assert len(r.violations) == 6
    assert r.violations[-1].kind == "truncated"


def test_raise_if_invalid() -> None:
    s = sched((conf(0.5, 2.0, P1),))
    r = validate(s, D3)
    assert not r.ok
    with pytest.raises(InvalidScheduleError, match=r"^invalid schedule: unserved: demand\[0, 2\]"):
        r.raise_if_invalid()


def test_raise_if_invalid_summarises_many() -> None:
    n = 30
    m = np.ones((n, n))
    np.fill_diagonal(m, 0.0)
    r = validate(Schedule(ports=n, delta=0.1, switches=((),)), m)
    with pytest.raises(InvalidScheduleError, match=r"\(and 11 more\)$"):
        r.raise_if_invalid()


def test_violation_str() -> None:
    assert str(Violation("timing", "x")) == "timing: x"


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_tolerance_is_relative_to_max_demand(scale: float) -> None:
    m = D3 * scale
    big = float(m.max())

    def short_by(amount: float) -> Schedule:
        return sched(
            (conf(0.5 * scale, m[2, 0] - amount, P1),), (conf(0.5 * scale, m[1, 0], P2),), delta=0.5 * scale
        )

    assert validate(short_by(0.0), m).ok
    assert validate(short_by(1e-12 * big), m).ok
    r = validate(short_by(1e-6 * big), m)
    assert not r.ok
    assert {v.kind for v in r.violations} == {"unserved"}
    assert len(r.violations) == 3  # (0,1), (1,2), (2,0) are all served by the short configuration
    assert r.max_shortfall == pytest.approx(1e-6 * big, rel=1e-3)
    assert TOL == 1e-9


def test_custom_tolerance() -> None:
    s = sched((conf(0.5, 2.0 - 1e-3, P1),), (conf(0.5, 1.0, P2),))
    assert not validate(s, D3).ok
    assert validate(s, D3, tol=1e-3).ok


def test_invalid_demand_raises() -> None:
    s = sched((conf(0.5, 2.0, P1),))
    with pytest.raises(InvalidInputError, match="non-negative"):
        validate(s, [[0, -1, 0], [0, 0, 0], [0, 0, 0]])


def test_fabric_delta_overrides_the_claimed_one() -> None:
    d = [[0, 1], [1, 0]]
    s = schedule(d, switches=1, delta=0.1)
    assert validate(s, d, delta=0.1).ok
    r = validate(s, d, delta=0.5)
    assert [v.kind for v in r.violations] == ["delta", "timing"]
    with pytest.raises(InvalidInputError, match="delta"):
        validate(s, d, delta=-1.0)


def test_violations_are_listed_switch_by_switch_in_order() -> None:
    """Each switch's configuration checks, then its timing, switch after switch (the checks of
    every switch run at once; the report keeps this order, also across kinds of switches)."""
    from ocsched import Fabric, Switch

    bad_ports = conf(0.5, 1.0, [1, 1, -1])  # output 1 twice
    early = conf(1.6, 1.0, [1, 2, 0])  # 0.1 after the previous end: delta is 0.5
    sched = Schedule(
        ports=3,
        delta=0.5,
        switches=((bad_ports, early), (conf(0.5, 1.0, [2, 2, -1]),), (conf(-1.0, 1.0, [1, 2, 0]),)),
        algorithm="hand",
        fabric=Fabric((Switch(0.5), Switch(0.5, bidirectional=True, ports_per_endpoint=2), Switch(0.5))),
    )
    got = [(v.kind, v.message.split(":")[0]) for v in validate(sched, D3).violations if v.kind != "unserved"]
    assert got == [
        ("matching", "switch 0 configuration 0"),
        ("timing", "switch 0 configuration 1"),
        ("timing", "switch 2 configuration 0"),
    ]
    # The bidirectional switch with 2 ports per endpoint allows [2, 2, -1]; a plain one does not.
    plain = dataclasses.replace(sched, fabric=Fabric((Switch(0.5), Switch(0.5), Switch(0.5))))
    got = [(v.kind, v.message.split(":")[0]) for v in validate(plain, D3).violations if v.kind != "unserved"]
    assert got == [
        ("matching", "switch 0 configuration 0"),
        ("timing", "switch 0 configuration 1"),
        ("matching", "switch 1 configuration 0"),
        ("timing", "switch 2 configuration 0"),
    ]
