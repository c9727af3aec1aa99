"""Spectra's decomposition: exactly Delta weighted permutations, the fewest possible."""

from __future__ import annotations

import numpy as np

from ocsched._checks import check_choice
from ocsched._types import FloatArray, IntArray
from ocsched.decompose._common import Decomposition, drop_empty, incidence_from, refit_weights, top_up
from ocsched.decompose._rounds import HAVE_NUMBA, spectra_rounds
from ocsched.model import Demand

__all__ = ["METHODS", "spectra_decompose"]


#: ``fast``: warm-started matching rounds on the support (compiled); ``reference``: the
#: original solver, one dense n x n assignment per round (kept to cross-check the fast one).
METHODS = ("fast", "reference")


def spectra_decompose(demand: Demand, *, method: str = "fast") -> Decomposition:
    """Decompose into exactly Delta weighted permutations, Spectra's way.

    Delta, the most nonzeros in any row or column, is the fewest permutations that can cover the
    demand (a permutation holds one entry per line).

    Notes
    -----
    Round l = 0 .. Delta-1, with ``left = Delta - l`` rounds remaining: a line whose count of
    not-yet-covered nonzeros equals ``left`` is *critical* and must be matched to one of them, or
    some of its nonzeros would never be covered. Such a matching exists by König's edge-colouring
    theorem (the uncovered nonzeros form a bipartite graph of max degree <= left, and a bipartite
    graph has a matching covering all its max-degree vertices). Among those matchings the one
    carrying the most residual demand is found as a min-cost perfect assignment
    (:func:`scipy.optimize.linear_sum_assignment`) with cost ``-residual`` on demand entries, 0
    elsewhere, plus a penalty larger than any total residual for each critical line matched
    outside its uncovered nonzeros. The permutation's weight is its smallest positive residual;
    it is subtracted and the entries are marked covered.

    Invariant: after round l every line has at most ``Delta - l - 1`` uncovered nonzeros, so
    after Delta rounds all are covered. A top-up pass then makes ``sum w_l P_l >= D`` and
    :func:`refit_weights` re-fits all weights with one LP.

    ``method="fast"`` (the default) solves the rounds' assignment problems on the demand's
    support (CSR arrays, O(nnz + n) memory) with one warm-started solver: consecutive rounds
    differ only on the last permutation's entries and on lines that just became critical, so
    the dual prices are kept, only the ports whose matched edge changed are freed, and they are
    re-matched by auction steps (Jonker-Volgenant's augmenting row reduction) and shortest
    augmenting paths. The same problem is solved exactly each round (ties may be broken
    differently from the reference), except on dense input from 512 ports on, where the
    rounds in which every line is critical stop at an eps-optimal matching (within n * eps of
    the optimum, eps = 3 x the mean entry / n; the makespans move by about 1e-5, either
    sign, for half the time: see :mod:`ocsched.decompose._rounds`); permutations also keep
    already-served entries between two otherwise idle ports (they give the refit more freedom,
    never less). The refit LP is presolved exactly (see :func:`refit_weights`).
    ``method="reference"`` runs one dense n x n assignment per round
    (:func:`scipy.optimize.linear_sum_assignment`): O(Delta n^3) time and O(n^2) memory.

    References
    ----------
    Liang, Qiao, Keslassy, Lin. Scheduling Parallel Optical Circuit Switches for AI Training.
    arXiv:2603.07373, 2026.

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 3, 1], [1, 0, 3], [3, 1, 0]])
    >>> dec = spectra_decompose(d)
    >>> len(dec), dec.weights.tolist()
    (2, [3.0, 1.0])
    >>> spectra_decompose(d, method="reference").weights.tolist()
    [3.0, 1.0]
    """
    check_choice(method, "method", METHODS)
    big_delta = demand.max_degree
    if big_delta == 0:
        return Decomposition(np.zeros((0, demand.n), np.int64), np.zeros(0))
    # The rounds see the demand in units of its largest entry: only ratios matter to them, and
    # sums of entries near the float maximum stay finite.
    top = float(demand.values.max())
    unit = demand.values / top
    if method == "reference" or not HAVE_NUMBA:
        perms, weights = _reference(Demand(demand.n, demand.rows, demand.cols, unit))
        inc = None
    else:
        ent, ptr, weights = spectra_rounds(demand.n, demand.rows, demand.cols, unit, big_delta)
        perm_of = np.repeat(np.arange(big_delta), np.diff(ptr))
        perms = np.full((big_delta, demand.n), -1, dtype=np.int64)
        perms[perm_of, demand.rows[ent]] = demand.cols[ent]
        if _each_once(ent, demand.nnz):
            return _one_each(demand, perms, ent, ptr)
        inc = incidence_from(demand.nnz, big_delta, ent, perm_of)
    weights = top_up(demand, perms, weights * top, inc=inc)
    weights = refit_weights(demand, perms, weights, inc=inc)
    return drop_empty(Decomposition(perms, weights), demand, inc=inc)


