"""Tests of the data model: Demand construction and checks, argument checks, Schedule and its JSON form."""

from __future__ import annotations

import copy
import json
import logging
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import conf
from ocsched import schedule
from ocsched._checks import check_delta, check_switches
from ocsched.errors import InvalidInputError
from ocsched.model import (
    SCHEDULE_FORMAT,
    SCHEDULE_VERSION,
    Configuration,
    Demand,
    Schedule,
    as_demand,
)

# d3 = 2 * (0->1, 1->2, 2->0) + 1 * (0->2, 1->0, 2->1)
D3 = [[0.0, 2.0, 1.0], [1.0, 0.0, 2.0], [2.0, 1.0, 0.0]]


def hand_schedule(**kw: Any) -> Schedule:
    """A valid schedule of D3 on two switches with delta 0.5 (makespan 2.5, loads 2.5 and 1.5)."""
    args: dict[str, Any] = {
        "ports": 3,
        "delta": 0.5,
        "switches": ((conf(0.5, 2.0, [1, 2, 0]),), (conf(0.5, 1.0, [2, 0, 1]),)),
        "algorithm": "hand",
    }
    args.update(kw)
    return Schedule(**args)


# ---------------------------------------------------------------------------------------------
# Demand.from_matrix / as_demand: accepted inputs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: D3, id="list"),
        pytest.param(lambda: np.array(D3), id="ndarray"),
        pytest.param(lambda: np.array(D3, dtype=np.float32), id="float32"),
        pytest.param(lambda: np.array(D3, dtype=np.int64), id="int64"),
        pytest.param(lambda: np.array(D3, dtype=np.uint8), id="uint8"),
        pytest.param(lambda: sp.coo_array(np.array(D3)), id="coo_array"),
        pytest.param(lambda: sp.csr_array(np.array(D3)), id="csr_array"),
        pytest.param(lambda: sp.csc_matrix(np.array(D3)), id="csc_matrix"),
        pytest.param(lambda: sp.coo_matrix(np.array(D3, dtype=np.int32)), id="coo_matrix_int"),
    ],
)
def test_from_matrix_accepts_dense_and_sparse(make: Any) -> None:
    d = Demand.from_matrix(make())
    assert d.n == 3
    assert d.nnz == 6
    assert d.rows.dtype == np.int64 and d.cols.dtype == np.int64 and d.values.dtype == np.float64
    np.testing.assert_array_equal(d.to_dense(), np.array(D3))
    # stored row-major, strictly positive, off-diagonal
    assert d.rows.tolist() == [0, 0, 1, 1, 2, 2]
    assert d.cols.tolist() == [1, 2, 0, 2, 0, 1]
    assert (d.values > 0).all() and (d.rows != d.cols).all()


