"""One switch's configurations against the rules (:mod:`ocsched.timing.tolerance`), and lit times.

:func:`check_switch` and :func:`switch_violations` find every configuration that breaks a rule
of the switch's model, down windows or failed links; :func:`held_times` gives the time each
circuit is lit and credited (kept circuits included under the partial model).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ocsched.timing.models import reconfiguration
from ocsched.timing.pools import PortPools, kept_circuits
from ocsched.timing.tolerance import RTOL, FloatArray, IntArray, SwitchConfs, _ulps

__all__ = ["check_switch", "held_times", "switch_violations"]


class _Confs:
    """A switch's configurations as flat arrays: one entry per configuration, one per circuit."""

    def __init__(self, confs: SwitchConfs) -> None:
        self.start = np.array([c[0] for c in confs], dtype=np.float64)
        self.duration = np.array([c[1] for c in confs], dtype=np.float64)
        self.end = self.start + self.duration
        sizes = np.array([c[2].size for c in confs], dtype=np.int64)
        self.offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes)])
        empty = np.zeros(0, np.int64)
        self.ins = np.concatenate([empty, *(np.asarray(c[2], np.int64) for c in confs)])
        self.outs = np.concatenate([empty, *(np.asarray(c[3], np.int64) for c in confs)])
        self.owner = np.repeat(np.arange(len(confs), dtype=np.int64), sizes)


class _Windows:
    """A switch's down windows, indexed so each question about them costs O(log W)."""

    def __init__(self, windows: Sequence[tuple[float, float]]) -> None:
        w = sorted((float(a), float(z)) for a, z in windows)
        self.a = np.array([x[0] for x in w], dtype=np.float64)
        self.z = np.array([x[1] for x in w], dtype=np.float64)
        # top[t]: the latest end among windows 0..t (by start); which[t]: one window that has it.
        self.top = np.maximum.accumulate(self.z) if w else self.z
        self.which = np.maximum.accumulate(np.where(self.z == self.top, np.arange(len(w)), 0))
        self.ends = np.sort(self.z)
        # The union as disjoint intervals with the total length before each (only the last can be
        # infinite), for the measure of the down time in an interval.
        merged: list[list[float]] = []
        for a, z in w:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], z)
            else:
                merged.append([a, z])
        self.ua = np.array([m[0] for m in merged], dtype=np.float64)
        self.uz = np.array([m[1] for m in merged], dtype=np.float64)
        self.before = np.concatenate([np.zeros(1), np.cumsum(self.uz - self.ua)])[:-1]

    def meeting(self, lo: FloatArray, hi: FloatArray) -> IntArray:
        """Per pair, a window with ``a < hi`` and ``z > lo`` (-1 if none)."""
        idx = np.searchsorted(self.a, hi, side="left") - 1
        if not self.a.size:
            return np.full(lo.shape, -1, np.int64)
        safe = np.maximum(idx, 0)
        return np.where((idx >= 0) & (self.top[safe] > lo), self.which[safe], -1).astype(np.int64)

    def last_end(self, t: FloatArray) -> FloatArray:
        """Per time t, the latest end z of a window that started before t and ended by t, within
        tolerance (``a < t`` and ``z <= t + 8 ulps``; 0 if none).

        A window starting at t or later is not before t, however short it is.
        """
        if not self.ends.size:
            return np.zeros(t.shape)
        idx = np.searchsorted(self.ends, t, side="right") - 1  # z <= t: then a < z <= t
        done = np.where(idx >= 0, self.ends[np.maximum(idx, 0)], 0.0)
        # Windows with a < t that end within 8 ulps after t (the latest end of those that start before t).
        before = np.searchsorted(self.a, t, side="left") - 1
        top = np.where(before >= 0, self.top[np.maximum(before, 0)], 0.0)
        almost = np.where((top > t) & (top <= t + _ulps(t)), top, 0.0)
        return np.maximum(np.maximum(done, almost), 0.0)

    def down_time(self, lo: FloatArray, hi: FloatArray) -> FloatArray:
        """Per interval ``[lo, hi)`` (``hi >= lo``), how long the switch is down in it."""
        return self._covered(hi) - self._covered(lo)

    def _covered(self, t: FloatArray) -> FloatArray:
        if not self.ua.size:
            return np.zeros(t.shape)
        m = np.searchsorted(self.ua, t, side="right") - 1
        safe = np.maximum(m, 0)
        part = np.minimum(self.uz[safe], t) - self.ua[safe]
        return np.where(m >= 0, self.before[safe] + part, 0.0)


