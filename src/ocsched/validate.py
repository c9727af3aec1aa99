"""Check a schedule against the model and a demand; report every violation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._checks import check_delta
from ocsched.errors import InvalidScheduleError
from ocsched.model import Demand, Schedule, as_demand
from ocsched.timing import timing_violations

__all__ = ["ValidationReport", "Violation", "validate"]

#: Relative tolerance: demand counts as served within ``TOL * max(D)``; times within ``TOL * makespan``.
TOL = 1e-9


@dataclass(frozen=True)
class Violation:
    """One way a schedule breaks the model.

    Attributes
    ----------
    kind : str
        ``"ports"``, ``"delta"``, ``"matching"``, ``"duration"``, ``"timing"`` or ``"unserved"``.
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
    delta: float | None = None,
    tol: float = TOL,
    max_violations: int = 1000,
) -> ValidationReport:
    """Check that ``schedule`` is valid for ``demand`` and return every violation.

    A schedule is valid when every configuration is a matching on the demand's ports with a
    finite duration >= 0, each configuration starts at least ``delta`` after the previous one on
    its switch ends (the first at ``delta`` or later), and every demand entry is served: the time
    its circuit is held, summed over switches, is at least the entry minus ``tol * max(D)``.

    Parameters
    ----------
    schedule : Schedule
        The schedule to check.
    demand : array_like, sparse matrix or Demand
        The demand it must serve.
    delta : float, optional
        The fabric's real reconfiguration delay, to check timing against instead of the delay the
        schedule claims (a schedule that claims a smaller delay is then reported).
    tol : float
        Relative tolerance for serving and timing.
    max_violations : int
        Stop listing after this many (the report says so in its last entry).

    Examples
    --------
    >>> from ocsched import schedule
    >>> d = [[0, 1], [2, 0]]
    >>> validate(schedule(d, switches=2, delta=0.1), d).ok
    True
    """
    dem = as_demand(demand)
    out: list[Violation] = []

    def add(kind: str, msg: str) -> None:
        if len(out) < max_violations:
            out.append(Violation(kind, msg))
        elif len(out) == max_violations:
            out.append(Violation("truncated", f"more than {max_violations} violations; stopped listing"))

    n = schedule.ports
    if n != dem.n:
        add("ports", f"schedule has {n} ports but the demand is {dem.n} x {dem.n}")
    if delta is None:
        delta = schedule.delta
    else:
        delta = check_delta(delta)
        if schedule.delta < delta:
            add("delta", f"schedule assumes delta {schedule.delta:.12g}, below the fabric's {delta:.12g}")
    if not (np.isfinite(delta) and delta >= 0):
        add("delta", f"schedule delta must be a finite number >= 0; got {delta!r}")
        delta = 0.0  # still check that configurations do not overlap
    ends = [c.end for sw in schedule.switches for c in sw if np.isfinite(c.end)]
    scale_t = tol * max(1.0, max(ends, default=0.0))
    # Served time is totalled sparsely (flat index i * n + j): never an n x n array.
    flat: list[NDArray[np.int64]] = []
    held: list[NDArray[np.float64]] = []
    for b, sw in enumerate(schedule.switches):
        early = {
            k: prev
            for k, _, prev in timing_violations([(c.start, c.duration) for c in sw], delta, slack=scale_t)
        }
        for k, c in enumerate(sw):
            where = f"switch {b} configuration {k}"
            # Timing first: a configuration with bad circuits still occupies its switch.
            if not (np.isfinite(c.start) and np.isfinite(c.duration)):
                add("duration", f"{where}: start {c.start} / duration {c.duration} not finite")
                continue
            if c.duration < 0:
                add("duration", f"{where}: negative duration {c.duration}")
            if k in early:
                add(
                    "timing",
                    f"{where}: starts at {c.start:.12g}, before the previous end {early[k]:.12g} + delta "
                    f"{delta:.12g}",
                )
            perm = np.asarray(c.perm)
            if perm.shape != (n,):
                add("matching", f"{where}: permutation has shape {perm.shape}, expected ({n},)")
                continue
            act = np.nonzero(perm >= 0)[0]
            outs = perm[act]
            if (outs >= n).any() or (perm < -1).any():
                add("matching", f"{where}: port out of range 0..{n - 1}")
                continue
            uniq, counts = np.unique(outs, return_counts=True)
            if (counts > 1).any():
                add("matching", f"{where}: output port {int(uniq[counts > 1][0])} used twice")
            flat.append(act * n + outs)
            held.append(np.full(act.size, max(c.duration, 0.0)))
    max_short = 0.0
    if n == dem.n and dem.nnz:
        keys, inv = np.unique(np.concatenate([np.zeros(0, np.int64), *flat]), return_inverse=True)
        totals = np.bincount(inv, weights=np.concatenate([np.zeros(0), *held]), minlength=keys.size)
        want = dem.rows * n + dem.cols
        served = np.zeros(dem.nnz)
        if keys.size:
            pos = np.minimum(np.searchsorted(keys, want), keys.size - 1)
            hit = keys[pos] == want
            served[hit] = totals[pos[hit]]
        short = dem.values - served
        max_short = float(short.max())
        bad = np.nonzero(short > tol * float(dem.values.max()))[0]
        for e in bad[:20]:
            add(
                "unserved",
                f"demand[{dem.rows[e]}, {dem.cols[e]}] = {dem.values[e]:.12g} "
                f"but only {served[e]:.12g} served",
            )
        if bad.size > 20:
            add("unserved", f"... and {bad.size - 20} more unserved entries")
    return ValidationReport(out, schedule.makespan, max_short)