def test_from_matrix_bool_dtype() -> None:
    m = np.array([[False, True], [True, False]])
    np.testing.assert_array_equal(Demand.from_matrix(m).to_dense(), [[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(Demand.from_matrix(sp.csr_array(m)).to_dense(), [[0.0, 1.0], [1.0, 0.0]])


def test_from_matrix_sparse_duplicates_add_up() -> None:
    m = sp.coo_array(([1.0, 2.0, 0.25, 3.0], ([0, 0, 2, 1], [1, 1, 0, 0])), shape=(3, 3))
    d = Demand.from_matrix(m)
    expected = np.zeros((3, 3))
    expected[0, 1], expected[2, 0], expected[1, 0] = 3.0, 0.25, 3.0
    np.testing.assert_array_equal(d.to_dense(), expected)
    assert d.nnz == 3  # one entry per coordinate after summing


def test_from_matrix_drops_zeros_and_explicit_sparse_zeros() -> None:
    m = sp.coo_array(([0.0, 1.5], ([0, 1], [1, 0])), shape=(2, 2))
    d = Demand.from_matrix(m)
    assert d.nnz == 1 and d.rows.tolist() == [1] and d.values.tolist() == [1.5]
    assert Demand.from_matrix(np.zeros((4, 4))).nnz == 0


def test_from_matrix_all_zero_is_valid() -> None:
    d = Demand.from_matrix([[0.0]])
    assert (d.n, d.nnz, d.max_degree, d.max_line_sum) == (1, 0, 0, 0.0)


def test_demand_arrays_are_read_only() -> None:
    d = Demand.from_matrix(D3)
    for a in (d.rows, d.cols, d.values):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 7


def test_from_matrix_does_not_modify_input() -> None:
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    before = m.copy()
    Demand.from_matrix(m)
    np.testing.assert_array_equal(m, before)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_from_matrix_drops_diagonal_with_warning(sparse: bool, caplog: pytest.LogCaptureFixture) -> None:
    m = np.array([[5.0, 1.0, 0.0], [0.0, 0.0, 2.0], [1.0, 0.0, 2.5]])
    with caplog.at_level(logging.WARNING, logger="ocsched.model"):
        d = Demand.from_matrix(sp.csr_array(m) if sparse else m, name="traffic")
    expected = m.copy()
    np.fill_diagonal(expected, 0.0)
    np.testing.assert_array_equal(d.to_dense(), expected)
    records = [r for r in caplog.records if r.name == "ocsched.model"]
    assert len(records) == 1
    assert records[0].levelno == logging.WARNING
    msg = records[0].getMessage()
    assert "traffic" in msg and "2 diagonal" in msg and "7.5" in msg


def test_from_matrix_no_warning_without_diagonal(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="ocsched.model"):
        Demand.from_matrix(D3)
    assert not [r for r in caplog.records if r.name == "ocsched.model"]


def test_as_demand_passes_demand_through() -> None:
    d = Demand.from_matrix(D3)
    assert as_demand(d) is d
    assert Demand.from_matrix(d) is d  # type: ignore[arg-type]
    np.testing.assert_array_equal(as_demand(D3).to_dense(), d.to_dense())


def test_demand_derived_quantities() -> None:
    d = Demand.from_matrix([[0, 4, 0], [1, 0, 0], [2, 0, 0]])
    assert d.shape == (3, 3)
    np.testing.assert_array_equal(d.row_sums(), [4, 1, 2])
    np.testing.assert_array_equal(d.col_sums(), [3, 4, 0])
    np.testing.assert_array_equal(d.row_nnz(), [1, 1, 1])
    np.testing.assert_array_equal(d.col_nnz(), [2, 1, 0])
    assert d.max_degree == 2
    assert d.max_line_sum == 4.0
    np.testing.assert_array_equal(d.to_sparse().toarray(), d.to_dense())
    np.testing.assert_array_equal(d.scaled(0.5).to_dense(), d.to_dense() * 0.5)


# ---------------------------------------------------------------------------------------------
# Demand.from_matrix: errors name the argument and the offending value / first offending index
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matrix", "pattern"),
    [
        pytest.param(
            [[0, 1, 2], [1, 0, 2]], r"`traffic` must be a square n x n matrix; got shape \(2, 3\)", id="2x3"
        ),
        pytest.param([1.0, 2.0], r"`traffic` must be a square.*shape \(2,\)", id="1-D"),
        pytest.param(np.zeros((2, 2, 2)), r"`traffic` must be a square.*shape \(2, 2, 2\)", id="3-D"),
        pytest.param(3.0, r"`traffic` must be a square.*shape \(\)", id="scalar"),
        pytest.param(np.zeros((0, 0)), r"`traffic` must not be empty; got shape \(0, 0\)", id="0x0"),
        pytest.param([], r"`traffic`.*shape \(0,\)", id="empty-list"),
        pytest.param([[0, 1], [1]], r"`traffic` must be a square numeric matrix", id="ragged"),
        pytest.param(
            [[0, 1, 2], [1, 0, np.nan], [np.nan, 0, 0]],
            r"`traffic` must be finite; traffic\[1, 2\] = nan",
            id="nan",
        ),
        pytest.param([[0, 1], [np.inf, 0]], r"`traffic` must be finite; traffic\[1, 0\] = inf", id="+inf"),
        pytest.param([[0, -np.inf], [1, 0]], r"`traffic` must be finite; traffic\[0, 1\] = -inf", id="-inf"),
        pytest.param(
            [[0, 1, 2], [1, 0, -3], [-1, 0, 0]],
            r"`traffic` must be non-negative; traffic\[1, 2\] = -3\.0",
            id="negative",
        ),
        pytest.param(
            np.array([[0, 1j], [1, 0]]),
            r"`traffic` must hold real numbers; got dtype complex128",
            id="complex",
        ),
        pytest.param(
            [["0", "1"], ["1", "0"]], r"`traffic` must hold real numbers; got dtype <U1", id="strings"
        ),
        pytest.param(
            np.array([[0, 1], [1, None]], dtype=object),
            r"`traffic` must hold real numbers; got dtype object",
            id="object",
        ),
    ],
)
def test_from_matrix_rejects_dense(matrix: Any, pattern: str) -> None:
    with pytest.raises(InvalidInputError, match=pattern):
        Demand.from_matrix(matrix, name="traffic")


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        pytest.param(lambda: sp.csr_array((2, 3)), r"`traffic` must be a square.*\(2, 3\)", id="non-square"),
        pytest.param(lambda: sp.csr_array((0, 0)), r"`traffic` must not be empty", id="0x0"),
        pytest.param(
            lambda: sp.coo_array(([1.0, np.nan], ([0, 2], [1, 0])), shape=(3, 3)),
            r"`traffic` must be finite; traffic\[2, 0\] = nan",
            id="nan",
        ),
        pytest.param(
            lambda: sp.coo_array(([np.inf], ([1], [2])), shape=(3, 3)),
            r"`traffic` must be finite; traffic\[1, 2\] = inf",
            id="inf",
        ),
        pytest.param(
            lambda: sp.coo_array(([1.0, -0.5, -2.0], ([2, 1, 2], [0, 2, 1])), shape=(3, 3)),
            r"`traffic` must be non-negative; traffic\[1, 2\] = -0\.5",
            id="negative-first-by-row",
        ),
        pytest.param(
            lambda: sp.csr_array(np.array([[0, 1j], [1, 0]])),
            r"`traffic` must hold real numbers; got dtype complex128",
            id="complex",
        ),
    ],
)
def test_from_matrix_rejects_sparse(make: Any, pattern: str) -> None:
    with pytest.raises(InvalidInputError, match=pattern):
        Demand.from_matrix(make(), name="traffic")


