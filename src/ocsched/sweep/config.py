"""Sweep configs: read a TOML file, a preset or a dict, and expand it into runs.

A sweep config names workloads with their options and seeds, switch counts ``switches``,
reconfiguration delays ``delta`` and algorithms::

    switches = [4, 16]
    delta = [0.01, 0.04]
    algorithms = ["spectra", "spectra-noeq"]
    normalized = true            # divide each matrix by its largest line sum (default true; or `normalize`)

    [[workloads]]
    name = "standard"            # a key of ocsched.workloads.WORKLOADS
    label = "Standard"           # optional; names the row in reports (default: name)
    family = "standard"          # optional; groups labels in reports (default: label)
    seeds = 5                    # 5 -> seeds 0..4, or an explicit list [3, 8]
    options = { n = 100 }        # fixed generator options
    grid = { flows = [8, 16] }   # optional: each combination is a separate instance
    # switches, delta, algorithms, normalized and link_gbps may be overridden per workload
    # eps_rate = [0, 0.5]        # optional: a packet switch of that rate beside the grid's switches

    [[workloads]]
    path = "traces/*.npy"        # your own matrices (any format ocsched.io reads), a glob
    label = "Mine"               # relative paths are relative to the config file

Instead of the ``switches`` x ``delta`` grid (never both, at one level), ``fabrics`` lists the
fabrics to run on: tables in the FABRIC.toml layout (see :meth:`ocsched.fabric.Fabric.from_dict`)
with an optional ``name``, or paths of FABRIC.toml files (relative to the config file)::

    fabrics = [
      { name = "mixed", switches = [{ delta = 0.01, count = 2 }, { delta = 0.1, count = 2 }] },
      { name = "partial", model = "partial", switches = [{ delta = 0.04, count = 4 }] },
      "fabrics/mems.toml",         # named by its file name
    ]

An iteration workload (a key of :data:`ocsched.workloads.ITERATION_WORKLOADS`: ``gpt-iteration``,
``moe-iteration``, ``coflow-sequence``) is a sequence of phases with compute gaps, scheduled by
the iteration schedulers. Its entry takes its own ``algorithms`` (default
:data:`ITERATION_ALGORITHMS`; the config's top-level list is for single matrices): keys of
:data:`ocsched.sequence.ITERATION_SCHEDULERS`, optionally with the per-phase scheduler after a
colon (``"spectra-seq:spectra-pack"``; default base ``spectra``). It runs on a ``switches`` x
``delta`` grid (``delta`` in the workload's time unit, seconds for the generators) and is never
normalised (its gaps share the demand's unit)::

    [[workloads]]
    name = "moe-iteration"
    options = { gpus = 16, layers = 4 }
    algorithms = ["spectra-seq", "independent"]
    delta = [1e-5, 1e-4, 1e-3]

Every (workload, options, seed) or matched file is one *instance*; every instance runs every
algorithm, switch count and delta (or fabric). An algorithm that cannot run on a listed fabric
is refused before anything runs. Seeds: the config's seed ``r`` of an instance is expanded with
:class:`numpy.random.SeedSequence` (see :func:`~ocsched.sweep.results.derive_seeds`).

A run's identity (its key) holds everything that changes its result: the workload and its
options, the seed, the algorithm, the switch count and delay or the fabric's whole content (not
only its name), and for a matrix read from a file (``path``, or the coflow workload's trace
``path``) the SHA-256 of that file's bytes. A config may expand to at most :data:`MAX_RUNS` runs
and at most :data:`~ocsched.fabric.MAX_SWITCHES` switches a setting; both are checked before
anything is built.
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ocsched._checks import check_bool, check_delta, check_int, check_number, check_switches
from ocsched._limits import MAX_RUNS as MAX_RUNS
from ocsched.errors import InvalidInputError
from ocsched.fabric import MAX_SWITCHES, Fabric
from ocsched.io import DEMAND_SUFFIXES, read_fabric
from ocsched.io.demand import demand_suffix
from ocsched.schedulers import SCHEDULERS, fabric_features
from ocsched.sequence import ITERATION_SCHEDULERS
from ocsched.sweep.results import RunSpec
from ocsched.workloads import ITERATION_WORKLOADS, WORKLOADS

__all__ = [
    "FILE_WORKLOAD",
    "ITERATION_ALGORITHMS",
    "MAX_RUNS",
    "PRESETS",
    "base_dir",
    "canonical_fabric",
    "expand",
    "iteration_algorithm",
    "load_config",
]

#: Built-in configs, in ``ocsched/presets/<name>.toml``.
PRESETS = ("iterations", "paper", "quick")
#: The ``workload`` of rows whose matrix comes from a user's file (``path = ...`` in a config).
FILE_WORKLOAD = "file"

#: One scheduler setting of a run: (algorithm, switches, delta, fabric name, canonical fabric JSON).
Setting = tuple[str, int, float, str | None, str | None]
#: What an iteration workload's entry runs when it names no ``algorithms``.
ITERATION_ALGORITHMS = ("spectra-seq", "independent")

_PRESET_DIR = Path(__file__).resolve().parent.parent / "presets"
_TOP_KEYS = {
    "switches",
    "delta",
    "fabrics",
    "algorithms",
    "normalized",
    "link_gbps",
    "eps_rate",
    "workloads",
    "name",
    "description",
}
_SHARED = _TOP_KEYS - {"workloads", "name", "description"}
_WL_KEYS = {"name", "label", "family", "seeds", "options", "grid"} | _SHARED
_FILE_KEYS = {"path", "label", "family"} | (_SHARED - {"link_gbps"})


def load_config(source: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """Read a sweep config: a TOML file path, a preset name (``"paper"``, ``"quick"``) or a dict.

    Raises
    ------
    InvalidInputError
        If the file is missing or not TOML, or the config is malformed (see :func:`expand`).
    """
    if isinstance(source, Mapping):
        cfg = dict(source)
    elif isinstance(source, str) and source in PRESETS:
        cfg = tomllib.loads((_PRESET_DIR / f"{source}.toml").read_text())
    else:
        p = Path(source)
        if not p.is_file():
            raise InvalidInputError(f"`config` file not found: {p}")
        try:
            cfg = tomllib.loads(p.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InvalidInputError(f"`config` file {p} is not valid TOML: {exc}") from None
    cfg = _spelled(cfg)
    expand(cfg, base=base_dir(source))  # validate now, at the boundary
    return cfg


def _spelled(cfg: dict[str, Any]) -> dict[str, Any]:
    """``normalize`` (the API's and the CLI's spelling) as the stored key ``normalized``, anywhere."""

    def one(table: Any, where: str) -> Any:
        if not isinstance(table, Mapping) or "normalize" not in table:
            return table
        if "normalized" in table:
            raise InvalidInputError(f"`{where}`: give `normalize` or `normalized`, not both")
        out = {k: v for k, v in table.items() if k != "normalize"}
        out["normalized"] = table["normalize"]
        return out

    cfg = one(cfg, "config")
    if isinstance(cfg.get("workloads"), list):
        cfg["workloads"] = [one(w, f"workloads[{k}]") for k, w in enumerate(cfg["workloads"])]
    return cfg


def base_dir(source: str | os.PathLike[str] | Mapping[str, Any]) -> Path:
    """The folder that relative ``path`` globs of ``source`` are resolved against."""
    if isinstance(source, Mapping) or (isinstance(source, str) and source in PRESETS):
        return Path.cwd()
    return Path(source).resolve().parent


def _as_list(value: Any, name: str) -> list[Any]:
    out = value if isinstance(value, list) else [value]
    if not out:
        raise InvalidInputError(f"`{name}` must not be empty")
    return out


def _check_scalar(value: Any, name: str) -> None:
    if not isinstance(value, bool | int | float | str):
        raise InvalidInputError(f"`{name}` must be a number, string or boolean; got {value!r}")


def _switch_counts(raw: Any, name: str) -> list[int]:
    """The switch counts of a ``switches`` entry: integers in 1..MAX_SWITCHES."""
    out = [check_switches(x, name=name) for x in _as_list(raw, name)]
    big = [x for x in out if x > MAX_SWITCHES]
    if big:
        raise InvalidInputError(f"`{name}` must be integers in 1..{MAX_SWITCHES}; got {big[0]}")
    return out


def _table(entry: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    """``entry[key]`` (default empty) as a dict, or an error naming it."""
    value = entry.get(key, {})
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"`{where}.{key}` must be a table; got {value!r}")
    return dict(value)


def _file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes (part of the identity of runs that read it)."""
    try:
        with path.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as exc:
        raise InvalidInputError(f"file {path} could not be read: {exc.strerror or exc}") from None


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


