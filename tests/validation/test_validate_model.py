"""validate() against the model of ocsched.timing: credit, zero-length configurations, failed
links, what the schedule claims about itself, and work linear in the schedule's size."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import run
from ocsched import schedule
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.model import Configuration, Demand, Schedule
from ocsched.timing import held_times, switch_violations
from ocsched.validation import ValidationReport, validate


def c(start: float, duration: float, circuits: list[tuple[int, int]], ports: int = 2) -> Configuration:
    ins = np.array([i for i, _ in circuits], np.int64)
    outs = np.array([j for _, j in circuits], np.int64)
    return Configuration.sparse(start, duration, ins, outs, ports=ports)


def on(fabric: Fabric, *switches: tuple[Configuration, ...], ports: int = 2) -> Schedule:
    return Schedule(
        ports=ports, delta=max(fabric.deltas), switches=tuple(switches), algorithm="hand", fabric=fabric
    )


def kinds(report: ValidationReport) -> list[str]:
    return [v.kind for v in report.violations]


D01 = np.array([[0.0, 5.0], [0.0, 0.0]])
PARTIAL0 = Fabric((Switch(0.0),), model="partial")


# --- credit: only while lit, the switch up and both links working ---


@pytest.mark.parametrize("port", [0, 1], ids=["input", "output"])
def test_zero_length_configurations_do_not_bridge_a_failed_link(port: int) -> None:
    # The case: (0, 1) held by two zero-length configurations on a link failed from t=0
    # was credited with the 5.5 between them ("valid: makespan 5.5").
    fab = Fabric((Switch(0.0),), failed_links=(LinkDown(port, 0, 0.0),), model="partial")
    r = validate(on(fab, (c(0.0, 0.0, [(0, 1)]), c(5.5, 0.0, [(0, 1)]))), D01)
    assert kinds(r) == ["link", "unserved"]
    assert r.max_shortfall == 5.0
    # Without the failure the circuit is lit from 0 to 5.5 (kept), and that serves the 5.
    assert validate(on(PARTIAL0, (c(0.0, 0.0, [(0, 1)]), c(5.5, 0.0, [(0, 1)]))), D01).ok


def test_a_kept_circuit_is_not_credited_past_its_link_failure() -> None:
    # (0, 1) lit 0.5..1.5, a zero-length configuration at 3 holds it again: the link fails at 2,
    # inside the gap, so the circuit is not kept; the gap is not credited.
    fab = Fabric((Switch(0.5),), failed_links=(LinkDown(1, 0, 2.0),), model="partial")
    d = np.array([[0.0, 2.5], [0.0, 0.0]])
    r = validate(on(fab, (c(0.5, 1.0, [(0, 1)]), c(3.0, 0.0, [(0, 1)]))), d)
    assert "link" in kinds(r) and "unserved" in kinds(r)
    assert r.max_shortfall == pytest.approx(1.5)
    # A failure at or after the second start leaves the gap credited.
    for f in (3.0, 10.0):
        late = Fabric((Switch(0.5),), failed_links=(LinkDown(1, 0, f),), model="partial")
        assert validate(on(late, (c(0.5, 1.0, [(0, 1)]), c(3.0, 0.0, [(0, 1)]))), d).ok


def test_a_kept_circuit_is_not_credited_across_a_down_window() -> None:
    fab = Fabric((Switch(0.5),), down=(SwitchDown(0, 2.0, 2.2),), model="partial")
    d = np.array([[0.0, 2.5], [0.0, 0.0]])
    r = validate(on(fab, (c(0.5, 1.0, [(0, 1)]), c(3.0, 0.0, [(0, 1)]))), d)
    assert kinds(r) == ["unserved"] and r.max_shortfall == pytest.approx(1.5)


@pytest.mark.parametrize(
    ("fabric", "kind"),
    [
        (Fabric((Switch(0.5),), down=(SwitchDown(0, 1.0, 1.5),)), "down"),
        (Fabric((Switch(0.5),), failed_links=(LinkDown(0, 0, 1.5),)), "link"),
    ],
    ids=["down window", "failed link"],
)
def test_time_lit_while_down_or_on_a_failed_link_serves_nothing(fabric: Fabric, kind: str) -> None:
    # [0.5, 2.5) holds (0, 1); the switch is down 1.0..1.5 (or the link fails at 1.5): 1.5 (1.0) served.
    r = validate(on(fabric, (c(0.5, 2.0, [(0, 1)]),)), np.array([[0.0, 2.0], [0.0, 0.0]]))
    assert kinds(r) == [kind, "unserved"]
    assert r.max_shortfall == pytest.approx(0.5 if kind == "down" else 1.0)


def test_zero_length_configuration_on_a_failed_link_is_reported() -> None:
    fab = Fabric((Switch(0.5),), failed_links=(LinkDown(0, 0, 1.0),))
    assert kinds(validate(on(fab, (c(2.0, 0.0, [(0, 1)]),)), np.zeros((2, 2)))) == ["link"]
    assert validate(on(fab, (c(0.5, 0.0, [(0, 1)]),)), np.zeros((2, 2))).ok  # ends by the failure


def test_zero_length_configuration_inside_a_down_window_is_reported() -> None:
    fab = Fabric((Switch(0.5),), down=(SwitchDown(0, 1.0, 2.0),))
    assert kinds(validate(on(fab, (c(1.5, 0.0, [(0, 1)]),)), np.zeros((2, 2)))) == ["down"]


def test_held_times_follow_the_credit_rule() -> None:
    a, b = (0.5, 1.0, np.array([0]), np.array([1])), (3.0, 0.0, np.array([0]), np.array([1]))
    assert [h.tolist() for h in held_times([a, b], model="partial")] == [[1.0], [1.5]]
    assert [h.tolist() for h in held_times([a, b], model="partial", failed_ports={0: 2.0})] == [[1.0], [0.0]]
    assert [h.tolist() for h in held_times([a, b], model="partial", windows=[(2.0, 2.1)])] == [[1.0], [0.0]]
    assert [h.tolist() for h in held_times([a], failed_ports={1: 1.0})] == [[0.5]]


def test_a_circuit_new_after_its_link_fails_is_timed_as_new() -> None:
    # The second configuration cannot keep (0, 1) (failure at 2.0 < 2.1): it is new and must wait
    # delta after the first ends; it also runs on the failed link.
    confs = [(1.0, 0.5, np.array([0]), np.array([1])), (2.1, 0.0, np.array([0]), np.array([1]))]
    found = switch_violations(confs, 1.0, model="partial", failed_ports={0: 2.0})
    assert [k for k, _, _ in found] == [1, 1] and [kind for _, kind, _ in found] == ["link", "timing"]


# --- what schedule() refuses, validate reports ---


def test_failed_link_on_a_port_that_does_not_exist_is_reported() -> None:
    fab = Fabric((Switch(0.1),), failed_links=(LinkDown(7, 0, 0.0),))
    good = schedule(D01, fabric=Fabric((Switch(0.1),)))
    s = on(fab, *good.switches)
    r = validate(s, D01)
    assert kinds(r) == ["fabric"] and "port 7" in r.violations[0].message
    with pytest.raises(InvalidInputError, match=r"names a port outside 0\.\.1"):
        schedule(D01, fabric=fab)


def test_failed_link_past_the_ports_in_a_file_is_reported_by_the_cli(tmp_path: Path) -> None:
    good = schedule(D01, fabric=Fabric((Switch(0.1), Switch(0.2))))
    doc = good.to_dict()
    doc["failed_links"] = [{"port": 5, "switch": 1, "start": 0.0}]
    (tmp_path / "s.json").write_text(json.dumps(doc))
    np.save(tmp_path / "d.npy", D01)
    res = run("validate", tmp_path / "d.npy", tmp_path / "s.json")
    assert res.exit_code == 1 and "fabric: failed link of port 5 on switch 1" in res.stdout


def test_a_given_fabric_naming_a_port_past_the_demand_is_bad_input() -> None:
    s = schedule(D01, switches=1, delta=0.1)
    with pytest.raises(InvalidInputError, match=r"names a port outside 0\.\.1"):
        validate(s, D01, fabric=Fabric((Switch(0.1),), failed_links=(LinkDown(2, 0, 0.0),)))


def test_input_port_used_twice_is_reported() -> None:
    # Configuration.sparse trusts its caller; validate must not.
    s = Schedule(ports=3, delta=0.0, switches=((c(0.0, 1.0, [(0, 1), (0, 2)], ports=3),),))
    r = validate(s, np.array([[0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    assert "matching: switch 0 configuration 0: input port 0 used twice" in [str(v) for v in r.violations]


@pytest.mark.parametrize("field", ["lower_bound", "dual_bound"])
@pytest.mark.parametrize("value", [2.0 * (1 + 1e-6), float("nan"), -1.0, float("inf")])
def test_a_bound_the_schedule_cannot_have_is_reported(field: str, value: float) -> None:
    s = schedule(np.array([[0.0, 1.0], [1.0, 0.0]]), switches=1, delta=1.0)  # makespan 2
    assert s.makespan == 2.0 and validate(s, [[0, 1], [1, 0]]).ok
    lying = Schedule(**{**s.__dict__, field: value})
    assert kinds(validate(lying, [[0, 1], [1, 0]])) == ["bound"]
    exact = Schedule(**{**s.__dict__, field: 2.0})
    assert validate(exact, [[0, 1], [1, 0]]).ok


def test_a_delta_that_is_not_the_fabrics_is_reported() -> None:
    fab = Fabric((Switch(0.1), Switch(0.3)))
    s = schedule(D01, fabric=fab)
    assert validate(s, D01).ok
    r = validate(Schedule(**{**s.__dict__, "delta": 0.1}), D01)
    assert kinds(r) == ["delta"]


def test_unknown_status_and_no_switch_are_reported() -> None:
    s = schedule(D01, switches=1, delta=0.1)
    assert kinds(validate(Schedule(**{**s.__dict__, "status": "proven"}), D01)) == ["status"]
    empty = Schedule(ports=2, delta=0.1, switches=())
    assert kinds(validate(empty, np.zeros((2, 2)))) == ["switches"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tol": float("nan")}, "`tol`"),
        ({"tol": -1e-9}, "`tol`"),
        ({"tol": 1.0}, "`tol`"),
        ({"max_violations": -1}, "`max_violations`"),
        ({"max_violations": 2.5}, "`max_violations`"),
    ],
)
def test_bad_options_are_refused(kwargs: dict[str, float], match: str) -> None:
    # A NaN or negative tolerance, or a negative cap, would pass any schedule silently.
    s = Schedule(ports=2, delta=0.0, switches=((),))
    with pytest.raises(InvalidInputError, match=match):
        validate(s, D01, **kwargs)  # type: ignore[arg-type]


def test_not_a_schedule_or_not_a_fabric_is_bad_input() -> None:
    with pytest.raises(InvalidInputError, match=r"`schedule` must be an ocsched\.Schedule"):
        validate({"ports": 2}, D01)  # type: ignore[arg-type]
    s = Schedule(ports=2, delta=0.0, switches=((),), fabric={"switches": []})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="fabric"):
        validate(s, D01)


# --- work linear in the schedule's size ---


def _windowed(k: int, model: str) -> Schedule:
    """k configurations on one switch, a down window after each (so k windows), a late failure."""
    confs, down = [], []
    t = 0.1
    for m in range(k):
        confs.append(c(t, 0.5, [(m % 4, (m + 1) % 4), (4 + m % 3, 4 + (m + 1) % 3)], ports=8))
        down.append(SwitchDown(0, t + 0.6, t + 0.7))
        t += 0.9
    fab = Fabric((Switch(0.1),), tuple(down), (LinkDown(7, 0, 1e9),), model)
    return Schedule(ports=8, delta=0.1, switches=(tuple(confs),), fabric=fab)


def _calls(fn: Callable[[], object]) -> int:
    """How many Python and C functions ``fn`` calls (a work count, the same on any machine)."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("model", ["all-stop", "partial"])
