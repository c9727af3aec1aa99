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
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ocsched.assign.on_fabric import _View
from ocsched.assign.uniform import Assignment
from ocsched.decompose._common import cover_exactly, incidence, presolve_cover
from ocsched.errors import InfeasibleError
from ocsched.model import Demand

log = logging.getLogger("ocsched.assign")

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: ``variant(l, b, keep_late)``: the row of permutation l's variant switch b can carry, or -1.
Variant = Callable[[int, int, bool], int]

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


class _Table:
    """The permutations' variants, each row stored once, and which target entries each row holds."""

    def __init__(self, perms: IntArray, targets: Demand) -> None:
        self.n = perms.shape[1]
        self.rows: list[IntArray] = []
        self.index: dict[bytes, int] = {}
        self.keys = targets.rows * self.n + targets.cols  # sorted (row-major)

    def add(self, row: IntArray) -> int:
        key = row.tobytes()
        q = self.index.get(key)
        if q is None:
            q = self.index[key] = len(self.rows)
            self.rows.append(row)
        return q

    def entries(self, row: IntArray) -> IntArray:
        """Indices of the target entries ``row`` holds."""
        (ins,) = np.nonzero(row >= 0)
        if not ins.size or not self.keys.size:
            return np.zeros(0, dtype=np.int64)
        k = ins * self.n + row[ins]
        pos = np.minimum(np.searchsorted(self.keys, k), self.keys.size - 1)
        return np.asarray(pos[self.keys[pos] == k], dtype=np.int64)

    def is_target(self, row: IntArray) -> NDArray[np.bool_]:
        """Per input port: its circuit in ``row`` is a target entry (False where idle)."""
        out = np.zeros(row.size, dtype=bool)
        (ins,) = np.nonzero(row >= 0)
        if ins.size and self.keys.size:
            k = ins * self.n + row[ins]
            pos = np.minimum(np.searchsorted(self.keys, k), self.keys.size - 1)
            out[ins] = self.keys[pos] == k
        return out

    def array(self) -> IntArray:
        return np.array(self.rows, dtype=np.int64).reshape(len(self.rows), self.n)


def _lost(view: _View, b: int, t: float) -> float:
    """Time switch b loses to its finite down windows before ``t``: their length and two delays each
    (the delay cut short by the window, and the one after it), an upper bound."""
    t0, d = float(view.start[b]), float(view.delta[b])
    out = 0.0
    for a, e in view.windows[b]:
        if e < np.inf and a < t:
            out += min(e, t) - max(a, t0) + 2 * d
    return out


def _down_from(view: _View, b: int) -> float:
    """When switch b goes down for good (inf: never)."""
    return min((a for a, e in view.windows[b] if e == np.inf), default=np.inf)


class _Pieces:
    """The LP's pieces: variant row, switch, permutation it comes from, a length to start from."""

    def __init__(self) -> None:
        self.q: list[int] = []
        self.b: list[int] = []
        self.l: list[int] = []
        self.x: list[float] = []

    def add(self, q: int, b: int, l: int, x: float) -> None:
        self.q.append(q)
        self.b.append(b)
        self.l.append(l)
        self.x.append(x)

    def has(self, q: int, b: int) -> bool:
        return any(qq == q and bb == b for qq, bb in zip(self.q, self.b, strict=True))

    def subset(self, keep: NDArray[np.bool_], x: FloatArray | None = None) -> _Pieces:
        out = _Pieces()
        xs = self.x if x is None else x.tolist()
        for k in np.nonzero(keep)[0].tolist():
            out.add(self.q[k], self.b[k], self.l[k], float(xs[k]))
        return out

    def __len__(self) -> int:
        return len(self.q)


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


