"""Phases and iterations: the demands of a training iteration with the compute gaps between them.

Also the delay rule with persistence (:func:`persists`, :func:`start_after`) that
:class:`~ocsched.iteration.schedule.IterationSchedule` and the validator apply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_number
from ocsched.errors import InvalidInputError
from ocsched.iteration._json import ITERATION_FORMAT, ITERATION_VERSION, parse_phases
from ocsched.model import Configuration, Demand, as_demand
from ocsched.model.schedule import parse_json
from ocsched.timing import earliest_start

__all__ = ["Iteration", "Phase", "persists", "start_after"]


def persists(previous: Configuration | None, conf: Configuration) -> bool:
    """Return True if ``conf`` is identical to ``previous`` (the configuration its switch holds).

    >>> a = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
    >>> b = Configuration.from_circuits(2.0, 1.0, [(0, 1)], ports=2)
    >>> persists(a, b), persists(None, b)
    (True, False)
    """
    return previous is not None and previous.same_circuits(conf)


def start_after(previous: Configuration | None, conf: Configuration, delta: float) -> float:
    """Return the earliest start of ``conf`` after ``previous`` on its switch (delay rule with persistence).

    :func:`ocsched.timing.earliest_start` with no delay when ``conf`` persists.

    >>> a = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
    >>> b = Configuration.from_circuits(0.0, 1.0, [(1, 0)], ports=2)
    >>> start_after(a, a, 0.5), start_after(a, b, 0.5), start_after(None, b, 0.5)
    (1.5, 2.0, 0.5)
    """
    if previous is None:
        return earliest_start(None, delta)
    return earliest_start(previous.end, 0.0 if persists(previous, conf) else delta)


@dataclass(frozen=True, eq=False)
class Phase:
    """One communication phase: a demand matrix, the compute gap before it, and a name.

    Attributes
    ----------
    demand : Demand
        The phase's demand (validated like any single matrix).
    gap_before : float
        Compute time between the end of the previous phase (the start, for the first) and this
        phase's release, in the demand's time unit; >= 0.
    name : str
        A label for listings and plots.

    Examples
    --------
    >>> p = Phase([[0, 1], [1, 0]], gap_before=0.5, name="ar")
    >>> p.demand.n, p.gap_before, p.name
    (2, 0.5, 'ar')
    """

    demand: Demand
    gap_before: float = 0.0
    name: str = ""

    def __init__(
        self,
        demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
        gap_before: float = 0.0,
        name: str = "",
    ) -> None:
        label = f"phase {name!r} demand" if name else "phase demand"
        object.__setattr__(self, "demand", as_demand(demand, name=label))
        object.__setattr__(self, "gap_before", check_number(gap_before, "gap_before"))
        if not isinstance(name, str):
            raise InvalidInputError(f"phase `name` must be a string; got {name!r}")
        object.__setattr__(self, "name", name)


@dataclass(frozen=True, eq=False)
class Iteration:
    """An ordered, non-empty tuple of phases whose demands all have the same n.

    Examples
    --------
    >>> it = Iteration([Phase([[0, 1], [1, 0]]), Phase([[0, 2], [0, 0]], gap_before=1.0)])
    >>> len(it), it.n, it.total_gap
    (2, 2, 1.0)
    """

    phases: tuple[Phase, ...]

    def __init__(self, phases: Iterable[Phase]) -> None:
        ph = tuple(phases)
        if not ph:
            raise InvalidInputError("`iteration` must hold at least one phase; got none")
        for k, p in enumerate(ph):
            if not isinstance(p, Phase):
                raise InvalidInputError(f"`iteration` phase {k} must be an ocsched.Phase; got {p!r}")
            if p.demand.n != ph[0].demand.n:
                raise InvalidInputError(
                    f"`iteration` phases must all have the same n; phase {k} ({p.name!r}) is "
                    f"{p.demand.n} x {p.demand.n} but phase 0 is {ph[0].demand.n} x {ph[0].demand.n}"
                )
        object.__setattr__(self, "phases", ph)

    @classmethod
    def from_matrices(
        cls,
        matrices: Iterable[ArrayLike | sp.sparray | sp.spmatrix | Demand],
        *,
        gaps: float | Sequence[float] | None = None,
        names: Sequence[str] | None = None,
    ) -> Iteration:
        """Build an iteration from matrices (a K x n x n array or a list), one gap each or one for all.

        >>> import numpy as np
        >>> Iteration.from_matrices(np.zeros((3, 2, 2)), gaps=0.1).total_gap
        0.30000000000000004
        """
        mats = list(matrices)
        k = len(mats)
        gap_list: list[float]
        if gaps is None or isinstance(gaps, int | float):
            gap_list = [0.0 if gaps is None else check_number(gaps, "gaps")] * k
        else:
            gap_list = list(gaps)
            if len(gap_list) != k:
                raise InvalidInputError(f"`gaps` must have one entry per phase ({k}); got {len(gap_list)}")
            gap_list = [check_number(g, f"gaps[{i}]", low=0.0) for i, g in enumerate(gap_list)]
        name_list = [f"phase{i}" for i in range(k)] if names is None else list(names)
        if len(name_list) != k:
            raise InvalidInputError(f"`names` must have one entry per phase ({k}); got {len(name_list)}")
        return cls(Phase(m, g, nm) for m, g, nm in zip(mats, gap_list, name_list, strict=True))

    def __len__(self) -> int:
        return len(self.phases)

    @property
    def n(self) -> int:
        """Number of ports."""
        return self.phases[0].demand.n

    @property
    def gaps(self) -> tuple[float, ...]:
        """Each phase's gap before it."""
        return tuple(p.gap_before for p in self.phases)

    @property
    def total_gap(self) -> float:
        """Sum of the gaps (compute time)."""
        return float(sum(self.gaps))

    @property
    def names(self) -> tuple[str, ...]:
        """Each phase's name."""
        return tuple(p.name for p in self.phases)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready ``ocsched.sequence`` form (sparse demands)."""
        return {
            "format": ITERATION_FORMAT,
            "version": ITERATION_VERSION,
            "ports": self.n,
            "phases": [
                {
                    "name": p.name,
                    "gap_before": p.gap_before,
                    "demand": {
                        "src": p.demand.rows.tolist(),
                        "dst": p.demand.cols.tolist(),
                        "value": p.demand.values.tolist(),
                    },
                }
                for p in self.phases
            ],
        }

    def to_json(self, *, indent: int | None = None) -> str:
        """Serialise to the ``ocsched.sequence`` JSON format."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Iteration:
        """Read the ``ocsched.sequence`` form (inverse of :meth:`to_dict`).

        Raises
        ------
        InvalidInputError
            If the format or version is wrong, a field is missing or mistyped, a demand is invalid
            or the phases differ in n; the message names the phase.

        Examples
        --------
        >>> it = Iteration.from_dict({"format": "ocsched.sequence", "version": 1, "phases": [
        ...     {"name": "a", "demand": [[0, 1], [1, 0]]},
        ...     {"gap_before": 2, "demand": {"src": [0], "dst": [1], "value": [3]}}]})
        >>> it.names, it.gaps, it.phases[1].demand.to_dense().tolist()
        (('a', 'phase1'), (0.0, 2.0), [[0.0, 3.0], [0.0, 0.0]])
        """
        return cls(Phase(m, g, nm) for m, g, nm in parse_phases(data))

    @classmethod
    def from_json(cls, text: str) -> Iteration:
        """Parse the ``ocsched.sequence`` JSON format."""
        return cls.from_dict(parse_json(text, "iteration"))
