"""Decompose a phase with the permutations it carries in and out: the joint decomposition of neighbours."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ocsched.decompose import decompose, refit_weights
from ocsched.model import Demand
from ocsched.sequence._common import Held, Pieces, in_both, perm_key

#: The exponent on the normalised cost of an entry when choosing carried permutations: a large
#: one makes the assignment nearly a bottleneck one (the largest entry on the permutation is its
#: weight), a finite one still prefers small entries overall. On 16 MoE layers (gaps 0, delta
#: 1 ms) exposed / independent was 0.8010, 0.8001, 0.7993, 0.7993, 0.7988, 0.7988, 0.7985 with
#: 2, 4, 8, 16, 32, 64, 128; 64 keeps most of it while small entries stay far from underflow.
_POWER = 64.0


def useful_held(dense: NDArray[np.float64], held: Held, known: set[bytes]) -> list[NDArray[np.int64]]:
    """The distinct held permutations (not in ``known``) with demand on at least half their circuits."""
    useful: dict[bytes, NDArray[np.int64]] = {}
    for h in held:
        if h is None or perm_key(h.perm) in known or perm_key(h.perm) in useful:
            continue
        on = np.nonzero(h.perm >= 0)[0]
        hits = int((dense[on, h.perm[on]] > 0).sum())
        if on.size and 2 * hits >= on.size:
            useful[perm_key(h.perm)] = h.perm
    return list(useful.values())


def _covered(n: int, perms: list[NDArray[np.int64]]) -> NDArray[np.bool_]:
    covered = np.zeros((n, n), dtype=bool)
    for p in perms:
        on = np.nonzero(p >= 0)[0]
        covered[on, p[on]] = True
    return covered


def _without(demand: Demand, covered: NDArray[np.bool_]) -> Demand:
    keep = ~covered[demand.rows, demand.cols]
    return Demand(demand.n, demand.rows[keep], demand.cols[keep], demand.values[keep])


def carried_out(
    now: NDArray[np.float64], after: NDArray[np.float64], taken: NDArray[np.bool_], count: int
) -> list[NDArray[np.int64]]:
    """Up to ``count`` disjoint perfect matchings on the nonzeros both matrices share, of small entries.

    Each is a minimum-cost assignment over the shared nonzeros not yet ``taken`` (nor by an
    earlier one), the cost of an entry ``max(now, after) ** _POWER`` (normalised): a
    permutation ending one phase and starting the next (it persists, no delay) serves its
    entries whole in both, so its weight in each is its largest entry there; small, even
    entries keep that misfit small, and the large entries are left to the free decomposition,
    which groups them. Stops at the first assignment that needs an entry outside the shared
    support.
    """
    from scipy.optimize import linear_sum_assignment  # here: importing the CLI stays light

    both = (now > 0) & (after > 0) & ~taken
    top = float(max(now.max(initial=0.0), after.max(initial=0.0)))
    if top <= 0.0 or count < 1:
        return []
    cost = (np.maximum(now, after) / top) ** _POWER
    big = float(now.shape[0]) + 1.0  # more than any assignment of shared entries costs (each <= 1)
    out = []
    for _ in range(count):
        c = np.where(both, cost, big)
        rows, cols = linear_sum_assignment(c)
        if not both[rows, cols].all():
            break
        out.append(cols.astype(np.int64))
        both[rows, cols] = False
    return out


def can_carry(now: Demand, after: Demand) -> bool:
    """Whether some permutation could end phase ``now`` and start ``after``, serving both whole.

    That is a perfect matching of the nonzeros the two share.
    """
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_bipartite_matching  # here: importing the CLI stays light

    if now.n != after.n or now.nnz == 0 or after.nnz == 0:
        return False
    both = in_both(now, after)
    graph = csr_array((np.ones(int(both.sum())), (now.rows[both], now.cols[both])), shape=(now.n, now.n))
    return bool((maximum_bipartite_matching(graph, perm_type="column") >= 0).all())


def carry(
    demand: Demand,
    following: Demand | None,
    held: Held,
    method: str,
    delta: float,
    count: int,
    known: set[bytes] | None = None,
) -> tuple[Pieces, Pieces] | None:
    """Decompose ``demand`` around what it carries in (``held``) and out (for ``following``).

    The held permutations with demand on at least half their circuits (and not in ``known``,
    permutations the caller has already) are kept (they run first,
    at no delay); up to ``count`` permutations chosen by :func:`carried_out` for the next phase's
    demand ``following`` are kept too (to run last, so that they persist into it); ``method``
    decomposes the rest, and one LP re-fits every weight. On consecutive dense phases (MoE
    layers: each combine the transpose of its dispatch) a phase then pays no delay for its first
    configuration on every switch while its total weight stays within a few percent of its own
    decomposition's, where keeping whatever the switches happened to end with costs about 20%.

    Returns
    -------
    (pieces, tails) or None
        ``pieces`` are the kept held permutations and the free decomposition, ``tails`` the
        carried-out permutations, each with its weight; None when nothing is carried either way.
    """
    if demand.nnz == 0:
        return None
    dense = demand.to_dense()
    kept = useful_held(dense, held, known or set())
    covered = _covered(demand.n, kept)
    outs: list[NDArray[np.int64]] = []
    if following is not None and following.nnz and following.n == demand.n:
        outs = carried_out(dense, following.to_dense(), covered, count)
    if not kept and not outs:
        return None
    rest = _without(demand, covered | _covered(demand.n, outs))
    free = [] if rest.nnz == 0 else list(decompose(rest, method=method, delta=delta).perms)
    perms = np.array([*kept, *free, *outs], dtype=np.int64).reshape(-1, demand.n)
    weights = refit_weights(demand, perms)
    split = len(kept) + len(free)
    pieces = [(p, float(w)) for p, w in zip(perms[:split], weights[:split], strict=True) if w > 0]
    tails = [(p, float(w)) for p, w in zip(perms[split:], weights[split:], strict=True) if w > 0]
    return pieces, tails
