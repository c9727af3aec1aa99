"""A schedule planned on a predicted demand, re-fitted to the actual demand at dispatch time."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ocsched._checks import check_number
from ocsched._jit import clock, compiled_only
from ocsched._types import FloatArray, IntArray
from ocsched._version import __version__
from ocsched.decompose import decompose
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.model import Configuration, Demand, Schedule
from ocsched.online._bounds import _bound_of, _residual_bound
from ocsched.online._inputs import _check_limit, _dense
from ocsched.online._kernels import lit_changes, rebalance, refit, scan, starts_of
from ocsched.online._lit import _changes, _keys, _keys_of, _remember
from ocsched.schedulers import as_fabric, fabric_features, schedule, scheduler_name

__all__ = ["DEFAULT_MAX_ERROR", "SUPPORTED", "Plan", "plan", "relative_l1"]

if TYPE_CHECKING:  # scipy.sparse is loaded only when a sparse demand is given
    import scipy.sparse as sp

    DemandLike = ArrayLike | sp.sparray | sp.spmatrix | Demand

#: Fabric features a plan handles (beyond identical all-stop switches that never fail).
SUPPORTED = frozenset({"heterogeneous"})
#: Above this relative L1 error between prediction and actual, :meth:`Plan.fit` schedules afresh.
DEFAULT_MAX_ERROR = 0.2


def relative_l1(predicted: ArrayLike, actual: ArrayLike) -> float:
    """Return ``||actual - predicted||_1 / ||predicted||_1`` (0 when both are zero, inf if only D̂ is).

    >>> relative_l1([[0, 2], [2, 0]], [[0, 3], [1, 0]])
    0.5
    """
    p = np.asarray(predicted, dtype=np.float64)
    a = np.asarray(actual, dtype=np.float64)
    total = float(np.abs(p).sum())
    diff = float(np.abs(a - p).sum())
    if total == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / total


class Plan:
    """Configurations computed on a predicted demand, ready to be re-fitted to the actual one.

    Build one with :func:`plan`. The attributes are arrays (read-only by convention).

    Attributes
    ----------
    n : int
        Ports.
    fabric : Fabric
        The fabric it was planned on.
    algorithm : str
        The scheduler that built the planned schedule.
    predicted : ndarray, shape (n, n)
        The prediction it was planned on.
    schedule : Schedule
        The planned schedule (on ``predicted``).
    perms : ndarray of int64, shape (m, n)
        Each planned configuration's permutation (``-1``: idle port).
    switch : ndarray of int64, shape (m,)
        The switch each configuration is on.
    group : ndarray of int64, shape (m,)
        Configurations with the same permutation (pieces of one) share a group.
    work : ndarray, shape (m,)
        Each configuration's planned work (duration times its switch's rate).
    max_error : float
        The relative L1 error above which :meth:`fit` schedules the actual demand afresh.
    recourse_weight : float
        Makespan (in the demand's unit) a re-placement must gain per circuit it moves.
    """

    def __init__(
        self,
        predicted: FloatArray,
        sched: Schedule,
        fabric: Fabric,
        algorithm: str,
        *,
        max_error: float,
        recourse_weight: float,
    ) -> None:
        self.n = predicted.shape[0]
        self.fabric = fabric
        self.algorithm = algorithm
        self.predicted = predicted
        self.schedule = sched
        self.max_error = max_error
        self.recourse_weight = recourse_weight
        self.deltas = np.array(fabric.deltas, dtype=np.float64)
        self.rates = np.array(fabric.rates, dtype=np.float64)
        n, s = self.n, fabric.size
        perms: list[IntArray] = []
        switch: list[int] = []
        work: list[float] = []
        starts: list[float] = []
        for b, confs in enumerate(sched.switches):
            for c in confs:
                perms.append(np.asarray(c.perm, dtype=np.int64))
                switch.append(b)
                work.append(c.duration * float(self.rates[b]))
                starts.append(c.start)
        m = len(perms)
        self.perms = np.array(perms, dtype=np.int64).reshape(m, n)
        # Time order of the planned schedule, per switch and overall (ties by switch).
        order = np.lexsort((np.array(switch, dtype=np.int64), np.array(starts)))
        self.perms = self.perms[order]
        self.switch = np.array(switch, dtype=np.int64)[order]
        self.work = np.array(work, dtype=np.float64)[order]
        keys: dict[bytes, int] = {}
        group = np.empty(m, dtype=np.int64)
        for k in range(m):
            group[k] = keys.setdefault(self.perms[k].tobytes(), len(keys))
        self.group = group
        g = len(keys)
        gwork = np.bincount(group, weights=self.work, minlength=g).astype(np.float64)
        first = np.full(g, -1, dtype=np.int64)
        for k in range(m - 1, -1, -1):
            first[group[k]] = k
        # Groups re-fit largest first: the biggest configurations absorb the changes.
        self._gorder = np.lexsort((np.arange(g), -gwork)).astype(np.int64)
        self._gwork = gwork
        self._share = np.where(
            gwork[group] > 0, self.work / np.where(gwork[group] > 0, gwork[group], 1.0), 0.0
        )
        ptr = np.zeros(g + 1, dtype=np.int64)
        idx: list[IntArray] = []
        for q in range(g):
            p = self.perms[first[q]] if g else np.zeros(0, dtype=np.int64)
            (i,) = np.nonzero(p >= 0)
            idx.append(i * n + p[i])
            ptr[q + 1] = ptr[q] + i.size
        self._ptr = ptr
        self._idx = np.concatenate(idx) if idx else np.zeros(0, dtype=np.int64)
        cover = np.zeros(n * n)
        np.add.at(cover, self._idx, np.repeat(gwork, np.diff(ptr)))
        self._cover = cover
        self._covered = (cover > 0).reshape(n, n)
        self._circuits = np.diff(ptr)[group].astype(np.float64)
        self._s = s
        self._passes = 4 * m + 4 * s
        self._keys = _keys(sched.switches, n, s)
        # Scratch marks for the recourse count (see lit_changes): a plan serves one fit at a time.
        self._seen = np.zeros(s * n * n, dtype=np.int32)
        self._held = np.zeros(s * n * n, dtype=np.int32)
        self._tick = 0
        self._makespan = sched.makespan
        self._pflat = predicted.ravel().copy()
        self.perms.flags.writeable = False  # the fitted configurations share its rows

    @property
    def makespan(self) -> float:
        """The planned schedule's makespan (on the prediction)."""
        return self._makespan

    def __repr__(self) -> str:
        return (
            f"Plan(n={self.n}, switches={self._s}, configurations={self.work.size}, "
            f"algorithm={self.algorithm!r}, makespan={self.makespan:.6g})"
        )

    def fit(
        self,
        actual: DemandLike,
        *,
        previous: Schedule | None = None,
        max_error: float | None = None,
    ) -> Schedule:
        """Return a valid schedule of ``actual`` from the plan's configurations.

        Parameters
        ----------
        actual : array_like, sparse matrix or Demand
            The true n x n demand (a float64 ndarray takes the fast path).
        previous : Schedule, optional
            The schedule that ran before on the same fabric: each switch starts with the
            configuration that shares the most circuits with its last one there, and
            ``meta["online"]["recourse"]`` counts against it (otherwise against the planned
            schedule).
        max_error : float, optional
            Overrides the plan's ``max_error`` for this call.

        Returns
        -------
        Schedule
            ``meta["online"]`` says how it was built: ``mode`` is ``"fit"`` (the plan's
            configurations with re-fitted durations, re-placed), ``"repair"`` (the same, plus
            configurations for entries the plan does not cover), ``"plan+residual"`` (the
            planned schedule, then the residual scheduled after it: kept when shorter) or
            ``"fallback"`` (``error`` above ``max_error``: ``algorithm`` on ``actual``, unless
            the plan-then-residual schedule is shorter);
            ``error`` is the measured relative L1 error, ``recourse`` the circuits added plus
            removed (:func:`ocsched.online.recourse.recourse`; also ``added`` and ``removed``).
            ``lower_bound`` is the line bound ``min delta + max line sum / total rate``.

        Raises
        ------
        InvalidInputError
            For a malformed ``actual``, another size than the prediction, or a bad ``max_error``.

        Notes
        -----
        Each group (a permutation and its pieces on several switches) gets, largest first, the
        largest need its circuits leave: the actual entry minus the work already given to the
        groups before and the planned work of those after (so an entry's last group covers it).
        The work is shared among the pieces as planned. If ``actual <= predicted`` entrywise no
        duration grows. The latest switch then sheds work: to a sibling piece on another switch
        (no circuit changes), or by moving, swapping or splitting pieces onto the least-loaded
        switch when that gains more than ``recourse_weight`` per circuit changed. Entries no
        planned configuration covers are decomposed (Spectra) and placed largest first on the
        least-loaded switch, before the re-balance.

        With ``recourse_weight`` 0 the result is never later than the planned schedule followed
        by the residual ``max(actual - planned service, 0)`` scheduled with ``algorithm``: when
        the fit ends after the plan's makespan plus a lower bound of the residual's schedule
        (its line and port bounds), that schedule is computed and the earlier one kept (with a
        weight: the better by makespan plus the weight per circuit changed).

        O(n^2 + m n) for the scan, the re-fit and the recourse count, O(passes * m^2 / s) for
        the re-balance (m configurations). One plan serves one ``fit`` at a time (it keeps
        scratch marks); use one plan per thread.

        The kernels run compiled whatever the size (:func:`ocsched._jit.compiled_only`: a fit
        is the latency path, and at n = 64 the interpreted kernels take ten times as long);
        :func:`plan` prepares them, so no fit waits for a compile. The result is the same
        either way.
        """
        with compiled_only():
            return self._fit(actual, previous=previous, max_error=max_error)

    def _fit(self, actual: DemandLike, *, previous: Schedule | None, max_error: float | None) -> Schedule:
        t0 = clock()
        limit = self.max_error if max_error is None else _check_limit(max_error)
        n = self.n
        fast = isinstance(actual, np.ndarray) and actual.dtype == np.float64 and actual.shape == (n, n)
        a = np.ascontiguousarray(actual) if fast else _dense(actual, n, "actual")
        flat = a.ravel()
        diff, total, uncovered, lines = scan(flat, self._pflat, self._cover, n)
        if math.isnan(diff):  # the scan met a negative or non-finite entry: say which, in one line
            a = _dense(a, None, "actual")
        if fast and a.diagonal().any():
            a = a.copy()
            np.fill_diagonal(a, 0.0)
            flat = a.ravel()
        err = (0.0 if diff == 0.0 else math.inf) if total == 0.0 else diff / total
        lb = _bound_of(lines, self.deltas, self.rates)
        if err > limit:
            out = schedule(a, fabric=self.fabric, algorithm=self.algorithm)
            if out.makespan > self.makespan + _residual_bound(lines, self.deltas, self.rates) * (1 + 1e-12):
                # A fresh heuristic schedule may still lose to the plan with the residual after it.
                after = self._plan_then(np.maximum(flat - self._cover, 0.0).reshape(self.n, self.n))
                if max((c[-1].end for c in after if c), default=0.0) < out.makespan:
                    return self._finish(after, lb, "plan+residual", err, previous, t0, 0)
            return self._finish(out.switches, lb, "fallback", err, previous, t0, out.splits)
        gneed = refit(flat, self._cover, self._gorder, self._ptr, self._idx, self._gwork)
        work = gneed[self.group] * self._share
        cost = self.recourse_weight * 2.0 * self._circuits
        perms, switch, group, mode = self.perms, self.switch, self.group, "fit"
        if uncovered:
            mode = "repair"
            rest = np.where((a > 0) & ~self._covered, a, 0.0)
            perms, switch, group, work, cost = self._repair(rest, work, cost)
        work, switch, src = rebalance(
            work, switch, group, cost, self.deltas, self.rates, self._s, self._passes, 2 * self._s
        )
        perms = perms[src]
        confs, end = self._lay_out(perms, switch, work, previous)
        before = self._before(previous)
        keys, added, removed = lit_changes(
            before, perms, switch, work, n, self._seen, self._held, self._next_tick()
        )
        if end > self.makespan + _residual_bound(lines, self.deltas, self.rates) * (1 + 1e-12):
            after = self._plan_then(np.maximum(flat - self._cover, 0.0).reshape(self.n, self.n))
            other = max((c[-1].end for c in after if c), default=0.0)
            w = self.recourse_weight
            if w > 0.0:  # the trade: makespan plus the weight per circuit changed
                end += w * (added + removed)
                other += w * sum(_changes(before, _keys(after, n, self._s)))
            if other < end:
                return self._finish(after, lb, "plan+residual", err, previous, t0, 0)
        return self._finish(confs, lb, mode, err, previous, t0, 0, (keys, added, removed))

    def _before(self, previous: Schedule | None) -> IntArray:
        """The lit circuits (keys) to count recourse against."""
        return self._keys if previous is None else _keys_of(previous, self.n, self._s)

    def _next_tick(self) -> int:
        if self._tick >= 2**31 - 2:  # the marks would wrap: start them over
            self._seen[:] = 0
            self._held[:] = 0
            self._tick = 0
        self._tick += 1
        return self._tick

    def _repair(
        self, rest: FloatArray, work: FloatArray, cost: FloatArray
    ) -> tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray]:
        """Add Spectra's decomposition of the uncovered entries, largest first on the least-loaded switch."""
        mean = float(np.average(self.deltas, weights=self.rates))
        dec = decompose(rest, method="spectra", delta=mean)
        on = work > 0
        load = np.bincount(
            self.switch[on],
            weights=self.deltas[self.switch[on]] + work[on] / self.rates[self.switch[on]],
            minlength=self._s,
        )
        keep = np.nonzero(dec.weights > 0)[0]
        keep = keep[np.argsort(-dec.weights[keep], kind="stable")]
        extra = np.zeros(keep.size, dtype=np.int64)
        for q, k in enumerate(keep):
            w = float(dec.weights[k])
            b = int(np.argmin(load + self.deltas + w / self.rates))
            load[b] += self.deltas[b] + w / self.rates[b]
            extra[q] = b
        new = dec.perms[keep].astype(np.int64)
        circuits = (new >= 0).sum(axis=1).astype(np.float64)
        groups = int(self.group.max(initial=-1)) + 1 + np.arange(keep.size, dtype=np.int64)
        return (
            np.concatenate([self.perms, new]),
            np.concatenate([self.switch, extra]),
            np.concatenate([self.group, groups]),
            np.concatenate([work, dec.weights[keep].astype(np.float64)]),
            np.concatenate([cost, self.recourse_weight * 2.0 * circuits]),
        )

    def _lay_out(
        self, perms: IntArray, switch: IntArray, work: FloatArray, previous: Schedule | None
    ) -> tuple[tuple[tuple[Configuration, ...], ...], float]:
        """Each switch's pieces in plan order, back to back after its delay (empty ones dropped); the end."""
        (ks,) = np.nonzero(work > 0)
        ks = ks[np.argsort(switch[ks], kind="stable")]
        sw = switch[ks]
        bounds = np.searchsorted(sw, np.arange(self._s + 1))
        if previous is not None:
            for b in range(min(self._s, len(previous.switches))):
                lo, hi = bounds[b], bounds[b + 1]
                if hi - lo > 1 and previous.switches[b]:
                    last = np.asarray(previous.switches[b][-1].perm)
                    if last.size == self.n:
                        # Start with the configuration sharing most circuits with the one held.
                        r = int(np.argmax(((perms[ks[lo:hi]] == last) & (last >= 0)).sum(axis=1)))
                        ks[lo:hi] = np.roll(ks[lo:hi], -r)
        dur = work[ks] / self.rates[sw]
        first = starts_of(sw, dur, self.deltas)
        ends = first + dur
        conf = Configuration
        flat = [conf(t, d, p) for t, d, p in zip(first.tolist(), dur.tolist(), list(perms[ks]), strict=True)]
        cuts = bounds.tolist()
        out = tuple(tuple(flat[cuts[b] : cuts[b + 1]]) for b in range(self._s))
        return out, float(ends.max(initial=0.0))

    def _plan_then(self, resid: FloatArray) -> tuple[tuple[Configuration, ...], ...]:
        """The planned schedule as it is, then ``resid`` scheduled by ``algorithm`` after its makespan."""
        planned = self.schedule.switches
        if not (resid > 0).any():
            return planned
        more = schedule(resid, fabric=self.fabric, algorithm=self.algorithm)
        t = self.makespan
        return tuple(
            tuple(planned[b])
            + tuple(Configuration(t + c.start, c.duration, c.perm) for c in more.switches[b])
            for b in range(self._s)
        )

    def _finish(
        self,
        switches: tuple[tuple[Configuration, ...], ...],
        lb: float,
        mode: str,
        err: float,
        previous: Schedule | None,
        t0: float,
        splits: int,
        counted: tuple[IntArray, int, int] | None = None,
    ) -> Schedule:
        fab = self.fabric
        if counted is None:
            after = _keys(switches, self.n, self._s)
            added, removed = _changes(self._before(previous), after)
        else:
            after, added, removed = counted
        meta: dict[str, Any] = {
            "ocsched_version": __version__,
            "switches": self._s,
            "online": {
                "mode": mode,
                "error": float(err),
                "max_error": self.max_error,
                "recourse": added + removed,
                "added": added,
                "removed": removed,
            },
            "runtime_s": clock() - t0,
        }
        out = Schedule(
            ports=self.n,
            delta=float(self.deltas.max()),
            switches=switches,
            algorithm=f"online/{self.algorithm}",
            lower_bound=lb,
            splits=splits,
            meta=meta,
            fabric=None if fab.is_uniform else fab,
        )
        _remember(out, after, self._s)
        return out