def test_reading_and_validating_work_is_linear(model: str) -> None:
    # Checking each configuration against every window made this 4x per doubling (17 s for a
    # 300 KB file); every step is now a sort or a binary search.
    demand = Demand(8, np.array([0]), np.array([1]), np.array([0.1]))
    small, big = _windowed(200, model), _windowed(400, model)
    assert validate(small, demand).ok and validate(big, demand).ok
    assert _calls(lambda: validate(big, demand)) < 2.3 * _calls(lambda: validate(small, demand))
    text_small, text_big = small.to_json(), big.to_json()
    assert _calls(lambda: Schedule.from_json(text_big)) < 2.3 * _calls(lambda: Schedule.from_json(text_small))


def test_zero_length_configurations_do_not_widen_the_tolerance() -> None:
    # (0, 1) needs 1 and gets 1 - 5e-9 at t = 1e6 (tolerance 1e-9 of the line + 8 ulps of 1e6 =
    # 1.9e-9). A thousand zero-length configurations holding (0, 1) serve nothing, and must not
    # add 8 ulps each to the tolerance (9e-7 in all, enough to pass).
    d = np.array([[0.0, 1.0], [0.0, 0.0]])
    short = c(1e6, 1.0 - 5e-9, [(0, 1)])
    alone = Schedule(ports=2, delta=0.0, switches=((short,),))
    assert kinds(validate(alone, d)) == ["unserved"]
    pile = tuple(c(short.end, 0.0, [(0, 1)]) for _ in range(1000))
    assert kinds(validate(Schedule(ports=2, delta=0.0, switches=((short, *pile),)), d)) == ["unserved"]


