"""The schedule of an iteration: one timeline per switch, each configuration tagged with its phase."""

from __future__ import annotations

import itertools
import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ocsched._checks import check_number
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.iteration._json import (
    ITERATION_SCHEDULE_FORMAT,
    ITERATION_SCHEDULE_VERSION_FABRIC,
    ITERATION_VERSION,
)
from ocsched.iteration.phases import persists
from ocsched.model import Configuration, Schedule
from ocsched.model.schedule import parse_json, relative_gap

__all__ = ["IterationSchedule"]

Timeline = tuple[Configuration, ...]

#: The top-level fields of a version-2 single-matrix schedule that describe its fabric (with each
#: switch entry's own ``delta`` and ``rate``): an iteration schedule on a fabric carries them as is.
_FABRIC_KEYS = ("model", "down", "failed_links")


@dataclass(frozen=True, eq=False)
class IterationSchedule:
    """The schedule of an iteration: one timeline per switch, each configuration tagged with its phase.

    Attributes
    ----------
    ports : int
        Number of ports n.
    delta : float
        Reconfiguration delay (a persisting configuration pays none); on a fabric, the largest
        switch delay (each switch pays its own).
    switches : tuple of tuple of Configuration
        Per switch, its configurations in time order, over the whole iteration.
    phase_of : tuple of tuple of int
        ``phase_of[b][c]`` is the phase (0-based) of configuration c of switch b.
    gaps : tuple of float
        Each phase's gap before it (from the iteration).
    names : tuple of str
        Each phase's name.
    algorithm : str
        The iteration scheduler that built it (and its base, e.g. ``"spectra-seq/spectra"``).
    lower_bound : float or None
        A lower bound on the iteration time, if known.
    meta : mapping
        Free-form provenance.
    fabric : Fabric or None
        The fabric it runs on; None means ``Fabric.uniform(len(switches), delta)`` (see
        :meth:`on_fabric`), as for :class:`~ocsched.model.Schedule`.

    Examples
    --------
    >>> c0 = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
    >>> c1 = Configuration.from_circuits(1.7, 2.0, [(0, 1)], ports=2)  # persists: no delay
    >>> s = IterationSchedule(2, 0.5, ((c0, c1),), ((0, 1),), (0.0, 0.2), ("a", "b"))
    >>> s.releases, s.ends, s.makespan, s.exposed, s.persisted
    ((0.0, 1.7), (1.5, 3.7), 3.7, 3.5, 1)

    After a gap of at least delta, persisting saves nothing (the switch could have reconfigured
    in the gap), so it does not count as reused:

    >>> late = Configuration.from_circuits(2.5, 2.0, [(0, 1)], ports=2)
    >>> IterationSchedule(2, 0.5, ((c0, late),), ((0, 1),), (0.0, 1.0), ("a", "b")).persisted
    0
    """

    ports: int
    delta: float
    switches: tuple[Timeline, ...]
    phase_of: tuple[tuple[int, ...], ...]
    gaps: tuple[float, ...]
    names: tuple[str, ...]
    algorithm: str = ""
    lower_bound: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    fabric: Fabric | None = None

    def __post_init__(self) -> None:
        if len(self.phase_of) != len(self.switches) or any(
            len(p) != len(sw) for p, sw in zip(self.phase_of, self.switches, strict=False)
        ):
            raise InvalidInputError("`phase_of` must tag every configuration of every switch")
        if len(self.names) != len(self.gaps):
            raise InvalidInputError(
                f"`names` ({len(self.names)}) and `gaps` ({len(self.gaps)}) differ in length"
            )
        if self.fabric is not None and self.fabric.size != len(self.switches):
            raise InvalidInputError(
                f"`fabric` has {self.fabric.size} switches but the schedule {len(self.switches)} timelines"
            )

    def on_fabric(self) -> Fabric:
        """Return the fabric it runs on (uniform of its ``delta`` when none was recorded)."""
        if self.fabric is not None:
            return self.fabric
        return Fabric.uniform(max(1, len(self.switches)), self.delta)

    @property
    def is_uniform(self) -> bool:
        """True for identical all-stop switches of its ``delta``, nothing failed (written as version 1)."""
        f = self.fabric
        return f is None or (f.is_uniform and f.deltas[0] == self.delta and f.size == len(self.switches))

    def switch_delta(self, switch: int) -> float:
        """Return the reconfiguration delay of switch ``switch`` (``delta`` on a uniform fabric)."""
        f = self.fabric
        return self.delta if f is None or not 0 <= switch < f.size else f.deltas[switch]

    @property
    def num_phases(self) -> int:
        """Number of phases K."""
        return len(self.gaps)

    @property
    def num_switches(self) -> int:
        """Number of switches s."""
        return len(self.switches)

    @property
    def num_configurations(self) -> int:
        """Total number of configurations."""
        return sum(len(sw) for sw in self.switches)

    def _bounds(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        last = [-math.inf] * self.num_phases
        for sw, ph in zip(self.switches, self.phase_of, strict=True):
            for c, k in zip(sw, ph, strict=True):
                if 0 <= k < self.num_phases:
                    last[k] = max(last[k], c.end)
        releases, ends = [], []
        end = 0.0
        for k, g in enumerate(self.gaps):
            release = end + g
            end = max(release, last[k])
            releases.append(release)
            ends.append(end)
        return tuple(releases), tuple(ends)

    @property
    def releases(self) -> tuple[float, ...]:
        """``R_k = C_{k-1} + g_k``: when each phase's traffic may start."""
        return self._bounds()[0]

    @property
    def ends(self) -> tuple[float, ...]:
        """``C_k``: the end of each phase (its release if it holds no configuration)."""
        return self._bounds()[1]

    @property
    def phase_makespans(self) -> tuple[float, ...]:
        """``C_k - R_k`` of each phase."""
        r, e = self._bounds()
        return tuple(b - a for a, b in zip(r, e, strict=True))

    @property
    def makespan(self) -> float:
        """The iteration time ``C_K``."""
        return self.ends[-1] if self.gaps else 0.0

    @property
    def gap(self) -> float | None:
        """``makespan / lower_bound - 1``, None without a bound (as :attr:`ocsched.Schedule.gap`)."""
        return relative_gap(self.makespan, self.lower_bound)

    @property
    def exposed(self) -> float:
        """Exposed communication: ``C_K`` minus the sum of the gaps."""
        return self.makespan - float(sum(self.gaps))

    def reuses(self, previous: Configuration | None, conf: Configuration, *, switch: int = 0) -> bool:
        """Whether ``conf`` persists from ``previous`` *and* that saved time: it starts less than a
        delay (of switch ``switch``) after ``previous`` ends, so a reconfiguration could not have
        made it (a schedule that pays every delay, like ``independent``, reuses nothing even where
        a permutation recurs).
        """
        return (
            previous is not None
            and persists(previous, conf)
            and conf.start < previous.end + self.switch_delta(switch) * (1 - 1e-9)
        )

    @property
    def persisted(self) -> int:
        """Configurations that persisted and saved their delay (:meth:`reuses`)."""
        return sum(
            self.reuses(a, b, switch=s)
            for s, sw in enumerate(self.switches)
            for a, b in itertools.pairwise(sw)
        )

    @property
    def hidden_delay(self) -> float:
        """Reconfiguration delay that lies outside its phase's window, or is saved by persistence.

        A configuration of phase k starting at t pays its delay over ``[t - delta, t]``; the part
        before ``R_k`` is hidden (in the gap or the previous phase's idle time). A persisting
        configuration hides what of its delay it saved: the part of ``[t - delta, t]`` its switch
        spent lit with the same permutation (no idle time waited it out), or before ``R_k``.
        """
        releases = self.releases
        total = 0.0
        for b, (sw, ph) in enumerate(zip(self.switches, self.phase_of, strict=True)):
            delta = self.switch_delta(b)
            prev: Configuration | None = None
            for c, k in zip(sw, ph, strict=True):
                before = min(delta, max(0.0, releases[k] - (c.start - delta)))
                if prev is not None and persists(prev, c):
                    saved = min(delta, max(0.0, prev.end + delta - c.start))
                    before = max(before, saved)
                total += before
                prev = c
        return total

    def phase_schedule(self, k: int) -> Schedule:
        """Return phase k's configurations as a single-matrix :class:`Schedule` (absolute times)."""
        sw = tuple(
            tuple(c for c, p in zip(s, ph, strict=True) if p == k)
            for s, ph in zip(self.switches, self.phase_of, strict=True)
        )
        return Schedule(
            ports=self.ports, delta=self.delta, switches=sw, algorithm=self.algorithm, fabric=self.fabric
        )

    def as_schedule(self) -> Schedule:
        """Return every configuration, untagged, as one single-matrix :class:`Schedule` on its fabric."""
        return Schedule(
            ports=self.ports,
            delta=self.delta,
            switches=self.switches,
            algorithm=self.algorithm,
            fabric=self.fabric,
        )

    def phase_spans(self) -> list[tuple[str, float, float, float]]:
        """Return ``(name, gap start, release, end)`` of each phase, for plots that shade phases.

        The gap of phase k is ``[C_{k-1}, R_k]`` and its traffic window ``[R_k, C_k]``.
        """
        r, e = self._bounds()
        prev = [0.0, *e[:-1]]
        return [(n, p, a, b) for n, p, a, b in zip(self.names, prev, r, e, strict=True)]

    def to_frame(self) -> Any:
        """Return a pandas DataFrame, one row per circuit and configuration, with a ``phase`` column.

        See :func:`ocsched.report.frame.schedule_frame` (needs pandas).
        """
        from ocsched.report.frame import schedule_frame  # the report layer: pandas only when asked

        return schedule_frame(self)

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """Draw the schedule as a Gantt chart with its phases shaded; return the axes.

        See :func:`ocsched.report.gantt.plot_iteration_schedule` (needs matplotlib).
        """
        from ocsched.report.gantt import plot_iteration_schedule  # the report layer, when asked

        return plot_iteration_schedule(self, ax, title=title)

    def to_dict(self) -> dict[str, Any]:
        """Return the versioned JSON-ready ``ocsched.iteration-schedule`` form.

        On a uniform all-stop fabric (:attr:`is_uniform`) version 1, exactly as before fabrics
        existed; on any other version 2, whose fabric is written as a version-2
        :class:`~ocsched.model.Schedule` writes it (each entry of ``switches`` with its ``delta``
        and ``rate``; ``model``, ``down`` and ``failed_links`` at the top level; no top-level
        ``delta``), each configuration tagged with its ``phase`` as in version 1.
        """
        if not self.is_uniform:
            return self._to_dict_fabric()
        r, e = self._bounds()
        out: dict[str, Any] = {
            "format": ITERATION_SCHEDULE_FORMAT,
            "version": ITERATION_VERSION,
            "ports": self.ports,
            "delta": self.delta,
            "makespan": self.makespan,
            "exposed": self.exposed,
            "algorithm": self.algorithm,
            "lower_bound": self.lower_bound,
            "phases": [
                {"name": n, "gap_before": g, "start": a, "end": b}
                for n, g, a, b in zip(self.names, self.gaps, r, e, strict=True)
            ],
            "switches": [
                {
                    "configurations": [
                        {
                            "phase": k,
                            "start": c.start,
                            "duration": c.duration,
                            "circuits": [list(p) for p in c.circuits],
                        }
                        for c, k in zip(sw, ph, strict=True)
                    ]
                }
                for sw, ph in zip(self.switches, self.phase_of, strict=True)
            ],
        }
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    def _to_dict_fabric(self) -> dict[str, Any]:
        """Version 2: the single-matrix schedule's encoding of the fabric and configurations."""
        body = self.as_schedule().to_dict()
        r, e = self._bounds()
        out: dict[str, Any] = {
            "format": ITERATION_SCHEDULE_FORMAT,
            "version": ITERATION_SCHEDULE_VERSION_FABRIC,
            "ports": self.ports,
            **{key: body[key] for key in _FABRIC_KEYS},
            "makespan": self.makespan,
            "exposed": self.exposed,
            "algorithm": self.algorithm,
            "lower_bound": self.lower_bound,
            "phases": [
                {"name": n, "gap_before": g, "start": a, "end": b}
                for n, g, a, b in zip(self.names, self.gaps, r, e, strict=True)
            ],
            "switches": [
                {
                    **{key: v for key, v in sw.items() if key != "configurations"},
                    "configurations": [
                        {"phase": k, **conf} for conf, k in zip(sw["configurations"], ph, strict=True)
                    ],
                }
                for sw, ph in zip(body["switches"], self.phase_of, strict=True)
            ],
        }
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    def to_json(self, *, indent: int | None = None) -> str:
        """Serialise to the ``ocsched.iteration-schedule`` JSON format."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IterationSchedule:
        """Read the form written by :meth:`to_dict`.

        Raises
        ------
        InvalidInputError
            If a field is missing or mistyped, the format or version is unknown, a phase tag is out
            of range, or the recorded makespan disagrees with the configurations.
        """
        if not isinstance(data, Mapping):
            raise InvalidInputError(f"iteration schedule must be a JSON object; got {type(data).__name__}")
        if data.get("format") != ITERATION_SCHEDULE_FORMAT:
            raise InvalidInputError(
                f"iteration schedule `format` must be {ITERATION_SCHEDULE_FORMAT!r}; "
                f"got {data.get('format')!r}"
            )
        version = data.get("version")
        if isinstance(version, bool) or version not in (ITERATION_VERSION, ITERATION_SCHEDULE_VERSION_FABRIC):
            raise InvalidInputError(
                f"iteration schedule `version` must be {ITERATION_VERSION} or "
                f"{ITERATION_SCHEDULE_VERSION_FABRIC}; got {version!r}"
            )
        phases = data.get("phases")
        if not isinstance(phases, list) or not all(isinstance(p, Mapping) for p in phases):
            raise InvalidInputError(f"iteration schedule `phases` must be a list of objects; got {phases!r}")
        names, gaps = [], []
        for k, p in enumerate(phases):
            name, gap = p.get("name", f"phase{k}"), p.get("gap_before", 0.0)
            if not isinstance(name, str):
                raise InvalidInputError(
                    f"iteration schedule `phases[{k}].name` must be a string; got {name!r}"
                )
            names.append(name)
            gaps.append(check_number(gap, f"phases[{k}].gap_before"))
        # The switches (and a version-2 fabric) are read by the single-matrix reader, whose
        # version numbers are the same; phase tags are read here.
        keys = ("ports", "delta") if version == ITERATION_VERSION else ("ports", *_FABRIC_KEYS)
        body = {key: data[key] for key in (*keys, "switches") if key in data}
        base = Schedule.from_dict({"format": "ocsched.schedule", "version": version, **body})
        tags = []
        for b, sw in enumerate(data["switches"]):
            row = []
            for c, conf in enumerate(sw["configurations"]):
                k = conf.get("phase")
                if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(names):
                    raise InvalidInputError(
                        f"iteration schedule `switches[{b}].configurations[{c}].phase` must be an integer "
                        f"in 0..{len(names) - 1}; got {k!r}"
                    )
                row.append(k)
            tags.append(tuple(row))
        lb = data.get("lower_bound")
        meta = data.get("meta") or {}
        algorithm = data.get("algorithm") or ""
        if not isinstance(algorithm, str) or not isinstance(meta, Mapping):
            raise InvalidInputError("iteration schedule `algorithm` must be a string and `meta` an object")
        sched = cls(
            base.ports,
            base.delta,
            base.switches,
            tuple(tags),
            tuple(gaps),
            tuple(names),
            algorithm,
            None if lb is None else check_number(lb, "lower_bound"),
            dict(meta),
            base.fabric,
        )
        recorded = data.get("makespan")
        # Relative: a schedule of 1e-12 s is checked as strictly as one of 1 s.
        if isinstance(recorded, numbers.Real) and abs(float(recorded) - sched.makespan) > 1e-9 * abs(
            sched.makespan
        ):
            raise InvalidInputError(
                f"iteration schedule `makespan` = {recorded} disagrees with its configurations, "
                f"which end at {sched.makespan}"
            )
        return sched

    @classmethod
    def from_json(cls, text: str) -> IterationSchedule:
        """Parse the ``ocsched.iteration-schedule`` JSON format (inverse of :meth:`to_json`)."""
        return cls.from_dict(parse_json(text, "iteration schedule"))