def test_invalid_input_error_is_value_error() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        as_demand([[0, -1], [1, 0]])


def test_default_name_is_demand() -> None:
    with pytest.raises(InvalidInputError, match=r"^`demand` must be non-negative; demand\[0, 1\] = -1"):
        as_demand([[0, -1], [1, 0]])


# ---------------------------------------------------------------------------------------------
# check_switches / check_delta
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, 1), (16, 16), (np.int64(3), 3), (np.int32(2), 2), (4.0, 4), (np.float64(5.0), 5)],
)
def test_check_switches_accepts(value: object, expected: int) -> None:
    out = check_switches(value)
    assert out == expected and type(out) is int


@pytest.mark.parametrize(
    "value",
    [
        0,
        -1,
        np.int64(0),
        2.5,
        0.0,
        float("nan"),
        float("inf"),
        "3",
        None,
        [2],
        np.bool_(True),
        pytest.param(True, id="True"),
        pytest.param(False, id="False"),
    ],
)
def test_check_switches_rejects(value: object) -> None:
    with pytest.raises(InvalidInputError, match=r"^`switches` must be an integer >= 1; got "):
        check_switches(value)


def test_check_switches_names_the_argument_and_value() -> None:
    with pytest.raises(InvalidInputError, match=r"^`-s` must be an integer >= 1; got 2\.5$"):
        check_switches(2.5, name="-s")
    with pytest.raises(InvalidInputError, match=r"got '3'$"):
        check_switches("3")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, 0.0), (0.04, 0.04), (3, 3.0), (np.float64(0.5), 0.5), (np.int64(2), 2.0), (Fraction(1, 4), 0.25)],
)
def test_check_delta_accepts(value: object, expected: float) -> None:
    out = check_delta(value)
    assert out == expected and type(out) is float


@pytest.mark.parametrize(
    "value",
    [
        -0.1,
        -1,
        float("nan"),
        float("inf"),
        -float("inf"),
        "0.1",
        None,
        True,
        False,
        np.bool_(False),
        1j,
        [0.1],
    ],
)
def test_check_delta_rejects(value: object) -> None:
    with pytest.raises(InvalidInputError, match=r"^`delta` must be a finite number >= 0; got "):
        check_delta(value)


