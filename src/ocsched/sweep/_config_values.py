"""A sweep config's values, checked: lists, scalars, switch counts, tables, demand-file globs, digests.

The small checks :mod:`ocsched.sweep.config` and :mod:`ocsched.sweep.settings` share; each
raises :class:`~ocsched.errors.InvalidInputError` naming the offending entry.
"""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ocsched._checks import check_switches
from ocsched.errors import InvalidInputError
from ocsched.fabric import MAX_SWITCHES
from ocsched.io import DEMAND_SUFFIXES
from ocsched.io.demand import demand_suffix


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
