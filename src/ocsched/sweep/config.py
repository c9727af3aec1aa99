"""Sweep configs: read a TOML file, a preset or a dict, and expand it into runs.

A sweep config names workloads with their options and seeds, switch counts ``switches``,
reconfiguration delays ``delta`` and algorithms::

    switches = [4, 16]
    delta = [0.01, 0.04]
    algorithms = ["spectra", "spectra-greedy"]
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

import itertools
import json
import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ocsched._checks import check_bool, check_int, check_number
from ocsched._limits import MAX_RUNS as MAX_RUNS
from ocsched.errors import InvalidInputError
from ocsched.schedulers import scheduler_name
from ocsched.sweep._config_values import _as_list, _check_scalar, _file_digest, _files, _table
from ocsched.sweep.results import RunSpec
from ocsched.sweep.settings import (
    ITERATION_ALGORITHMS,
    Setting,
    _iteration_entry,
    _settings,
    canonical_fabric,
    iteration_algorithm,
)
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
            known = ITERATION_WORKLOADS[it_name].defaults()
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
        try:  # a former name runs (and is stored) as the scheduler it names now
            given = _as_list(get("algorithms", ["spectra"]), f"{where}.algorithms")
            algs = [scheduler_name(a) for a in given]
        except InvalidInputError as exc:
            raise InvalidInputError(f"`{where}`: {exc}") from None
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
        known = WORKLOADS[name].defaults()
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