def test_check_delta_names_the_argument_and_value() -> None:
    with pytest.raises(InvalidInputError, match=r"^`--delta` must be a finite number >= 0; got -0\.5$"):
        check_delta(-0.5, name="--delta")


# ---------------------------------------------------------------------------------------------
# Configuration and Schedule
# ---------------------------------------------------------------------------------------------


def test_configuration_from_circuits_and_back() -> None:
    c = Configuration.from_circuits(1.5, 2.0, [(2, 0), (0, 3)], ports=4)
    assert c.perm.tolist() == [3, -1, 0, -1]
    assert c.circuits == [(0, 3), (2, 0)]
    assert (c.start, c.duration, c.end) == (1.5, 2.0, 3.5)
    assert c.same_as(Configuration.from_circuits(1.5, 2.0, [(0, 3), (2, 0)], ports=4))
    assert not c.same_as(Configuration.from_circuits(1.5, 2.5, [(0, 3), (2, 0)], ports=4))
    assert not c.same_as(Configuration.from_circuits(1.5, 2.0, [(0, 3)], ports=4))


def test_schedule_quantities() -> None:
    s = Schedule(
        ports=3,
        delta=0.5,
        switches=(
            (conf(0.5, 2.0, [1, 2, 0]), conf(3.0, 0.25, [1, -1, -1])),
            (conf(0.5, 1.0, [2, 0, 1]),),
            (),
        ),
    )
    assert s.makespan == 3.25
    assert s.num_switches == 3
    assert s.num_configurations == 3
    np.testing.assert_array_equal(s.loads(), [3.25, 1.5, 0.0])
    served = np.array([[0, 2.25, 1.0], [1.0, 0, 2.0], [2.0, 1.0, 0]])
    np.testing.assert_array_equal(s.served(), served)


def test_served_credits_what_validate_credits() -> None:
    # A partial-model carry-over, ended by a down window: served() is the validator's credit, not
    # rate x duration (which would say 2.0 for (1, 0) in both).
    from ocsched import validate
    from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown

    def on(down: tuple[SwitchDown, ...]) -> Schedule:
        fab = Fabric(
            (Switch(0.5, 2.0), Switch(0.5, 1.0)),
            down=down,
            failed_links=(LinkDown(0, 0, 1.5),),
            model="partial",
        )
        sw1 = (conf(0.5, 1.0, [-1, 0]), conf(3.0, 1.0, [-1, 0]))
        return Schedule(ports=2, delta=0.5, switches=((conf(0.5, 1.0, [1, -1]),), sw1), fabric=fab)

    # (0, 1): rate 2 x [0.5, 1.5), up to its link's failure. (1, 0): 1.0 + 1.0, plus the gap [1.5, 3.0)
    # it stays lit in, unless a down window in that gap drops the circuit.
    kept, dropped = on(()), on((SwitchDown(1, 2.0, 2.5),))
    np.testing.assert_allclose(kept.served(), [[0.0, 2.0], [3.5, 0.0]])
    np.testing.assert_allclose(dropped.served(), [[0.0, 2.0], [2.0, 0.0]])
    for s in (kept, dropped):
        fab = s.on_fabric()
        assert validate(s, s.served(), fabric=fab).ok
        assert not validate(s, s.served() * (1 + 1e-6), fabric=fab).ok


def test_empty_schedule_quantities() -> None:
    s = Schedule(ports=2, delta=0.1, switches=((), ()))
    assert s.makespan == 0.0 and s.num_configurations == 0
    np.testing.assert_array_equal(s.loads(), [0.0, 0.0])
    np.testing.assert_array_equal(s.served(), np.zeros((2, 2)))


def test_to_dict_matches_the_contract() -> None:
    s = hand_schedule(lower_bound=2.25, splits=1, meta={"seed": 7})
    d = s.to_dict()
    assert d["format"] == SCHEDULE_FORMAT == "ocsched.schedule"
    assert d["version"] == SCHEDULE_VERSION == 1
    assert d["ports"] == 3 and d["delta"] == 0.5 and d["makespan"] == 2.5
    assert d["algorithm"] == "hand" and d["lower_bound"] == 2.25 and d["splits"] == 1
    assert d["meta"] == {"seed": 7}
    assert d["switches"] == [
        {"configurations": [{"start": 0.5, "duration": 2.0, "circuits": [[0, 1], [1, 2], [2, 0]]}]},
        {"configurations": [{"start": 0.5, "duration": 1.0, "circuits": [[0, 2], [1, 0], [2, 1]]}]},
    ]
    # the JSON text is plain JSON with the same content
    assert json.loads(s.to_json()) == d
    assert json.loads(s.to_json(indent=2)) == d


