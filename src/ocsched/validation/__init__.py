"""Check a schedule against the model and a demand; report every violation."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._checks import check_int, check_number, check_switches
from ocsched.errors import InvalidInputError, InvalidScheduleError
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand, Schedule, as_demand
from ocsched.timing import check_switch
from ocsched.validation.fabric import (
    _as_tuple,
    _check_claims,
    _compare,
    _failed_by_switch,
    _own_fabric,
    real_fabric,
)

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
        ``"ports"``, ``"switches"``, ``"fabric"``, ``"delta"``, ``"rate"``, ``"model"``,
        ``"status"``, ``"bound"``, ``"matching"``, ``"duration"``, ``"timing"``, ``"down"``,
        ``"link"``, ``"eps"``, ``"unserved"`` or ``"truncated"``.
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
    partial; configurations of length 0 included), and every demand entry is served: the
    demand its circuit is credited with (the time it is lit while its switch is up and both its
    links work, times the switch's rate, summed over switches, plus what the schedule's EPS
    part carries of it, a part that must fit the fabric's packet switch within the makespan) is
    at least the entry minus
    ``tol`` times the larger of the entry's row and column sums, minus 8 ulps of the makespan
    (times the rate) per piece credited a positive time (the rounding of absolute times).

    The schedule is checked against its own fabric (:meth:`Schedule.on_fabric`) and, when
    ``fabric``, ``delta`` or ``switches`` is given, against that too: a schedule claiming a
    smaller delay, a higher rate, a more lenient model or another number of switches than the
    real fabric is reported. So is what the schedule says about itself that cannot be true or
    that :func:`~ocsched.schedule` refuses: a ``meta["switches"]`` that disagrees with the
    switches, no switch at all, a failed link on a port the schedule does not have, a
    ``delta`` that is not its fabric's largest delay, an unknown ``status``, a lower or dual
    bound that is not a finite number >= 0 or exceeds the makespan (beyond ``tol``).

    Parameters
    ----------
    schedule : Schedule
        The schedule to check.
    demand : array_like, sparse matrix or Demand
        The demand it must serve.
    fabric : Fabric, optional
        The real fabric to check against as well (a failed link on a port past the demand's is
        refused, as :func:`~ocsched.schedule` refuses it).
    delta : float, optional
        The real uniform delay (shortcut: the schedule's fabric with every delay set to ``delta``).
    switches : int, optional
        The real number of switches.
    tol : float
        Relative tolerance in [0, 1) (see :data:`TOL`); no absolute floor, so it holds at any
        scale.
    max_violations : int
        Stop listing after this many, >= 0 (the report says so in its last entry).

    Raises
    ------
    InvalidInputError
        For a malformed demand, ``schedule`` not a :class:`Schedule` (or its ``fabric`` not a
        :class:`Fabric`), both ``fabric`` and ``delta``, or a bad ``tol``, ``max_violations``,
        ``delta``, ``switches`` or ``fabric``.

    Notes
    -----
    Memory is proportional to the circuits (never a ports-long array per configuration). Time is
    O(N log N) in the size N of the schedule (configurations, circuits, down windows and failed
    links): each switch is checked by a few sorts and binary searches
    (:func:`ocsched.timing.check_switch`), never a scan per configuration.

    Examples
    --------
    >>> from ocsched import schedule
    >>> d = [[0, 1], [2, 0]]
    >>> validate(schedule(d, switches=2, delta=0.1), d).ok
    True
    >>> [v.kind for v in validate(schedule(d, switches=2, delta=0.1), d, switches=3).violations]
    ['switches']
    """
    if not isinstance(schedule, Schedule):
        raise InvalidInputError(f"`schedule` must be an ocsched.Schedule; got {type(schedule).__name__}")
    if schedule.fabric is not None and not isinstance(schedule.fabric, Fabric):
        raise InvalidInputError(
            f"`schedule.fabric` must be an ocsched.Fabric or None; got {type(schedule.fabric).__name__}"
        )
    # A NaN, negative or huge tolerance, or a negative cap, would let any schedule pass.
    tol = check_number(tol, "tol", low=0.0)
    if tol >= 1.0:
        raise InvalidInputError(f"`tol` must be a finite number in [0, 1); got {tol!r}")
    max_violations = check_int(max_violations, "max_violations", minimum=0)
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
    if s == 0:
        add("switches", "schedule has no switch")
    claimed = schedule.meta.get("switches") if isinstance(schedule.meta, Mapping) else None
    if isinstance(claimed, int) and not isinstance(claimed, bool) and claimed != s:
        add("switches", f"schedule has {s} switches but its meta.switches says {claimed}")
    if switches is not None and check_switches(switches) != s:
        add("switches", f"schedule has {s} switches but the fabric has {switches}")
    own = _own_fabric(schedule, add)
    _check_claims(schedule, own, tol, add)
    real = real_fabric(own, fabric, delta)
    if fabric is not None:
        fabric.check_ports(dem.n)  # as schedule() does: a caller's fabric naming a port past n is bad input
    if real is not None:
        _compare(own, real, s, add)
    fabrics = [own] if real is None or real == own or real.size != s else [own, real]
    checked = fabrics[-1]
    failed = [_failed_by_switch(f) for f in fabrics]

    # Served demand is totalled sparsely (flat index i * n + j): never an n x n array.
    flat: list[NDArray[np.int64]] = []
    served_by: list[NDArray[np.float64]] = []
    rates: list[NDArray[np.float64]] = []
    tuples = [[_as_tuple(c) for c in sw] for sw in schedule.switches]
    matching = _matching_messages(schedule.switches, tuples, n, own)
    for b, confs in enumerate(tuples):
        for kind, msg in matching[b]:
            add(kind, msg)
        for f, fails in zip(fabrics, failed, strict=True):
            label = "" if f is own else "on the given fabric: "
            if b >= f.size:
                continue
            found, held = check_switch(
                confs,
                f.switches[b].delta,
                model=f.model,
                windows=f.windows(b),
                failed_ports=fails[b],
                rtol=tol,
                ports_per_endpoint=f.switches[b].ports_per_endpoint,
                bidirectional=f.switches[b].bidirectional,
            )
            for k, kind, msg in found:
                add(kind, f"{label}switch {b} configuration {k}: {msg}")
            if f is not checked:
                continue
            rate = checked.switches[b].rate
            # One-way circuits: the switch's pieces at once, in the same order as one by one.
            pieces = (
                [(t[2], t[3], h) for t, h in zip(confs, held, strict=True)]
                if checked.switches[b].bidirectional
                else [(_joined(confs, 2), _joined(confs, 3), np.concatenate([np.zeros(0), *held]))]
            )
            for ins, outs, h in pieces:
                ok = (outs >= 0) & (outs < n) & (ins < n) & (ins >= 0)
                flat.append(ins[ok] * n + outs[ok])
                served_by.append(rate * h[ok])
                # A piece credited nothing carries no rounding (and must not widen the tolerance).
                rates.append(np.where(h[ok] > 0, rate, 0.0))
                if checked.switches[b].bidirectional:  # the same circuit carries j -> i
                    back = ok & (ins != outs)
                    flat.append(outs[back] * n + ins[back])
                    served_by.append(rate * h[back])
                    rates.append(np.where(h[back] > 0, rate, 0.0))
    if schedule.eps is not None:
        _check_eps(schedule, own, real, tol, add, flat, served_by, rates)
    max_short = 0.0
    if n == dem.n and dem.nnz:
        max_short = _check_served(schedule, dem, flat, served_by, rates, tol, add)
    return ValidationReport(out, schedule.makespan, max_short)


