"""Iteration files (sequences of phases): JSON, 3-D ``.npy`` or a folder of matrices; their schedules."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.io._files import MAX_DENSE_ELEMENTS, file_text, read_text, write_text
from ocsched.io.demand import DEMAND_SUFFIXES, _number, demand_stem, demand_suffix, read_demand
from ocsched.iteration import ITERATION_FORMAT, Iteration, IterationSchedule

T = TypeVar("T")

#: A folder of per-phase matrices may hold this file: one gap per phase, in order or by phase name.
GAPS_FILE = "gaps.csv"


def _read_gaps(p: Path, phases: list[str]) -> list[float]:
    """The gaps of ``gaps.csv``: one per line in the phases' order, or ``name,gap`` rows by name."""
    lines = [ln.split("#", 1)[0].strip() for ln in p.read_text().splitlines()]
    lines = [ln for ln in lines if ln]
    if lines and _number(lines[0].split(",")[-1]) is None:
        lines = lines[1:]  # a header such as "gap_before" or "name,gap_before"
    rows = [[c.strip() for c in ln.split(",")] for ln in lines]
    values = []
    for k, r in enumerate(rows):
        v = _number(r[-1])
        if v is None or len(r) > 2:
            raise InvalidInputError(f"`gaps` file {p}: line {k + 1} is not GAP or NAME,GAP: {lines[k]!r}")
        values.append(v)
    if not rows or all(len(r) == 1 for r in rows):
        return values
    if any(len(r) != 2 for r in rows):
        raise InvalidInputError(f"`gaps` file {p}: give every line a phase name (NAME,GAP) or none")
    by_name: dict[str, float] = {}
    for r, v in zip(rows, values, strict=True):
        if r[0] in by_name:
            raise InvalidInputError(f"`gaps` file {p}: phase {r[0]!r} given twice")
        by_name[r[0]] = v
    unknown = [n for n in by_name if n not in phases]
    if unknown:
        raise InvalidInputError(
            f"`gaps` file {p} names phase(s) {', '.join(map(repr, unknown))} that the folder does not "
            f"hold; its phases are {', '.join(phases)}"
        )
    missing = [n for n in phases if n not in by_name]
    if missing:
        raise InvalidInputError(f"`gaps` file {p} gives no gap for phase(s) {', '.join(map(repr, missing))}")
    return [by_name[n] for n in phases]


def _natural(name: str) -> list[tuple[int, int | str]]:
    """Sort key reading digit runs as numbers: phase2 before phase10."""
    return [(0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"([0-9]+)", name) if t]


