"""Decompose a demand matrix into weighted permutations (matchings).

A decomposition is a list of partial permutations ``perms[l]`` (``perms[l, i] = j`` or -1) with
weights ``w[l] >= 0`` such that ``sum_l w[l] * P_l >= D`` entrywise. Each permutation becomes one
configuration (or several pieces) of a schedule, so fewer permutations mean fewer delays.

Every method is an entry of :data:`DECOMPOSERS`, reached through :func:`decompose`:

==============  ==================================================================================
``spectra``     Spectra: exactly Delta permutations (the fewest), max-residual matchings, LP refit
``spectra-reference``  the same by the original dense solver (to cross-check and benchmark)
``eclipse``     Eclipse: greedy max served / (alpha + delta) matchings (uses ``delta``)
``solstice``    Solstice: QuickStuff, then perfect matchings on entries >= r, r halving
``bvn``         Birkhoff-von Neumann on the stuffed matrix, max-bottleneck perfect matchings
==============  ==================================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_choice, check_delta
from ocsched.decompose._common import Decomposition, refit_weights, top_up
from ocsched.decompose.bvn import bvn_decompose
from ocsched.decompose.eclipse import eclipse_decompose
from ocsched.decompose.solstice import solstice_decompose
from ocsched.decompose.spectra import spectra_decompose
from ocsched.model import Demand, as_demand

__all__ = [
    "DECOMPOSERS",
    "Decomposer",
    "Decomposition",
    "bvn_decompose",
    "decompose",
    "eclipse_decompose",
    "refit_weights",
    "solstice_decompose",
    "spectra_decompose",
    "top_up",
]


@dataclass(frozen=True)
class Decomposer:
    """A registered decomposition method.

    ``func(demand, delta)`` returns a :class:`Decomposition`; methods that ignore the delay
    (all but Eclipse) ignore ``delta``.
    """

    func: Callable[[Demand, float], Decomposition]
    description: str


DECOMPOSERS: dict[str, Decomposer] = {
    "spectra": Decomposer(
        lambda d, delta: spectra_decompose(d),
        "Delta permutations (the fewest), max-residual matchings, LP-refit weights",
    ),
    "spectra-reference": Decomposer(
        lambda d, delta: spectra_decompose(d, method="reference"),
        "Spectra's decomposition by the original solver (one dense assignment per round)",
    ),
    "eclipse": Decomposer(
        lambda d, delta: eclipse_decompose(d, delta=delta),
        "Eclipse: greedy matchings maximising served / (alpha + delta)",
    ),
    "solstice": Decomposer(
        lambda d, delta: solstice_decompose(d), "Solstice: QuickStuff + power-of-two slicing"
    ),
    "bvn": Decomposer(
        lambda d, delta: bvn_decompose(d), "Birkhoff-von Neumann, max-bottleneck perfect matchings"
    ),
}


def decompose(
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand, *, method: str = "spectra", delta: float = 0.0
) -> Decomposition:
    """Decompose ``demand`` with the named method (a key of :data:`DECOMPOSERS`).

    Parameters
    ----------
    demand : array_like, sparse matrix or Demand
        The demand (validated like every input: square, finite, non-negative).
    method : str
        A key of :data:`DECOMPOSERS`.
    delta : float
        Reconfiguration delay, for the methods that weigh it (Eclipse).

    Raises
    ------
    InvalidInputError
        For an unknown method (the message lists the valid ones) or a bad ``delta``.

    Examples
    --------
    >>> decompose([[0, 1], [1, 0]]).weights.tolist()
    [1.0]
    """
    check_choice(method, "method", DECOMPOSERS)
    return DECOMPOSERS[method].func(as_demand(demand), check_delta(delta))