def _cover(
    pieces: _Pieces,
    perms: IntArray,
    weights: FloatArray,
    targets: Demand,
    table: _Table,
    view: _View,
    blocked: NDArray[np.bool_],
    later: NDArray[np.bool_],
    est: FloatArray,
    vf: Variant,
    pressing: list[list[int]] | None = None,
) -> None:
    """Give every target entry no piece holds one: a permutation holding it, on a switch allowing it.

    With ``pressing``, an entry every switch allowing it carries only until a link fails is
    listed there instead, for the switch whose links for it fail last.
    """
    covered = np.zeros(targets.nnz, dtype=bool)
    for q in pieces.q:
        covered[table.entries(table.rows[q])] = True
    if covered.all():
        return
    inc = incidence(targets, perms).tocsr()  # entry x permutation
    for e in np.nonzero(~covered)[0].tolist():
        if covered[e]:
            continue
        i, j = int(targets.rows[e]), int(targets.cols[e])
        ok = ~blocked[:, i] & ~blocked[:, j]
        if not ok.any():
            raise InfeasibleError(_why(view, i, j, float(targets.values[e])))
        if pressing is not None and all(later[b, i] or later[b, j] for b in np.nonzero(ok)[0].tolist()):
            f = view.fail  # not None here
            assert f is not None
            b = max(np.nonzero(ok)[0].tolist(), key=lambda b: (min(f[b, i], f[b, j]) - est[b], -b))
            pressing[b].append(e)
            covered[e] = True
            continue
        holders = inc.indices[inc.indptr[e] : inc.indptr[e + 1]]
        if holders.size:
            l = int(holders[np.argmax(weights[holders])])
        else:  # no permutation holds it (the decomposition serves less): a circuit of its own
            row = np.full(perms.shape[1], -1, dtype=np.int64)
            row[i] = j
            l = -1
        best: tuple[int, float] | None = None
        best_b = -1
        for b in np.nonzero(ok)[0].tolist():
            late = bool(later[b, i] or later[b, j])
            # Prefer switches where the entry's links never fail, then the emptiest.
            key = (int(late), float(est[b]))
            if best is None or key < best:
                best, best_b = key, b
        late = bool(later[best_b, i] or later[best_b, j])
        if l >= 0:
            q = vf(l, best_b, late)
            w = float(weights[l])
        else:
            q = table.add(row)
            w = float(targets.values[e])
        if q < 0:  # cannot happen: the entry is allowed on best_b
            raise AssertionError("a covering variant holds no entry")
        pieces.add(q, best_b, l, w)
        est[best_b] += float(view.delta[best_b]) + w / float(view.rate[best_b])
        covered[table.entries(table.rows[q])] = True


def _matchings(targets: Demand, entries: list[int], n: int, delta: float) -> list[tuple[IntArray, float]]:
    """A few matchings that serve ``entries`` of ``targets`` (Spectra's decomposition of them alone)."""
    from ocsched.decompose import decompose

    if not entries:
        return []
    idx = np.array(sorted(entries), dtype=np.int64)
    sub = Demand(n, targets.rows[idx], targets.cols[idx], targets.values[idx])
    dec = decompose(sub, method="spectra", delta=delta)
    keys = sub.rows * n + sub.cols
    out = []
    for perm, w in zip(dec.perms, dec.weights, strict=True):
        row = np.full(n, -1, dtype=np.int64)
        (ins,) = np.nonzero(perm >= 0)
        hit = np.isin(ins * n + perm[ins], keys)  # only the entries themselves: no stuffing
        row[ins[hit]] = perm[ins[hit]]
        if w > 0 and hit.any():
            out.append((row, float(w)))
    return out


def _why(view: _View, i: int, j: int, value: float) -> str:
    """One line: why no switch can light circuit i -> j."""
    s = view.size
    reasons = []
    for b in range(s):
        if view.dead(b):
            reasons.append(f"switch {b} is down for good")
            continue
        f = view.fail  # not None here
        assert f is not None
        for p in (i, j):
            if f[b, p] <= view.start[b] + view.delta[b]:
                when = "" if f[b, p] <= view.start[b] else ", before its first reconfiguration ends"
                reasons.append(f"switch {b}: port {p}'s link fails at {float(f[b, p]):g}{when}")
                break
    return f"demand[{i}, {j}] = {value:g} but no switch can light {i}->{j} ({'; '.join(reasons)})"


def _order(pieces: _Pieces, view: _View) -> list[list[int]]:
    """Per switch, its pieces (indices) in the order the LP assumes: deadlines first, earliest first."""
    per: list[list[int]] = [[] for _ in range(view.size)]
    for k, b in enumerate(pieces.b):
        per[b].append(k)
    return [sorted(ks, key=lambda k: (view.deadline(pieces.q[k], b), k)) for b, ks in enumerate(per)]