def test_a_window_starting_where_a_configuration_sits_is_not_before_it() -> None:
    # A window [8, 8 + 1e-14) starts exactly at a zero-length configuration: the configuration is
    # not in it and it has not "ended" before it, so no delay after it is owed (it was, within
    # the tolerance: a false rejection). A configuration 4 ulps inside a window's end still owes
    # the delay after the window: rounding cannot let it leave without one.
    fab = Fabric((Switch(2.5),), down=(SwitchDown(0, 8.0, 8.0 + 1e-14),))
    assert validate(on(fab, (c(2.5, 0.0, [(1, 0)]), c(8.0, 0.0, [(0, 1)]))), np.zeros((2, 2))).ok
    inside = Fabric((Switch(1.0),), down=(SwitchDown(0, 1.5, 2.0),))
    late = c(2.0 - 4 * np.spacing(2.0), 0.0, [(0, 1)])
    assert kinds(validate(on(inside, (c(1.0, 0.0, [(1, 0)]), late)), np.zeros((2, 2)))) == ["timing"]


# --- reading: a field the file's version does not have is refused, not ignored ---


def _v1_doc() -> dict[str, object]:
    return schedule(D01, switches=2, delta=0.1).to_dict()


def _v2_doc() -> dict[str, object]:
    return schedule(D01, fabric=Fabric((Switch(0.1), Switch(0.2, 2.0)))).to_dict()


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (
            lambda d: d.update(failed_links=[{"port": 0, "switch": 0}]),
            r"`failed_links` is not part of version 1",
        ),
        (lambda d: d.update(down=[{"switch": 0, "start": 0.0}]), r"`down` is not part of version 1"),
        (lambda d: d.update(model="partial"), r"`model` is not part of version 1"),
        (lambda d: d["switches"][0].update(delta=0.5), r"`switches\[0\]` has a delta of its own"),
        (lambda d: d["switches"][1].update(rate=0.5), r"`switches\[1\]` has a rate of its own"),
    ],
    ids=["failed_links", "down", "model", "switch delta", "switch rate"],
)
def test_a_version_1_file_with_fabric_fields_is_refused(
    edit: Callable[[dict[str, Any]], None], match: str
) -> None:
    # Read as version 1 these were dropped: a failed link or a larger delay never checked.
    doc = _v1_doc()
    assert doc["version"] == 1
    Schedule.from_dict(doc)
    edit(doc)
    with pytest.raises(InvalidInputError, match=match):
        Schedule.from_dict(doc)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d.update(delta=0.5), r"`delta` is not part of version 2"),
        (lambda d: d["switches"][1].update(rates=0.5), r"`switches\[1\]` has unknown key 'rates'"),
        (lambda d: d.update(down=[{"switch": 1, "start": 0.5, "stop": 1.0}]), r"`down\[0\]` has unknown key"),
        (
            lambda d: d.update(failed_links=[{"port": 0, "switch": 1, "at": 0.5}]),
            r"`failed_links\[0\]` has unknown key 'at'",
        ),
    ],
    ids=["delta", "rates", "down stop", "link at"],
)
def test_a_version_2_file_with_unknown_fields_is_refused(
    edit: Callable[[dict[str, Any]], None], match: str
) -> None:
    doc = _v2_doc()
    assert doc["version"] == 2
    Schedule.from_dict(doc)
    edit(doc)
    with pytest.raises(InvalidInputError, match=match):
        Schedule.from_dict(doc)


