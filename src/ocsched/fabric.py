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

import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ocsched._checks import check_bool, check_choice, check_delta, check_int, check_number, check_switches
from ocsched._limits import MAX_DOWN_WINDOWS as MAX_DOWN_WINDOWS
from ocsched._limits import MAX_FAILED_LINKS as MAX_FAILED_LINKS
from ocsched._limits import MAX_PORTS_PER_ENDPOINT as MAX_PORTS_PER_ENDPOINT
from ocsched._limits import MAX_SWITCHES as MAX_SWITCHES
from ocsched.errors import InvalidInputError
from ocsched.timing.models import RECONFIGURATIONS, Reconfiguration, reconfiguration

if TYPE_CHECKING:
    pass

__all__ = [
    "MAX_DOWN_WINDOWS",
    "MAX_FAILED_LINKS",
    "MAX_PORTS_PER_ENDPOINT",
    "MAX_SWITCHES",
    "MODELS",
    "Fabric",
    "LinkDown",
    "Switch",
    "SwitchDown",
    "as_fabric",
]

#: Reconfiguration models: every configuration pays the full delay, or kept circuits stay lit.
MODELS = tuple(RECONFIGURATIONS)


@dataclass(frozen=True)
class Switch:
    """One OCS: its reconfiguration delay and its rate relative to the demand's line rate.

    A switch of rate c serves ``c * t`` of demand in ``t`` time. Each endpoint has
    ``ports_per_endpoint`` ports on it (k): a configuration is a set of circuits in which every
    endpoint is the input of at most k circuits and the output of at most k. With
    ``bidirectional`` a circuit ``(a, b)`` joins a and b both ways (serving ``D[a, b]`` and
    ``D[b, a]`` at once, each at the rate) and uses one of the k ports of each end.

    >>> Switch(0.01, rate=2.0)
    Switch(delta=0.01, rate=2.0)
    >>> Switch(0.01, bidirectional=True, ports_per_endpoint=2).ports_per_endpoint
    2
    """

    delta: float
    rate: float = 1.0
    bidirectional: bool = field(default=False, repr=False)
    ports_per_endpoint: int = field(default=1, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_delta(self.delta, name="switch delta"))
        rate = check_number(self.rate, "switch rate", low=0.0, closed=False)
        object.__setattr__(self, "rate", rate)
        object.__setattr__(self, "bidirectional", check_bool(self.bidirectional, "switch bidirectional"))
        k = check_int(
            self.ports_per_endpoint, "switch ports_per_endpoint", minimum=1, maximum=MAX_PORTS_PER_ENDPOINT
        )
        object.__setattr__(self, "ports_per_endpoint", k)

    @property
    def is_plain(self) -> bool:
        """True for one directed link per endpoint (the classic OCS model)."""
        return not self.bidirectional and self.ports_per_endpoint == 1


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
    """The link between ``port`` and switch ``switch`` fails at ``start`` (default 0: from the outset).

    From ``start`` on, no circuit from or to ``port`` can be lit on that switch; a configuration
    using the port there must end by ``start``.

    >>> LinkDown(port=3, switch=1)
    LinkDown(port=3, switch=1, start=0.0)
    """

    port: int
    switch: int
    start: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "port", check_int(self.port, "failed link port", minimum=0))
        object.__setattr__(self, "switch", check_int(self.switch, "failed link switch", minimum=0))
        object.__setattr__(self, "start", check_number(self.start, "failed link start", low=0.0))


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
    eps_rate : float
        Rate rho >= 0 of each port's link to an electrical packet switch beside the OCSes (in
        units of one OCS link's rate; 0: no EPS). See :mod:`ocsched.hybrid` for the model.
    eps_latency : float
        The EPS's latency L >= 0: traffic on it is delivered from L on.

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
    eps_rate: float = 0.0
    eps_latency: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps_rate", check_number(self.eps_rate, "eps_rate", low=0.0))
        lat = check_number(self.eps_latency, "eps_latency", low=0.0)
        # Without a packet switch its latency means nothing: dropped, so such a fabric is plain.
        object.__setattr__(self, "eps_latency", lat if self.eps_rate else 0.0)
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
        """Return ``switches`` identical switches of delay ``delta`` and rate 1 that never fail.

        >>> Fabric.uniform(2, 0.5, model="partial").model
        'partial'
        """
        s = check_switches(switches)
        return cls((Switch(check_delta(delta)),) * s, model=model)

    @classmethod
    def from_deltas(
        cls, deltas: Iterable[float], *, rates: Sequence[float] | None = None, model: str = "all-stop"
    ) -> Fabric:
        """Return one switch per delay (rates default to 1).

        >>> Fabric.from_deltas([0.01, 0.04]).deltas
        (0.01, 0.04)
        """
        ds = list(deltas)
        rs = [1.0] * len(ds) if rates is None else list(rates)
        if len(rs) != len(ds):
            raise InvalidInputError(f"`rates` must have one entry per switch ({len(ds)}); got {len(rs)}")
        return cls(tuple(Switch(d, r) for d, r in zip(ds, rs, strict=True)), model=model)

    @property
    def size(self) -> int:
        """Number of switches s."""
        return len(self.switches)

    @cached_property
    def deltas(self) -> tuple[float, ...]:
        """Each switch's reconfiguration delay."""
        return tuple(x.delta for x in self.switches)

    @cached_property
    def rates(self) -> tuple[float, ...]:
        """Each switch's rate."""
        return tuple(x.rate for x in self.switches)

    @cached_property
    def is_uniform(self) -> bool:
        """True for today's fabric: identical rate-1 all-stop switches, nothing failed."""
        first = self.switches[0]
        return (
            first.rate == 1.0
            and first.is_plain
            and all(x == first for x in self.switches)
            and not self.down
            and not self.failed_links
            and not self.reconfiguration.keeps_circuits
            and self.eps_rate == 0
        )

    def check_ports(self, ports: int) -> None:
        """Raise if a failed link names a port outside ``0..ports-1``."""
        for link in self.failed_links:
            if link.port >= ports:
                raise InvalidInputError(f"failed link {link!r} names a port outside 0..{ports - 1}")

    def windows(self, switch: int) -> list[tuple[float, float]]:
        """Return the down windows of ``switch`` as sorted ``(start, end)`` pairs.

        >>> Fabric.from_deltas([0.1, 0.1]).windows(0)
        []
        """
        return list(self._windows[switch])

    @cached_property
    def _windows(self) -> tuple[tuple[tuple[float, float], ...], ...]:
        """Every switch's sorted down windows (placement asks for them switch by switch, often)."""
        per: list[list[tuple[float, float]]] = [[] for _ in self.switches]
        for d in self.down:
            per[d.switch].append((d.start, d.end))
        return tuple(tuple(sorted(w)) for w in per)

    def failed_ports(self, switch: int) -> dict[int, float]:
        """Return ``{port: time its link to switch fails}`` (the earliest, if listed twice)."""
        out: dict[int, float] = {}
        for x in self.failed_links:
            if x.switch == switch:
                out[x.port] = min(x.start, out.get(x.port, math.inf))
        return out

    def with_failures(self, down: Iterable[SwitchDown] = (), failed_links: Iterable[LinkDown] = ()) -> Fabric:
        """Return this fabric with more down windows and failed links.

        >>> Fabric.uniform(2, 0.1).with_failures([SwitchDown(1, 0.5)]).down
        (SwitchDown(switch=1, start=0.5, end=inf),)
        """
        return dataclasses.replace(
            self, down=self.down + tuple(down), failed_links=self.failed_links + tuple(failed_links)
        )

    @property
    def reconfiguration(self) -> Reconfiguration:
        """The reconfiguration model as an object (what it means: :mod:`ocsched.timing.models`).

        >>> Fabric.uniform(2, 0.5, model="partial").reconfiguration.keeps_circuits
        True
        """
        return reconfiguration(self.model)

    def with_model(self, model: str) -> Fabric:
        """Return this fabric with reconfiguration model ``model``."""
        return dataclasses.replace(self, model=model)

    def with_eps(self, rate: float, latency: float = 0.0) -> Fabric:
        """Return this fabric with a packet switch of per-port rate ``rate`` and latency ``latency``.

        >>> Fabric.uniform(2, 0.1).with_eps(0.5).eps_rate
        0.5
        """
        return dataclasses.replace(self, eps_rate=rate, eps_latency=latency)

    def without_eps(self) -> Fabric:
        """Return the circuits alone (no packet switch)."""
        return dataclasses.replace(self, eps_rate=0.0, eps_latency=0.0)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON/TOML-ready form read by :meth:`from_dict`.

        >>> Fabric.from_dict(Fabric.from_deltas([0.1, 0.2]).to_dict()) == Fabric.from_deltas([0.1, 0.2])
        True
        """
        return {
            "model": self.model,
            "switches": [{"delta": x.delta, "rate": x.rate, **_port_keys(x)} for x in self.switches],
            "down": [
                {"switch": d.switch, "start": d.start, **({} if d.end == math.inf else {"end": d.end})}
                for d in self.down
            ],
            "failed_links": [
                {"port": x.port, "switch": x.switch, "start": x.start} for x in self.failed_links
            ],
            # Only with a packet switch, so plain fabrics' files stay as they were.
            **({"eps_rate": self.eps_rate, "eps_latency": self.eps_latency} if self.eps_rate else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, name: str = "fabric") -> Fabric:
        """Build a fabric from its mapping form (a parsed FABRIC.toml).

        Keys: ``model`` (``"all-stop"`` or ``"partial"``, default all-stop); ``switches``: a list of
        ``{delta, rate = 1, count = 1, bidirectional = false, ports_per_endpoint = 1}`` (``count``
        repeats the entry); ``down``: a list of
        ``{switch, start, end}`` (no ``end``: down for good); ``failed_links``: a list of
        ``{port, switch, start = 0}``; ``eps_rate`` and ``eps_latency``: the packet switch (default 0:
        none). Unknown keys are refused. The counts are checked before
        anything is expanded: at most :data:`MAX_SWITCHES` switches in total (all the ``count`` values
        summed), :data:`MAX_DOWN_WINDOWS` down windows and :data:`MAX_FAILED_LINKS` failed links.

        >>> f = Fabric.from_dict({"switches": [{"delta": 0.01, "count": 2}, {"delta": 0.1, "rate": 2}]})
        >>> f.deltas, f.rates
        ((0.01, 0.01, 0.1), (1.0, 1.0, 2.0))
        >>> Fabric.from_dict({"switches": [{"delta": 0.1, "count": 1000}, {"delta": 0.1, "count": 1000}]})
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ocsched.errors.InvalidInputError: `fabric.switches` describes more than 1024 switches (2000 up to ...
        """
        if not isinstance(data, Mapping):
            raise InvalidInputError(f"`{name}` must be a table/object; got {type(data).__name__}")
        _only(data, {"model", "switches", "down", "failed_links", "eps_rate", "eps_latency"}, name)
        # Invariant: nothing is expanded before the total is known to be within MAX_SWITCHES (a
        # 70-byte file with two `count = 100000` entries would otherwise build 200,000 switches).
        keys = {"delta", "rate", "count", "bidirectional", "ports_per_endpoint"}
        entries = list(_entries(data, "switches", name, keys, MAX_SWITCHES))
        counts = []
        for where, sw in entries:
            if "delta" not in sw:
                raise InvalidInputError(f"`{where}.delta` is missing")
            counts.append(check_int(sw.get("count", 1), f"{where}.count", minimum=1))
            if sum(counts) > MAX_SWITCHES:
                raise InvalidInputError(
                    f"`{name}.switches` describes more than {MAX_SWITCHES} switches "
                    f"({sum(counts)} up to `{where}`, counts summed)"
                )
        switches: list[Switch] = []
        for (_, sw), count in zip(entries, counts, strict=True):
            ports = {k: sw[k] for k in ("bidirectional", "ports_per_endpoint") if k in sw}
            switches.extend([Switch(sw["delta"], sw.get("rate", 1.0), **ports)] * count)
        down = []
        for where, d in _entries(data, "down", name, {"switch", "start", "end"}, MAX_DOWN_WINDOWS):
            if "switch" not in d or "start" not in d:
                raise InvalidInputError(f"`{where}` needs `switch` and `start`")
            down.append(SwitchDown(d["switch"], d["start"], d.get("end", math.inf)))
        links = []
        for where, x in _entries(data, "failed_links", name, {"port", "switch", "start"}, MAX_FAILED_LINKS):
            if "port" not in x or "switch" not in x:
                raise InvalidInputError(f"`{where}` needs `port` and `switch`")
            links.append(LinkDown(x["port"], x["switch"], x.get("start", 0.0)))
        if not switches:
            raise InvalidInputError(f"`{name}.switches` must list at least one switch")
        eps = {k: data[k] for k in ("eps_rate", "eps_latency") if k in data}
        return cls(tuple(switches), tuple(down), tuple(links), model=data.get("model", "all-stop"), **eps)


def _port_keys(x: Switch) -> dict[str, Any]:
    """A switch's port keys for its mapping form, only where they differ from the classic model."""
    return {
        **({"bidirectional": True} if x.bidirectional else {}),
        **({"ports_per_endpoint": x.ports_per_endpoint} if x.ports_per_endpoint != 1 else {}),
    }


def _only(data: object, keys: set[str], where: str) -> None:
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"`{where}` must be a table/object; got {data!r}")
    extra = sorted(set(data) - keys)
    if extra:
        raise InvalidInputError(f"`{where}` has unknown key {extra[0]!r}; valid: {', '.join(sorted(keys))}")


