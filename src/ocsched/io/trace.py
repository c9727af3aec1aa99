"""Workload inputs read from files: coflow traces, and :func:`generate` that reads them for you."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.io._files import MAX_DENSE_PORTS, read_text
from ocsched.workloads import generate as _generate
from ocsched.workloads.coflow import Trace, parse_trace


def read_trace(path: str | os.PathLike[str], *, name: str = "path") -> Trace:
    """Read a coflow-benchmark trace file (format: :mod:`ocsched.workloads.coflow`).

    Raises
    ------
    InvalidInputError
        If the file is missing, unreadable or malformed (the message names the file and line), or
        its header gives more than :data:`MAX_DENSE_PORTS` racks.
    """
    p = Path(path)
    trace = parse_trace(read_text(p, f"`{name}`: coflow trace file"), str(p))
    # The generators build dense ports x ports matrices: the header's count is checked first.
    if trace.ports > MAX_DENSE_PORTS:
        raise InvalidInputError(
            f"`{name}`: coflow trace {p} has {trace.ports} racks in its header, above the limit of "
            f"{MAX_DENSE_PORTS} ports"
        )
    return trace


def generate(name: str, **options: Any) -> np.ndarray[Any, np.dtype[np.float64]]:
    """:func:`ocsched.workloads.generate`, with file options read here: ``path`` becomes ``trace``.

    This is what the CLI and sweeps call, so ``--path`` / ``options = {path = ...}`` work for
    the coflow workload while the generators themselves never open a file.

    Examples
    --------
    >>> generate("moe8").shape
    (8, 8)
    """
    path = options.pop("path", None)
    if path is not None:
        options["trace"] = read_trace(path)
    return _generate(name, **options)
