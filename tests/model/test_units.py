"""ocsched.units: rates, durations and byte counts written as text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocsched.errors import InvalidInputError
from ocsched.units import RATE_UNITS, TIME_UNITS, bytes_per_second, bytes_to_seconds, seconds


@pytest.mark.parametrize(
    ("text", "expected"),
    [("400Gbps", 50e9), ("400 Gb/s", 50e9), ("50GB/s", 50e9), ("1.6Tbps", 200e9), ("100Mbps", 12.5e6)],
)
def test_rates(text: str, expected: float) -> None:
    assert bytes_per_second(text) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("10us", 1e-5), ("10µs", 1e-5), ("1ms", 1e-3), ("0.5", 0.5), ("2e-6s", 2e-6), ("40ns", 4e-8)],
)
def test_durations_are_exact_where_decimal(text: str, expected: float) -> None:
    assert seconds(text) == expected


@pytest.mark.parametrize("bad", ["", "x", "-1s", "1e999s", "10 parsecs", "nan s", "²s", "1_0s", "inf"])
def test_bad_durations_name_the_argument(bad: str) -> None:
    with pytest.raises(InvalidInputError, match="`--delta`"):
        seconds(bad, name="--delta")


@pytest.mark.parametrize("bad", ["400Gbit", "0Gbps", "fast", "-5GB/s", True])
def test_bad_rates_name_the_argument(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="`--link-rate`"):
        bytes_per_second(bad, name="--link-rate")  # type: ignore[arg-type]


@given(st.floats(1e-6, 1e6), st.sampled_from(sorted(RATE_UNITS)), st.sampled_from(sorted(TIME_UNITS)))
def test_conversions_agree(value: float, rate_unit: str, time_unit: str) -> None:
    rate = bytes_per_second(f"{value!r}{rate_unit}")
    assert bytes_to_seconds(rate, f"{value!r}{rate_unit}") == pytest.approx(1.0, rel=1e-12)
    assert seconds(f"{value!r}{time_unit}") == pytest.approx(value / TIME_UNITS[time_unit], rel=1e-15)