def plan(
    predicted: DemandLike,
    *,
    switches: int | None = None,
    delta: float | None = None,
    fabric: Fabric | None = None,
    algorithm: str = "spectra-pack",
    max_error: float = DEFAULT_MAX_ERROR,
    recourse: float = 0.0,
) -> Plan:
    """Schedule a predicted demand and keep what :meth:`Plan.fit` needs to re-fit it in microseconds.

    Parameters
    ----------
    predicted : array_like, sparse matrix or Demand
        The predicted n x n demand (time at one link's line rate).
    switches, delta : int, float
        Identical all-stop switches (the shortcut for ``Fabric.uniform(switches, delta)``).
    fabric : Fabric, optional
        Instead: all-stop switches with their own delays and rates (no failures, no partial model).
    algorithm : str
        The scheduler of the plan and of the fallback (a key of :data:`ocsched.schedulers.SCHEDULERS`).
    max_error : float
        Relative L1 error (``||actual - predicted||_1 / ||predicted||_1``) above which
        :meth:`Plan.fit` schedules the actual demand afresh (``math.inf``: never).
    recourse : float
        Makespan a re-placement in :meth:`Plan.fit` must gain per circuit it moves to another
        switch (0: any gain; large: keep every configuration on its planned switch).

    Returns
    -------
    Plan

    Raises
    ------
    InvalidInputError
        For a malformed demand or fabric, an unknown algorithm, a negative ``max_error`` or
        ``recourse``, or a fabric with down windows, failed links or the partial model (the
        re-fit moves configurations in time, which those rules forbid).

    Examples
    --------
    >>> import numpy as np
    >>> d = np.array([[0, 3, 1], [1, 0, 3], [3, 1, 0]], dtype=float)
    >>> p = plan(d, switches=2, delta=0.5)
    >>> s = p.fit(d * 1.05)
    >>> s.meta["online"]["mode"], round(s.meta["online"]["error"], 6)
    ('fit', 0.05)
    >>> import ocsched
    >>> ocsched.validate(s, d * 1.05).ok
    True
    """
    fab = as_fabric(switches, delta, fabric)
    algorithm = scheduler_name(algorithm)
    err = _check_limit(max_error)
    weight = check_number(recourse, "recourse", low=0.0)
    unsupported = fabric_features(fab) - SUPPORTED
    if unsupported:
        raise InvalidInputError(
            f"ocsched.online.plan does not support {', '.join(sorted(unsupported))} fabrics "
            "(it supports identical or heterogeneous all-stop switches without failures); "
            "use ocsched.schedule"
        )
    d = np.array(_dense(predicted, None, "predicted"), dtype=np.float64)  # the plan keeps its own copy
    fab.check_ports(d.shape[0])
    sched = schedule(d, fabric=fab, algorithm=algorithm)
    out = Plan(d, sched, fab, algorithm, max_error=err, recourse_weight=weight)
    out.fit(d)  # compiles (or loads) the fit's kernels now, not on the first real fit
    return out
