"""What a scheduler returns: per-switch configurations and how they were found (:class:`Result`)."""

from __future__ import annotations

from dataclasses import dataclass

from ocsched.model.configuration import Configuration
from ocsched.model.demand import Demand

__all__ = ["Result", "Switches"]

#: Per switch, its configurations in time order.
Switches = tuple[tuple[Configuration, ...], ...]


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
