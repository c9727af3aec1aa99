"""Failures that happen during a schedule: a switch or a link that stops for good at a time.

:func:`ocsched.reschedule` takes one; :func:`degrade` adds it to a fabric as the down window or
failed link the validator and the schedulers know.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ocsched._checks import check_int, check_number
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, LinkDown, SwitchDown

if TYPE_CHECKING:
    from ocsched.model import Configuration

__all__ = ["LinkFailure", "SwitchFailure", "degrade"]


@dataclass(frozen=True)
class SwitchFailure:
    """Switch ``switch`` (0-based, as in schedule files) stops for good at time ``at``.

    >>> SwitchFailure(3, 0.05)
    SwitchFailure(switch=3, at=0.05)
    """

    switch: int
    at: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "switch", check_int(self.switch, "failed switch", minimum=0))
        object.__setattr__(self, "at", check_number(self.at, "failure time `at`", low=0.0))

    def stops(self, conf: Configuration) -> bool:
        """Whether ``conf``, running on the failed switch at the failure, must stop then: always."""
        return True


@dataclass(frozen=True)
class LinkFailure:
    """The link between ``port`` and switch ``switch`` fails for good at time ``at``.

    >>> LinkFailure(port=2, switch=0, at=1.5)
    LinkFailure(port=2, switch=0, at=1.5)
    """

    port: int
    switch: int
    at: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "port", check_int(self.port, "failed link port", minimum=0))
        object.__setattr__(self, "switch", check_int(self.switch, "failed link switch", minimum=0))
        object.__setattr__(self, "at", check_number(self.at, "failure time `at`", low=0.0))

    def stops(self, conf: Configuration) -> bool:
        """Whether ``conf``, running on the failed switch at the failure, must stop then: if it uses the port.

        >>> from ocsched.model import Configuration
        >>> c = Configuration.from_circuits(0.0, 1.0, [(0, 1)], ports=3)
        >>> LinkFailure(1, 0, 0.5).stops(c), LinkFailure(2, 0, 0.5).stops(c)
        (True, False)
        """
        ins, outs = conf.circuit_arrays()
        return bool(np.any(ins[outs >= 0] == self.port) or np.any(outs == self.port))


def degrade(fabric: Fabric, failure: SwitchFailure | LinkFailure) -> Fabric:
    """Return ``fabric`` with ``failure`` added (a switch down from ``at``, or a link failed from ``at``).

    >>> degrade(Fabric.uniform(2, 0.1), SwitchFailure(1, 0.5)).down
    (SwitchDown(switch=1, start=0.5, end=inf),)
    """
    if not isinstance(failure, SwitchFailure | LinkFailure):
        raise InvalidInputError(
            f"`failure` must be a SwitchFailure or a LinkFailure; got {type(failure).__name__}"
        )
    if failure.switch >= fabric.size:
        raise InvalidInputError(
            f"failed switch {failure.switch} is outside 0..{fabric.size - 1} (switches are 0-based)"
        )
    if isinstance(failure, SwitchFailure):
        return fabric.with_failures(down=[SwitchDown(failure.switch, failure.at)])
    return fabric.with_failures(failed_links=[LinkDown(failure.port, failure.switch, failure.at)])