def _joined(
    confs: list[tuple[float, float, NDArray[np.int64], NDArray[np.int64]]], k: int
) -> NDArray[np.int64]:
    """Field ``k`` (2: inputs, 3: outputs) of every configuration, one after another."""
    return np.concatenate([np.zeros(0, np.int64), *(t[k] for t in confs)])


def _matching_messages(
    switches: tuple[tuple[Configuration, ...], ...],
    tuples: list[list[tuple[float, float, NDArray[np.int64], NDArray[np.int64]]]],
    n: int,
    own: Fabric,
) -> list[list[tuple[str, str]]]:
    """Per switch, the messages for each configuration with non-finite times, a negative duration
    or a circuit set that is not a matching on ``n`` ports, in configuration order.

    On a switch with k ports per endpoint an endpoint may be the input of k circuits and the
    output of k; on a bidirectional one it may be an end of k circuits, either side counted.
    Vectorised over every switch of the same kind at once (one pass for most fabrics)."""
    out: list[list[tuple[str, str]]] = [[] for _ in switches]
    kinds: dict[tuple[int, bool], list[int]] = {}
    for b in range(len(switches)):
        switch = own.switches[b] if b < own.size else None
        key = (1, False) if switch is None else (switch.ports_per_endpoint, switch.bidirectional)
        kinds.setdefault(key, []).append(b)
    for (cap, both), members in kinds.items():
        where = [(b, j) for b in members for j in range(len(switches[b]))]
        if not where:
            continue
        confs = [t for b in members for t in tuples[b]]
        _flag_configurations([switches[b][j] for b, j in where], confs, where, n, cap, both, out)
    return out


