"""What a scheduler returns: per-switch configurations and how they were found (:class:`Result`)."""

from __future__ import annotations

from dataclasses import dataclass

from ocsched.model.configuration import Configuration
from ocsched.model.demand import Demand

__all__ = ["Result", "Switches", "latest_end"]

#: Per switch, its configurations in time order.
Switches = tuple[tuple[Configuration, ...], ...]


def latest_end(switches: Switches) -> float:
    """The latest end of a configuration (0 if there is none): the circuits' makespan.

    >>> latest_end(((Configuration.from_circuits(0.5, 1.0, [(0, 1)], ports=2),), ()))
    1.5
    """
    return max((c.end for sw in switches for c in sw), default=0.0)


@dataclass(frozen=True)
class Result:
    """What a scheduler returns: per-switch configurations and how they were found.

    Attributes
    ----------
    switches : tuple of tuple of Configuration
        Per switch, its configurations in time order.
    splits : int
        Extra pieces of permutations or flows.
    status : str
        ``"heuristic"``, or an exact solver's status.
    dual_bound : float or None
        A proved lower bound on the optimum, if the scheduler has one.
    eps : Demand or None
        What goes on the fabric's packet switch (hybrid schedulers only).
    """

    switches: Switches
    splits: int = 0
    status: str = "heuristic"
    dual_bound: float | None = None
    eps: Demand | None = None
