"""Read and write demand matrices, schedules and traces: the only library module that opens files.

Demand files, by suffix:

- ``.npy``: one dense 2-D array.
- ``.npz``: a scipy sparse matrix saved with :func:`scipy.sparse.save_npz`, or a NumPy archive
  holding one array (or an array named ``demand``).
- ``.csv``: n rows of n numbers (dense), or long form with a header ``src,dst,value`` and one
  flow per line (n = the largest port + 1; repeated pairs add up). ``#`` starts a comment.
- ``.json``: a list of n lists of n numbers, or ``{"demand": [[...], ...]}``.

Writes never replace an existing file unless ``force=True``, and go through a temporary file so
an interrupted write leaves nothing half-written.
"""

from __future__ import annotations

import contextlib
import io as _io
import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched.errors import InvalidInputError
from ocsched.model import Demand, Schedule
from ocsched.workloads import generate as _generate
from ocsched.workloads.coflow import Trace, parse_trace

__all__ = [
    "DEMAND_SUFFIXES",
    "check_writable",
    "generate",
    "read_demand",
    "read_schedule",
    "read_trace",
    "write_atomic",
    "write_demand",
    "write_schedule",
]

DEMAND_SUFFIXES = (".npy", ".npz", ".csv", ".json")


def _suffix(path: Path, name: str) -> str:
    suffix = path.suffix.lower()
    if suffix not in DEMAND_SUFFIXES:
        raise InvalidInputError(
            f"`{name}` has unknown file type {path.suffix or '(none)'!r}: {path}; "
            f"use one of {', '.join(DEMAND_SUFFIXES)}"
        )
    return suffix


def read_demand(path: str | os.PathLike[str], *, name: str = "demand") -> Demand:
    """Read a demand matrix from ``path`` (format chosen by suffix; see the module docstring).

    Raises
    ------
    InvalidInputError
        If the file is missing, unreadable, of an unknown type, malformed, or holds an invalid
        matrix; the message names ``name`` and the file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = p.write_text("src,dst,value\\n0,1,2.5\\n1,0,1\\n")
    >>> read_demand(p).to_dense().tolist()
    [[0.0, 2.5], [1.0, 0.0]]
    """
    p = Path(path)
    suffix = _suffix(p, name)
    if not p.is_file():
        raise InvalidInputError(f"`{name}` file not found: {p}")
    try:
        matrix = _READERS[suffix](p)
    except InvalidInputError as exc:
        raise InvalidInputError(f"`{name}`: {exc}") from None
    except (OSError, ValueError, KeyError, EOFError, OverflowError, zipfile.BadZipFile, TypeError) as exc:
        raise InvalidInputError(f"`{name}` file {p} could not be read as {suffix}: {exc}") from None
    return Demand.from_matrix(matrix, name=f"{name} ({p.name})")


def _read_npy(p: Path) -> Any:
    with p.open("rb") as fh:  # our own handle: np.load leaks its own when the file is malformed
        return np.load(fh, allow_pickle=False)


def _read_npz(p: Path) -> Any:
    with p.open("rb") as fh, np.load(fh, allow_pickle=False) as z:
        keys = list(z.files)
        if "format" in keys and "shape" in keys:
            return sp.load_npz(p)
        if "demand" in keys:
            return z["demand"]
        if len(keys) == 1:
            return z[keys[0]]
    raise InvalidInputError(f"npz file {p} holds {len(keys)} arrays ({', '.join(keys)}); name one 'demand'")