@pytest.mark.parametrize("s", [1, 3, 8])
def test_scheduled_json_has_exactly_s_switch_entries(s: int) -> None:
    d = schedule(D3, switches=s, delta=0.1).to_dict()
    assert len(d["switches"]) == s
    for sw in d["switches"]:
        assert set(sw) == {"configurations"}
        for c in sw["configurations"]:
            assert set(c) == {"start", "duration", "circuits"}
            assert all(isinstance(p, list) and len(p) == 2 for p in c["circuits"])


def _round_trip_exact(s: Schedule) -> None:
    text1 = s.to_json()
    s1 = Schedule.from_json(text1)
    assert s1.same_as(s)
    assert dict(s1.meta) == dict(s.meta)
    text2 = s1.to_json()
    assert text2 == text1
    s2 = Schedule.from_json(text2)
    assert s2.same_as(s) and s2.to_json() == text1


def test_round_trip_hand_schedule_with_meta() -> None:
    _round_trip_exact(hand_schedule(lower_bound=2.25, splits=3, meta={"seed": 7, "params": {"a": [1, 2.5]}}))


def test_round_trip_awkward_floats() -> None:
    c = conf(0.1 + 0.2, 1 / 3, [1, 0])
    s = Schedule(ports=2, delta=0.1 + 0.2, switches=((c,),), lower_bound=1e-300, meta={"x": 2.0**-1074})
    _round_trip_exact(s)


def test_round_trip_empty_switches_and_zero_demand() -> None:
    _round_trip_exact(Schedule(ports=4, delta=0.0, switches=((), (), ())))
    _round_trip_exact(Schedule(ports=1, delta=0.25, switches=()))
    zero = schedule(np.zeros((3, 3)), switches=2, delta=0.1)
    assert zero.num_configurations == 0 and zero.makespan == 0.0
    _round_trip_exact(zero)


def test_round_trip_scheduled() -> None:
    rng = np.random.default_rng(5)
    m = rng.random((6, 6)) * (rng.random((6, 6)) < 0.6)
    np.fill_diagonal(m, 0.0)
    s = schedule(m, switches=3, delta=0.05)
    assert s.meta  # provenance is recorded and must survive
    _round_trip_exact(s)


def test_same_as_detects_differences() -> None:
    base = hand_schedule()
    assert base.same_as(hand_schedule())
    assert not base.same_as(hand_schedule(delta=0.25))
    assert not base.same_as(hand_schedule(algorithm="other"))
    assert not base.same_as(hand_schedule(lower_bound=1.0))
    assert not base.same_as(hand_schedule(splits=1))
    assert not base.same_as(hand_schedule(switches=base.switches[:1]))
    assert not base.same_as(hand_schedule(switches=(base.switches[0], (conf(0.5, 1.0, [2, 0, -1]),))))


# ---------------------------------------------------------------------------------------------
# Schedule.from_json / from_dict errors
# ---------------------------------------------------------------------------------------------


def _doc() -> dict[str, Any]:
    return hand_schedule(lower_bound=2.25, meta={"seed": 1}).to_dict()


def _edit(path: list[Any], value: Any) -> dict[str, Any]:
    d = copy.deepcopy(_doc())
    target: Any = d
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return d


_DELETE = object()
C0 = ["switches", 0, "configurations", 0]


