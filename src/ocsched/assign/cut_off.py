"""Entries cut off on every switch: served first, split over all the switches that can carry them.

An entry is *cut off* when every switch that can light it at all loses one of its two links
later, or goes down for good: it must be served before then, and may need every such switch to fit (an
entry of work 1 with 0.6 of time left on each of two switches of rate 1). The placement
heuristics put each piece on one switch; this last resort, used only when they find no
placement, serves the cut-off entries by a few matchings of those entries alone (Spectra's
decomposition of them, grouped by the switches that can carry them) with durations from a small
MILP over all the switches, each switch running its matchings earliest deadline first from its
start, then places the rest of the demand after them with the scheduler's own method.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ocsched._types import FloatArray, IntArray
from ocsched.assign._links_cover import _matchings
from ocsched.assign.on_fabric import _View
from ocsched.model import Configuration, Demand

__all__ = ["cut_off_first"]

Laid = tuple[tuple[Configuration, ...], ...]
#: ``place(rest, t0) -> (configurations, splits)``: the scheduler's placement of what is left.
Rest = Callable[[Demand, NDArray[np.float64]], tuple[Laid, int]]

#: Relative slack the MILP keeps on coverage and deadlines, above HiGHS's feasibility tolerance.
_MARGIN = 1e-9
#: Branch-and-bound nodes the MILP may use (a work limit: no wall clock in results).
_NODES = 2000


def cut_off_first(targets: Demand, view: _View, rest: Rest) -> tuple[Laid, int] | None:
    """Serve the cut-off entries of ``targets`` first on every switch that can carry them, then the rest.

    Parameters
    ----------
    targets : Demand
        What must be served.
    view : _View
        The fabric (its failed links, delays, rates, starts and down windows).
    rest : callable
        ``rest(demand, t0)`` places the other entries from per-switch starts ``t0``.

    Returns
    -------
    (configurations, splits) or None
        None when no entry is cut off, the MILP finds no durations that meet every deadline (on
        the switches without down windows before their links fail), or ``rest`` raises.
    """
    from ocsched.errors import InfeasibleError

    if not targets.nnz:
        return None
    s = view.size
    # start[b]: when switch b is first dark and up (after the down windows it starts in).
    start = view.start.copy()
    for b in range(s):
        moved = True
        while moved:
            moved = False
            for a, e in view.windows[b]:
                if e < np.inf and a <= start[b] < e:
                    start[b], moved = e, True
    # fail[b, p]: until when port p can be lit on switch b: its link's failure, or the switch
    # going down for good, whichever comes first.
    fail = np.full((s, targets.n), np.inf) if view.fail is None else view.fail.copy()
    for b in range(s):
        fail[b] = np.minimum(fail[b], max(view.gone(b), float(start[b])))
    blocked = fail <= (start + view.delta)[:, None]
    # A switch with a down window it comes back from, between its start and its last deadline,
    # is left to the heuristics (the first phase runs without windows).
    last = np.where(np.isfinite(fail), fail, -np.inf).max(axis=1, initial=-np.inf)
    for b in range(s):
        if any(e < np.inf and a < last[b] and e > start[b] for a, e in view.windows[b]):
            blocked[b] = True
    i, j = targets.rows, targets.cols
    ok = ~blocked[:, i] & ~blocked[:, j]  # switch x entry
    dl = np.minimum(fail[:, i], fail[:, j])
    cut = ok.any(axis=0) & ~(ok & ~np.isfinite(dl)).any(axis=0)
    if not cut.any():
        return None
    (entries,) = np.nonzero(cut)
    n = targets.n
    # Entries the same switches can carry are decomposed together, apart from the others: a
    # matching mixing an entry one switch alone can carry with one of another group would tie
    # the second to that switch's deadline too.
    groups: dict[bytes, list[int]] = {}
    for e in entries.tolist():
        groups.setdefault(ok[:, e].tobytes(), []).append(e)
    mats = [m for g in groups.values() for m in _matchings(targets, g, n, float(view.delta.mean()))]
    rows: IntArray = np.array([r for r, _ in mats], dtype=np.int64).reshape(len(mats), n)
    k = rows.shape[0]
    used = rows >= 0
    outs = np.where(used, rows, 0)
    # deadline[q, b]: the earliest failure on switch b of a link matching q uses (inf: none).
    deadline = np.full((k, s), np.inf)
    allowed = np.zeros((k, s), dtype=bool)
    for b in range(s):
        f = fail[b]
        deadline[:, b] = np.minimum(
            np.where(used, f[None, :], np.inf).min(axis=1), np.where(used, f[outs], np.inf).min(axis=1)
        )
        allowed[:, b] = ~(used & (blocked[b][None, :] | blocked[b][outs])).any(axis=1)
    key = {int(a) * n + int(c): e for e, (a, c) in enumerate(zip(i[entries], j[entries], strict=True))}

    def cover_of(x: FloatArray) -> FloatArray:
        """What the durations ``x`` serve of each cut-off entry."""
        got = np.zeros(len(key))
        for q, b in zip(*np.nonzero(x > 0), strict=True):
            (ins,) = np.nonzero(rows[q] >= 0)
            for a in ins.tolist():
                got[key[a * n + int(rows[q, a])]] += float(x[q, b]) * float(view.rate[b])
        return got

    x = _durations(rows, allowed, deadline, key, targets.values[entries], view, start)
    if x is None:
        return None
    phase: list[list[Configuration]] = [[] for _ in range(s)]
    t0 = view.start.copy()
    for b in range(s):
        t = float(start[b])
        for q in np.argsort(deadline[:, b], kind="stable").tolist():
            if x[q, b] <= 0:
                continue
            t += float(view.delta[b])
            phase[b].append(Configuration(t, float(x[q, b]), rows[q].copy()))
            t += float(x[q, b])
            if t > deadline[q, b]:
                return None  # past a link's failure by rounding: not served for sure
        if phase[b]:
            t0[b] = t
    if (cover_of(x) < targets.values[entries]).any():
        return None  # the solver's tolerance left an entry short: not served for sure
    # A matching run on several switches counts as split (one piece per permutation is not).
    splits = int(np.maximum(np.count_nonzero(x > 0, axis=1) - 1, 0).sum())
    keep = ~cut
    left = Demand(n, targets.rows[keep], targets.cols[keep], targets.values[keep])
    if not left.nnz:
        return tuple(tuple(p) for p in phase), splits
    try:
        laid, more = rest(left, t0)
    except InfeasibleError:
        return None
    return tuple((*phase[b], *laid[b]) for b in range(s)), splits + more


def _durations(
    rows: IntArray,
    allowed: NDArray[np.bool_],
    deadline: FloatArray,
    key: dict[int, int],
    need: FloatArray,
    view: _View,
    start: FloatArray,
) -> FloatArray | None:
    """Each (matching, switch) pair's duration: every entry served, every deadline met, least busy time.

    A MILP: ``x[q, b]`` the time matching q runs on switch b, ``y[q, b]`` whether it runs there
    (then it pays the switch's delay). On switch b the matchings run by deadline, so the ones up
    to q end by ``start[b] + sum of (delay y + x)``, which must not pass q's deadline. Bounded by
    nodes (:data:`_NODES`), not time: the same input gives the same answer under any load.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    k, s = allowed.shape
    n = rows.shape[1]
    pairs = [(q, b) for q in range(k) for b in range(s) if allowed[q, b]]
    if not pairs:
        return None
    m = len(pairs)
    col = {p: c for c, p in enumerate(pairs)}
    rate, delta = view.rate, view.delta
    horizon = float(need.sum() / rate.min()) + float(delta.sum())  # no pair runs longer than all of it
    cons: list[LinearConstraint] = []
    # Coverage: sum of rate * x over the pairs whose matching holds the entry >= its demand.
    cover = np.zeros((len(key), 2 * m))
    for (q, b), c in col.items():
        (ins,) = np.nonzero(rows[q] >= 0)
        for e in (key[int(a) * n + int(rows[q, a])] for a in ins):
            cover[e, c] = rate[b]
    cons.append(LinearConstraint(cover, lb=need * (1 + _MARGIN)))  # a margin over the solver's tolerance
    # x <= U y: a pair runs only if it pays its delay.
    link = np.zeros((m, 2 * m))
    upper = np.empty(m)
    for (q, b), c in col.items():
        upper[c] = min(horizon, float(deadline[q, b] - start[b]))
        link[c, c], link[c, m + c] = 1.0, -upper[c]
    cons.append(LinearConstraint(link, ub=np.zeros(m)))
    for b in range(s):
        on = [q for q in np.argsort(deadline[:, b], kind="stable").tolist() if allowed[q, b]]
        for p, q in enumerate(on):
            if deadline[q, b] == np.inf:
                continue
            row = np.zeros(2 * m)
            for q2 in on[: p + 1]:
                row[col[(q2, b)]] = 1.0
                row[m + col[(q2, b)]] = float(delta[b])
            room = float(deadline[q, b] - start[b])
            cons.append(LinearConstraint(row[None, :], ub=room - _MARGIN * abs(float(deadline[q, b]))))
    cost = np.concatenate([np.ones(m), np.array([float(delta[b]) for _, b in pairs])])
    res = milp(
        cost,
        constraints=cons,
        integrality=np.concatenate([np.zeros(m), np.ones(m)]),
        bounds=Bounds(np.zeros(2 * m), np.concatenate([np.maximum(upper, 0.0), np.ones(m)])),
        options={"node_limit": _NODES},
    )
    if res.x is None:
        return None
    x = np.zeros((k, s))
    for (q, b), c in col.items():
        if res.x[m + c] > 0.5:
            x[q, b] = max(float(res.x[c]), 0.0)
    return x
