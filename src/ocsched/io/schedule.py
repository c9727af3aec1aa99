"""Schedule files: write, read, and read with reused input ports reported as findings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.io._files import read_text, write_text
from ocsched.iteration import ITERATION_SCHEDULE_FORMAT, IterationSchedule
from ocsched.model import Schedule


def write_schedule(schedule: Schedule, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write ``schedule`` as JSON (see :meth:`Schedule.to_json`)."""
    text = schedule.to_json()
    return write_text(path, text, force=force)


def read_schedule(path: str | os.PathLike[str], *, name: str = "schedule") -> Schedule:
    """Read a schedule JSON file written by :func:`write_schedule`.

    Raises
    ------
    InvalidInputError
        If the file is missing, unreadable, not JSON (or nested too deeply), or not a valid
        schedule document, including a configuration that uses an input port twice (see
        :func:`read_schedule_checked` to get that as a finding instead).
    """
    sched, defects = read_schedule_checked(path, name=name)
    if defects:
        raise InvalidInputError(f"`{name}` file {Path(path)}: {defects[0]}")
    return sched


def read_schedule_checked(
    path: str | os.PathLike[str], *, name: str = "schedule"
) -> tuple[Schedule, list[str]]:
    """Read a schedule file, returning what breaks the matching rule as findings, not errors.

    A configuration that uses an input port twice cannot be held by :class:`Schedule` (its
    ``perm`` maps each input to one output). Such circuits are dropped from the returned
    schedule (the first use of the port is kept) and described in the returned list, in the
    words :func:`ocsched.validation.validate` uses, so ``ocsched validate`` lists them as
    violations with the others.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> doc = {"format": "ocsched.schedule", "version": 1, "ports": 2, "delta": 0.5, "switches": [
    ...     {"configurations": [{"start": 0.5, "duration": 1, "circuits": [[0, 1], [0, 0]]}]}]}
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.json"
    >>> _ = p.write_text(json.dumps(doc))
    >>> sched, found = read_schedule_checked(p)
    >>> sched.switches[0][0].circuits, found
    ([(0, 1)], ['switch 0 configuration 0: input port 0 used twice'])
    """
    p = Path(path)
    return _checked(_load(p, name), p, name)


def read_any_schedule(
    path: str | os.PathLike[str], *, name: str = "schedule"
) -> Schedule | IterationSchedule:
    """Read a schedule file or an iteration schedule file, told apart by the document's ``format``.

    Raises
    ------
    InvalidInputError
        As :func:`read_schedule`, or if an iteration schedule document is malformed.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> doc = {"format": "ocsched.schedule", "version": 1, "ports": 2, "delta": 0.5, "switches": []}
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.json"
    >>> _ = p.write_text(json.dumps(doc))
    >>> type(read_any_schedule(p)).__name__
    'Schedule'
    """
    p = Path(path)
    data = _load(p, name)
    if isinstance(data, dict) and data.get("format") == ITERATION_SCHEDULE_FORMAT:
        try:
            return IterationSchedule.from_dict(data)
        except InvalidInputError as exc:
            raise InvalidInputError(f"`{name}` file {p}: {exc}") from None
        except RecursionError:
            raise InvalidInputError(f"`{name}` file {p} is nested too deeply to be a schedule") from None
    sched, defects = _checked(data, p, name)
    if defects:
        raise InvalidInputError(f"`{name}` file {p}: {defects[0]}")
    return sched


def _load(p: Path, name: str) -> Any:
    """The JSON document of file ``p`` (errors name ``name`` and the file)."""
    text = read_text(p, f"`{name}` file")
    try:
        return json.loads(text)
    except RecursionError:
        raise InvalidInputError(f"`{name}` file {p} is nested too deeply to be a schedule") from None
    except ValueError as exc:
        raise InvalidInputError(f"`{name}` file {p}: schedule is not valid JSON: {exc}") from None


def _checked(data: Any, p: Path, name: str) -> tuple[Schedule, list[str]]:
    defects = _drop_reused_inputs(data)
    try:
        return Schedule.from_dict(data), defects
    except InvalidInputError as exc:
        raise InvalidInputError(f"`{name}` file {p}: {exc}") from None
    except RecursionError:
        raise InvalidInputError(f"`{name}` file {p} is nested too deeply to be a schedule") from None


def _drop_reused_inputs(data: Any) -> list[str]:
    """Remove circuits whose input port an earlier circuit of the same configuration uses.

    Only on one-port directed switches: where an endpoint has several ports, or circuits are
    bidirectional, a configuration may use an input several times (the validator counts it).
    """
    found: list[str] = []
    switches = data.get("switches") if isinstance(data, dict) else None
    for b, sw in enumerate(switches if isinstance(switches, list) else []):
        if isinstance(sw, dict) and (sw.get("bidirectional") is True or sw.get("ports_per_endpoint", 1) != 1):
            continue
        confs = sw.get("configurations") if isinstance(sw, dict) else None
        for k, c in enumerate(confs if isinstance(confs, list) else []):
            circuits = c.get("circuits") if isinstance(c, dict) else None
            if not isinstance(circuits, list):
                continue
            seen: set[object] = set()
            keep = []
            for pair in circuits:
                i = pair[0] if isinstance(pair, list) and len(pair) == 2 else None
                if isinstance(i, int) and not isinstance(i, bool) and i in seen:
                    found.append(f"switch {b} configuration {k}: input port {i} used twice")
                    continue
                seen.add(i)
                keep.append(pair)
            c["circuits"] = keep
    return found