#: The index of no down windows, shared (nothing changes a _Windows once built).
_NO_WINDOWS = _Windows(())


def _fail_times(failed: dict[int, float] | None, ports: IntArray) -> FloatArray:
    """When each port's link fails (inf: never)."""
    if not failed:
        return np.full(ports.shape, np.inf)
    keys = np.array(sorted(failed), dtype=np.int64)
    times = np.array([failed[int(p)] for p in keys], dtype=np.float64)
    pos = np.minimum(np.searchsorted(keys, ports), keys.size - 1)
    return np.where(keys[pos] == ports, times[pos], np.inf)


def _earlier_max(group: IntArray, owner: IntArray, value: FloatArray) -> FloatArray:
    """Per element, the largest ``value`` of an element of its ``group`` with a smaller ``owner`` (0 if none).

    One sort: a running maximum over each group, read just before the element's own owner. Values
    are replaced by their ranks, offset by group, so one ``maximum.accumulate`` serves every group.
    """
    out = np.zeros(value.shape)
    if not value.size:
        return out
    order = np.lexsort((owner, group))
    g, o = group[order], owner[order]
    levels, rank = np.unique(value[order], return_inverse=True)
    new_group = np.concatenate([[True], g[1:] != g[:-1]])
    gid = np.cumsum(new_group) - 1
    running = np.maximum.accumulate(gid * levels.size + rank)
    new_run = new_group | np.concatenate([[True], o[1:] != o[:-1]])
    before = np.flatnonzero(new_run)[np.cumsum(new_run) - 1] - 1  # last element of an earlier owner
    safe = np.maximum(before, 0)
    has = (before >= 0) & (gid[safe] == gid)
    out[order] = np.where(has, levels[running[safe] - gid[safe] * levels.size], 0.0)
    return np.maximum(out, 0.0)


def _kept(x: _Confs, windows: _Windows, fail: FloatArray, model: str, both: bool) -> NDArray[np.bool_]:
    """Per circuit, whether it is kept lit from the previous configuration (the model's *Lit* rule)."""
    if not reconfiguration(model).keeps_circuits or x.start.size < 2 or not x.ins.size:
        return np.zeros(x.ins.size, dtype=bool)
    kept = kept_circuits(x.owner, x.ins, x.outs, both)
    k = x.owner
    # The gap [e_{k-1}, s_k) of each configuration k >= 1 (configuration 0 keeps nothing).
    prev_end = np.concatenate([[np.inf], x.end[:-1]])
    gap_up = windows.meeting(prev_end, x.start) < 0
    # Exact, as the credit is: a circuit kept past its link's failure would be credited for it.
    return kept & (k > 0) & gap_up[k] & (x.start[k] <= fail)


def _held(x: _Confs, windows: _Windows, fail: FloatArray, kept: NDArray[np.bool_]) -> FloatArray:
    """Per circuit, its credited time (the model's *Credit* rule), before the switch's rate."""
    k = x.owner
    held = np.maximum(x.duration, 0.0)[k]
    prev_end = np.concatenate([[0.0], x.end[:-1]])
    gap = np.maximum(x.start - prev_end, 0.0)
    held[kept] += gap[k[kept]]
    # Only a circuit lit while its switch is down or its link failed loses credit: the rest keep
    # their exact length (so a valid schedule's credit is exactly what its durations say).
    if not windows.a.size and not np.isfinite(fail).any():
        return held  # always up, no link fails: nothing is cut
    s, e = x.start[k], x.end[k]
    cut = (windows.meeting(x.start, x.end)[k] >= 0) | (e > fail)
    if cut.any():
        lo, hi = s[cut], np.maximum(np.minimum(e[cut], fail[cut]), s[cut])
        own = np.maximum(hi - lo - windows.down_time(lo, hi), 0.0)
        extra = np.where(kept[cut], gap[k[cut]], 0.0)
        held[cut] = own + extra
    return held