def _each_once(ent: IntArray, nnz: int) -> bool:
    """True if the rounds put every demand entry on exactly one permutation."""
    return bool(ent.size == nnz and np.bincount(ent, minlength=nnz).max(initial=0) == 1)


def _one_each(demand: Demand, perms: IntArray, ent: IntArray, ptr: IntArray) -> Decomposition:
    """Top-up, refit and drop-empty where every entry lies on exactly one permutation (dense input).

    Then the refit LP has one constraint per entry on one weight each: its optimum is each
    permutation's largest entry, and no sparse incidence matrix is needed. The arithmetic is
    that of :func:`refit_weights` (which scales by the largest entry) and :func:`top_up`, so the
    weights are the general path's to the last bit (a test checks it); on dense n = 2048 the
    general path spent about 3.5 s here, in sparse matrices of 4 million entries.
    """
    size = np.diff(ptr)
    held = size > 0
    starts = ptr[:-1][held]
    scale = float(demand.values.max())
    vals = demand.values[ent]
    w = np.zeros(size.size)
    w[held] = np.maximum.reduceat(vals / scale, starts) * scale
    short = np.maximum.reduceat(vals - np.repeat(w, size), starts)
    w[held] += np.where(short > 0, short, 0.0)  # top_up: the round-off of the rescaling
    smallest = np.full(size.size, np.inf)
    smallest[held] = np.minimum.reduceat(vals, starts)
    keep = held & (w > 0) & ~(w <= 1e-12 * smallest)
    return Decomposition(perms[keep], w[keep])


def _reference(demand: Demand) -> tuple[IntArray, FloatArray]:
    """The original solver's rounds: one dense n x n assignment per round."""
    from scipy.optimize import linear_sum_assignment

    n, rows, cols = demand.n, demand.rows, demand.cols
    big_delta = demand.max_degree
    index = np.full((n, n), -1, dtype=np.int64)  # dense entry index: demand entry e at (i, j)
    index[rows, cols] = np.arange(demand.nnz)
    residual = demand.values.copy()
    uncovered = np.ones(demand.nnz, dtype=bool)
    # Larger than any matching's total residual, so covering critical lines always wins.
    penalty = 2.0 * float(np.sort(demand.values)[-n:].sum())  # relative: any magnitude
    perms = np.full((big_delta, n), -1, dtype=np.int64)
    weights = np.zeros(big_delta)
    for l in range(big_delta):
        left = big_delta - l
        urows, ucols = rows[uncovered], cols[uncovered]
        crit_r = np.bincount(urows, minlength=n) == left
        crit_c = np.bincount(ucols, minlength=n) == left
        cost = np.zeros((n, n))
        cost[rows, cols] = -residual
        allowed = np.zeros((n, n), dtype=bool)
        allowed[urows, ucols] = True
        cost += penalty * ((crit_r[:, None] & ~allowed).astype(np.float64) + (crit_c[None, :] & ~allowed))
        r_idx, c_idx = linear_sum_assignment(cost)
        e = index[r_idx, c_idx]
        on = e >= 0
        # Invariant: every critical line is matched to one of its uncovered nonzeros.
        assert not (crit_r[r_idx] & ~allowed[r_idx, c_idx]).any()
        assert not (crit_c[c_idx] & ~allowed[r_idx, c_idx]).any()
        e = e[on]
        perms[l, r_idx[on]] = c_idx[on]
        pos = residual[e][residual[e] > 0]
        w = float(pos.min()) if pos.size else 0.0
        residual[e] = np.maximum(residual[e] - w, 0.0)
        uncovered[e] = False
        weights[l] = w
    assert not uncovered.any()
    return perms, weights
