"""Schedules: per switch, its configurations in time order (:class:`Schedule`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ocsched._types import FloatArray
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.model.configuration import Configuration
from ocsched.model.demand import Demand
from ocsched.model.schedule_json import schedule_from_dict, schedule_to_dict
from ocsched.timing import held_times


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
    eps : Demand or None
        The entries R sent on the fabric's packet switch (``fabric.eps_rate``), from time 0; the
        circuits serve the rest. It ends at :attr:`eps_time`.
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
    eps: Demand | None = None

    def on_fabric(self) -> Fabric:
        """Return the fabric the schedule runs on (uniform of its ``delta`` when none was recorded)."""
        if self.fabric is not None:
            return self.fabric
        return Fabric.uniform(max(1, len(self.switches)), self.delta)

    @property
    def is_uniform(self) -> bool:
        """True for identical all-stop switches of its ``delta``, nothing failed (written as version 1)."""
        f = self.fabric
        return self.eps is None and (
            f is None or (f.is_uniform and f.deltas[0] == self.delta and f.size == len(self.switches))
        )

    @property
    def makespan(self) -> float:
        """The latest end of any configuration or of the EPS part (0 for an empty schedule)."""
        circuits = max((c.end for sw in self.switches for c in sw), default=0.0)
        return circuits if self.eps is None else max(circuits, self.eps_time)

    @property
    def eps_time(self) -> float:
        """When the EPS part ends: ``eps_latency + max line sum / eps_rate`` (0 when it is empty).

        A non-blocking packet switch whose ports each send and receive at rate rho serves any R
        by then (a fluid schedule: every entry at rate ``R_ij / t``, t the largest line sum over
        rho, keeps each port within rho). Infinite when R is not empty and the fabric has no EPS.
        """
        if self.eps is None or not self.eps.nnz:
            return 0.0
        fab = self.on_fabric()
        if not fab.eps_rate > 0:
            return math.inf
        return fab.eps_latency + self.eps.max_line_sum / fab.eps_rate

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
        """Dense n x n matrix of the demand each circuit (i, j) serves, summed over switches.

        Each circuit is credited as :func:`ocsched.validate` credits it
        (:func:`ocsched.timing.held_times`): its switch's rate times the time it is lit, less any
        time its switch is down or its link has failed, plus, under the partial model, the gap
        before a configuration for a circuit kept from the previous one. A circuit on a
        bidirectional switch is credited to (i, j) and (j, i). The packet switch's part
        (:attr:`eps`), if any, is added.

        >>> c = Configuration(0.5, 1.5, np.array([1, 0]))
        >>> Schedule(ports=2, delta=0.5, switches=((c,),)).served().tolist()
        [[0.0, 1.5], [1.5, 0.0]]
        """
        n = self.ports
        flat = np.zeros(n * n)
        fab = self.on_fabric()
        if fab.size != len(self.switches):
            fab = Fabric.uniform(max(1, len(self.switches)), self.delta)
        for b, sw in enumerate(self.switches):
            tuples = [(c.start, c.duration, *c.circuit_arrays()) for c in sw]
            held = held_times(
                tuples,
                model=fab.model,
                windows=fab.windows(b),
                failed_ports=fab.failed_ports(b),
                ports_per_endpoint=fab.switches[b].ports_per_endpoint,
                bidirectional=fab.switches[b].bidirectional,
            )
            rate = fab.switches[b].rate
            for (_, _, i, j), h in zip(tuples, held, strict=True):
                ok = (i >= 0) & (i < n) & (j >= 0) & (j < n)
                np.add.at(flat, i[ok] * n + j[ok], rate * h[ok])
                if fab.switches[b].bidirectional:  # a circuit (i, j) also carries j -> i
                    back = ok & (i != j)
                    np.add.at(flat, j[back] * n + i[back], rate * h[back])
        if self.eps is not None and self.eps.n == n:
            np.add.at(flat, self.eps.rows * n + self.eps.cols, self.eps.values)
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
            and _same_eps(self.eps, other.eps)
            and len(self.switches) == len(other.switches)
            and all(
                len(a) == len(b) and all(x.same_as(y) for x, y in zip(a, b, strict=True))
                for a, b in zip(self.switches, other.switches, strict=True)
            )
        )


def _same_eps(a: Demand | None, b: Demand | None) -> bool:
    if a is None or b is None:
        return a is b
    return (
        a.n == b.n
        and np.array_equal(a.rows, b.rows)
        and np.array_equal(a.cols, b.cols)
        and np.array_equal(a.values, b.values)
    )