def read_iteration(
    path: str | os.PathLike[str], *, gaps: float | list[float] | None = None, name: str = "iteration"
) -> Iteration:
    """Read an iteration: a ``ocsched.sequence`` JSON file, a 3-D ``.npy`` or a folder of matrices.

    - ``.json`` (or ``.json.gz``): ``{"format": "ocsched.sequence", "version": 1, "phases": [...]}``
      (see :mod:`ocsched.iteration`); gaps come from the file.
    - ``.npy``: a K x n x n array, one phase per slice; ``gaps`` gives one gap for all or one each.
    - a folder: one demand file per phase (any :data:`DEMAND_SUFFIXES`), in natural order of file
      name (``phase2`` before ``phase10``), and optionally :data:`GAPS_FILE` with one gap per line
      in that order, or ``name,gap`` rows matched to the files' stems (a phase missing from it,
      or a name no file has, is an error; a header line is skipped); ``gaps`` overrides it.

    Raises
    ------
    InvalidInputError
        If the path is missing or malformed, a phase's matrix is invalid (naming the phase's
        file), the phases differ in n, or the gaps do not match the phases.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "it.npy"
    >>> np.save(p, np.ones((3, 2, 2)))
    >>> it = read_iteration(p, gaps=0.5)
    >>> len(it), it.n, it.total_gap
    (3, 2, 1.5)
    """
    p = Path(path)
    if p.is_dir():
        files = [f for f in p.iterdir() if f.is_file() and demand_suffix(f) is not None]
        files = sorted((f for f in files if f.name != GAPS_FILE), key=lambda f: (_natural(f.name), f.name))
        if not files:
            raise InvalidInputError(f"`{name}` folder {p} holds no matrix ({', '.join(DEMAND_SUFFIXES)})")
        stems = [demand_stem(f) for f in files]
        if len(set(stems)) < len(stems):
            twice = next(s for s in stems if stems.count(s) > 1)
            raise InvalidInputError(f"`{name}` folder {p} holds two files for phase {twice!r}")
        mats = [read_demand(f, name=f"{name} phase {s}") for f, s in zip(files, stems, strict=True)]
        if gaps is None and (p / GAPS_FILE).is_file():
            gaps = _read_gaps(p / GAPS_FILE, stems)
        return Iteration.from_matrices(mats, gaps=gaps, names=stems)
    if not p.is_file():
        raise InvalidInputError(f"`{name}` file not found: {p}")
    suffix = ".json" if p.name.lower().endswith(".json.gz") else p.suffix.lower()
    if suffix == ".json":
        if gaps is not None:
            raise InvalidInputError(f"`gaps` applies to .npy files and folders; {p} carries its own gaps")
        return _parse(p, Iteration.from_json, name)
    if suffix == ".npy":
        try:
            arr = np.load(p, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise InvalidInputError(f"`{name}` file {p} could not be read as .npy: {exc}") from None
        if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
            raise InvalidInputError(
                f"`{name}` file {p} must hold a K x n x n array (phases x ports x ports); "
                f"got shape {arr.shape}"
            )
        if arr.size > MAX_DENSE_ELEMENTS:
            raise InvalidInputError(f"`{name}` file {p} holds {arr.size} entries, above {MAX_DENSE_ELEMENTS}")
        return Iteration.from_matrices(np.array(arr), gaps=gaps)
    raise InvalidInputError(f"`{name}` must be a .json, .json.gz or .npy file or a folder; got {p}")


def is_iteration(path: str | os.PathLike[str]) -> bool:
    """Return True if ``path`` looks like an iteration (what ``ocsched schedule`` uses to pick).

    A folder, a 3-D ``.npy``, or a JSON file (``.json``, ``.json.gz``) whose ``format`` is
    ``ocsched.sequence``.
    """
    p = Path(path)
    if p.is_dir():
        return True
    try:
        if p.suffix.lower() == ".npy":
            return int(np.load(p, mmap_mode="r", allow_pickle=False).ndim) == 3
        if p.name.lower().endswith((".json", ".json.gz")):
            data = json.loads(file_text(p))
            return isinstance(data, dict) and data.get("format") == ITERATION_FORMAT
    except (OSError, ValueError, EOFError, UnicodeDecodeError, RecursionError):
        return False
    return False


def write_iteration(iteration: Iteration, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write ``iteration`` as ``ocsched.sequence`` JSON (sparse demands)."""
    text = iteration.to_json()
    return write_text(path, text, force=force)


def write_iteration_schedule(
    schedule: IterationSchedule, path: str | os.PathLike[str], *, force: bool = False
) -> Path:
    """Write an iteration schedule as ``ocsched.iteration-schedule`` JSON."""
    text = schedule.to_json()
    return write_text(path, text, force=force)


def read_iteration_schedule(path: str | os.PathLike[str], *, name: str = "schedule") -> IterationSchedule:
    """Read an iteration schedule written by :func:`write_iteration_schedule`."""
    return _parse(Path(path), IterationSchedule.from_json, name)


def _parse(p: Path, parse: Callable[[str], T], name: str) -> T:
    """``parse`` the text of file ``p``; errors name ``name`` and the file."""
    text = read_text(p, f"`{name}` file")
    try:
        return parse(text)
    except InvalidInputError as exc:
        raise InvalidInputError(f"`{name}` file {p}: {exc}") from None
