"""The reconfiguration rule, written once: every configuration is preceded by ``delta`` of dark time.

A switch that holds k configurations of total length W is busy ``W + k * delta``
(:func:`busy`); laid out back to back, configuration k starts ``delta`` after configuration k-1
ends, the first at ``delta`` (:func:`lay_out`); a schedule respects the rule when no
configuration starts before :func:`earliest_start` (checked by :func:`timing_violations`).
Placement, the timeline, the validator, the lower bounds, the exact MILPs and the Gantt chart all
call these functions, so the rule can change (per-switch delays, partial reconfiguration) here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = ["busy", "dark_interval", "earliest_start", "lay_out", "timing_violations"]

Num = TypeVar("Num", float, NDArray[np.float64])


def busy(total: Num, configurations: Num | int | NDArray[np.int64], delta: float) -> Num:
    """Return how long a switch is busy holding ``configurations`` configurations of total length ``total``.

    Works elementwise on arrays (one entry per switch or per line).

    >>> busy(3.0, 2, 0.5)
    4.0
    """
    return total + delta * configurations  # type: ignore[return-value]


def earliest_start(previous_end: float | None, delta: float) -> float:
    """Return the earliest start of a configuration after one ending at ``previous_end`` (None: first).

    >>> earliest_start(None, 0.5), earliest_start(2.0, 0.5)
    (0.5, 2.5)
    """
    return (0.0 if previous_end is None else previous_end) + delta


def lay_out(durations: Iterable[float], delta: float, *, t0: float | None = None) -> list[float]:
    """Return the start of each configuration when a switch runs them back to back, in order.

    With ``t0``, the switch is dark from ``t0`` on (the first configuration starts at ``t0 + delta``).

    >>> lay_out([2.0, 1.0], 0.5), lay_out([2.0, 1.0], 0.5, t0=1.0)
    ([0.5, 3.0], [1.5, 4.0])
    """
    starts = []
    end: float | None = t0
    for w in durations:
        start = earliest_start(end, delta)
        starts.append(start)
        end = start + w
    return starts


def dark_interval(start: float, delta: float) -> tuple[float, float]:
    """Return the dark interval ``(start - delta, start)`` that precedes a configuration.

    >>> dark_interval(3.0, 0.5)
    (2.5, 3.0)
    """
    return (start - delta, start)


def timing_violations(
    times: Sequence[tuple[float, float]], delta: float, *, slack: float = 0.0
) -> list[tuple[int, float, float]]:
    """Return ``(k, start, previous_end)`` for each configuration of a switch that starts too early.

    ``times`` lists ``(start, duration)`` in order; a configuration is early when it starts more
    than ``slack`` before :func:`earliest_start` after ``previous_end``, the latest end so far (0
    before the first; overlaps count). Non-finite times are skipped (the validator reports them).

    >>> timing_violations([(0.5, 1.0), (1.7, 1.0)], 0.5)
    [(1, 1.7, 1.5)]
    """
    out = []
    end = 0.0
    for k, (start, duration) in enumerate(times):
        if not (np.isfinite(start) and np.isfinite(duration)):
            continue
        if start < earliest_start(end, delta) - slack:
            out.append((k, start, end))
        end = max(end, start + duration)
    return out


# ---------------------------------------------------------------------------------------------------
# Fabrics: per-switch delay and rate, down windows, failed links, the partial model.
#
# A switch's configurations are ``(start, duration, inputs, outputs)`` in time order. The rule:
#
# all-stop   configuration k starts at least ``delta`` after the latest end of configurations
#            0..k-1 of its switch and after the end of every down window that ended before it
#            (0 at first): the whole switch is dark for delta before every configuration.
# partial    consecutive configurations do not overlap (start_k >= end_{k-1}); a circuit (i, j) of
#            configuration k that is also in configuration k-1 and no down window lies between
#            them is *kept*: it stays lit through the gap ``[end_{k-1}, start_k)`` and carries
#            traffic then too. Every other circuit of k is *new*: its input i and output j must
#            have been dark on that switch for delta before start_k, i.e. every earlier
#            configuration using input i or output j (in any circuit) ends by ``start_k - delta``,
#            and so does every down window (the switch comes back dark), and start_k >= delta.
# both       no configuration overlaps a down window of its switch; a configuration using port p
#            on a switch whose link to p fails at time f ends by f. A circuit of a switch of rate
#            c held for t serves ``c * t`` of demand.
#
# Every all-stop-valid schedule is partial-valid and serves at least as much there.
# ---------------------------------------------------------------------------------------------------

#: Relative tolerance of the fabric checks (times compared against delta and the durations involved).
RTOL = 1e-9

SwitchConfs = Sequence[tuple[float, float, NDArray[np.int64], NDArray[np.int64]]]


def slack(delta: float, *times: float, rtol: float = RTOL) -> float:
    """Return the tolerance for comparing times: ``rtol * delta`` plus a few ulps of the times.

    Scale-free: there is no absolute floor, so a delay far below the times (or times far below 1)
    is still enforced down to floating-point resolution.

    >>> slack(0.0, 1.0) == 8 * float(np.spacing(1.0))
    True
    """
    finite = [abs(t) for t in times if np.isfinite(t)]
    return rtol * delta + 8.0 * float(np.spacing(max(finite, default=0.0)))


def lay_out_windows(
    durations: Iterable[float],
    delta: float,
    windows: Sequence[tuple[float, float]] = (),
    *,
    t0: float = 0.0,
) -> list[list[tuple[float, float]]]:
    """Lay out configurations back to back (all-stop) from ``t0``, cutting each around down windows.

    Returns, per configuration, its ``(start, duration)`` segments: a configuration that would
    overlap a down window runs until the window starts (if a positive time remains after the
    delay) and resumes ``delta`` after the window ends. What a switch down for good cannot serve
    is missing from the segments (callers compare their total with the duration).

    >>> lay_out_windows([2.0, 1.0], 0.5, [(1.5, 2.0)])
    [[(0.5, 1.0), (2.5, 1.0)], [(4.0, 1.0)]]
    >>> lay_out_windows([2.0, 1.0], 0.5, [(1.5, float("inf"))])
    [[(0.5, 1.0)], []]
    """
    wins = sorted(windows)
    out: list[list[tuple[float, float]]] = []
    free = t0  # the switch is dark from here on
    for w in durations:
        segs: list[tuple[float, float]] = []
        left = float(w)
        while free < np.inf:
            start = free + delta
            nxt = next(((a, b) for a, b in wins if b > free), None)
            if nxt is not None and start >= nxt[0]:  # the delay itself runs into the window
                free = nxt[1]
                continue
            if nxt is None or start + left <= nxt[0]:
                segs.append((start, left))
                free = start + left
                break
            part = nxt[0] - start
            segs.append((start, part))
            left -= part
            free = nxt[1]
        out.append(segs)
    return out


def partial_starts(
    circuits: Sequence[tuple[NDArray[np.int64], NDArray[np.int64]]],
    durations: Sequence[float],
    delta: float,
    *,
    t0: float = 0.0,
) -> list[float]:
    """Return the earliest starts of configurations run in order under the partial model.

    Configuration k starts at the later of the previous end and, for each of its new circuits
    (not in configuration k-1), ``delta`` after the last end of a configuration using its input
    or output port (``t0 + delta`` for ports not used yet).

    >>> a = (np.array([0, 1]), np.array([1, 0]))
    >>> b = (np.array([0, 2]), np.array([1, 3]))   # keeps 0 -> 1, lights 2 -> 3
    >>> partial_starts([a, b], [1.0, 1.0], 0.5)
    [0.5, 1.5]
    """
    last_in: dict[int, float] = {}
    last_out: dict[int, float] = {}
    prev: set[tuple[int, int]] = set()
    end = t0
    starts: list[float] = []
    for (ins, outs), w in zip(circuits, durations, strict=True):
        start = end if starts else t0 + delta
        cur = set(zip(ins.tolist(), outs.tolist(), strict=True))
        for i, j in cur - prev:
            start = max(start, last_in.get(i, t0) + delta, last_out.get(j, t0) + delta)
        starts.append(start)
        end = start + float(w)
        for i, j in cur:
            last_in[i] = end
            last_out[j] = end
        prev = cur
    return starts


def _keys(ins: NDArray[np.int64], outs: NDArray[np.int64]) -> set[tuple[int, int]]:
    return set(zip(ins.tolist(), outs.tolist(), strict=True))


def switch_violations(
    confs: SwitchConfs,
    delta: float,
    *,
    model: str = "all-stop",
    windows: Sequence[tuple[float, float]] = (),
    failed_ports: dict[int, float] | None = None,
    rtol: float = RTOL,
) -> list[tuple[int, str, str]]:
    """Return ``(k, kind, message)`` for each way configuration k of one switch breaks the rule.

    ``kind`` is ``"timing"`` (starts too early), ``"down"`` (overlaps a down window) or
    ``"link"`` (uses a failed link). Configurations with a non-finite start or end are skipped
    (the validator reports them). Every comparison allows :func:`slack` of the delay and the
    times compared, nothing absolute.

    >>> c = lambda t, w: (t, w, np.array([0]), np.array([1]))
    >>> switch_violations([c(0.5, 1.0), c(1.7, 1.0)], 0.5)
    [(1, 'timing', 'starts at 1.7, before the previous end 1.5 + delta 0.5')]
    >>> switch_violations([c(0.5, 1.0), c(1.5, 1.0)], 0.5, model="partial")
    []
    """
    out: list[tuple[int, str, str]] = []
    failed = failed_ports or {}
    wins = sorted(windows)
    last_in: dict[int, float] = {}
    last_out: dict[int, float] = {}
    prev: set[tuple[int, int]] = set()
    prev_end: float | None = None
    latest = 0.0
    for k, (start, duration, ins, outs) in enumerate(confs):
        end = start + duration
        if not (np.isfinite(start) and np.isfinite(duration) and np.isfinite(end)):
            continue
        # down windows: overlap, and the latest window end before this start
        reset = 0.0
        for a, b in wins:
            if end > a + slack(0.0, a, end, rtol=rtol) and start < b - slack(0.0, b, start, rtol=rtol):
                out.append(
                    (k, "down", f"runs {start:.12g}..{end:.12g}, over the down window [{a:.12g}, {b:.12g})")
                )
            elif b <= start + slack(0.0, b, start, rtol=rtol):
                reset = max(reset, b)
        for p in sorted(set(ins.tolist()) | set(outs.tolist())):
            f = failed.get(int(p))
            if f is not None and end > f + slack(0.0, f, end, rtol=rtol) and duration > 0:
                out.append((k, "link", f"uses port {p}, whose link fails at {f:.12g}, until {end:.12g}"))
                break
        cur = _keys(ins, outs)
        if model == "all-stop":
            base = max(latest, reset)
            if start - base < delta - slack(delta, start, base, rtol=rtol):
                out.append(
                    (
                        k,
                        "timing",
                        f"starts at {start:.12g}, before the previous end {base:.12g} + delta {delta:.12g}",
                    )
                )
        else:
            if prev_end is not None and start < prev_end - slack(0.0, start, prev_end, rtol=rtol):
                out.append((k, "timing", f"starts at {start:.12g}, before the previous end {prev_end:.12g}"))
            kept = prev if (prev_end is not None and reset <= prev_end) else set()
            for i, j in sorted(cur - kept):
                base = max(last_in.get(i, 0.0), last_out.get(j, 0.0), reset)
                if start - base < delta - slack(delta, start, base, rtol=rtol):
                    out.append(
                        (
                            k,
                            "timing",
                            f"lights new circuit {i}->{j} at {start:.12g}, before its ports' last use "
                            f"{base:.12g} + delta {delta:.12g}",
                        )
                    )
                    break
        for i, j in cur:
            last_in[i] = max(last_in.get(i, 0.0), end)
            last_out[j] = max(last_out.get(j, 0.0), end)
        latest = max(latest, end)
        prev, prev_end = cur, end
    return out


def held_times(
    confs: SwitchConfs,
    *,
    model: str = "all-stop",
    windows: Sequence[tuple[float, float]] = (),
) -> list[NDArray[np.float64]]:
    """Return, per configuration, how long each of its circuits is lit (before the switch's rate).

    All-stop: the configuration's duration. Partial: plus the gap ``[end_{k-1}, start_k)`` for a
    circuit kept from configuration k-1 when no down window lies between them.

    >>> c = lambda t, w: (t, w, np.array([0]), np.array([1]))
    >>> [h.tolist() for h in held_times([c(0.5, 1.0), c(2.0, 1.0)], model="partial")]
    [[1.0], [1.5]]
    """
    out = []
    prev: set[tuple[int, int]] = set()
    prev_end: float | None = None
    for start, duration, ins, outs in confs:
        held = np.full(ins.size, max(float(duration), 0.0))
        if (
            model == "partial"
            and prev_end is not None
            and start >= prev_end
            and not any(a < start and b > prev_end for a, b in windows)
        ):
            gap = start - prev_end
            kept = np.array([(i, j) in prev for i, j in zip(ins.tolist(), outs.tolist(), strict=True)], bool)
            held[kept] += gap
        out.append(held)
        # Only the partial model looks back at the kept circuits: all-stop skips building the set.
        prev, prev_end = (_keys(ins, outs) if model == "partial" else prev), start + duration
    return out
