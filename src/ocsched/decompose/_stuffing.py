"""Stuffing to equal line sums (Solstice's QuickStuff) and the clean-up every peer decomposition needs."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched.decompose._common import Decomposition, top_up
from ocsched.decompose.spectra import spectra_decompose
from ocsched.errors import InvalidInputError
from ocsched.model import Demand

__all__ = ["finish", "quick_stuff"]

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Residue below this fraction of the largest entry counts as served (float round-off).
TOL = 1e-12


def finish(demand: Demand, perms: IntArray, weights: FloatArray) -> Decomposition:
    """Keep only demand circuits, drop empty matchings, and make coverage exact.

    Round-off can leave a flow a hair short; :func:`~ocsched.decompose.top_up` raises the
    weights by the (tiny) shortfall. A flow that lies on no matching at all (only possible when
    round-off stopped a loop early) gets matchings of its own from Spectra's decomposition.
    """
    n = demand.n
    support = np.zeros((n, n), dtype=bool)
    support[demand.rows, demand.cols] = True
    perms = np.array(perms, dtype=np.int64).reshape(-1, n)
    weights = np.asarray(weights, dtype=np.float64)
    if perms.size:
        i = np.broadcast_to(np.arange(n), perms.shape)
        perms = np.where((perms >= 0) & support[i, np.maximum(perms, 0)], perms, -1)
    keep = (perms >= 0).any(axis=1) & (weights > 0)
    perms, weights = perms[keep], weights[keep]
    if demand.nnz == 0:
        return Decomposition(perms, weights)
    on_some = (perms[:, demand.rows] == demand.cols[None, :]).any(axis=0)
    if not on_some.all():
        rest = spectra_decompose(
            Demand(n, demand.rows[~on_some], demand.cols[~on_some], demand.values[~on_some])
        )
        perms = np.concatenate([perms, rest.perms])
        weights = np.concatenate([weights, rest.weights])
    return Decomposition(perms, top_up(demand, perms, weights))


def is_perfect(mask: NDArray[np.bool_]) -> IntArray | None:
    """A perfect matching inside ``mask`` (``perm[i] = j``), or None if there is none."""
    from scipy.sparse.csgraph import maximum_bipartite_matching

    match = maximum_bipartite_matching(sp.csr_array(mask), perm_type="column")
    return None if (match < 0).any() else np.asarray(match, dtype=np.int64)


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
