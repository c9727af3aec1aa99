"""Serve around failed links: pieces that leave out what a switch cannot carry, lengths re-fit by LP.

A failed link removes circuits, not a switch. :func:`around_links` starts from an assignment
placed as if every link worked and turns each piece (permutation l on switch b) into the
*variant* of l that b can carry: l without its circuits through ports blocked on b (and, where
b's deadline for them would be missed, without its circuits through ports whose links fail
later). Entries left without a piece get one on a switch that can carry them; then the pieces'
lengths are re-fit by one LP::

    minimise T  s.t.  sum of x_k over pieces k holding entry e >= d_e          (every entry)
                      start_b + sum over k on b of (delta_b + x_k / r_b) <= T  (every switch)
                      the same sum up to piece k <= its deadline               (failing links)

Pieces the LP leaves empty are dropped (saving their delay) and the LP is solved again; then,
a few times, switches with room get copies of the bottleneck switches' permutations (as
variants) so the LP can move work onto them. Every result is laid out and checked (deadlines,
windows), and coverage is repaired to be exact; the caller keeps it only if it ends earlier
than placement with whole permutations.
"""

from __future__ import annotations

import logging

import numpy as np

from ocsched._types import FloatArray, IntArray
from ocsched.assign._links_copies import _copies
from ocsched.assign._links_cover import _cover, _matchings
from ocsched.assign._links_lp import _assignment, _makespan, _solve_and_check
from ocsched.assign._links_table import _Pieces, _Table
from ocsched.assign.on_fabric import _View
from ocsched.assign.uniform import Assignment
from ocsched.model import Demand

log = logging.getLogger("ocsched.assign")

#: Rounds of copies onto switches with room (each: two LPs).
ROUNDS = 3


