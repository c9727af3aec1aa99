"""The reconfiguration rule, written once: every configuration is preceded by ``delta`` of dark time.

A switch that holds k configurations of total length W is busy ``W + k * delta``
(:func:`busy`); laid out back to back, configuration k starts ``delta`` after configuration k-1
ends, the first at ``delta`` (:func:`lay_out`); a schedule respects the rule when no
configuration starts before :func:`earliest_start` (checked by :func:`timing_violations`).
Placement, the timeline, the validator, the lower bounds, the exact MILPs and the Gantt chart all
call these functions, so the rule can change (per-switch delays, partial reconfiguration) here.

The rule on a real fabric (per-switch delays, down windows, failed links, the partial model)
lives beside it, in this package: :mod:`~ocsched.timing.tolerance` (the rules written out, and
the scale-free tolerance of every comparison), :mod:`~ocsched.timing.layout` (laying
configurations out around down windows, and under the partial model) and
:mod:`~ocsched.timing.switch` (the check of one switch's configurations and the time each
circuit is lit), re-exported here; and :mod:`~ocsched.timing.served` (what those credits serve
of a demand, each circuit both ways on a bidirectional switch), imported from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from ocsched.timing.layout import lay_out_windows, partial_starts
from ocsched.timing.models import ALL_STOP, PARTIAL, RECONFIGURATIONS, Reconfiguration, reconfiguration
from ocsched.timing.switch import check_switch, held_times, switch_violations
from ocsched.timing.tolerance import RTOL, slack, time_to_serve

__all__ = [
    "ALL_STOP",
    "PARTIAL",
    "RECONFIGURATIONS",
    "RTOL",
    "Reconfiguration",
    "busy",
    "check_switch",
    "dark_interval",
    "earliest_start",
    "held_times",
    "lay_out",
    "lay_out_windows",
    "partial_starts",
    "reconfiguration",
    "slack",
    "switch_violations",
    "time_to_serve",
    "timing_violations",
]

Num = TypeVar("Num", float, NDArray[np.float64])


def busy(total: Num, configurations: Num | int | NDArray[np.int64], delta: float) -> Num:
    """Return how long a switch is busy holding ``configurations`` configurations of total length ``total``.

    Works elementwise on arrays (one entry per switch or per line).

    >>> busy(3.0, 2, 0.5)
    4.0
    """
    return total + delta * configurations  # type: ignore[return-value]


def earliest_start(previous_end: float | None, delta: float) -> float:
    """Return the earliest start of a configuration after one ending at ``previous_end`` (None: first).

    >>> earliest_start(None, 0.5), earliest_start(2.0, 0.5)
    (0.5, 2.5)
    """
    return (0.0 if previous_end is None else previous_end) + delta


def lay_out(durations: Iterable[float], delta: float, *, t0: float | None = None) -> list[float]:
    """Return the start of each configuration when a switch runs them back to back, in order.

    With ``t0``, the switch is dark from ``t0`` on (the first configuration starts at ``t0 + delta``).

    >>> lay_out([2.0, 1.0], 0.5), lay_out([2.0, 1.0], 0.5, t0=1.0)
    ([0.5, 3.0], [1.5, 4.0])
    """
    starts = []
    end: float | None = t0
    for w in durations:
        start = earliest_start(end, delta)
        starts.append(start)
        end = start + w
    return starts


def dark_interval(start: float, delta: float) -> tuple[float, float]:
    """Return the dark interval ``(start - delta, start)`` that precedes a configuration.

    >>> dark_interval(3.0, 0.5)
    (2.5, 3.0)
    """
    return (start - delta, start)


def timing_violations(
    times: Sequence[tuple[float, float]], delta: float, *, slack: float = 0.0
) -> list[tuple[int, float, float]]:
    """Return ``(k, start, previous_end)`` for each configuration of a switch that starts too early.

    ``times`` lists ``(start, duration)`` in order; a configuration is early when it starts more
    than ``slack`` before :func:`earliest_start` after ``previous_end``, the latest end so far (0
    before the first; overlaps count). Non-finite times are skipped (the validator reports them).

    >>> timing_violations([(0.5, 1.0), (1.7, 1.0)], 0.5)
    [(1, 1.7, 1.5)]
    """
    out = []
    end = 0.0
    for k, (start, duration) in enumerate(times):
        if not (np.isfinite(start) and np.isfinite(duration)):
            continue
        if start < earliest_start(end, delta) - slack:
            out.append((k, start, end))
        end = max(end, start + duration)
    return out