def _seeds(raw: Any, where: str) -> list[int]:
    if isinstance(raw, list):
        if not raw:
            raise InvalidInputError(f"`{where}.seeds` must be a count or a list of integers >= 0; got []")
        try:
            return [check_int(x, f"{where}.seeds", minimum=0) for x in raw]
        except InvalidInputError:
            raise InvalidInputError(
                f"`{where}.seeds` must be a count or a list of integers >= 0; got {raw!r}"
            ) from None
    if isinstance(raw, int) and not isinstance(raw, bool) and raw < 1:
        raise InvalidInputError(f"`{where}.seeds` must be >= 1 or a list of seeds; got {raw}")
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > MAX_RUNS:
        raise InvalidInputError(f"`{where}.seeds` = {raw} is above the limit of {MAX_RUNS} runs")
    try:
        return list(range(check_int(raw, f"{where}.seeds", minimum=1)))
    except InvalidInputError:
        raise InvalidInputError(
            f"`{where}.seeds` must be a count or a list of integers >= 0; got {raw!r}"
        ) from None


def _files(pattern: Any, where: str, base: Path) -> list[tuple[str, str]]:
    """``(as matched, absolute)`` for every demand file matching ``pattern``, sorted."""
    if not isinstance(pattern, str) or not pattern:
        raise InvalidInputError(f"`{where}.path` must be a file name or glob; got {pattern!r}")
    matched = sorted(glob.glob(pattern, root_dir=base, recursive=True))
    found = [(m, str((base / m).resolve())) for m in matched if (base / m).is_file()]
    if not found:
        raise InvalidInputError(f"`{where}.path` {pattern!r} matches no file (relative to {base})")
    bad = [m for m, _ in found if demand_suffix(m) is None]
    if bad:
        raise InvalidInputError(
            f"`{where}.path` matches {bad[0]!r}, not a demand file ({', '.join(DEMAND_SUFFIXES)})"
        )
    return found