def check_switch(
    confs: SwitchConfs,
    delta: float,
    *,
    model: str = "all-stop",
    windows: Sequence[tuple[float, float]] = (),
    failed_ports: dict[int, float] | None = None,
    rtol: float = RTOL,
    ports_per_endpoint: int = 1,
    bidirectional: bool = False,
) -> tuple[list[tuple[int, str, str]], list[FloatArray]]:
    """Return the violations of one switch's configurations and what each circuit is credited with.

    The two halves of the model comment above, in one pass: ``(k, kind, message)`` for each way
    configuration k breaks the *Rules* (see :func:`switch_violations`), and per configuration the
    credited time of each circuit (see :func:`held_times`). Configurations with a non-finite start
    or end are left out (the validator reports them; they credit nothing). On a switch with
    ``ports_per_endpoint`` k > 1 or ``bidirectional`` circuits the partial model's ports are
    pools (:mod:`ocsched.timing.pools`): a new circuit needs, at each end, one of the endpoint's
    k ports that holds no kept circuit and has been dark for delta; a kept bidirectional circuit
    may be listed either way round.

    Notes
    -----
    O((K + C + W) log(K + C + W)) for K configurations of C circuits in all and W down windows:
    a few sorts and binary searches, no loop over earlier configurations or over the windows.
    """
    # Times near the float range may overflow to inf in a tolerance (then compared as inf).
    with np.errstate(over="ignore", invalid="ignore"):
        return _check_switch(
            confs, delta, model, windows, failed_ports, rtol, int(ports_per_endpoint), bool(bidirectional)
        )


def _check_switch(
    confs: SwitchConfs,
    delta: float,
    model: str,
    windows: Sequence[tuple[float, float]],
    failed_ports: dict[int, float] | None,
    rtol: float,
    cap: int,
    both: bool,
) -> tuple[list[tuple[int, str, str]], list[FloatArray]]:
    finite = [k for k, c in enumerate(confs) if np.isfinite(c[0]) and np.isfinite(c[0] + c[1])]
    x = _Confs([confs[k] for k in finite])
    wins = _Windows(windows) if len(windows) else _NO_WINDOWS
    fail_in, fail_out = _fail_times(failed_ports, x.ins), _fail_times(failed_ports, x.outs)
    fail = np.minimum(fail_in, fail_out)
    kept = _kept(x, wins, fail, model, both)
    held = _held(x, wins, fail, kept)
    per_conf: list[FloatArray] = [np.zeros(np.size(c[2])) for c in confs]  # non-finite: nothing
    for t, k in enumerate(finite):
        per_conf[k] = held[x.offsets[t] : x.offsets[t + 1]]
    found: list[tuple[int, int, str, str]] = []  # (configuration, rule order, kind, message)
    # Without down windows or failed links those rules have nothing to find (most fabrics).
    if wins.a.size:
        _check_down(x, wins, found)
    if failed_ports:
        _check_links(x, fail_in, fail_out, found)
    if not reconfiguration(model).keeps_circuits:
        _check_all_stop(x, wins, delta, rtol, found)
    elif cap == 1 and not both:
        _check_partial(x, wins, kept, delta, rtol, found)
    else:
        _check_pools(x, wins, kept, delta, rtol, cap, both, found)
    found.sort(key=lambda v: (v[0], v[1]))
    return [(finite[t], kind, msg) for t, _, kind, msg in found], per_conf


def _check_down(x: _Confs, wins: _Windows, found: list[tuple[int, int, str, str]]) -> None:
    w = wins.meeting(x.start + _ulps(x.start), x.end - _ulps(x.end))
    for t in np.flatnonzero(w >= 0).tolist():
        a, z = wins.a[w[t]], wins.z[w[t]]
        msg = f"runs {x.start[t]:.12g}..{x.end[t]:.12g}, over the down window [{a:.12g}, {z:.12g})"
        found.append((t, 0, "down", msg))


