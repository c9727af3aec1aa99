"""Schedules: per switch, its configurations in time order (:class:`Schedule`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.model.configuration import Configuration
from ocsched.model.demand import FloatArray
from ocsched.model.schedule_json import schedule_from_dict, schedule_to_dict


def parse_json(text: str, what: str) -> Any:
    """Parse JSON ``text``; malformed JSON raises :class:`InvalidInputError` naming ``what``.

    >>> parse_json('{"a": 1}', "schedule")
    {'a': 1}
    >>> parse_json("[1,", "schedule")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ocsched.errors.InvalidInputError: schedule is not valid JSON: Expecting value: ...
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{what} is not valid JSON: {exc}") from None


def relative_gap(makespan: float, bound: float | None) -> float | None:
    """Return ``makespan / bound - 1``: how far a schedule is above its lower bound (0: proven optimal).

    None without a bound; 0.0 when both are 0 (nothing to do, nothing done); inf when only the
    bound is 0. Not clamped: a negative value means the schedule ends before a bound that no
    valid schedule can beat, so the schedule is invalid for the instance the bound was computed
    on or the bound is wrong (a bug to report), and it is shown rather than hidden. (``validate``
    accepts schedules within a relative 1e-9, so a schedule it accepts may show down to about
    -1e-9.)

    >>> relative_gap(2.75, 2.75), relative_gap(3.0, 2.5), relative_gap(0.0, 0.0), relative_gap(1.0, None)
    (0.0, 0.19999999999999996, 0.0, None)
    """
    if bound is None:
        return None
    if bound == 0:
        return 0.0 if makespan == 0 else math.inf
    return makespan / bound - 1.0