@pytest.mark.parametrize(
    ("path", "value", "pattern"),
    [
        pytest.param(
            ["format"],
            "ocsched.other",
            r"`format` must be 'ocsched\.schedule'; got 'ocsched\.other'",
            id="format",
        ),
        pytest.param(["format"], _DELETE, r"`format` must be 'ocsched\.schedule'; got None", id="no-format"),
        pytest.param(["version"], 3, r"`version` must be 1 or 2; got 3", id="version"),
        pytest.param(["version"], "1", r"`version` must be 1 or 2; got '1'", id="version-str"),
        pytest.param(["ports"], _DELETE, r"`ports` is missing", id="no-ports"),
        pytest.param(["delta"], _DELETE, r"`delta` is missing", id="no-delta"),
        pytest.param(["switches"], _DELETE, r"`switches` is missing", id="no-switches"),
        pytest.param(
            [*C0[:3]], _DELETE, r"`switches\[0\]\.configurations` is missing", id="no-configurations"
        ),
        pytest.param(
            [*C0, "start"], _DELETE, r"`switches\[0\]\.configurations\[0\]\.start` is missing", id="no-start"
        ),
        pytest.param(
            [*C0, "duration"], _DELETE, r"configurations\[0\]\.duration` is missing", id="no-duration"
        ),
        pytest.param(
            [*C0, "circuits"], _DELETE, r"configurations\[0\]\.circuits` is missing", id="no-circuits"
        ),
        pytest.param(["ports"], "3", r"`ports` must be .*; got '3'", id="ports-str"),
        pytest.param(["ports"], 3.0, r"`ports` must be .*; got 3\.0", id="ports-float"),
        pytest.param(["ports"], True, r"`ports` must be .*; got True", id="ports-bool"),
        pytest.param(["ports"], 0, r"`ports` must be in 1\.\.1000000; got 0", id="ports-zero"),
        pytest.param(["delta"], "0.5", r"`delta` must be .*; got '0\.5'", id="delta-str"),
        pytest.param(["switches"], {}, r"`switches` must be .*; got \{\}", id="switches-dict"),
        pytest.param(["switches", 0], [], r"`switches\[0\]` must be an object; got \[\]", id="switch-list"),
        pytest.param(
            [*C0], 5, r"`switches\[0\]\.configurations\[0\]` must be an object; got 5", id="conf-int"
        ),
        pytest.param(
            [*C0, "start"], "0.5", r"configurations\[0\]\.start` must be .*; got '0\.5'", id="start-str"
        ),
        pytest.param(
            [*C0, "duration"],
            None,
            r"configurations\[0\]\.duration` must be .*; got None",
            id="duration-null",
        ),
        pytest.param(
            [*C0, "circuits"], {}, r"configurations\[0\]\.circuits` must be .*; got \{\}", id="circuits-dict"
        ),
        pytest.param(
            [*C0, "circuits", 0], [0, 1, 2], r"must hold \[i, j\] integer pairs; got \[0, 1, 2\]", id="triple"
        ),
        pytest.param([*C0, "circuits", 0], [0, 1.0], r"must hold \[i, j\] integer pairs", id="float-port"),
        pytest.param([*C0, "circuits", 0], [0, True], r"must hold \[i, j\] integer pairs", id="bool-port"),
        pytest.param([*C0, "circuits", 0], "01", r"must hold \[i, j\] integer pairs", id="str-pair"),
        pytest.param([*C0, "circuits", 0], [0, 3], r"port out of range 0\.\.2: \[0, 3\]", id="out-port-high"),
        pytest.param(
            [*C0, "circuits", 0], [-1, 1], r"port out of range 0\.\.2: \[-1, 1\]", id="in-port-negative"
        ),
        pytest.param(
            [*C0, "circuits", 1],
            [0, 2],
            r"configurations\[0\]\.circuits` uses input port 0 twice",
            id="input-twice",
        ),
        pytest.param(
            ["makespan"],
            2.75,
            r"`makespan` = 2\.75 disagrees with its configurations, which end at 2\.5",
            id="makespan-off",
        ),
        pytest.param(["makespan"], 2.5 + 1e-6, r"`makespan` = .* disagrees", id="makespan-slightly-off"),
    ],
)
def test_from_dict_rejects(path: list[Any], value: Any, pattern: str) -> None:
    doc = _edit(path, value)
    with pytest.raises(InvalidInputError, match=r"^schedule .*" + pattern):
        Schedule.from_dict(doc)
    with pytest.raises(InvalidInputError, match=r"^schedule .*" + pattern):
        Schedule.from_json(json.dumps(doc))


@pytest.mark.parametrize("ports", [10**30, 10**6 + 1])
def test_from_dict_rejects_absurd_ports(ports: int) -> None:
    with pytest.raises(InvalidInputError, match=r"`ports`"):
        Schedule.from_dict(_edit(["ports"], ports))


