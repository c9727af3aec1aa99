"""Exact optima for small instances, by mixed-integer programming.

A lower bound says how good a schedule could be; an exact optimum says how good it can be.

- :func:`optimal_split` places a *fixed* set of weighted permutations on s switches optimally,
  allowing splits: the best any Schedule+Equalize step can do with those permutations.
- :func:`solve_exact` solves the whole problem (choice of matchings, durations and switches) for
  small n; it is registered as the scheduler ``"exact"``.

Both are MILPs solved with HiGHS through :func:`scipy.optimize.milp`, which reports the incumbent,
the dual bound and the gap when it stops at a limit; the optional ``highspy`` package is not
needed. The default limits are work (branch-and-bound nodes, status ``"node_limit"``), so a result
never depends on the machine or its load; a time limit is an explicit option, recorded as status
``"time_limit"``. Neither is an exception.
"""

from __future__ import annotations

from ocsched.exact.matchings import MAX_MATCHINGS, maximal_matchings
from ocsched.exact.near import NEAR_OPTIMAL_NODES, NEAR_OPTIMAL_SIZE, near_optimal
from ocsched.exact.placement import optimal_split
from ocsched.exact.results import ExactResult, SplitResult
from ocsched.exact.solve import DEFAULT_NODE_LIMIT, MAX_EXACT_PORTS, solve_exact

__all__ = [
    "DEFAULT_NODE_LIMIT",
    "MAX_EXACT_PORTS",
    "MAX_MATCHINGS",
    "NEAR_OPTIMAL_NODES",
    "NEAR_OPTIMAL_SIZE",
    "ExactResult",
    "SplitResult",
    "maximal_matchings",
    "near_optimal",
    "optimal_split",
    "solve_exact",
]