def _check_links(
    x: _Confs, fail_in: FloatArray, fail_out: FloatArray, found: list[tuple[int, int, str, str]]
) -> None:
    e = x.end[x.owner]
    big = np.iinfo(np.int64).max
    port = np.full(x.start.size, big, dtype=np.int64)
    for ports, fail in ((x.ins, fail_in), (x.outs, fail_out)):
        bad = np.isfinite(fail) & (e > fail + _ulps(e, fail))
        np.minimum.at(port, x.owner[bad], ports[bad])
    for t in np.flatnonzero(port != big).tolist():
        p = int(port[t])
        lo, hi = x.offsets[t], x.offsets[t + 1]
        f = min(
            float(fail_in[lo:hi][x.ins[lo:hi] == p].min(initial=np.inf)),
            float(fail_out[lo:hi][x.outs[lo:hi] == p].min(initial=np.inf)),
        )
        found.append((t, 1, "link", f"uses port {p}, whose link fails at {f:.12g}, until {x.end[t]:.12g}"))


def _too_early(start: FloatArray, base: FloatArray, delta: float, rtol: float) -> NDArray[np.bool_]:
    return start - base < delta - (rtol * delta + _ulps(start, base))


def _check_all_stop(
    x: _Confs, wins: _Windows, delta: float, rtol: float, found: list[tuple[int, int, str, str]]
) -> None:
    latest = np.maximum(np.concatenate([[0.0], np.maximum.accumulate(x.end)[:-1]]), 0.0)
    base = np.maximum(latest, wins.last_end(x.start))
    for t in np.flatnonzero(_too_early(x.start, base, delta, rtol)).tolist():
        found.append(
            (
                t,
                2,
                "timing",
                f"starts at {x.start[t]:.12g}, before the previous end {base[t]:.12g} + delta {delta:.12g}",
            )
        )


def _check_overlap(x: _Confs, found: list[tuple[int, int, str, str]]) -> None:
    """Partial: a configuration may not start before the previous one ends."""
    prev_end = np.concatenate([[-np.inf], x.end[:-1]])
    overlap = x.start < prev_end - _ulps(x.start, prev_end)
    for t in np.flatnonzero(overlap).tolist():
        found.append(
            (t, 2, "timing", f"starts at {x.start[t]:.12g}, before the previous end {prev_end[t]:.12g}")
        )


def _check_partial(
    x: _Confs,
    wins: _Windows,
    kept: NDArray[np.bool_],
    delta: float,
    rtol: float,
    found: list[tuple[int, int, str, str]],
) -> None:
    _check_overlap(x, found)
    ends = x.end[x.owner]
    base = np.maximum.reduce(
        [
            _earlier_max(x.ins, x.owner, ends),
            _earlier_max(x.outs, x.owner, ends),
            wins.last_end(x.start)[x.owner],
        ]
    )
    bad = ~kept & _too_early(x.start[x.owner], base, delta, rtol)
    first = np.flatnonzero(bad)
    first = (
        first[np.concatenate([[True], x.owner[first][1:] != x.owner[first][:-1]])] if first.size else first
    )
    for c in first.tolist():
        t = int(x.owner[c])
        msg = (
            f"lights new circuit {x.ins[c]}->{x.outs[c]} at {x.start[t]:.12g}, "
            f"before its ports' last use {base[c]:.12g} + delta {delta:.12g}"
        )
        found.append((t, 3, "timing", msg))


