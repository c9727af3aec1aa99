"""The iteration model's rule on one switch: its fabric's rule (:mod:`ocsched.timing`) with persistence.

A configuration identical to the one its switch holds *persists*: the switch does not
reconfigure, so it pays no delay (all-stop) and needs only to start after its predecessor ends.
It does not persist across a down window (the switch comes back dark) and, under the partial
model, the fabric's own rule already keeps every circuit of an identical configuration.
Everything else (delays per switch, down windows, failed links, the partial model) is the
single-matrix rule, checked by :func:`ocsched.timing.switch_violations` itself, so the iteration
checks follow any change there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ocsched.iteration import persists
from ocsched.model import Configuration
from ocsched.timing import RTOL, reconfiguration, slack, switch_violations

__all__ = ["crosses", "iteration_switch_violations", "persisting"]


def crosses(windows: Sequence[tuple[float, float]], after: float, before: float) -> bool:
    """True if a down window lies (partly) in ``(after, before)``: a switch cannot stay lit across it."""
    return any(a < before and b > after for a, b in windows)


def persisting(
    previous: Configuration | None, conf: Configuration, windows: Sequence[tuple[float, float]] = ()
) -> bool:
    """True if ``conf`` persists from ``previous``: identical, no down window between them.

    >>> a = Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2)
    >>> b = Configuration.from_circuits(2.0, 1.0, [(0, 1)], ports=2)
    >>> persisting(a, b), persisting(a, b, [(1.6, 1.8)])
    (True, False)
    """
    return (
        previous is not None and persists(previous, conf) and not crosses(windows, previous.end, conf.start)
    )


Timed = tuple[float, float, NDArray[np.int64], NDArray[np.int64]]


def _as_tuple(c: Configuration) -> Timed:
    ins, outs = c.circuit_arrays()
    return (c.start, c.duration, ins, outs)


def iteration_switch_violations(
    confs: Sequence[Configuration],
    delta: float,
    *,
    model: str = "all-stop",
    windows: Sequence[tuple[float, float]] = (),
    failed_ports: dict[int, float] | None = None,
    rtol: float = RTOL,
    ports_per_endpoint: int = 1,
    bidirectional: bool = False,
) -> list[tuple[int, str, str]]:
    """Return ``(k, kind, message)`` for each way configuration k of one switch breaks the iteration rule.

    The fabric's rule (:func:`ocsched.timing.switch_violations`, kinds ``"timing"``, ``"down"``,
    ``"link"``) with persistence: under all-stop, a configuration that persists
    (:func:`persisting`) needs only to start after its predecessor ends. Configurations with a
    non-finite start or end are skipped (the validator reports them); every tolerance is
    relative (:func:`ocsched.timing.slack`).

    Notes
    -----
    All-stop with persistence is checked as two single-matrix checks: the configurations as they
    are with no delay (down windows, failed links, overlaps), and each run of persisting
    configurations merged into one, with the delay (a run pays one delay, before its first
    configuration, after the previous run and any down window that ended before it).

    Examples
    --------
    >>> c = lambda t, w, j: Configuration.from_circuits(t, w, [(0, j)], ports=2)
    >>> iteration_switch_violations([c(0.5, 1.0, 1), c(1.5, 1.0, 1)], 0.5)  # persists
    []
    >>> iteration_switch_violations([c(0.5, 1.0, 1), c(1.5, 1.0, 0)], 0.5)  # doctest: +ELLIPSIS
    [(1, 'timing', 'starts at 1.5, before the previous end 1.5 + delta 0.5')]
    """
    index = [k for k, c in enumerate(confs) if np.isfinite(c.start) and np.isfinite(c.end)]
    good = [confs[k] for k in index]
    failed = failed_ports or {}
    keeps = reconfiguration(model).keeps_circuits
    if not keeps and not windows and not failed:
        return [(index[k], kind, msg) for k, kind, msg in _all_stop(good, delta, rtol)]
    if keeps:  # partial: an identical configuration keeps every circuit already
        found = switch_violations(
            [_as_tuple(c) for c in good],
            delta,
            model=model,
            windows=windows,
            failed_ports=failed,
            rtol=rtol,
            ports_per_endpoint=ports_per_endpoint,
            bidirectional=bidirectional,
        )
        return [(index[k], kind, msg) for k, kind, msg in found]
    out: list[tuple[int, str, str]] = []
    heads: list[int] = []  # the first configuration of each run of persisting ones
    merged: list[Timed] = []
    for k, c in enumerate(good):
        if k and persisting(good[k - 1], c, windows):
            start, _, ins, outs = merged[-1]
            merged[-1] = (start, max(c.end, start + merged[-1][1]) - start, ins, outs)
        else:
            heads.append(k)
            merged.append(_as_tuple(c))
    flat = switch_violations(
        [_as_tuple(c) for c in good], 0.0, model="all-stop", windows=windows, failed_ports=failed, rtol=rtol
    )
    late = {
        heads[k]: msg
        for k, kind, msg in switch_violations(merged, delta, model="all-stop", windows=windows, rtol=rtol)
        if kind == "timing"
    }
    for k, kind, msg in flat:
        if kind != "timing" or k not in late:  # a run's first configuration: its delay says more
            out.append((index[k], kind, msg))
    out.extend((index[k], "timing", msg) for k, msg in late.items())
    out.sort(key=lambda v: v[0])
    return out


def _all_stop(confs: Sequence[Configuration], delta: float, rtol: float) -> list[tuple[int, str, str]]:
    """The same check without down windows or failed links, in one pass and without circuits.

    Each configuration starts ``delta`` after the latest end so far (0 before the first), or
    just after it when it persists: the two checks of the general case, configuration by
    configuration, with the same tolerance (:func:`ocsched.timing.slack`).
    """
    out = []
    latest = 0.0
    for k, c in enumerate(confs):
        d = 0.0 if k and persists(confs[k - 1], c) else delta
        if c.start - latest < d - slack(d, c.start, latest, rtol=rtol):
            plus = f" + delta {d:.12g}" if d else ""
            out.append(
                (k, "timing", f"starts at {c.start:.12g}, before the previous end {latest:.12g}{plus}")
            )
        latest = max(latest, c.end)
    return out