def coverage_demand(perms: IntArray, weights: FloatArray) -> Demand:
    """The demand a decomposition serves: ``sum_l w_l P_l`` (entries > 0, row-major)."""
    n = perms.shape[1] if perms.ndim == 2 else 0
    l_idx, i_idx = np.nonzero(perms >= 0)
    keys = i_idx * n + perms[l_idx, i_idx]
    uniq, inv = np.unique(keys, return_inverse=True)
    vals = np.bincount(inv, weights=weights[l_idx], minlength=uniq.size)
    on = vals > 0
    uniq, vals = uniq[on], vals[on]
    m = max(n, 1)
    return Demand(
        m, (uniq // m).astype(np.int64), (uniq % m).astype(np.int64), np.asarray(vals, dtype=np.float64)
    )


def around_links(
    perms: IntArray,
    weights: FloatArray,
    targets: Demand,
    view: _View,
    start: Assignment,
    *,
    rounds: int = ROUNDS,
    compress: bool = False,
) -> tuple[IntArray, Assignment, int] | None:
    """Turn ``start`` (placed as if every link worked) into pieces every switch can carry, re-fit by LP.

    Parameters
    ----------
    perms, weights
        The decomposition ``start`` places (pieces ``(l, length)`` per switch).
    targets : Demand
        What must be served (the demand, or the decomposition's coverage).
    view : _View
        The fabric, with its failed links.
    start : Assignment
        The placement to start from.
    rounds : int
        Rounds of copies onto switches with room.
    compress : bool
        Serve the entries that need a link failing later on every switch that can carry them by a
        few matchings of those entries alone, first on their switch (instead of as parts of the
        placed permutations, each paying a delay before the deadline): fewer delays before the
        failures, at the price of configurations that light few circuits.

    Returns
    -------
    (perms, assignment, splits) or None
        The variants' table, pieces on it (every entry of ``targets`` covered, every deadline
        met, as laid out by :meth:`_View.arrange`) and the pieces beyond one per permutation
        used; None if the LP fails.

    Raises
    ------
    InfeasibleError
        If an entry of ``targets`` uses a port blocked on every switch.
    """
    if not targets.nnz or perms.ndim != 2 or view.fail is None:
        return None
    s, n = view.size, perms.shape[1]
    blocked = np.asarray(view.blocked())
    dead = np.array([view.dead(b) for b in range(s)])
    blocked[dead] = True
    later = np.isfinite(view.fail) & ~blocked  # a deadline: usable until the link fails
    table = _Table(perms, targets)

    def variant(l: int, b: int, keep_late: bool) -> int:
        row = perms[l].copy()
        (ins,) = np.nonzero(row >= 0)
        outs = row[ins]
        drop = blocked[b, ins] | blocked[b, outs]
        late = later[b, ins] | later[b, outs]
        # Circuits that serve no entry are dropped where a link fails: they would only constrain.
        drop |= late & ~(keep_late & table.is_target(row)[ins])
        row[ins[drop]] = -1
        return table.add(row) if table.entries(row).size else -1

    def deadline_of(q: int, b: int) -> float:
        row = table.rows[q]
        (ins,) = np.nonzero(row >= 0)
        f = view.fail[b]  # type: ignore[index]
        return float(min(f[ins].min(initial=np.inf), f[row[ins]].min(initial=np.inf)))

    pieces = _Pieces()
    est = view.start.copy()
    for b, sw in enumerate(start):
        d, r = float(view.delta[b]), float(view.rate[b])
        est[b] += sum(d + w / r for _, w in sw)
        if compress:
            for l, w in sw:
                q = variant(l, b, False)
                if w > 0 and q >= 0:
                    pieces.add(q, b, l, w)
            continue
        # The pieces whose links fail later, earliest deadline first: those that would still run
        # when their link fails lose those circuits (the first of them keeps both variants).
        full = [(l, w, variant(l, b, True)) for l, w in sw if w > 0]
        timed = sorted(
            (t for t in full if t[2] >= 0 and deadline_of(t[2], b) < np.inf),
            key=lambda t: deadline_of(t[2], b),
        )
        t_end, missed = float(view.start[b]), False
        for l, w, q in timed:
            t_end += d + w / r
            if t_end <= deadline_of(q, b) and not missed:
                pieces.add(q, b, l, w)
                continue
            if not missed:
                pieces.add(q, b, l, w)
                missed = True
            q2 = variant(l, b, False)
            if q2 >= 0:
                pieces.add(q2, b, l, w)
        for l, w, q in full:
            if q >= 0 and deadline_of(q, b) == np.inf:
                pieces.add(q, b, l, w)

    pressing: list[list[int]] | None = [[] for _ in range(s)] if compress else None
    _cover(pieces, perms, weights, targets, table, view, blocked, later, est, variant, pressing)
    if pressing is not None:
        for b, entries in enumerate(pressing):
            for row, w in _matchings(targets, entries, n, float(view.delta[b])):
                pieces.add(table.add(row), b, -1, w)
    q_perms = table.array()
    qview = view.with_perms(q_perms)
    untouched = all(
        np.array_equal(table.rows[q], perms[l]) for q, l in zip(pieces.q, pieces.l, strict=True) if l >= 0
    ) and len(pieces) == sum(1 for sw in start for _, w in sw if w > 0)
    t_start = _makespan(pieces, qview) if untouched else np.inf
    best = _solve_and_check(pieces, q_perms, targets, qview)
    if t_start < np.inf and (best is None or t_start <= best[0]):
        best = (t_start, pieces)  # a start every switch can run as it is, the re-fit no better
    if best is None:
        return None
    best_t, best_p = best
    for _ in range(rounds):
        more = _copies(best_p, qview, variant, table, targets)
        if more is None:
            break
        q_perms = table.array()
        qview = view.with_perms(q_perms)
        trial = _solve_and_check(more, q_perms, targets, qview)
        if trial is None or trial[0] >= best_t * (1 - 1e-12):
            break
        best_t, best_p = trial
    q_perms = table.array()
    qview = view.with_perms(q_perms)
    splits = len(best_p) - len(set(best_p.l))
    return q_perms, _assignment(best_p, qview, s), splits