def _check_pools(
    x: _Confs,
    wins: _Windows,
    kept: NDArray[np.bool_],
    delta: float,
    rtol: float,
    cap: int,
    both: bool,
    found: list[tuple[int, int, str, str]],
) -> None:
    """The partial rule with an endpoint's ports as a pool (:class:`~ocsched.timing.pools.PortPools`).

    Configuration by configuration: O(C log C) for C circuits in all, plus a few array operations
    per configuration.
    """
    _check_overlap(x, found)
    pools = PortPools(x.ins, x.outs, kept, ports=cap, bidirectional=both)
    window_end = wins.last_end(x.start)
    for t in range(x.start.size):
        step = pools.step(x.offsets[t], x.offsets[t + 1])
        rows, new, _ = step
        base = np.maximum(pools.dark_since(step), window_end[t])
        bad = np.flatnonzero((new > 0) & _too_early(np.full(rows.size, x.start[t]), base, delta, rtol))
        if bad.size:
            r = int(bad[0])
            pool = int(pools.ids[rows[r]])
            end = f"endpoint {pool}" if both else f"{'output' if pool % 2 else 'input'} {pool // 2}"
            found.append(
                (
                    t,
                    3,
                    "timing",
                    f"lights {new[r]} new circuit(s) at {end} at {x.start[t]:.12g}, before enough "
                    f"of its {cap} port(s) free of kept circuits were dark for delta {delta:.12g} "
                    f"(the last one it needs went dark at {base[r]:.12g})",
                )
            )
        pools.light(step, float(x.end[t]))


def switch_violations(
    confs: SwitchConfs,
    delta: float,
    *,
    model: str = "all-stop",
    windows: Sequence[tuple[float, float]] = (),
    failed_ports: dict[int, float] | None = None,
    rtol: float = RTOL,
    ports_per_endpoint: int = 1,
    bidirectional: bool = False,
) -> list[tuple[int, str, str]]:
    """Return ``(k, kind, message)`` for each way configuration k of one switch breaks the rule.

    ``kind`` is ``"down"`` (meets a down window), ``"link"`` (uses a failed link) or ``"timing"``
    (starts too early), at most one of each per configuration, in that order. Configurations
    with a non-finite start or end are skipped (the validator reports them). Every comparison
    allows :func:`slack` of the delay and the times compared, nothing absolute.

    >>> c = lambda t, w: (t, w, np.array([0]), np.array([1]))
    >>> switch_violations([c(0.5, 1.0), c(1.7, 1.0)], 0.5)
    [(1, 'timing', 'starts at 1.7, before the previous end 1.5 + delta 0.5')]
    >>> switch_violations([c(0.5, 1.0), c(1.5, 1.0)], 0.5, model="partial")
    []
    >>> switch_violations([c(0.0, 0.0), c(5.5, 0.0)], 0.0, model="partial", failed_ports={0: 0.0})
    [(1, 'link', 'uses port 0, whose link fails at 0, until 5.5')]
    """
    return check_switch(
        confs,
        delta,
        model=model,
        windows=windows,
        failed_ports=failed_ports,
        rtol=rtol,
        ports_per_endpoint=ports_per_endpoint,
        bidirectional=bidirectional,
    )[0]


def held_times(
    confs: SwitchConfs,
    *,
    model: str = "all-stop",
    windows: Sequence[tuple[float, float]] = (),
    failed_ports: dict[int, float] | None = None,
    ports_per_endpoint: int = 1,
    bidirectional: bool = False,
) -> list[FloatArray]:
    """Return, per configuration, the time each of its circuits is credited with (before the rate).

    All-stop: the configuration's duration. Partial: plus the gap ``[end_{k-1}, start_k)`` for a
    circuit kept from configuration k-1 (in it, no down window in the gap, both links up at
    ``start_k``; on a multi-port or bidirectional switch, see :func:`check_switch`). Time lit
    while the switch is down or a link has failed is not credited. A configuration with a
    non-finite start or end credits nothing.

    >>> c = lambda t, w: (t, w, np.array([0]), np.array([1]))
    >>> [h.tolist() for h in held_times([c(0.5, 1.0), c(2.0, 1.0)], model="partial")]
    [[1.0], [1.5]]
    >>> [h.tolist() for h in held_times([c(0.0, 0.0), c(5.5, 0.0)], model="partial", failed_ports={0: 0.0})]
    [[0.0], [0.0]]
    """
    return check_switch(
        confs,
        0.0,
        model=model,
        windows=windows,
        failed_ports=failed_ports,
        ports_per_endpoint=ports_per_endpoint,
        bidirectional=bidirectional,
    )[1]
