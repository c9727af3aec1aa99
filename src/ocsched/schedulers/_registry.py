"""The registry's types: :class:`Scheduler`, its :class:`Option` and :class:`Result`, the fabric features.

Every scheduler module of this package builds on these; :mod:`ocsched.schedulers` holds the
registry itself. :func:`fabric_features` and :func:`as_fabric` read a fabric the way
:func:`~ocsched.schedulers.schedule` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.fabric import as_fabric as as_fabric
from ocsched.model.result import Result as Result
from ocsched.model.result import Switches as Switches

__all__ = [
    "ALL_FEATURES",
    "FEATURES",
    "PORT_FEATURES",
    "Option",
    "Result",
    "RngLike",
    "Scheduler",
    "SchedulerFn",
    "Switches",
    "as_fabric",
    "fabric_features",
]

RngLike = np.random.Generator | int | None


#: ``run(demand, fabric, rng, **options)``: the options are the scheduler's declared ones, checked.
SchedulerFn = Callable[..., Result]


@dataclass(frozen=True)
class Option:
    """A per-algorithm option of :func:`schedule` (``options={...}``, the CLI's ``--option KEY=VALUE``).

    Attributes
    ----------
    default : object
        The value used when the option is not given.
    kind : {"int", "float", "choice"}
        What the value is; text (from the command line) is converted.
    description : str
        One line for listings and errors.
    minimum : float or None
        The smallest accepted value (int and float options).
    choices : tuple of str
        The accepted values of a ``"choice"`` option.
    optional : bool
        ``None`` is accepted (and means the option is off).
    """

    default: object
    kind: Literal["int", "float", "choice"]
    description: str
    minimum: float | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False
    #: The value must exceed ``minimum`` (a time limit of 0 is no time at all).
    above: bool = False

    def facts(self) -> dict[str, object]:
        """The option as plain data (``ocsched algorithms --json``; ``type`` as in ``workloads --json``).

        >>> Option(5, "int", "nodes", 1).facts()
        {'type': 'int', 'default': 5, 'description': 'nodes', 'minimum': 1}
        """
        out: dict[str, object] = {"type": self.kind, "default": self.default, "description": self.description}
        if self.minimum is not None:
            out["exclusive_minimum" if self.above else "minimum"] = self.minimum
        if self.choices:
            out["choices"] = list(self.choices)
        return out

    def summary(self) -> str:
        """One line: the accepted values and the default.

        >>> Option("none", "choice", "order", choices=("none", "size")).summary()
        'one of none, size; default none'
        >>> Option(None, "float", "seconds", 0.0, optional=True, above=True).summary()
        'number > 0 or none; default none'
        """
        if self.kind == "choice":
            what = f"one of {', '.join(self.choices)}"
        else:
            what = "integer" if self.kind == "int" else "number"
            if self.minimum is not None:
                what += f" {'>' if self.above else '>='} {self.minimum:g}"
        if self.optional:
            what += " or none"
        default = "none" if self.default is None else self.default
        return f"{what}; default {default}"

    def check(self, value: object, name: str) -> object:
        """Return ``value`` converted and checked; raise :class:`InvalidInputError` naming ``name``."""
        if value is None or (self.optional and isinstance(value, str) and value.lower() == "none"):
            if self.optional:
                return None
            raise InvalidInputError(f"option `{name}` must be given a value; got None")
        if self.kind == "choice":
            if value not in self.choices:
                raise InvalidInputError(
                    f"option `{name}` must be one of {', '.join(self.choices)}; got {value!r}"
                )
            return value
        out: float | int
        try:
            if isinstance(value, bool):
                raise TypeError
            if self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise TypeError
                out = (
                    int(value)
                    if isinstance(value, int | float | np.integer | np.floating)
                    else int(str(value))
                )
            else:
                out = (
                    float(value)
                    if isinstance(value, int | float | np.integer | np.floating)
                    else float(str(value))
                )
        except (TypeError, ValueError):
            what = "an integer" if self.kind == "int" else "a number"
            raise InvalidInputError(f"option `{name}` must be {what}; got {value!r}") from None
        low_ok = self.minimum is None or (out > self.minimum if self.above else out >= self.minimum)
        if not np.isfinite(out) or not low_ok:
            sign = ">" if self.above else ">="
            low = f" {sign} {self.minimum:g}" if self.minimum is not None else ""
            raise InvalidInputError(f"option `{name}` must be a finite number{low}; got {value!r}")
        return out


#: Fabric features a scheduler may support beyond identical all-stop switches that never fail.
FEATURES = ("heterogeneous", "failures", "partial", "bidirectional", "ports", "eps")
#: Bidirectional circuits and several ports per endpoint per switch: a configuration there is not
#: a matching, so only the schedulers built for them (``spectra-ports``, ``exact-ports``) run.
PORT_FEATURES = frozenset({"bidirectional", "ports"})


@dataclass(frozen=True)
class Scheduler:
    """A registered scheduler.

    Attributes
    ----------
    run : callable
        ``run(demand, fabric, rng) -> Result`` on a validated demand and fabric.
    description : str
        One line for listings.
    max_ports : int or None
        Larger demands are refused (the exact solver).
    supports : frozenset of str
        Fabric features (:data:`FEATURES`) it handles; others are refused with a clear error.
    requires : frozenset of str
        Fabric features it cannot do without (``spectra-partial`` needs ``"partial"``).
    options : mapping of str to Option
        The keyword options ``run`` accepts (:func:`schedule`'s ``options=``), with defaults.
    """

    run: SchedulerFn
    description: str
    max_ports: int | None = None
    supports: frozenset[str] = frozenset()
    requires: frozenset[str] = frozenset()
    options: Mapping[str, Option] = field(default_factory=dict)

    def check_options(self, name: str, options: Mapping[str, object] | None) -> dict[str, object]:
        """Return ``options`` checked against :attr:`options` (unknown keys list the allowed ones)."""
        if options is None:
            return {}
        if not isinstance(options, Mapping):
            raise InvalidInputError(
                f"`options` must be a dict of option values; got {type(options).__name__}"
            )
        unknown = [k for k in options if k not in self.options]
        if unknown:
            allowed = f"allowed options: {', '.join(self.options)}" if self.options else "it takes none"
            raise InvalidInputError(f"unknown option {unknown[0]!r} for algorithm {name!r}; {allowed}")
        return {k: self.options[k].check(v, k) for k, v in options.items()}


#: Every matching fabric feature: pipelines place by finish time on any fabric (``place_on_fabric``);
#: a packet switch only the hybrid schedulers use.
ALL_FEATURES = frozenset(FEATURES) - PORT_FEATURES - {"eps"}


def fabric_features(fabric: Fabric) -> set[str]:
    """Return the :data:`FEATURES` a fabric uses.

    >>> sorted(fabric_features(Fabric.uniform(2, 0.1)))
    []
    """
    out = set()
    if len(set(fabric.switches)) > 1 or any(r != 1.0 for r in fabric.rates):
        out.add("heterogeneous")
    if fabric.down or fabric.failed_links:
        out.add("failures")
    out |= fabric.reconfiguration.features  # what the model declares (partial: "partial")
    if any(x.bidirectional for x in fabric.switches):
        out.add("bidirectional")
    if any(x.ports_per_endpoint > 1 for x in fabric.switches):
        out.add("ports")
    if fabric.eps_rate > 0:
        out.add("eps")
    return out
