"""Lower bounds on the makespan: no valid schedule can finish earlier.

Every bound is a named function with its proof in the docstring; :func:`lower_bound` returns the
maximum of all of them. One module per family of arguments:

- :mod:`ocsched.bounds.lines`: one row or column at a time (line, degree, refined).
"""

from __future__ import annotations

import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._checks import check_delta, check_switches
from ocsched.bounds.lines import degree_bound, line_bound, refined_bound
from ocsched.model import Demand, as_demand

__all__ = ["degree_bound", "line_bound", "lower_bound", "refined_bound"]


def lower_bound(
    demand: ArrayLike | sp.sparray | sp.spmatrix | Demand, *, switches: int, delta: float
) -> float:
    """Return a makespan that no valid schedule can beat.

    The maximum of :func:`line_bound`, :func:`degree_bound` and :func:`refined_bound` (which
    dominates the other two; they are kept as cross-checks). Each docstring holds its proof.

    Parameters
    ----------
    demand : array_like, sparse matrix or Demand
        n x n non-negative demand.
    switches : int
        Number of parallel switches s >= 1.
    delta : float
        Reconfiguration delay >= 0.

    Returns
    -------
    float
        The bound (0 for an all-zero demand).

    Examples
    --------
    >>> round(lower_bound([[0, 1], [1, 0]], switches=2, delta=0.1), 9)
    0.6
    """
    dem = as_demand(demand)
    s = check_switches(switches)
    d = check_delta(delta)
    return max(
        line_bound(dem, switches=s, delta=d),
        degree_bound(dem, switches=s, delta=d),
        refined_bound(dem, switches=s, delta=d),
    )