@dataclass(frozen=True, eq=False)
class Schedule:
    """A schedule: for each switch, its configurations in time order.

    Attributes
    ----------
    ports : int
        Number of ports n.
    delta : float
        Reconfiguration delay that precedes every configuration.
    switches : tuple of tuple of Configuration
        One entry per switch (a switch may hold none).
    algorithm : str
        Name of the algorithm that built it.
    lower_bound : float or None
        A lower bound on the makespan of the instance, if known.
    splits : int
        How many extra pieces the equalization step created.
    meta : mapping
        Free-form provenance (parameters, ocsched version, run time).
    status : str
        How it was found: ``"heuristic"`` (the default), or an exact solver's ``"optimal"``,
        ``"node_limit"``, ``"time_limit"``, ... (see :data:`STATUSES`).
    dual_bound : float or None
        A proved lower bound on the optimal makespan from the solver that built it, if any.
    fabric : Fabric or None
        The fabric it runs on; None means ``Fabric.uniform(len(switches), delta)`` (see
        :meth:`on_fabric`). ``delta`` is then the largest switch delay.
    """

    ports: int
    delta: float
    switches: tuple[tuple[Configuration, ...], ...]
    algorithm: str = ""
    lower_bound: float | None = None
    splits: int = 0
    meta: Mapping[str, Any] = field(default_factory=dict)
    status: str = "heuristic"
    dual_bound: float | None = None
    fabric: Fabric | None = None

    def on_fabric(self) -> Fabric:
        """Return the fabric the schedule runs on (uniform of its ``delta`` when none was recorded)."""
        if self.fabric is not None:
            return self.fabric
        return Fabric.uniform(max(1, len(self.switches)), self.delta)

    @property
    def is_uniform(self) -> bool:
        """True for identical all-stop switches of its ``delta``, nothing failed (written as version 1)."""
        f = self.fabric
        return f is None or (f.is_uniform and f.deltas[0] == self.delta and f.size == len(self.switches))

    @property
    def makespan(self) -> float:
        """The latest end of any configuration (0 for an empty schedule)."""
        return max((c.end for sw in self.switches for c in sw), default=0.0)

    @property
    def gap(self) -> float | None:
        """``makespan / lower_bound - 1``, the relative distance to the bound (see :func:`relative_gap`).

        0.0 exactly when the makespan equals the bound: the schedule is then proven optimal, with
        no float comparison needed (the bound is the exact threshold rounded to the nearest
        float, which a schedule ending at it matches). None when the schedule carries no bound.

        >>> Schedule(ports=2, delta=0.5, switches=(), lower_bound=None).gap is None
        True
        """
        return relative_gap(self.makespan, self.lower_bound)

    @property
    def num_switches(self) -> int:
        """Number of switches s."""
        return len(self.switches)

    @property
    def num_configurations(self) -> int:
        """Total number of configurations over all switches."""
        return sum(len(sw) for sw in self.switches)

    def loads(self) -> FloatArray:
        """Finish time of each switch (0 for an idle one)."""
        return np.array([max((c.end for c in sw), default=0.0) for sw in self.switches])

    def served(self) -> FloatArray:
        """Dense n x n matrix of the time each circuit (i, j) is held, summed over switches."""
        n = self.ports
        flat = np.zeros(n * n)
        fab = self.on_fabric()
        rates = fab.rates if fab.size == len(self.switches) else (1.0,) * len(self.switches)
        for sw, rate in zip(self.switches, rates, strict=True):
            for c in sw:
                i, j = c.circuit_arrays()
                np.add.at(flat, i * n + j, rate * c.duration)
        return flat.reshape(n, n)

    def to_frame(self) -> Any:
        """Return a pandas DataFrame, one row per circuit and configuration (needs pandas).

        See :func:`ocsched.report.frame.schedule_frame` for the columns.

        >>> c = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
        >>> s = Schedule(ports=2, delta=0.5, switches=((c,),))
        >>> s.to_frame()[["switch", "src", "dst", "start", "end"]].values.tolist()
        [[0.0, 0.0, 1.0, 0.5, 1.5]]
        """
        from ocsched.report.frame import schedule_frame  # the report layer: pandas only when asked

        return schedule_frame(self)

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """Draw the schedule as a Gantt chart on ``ax`` (a new figure's if None); return the axes.

        See :func:`ocsched.report.gantt.plot_schedule` (needs matplotlib).
        """
        from ocsched.report.gantt import plot_schedule  # the report layer: matplotlib only when asked

        return plot_schedule(self, ax, title=title)

    def to_dict(self) -> dict[str, Any]:
        """Return the versioned JSON-ready form (see the README and ``docs/schedule.schema.json``).

        A uniform all-stop schedule (:attr:`is_uniform`) is written as version 1, exactly as
        before fabrics existed; any other as version 2, where each entry of ``switches`` carries
        its ``delta`` and ``rate``, with the fabric's ``model``, ``down`` windows (``end`` null
        for good) and ``failed_links`` at the top level, and no top-level ``delta``.
        """
        return schedule_to_dict(self)

    def to_json(self, *, indent: int | None = None) -> str:
        """Serialise to the JSON schedule format."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schedule:
        """Read the JSON-ready form written by :meth:`to_dict`.

        Raises
        ------
        InvalidInputError
            If a field is missing or of the wrong type, the format or version is unknown, or the
            recorded makespan disagrees with the configurations.
        """
        return schedule_from_dict(cls, data)

    @classmethod
    def from_json(cls, text: str) -> Schedule:
        """Parse the JSON schedule format (inverse of :meth:`to_json`).

        Examples
        --------
        >>> c = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
        >>> s = Schedule(ports=2, delta=0.5, switches=((c,),), algorithm="hand")
        >>> Schedule.from_json(s.to_json()).makespan
        1.5
        """
        return cls.from_dict(parse_json(text, "schedule"))

    def same_as(self, other: Schedule) -> bool:
        """Exact equality of every field and configuration."""
        return (
            self.ports == other.ports
            and self.delta == other.delta
            and self.algorithm == other.algorithm
            and self.lower_bound == other.lower_bound
            and self.splits == other.splits
            and self.status == other.status
            and self.dual_bound == other.dual_bound
            and self.on_fabric() == other.on_fabric()
            and len(self.switches) == len(other.switches)
            and all(
                len(a) == len(b) and all(x.same_as(y) for x, y in zip(a, b, strict=True))
                for a, b in zip(self.switches, other.switches, strict=True)
            )
        )