def _lp(pieces: _Pieces, q_perms: IntArray, targets: Demand, view: _View, margin: float) -> FloatArray | None:
    """The LP of the module docstring: the pieces' lengths (demand), coverage repaired; None if it fails."""
    from scipy.optimize import linprog

    k_all = len(pieces)
    if not k_all:
        return None
    pq = np.array(pieces.q, dtype=np.int64)
    pb = np.array(pieces.b, dtype=np.int64)
    inc = incidence(targets, q_perms)[:, pq].tocsr()
    if (np.diff(inc.indptr) == 0).any():
        return None
    # Units of the largest entry, times from the earliest start: HiGHS's tolerances are absolute.
    scale = float(targets.values.max())
    base = view.t0
    lb, need = presolve_cover(inc, targets.values / scale)
    inv_r = 1.0 / view.rate[pb]
    rows: list[sp.csr_array] = [sp.hstack([-inc[need], sp.csr_array((need.size, 1))]).tocsr()]
    rhs: list[FloatArray] = [-targets.values[need] / scale]
    est = np.array(
        [
            float(view.start[b]) + sum(float(view.delta[b]) + pieces.x[k] / float(view.rate[b]) for k in ks)
            for b, ks in enumerate(_order(pieces, view))
        ]
    )
    horizon = float(est.max(initial=base))
    extra_r: list[int] = []
    extra_c: list[int] = []
    extra_v: list[float] = []
    extra_rhs: list[float] = []
    load_rows: list[int] = []

    def row(ks: list[int], bound: float, with_t: bool) -> None:
        r = len(extra_rhs)
        for k in ks:
            extra_r.append(r)
            extra_c.append(k)
            extra_v.append(float(inv_r[k]))
        if with_t:
            extra_r.append(r)
            extra_c.append(k_all)
            extra_v.append(-1.0)
            load_rows.append(r)
        extra_rhs.append(bound)

    for b, ks in enumerate(_order(pieces, view)):
        if not ks:
            continue
        d, t0 = float(view.delta[b]), float(view.start[b])
        row(ks, -(t0 - base + len(ks) * d + _lost(view, b, horizon)) / scale, True)
        cap = _down_from(view, b)
        if cap < np.inf:
            room = cap - t0 - len(ks) * d - _lost(view, b, cap)
            row(ks, room / scale * (1 - margin), False)
        for pos, k in enumerate(ks):
            dl = view.deadline(pieces.q[k], b)
            if dl == np.inf:
                break  # the rest have none (sorted)
            room = dl - t0 - (pos + 1) * d - _lost(view, b, dl)
            if room < 0:
                return None
            row(ks[: pos + 1], room / scale * (1 - margin), False)
    extra = sp.csr_array((extra_v, (extra_r, extra_c)), shape=(len(extra_rhs), k_all + 1))
    a_ub = sp.vstack([rows[0], extra]).tocsr()
    b_ub = np.concatenate([rhs[0], np.array(extra_rhs)])
    # A small price on length: among schedules ending together, the one with the least work,
    # so pieces that are not needed come out empty (and are dropped).
    c = np.append(1e-5 / view.size * inv_r, 1.0)
    bounds = np.column_stack([np.append(lb, 0.0), np.full(k_all + 1, np.inf)])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")  # type: ignore[call-overload]
    if res.status != 0 or res.x is None:
        return None
    x = np.maximum(np.asarray(res.x[:k_all], dtype=np.float64), lb) * scale
    # Exact coverage: each short entry lengthens its longest serving piece by the shortfall.
    return cover_exactly(inc, x, targets.values)


def _drop_empty(pieces: _Pieces, x: FloatArray, q_perms: IntArray, targets: Demand) -> _Pieces:
    """The pieces the LP uses (keeping, for an entry only empty pieces hold, its longest one)."""
    keep = x > 1e-9 * float(x.max(initial=0.0))
    inc = incidence(targets, q_perms)[:, np.array(pieces.q, dtype=np.int64)].tocsr()
    held = inc @ keep.astype(np.float64)
    for e in np.nonzero(held == 0)[0].tolist():
        cols = inc.indices[inc.indptr[e] : inc.indptr[e + 1]]
        keep[int(cols[np.argmax(x[cols])])] = True
    return pieces.subset(keep, x)


