"""The fabric: the parallel switches a schedule runs on, their delays and rates, and what has failed.

A :class:`Fabric` is a tuple of :class:`Switch` (each with its own reconfiguration delay and
rate), the switches' down windows, the failed port links, and the reconfiguration model
(``"all-stop"``: every configuration is preceded by the switch's full delay, the paper's model;
``"partial"``: circuits kept from one configuration to the next stay lit). ``Fabric.uniform(s,
delta)`` is today's fabric: s identical all-stop switches of rate 1 that never fail.

The timing rule itself lives in :mod:`ocsched.timing`; this module only describes the fabric and
checks that a description is well formed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ocsched._checks import check_choice, check_delta, check_int, check_number, check_switches
from ocsched.errors import InvalidInputError

__all__ = ["MODELS", "Fabric", "LinkDown", "Switch", "SwitchDown"]

#: Reconfiguration models: every configuration pays the full delay, or kept circuits stay lit.
MODELS = ("all-stop", "partial")


@dataclass(frozen=True)
class Switch:
    """One OCS: its reconfiguration delay and its rate relative to the demand's line rate.

    A switch of rate c serves ``c * t`` of demand in ``t`` time.

    >>> Switch(0.01, rate=2.0)
    Switch(delta=0.01, rate=2.0)
    """

    delta: float
    rate: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_delta(self.delta, name="switch delta"))
        rate = check_number(self.rate, "switch rate", low=0.0, closed=False)
        object.__setattr__(self, "rate", rate)


@dataclass(frozen=True)
class SwitchDown:
    """Switch ``switch`` (0-based) carries nothing during ``[start, end)`` (``end=inf``: for good).

    >>> SwitchDown(2, 0.5)
    SwitchDown(switch=2, start=0.5, end=inf)
    """

    switch: int
    start: float
    end: float = math.inf

    def __post_init__(self) -> None:
        object.__setattr__(self, "switch", check_int(self.switch, "down switch", minimum=0))
        start = check_number(self.start, "down start")
        end = self.end if self.end == math.inf else check_number(self.end, "down end")
        if not end > start:
            raise InvalidInputError(f"a down window must end after it starts; got [{start}, {end})")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", float(end))


@dataclass(frozen=True)
class LinkDown:
    """The link between ``port`` and switch ``switch`` has failed: no circuit from or to ``port`` there.

    >>> LinkDown(port=3, switch=1)
    LinkDown(port=3, switch=1)
    """

    port: int
    switch: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "port", check_int(self.port, "failed link port", minimum=0))
        object.__setattr__(self, "switch", check_int(self.switch, "failed link switch", minimum=0))


@dataclass(frozen=True)
class Fabric:
    """Parallel switches with their delays, rates and failures, and the reconfiguration model.

    Attributes
    ----------
    switches : tuple of Switch
        One entry per OCS, numbered from 0 as in schedule files.
    down : tuple of SwitchDown
        Windows during which a switch carries nothing.
    failed_links : tuple of LinkDown
        Port links that carry nothing, for the whole schedule.
    model : {"all-stop", "partial"}
        The reconfiguration model (see :mod:`ocsched.timing`).

    Examples
    --------
    >>> f = Fabric.uniform(4, 0.04)
    >>> f.size, f.is_uniform, f.deltas
    (4, True, (0.04, 0.04, 0.04, 0.04))
    >>> Fabric((Switch(0.01), Switch(0.1, rate=2.0))).is_uniform
    False
    """

    switches: tuple[Switch, ...]
    down: tuple[SwitchDown, ...] = ()
    failed_links: tuple[LinkDown, ...] = ()
    model: str = "all-stop"

    def __post_init__(self) -> None:
        sw = tuple(self.switches)
        if not sw or not all(isinstance(x, Switch) for x in sw):
            raise InvalidInputError(
                f"`switches` must be a non-empty sequence of Switch; got {self.switches!r}"
            )
        object.__setattr__(self, "switches", sw)
        object.__setattr__(self, "down", tuple(self.down))
        object.__setattr__(self, "failed_links", tuple(self.failed_links))
        check_choice(self.model, "model", MODELS)
        for d in self.down:
            if not isinstance(d, SwitchDown) or d.switch >= len(sw):
                raise InvalidInputError(f"down window {d!r} names a switch outside 0..{len(sw) - 1}")
        for link in self.failed_links:
            if not isinstance(link, LinkDown) or link.switch >= len(sw):
                raise InvalidInputError(f"failed link {link!r} names a switch outside 0..{len(sw) - 1}")

    @classmethod
    def uniform(cls, switches: int, delta: float, *, model: str = "all-stop") -> Fabric:
        """Return ``switches`` identical switches of delay ``delta`` and rate 1 that never fail."""
        s = check_switches(switches)
        return cls((Switch(check_delta(delta)),) * s, model=model)

    @classmethod
    def from_deltas(cls, deltas: Iterable[float], *, rates: Sequence[float] | None = None) -> Fabric:
        """Return one switch per delay (rates default to 1).

        >>> Fabric.from_deltas([0.01, 0.04]).deltas
        (0.01, 0.04)
        """
        ds = list(deltas)
        rs = [1.0] * len(ds) if rates is None else list(rates)
        if len(rs) != len(ds):
            raise InvalidInputError(f"`rates` must have one entry per switch ({len(ds)}); got {len(rs)}")
        return cls(tuple(Switch(d, r) for d, r in zip(ds, rs, strict=True)))

    @property
    def size(self) -> int:
        """Number of switches s."""
        return len(self.switches)

    @property
    def deltas(self) -> tuple[float, ...]:
        """Each switch's reconfiguration delay."""
        return tuple(x.delta for x in self.switches)

    @property
    def rates(self) -> tuple[float, ...]:
        """Each switch's rate."""
        return tuple(x.rate for x in self.switches)

    @property
    def is_uniform(self) -> bool:
        """True for today's fabric: identical rate-1 all-stop switches, nothing failed."""
        first = self.switches[0]
        return (
            first.rate == 1.0
            and all(x == first for x in self.switches)
            and not self.down
            and not self.failed_links
            and self.model == "all-stop"
        )

    def check_ports(self, ports: int) -> None:
        """Raise if a failed link names a port outside ``0..ports-1``."""
        for link in self.failed_links:
            if link.port >= ports:
                raise InvalidInputError(f"failed link {link!r} names a port outside 0..{ports - 1}")
