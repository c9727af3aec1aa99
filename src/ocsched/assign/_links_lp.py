"""The LP that re-fits the pieces' lengths of :func:`~ocsched.assign.links.around_links`, and its layout.

The LP::

    minimise T  s.t.  sum of x_k over pieces k holding entry e >= d_e          (every entry)
                      start_b + sum over k on b of (delta_b + x_k / r_b) <= T  (every switch)
                      the same sum up to piece k <= its deadline               (failing links)

Pieces the LP leaves empty are dropped (saving their delay) and the LP is solved again
(:func:`_solve_and_check`); every result is laid out and checked (deadlines, windows), and
coverage is repaired to be exact. scipy.optimize is imported when the LP is solved.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ocsched._types import FloatArray, IntArray
from ocsched.assign._links_table import _Pieces
from ocsched.assign.on_fabric import _View
from ocsched.assign.uniform import Assignment
from ocsched.decompose._common import cover_exactly, incidence, presolve_cover
from ocsched.model import Demand


def _lost(view: _View, b: int, t: float) -> float:
    """Time switch b loses to its finite down windows before ``t``: their length and two delays each
    (the delay cut short by the window, and the one after it), an upper bound."""
    t0, d = float(view.start[b]), float(view.delta[b])
    out = 0.0
    for a, e in view.windows[b]:
        if e < np.inf and a < t:
            out += min(e, t) - max(a, t0) + 2 * d
    return out


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
        cap = view.gone(b)
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
