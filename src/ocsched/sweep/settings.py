"""The scheduler settings of a sweep config's entry: its ``fabrics`` or its ``switches`` x ``delta`` grid.

Each setting is an algorithm with a switch count and delay, or a fabric (named, and keyed by
:func:`canonical_fabric`); an algorithm that cannot run on a listed fabric is refused here, and
so is a fabric with a feature iterations do not support. Iteration workloads name their
algorithms as ``"scheduler[:base]"`` (:func:`iteration_algorithm`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ocsched._checks import check_delta, check_number
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.io import read_fabric
from ocsched.schedulers import ALIASES, SCHEDULERS, fabric_features
from ocsched.sequence import ITERATION_SCHEDULERS
from ocsched.sweep._config_values import _as_list, _switch_counts

__all__ = ["ITERATION_ALGORITHMS", "canonical_fabric", "iteration_algorithm"]

#: One scheduler setting of a run: (algorithm, switches, delta, fabric name, canonical fabric JSON).
Setting = tuple[str, int, float, str | None, str | None]
#: What an iteration workload's entry runs when it names no ``algorithms``.
ITERATION_ALGORITHMS = ("spectra-seq", "independent")


def canonical_fabric(fab: Fabric) -> str:
    """The canonical JSON of a fabric: equal for equal fabrics however they were written.

    Down windows and failed links are listed in sorted order (their order means nothing).

    >>> a = Fabric.from_dict({"switches": [{"delta": 0.1, "count": 2}], "down": [
    ...     {"switch": 1, "start": 2}, {"switch": 0, "start": 1, "end": 3}]})
    >>> b = Fabric.from_dict({"switches": [{"delta": 0.1}, {"delta": 0.1, "rate": 1.0}], "down": [
    ...     {"switch": 0, "start": 1.0, "end": 3}, {"switch": 1, "start": 2.0}]})
    >>> canonical_fabric(a) == canonical_fabric(b)
    True
    """
    d = fab.to_dict()
    for key in ("down", "failed_links"):
        d[key] = sorted(d[key], key=lambda x: json.dumps(x, sort_keys=True))
    return json.dumps(d, sort_keys=True)


def _default_name(fab: Fabric) -> str:
    """A readable name for an unnamed fabric: ``"4 switches, delta 0.01/0.1, partial"``."""
    deltas = "/".join(f"{d:g}" for d in sorted(set(fab.deltas)))
    extra = [f"rate {'/'.join(f'{r:g}' for r in sorted(set(fab.rates)))}"] if set(fab.rates) != {1.0} else []
    extra += ["failures"] if fab.down or fab.failed_links else []
    extra += [fab.model] if fab.reconfiguration.keeps_circuits else []
    return ", ".join([f"{fab.size} switches", f"delta {deltas}", *extra])


def _fabrics(raw: Any, where: str, base: Path) -> list[tuple[str, Fabric]]:
    """``(name, fabric)`` for each entry of a ``fabrics`` list: an inline table or a FABRIC.toml path."""
    out: list[tuple[str, Fabric]] = []
    for k, item in enumerate(_as_list(raw, f"{where}.fabrics")):
        at = f"{where}.fabrics[{k}]"
        if isinstance(item, str) and item:
            fab = read_fabric(base / item, name=at)
            name = Path(item).name
        elif isinstance(item, Mapping):
            table = dict(item)
            name = table.pop("name", None)
            if name is not None and (not isinstance(name, str) or not name):
                raise InvalidInputError(f"`{at}.name` must be a non-empty string; got {name!r}")
            try:
                fab = Fabric.from_dict(table, name=at)
            except InvalidInputError as exc:
                msg = str(exc)
                raise InvalidInputError(msg if msg.startswith(f"`{at}") else f"`{at}`: {msg}") from None
            name = _default_name(fab) if name is None else name
        else:
            raise InvalidInputError(f"`{at}` must be a fabric table or a FABRIC.toml path; got {item!r}")
        out.append((name, fab))
    return out


def _check_runs_on(algorithm: str, fab: Fabric, name: str, where: str) -> None:
    """Raise one line unless ``algorithm`` can schedule on ``fab`` (registry ``supports``, ``requires``)."""
    sch = SCHEDULERS[algorithm]
    features = fabric_features(fab)
    missing = sorted(features - sch.supports)
    if missing:
        can = ", ".join(sorted(sch.supports)) or "identical all-stop switches only"
        raise InvalidInputError(
            f"`{where}`: algorithm {algorithm!r} cannot run on fabric {name!r}: it does not support "
            f"{', '.join(missing)} (it supports: {can})"
        )
    lacking = sorted(sch.requires - features)
    if lacking:
        raise InvalidInputError(
            f"`{where}`: algorithm {algorithm!r} cannot run on fabric {name!r}: it needs "
            f'{", ".join(lacking)} (e.g. model = "partial")'
        )


def iteration_algorithm(name: str, where: str = "algorithms") -> tuple[str, str]:
    """Split an iteration run's algorithm ``"scheduler[:base]"`` into (scheduler, base scheduler).

    A former base name (:data:`~ocsched.schedulers.ALIASES`) gives the current one.

    >>> iteration_algorithm("spectra-seq"), iteration_algorithm("independent:spectra-pack")
    (('spectra-seq', 'spectra'), ('independent', 'spectra-pack'))
    """
    alg, _, base = str(name).partition(":")
    base = ALIASES.get(base, base or "spectra")
    if alg not in ITERATION_SCHEDULERS or base not in SCHEDULERS:
        raise InvalidInputError(
            f"`{where}`: {name!r} is not an iteration algorithm; give one of "
            f"{', '.join(ITERATION_SCHEDULERS)}, optionally as 'NAME:BASE' with BASE one of "
            f"{', '.join(SCHEDULERS)}"
        )
    return alg, base


def _iteration_entry(
    entry: Mapping[str, Any],
    config: Mapping[str, Any],
    where: str,
    base: Path,
    named: dict[str, str],
) -> list[Setting]:
    """The settings of an iteration workload's entry: a ``switches`` x ``delta`` grid or ``fabrics``.

    An iteration scheduler runs on any fabric its base scheduler supports (checked here, one line
    naming the feature otherwise).
    """
    if "link_gbps" in entry:
        raise InvalidInputError(
            f"`{where}.link_gbps` is not allowed here: set the generator's own option "
            "(e.g. options = { link_gbps = 100 })"
        )
    if entry.get("normalized", False) is not False:
        raise InvalidInputError(
            f"`{where}.normalized` must be false for an iteration workload (its gaps share the demand's unit)"
        )
    algs = _as_list(entry.get("algorithms", list(ITERATION_ALGORITHMS)), f"{where}.algorithms")
    parsed = [iteration_algorithm(a, f"{where}.algorithms") for a in algs]
    # A former base name runs (and is stored) as the scheduler it names now.
    names = [it if ":" not in str(a) else f"{it}:{b}" for a, (it, b) in zip(algs, parsed, strict=True)]
    # Iterations schedule circuits only (see ocsched.sequence): a packet switch is refused here.
    return _settings(entry, config, where, base, named, names, [b for _, b in parsed], frozenset({"eps"}))


def _settings(
    entry: Mapping[str, Any],
    config: Mapping[str, Any],
    where: str,
    base: Path,
    named: dict[str, str],
    algs: list[str],
    runs_on: list[str],
    refused: frozenset[str] = frozenset(),
) -> list[Setting]:
    """Each algorithm's settings: the entry's (or else the config's) ``fabrics`` or its grid.

    ``runs_on[k]`` is the scheduler that must support each fabric for ``algs[k]`` (itself, or an
    iteration scheduler's base); one line naming the missing feature otherwise, and for a fabric
    with a feature in ``refused`` (what iterations do not support).
    """

    def check(fab: Fabric, fname: str) -> None:
        bad = sorted(refused & fabric_features(fab))
        if bad:
            raise InvalidInputError(f"`{where}`: fabric {fname!r} has {', '.join(bad)}: not supported here")

    grid_here = {"switches", "delta"} & set(entry)
    level = entry if "fabrics" in entry or grid_here else config
    if "fabrics" in level and {"switches", "delta"} & set(level):
        raise InvalidInputError(f"`{where}`: give either `fabrics` or `switches`/`delta`, not both")
    if "fabrics" in level:
        settings: list[Setting] = []
        for fname, fab in _fabrics(level["fabrics"], where, base):
            spec = canonical_fabric(fab)
            if named.setdefault(fname, spec) != spec:
                raise InvalidInputError(f"`{where}.fabrics`: two different fabrics are named {fname!r}")
            check(fab, fname)
            for a, b in zip(algs, runs_on, strict=True):
                _check_runs_on(b, fab, fname, where)
                settings.append((a, fab.size, max(fab.deltas), fname, spec))
        return settings
    for b in runs_on:
        needs = ", ".join(sorted(SCHEDULERS[b].requires))
        if needs:
            raise InvalidInputError(
                f"`{where}`: algorithm {b!r} needs a fabric with {needs}; give `fabrics` "
                "(a `switches` x `delta` grid is identical all-stop switches)"
            )

    def get(key: str, default: Any = None) -> Any:
        return entry.get(key, config.get(key, default))

    switches = _switch_counts(get("switches"), f"{where}.switches")
    deltas = [check_delta(x, name=f"{where}.delta") for x in _as_list(get("delta"), "delta")]
    rhos = [check_number(x, f"{where}.eps_rate", low=0.0) for x in _as_list(get("eps_rate", 0.0), "eps_rate")]
    settings = []
    for (a, b), s, d, rho in itertools.product(zip(algs, runs_on, strict=True), switches, deltas, rhos):
        if not rho:  # rho = 0: the plain grid point, keyed as before
            settings.append((a, s, d, None, None))
            continue
        fab = Fabric.uniform(s, d).with_eps(rho)
        fname = f"{s} switches, delta {d:g}, eps {rho:g}"
        check(fab, fname)
        _check_runs_on(b, fab, fname, where)
        settings.append((a, s, d, fname, canonical_fabric(fab)))
    return settings