def test_from_dict_accepts_output_port_used_twice_for_validate_to_report() -> None:
    # Two inputs on one output is representable (perm = [1, 1, ...]); validate reports it as a
    # "matching" violation instead of the reader rejecting the file.
    doc = _edit([*C0, "circuits"], [[0, 1], [2, 1]])
    s = Schedule.from_dict(doc)
    assert s.switches[0][0].perm.tolist() == [1, -1, 1]


@pytest.mark.parametrize(
    "text",
    ["", "{", "[1, 2", "not json", '{"format": "ocsched.schedule",}'],
    ids=["empty", "open-brace", "open-list", "words", "trailing-comma"],
)
def test_from_json_rejects_invalid_json(text: str) -> None:
    with pytest.raises(InvalidInputError, match=r"^schedule is not valid JSON: "):
        Schedule.from_json(text)


@pytest.mark.parametrize("text", ["[]", "3", '"x"', "null"])
def test_from_json_rejects_non_object(text: str) -> None:
    with pytest.raises(InvalidInputError, match=r"^schedule must be a JSON object; got "):
        Schedule.from_json(text)


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        pytest.param("splits", "abc", "'abc'", id="splits-str"),
        pytest.param("splits", 2.7, "2.7", id="splits-float"),
        pytest.param("splits", True, "True", id="splits-bool"),
        pytest.param("algorithm", 5, "5", id="algorithm-int"),
        pytest.param("meta", [1, 2], r"\[1, 2\]", id="meta-list"),
        pytest.param("lower_bound", True, "True", id="lower-bound-bool"),
        pytest.param("lower_bound", "2", "'2'", id="lower-bound-str"),
        pytest.param("makespan", "2.5", r"'2\.5'", id="makespan-str"),
        pytest.param("version", True, "True", id="version-bool"),
        pytest.param("version", 1.5, r"1\.5", id="version-float"),
    ],
)
def test_from_dict_rejects_wrong_optional_types(key: str, value: Any, shown: str) -> None:
    # Optional fields are type-checked too: no bare ValueError, no silent coercion or dropping.
    with pytest.raises(InvalidInputError, match=f"^schedule `{key}` must be .*; got {shown}$"):
        Schedule.from_dict(_edit([key], value))


@pytest.mark.parametrize("key", ["algorithm", "lower_bound", "splits", "meta", "makespan"])
@pytest.mark.parametrize("how", ["absent", "null"])
def test_from_dict_optional_fields_default(key: str, how: str) -> None:
    doc = _edit([key], _DELETE if how == "absent" else None)
    s = Schedule.from_dict(doc)
    full = Schedule.from_dict(_doc())
    defaults: dict[str, Any] = {"algorithm": "", "lower_bound": None, "splits": 0, "meta": {}}
    if key == "makespan":
        assert s.same_as(full)
    else:
        value = dict(s.meta) if key == "meta" else getattr(s, key)
        assert value == defaults[key]


@pytest.mark.parametrize("delta", [-1.0, float("nan"), float("inf")], ids=["negative", "nan", "inf"])
def test_from_dict_rejects_bad_delta(delta: float) -> None:
    # Python's json reads NaN and Infinity, so a file can carry them.
    with pytest.raises(InvalidInputError, match=r"^schedule `delta` must be a finite number >= 0; got "):
        Schedule.from_json(json.dumps(_edit(["delta"], delta)))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_schedules_pickle_and_deepcopy(how: str) -> None:
    # Configurations refuse setattr; they must still cross process boundaries and copy.
    import pickle
    from pathlib import Path

    from ocsched.io import read_schedule

    dense = schedule([[0, 3, 1], [1, 0, 3], [3, 1, 0]], switches=2, delta=0.5)
    sparse = read_schedule(Path(__file__).parents[1] / "data" / "schedules" / "v1_d3_pack.json")
    for sch in (dense, sparse):
        back = pickle.loads(pickle.dumps(sch)) if how == "pickle" else copy.deepcopy(sch)
        pairs = [
            (a, b)
            for x, y in zip(sch.switches, back.switches, strict=True)
            for a, b in zip(x, y, strict=True)
        ]
        assert pairs and all(a.same_as(b) for a, b in pairs)
        assert all(not b.perm.flags.writeable for _, b in pairs)
        assert back.makespan == sch.makespan and back.ports == sch.ports