def _solve_and_check(
    pieces: _Pieces, q_perms: IntArray, targets: Demand, view: _View
) -> tuple[float, _Pieces] | None:
    """LP, drop the empty pieces, LP again; the better as laid out, with its makespan (None: neither fits).

    The deadlines are met with a relative margin; if rounding still breaks one, a wider margin.
    """
    for margin in (1e-6, 1e-4):
        x = _lp(pieces, q_perms, targets, view, margin)
        if x is None:
            return None
        cands = [pieces.subset(x > 0, x)]
        kept = _drop_empty(pieces, x, q_perms, targets)
        if len(kept) < len(pieces):  # fewer delays: solve again
            x2 = _lp(kept, q_perms, targets, view, margin)
            if x2 is not None:
                cands.insert(0, kept.subset(x2 > 0, x2))
        best: tuple[float, _Pieces] | None = None
        for cand in cands:
            t = _makespan(cand, view)
            if t < np.inf and (best is None or t < best[0]):
                best = (t, cand)
        if best is not None:
            return best
    return None


def _assignment(pieces: _Pieces, view: _View, s: int) -> Assignment:
    out: Assignment = [[] for _ in range(s)]
    for b, ks in enumerate(_order(pieces, view)):
        out[b] = [(pieces.q[k], pieces.x[k]) for k in ks if pieces.x[k] > 0]
    return out


def _makespan(pieces: _Pieces, view: _View) -> float:
    """The largest finish of the pieces laid out (inf if a deadline or a window is not met)."""
    a = _assignment(pieces, view, view.size)
    return max((view.finish(b, sw) for b, sw in enumerate(a)), default=view.t0)


def _copies(pieces: _Pieces, view: _View, vf: Variant, table: _Table, targets: Demand) -> _Pieces | None:
    """``pieces`` plus, on each switch with room, variants of the other switches' permutations.

    A copy of piece k on switch b could take over what k serves beyond the entries only k
    serves that b cannot carry: its *offload*. The switches ending earliest take the copies
    with the largest offloads, while their delays and offloads fit in the time they end before
    the makespan, so the LP can move that work there. None if none is added.
    """
    a = _assignment(pieces, view, view.size)
    fin = np.array([view.finish(b, sw) for b, sw in enumerate(a)])
    t = float(fin.max())
    slack = t - fin
    room = np.array([not view.dead(b) and slack[b] > view.delta[b] for b in range(view.size)])
    if not room.any():
        return None
    q_perms = table.array()
    pq = np.array(pieces.q, dtype=np.int64)
    inc = incidence(targets, q_perms)[:, pq].tocsc()
    x = np.array(pieces.x)
    cover = inc @ x
    donors = [k for k in range(len(pieces)) if not room[pieces.b[k]] and pieces.l[k] >= 0 and x[k] > 0]
    out = pieces.subset(np.ones(len(pieces), bool))
    used: set[int] = set()
    added = 0
    for b in np.argsort(fin, kind="stable").tolist():
        if not room[b]:
            continue
        d, r = float(view.delta[b]), float(view.rate[b])
        offers = []
        for k in donors:
            if k in used:
                continue
            q = vf(pieces.l[k], b, False)
            if q < 0 or out.has(q, b):
                continue
            mine = set(table.entries(table.rows[q]).tolist())
            col = inc.indices[inc.indptr[k] : inc.indptr[k + 1]]
            if not any(e in mine for e in col.tolist()):
                continue
            # What k must still serve alone: the entries the copy cannot hold, less the others' part.
            stay = [float(targets.values[e] - (cover[e] - x[k])) for e in col.tolist() if e not in mine]
            offload = float(x[k]) - max(stay, default=0.0)
            if offload > 0:
                offers.append((-offload, k, q))
        budget = float(slack[b])
        for neg, k, q in sorted(offers):
            cost = d + (-neg) / r
            if cost > budget:
                continue
            out.add(q, b, pieces.l[k], 0.0)
            used.add(k)
            budget -= cost
            added += 1
    return out if added else None
