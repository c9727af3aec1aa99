"""The inclusion-maximal matchings of a demand's support: the columns of the exact model."""

from __future__ import annotations

import numpy as np

from ocsched._types import IntArray
from ocsched.errors import InvalidInputError
from ocsched.model import Demand

__all__ = ["MAX_MATCHINGS", "maximal_matchings"]


#: :func:`solve_exact` refuses a demand whose support has more maximal matchings than this.
MAX_MATCHINGS = 20_000


def maximal_matchings(demand: Demand, *, limit: int = MAX_MATCHINGS) -> IntArray:
    """Return every inclusion-maximal matching of the demand's support, as rows ``perm[i] = j``.

    Raises
    ------
    InvalidInputError
        If there are more than ``limit`` of them (the instance is too large for the exact model).

    Examples
    --------
    >>> d = Demand.from_matrix([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    >>> maximal_matchings(d).tolist()
    [[1, 0, -1], [1, 2, 0], [2, 0, 1], [2, -1, 0], [-1, 2, 1]]
    """
    n = demand.n
    adj: list[list[int]] = [[] for _ in range(n)]
    for i, j in zip(demand.rows.tolist(), demand.cols.tolist(), strict=True):
        adj[i].append(j)
    out: list[list[int]] = []
    perm = [-1] * n
    used = [False] * n

    def rec(i: int) -> None:
        if i == n:
            # Maximal: no support edge joins an unmatched row to an unmatched column.
            if all(perm[r] >= 0 or all(used[c] for c in adj[r]) for r in range(n)):
                out.append(perm.copy())
                if len(out) > limit:
                    raise InvalidInputError(
                        f"`demand` has more than {limit} maximal matchings in its support "
                        f"(n = {n}, {demand.nnz} nonzeros); the exact model is for small instances"
                    )
            return
        for j in adj[i]:
            if not used[j]:
                used[j] = True
                perm[i] = j
                rec(i + 1)
                used[j] = False
                perm[i] = -1
        rec(i + 1)

    rec(0)
    return np.array(out, dtype=np.int64).reshape(len(out), n)
