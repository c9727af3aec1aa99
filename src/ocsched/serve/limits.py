"""What one request may ask of the service: :class:`Limits`, and how workers inherit them."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass

from ocsched._checks import check_int, check_number
from ocsched.fabric import MAX_SWITCHES

#: Environment variables that carry the limits from ``ocsched serve`` into its worker processes.
ENV_PREFIX = "OCSCHED_SERVE_"


@dataclass(frozen=True)
class Limits:
    """The caps of one service: each request is measured against them before any work is done.

    Attributes
    ----------
    max_body_bytes : int
        Largest request body; a longer one is refused with 413 before it is parsed.
    max_ports : int
        Largest port count of a demand, schedule or iteration (SimAI: ranks in one request).
    max_switches : int
        Largest number of switches of a fabric or schedule.
    max_phases : int
        Largest number of phases of an iteration.
    time_budget_s : float
        Wall-clock time one request may take; past it the reply is 504 and no schedule.
        A request may ask for less (``time_budget_s`` in its body), never for more.
    max_pending : int
        Requests computing or waiting for a thread at once in one worker; past it the reply is 503.
    threads : int
        Threads that compute (scheduling holds the GIL mostly, so more than the cores buys little).
    cache_size : int
        Replies kept by the SimAI endpoints' LRU cache (0 disables it).
    max_flows : int
        Largest number of flows a SimAI reply may list (a ring all-reduce of k ranks has 2k(k - 1)).

    Examples
    --------
    >>> Limits(max_ports=128).max_ports
    128
    >>> Limits.from_env(Limits(max_ports=128).to_env()) == Limits(max_ports=128)
    True
    """

    max_body_bytes: int = 32 * 2**20
    max_ports: int = 4096
    max_switches: int = 256
    max_phases: int = 1000
    time_budget_s: float = 30.0
    max_pending: int = 64
    threads: int = 4
    cache_size: int = 1024
    max_flows: int = 2_000_000

    def __post_init__(self) -> None:
        check_int(self.max_body_bytes, "max_body_bytes", minimum=1)
        check_int(self.max_ports, "max_ports", minimum=2)
        check_int(self.max_switches, "max_switches", minimum=1, maximum=MAX_SWITCHES)
        check_int(self.max_phases, "max_phases", minimum=1)
        check_number(self.time_budget_s, "time_budget_s", low=0.0, closed=False)
        check_int(self.max_pending, "max_pending", minimum=1)
        check_int(self.threads, "threads", minimum=1, maximum=256)
        check_int(self.cache_size, "cache_size", minimum=0)
        check_int(self.max_flows, "max_flows", minimum=1)

    def to_env(self) -> dict[str, str]:
        """The limits as environment variables, for worker processes started by uvicorn."""
        return {ENV_PREFIX + f.name.upper(): repr(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        """Read the limits :meth:`to_env` wrote (absent ones keep their defaults)."""
        env = os.environ if env is None else env
        values: dict[str, int | float] = {}
        for f in dataclasses.fields(cls):
            text = env.get(ENV_PREFIX + f.name.upper())
            if text is not None:
                values[f.name] = float(text) if f.type == "float" else int(text)
        return cls(**values)  # type: ignore[arg-type]