def test_held_times_has_one_entry_per_circuit_even_for_a_non_finite_configuration() -> None:
    # reschedule pairs each configuration's circuits with its held times.
    bad = (float("nan"), 1.0, np.array([0, 1]), np.array([1, 0]))
    assert [h.tolist() for h in held_times([bad, (0.5, 1.0, np.array([0]), np.array([1]))])] == [
        [0.0, 0.0],
        [1.0],
    ]


def test_schedule_file_fabric_lists_are_capped_before_anything_is_built() -> None:
    from ocsched.fabric import MAX_DOWN_WINDOWS, MAX_FAILED_LINKS, MAX_SWITCHES

    base = Schedule(2, 0.1, ((),), fabric=Fabric.from_deltas([0.1], rates=[2.0])).to_dict()
    assert base["version"] == 2
    for key, cap, item in (
        ("switches", MAX_SWITCHES, {"delta": 0.1, "configurations": []}),
        ("down", MAX_DOWN_WINDOWS, {"switch": 0, "start": 1.0}),
        ("failed_links", MAX_FAILED_LINKS, {"port": 0, "switch": 0}),
    ):
        data = {**base, key: [item] * (cap + 1)}
        with pytest.raises(
            InvalidInputError, match=rf"schedule `{key}` lists {cap + 1} entries; at most {cap}"
        ):
            Schedule.from_dict(data)