def _flag_configurations(
    sw: list[Configuration],
    confs: list[tuple[float, float, NDArray[np.int64], NDArray[np.int64]]],
    where: list[tuple[int, int]],
    n: int,
    cap: int,
    both: bool,
    out: list[list[tuple[str, str]]],
) -> None:
    """The messages of :func:`_matching_messages` for configurations ``sw`` (``where[g]`` is the
    switch and index of ``sw[g]``), ``cap`` ports per endpoint, ``both``: bidirectional."""
    k = len(sw)
    start = np.array([t[0] for t in confs], dtype=np.float64)
    duration = np.array([t[1] for t in confs], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # an end past the float range is inf: reported
        finite = np.isfinite(start) & np.isfinite(duration) & np.isfinite(start + duration)
    width = np.array([c.ports == n for c in sw], dtype=bool)
    sizes = np.array([t[2].size for t in confs], dtype=np.int64)
    owner = np.repeat(np.arange(k), sizes)
    ins, outs = _joined(confs, 2), _joined(confs, 3)
    stray = (ins < 0) | (ins >= n) | (outs < 0) | (outs >= n)
    out_of_range = np.bincount(owner[stray], minlength=k) > 0
    if both:  # either end of a circuit takes one of the endpoint's ports
        twice = {
            "input": _first_repeat(np.concatenate([owner, owner]), np.concatenate([ins, outs]), k, cap),
            "output": np.full(k, -1, dtype=np.int64),
        }
    else:
        twice = {side: _first_repeat(owner, p, k, cap) for side, p in (("input", ins), ("output", outs))}
    flagged = (
        ~finite | (duration < 0) | ~width | out_of_range | (twice["input"] >= 0) | (twice["output"] >= 0)
    )
    for g in np.flatnonzero(flagged).tolist():
        c = sw[g]
        b, j = where[g]
        add = out[b].append
        at = f"switch {b} configuration {j}"
        if not finite[g]:
            add(("duration", f"{at}: start {c.start} / duration {c.duration} / end {c.end} not finite"))
            continue
        if duration[g] < 0:
            add(("duration", f"{at}: negative duration {c.duration}"))
        if not width[g]:
            add(("matching", f"{at}: permutation has {c.ports} ports, expected {n}"))
            continue
        if out_of_range[g]:
            add(("matching", f"{at}: port out of range 0..{n - 1}"))
            continue
        for side in ("input", "output"):
            if twice[side][g] < 0:
                continue
            p = int(twice[side][g])
            if both:
                add(("matching", f"{at}: port {p} ends more than {cap} bidirectional circuits ({cap} ports)"))
            elif cap > 1:
                add(("matching", f"{at}: {side} port {p} used by more than {cap} circuits ({cap} ports)"))
            else:
                add(("matching", f"{at}: {side} port {p} used twice"))


def _first_repeat(
    owner: NDArray[np.int64], ports: NDArray[np.int64], k: int, cap: int = 1
) -> NDArray[np.int64]:
    """Per configuration, the smallest port its circuits use more than ``cap`` times (-1 if none)."""
    out = np.full(k, -1, dtype=np.int64)
    if ports.size <= cap:
        return out
    order = np.lexsort((ports, owner))
    o, p = owner[order], ports[order]
    # Sorted: a port used more than cap times has an equal key cap places on.
    dup = np.flatnonzero((o[cap:] == o[:-cap]) & (p[cap:] == p[:-cap])) + cap
    # Sorted by (configuration, port): a configuration's first repeat is its smallest; write the
    # repeats in reverse so the first one of each configuration is the one left.
    out[o[dup][::-1]] = p[dup][::-1]
    return out


def _check_served(
    schedule: Schedule,
    dem: Demand,
    flat: list[NDArray[np.int64]],
    served_by: list[NDArray[np.float64]],
    rates: list[NDArray[np.float64]],
    tol: float,
    add: Callable[[str, str], None],
) -> float:
    """Report every demand entry served less than it needs; return the largest shortfall."""
    n = dem.n
    keys, inv = np.unique(np.concatenate([np.zeros(0, np.int64), *flat]), return_inverse=True)
    totals = np.bincount(inv, weights=np.concatenate([np.zeros(0), *served_by]), minlength=keys.size)
    want = dem.rows * n + dem.cols
    served = np.zeros(dem.nnz)
    pos = np.zeros(dem.nnz, dtype=np.int64)
    hit = np.zeros(dem.nnz, dtype=bool)
    if keys.size:
        pos = np.minimum(np.searchsorted(keys, want), keys.size - 1)
        hit = keys[pos] == want
        served[hit] = totals[pos[hit]]
    short = dem.values - served
    line = np.maximum(dem.row_sums()[dem.rows], dem.col_sums()[dem.cols])
    # A held time is a difference of absolute times: each piece serving an entry may be off by a
    # few ulps of the times involved (relative to them, not an absolute floor), times its rate.
    # Only pieces credited a positive time count (a zero-length one adds neither credit nor slack).
    pieces = np.zeros(dem.nnz)
    if keys.size:
        per_key = np.bincount(inv, weights=np.concatenate([np.zeros(0), *rates]), minlength=keys.size)
        pieces[hit] = per_key[pos[hit]]
    ends = [abs(c.end) for sw in schedule.switches for c in sw if np.isfinite(c.end)]
    ulp = float(np.spacing(max(ends, default=0.0)))
    bad = np.nonzero(short > tol * line + 8.0 * ulp * pieces)[0]
    for e in bad[:20]:
        add(
            "unserved",
            f"demand[{dem.rows[e]}, {dem.cols[e]}] = {dem.values[e]:.12g} but only {served[e]:.12g} served",
        )
    if bad.size > 20:
        add("unserved", f"... and {bad.size - 20} more unserved entries")
    return float(short.max())


def _check_eps(
    schedule: Schedule,
    own: Fabric,
    real: Fabric | None,
    tol: float,
    add: Callable[[str, str], None],
    flat: list[NDArray[np.int64]],
    served_by: list[NDArray[np.float64]],
    rates: list[NDArray[np.float64]],
) -> None:
    """Check the EPS part against its fabric's packet switch and credit its entries as served."""
    eps, n = schedule.eps, schedule.ports
    if not isinstance(eps, Demand):
        add("eps", f"schedule eps part must be an ocsched.Demand; got {type(eps).__name__}")
        return
    if eps.n != n:
        add("eps", f"schedule eps part has {eps.n} ports, expected {n}")
        return
    if not eps.nnz:
        return
    if not own.eps_rate > 0:
        add("eps", f"schedule sends {eps.nnz} entries on a packet switch but its fabric has none")
        return
    for f, label in ((own, ""),) + (() if real is None else ((real, "the given fabric's "),)):
        if f is real and (f.eps_rate < own.eps_rate or f.eps_latency > own.eps_latency):
            add(
                "eps",
                f"schedule assumes an EPS of rate {own.eps_rate:.12g} and latency {own.eps_latency:.12g}; "
                f"{label}has rate {f.eps_rate:.12g}, latency {f.eps_latency:.12g}",
            )
    # Independent of Schedule.eps_time: each port's EPS traffic out and in at most rho per unit
    # time after the latency, within the makespan (relative tolerance only).
    load = max(np.bincount(eps.rows, eps.values, n).max(), np.bincount(eps.cols, eps.values, n).max())
    makespan = schedule.makespan
    need = own.eps_latency + float(load) / own.eps_rate
    if need - makespan > tol * max(makespan, need) or not math.isfinite(need):
        add(
            "eps",
            f"the EPS part needs until {need:.12g} (line load {float(load):.12g} at rate "
            f"{own.eps_rate:.12g}), after the makespan {makespan:.12g}",
        )
    flat.append(eps.rows * n + eps.cols)
    served_by.append(np.asarray(eps.values, dtype=np.float64))
    rates.append(np.zeros(eps.nnz))  # amounts, not differences of times: no rounding to allow for
