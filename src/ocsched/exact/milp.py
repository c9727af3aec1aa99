"""The exact scheduler's MILP over the columns of :mod:`ocsched.exact.columns`, built for HiGHS."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from ocsched._types import FloatArray
from ocsched.exact._highs import _milp_options
from ocsched.exact.columns import Columns
from ocsched.improve.structure import SwitchTimes

__all__ = ["solve_milp"]


def _identical(times: list[SwitchTimes]) -> list[tuple[int, int]]:
    """Pairs (b, b') of interchangeable switches, consecutive within each class, in order of b."""
    classes: dict[tuple[Any, ...], list[int]] = {}
    for b, tb in enumerate(times):
        key = (tb.delta, tb.rate, tb.phases, tuple(sorted(tb.fails.items())))
        classes.setdefault(key, []).append(b)
    pairs = [(m[i], m[i + 1]) for m in classes.values() for i in range(len(m) - 1)]
    return sorted(pairs)


def solve_milp(
    dv: FloatArray,
    inc: FloatArray,
    cols: Columns,
    times: list[SwitchTimes],
    scale: float,
    t_lo: float,
    t_hi: float,
    time_limit: float | None,
    node_limit: int | None,
) -> Any:
    """Solve the matching MILP in scaled units (times x ``scale``), makespan restricted to [t_lo, t_hi].

    Variables: T, then ``y[c]`` (column c is used) and ``t[c]`` (for how long), then the integer
    counts ``u[b, e]`` of switch b's configurations serving entry e. ``inc[e, k]`` is 1 if matching
    k holds entry e; ``dv`` the scaled demand. See :func:`ocsched.exact.solve_exact` for the model.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    e_count = inc.shape[0]
    s = len(times)
    nb = cols.size
    nv = 1 + 2 * nb
    sw = cols.switch
    rate = np.array([times[b].rate for b in sw.tolist()], dtype=np.float64)
    ds = np.array([times[b].delta for b in sw.tolist()], dtype=np.float64) * scale
    alpha = (
        np.array(
            [times[b].phases[p][0] for b, p in zip(sw.tolist(), cols.phase.tolist(), strict=True)],
            dtype=np.float64,
        )
        * scale
    )
    label = cols.label * scale
    icol = inc[:, cols.mat]  # entry x column
    # The longest a column's configuration can last: by its class's end, and by U.
    room = np.maximum(np.minimum(label, t_hi) - alpha - ds, 0.0)
    cap = np.minimum((icol * dv[:, None]).max(axis=0) / rate, room)
    blocks: list[sp.csr_array] = []
    lo: list[FloatArray] = []
    hi: list[FloatArray] = []

    def add(t_col: sp.csr_array, y_part: sp.csr_array, t_part: sp.csr_array, lower: Any, upper: Any) -> None:
        blocks.append(sp.hstack([t_col, y_part, t_part]).tocsr())
        rows_ = blocks[-1].shape[0]
        lo.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (rows_,)))
        hi.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (rows_,)))

    rep = sp.csr_array(icol)  # entry x column, 0/1
    none_e = sp.csr_array((e_count, nb))
    # Coverage: a switch of rate c serves c per unit of time.
    cover = rep if (rate == 1.0).all() else sp.csr_array(icol * rate[None, :])
    add(sp.csr_array((e_count, 1)), none_e, cover, dv, np.inf)
    # Configurations needed per entry: each serves at most rate * room of it.
    most = (icol * (rate * room)[None, :]).max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.maximum(1.0, np.ceil(dv / most * (1 - 1e-9)))
    need = np.where(np.isfinite(need), need, 1.0)
    add(sp.csr_array((e_count, 1)), rep, none_e, need, np.inf)
    # Big-M: t - cap y <= 0.
    eye = sp.eye_array(nb, format="csr")
    add(sp.csr_array((nb, 1)), -sp.diags_array(cap).tocsr(), eye, -np.inf, 0.0)
    # Loads: every (switch, phase) ends by T; a phase that ends (a down window) by its end; a
    # deadline class by its deadline (configurations in order of deadline, Jackson's rule).
    g_rows = np.repeat(np.arange(len(cols.groups)), [g.size for _, _, g in cols.groups])
    g_cols = np.concatenate([g for _, _, g in cols.groups]) if cols.groups else np.zeros(0, np.int64)
    per = sp.csr_array((np.ones(g_cols.size), (g_rows, g_cols)), shape=(len(cols.groups), nb))
    g_alpha = np.array([alpha[g[0]] for _, _, g in cols.groups])
    y_load = ds[0] * per if (ds == ds[0]).all() else sp.csr_array(per.toarray() * ds[None, :])
    add(sp.csr_array(-np.ones((len(cols.groups), 1))), y_load, per, -np.inf, 0.0 - g_alpha)
    ends_r: list[int] = []
    ends_c: list[int] = []
    ends_b: list[float] = []
    for gi, (_, _, g) in enumerate(cols.groups):
        lab = label[g]
        for value in sorted({float(v) for v in lab.tolist() if math.isfinite(v)}):
            on = g[lab <= value]
            ends_c += on.tolist()
            ends_r += [len(ends_b)] * on.size
            ends_b.append(value - float(g_alpha[gi]))
    if ends_b:
        ends = sp.csr_array((np.ones(len(ends_c)), (ends_r, ends_c)), shape=(len(ends_b), nb))
        y_ends = sp.csr_array(ends.toarray() * ds[None, :])
        add(sp.csr_array((len(ends_b), 1)), y_ends, ends, -np.inf, np.array(ends_b))
    # Symmetry breaking between interchangeable switches (same columns in the same order): sorted
    # by the first column they hold, empty ones last, y[b', k] <= sum_{j <= k} y[b, j].
    pairs = _identical(times)
    per_sw = nb // s
    # Every switch alike with the same columns (the uniform fabric): some blocks are built exactly as
    # they always were, explicit zeros included, so HiGHS sees the same model and gives the same
    # schedules as before fabrics existed.
    uniform = (
        pairs == [(b, b + 1) for b in range(s - 1)]
        and nb == per_sw * s
        and bool((sw == np.repeat(np.arange(s), per_sw)).all())
        and bool((cols.mat == np.tile(cols.mat[:per_sw], s)).all())
    )
    if s > 1 and uniform:
        tri = sp.csr_array(np.tril(np.ones((per_sw, per_sw))))
        blk = sp.kron(sp.eye_array(s - 1, s, k=0), -tri) + sp.kron(
            sp.eye_array(s - 1, s, k=1), sp.eye_array(per_sw)
        )
        rows_ = (s - 1) * per_sw
        add(sp.csr_array((rows_, 1)), sp.csr_array(blk), sp.csr_array((rows_, nb)), -np.inf, 0.0)
    elif pairs:
        on_sw = [np.nonzero(sw == b)[0] for b in range(s)]
        r_i: list[int] = []
        r_j: list[int] = []
        r_v: list[float] = []
        row = 0
        for b, b2 in pairs:
            first, second = on_sw[b], on_sw[b2]
            for k in range(first.size):
                r_i += [row] * (k + 2)
                r_j += [*first[: k + 1].tolist(), int(second[k])]
                r_v += [-1.0] * (k + 1) + [1.0]
                row += 1
        pair_rows = sp.csr_array((r_v, (r_i, r_j)), shape=(row, nb))
        add(sp.csr_array((row, 1)), pair_rows, sp.csr_array((row, nb)), -np.inf, 0.0)
    a = sp.vstack(blocks).tocsr()
    c = np.zeros(nv)
    c[0] = 1.0
    lbs = np.zeros(nv)
    lbs[0] = t_lo
    ubv = np.concatenate([[t_hi * (1 + 1e-9)], np.ones(nb), cap])
    integrality = np.zeros(nv, dtype=np.int64)
    integrality[1 : 1 + nb] = 1
    # Integer u[b, e] = sum_{columns of b holding e} y: the solver can branch on "which switches
    # serve e", which closes gaps that branching on single matchings leaves open for a long time.
    nu = s * e_count
    a = sp.hstack([a, sp.csr_array((a.shape[0], nu))]).tocsr()
    if s > 1 and uniform:
        yblock = sp.kron(sp.eye_array(s), sp.csr_array(icol[:, :per_sw])).tocsr()
    else:
        ent, col = np.nonzero(icol)
        yblock = sp.csr_array((np.ones(ent.size), (sw[col] * e_count + ent, col)), shape=(nu, nb))
    rowsu = sp.csr_array(
        sp.hstack([sp.csr_array((nu, 1)), -yblock, sp.csr_array((nu, nb)), sp.eye_array(nu, format="csr")])
    )
    a = sp.vstack([a, rowsu]).tocsr()
    lo.append(np.zeros(nu))
    hi.append(np.zeros(nu))
    c = np.concatenate([c, np.zeros(nu)])
    lbs = np.concatenate([lbs, np.zeros(nu)])
    per_switch = np.bincount(sw, minlength=s).astype(np.float64)
    ubv = np.concatenate([ubv, np.repeat(per_switch, e_count)])
    integrality = np.concatenate([integrality, np.ones(nu, dtype=np.int64)])
    return milp(
        c,
        integrality=integrality,
        bounds=Bounds(lbs, ubv),
        constraints=LinearConstraint(a, np.concatenate(lo), np.concatenate(hi)),
        options=_milp_options(time_limit, node_limit),
    )