def _read_csv(p: Path) -> Any:
    lines = [ln.split("#", 1)[0].strip() for ln in p.read_text().splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise InvalidInputError(f"csv file {p} is empty")
    head = [c.strip().lower() for c in lines[0].split(",")]
    if head == ["src", "dst", "value"]:
        rows = [ln.split(",") for ln in lines[1:]]
        for k, r in enumerate(rows):
            if len(r) != 3:
                raise InvalidInputError(
                    f"csv file {p} line {k + 2}: expected src,dst,value; got {','.join(r)!r}"
                )
        if not rows:
            raise InvalidInputError(f"csv file {p} has a header but no flows")
        arr = np.array([[float(x) for x in r] for r in rows])
        ij = arr[:, :2]
        if (ij != np.round(ij)).any() or (ij < 0).any():
            k = int(np.argmax(((ij != np.round(ij)) | (ij < 0)).any(axis=1)))
            raise InvalidInputError(f"csv file {p} line {k + 2}: ports must be integers >= 0; got {rows[k]}")
        n = int(ij.max()) + 1
        return sp.coo_array((arr[:, 2], (ij[:, 0].astype(int), ij[:, 1].astype(int))), shape=(n, n))
    data = np.loadtxt(_io.StringIO("\n".join(lines)), delimiter=",", ndmin=2)
    return data


def _read_json(p: Path) -> Any:
    data: Any = json.loads(p.read_text())
    if isinstance(data, dict):
        if "demand" not in data:
            raise InvalidInputError(f"json file {p} is an object without a 'demand' key")
        data = data["demand"]
    if not isinstance(data, list) or not all(isinstance(r, list) for r in data):
        raise InvalidInputError(f"json file {p} must hold a list of lists of numbers")
    if any(isinstance(x, bool) or not isinstance(x, int | float) for r in data for x in r):
        raise InvalidInputError(f"json file {p} must hold only numbers")
    if len({len(r) for r in data}) > 1:
        raise InvalidInputError(
            f"json file {p}: rows have different lengths {sorted({len(r) for r in data})}"
        )
    return np.array(data, dtype=np.float64)


_READERS: dict[str, Callable[[Path], Any]] = {
    ".npy": _read_npy,
    ".npz": _read_npz,
    ".csv": _read_csv,
    ".json": _read_json,
}


def check_writable(path: str | os.PathLike[str], *, force: bool = False, name: str = "out") -> Path:
    """Return ``path`` as a Path, or raise if it exists (and ``force`` is False) or is a folder."""
    p = Path(path)
    if p.is_dir():
        raise InvalidInputError(f"`{name}` is a directory, expected a file path: {p}")
    if p.exists() and not force:
        raise InvalidInputError(f"`{name}` file already exists: {p} (use --force to overwrite)")
    return p


def write_atomic(
    path: str | os.PathLike[str],
    write: Callable[[IO[bytes]], object],
    *,
    force: bool = False,
    name: str = "out",
) -> Path:
    """Call ``write(f)`` on a temporary file beside ``path``, then move it into place."""
    p = check_writable(path, force=force, name=name)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        # mkstemp creates the file 0600; give it the mode a plain open() would (umask applied).
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
        if not force and p.exists():  # appeared meanwhile: still never overwrite
            raise InvalidInputError(f"`{name}` file already exists: {p} (use --force to overwrite)")
        os.replace(tmp, p)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return p


def write_demand(
    matrix: ArrayLike | sp.sparray | Demand, path: str | os.PathLike[str], *, force: bool = False
) -> Path:
    """Write a demand matrix; the suffix picks the format (``.npz`` is written sparse).

    The matrix is written as given (diagonal included); it is not validated here.
    """
    p = Path(path)
    suffix = _suffix(p, "out")
    m: Any = matrix
    if isinstance(m, Demand):
        m = m.to_sparse() if suffix == ".npz" else m.to_dense()
    if suffix == ".npz":
        sparse = sp.csr_array(m)
        return write_atomic(p, lambda f: sp.save_npz(f, sparse), force=force)
    if sp.issparse(m):
        m = cast(Any, m).toarray()  # issparse narrows to a type the stubs give no toarray
    dense = np.asarray(m, dtype=np.float64)
    if suffix == ".npy":
        return write_atomic(p, lambda f: np.save(f, dense), force=force)
    if suffix == ".csv":
        return write_atomic(p, lambda f: np.savetxt(f, dense, delimiter=",", fmt="%.17g"), force=force)
    text = json.dumps(dense.tolist())
    return write_atomic(p, lambda f: f.write(text.encode()), force=force)


def write_schedule(schedule: Schedule, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write ``schedule`` as JSON (see :meth:`Schedule.to_json`)."""
    text = schedule.to_json(indent=1)
    return write_atomic(path, lambda f: f.write(text.encode()), force=force)


def read_schedule(path: str | os.PathLike[str], *, name: str = "schedule") -> Schedule:
    """Read a schedule JSON file written by :func:`write_schedule`."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"`{name}` file not found: {p}")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"`{name}` file {p} could not be read: {exc}") from None
    try:
        return Schedule.from_json(text)
    except InvalidInputError as exc:
        raise InvalidInputError(f"`{name}` file {p}: {exc}") from None


def _umask() -> int:
    mask = os.umask(0)  # the only portable way to read it: set, then restore at once
    os.umask(mask)
    return mask


def read_trace(path: str | os.PathLike[str], *, name: str = "path") -> Trace:
    """Read a coflow-benchmark trace file (format: :mod:`ocsched.workloads.coflow`).

    Raises
    ------
    InvalidInputError
        If the file is missing, unreadable or malformed (the message names the file and line).
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"`{name}`: coflow trace file not found: {p}")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"`{name}`: coflow trace file {p} could not be read: {exc}") from None
    return parse_trace(text, str(p))


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
