"""Stuffing to equal line sums (Solstice's QuickStuff) and the clean-up every peer decomposition needs."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._types import FloatArray, IntArray
from ocsched.decompose._common import Decomposition, incidence, top_up
from ocsched.decompose.spectra import spectra_decompose
from ocsched.errors import InvalidInputError
from ocsched.model import Demand

__all__ = ["entries_of", "finish", "perfect_on", "quick_stuff", "unit_scale"]


#: Residue below this fraction of the largest entry counts as served (float round-off).
TOL = 1e-12


def finish(demand: Demand, perms: IntArray, weights: FloatArray) -> Decomposition:
    """Keep only demand circuits, drop empty matchings, and make coverage exact.

    Round-off can leave a flow a hair short; :func:`~ocsched.decompose.top_up` raises the
    weights by the (tiny) shortfall. A flow that lies on no matching at all (only possible when
    round-off stopped a loop early) gets matchings of its own from Spectra's decomposition.
    """
    n = demand.n
    perms = np.array(perms, dtype=np.int64).reshape(-1, n)
    weights = np.asarray(weights, dtype=np.float64)
    if perms.size:  # keep only circuits on demand entries (no n x n support array)
        inc = incidence(demand, perms).tocoo()
        kept = np.full(perms.shape, -1, dtype=np.int64)
        kept[inc.col, demand.rows[inc.row]] = demand.cols[inc.row]
        perms = kept
    keep = (perms >= 0).any(axis=1) & (weights > 0)
    perms, weights = perms[keep], weights[keep]
    if demand.nnz == 0:
        return Decomposition(perms, weights)
    on_some = np.diff(incidence(demand, perms).indptr) > 0
    if not on_some.all():
        rest = spectra_decompose(
            Demand(n, demand.rows[~on_some], demand.cols[~on_some], demand.values[~on_some])
        )
        perms = np.concatenate([perms, rest.perms])
        weights = np.concatenate([weights, rest.weights])
    return Decomposition(perms, top_up(demand, perms, weights))


def perfect_on(n: int, rows: IntArray, cols: IntArray, keep: NDArray[np.bool_]) -> IntArray | None:
    """A perfect matching (``perm[i] = j``) among the entries ``keep`` of a row-major support, or None.

    The graph and its adjacency order are those of the dense n x n mask of these entries, so scipy
    finds the same matching as on that mask; the cost is O(nnz) instead of O(n^2).
    """
    from scipy.sparse.csgraph import maximum_bipartite_matching

    r, c = rows[keep], cols[keep]
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    graph = sp.csr_array((np.ones(r.size, dtype=np.int8), c.astype(np.int32), indptr), shape=(n, n))
    match = maximum_bipartite_matching(graph, perm_type="column")
    return None if (match < 0).any() else np.asarray(match, dtype=np.int64)


def unit_scale(demand: Demand) -> float:
    """The power of two at or below the largest entry (1 if none): dividing by it is exact."""
    top = float(demand.values.max(initial=0.0))
    return 2.0 ** math.floor(math.log2(top)) if top > 0 else 1.0


def entries_of(n: int, rows: IntArray, cols: IntArray, match: IntArray) -> IntArray:
    """Positions of the circuits ``i -> match[i]`` in a row-major support (all must be on it)."""
    keys = rows * n + cols
    return np.searchsorted(keys, np.arange(n, dtype=np.int64) * n + match).astype(np.int64)


def dense(matrix: ArrayLike, name: str) -> FloatArray:
    try:
        m = np.array(matrix, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"`{name}` must be a square numeric matrix; {exc}") from None
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise InvalidInputError(f"`{name}` must be a non-empty square matrix; got shape {m.shape}")
    bad = ~np.isfinite(m) | (m < 0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InvalidInputError(f"`{name}` must be finite and non-negative; {name}[{i}, {j}] = {m[i, j]}")
    return m


def quick_stuff(matrix: ArrayLike) -> FloatArray:
    """Raise a non-negative matrix to equal line sums, Solstice's QuickStuff.

    Every row and column sum becomes T, the largest line sum of the input.

    Parameters
    ----------
    matrix : array_like, shape (n, n)
        Non-negative finite matrix.

    Returns
    -------
    ndarray of float64, shape (n, n)
        The stuffed matrix, entrywise >= the input. The diagonal may be used.

    Raises
    ------
    InvalidInputError
        If ``matrix`` is not square, empty, negative or not finite.

    Notes
    -----
    First each nonzero, in row-major order, is raised by ``min(row slack, column slack)``, so the
    support grows as little as possible. Then, while slack is left, the row and the column with
    the most slack get an entry of ``min`` of the two slacks. The slacks of rows and of columns
    have equal totals, so every step exhausts at least one line: at most 2n steps. Every step
    sets the exhausted slack exactly to 0, so line sums are equal to within round-off.

    References
    ----------
    Liu, Mukerjee, Li, Feltman, Papen, Savage, Seshan, Voelker, Andersen, Kaminsky, Porter,
    Snoeren. Scheduling techniques for hybrid circuit/packet networks. CoNEXT 2015.

    Examples
    --------
    >>> quick_stuff([[0, 2, 0], [0, 0, 1], [1, 0, 0]]).tolist()
    [[0.0, 2.0, 0.0], [0.0, 0.0, 2.0], [2.0, 0.0, 0.0]]
    >>> quick_stuff([[0, 1], [0, 0]]).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    d = dense(matrix, "matrix")
    top = max(float(d.sum(axis=1).max()), float(d.sum(axis=0).max()))
    if top == 0:
        return d
    tol = TOL * top
    rs = (top - d.sum(axis=1)).tolist()
    cs = (top - d.sum(axis=0)).tolist()

    def add(i: int, j: int) -> None:
        a = min(rs[i], cs[j])
        d[i, j] += a
        if rs[i] <= cs[j]:
            cs[j] -= a
            rs[i] = 0.0
        else:
            rs[i] -= a
            cs[j] = 0.0

    for i, j in zip(*np.nonzero(d), strict=True):
        if rs[i] > tol and cs[j] > tol:
            add(int(i), int(j))
    while True:
        i = max(range(len(rs)), key=rs.__getitem__)
        j = max(range(len(cs)), key=cs.__getitem__)
        if min(rs[i], cs[j]) <= tol:
            break
        add(i, j)
    return d