def _entries(
    data: Mapping[str, Any], key: str, name: str, keys: set[str], limit: int
) -> Iterator[tuple[str, Any]]:
    """Yield ``(where, entry)`` for each table of the list ``data[key]`` (at most ``limit`` of them),
    each checked by :func:`_only`."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise InvalidInputError(f"`{name}.{key}` must be a list; got {value!r}")
    if len(value) > limit:
        raise InvalidInputError(f"`{name}.{key}` lists {len(value)} entries; at most {limit}")
    for k, entry in enumerate(value):
        where = f"{name}.{key}[{k}]"
        _only(entry, keys, where)
        yield where, entry


def as_fabric(switches: object = None, delta: object = None, fabric: Fabric | None = None) -> Fabric:
    """Return the fabric a function's arguments give: ``fabric=``, or ``switches=`` and ``delta=``.

    The one reading of these three arguments (:func:`~ocsched.schedulers.schedule`, the exact
    solver, the iteration schedulers, the online plan).

    >>> as_fabric(2, 0.1).size
    2
    """
    if fabric is not None:
        if switches is not None or delta is not None:
            raise InvalidInputError("give either `fabric` or `switches` and `delta`, not both")
        if not isinstance(fabric, Fabric):
            raise InvalidInputError(f"`fabric` must be an ocsched.Fabric; got {type(fabric).__name__}")
        return fabric
    if switches is None or delta is None:
        raise InvalidInputError("give `switches` and `delta` (or a `fabric`)")
    return Fabric.uniform(check_switches(switches), check_delta(delta))
