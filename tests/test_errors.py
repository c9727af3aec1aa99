"""The error hierarchy, and one test per failure mode of the public entry points."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ocsched
from ocsched import errors
from ocsched.errors import InfeasibleError, InvalidInputError, InvalidScheduleError, OcschedError

D3 = [[0.0, 2.0, 1.0], [1.0, 0.0, 2.0], [2.0, 1.0, 0.0]]


def test_hierarchy() -> None:
    assert issubclass(InvalidInputError, OcschedError) and issubclass(InvalidInputError, ValueError)
    assert issubclass(InvalidScheduleError, OcschedError) and not issubclass(InvalidScheduleError, ValueError)
    assert issubclass(InfeasibleError, OcschedError) and not issubclass(InfeasibleError, ValueError)
    assert issubclass(OcschedError, Exception)
    assert set(errors.__all__) == {
        "OcschedError",
        "InvalidInputError",
        "InvalidScheduleError",
        "InfeasibleError",
    }


def test_errors_are_exported_at_top_level() -> None:
    for name in errors.__all__:
        assert name in ocsched.__all__
        assert getattr(ocsched, name) is getattr(errors, name)


def _schedule(**kw: Any) -> Any:
    args: dict[str, Any] = {"demand": D3, "switches": 2, "delta": 0.1}
    args.update(kw)
    return ocsched.schedule(args.pop("demand"), **args)


def _lower_bound(**kw: Any) -> Any:
    args: dict[str, Any] = {"demand": D3, "switches": 2, "delta": 0.1}
    args.update(kw)
    return ocsched.lower_bound(args.pop("demand"), **args)


ENTRY_POINTS: dict[str, Callable[..., Any]] = {"schedule": _schedule, "lower_bound": _lower_bound}

BAD_ARGS = [
    pytest.param(
        {"demand": [[0, 1, 2], [1, 0, 2]]}, r"^`demand` must be a square n x n matrix", id="non-square"
    ),
    pytest.param({"demand": np.zeros((0, 0))}, r"^`demand` must not be empty", id="empty"),
    pytest.param(
        {"demand": [[0, -1], [1, 0]]}, r"^`demand` must be non-negative; demand\[0, 1\] = -1", id="negative"
    ),
    pytest.param(
        {"demand": [[0, np.nan], [1, 0]]}, r"^`demand` must be finite; demand\[0, 1\] = nan", id="nan"
    ),
    pytest.param(
        {"demand": [[0, 1], [np.inf, 0]]}, r"^`demand` must be finite; demand\[1, 0\] = inf", id="inf"
    ),
    pytest.param({"demand": [["a", "b"], ["c", "d"]]}, r"^`demand` must hold real numbers", id="strings"),
    pytest.param({"switches": 0}, r"^`switches` must be an integer >= 1; got 0$", id="switches-0"),
    pytest.param({"switches": 2.5}, r"^`switches` must be an integer >= 1; got 2\.5$", id="switches-2.5"),
    pytest.param({"switches": "3"}, r"^`switches` must be an integer >= 1; got '3'$", id="switches-str"),
    pytest.param({"switches": True}, r"^`switches` must be an integer >= 1; got True$", id="switches-bool"),
    pytest.param({"delta": -0.1}, r"^`delta` must be a finite number >= 0; got -0\.1$", id="delta-negative"),
    pytest.param({"delta": float("nan")}, r"^`delta` must be a finite number >= 0; got nan$", id="delta-nan"),
    pytest.param({"delta": float("inf")}, r"^`delta` must be a finite number >= 0; got inf$", id="delta-inf"),
    pytest.param({"delta": "0.1"}, r"^`delta` must be a finite number >= 0; got '0\.1'$", id="delta-str"),
    pytest.param({"delta": False}, r"^`delta` must be a finite number >= 0; got False$", id="delta-bool"),
]


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize(("kwargs", "pattern"), BAD_ARGS)
def test_entry_point_rejects(entry: str, kwargs: dict[str, Any], pattern: str) -> None:
    with pytest.raises(InvalidInputError, match=pattern):
        ENTRY_POINTS[entry](**kwargs)


def test_unknown_algorithm_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidInputError, match=r"^unknown algorithm 'nope'; choose one of ") as info:
        _schedule(algorithm="nope")
    listed = str(info.value).split("choose one of ", 1)[1].split(", ")
    assert sorted(listed) == sorted(ocsched.algorithms())


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        ocsched.schedule(D3, 2, 0.1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ocsched.lower_bound(D3, 2, 0.1)  # type: ignore[call-arg]


def test_validate_rejects_a_malformed_demand() -> None:
    s = ocsched.schedule(D3, switches=2, delta=0.1)
    with pytest.raises(InvalidInputError, match=r"^`demand` must be finite"):
        ocsched.validate(s, np.array([[0, np.nan, 0], [0, 0, 0], [0, 0, 0]]))


def test_invalid_schedule_error_from_report() -> None:
    s = ocsched.schedule(D3, switches=2, delta=0.1)
    report = ocsched.validate(s, np.array(D3) * 2)  # serves only half of each entry
    with pytest.raises(InvalidScheduleError, match=r"^invalid schedule: unserved: "):
        report.raise_if_invalid()
    with pytest.raises(OcschedError):
        report.raise_if_invalid()


def test_library_never_prints(capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        s = ocsched.schedule([[1.0, 2.0], [3.0, 4.0]], switches=2, delta=0.1)  # diagonal dropped, logged
        ocsched.validate(s, [[0.0, 2.0], [3.0, 0.0]])
        ocsched.lower_bound([[0.0, 2.0], [3.0, 0.0]], switches=2, delta=0.1)
        with pytest.raises(InvalidInputError):
            ocsched.schedule([[0, -1], [1, 0]], switches=2, delta=0.1)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert any("diagonal" in r.getMessage() for r in caplog.records)
