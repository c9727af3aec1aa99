"""Check a schedule against the model and a demand; report every violation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._checks import check_delta, check_switches
from ocsched.errors import InvalidInputError, InvalidScheduleError
from ocsched.fabric import Fabric, Switch
from ocsched.model import Configuration, Demand, Schedule, as_demand
from ocsched.timing import held_times, switch_violations

__all__ = ["ValidationReport", "Violation", "validate"]

#: Relative tolerance: an entry counts as served within ``TOL`` times the larger sum of its row and
#: column; a delay is respected within ``TOL * delta`` (plus a few ulps of the times compared).
TOL = 1e-9


@dataclass(frozen=True)
class Violation:
    """One way a schedule breaks the model.

    Attributes
    ----------
    kind : str
        ``"ports"``, ``"switches"``, ``"delta"``, ``"rate"``, ``"model"``, ``"matching"``,
        ``"duration"``, ``"timing"``, ``"down"``, ``"link"`` or ``"unserved"``.
    message : str
        Human-readable detail naming the switch, configuration or entry.
    """

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class ValidationReport:
    """The result of :func:`validate`.

    Attributes
    ----------
    violations : list of Violation
        Every violation found (empty when valid).
    makespan : float
        The schedule's makespan.
    max_shortfall : float
        The largest unserved demand over all entries (<= 0 when all is served).
    """

    violations: list[Violation] = field(default_factory=list)
    makespan: float = 0.0
    max_shortfall: float = 0.0

    @property
    def ok(self) -> bool:
        """True if there is no violation."""
        return not self.violations

    def __bool__(self) -> bool:
        return self.ok

    def raise_if_invalid(self) -> None:
        """Raise :class:`InvalidScheduleError` listing the violations, if any."""
        if self.violations:
            shown = "; ".join(str(v) for v in self.violations[:10])
            more = f" (and {len(self.violations) - 10} more)" if len(self.violations) > 10 else ""
            raise InvalidScheduleError(f"invalid schedule: {shown}{more}")


def validate(
    schedule: Schedule,
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand,
    *,
    fabric: Fabric | None = None,
    delta: float | None = None,
    switches: int | None = None,
    tol: float = TOL,
    max_violations: int = 1000,
) -> ValidationReport:
    """Check that ``schedule`` is valid for ``demand`` and return every violation.

    A schedule is valid when every configuration is a matching on the demand's ports with a
    finite start, duration >= 0 and end, every switch follows the reconfiguration rule of its
    fabric (:mod:`ocsched.timing`: per-switch delay, down windows, failed links, all-stop or
    partial), and every demand entry is served: the demand its circuit carries (held time times
    the switch's rate, summed over switches) is at least the entry minus ``tol`` times the larger
    of the entry's row and column sums.

    The schedule is checked against its own fabric (:meth:`Schedule.on_fabric`) and, when
    ``fabric``, ``delta`` or ``switches`` is given, against that too: a schedule claiming a
    smaller delay, a higher rate, a more lenient model or another number of switches than the
    real fabric is reported, and so is a ``meta["switches"]`` that disagrees with the switches.

    Parameters
    ----------
    schedule : Schedule
        The schedule to check.
    demand : array_like, sparse matrix or Demand
        The demand it must serve.
    fabric : Fabric, optional
        The real fabric to check against as well.
    delta : float, optional
        The real uniform delay (shortcut: the schedule's fabric with every delay set to ``delta``).
    switches : int, optional
        The real number of switches.
    tol : float
        Relative tolerance (see :data:`TOL`); no absolute floor, so it holds at any scale.
    max_violations : int
        Stop listing after this many (the report says so in its last entry).

    Notes
    -----
    Memory is proportional to the circuits (never a ports-long array per configuration).

    Examples
    --------
    >>> from ocsched import schedule
    >>> d = [[0, 1], [2, 0]]
    >>> validate(schedule(d, switches=2, delta=0.1), d).ok
    True
    >>> [v.kind for v in validate(schedule(d, switches=2, delta=0.1), d, switches=3).violations]
    ['switches']
    """
    dem = as_demand(demand)
    out: list[Violation] = []

    def add(kind: str, msg: str) -> None:
        if len(out) < max_violations:
            out.append(Violation(kind, msg))
        elif len(out) == max_violations:
            out.append(Violation("truncated", f"more than {max_violations} violations; stopped listing"))

    n = schedule.ports
    s = len(schedule.switches)
    if n != dem.n:
        add("ports", f"schedule has {n} ports but the demand is {dem.n} x {dem.n}")
    claimed = schedule.meta.get("switches") if isinstance(schedule.meta, Mapping) else None
    if isinstance(claimed, int) and not isinstance(claimed, bool) and claimed != s:
        add("switches", f"schedule has {s} switches but its meta.switches says {claimed}")
    if switches is not None and check_switches(switches) != s:
        add("switches", f"schedule has {s} switches but the fabric has {switches}")
    own = _own_fabric(schedule, add)
    real = _real_fabric(own, fabric, delta)
    if real is not None:
        _compare(own, real, s, add)
    fabrics = [own] if real is None or real == own or real.size != s else [own, real]
    checked = fabrics[-1]
    confs = [[_as_tuple(c) for c in sw] for sw in schedule.switches]

    # Served demand is totalled sparsely (flat index i * n + j): never an n x n array.
    flat: list[NDArray[np.int64]] = []
    held: list[NDArray[np.float64]] = []
    for b, sw in enumerate(schedule.switches):
        for k, c in enumerate(sw):
            where = f"switch {b} configuration {k}"
            if not (np.isfinite(c.start) and np.isfinite(c.duration) and np.isfinite(c.end)):
                add("duration", f"{where}: start {c.start} / duration {c.duration} / end {c.end} not finite")
                continue
            if c.duration < 0:
                add("duration", f"{where}: negative duration {c.duration}")
            if c.ports != n:
                add("matching", f"{where}: permutation has {c.ports} ports, expected {n}")
                continue
            ins, outs = confs[b][k][2], confs[b][k][3]
            if (outs >= n).any() or (outs < 0).any() or (ins >= n).any():
                add("matching", f"{where}: port out of range 0..{n - 1}")
                continue
            uniq, counts = np.unique(outs, return_counts=True)
            if (counts > 1).any():
                add("matching", f"{where}: output port {int(uniq[counts > 1][0])} used twice")
        for f in fabrics:
            label = "" if f is own else "on the given fabric: "
            if b >= f.size:
                continue
            good = [
                t for t in confs[b] if np.isfinite(t[0]) and np.isfinite(t[1]) and np.isfinite(t[0] + t[1])
            ]
            index = [k for k, t in enumerate(confs[b]) if np.isfinite(t[0]) and np.isfinite(t[0] + t[1])]
            for k, kind, msg in switch_violations(
                good,
                f.switches[b].delta,
                model=f.model,
                windows=f.windows(b),
                failed_ports=f.failed_ports(b),
                rtol=tol,
            ):
                add(kind, f"{label}switch {b} configuration {index[k]}: {msg}")
        if b < checked.size:
            good = [t for t in confs[b] if np.isfinite(t[0]) and np.isfinite(t[0] + t[1])]
            rate = checked.switches[b].rate
            for t, h in zip(
                good, held_times(good, model=checked.model, windows=checked.windows(b)), strict=True
            ):
                ok = (t[3] >= 0) & (t[3] < n) & (t[2] < n)
                flat.append(t[2][ok] * n + t[3][ok])
                held.append(rate * h[ok])
    max_short = 0.0
    if n == dem.n and dem.nnz:
        keys, inv = np.unique(np.concatenate([np.zeros(0, np.int64), *flat]), return_inverse=True)
        totals = np.bincount(inv, weights=np.concatenate([np.zeros(0), *held]), minlength=keys.size)
        want = dem.rows * n + dem.cols
        served = np.zeros(dem.nnz)
        pos = np.zeros(dem.nnz, dtype=np.int64)
        hit = np.zeros(dem.nnz, dtype=bool)
        if keys.size:
            pos = np.minimum(np.searchsorted(keys, want), keys.size - 1)
            hit = keys[pos] == want
            served[hit] = totals[pos[hit]]
        short = dem.values - served
        max_short = float(short.max())
        line = np.maximum(dem.row_sums()[dem.rows], dem.col_sums()[dem.cols])
        # A held time is a difference of absolute times: each configuration serving an entry may
        # be off by a few ulps of the times involved (relative to them, not an absolute floor).
        pieces = np.zeros(dem.nnz)
        if keys.size:
            per_key = np.bincount(inv, minlength=keys.size)
            pieces[hit] = per_key[pos[hit]]
        ends = [abs(c.end) for sw in schedule.switches for c in sw if np.isfinite(c.end)]
        ulp = float(np.spacing(max(ends, default=0.0)))
        bad = np.nonzero(short > tol * line + 8.0 * ulp * pieces)[0]
        for e in bad[:20]:
            add(
                "unserved",
                f"demand[{dem.rows[e]}, {dem.cols[e]}] = {dem.values[e]:.12g} "
                f"but only {served[e]:.12g} served",
            )
        if bad.size > 20:
            add("unserved", f"... and {bad.size - 20} more unserved entries")
    return ValidationReport(out, schedule.makespan, max_short)


def _as_tuple(c: Configuration) -> tuple[float, float, NDArray[np.int64], NDArray[np.int64]]:
    ins, outs = c.circuit_arrays()
    return (c.start, c.duration, ins, outs)


def _own_fabric(schedule: Schedule, add: Callable[[str, str], None]) -> Fabric:
    """The fabric the schedule claims (a broken claim is reported and replaced by delta 0)."""
    if schedule.fabric is not None:
        if schedule.fabric.size != len(schedule.switches):
            add(
                "switches",
                f"schedule has {len(schedule.switches)} switches but its fabric {schedule.fabric.size}",
            )
        return schedule.fabric
    d = schedule.delta
    if not (np.isfinite(d) and d >= 0):
        add("delta", f"schedule delta must be a finite number >= 0; got {d!r}")
        d = 0.0  # still check that configurations do not overlap
    return Fabric.uniform(max(1, len(schedule.switches)), d)


def _real_fabric(own: Fabric, fabric: Fabric | None, delta: float | None) -> Fabric | None:
    if fabric is not None and delta is not None:
        raise InvalidInputError("give either `fabric` or `delta`, not both")
    if fabric is not None:
        if not isinstance(fabric, Fabric):
            raise InvalidInputError(f"`fabric` must be an ocsched.Fabric; got {type(fabric).__name__}")
        return fabric
    if delta is not None:
        d = check_delta(delta)
        return Fabric(tuple(Switch(d, x.rate) for x in own.switches), own.down, own.failed_links, own.model)
    return None


def _compare(own: Fabric, real: Fabric, s: int, add: Callable[[str, str], None]) -> None:
    """Report where the schedule's fabric is more optimistic than the real one."""
    if real.size != s:
        add("switches", f"schedule has {s} switches but the fabric has {real.size}")
        return
    for b, (x, y) in enumerate(zip(own.switches, real.switches, strict=True)):
        if x.delta < y.delta:
            add(
                "delta",
                f"schedule assumes delta {x.delta:.12g} on switch {b}, below the fabric's {y.delta:.12g}",
            )
        if x.rate > y.rate:
            add(
                "rate", f"schedule assumes rate {x.rate:.12g} on switch {b}, above the fabric's {y.rate:.12g}"
            )
    if own.model == "partial" and real.model == "all-stop":
        add("model", "schedule assumes partial reconfiguration on an all-stop fabric")
