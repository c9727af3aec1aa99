"""Fabric files (FABRIC.toml) and the fabric of the CLI's ``--switches``/``--delta``/``--fabric``."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

from ocsched._text import parse_float_list
from ocsched.errors import InvalidInputError
from ocsched.fabric import MAX_SWITCHES, Fabric
from ocsched.workloads.tpu_pod import tpu_pod_fabric


def read_fabric(path: str | os.PathLike[str], *, name: str = "fabric") -> Fabric:
    """Read a FABRIC.toml file (see :meth:`ocsched.fabric.Fabric.from_dict` for its keys).

    Example file::

        model = "all-stop"            # or "partial"
        [[switches]]
        delta = 0.01                  # reconfiguration delay, in the demand's unit
        count = 2                     # two such switches
        [[switches]]
        delta = 0.1
        rate = 2.0                    # serves 2 units of demand per unit of time
        [[down]]
        switch = 1                    # 0-based, as in schedule files
        start = 0.5                   # no `end`: down for good
        [[failed_links]]
        port = 3
        switch = 0
    """
    import tomllib

    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"`{name}` file not found: {p}")
    try:
        data = tomllib.loads(p.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInputError(f"`{name}` file {p} could not be read as TOML: {exc}") from None
    try:
        return Fabric.from_dict(data, name=name)
    except InvalidInputError as exc:
        raise InvalidInputError(f"`{name}` file {p}: {exc}") from None


def fabric_from_options(
    *,
    switches: int | None = None,
    delta: str | float | None = None,
    reconfiguration: str | None = None,
    fabric: str | os.PathLike[str] | None = None,
    eps_rate: float | None = None,
    eps_latency: float | None = None,
    bidirectional: bool | None = None,
    ports_per_endpoint: int | None = None,
) -> Fabric:
    """Build the fabric of the CLI options ``--switches``, ``--delta``, ``--reconfiguration``, ``--fabric``.

    ``fabric`` (a FABRIC.toml) excludes ``delta``; ``switches`` must then match its size.
    ``delta`` is one number (``switches`` identical switches) or a comma-separated list, one
    per switch (``switches`` must match or be omitted), written with ASCII digits
    (:mod:`ocsched._text`). ``reconfiguration`` (``all-stop`` or ``partial``) overrides the model,
    ``eps_rate`` and ``eps_latency`` the packet switch (``--eps-rate``, ``--eps-latency``).
    ``fabric`` may also name a preset (:data:`FABRIC_PRESETS`: ``tpu-pod``, delays in ms, or
    ``tpu-pod-10ms``) when no such file exists; ``bidirectional`` and ``ports_per_endpoint``
    set every switch's.

    >>> f = fabric_from_options(switches=2, delta=0.1, bidirectional=True, ports_per_endpoint=2)
    >>> f.switches[1].bidirectional, f.switches[1].ports_per_endpoint
    (True, 2)

    >>> fabric_from_options(delta="0.01,0.01,0.04,0.04").deltas
    (0.01, 0.01, 0.04, 0.04)
    >>> fabric_from_options(switches=2, delta=0.1, reconfiguration="partial").model
    'partial'
    """
    from ocsched._checks import check_choice, check_switches
    from ocsched.fabric import MODELS

    if reconfiguration is not None:
        check_choice(reconfiguration, "reconfiguration", MODELS)
    if fabric is not None:
        if delta is not None:
            raise InvalidInputError("give either `--fabric` or `--delta`, not both")
        preset = FABRIC_PRESETS.get(str(fabric))
        fab = preset() if preset is not None and not Path(fabric).exists() else read_fabric(fabric)
        if switches is not None and check_switches(switches) != fab.size:
            raise InvalidInputError(f"`--switches` = {switches} but the fabric file has {fab.size} switches")
    else:
        if delta is None:
            raise InvalidInputError("give `--delta` (one value, or one per switch) or `--fabric FABRIC.toml`")
        if isinstance(delta, str):
            if delta.count(",") >= MAX_SWITCHES:  # checked before anything is parsed or built
                raise InvalidInputError(
                    f"`--delta` lists {delta.count(',') + 1} delays; at most {MAX_SWITCHES} (one per switch)"
                )
            values = parse_float_list(delta, "--delta", low=0.0)
        else:
            values = [delta]
        if len(values) == 1:
            if switches is None:
                raise InvalidInputError("give `--switches` with a single `--delta`")
            fab = Fabric.uniform(check_switches(switches), values[0])
        else:
            if switches is not None and check_switches(switches) != len(values):
                raise InvalidInputError(
                    f"`--switches` = {switches} but `--delta` lists {len(values)} delays (one per switch)"
                )
            fab = Fabric.from_deltas(values)
    if bidirectional is not None or ports_per_endpoint is not None:
        keep = fab.switches[0]
        both = keep.bidirectional if bidirectional is None else bidirectional
        k = keep.ports_per_endpoint if ports_per_endpoint is None else ports_per_endpoint
        fab = dataclasses.replace(
            fab,
            switches=tuple(
                dataclasses.replace(x, bidirectional=both, ports_per_endpoint=k) for x in fab.switches
            ),
        )
    fab = fab if reconfiguration is None else fab.with_model(reconfiguration)
    if eps_rate is not None or eps_latency is not None:
        rate = fab.eps_rate if eps_rate is None else eps_rate
        lat = fab.eps_latency if eps_latency is None else eps_latency
        if eps_latency is not None and not rate:
            raise InvalidInputError("`--eps-latency` needs a packet switch: give `--eps-rate` > 0")
        fab = fab.with_eps(rate, lat)
    return fab


#: Fabrics ``--fabric`` knows by name (a file of that name takes precedence).
FABRIC_PRESETS: dict[str, Callable[[], Fabric]] = {
    "tpu-pod": lambda: tpu_pod_fabric(delta_ms=1.0),
    "tpu-pod-10ms": lambda: tpu_pod_fabric(delta_ms=10.0),
}