def _default_name(fab: Fabric) -> str:
    """A readable name for an unnamed fabric: ``"4 switches, delta 0.01/0.1, partial"``."""
    deltas = "/".join(f"{d:g}" for d in sorted(set(fab.deltas)))
    extra = [f"rate {'/'.join(f'{r:g}' for r in sorted(set(fab.rates)))}"] if set(fab.rates) != {1.0} else []
    extra += ["failures"] if fab.down or fab.failed_links else []
    extra += ["partial"] if fab.model == "partial" else []
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

    >>> iteration_algorithm("spectra-seq"), iteration_algorithm("independent:spectra-pack")
    (('spectra-seq', 'spectra'), ('independent', 'spectra-pack'))
    """
    alg, _, base = str(name).partition(":")
    base = base or "spectra"
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
    bases = [iteration_algorithm(a, f"{where}.algorithms")[1] for a in algs]
    # Iterations schedule circuits only (see ocsched.sequence): a packet switch is refused here.
    return _settings(entry, config, where, base, named, [str(a) for a in algs], bases, frozenset({"eps"}))


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


def _instances(
    entry: Mapping[str, Any],
    name: str,
    known: Mapping[str, Any],
    settings: list[Setting],
    where: str,
    *,
    normalized: bool,
    gbps: float | None,
    room: int,
) -> list[RunSpec]:
    """The runs of a generated workload's entry: every option combination x seed x setting.

    Raises if they would be more than ``room`` (counted before any is built).
    """
    label = str(entry.get("label", name))
    family = str(entry.get("family", label))
    options = _table(entry, "options", where)
    grid = _table(entry, "grid", where)
    for opt, val in [*options.items(), *((g, v) for g, vs in grid.items() for v in _as_list(vs, g))]:
        if opt not in known:
            raise InvalidInputError(
                f"`{where}`: workload {name!r} has no option {opt!r}; its options are {', '.join(known)}"
            )
        _check_scalar(val, f"{where}.{opt}")
    seeds = _seeds(entry.get("seeds", 1), where)
    runs = []
    axes = [[(g, v) for v in _as_list(vs, g)] for g, vs in grid.items()]
    _check_room(math.prod(len(a) for a in axes) * len(seeds) * len(settings), room, where)
    for combo in itertools.product(*axes):
        opts = {**options, **dict(combo)}
        lab = " ".join([label, *(f"{g}={v}" for g, v in combo)])
        opts_json = json.dumps(opts, sort_keys=True)
        # A trace file read by the generator (the coflow workload's `path`): its bytes are input.
        trace = opts.get("path")
        digest = _file_digest(Path(trace)) if isinstance(trace, str) and Path(trace).is_file() else None
        for seed, (a, s, d, f, fs) in itertools.product(seeds, settings):
            runs.append(
                RunSpec(family, lab, name, opts_json, normalized, gbps, seed, a, s, d, None, f, fs, digest)
            )
    return runs


def _check_room(count: int, room: int, where: str) -> None:
    if count > room:
        raise InvalidInputError(
            f"`{where}` expands to {count} runs; a config may have at most {MAX_RUNS} runs in all"
        )


def expand(config: Mapping[str, Any], *, base: Path | None = None) -> list[RunSpec]:
    """Expand a sweep config (see the module docstring) into its runs, in grid order.

    ``base`` is the folder relative ``path`` globs are resolved against (default: the current one).

    Raises
    ------
    InvalidInputError
        For an unknown key, workload, workload option or algorithm, a bad value, or a ``path``
        matching no demand file; the message names the offending entry.

    Examples
    --------
    >>> cfg = {"switches": [4, 16], "delta": 0.04, "algorithms": ["spectra"],
    ...        "workloads": [{"name": "standard", "seeds": 3, "options": {"n": 20}}]}
    >>> runs = expand(cfg)
    >>> len(runs), runs[0].workload, runs[0].options, len({r.key for r in runs})
    (6, 'standard', '{"n": 20}', 6)
    """
    base = Path.cwd() if base is None else base
    unknown = sorted(set(config) - _TOP_KEYS)
    if unknown:
        raise InvalidInputError(
            f"config has unknown key {unknown[0]!r}; allowed: {', '.join(sorted(_TOP_KEYS))}"
        )
    entries = config.get("workloads")
    if not isinstance(entries, list) or not entries:
        raise InvalidInputError("config needs a non-empty [[workloads]] list")
    runs: list[RunSpec] = []
    named: dict[str, str] = {}  # fabric name -> its JSON: one name, one fabric across the config
    for k, entry in enumerate(entries):
        where = f"workloads[{k}]"
        if not isinstance(entry, Mapping):
            raise InvalidInputError(f"`{where}` must be a table; got {entry!r}")
        allowed = _FILE_KEYS if "path" in entry else _WL_KEYS
        bad = sorted(set(entry) - allowed)
        if bad:
            raise InvalidInputError(
                f"`{where}` has unknown key {bad[0]!r}; allowed: {', '.join(sorted(allowed))}"
            )

        def get(key: str, default: Any, entry: Mapping[str, Any] = entry) -> Any:
            return entry.get(key, config.get(key, default))

        if entry.get("name") in ITERATION_WORKLOADS and "path" not in entry:
            it_name = str(entry["name"])
            known = ITERATION_WORKLOADS[it_name].options()
            it_settings = _iteration_entry(entry, config, where, base, named)
            runs += _instances(
                entry,
                it_name,
                known,
                it_settings,
                where,
                normalized=False,
                gbps=None,
                room=MAX_RUNS - len(runs),
            )
            continue
        algs = [str(a) for a in _as_list(get("algorithms", ["spectra"]), f"{where}.algorithms")]
        for a in algs:
            if a not in SCHEDULERS:
                raise InvalidInputError(
                    f"`{where}`: unknown algorithm {a!r}; choose one of {', '.join(SCHEDULERS)}"
                )
        settings = _settings(entry, config, where, base, named, algs, algs)
        normalized = check_bool(get("normalized", True), f"{where}.normalized")
        if "path" in entry:
            label = str(entry.get("label", "files"))
            family = str(entry.get("family", label))
            found = _files(entry["path"], where, base)
            _check_room(len(found) * len(settings), MAX_RUNS - len(runs), where)
            for shown, absolute in found:
                opts_json = json.dumps({"path": shown}, sort_keys=True)
                lab = f"{label} {Path(shown).name}"
                digest = _file_digest(Path(absolute))
                runs += [
                    RunSpec(
                        family,
                        lab,
                        FILE_WORKLOAD,
                        opts_json,
                        normalized,
                        None,
                        0,
                        a,
                        s,
                        d,
                        absolute,
                        f,
                        fs,
                        digest,
                    )
                    for a, s, d, f, fs in settings
                ]
            continue
        name = entry.get("name")
        if name not in WORKLOADS:
            choices = ", ".join(sorted([*WORKLOADS, *ITERATION_WORKLOADS]))
            raise InvalidInputError(
                f"`{where}.name` is {name!r}; choose one of {choices}"
                " (or give `path` for your own matrix files)"
            )
        known = WORKLOADS[name].options()
        if name == "coflow":
            known = {**known, "path": None}  # read by ocsched.io.generate
        gbps = get("link_gbps", None)
        if gbps is not None:
            gbps = check_number(gbps, f"{where}.link_gbps", low=0.0, closed=False)
        runs += _instances(
            entry, name, known, settings, where, normalized=normalized, gbps=gbps, room=MAX_RUNS - len(runs)
        )
    keys = [r.key for r in runs]
    if len(set(keys)) != len(keys):
        raise InvalidInputError("config lists the same run twice (repeated workload entry or value)")
    return runs
