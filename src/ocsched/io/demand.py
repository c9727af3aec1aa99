"""Demand matrices: read (``.npy``, ``.npz``, ``.csv``, ``.json``, size-checked) and write."""

from __future__ import annotations

import json
import logging
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ocsched._lazy import issparse
from ocsched.errors import InvalidInputError
from ocsched.io._files import MAX_DENSE_ELEMENTS, MAX_NNZ, MAX_PORTS, write_atomic, write_text
from ocsched.model import Demand

log = logging.getLogger("ocsched.io")  # the package's logger, as before io became a package

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
        If the file is missing, unreadable, of an unknown type, malformed, beyond the size
        limits, or holds an invalid matrix; the message names ``name`` and the file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = p.write_text("src,dst,value\\n0,1,2.5\\n1,0,1\\n")
    >>> read_demand(p).to_dense().tolist()
    [[0.0, 2.5], [1.0, 0.0]]
    """
    return read_demand_named(path, name=name)[0]


def read_demand_named(
    path: str | os.PathLike[str], *, name: str = "demand"
) -> tuple[Demand, tuple[str, ...] | None]:
    """Read a demand matrix and its port names, if the file names its ports (CSV only).

    Names come from a dense CSV's header row (or its index column) and from non-numeric
    ``src``/``dst`` entries of a long-form CSV (numbered in order of first appearance); a header
    of plain numbers ``0..n-1`` is not a set of names.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = p.write_text(",a,b\\na,0,2\\nb,1,0\\n")  # what DataFrame.to_csv writes
    >>> d, names = read_demand_named(p)
    >>> d.to_dense().tolist(), names
    ([[0.0, 2.0], [1.0, 0.0]], ('a', 'b'))
    """
    p = Path(path)
    suffix = _suffix(p, name)
    if not p.is_file():
        raise InvalidInputError(f"`{name}` file not found: {p}")
    try:
        matrix, names = _READERS[suffix](p)
    except InvalidInputError as exc:
        raise InvalidInputError(f"`{name}`: {exc}") from None
    except RecursionError:
        raise InvalidInputError(f"`{name}` file {p} is nested too deeply to be a matrix") from None
    except MemoryError:
        raise InvalidInputError(f"`{name}` file {p} is too large to read into memory") from None
    except (OSError, ValueError, KeyError, EOFError, OverflowError, zipfile.BadZipFile, TypeError) as exc:
        raise InvalidInputError(f"`{name}` file {p} could not be read as {suffix}: {exc}") from None
    return Demand.from_matrix(matrix, name=f"{name} ({p.name})"), names


Named = tuple[Any, tuple[str, ...] | None]


def _array_header(fh: IO[bytes], data_bytes: int, what: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """Read a .npy header from ``fh`` and check its claims before anything is allocated."""
    version = np.lib.format.read_magic(fh)
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    if version not in readers:
        raise InvalidInputError(f"{what} could not be read as .npy: unsupported format version {version}")
    shape, _, dtype = readers[version](fh)
    count = 1
    for k in shape:
        count *= int(k)
    if dtype.hasobject:
        raise InvalidInputError(f"{what} could not be read as .npy: it holds Python objects (dtype {dtype})")
    if count > MAX_DENSE_ELEMENTS:
        raise InvalidInputError(
            f"{what} has shape {tuple(shape)}: {count} entries, above the limit of {MAX_DENSE_ELEMENTS} "
            "(use a sparse .npz or long-form .csv for large sparse demands)"
        )
    held = data_bytes - fh.tell()
    if count * dtype.itemsize > held:
        raise InvalidInputError(
            f"{what} claims shape {tuple(shape)} of {dtype} but holds only {held} bytes of data"
        )
    return tuple(int(k) for k in shape), dtype


def _read_npy(p: Path) -> Named:
    size = p.stat().st_size
    with p.open("rb") as fh:  # our own handle: np.load leaks its own when the file is malformed
        _array_header(fh, size, f"npy file {p}")
        fh.seek(0)
        return np.load(fh, allow_pickle=False), None


def _npz_member(z: zipfile.ZipFile, key: str, p: Path) -> tuple[tuple[int, ...], np.dtype[Any]]:
    info = z.getinfo(f"{key}.npy")
    with z.open(info) as fh:
        return _array_header(fh, info.file_size, f"npz file {p} array {key!r}")


def _read_npz(p: Path) -> Named:
    with zipfile.ZipFile(p) as z:
        keys = [n[:-4] for n in z.namelist() if n.endswith(".npy")]
        shapes = {k: _npz_member(z, k, p)[0] for k in keys}
        if "format" in keys and "shape" in keys:  # scipy.sparse.save_npz
            if shapes["shape"] != (2,):
                raise InvalidInputError(f"npz file {p}: sparse `shape` must hold 2 numbers")
            for key in ("data", "indices", "row", "col", "coords"):
                if key in shapes and max(shapes[key], default=0) > MAX_NNZ:
                    raise InvalidInputError(
                        f"npz file {p} holds {max(shapes[key])} nonzeros, above the limit of {MAX_NNZ}"
                    )
            with z.open("shape.npy") as fh:
                dims = np.load(fh, allow_pickle=False).tolist()
            if max(dims) > MAX_PORTS:
                raise InvalidInputError(
                    f"npz file {p} has shape {tuple(dims)}, above the limit of {MAX_PORTS} ports"
                )
            with p.open("rb") as fh:
                return sp.load_npz(fh), None
    with p.open("rb") as fh, np.load(fh, allow_pickle=False) as z:
        if "demand" in keys:
            return z["demand"], None
        if len(keys) == 1:
            return z[keys[0]], None
    raise InvalidInputError(f"npz file {p} holds {len(keys)} arrays ({', '.join(keys)}); name one 'demand'")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _plain_ids(names: list[str]) -> bool:
    """True if ``names`` are just the numbers 0..n-1 or 1..n (no information worth keeping)."""
    return names in ([str(k) for k in range(len(names))], [str(k + 1) for k in range(len(names))])


def _warn_one_based(names: list[str], p: Path) -> None:
    if names and names == [str(k + 1) for k in range(len(names))]:
        log.warning(
            "csv file %s labels its ports 1..%d; ocsched numbers ports from 0 (port k is row k of the file)",
            p,
            len(names),
        )


def _read_csv(p: Path) -> Named:
    lines = [ln.split("#", 1)[0].strip() for ln in p.read_text().splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise InvalidInputError(f"csv file {p} is empty")
    head = [c.strip().lower() for c in lines[0].split(",")]
    if head[-3:] == ["src", "dst", "value"] and len(head) in (3, 4):
        return _read_long_csv(p, lines, index=len(head) == 4)
    cells = [[c.strip() for c in ln.split(",")] for ln in lines]
    width = len(cells[0])
    # A header row: a non-numeric or empty cell (DataFrame.to_csv leaves the corner empty), or
    # one row more than columns.
    header: list[str] | None = None
    first = cells[0]
    corner = first[0] == "" or first[0].lower().startswith("unnamed")
    if corner or all(_number(c) is None for c in first) or len(cells) == width + 1:
        header, cells = cells[0], cells[1:]
    if not cells:
        raise InvalidInputError(f"csv file {p} has a header but no rows")
    for k, r in enumerate(cells):
        if len(r) != width:
            raise InvalidInputError(f"csv file {p}: row {k} has {len(r)} values, the first row {width}")
    # An index column: a non-numeric first cell in every row, or, below a header, one column more
    # than rows (never guessed for a bare numeric file: a non-square matrix stays an error).
    index: list[str] | None = None
    if all(_number(r[0]) is None for r in cells) or (header is not None and width == len(cells) + 1):
        index = [r[0] for r in cells]
        cells = [r[1:] for r in cells]
        if header is not None:
            header = header[1:]
    data = np.array([[float(c) for c in r] for r in cells], dtype=np.float64)
    names = None
    for labels in (header, index):
        if labels is not None:
            _warn_one_based(labels, p)
            if names is None and len(labels) == data.shape[1] and not _plain_ids(labels):
                names = tuple(labels)
    return data, names


def _read_long_csv(p: Path, lines: list[str], *, index: bool) -> Named:
    rows = [[c.strip() for c in ln.split(",")] for ln in lines[1:]]
    if not rows:
        raise InvalidInputError(f"csv file {p} has a header but no flows")
    if len(rows) > MAX_NNZ:
        raise InvalidInputError(f"csv file {p} holds {len(rows)} flows, above the limit of {MAX_NNZ}")
    width = 4 if index else 3
    for k, r in enumerate(rows):
        if len(r) != width:
            raise InvalidInputError(f"csv file {p} line {k + 2}: expected src,dst,value; got {','.join(r)!r}")
    if index:
        rows = [r[1:] for r in rows]
    values = np.array([float(r[2]) for r in rows], dtype=np.float64)
    ends = [r[0] for r in rows] + [r[1] for r in rows]
    names: tuple[str, ...] | None = None
    if all(_number(c) is not None for c in ends):
        ij = np.array([float(c) for c in ends], dtype=np.float64)
        bad = (ij != np.round(ij)) | (ij < 0) | (ij >= MAX_PORTS)
        if bad.any():
            k = int(np.argmax(bad)) % len(rows)
            raise InvalidInputError(
                f"csv file {p} line {k + 2}: ports must be integers in 0..{MAX_PORTS - 1}; got {rows[k][:2]}"
            )
        ids = ij.astype(np.int64)
        if ids.min() == 1:
            log.warning(
                "csv file %s never uses port 0: ports look 1-based, but ocsched numbers them from 0 "
                "(port 0 is then an idle port)",
                p,
            )
        n = int(ids.max()) + 1
    else:
        order = list(dict.fromkeys(c for r in rows for c in r[:2]))  # first appearance
        number = {c: k for k, c in enumerate(order)}
        ids = np.array([number[c] for c in ends], dtype=np.int64)
        n = len(order)
        names = tuple(order)
    coo = sp.coo_array((values, (ids[: len(rows)], ids[len(rows) :])), shape=(n, n))
    return coo, names


def _read_json(p: Path) -> Named:
    data: Any = json.loads(p.read_text())
    if isinstance(data, dict):
        if "demand" not in data:
            if isinstance(data.get("format"), str):  # e.g. a schedule file
                raise InvalidInputError(
                    f"json file {p} is a {data['format']!r} document, not a demand matrix"
                    " (were two file arguments swapped?)"
                )
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
    return np.array(data, dtype=np.float64), None


_READERS: dict[str, Callable[[Path], Named]] = {
    ".npy": _read_npy,
    ".npz": _read_npz,
    ".csv": _read_csv,
    ".json": _read_json,
}


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
    if issparse(m):
        m = cast(Any, m).toarray()  # issparse narrows to a type the stubs give no toarray
    dense = np.asarray(m, dtype=np.float64)
    if suffix == ".npy":
        return write_atomic(p, lambda f: np.save(f, dense), force=force)
    if suffix == ".csv":
        return write_atomic(p, lambda f: np.savetxt(f, dense, delimiter=",", fmt="%.17g"), force=force)
    text = json.dumps(dense.tolist())
    return write_text(p, text, force=force)
