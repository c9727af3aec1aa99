"""The data model: demand matrices, configurations and schedules, with their JSON form.

One time unit is used throughout: a demand entry is the time to send that flow over one OCS link
at line rate, and the reconfiguration delay ``delta`` and every duration are in the same unit.
"""

from __future__ import annotations

import json
import logging
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched.errors import InvalidInputError

__all__ = [
    "SCHEDULE_FORMAT",
    "SCHEDULE_VERSION",
    "STATUSES",
    "Configuration",
    "Demand",
    "Schedule",
    "as_demand",
]

log = logging.getLogger(__name__)

SCHEDULE_FORMAT = "ocsched.schedule"
SCHEDULE_VERSION = 1
#: How a schedule was found: a heuristic, or an exact solver's outcome.
STATUSES = ("heuristic", "optimal", "time_limit", "infeasible", "unbounded", "error")
#: Largest port count a schedule file may claim (far above any OCS radix; guards memory).
MAX_PORTS = 1_000_000

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def _frozen(a: NDArray[Any]) -> NDArray[Any]:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Demand:
    """A validated n x n demand matrix, stored sparse (COO, row-major, strictly positive).

    Build one with :meth:`from_matrix` (or :func:`as_demand`), which checks the input; the
    constructor itself trusts its arguments.

    Attributes
    ----------
    n : int
        Number of ports.
    rows, cols : ndarray of int64
        Coordinates of the nonzero off-diagonal entries, sorted by row then column.
    values : ndarray of float64
        The entries, all > 0: time to send ``rows[k] -> cols[k]`` at one link's line rate.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 2], [1, 0]])
    >>> d.n, d.nnz, d.max_degree, d.max_line_sum
    (2, 2, 1, 2.0)
    """

    n: int
    rows: IntArray
    cols: IntArray
    values: FloatArray

    @classmethod
    def from_matrix(cls, matrix: ArrayLike | sp.sparray | sp.spmatrix, *, name: str = "demand") -> Demand:
        """Validate a dense or scipy-sparse square matrix and return it as a :class:`Demand`.

        Diagonal entries are local traffic that never crosses the fabric: they are dropped, with
        a logged warning.

        Raises
        ------
        InvalidInputError
            If the matrix is empty, not square, not numeric, or has a negative, NaN or infinite
            entry; the message names ``name`` and the first offending index.
        """
        if isinstance(matrix, Demand):
            return matrix
        if sp.issparse(matrix):
            coo = sp.coo_array(cast(Any, matrix), copy=True)  # copy: the caller's matrix stays as given
            _check_shape(coo.shape, name)
            _check_dtype(coo.dtype, name)
            coo.sum_duplicates()  # duplicate coordinates add up, as everywhere in scipy
            r, c, v = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
            n = int(coo.shape[0])
        else:
            try:
                arr = np.asarray(matrix)
            except (ValueError, TypeError) as exc:
                raise InvalidInputError(f"`{name}` must be a square numeric matrix; {exc}") from None
            _check_shape(arr.shape, name)
            _check_dtype(arr.dtype, name)
            bad = ~np.isfinite(arr)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise InvalidInputError(f"`{name}` must be finite; {name}[{i}, {j}] = {arr[i, j]}")
            r, c = np.nonzero(arr)
            r, c, v = r.astype(np.int64), c.astype(np.int64), arr[r, c]
            n = int(arr.shape[0])
        v = np.asarray(v, dtype=np.float64)
        order = np.lexsort((c, r))
        r, c, v = r[order], c[order], v[order]
        bad = ~np.isfinite(v)
        if bad.any():
            k = int(np.argmax(bad))
            raise InvalidInputError(f"`{name}` must be finite; {name}[{r[k]}, {c[k]}] = {v[k]}")
        neg = v < 0
        if neg.any():
            k = int(np.argmax(neg))
            raise InvalidInputError(f"`{name}` must be non-negative; {name}[{r[k]}, {c[k]}] = {v[k]}")
        diag = r == c
        keep = (v > 0) & ~diag
        if (diag & (v > 0)).any():
            log.warning(
                "%s: dropping %d diagonal entries (local traffic, total %.6g)",
                name,
                int((diag & (v > 0)).sum()),
                float(v[diag].sum()),
            )
        return cls(
            n,
            _frozen(r[keep].astype(np.int64)),
            _frozen(c[keep].astype(np.int64)),
            _frozen(v[keep].astype(np.float64)),
        )

    @property
    def nnz(self) -> int:
        """Number of nonzero flows."""
        return int(self.values.size)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, n)``."""
        return (self.n, self.n)

    def to_dense(self) -> FloatArray:
        """Return the demand as a dense n x n array."""
        out = np.zeros((self.n, self.n))
        out[self.rows, self.cols] = self.values
        return out

    def to_sparse(self) -> sp.csr_array:
        """Return the demand as a scipy CSR array."""
        return sp.csr_array((self.values, (self.rows, self.cols)), shape=self.shape)

    def row_sums(self) -> FloatArray:
        """Total demand of each input port."""
        return np.bincount(self.rows, weights=self.values, minlength=self.n).astype(np.float64)

    def col_sums(self) -> FloatArray:
        """Total demand of each output port."""
        return np.bincount(self.cols, weights=self.values, minlength=self.n).astype(np.float64)

    def row_nnz(self) -> IntArray:
        """Number of flows of each input port."""
        return np.bincount(self.rows, minlength=self.n).astype(np.int64)

    def col_nnz(self) -> IntArray:
        """Number of flows of each output port."""
        return np.bincount(self.cols, minlength=self.n).astype(np.int64)

    @property
    def max_degree(self) -> int:
        """Delta: the most flows in any row or column (0 for an all-zero demand)."""
        if not self.nnz:
            return 0
        return int(max(self.row_nnz().max(), self.col_nnz().max()))

    @property
    def max_line_sum(self) -> float:
        """The largest row or column sum."""
        if not self.nnz:
            return 0.0
        return float(max(self.row_sums().max(), self.col_sums().max()))

    def scaled(self, factor: float) -> Demand:
        """Return the demand multiplied by ``factor > 0``."""
        return Demand(self.n, self.rows, self.cols, _frozen(self.values * float(factor)))


def as_demand(demand: ArrayLike | sp.sparray | sp.spmatrix | Demand, *, name: str = "demand") -> Demand:
    """Return ``demand`` as a validated :class:`Demand` (see :meth:`Demand.from_matrix`)."""
    return demand if isinstance(demand, Demand) else Demand.from_matrix(demand, name=name)


def _check_shape(shape: tuple[int, ...], name: str) -> None:
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InvalidInputError(f"`{name}` must be a square n x n matrix; got shape {tuple(shape)}")
    if shape[0] == 0:
        raise InvalidInputError(f"`{name}` must not be empty; got shape {tuple(shape)}")


def _check_dtype(dtype: np.dtype[Any], name: str) -> None:
    if not (np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)) or np.issubdtype(
        dtype, np.complexfloating
    ):
        raise InvalidInputError(f"`{name}` must hold real numbers; got dtype {dtype}")


@dataclass(frozen=True, eq=False)
class Configuration:
    """One matching held on one switch from ``start`` for ``duration``.

    Its reconfiguration delay lies just before ``start``.

    Attributes
    ----------
    start : float
        When the circuits begin carrying traffic.
    duration : float
        How long they are held (>= 0).
    perm : ndarray of int64
        ``perm[i] = j`` connects input port i to output port j; ``-1`` leaves port i idle.
    """

    start: float
    duration: float
    perm: IntArray

    @classmethod
    def from_circuits(
        cls, start: float, duration: float, circuits: Iterable[Sequence[int]], *, ports: int
    ) -> Configuration:
        """Build a configuration from ``(i, j)`` pairs.

        >>> Configuration.from_circuits(0.1, 0.5, [(0, 1), (1, 0)], ports=3).perm.tolist()
        [1, 0, -1]
        """
        perm = np.full(ports, -1, dtype=np.int64)
        for i, j in circuits:
            perm[int(i)] = int(j)
        return cls(float(start), float(duration), _frozen(perm))

    @property
    def end(self) -> float:
        """``start + duration``."""
        return self.start + self.duration

    @property
    def circuits(self) -> list[tuple[int, int]]:
        """The circuits as ``(input, output)`` pairs, by input port."""
        (i,) = np.nonzero(self.perm >= 0)
        return list(zip(i.tolist(), self.perm[i].tolist(), strict=True))

    def same_as(self, other: Configuration) -> bool:
        """Exact equality of start, duration and circuits."""
        return (
            self.start == other.start
            and self.duration == other.duration
            and np.array_equal(self.perm, other.perm)
        )


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
        ``"time_limit"``, ... (see :data:`STATUSES`).
    dual_bound : float or None
        A proved lower bound on the optimal makespan from the solver that built it, if any.
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

    @property
    def makespan(self) -> float:
        """The latest end of any configuration (0 for an empty schedule)."""
        return max((c.end for sw in self.switches for c in sw), default=0.0)

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
        for sw in self.switches:
            for c in sw:
                (i,) = np.nonzero(c.perm >= 0)
                np.add.at(flat, i * n + c.perm[i], c.duration)
        return flat.reshape(n, n)

    def to_dict(self) -> dict[str, Any]:
        """Return the versioned JSON-ready form (see the README for the format)."""
        out: dict[str, Any] = {
            "format": SCHEDULE_FORMAT,
            "version": SCHEDULE_VERSION,
            "ports": self.ports,
            "delta": self.delta,
            "makespan": self.makespan,
            "algorithm": self.algorithm,
            "lower_bound": self.lower_bound,
            "splits": self.splits,
            "switches": [
                {
                    "configurations": [
                        {"start": c.start, "duration": c.duration, "circuits": [list(p) for p in c.circuits]}
                        for c in sw
                    ]
                }
                for sw in self.switches
            ],
        }
        # Written only when they say more than "a heuristic built it", so files stay as before.
        if self.status != "heuristic":
            out["status"] = self.status
        if self.dual_bound is not None:
            out["dual_bound"] = self.dual_bound
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

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
        if not isinstance(data, Mapping):
            raise InvalidInputError(f"schedule must be a JSON object; got {type(data).__name__}")
        if data.get("format") != SCHEDULE_FORMAT:
            raise InvalidInputError(
                f"schedule `format` must be {SCHEDULE_FORMAT!r}; got {data.get('format')!r}"
            )
        version = data.get("version")
        if isinstance(version, bool) or version != SCHEDULE_VERSION:
            raise InvalidInputError(
                f"schedule `version` must be {SCHEDULE_VERSION}; got {data.get('version')!r}"
            )
        ports = _field(data, "ports", int)
        if not 1 <= ports <= MAX_PORTS:
            raise InvalidInputError(f"schedule `ports` must be in 1..{MAX_PORTS}; got {ports}")
        delta = float(_field(data, "delta", numbers.Real))
        if not math.isfinite(delta) or delta < 0:
            raise InvalidInputError(f"schedule `delta` must be a finite number >= 0; got {delta!r}")
        lb = _optional(data, "lower_bound", numbers.Real, None)
        algorithm = _optional(data, "algorithm", str, "")
        splits = _optional(data, "splits", int, 0)
        meta = _optional(data, "meta", Mapping, {})
        status = _optional(data, "status", str, "heuristic")
        if status not in STATUSES:
            raise InvalidInputError(f"schedule `status` must be one of {', '.join(STATUSES)}; got {status!r}")
        dual = _optional(data, "dual_bound", numbers.Real, None)
        recorded = _optional(data, "makespan", numbers.Real, None)
        switches_raw = _field(data, "switches", list)
        switches = []
        for b, sw in enumerate(switches_raw):
            where = f"switches[{b}]"
            if not isinstance(sw, Mapping):
                raise InvalidInputError(f"schedule `{where}` must be an object; got {sw!r}")
            confs = []
            for k, c in enumerate(_field(sw, "configurations", list, where)):
                w = f"{where}.configurations[{k}]"
                if not isinstance(c, Mapping):
                    raise InvalidInputError(f"schedule `{w}` must be an object; got {c!r}")
                circuits = _field(c, "circuits", list, w)
                perm = np.full(ports, -1, dtype=np.int64)
                for pair in circuits:
                    if (
                        not isinstance(pair, list)
                        or len(pair) != 2
                        or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
                    ):
                        raise InvalidInputError(
                            f"schedule `{w}.circuits` must hold [i, j] integer pairs; got {pair!r}"
                        )
                    i, j = pair
                    if not (0 <= i < ports and 0 <= j < ports):
                        raise InvalidInputError(
                            f"schedule `{w}.circuits` has port out of range 0..{ports - 1}: {pair}"
                        )
                    if perm[i] >= 0:
                        raise InvalidInputError(f"schedule `{w}.circuits` uses input port {i} twice")
                    perm[i] = j
                start = float(_field(c, "start", numbers.Real, w))
                duration = float(_field(c, "duration", numbers.Real, w))
                confs.append(Configuration(start, duration, _frozen(perm)))
            switches.append(tuple(confs))
        sched = cls(
            ports=ports,
            delta=delta,
            switches=tuple(switches),
            algorithm=algorithm,
            lower_bound=None if lb is None else float(lb),
            splits=splits,
            meta=dict(meta),
            status=status,
            dual_bound=None if dual is None else float(dual),
        )
        if recorded is not None and abs(float(recorded) - sched.makespan) > 1e-9 * max(1.0, sched.makespan):
            raise InvalidInputError(
                f"schedule `makespan` = {recorded} disagrees with its configurations, "
                f"which end at {sched.makespan}"
            )
        return sched

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
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"schedule is not valid JSON: {exc}") from None
        return cls.from_dict(data)

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
            and len(self.switches) == len(other.switches)
            and all(
                len(a) == len(b) and all(x.same_as(y) for x, y in zip(a, b, strict=True))
                for a, b in zip(self.switches, other.switches, strict=True)
            )
        )


_KIND_NAMES = {
    numbers.Real: "a number",
    int: "an integer",
    str: "a string",
    Mapping: "an object",
    list: "a list",
}


def _optional(data: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    """An optional top-level field: ``default`` when absent or null, else type-checked."""
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, kind):
        raise InvalidInputError(f"schedule `{key}` must be {_KIND_NAMES[kind]}; got {value!r}")
    return value


def _field(data: Mapping[str, Any], key: str, kind: type, where: str = "") -> Any:
    prefix = f"{where}." if where else ""
    if key not in data:
        raise InvalidInputError(f"schedule `{prefix}{key}` is missing")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise InvalidInputError(f"schedule `{prefix}{key}` must be {_KIND_NAMES[kind]}; got {value!r}")
    return value
