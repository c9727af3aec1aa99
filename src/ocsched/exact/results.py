"""The results of the exact MILPs: a status, the best answer found, its proved bound and gap."""

from __future__ import annotations

from dataclasses import dataclass

from ocsched.assign import Assignment
from ocsched.model import Schedule

__all__ = ["ExactResult", "SplitResult"]


@dataclass(frozen=True, eq=False)
class SplitResult:
    """The result of :func:`optimal_split`.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"node_limit"`` or ``"time_limit"`` (best assignment found so far) or
        ``"error"``.
    makespan : float
        The largest switch load of ``assignment``.
    assignment : list of list of (int, float)
        Per switch, the pieces ``(permutation index, length)`` (the format of :mod:`ocsched.assign`).
    dual_bound : float
        No assignment of these permutations has a smaller makespan.
    gap : float
        ``(makespan - dual_bound) / makespan`` (0 when both are 0).
    """

    status: str
    makespan: float
    assignment: Assignment
    dual_bound: float
    gap: float


@dataclass(frozen=True, eq=False)
class ExactResult:
    """The result of :func:`solve_exact`.

    Attributes
    ----------
    status : str
        ``"optimal"`` (proved within the solver's tolerance), ``"node_limit"`` or
        ``"time_limit"`` (the limit was reached: ``schedule`` is the best found, ``dual_bound``
        what is proved), ``"heuristic"`` (the partial model, where the all-stop optimum is not
        proved optimal), ``"infeasible"`` or ``"error"`` (solver failures; ``schedule`` is then
        the best incumbent).
    schedule : Schedule
        The best valid schedule found (``algorithm="exact"``).
    makespan : float
        ``schedule.makespan``.
    dual_bound : float
        No valid schedule has a smaller makespan: the solver's bound, never below
        :func:`ocsched.lower_bound`.
    gap : float
        ``(makespan - dual_bound) / makespan`` (0 when both are 0).
    runtime : float
        Wall-clock seconds spent (a measurement only: it never changes the result).
    matchings : int
        Number of maximal matchings of the demand's support (the model's size).
    nodes : int
        Branch-and-bound nodes explored.
    """

    status: str
    schedule: Schedule
    makespan: float
    dual_bound: float
    gap: float
    runtime: float
    matchings: int
    nodes: int = 0

    @property
    def optimal(self) -> bool:
        """True if optimality was proved."""
        return self.status == "optimal"
