"""Demand matrices: read (``.npy``, ``.npz``, ``.csv``, ``.json``; text gzipped too; size-checked), write."""

from __future__ import annotations

import json
import logging
import os
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ocsched._lazy import issparse
from ocsched.errors import InvalidInputError
from ocsched.io._files import MAX_DENSE_ELEMENTS, MAX_NNZ, MAX_PORTS, file_text, write_atomic, write_text
from ocsched.model import Demand

log = logging.getLogger("ocsched.io")  # the package's logger, as before io became a package

#: Demand file names end with one of these (the text formats may be gzip-compressed).
DEMAND_SUFFIXES = (".npy", ".npz", ".csv", ".json", ".csv.gz", ".json.gz")


def demand_suffix(path: str | os.PathLike[str]) -> str | None:
    """The :data:`DEMAND_SUFFIXES` entry that ``path``'s name ends with (any case), else None.

    >>> demand_suffix("D.JSON.gz"), demand_suffix("d.csv"), demand_suffix("d.txt")
    ('.json.gz', '.csv', None)
    """
    low = Path(path).name.lower()
    return max((s for s in DEMAND_SUFFIXES if low.endswith(s)), key=len, default=None)


def demand_stem(path: str | os.PathLike[str]) -> str:
    """``path``'s name without its demand suffix (``phase2.csv.gz`` -> ``phase2``).

    >>> demand_stem("a/phase2.csv.gz"), demand_stem("phase3.npy"), demand_stem("notes")
    ('phase2', 'phase3', 'notes')
    """
    name = Path(path).name
    return name[: len(name) - len(demand_suffix(name) or "")]


def _suffix(path: Path, name: str) -> str:
    suffix = demand_suffix(path)
    if suffix is None:
        raise InvalidInputError(
            f"`{name}` has unknown file type {path.suffix or '(none)'!r}: {path}; "
            f"use one of {', '.join(DEMAND_SUFFIXES)}"
        )
    return suffix


#: Long-form CSV header names, lower-case, for the source, destination and amount columns.
SRC_NAMES = ("src", "source", "from", "sender", "u")
DST_NAMES = ("dst", "target", "to", "dest", "destination", "receiver", "v")
VALUE_NAMES = ("value", "weight", "bytes", "size", "demand", "amount", "volume", "time")
#: Columns are (source, destination, amount) header names of a long-form CSV.
Columns = tuple[str, str, str]


def spool_stdin(*, stream: IO[bytes] | None = None) -> Path:
    """Copy stdin (or ``stream``) to a temporary file whose suffix says what it holds; return it.

    The format is told from the content: ``.npy`` and ``.npz`` by their magic bytes, JSON by its
    first character (``[`` or ``{``), CSV otherwise. The file is removed when the process exits.

    Raises
    ------
    InvalidInputError
        If stdin is empty.
    """
    import atexit
    import shutil
    import sys
    import tempfile

    data = (stream or sys.stdin.buffer).read(MAX_DENSE_ELEMENTS * 8 + 1)
    if not data.strip():
        raise InvalidInputError("a file argument is - (stdin), but stdin is empty")
    if data.startswith(b"\x93NUMPY"):
        suffix = ".npy"
    elif data.startswith(b"PK"):
        suffix = ".npz"
    elif data.lstrip()[:1] in (b"[", b"{"):
        suffix = ".json"
    else:
        suffix = ".csv"
    folder = tempfile.mkdtemp(prefix="ocsched-stdin-")
    atexit.register(shutil.rmtree, folder, True)
    path = Path(folder) / f"stdin{suffix}"
    path.write_bytes(data)
    return path


def read_demand(
    path: str | os.PathLike[str], *, name: str = "demand", columns: Columns | None = None
) -> Demand:
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
    return read_demand_named(path, name=name, columns=columns)[0]


def read_demand_named(
    path: str | os.PathLike[str], *, name: str = "demand", columns: Columns | None = None
) -> tuple[Demand, tuple[str, ...] | None]:
    """Read a demand matrix and its port names, if the file names its ports (CSV only).

    Names come from a dense CSV's header row (or its index column) and from non-numeric
    source/destination entries of a long-form CSV (numbered in order of first appearance); a
    header of plain numbers ``0..n-1`` is not a set of names.

    A long-form CSV is recognised by its header: a source column (:data:`SRC_NAMES`: ``src``,
    ``source``, ``from``, ...), a destination column (:data:`DST_NAMES`: ``dst``, ``target``,
    ``to``, ...) and an amount column (:data:`VALUE_NAMES`: ``value``, ``weight``, ``bytes``,
    ...), in any order and case, other columns ignored; ``columns=(src, dst, value)`` names
    them instead (then a missing one is an error listing the columns found).

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
    if columns is not None and suffix not in (".csv", ".csv.gz"):
        raise InvalidInputError(f"`columns` applies to long-form .csv files; `{name}` is {p}")
    try:
        matrix, names = _read_csv(p, columns) if suffix.startswith(".csv") else _READERS[suffix](p)
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


#: A number in a CSV cell: ASCII digits only, as every number ocsched reads (float() alone would
#: also take "1_000" and full-width digits); inf and nan are read, for the finiteness check to name.
_CSV_NUMBER = re.compile(
    r"\s*[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)\s*",
    re.ASCII | re.IGNORECASE,
)


def _number(text: str) -> float | None:
    return float(text) if _CSV_NUMBER.fullmatch(text) else None


def _cells(rows: list[list[str]]) -> NDArray[np.float64]:
    """The numbers of a dense CSV's rows; a cell that is not one is named (row and column from 0)."""
    out = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=np.float64)
    for k, r in enumerate(rows):
        for j, c in enumerate(r):
            x = _number(c)
            if x is None:
                raise ValueError(f"row {k} column {j} is not a number: {c!r}")  # the caller names the file
            out[k, j] = x
    return out


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


def _long_columns(p: Path, head: list[str], columns: Columns | None) -> tuple[int, int, int] | None:
    """Where the source, destination and amount columns are, or None for a dense file."""
    low = [c.strip().lower() for c in head]
    if columns is not None:
        found = []
        for want in columns:
            if want.lower() not in low:
                raise InvalidInputError(
                    f"csv file {p} has no column {want!r} (from `columns`); its columns are "
                    f"{', '.join(repr(c) for c in head)}"
                )
            found.append(low.index(want.lower()))
        return found[0], found[1], found[2]
    picks = [
        next((k for k, c in enumerate(low) if c in names), None)
        for names in (SRC_NAMES, DST_NAMES, VALUE_NAMES)
    ]
    if all(k is not None for k in picks):
        return picks[0], picks[1], picks[2]  # type: ignore[return-value]
    if sum(k is not None for k in picks) >= 2:  # two of three: a long-form file with an odd name
        raise InvalidInputError(
            f"csv file {p} looks long-form but its columns {', '.join(repr(c) for c in head)} lack a "
            f"{'source' if picks[0] is None else 'destination' if picks[1] is None else 'value'} column: "
            f"name them src/source/from, dst/target/to, value/weight/bytes, or give --columns SRC,DST,VALUE"
        )
    return None


def _read_csv(p: Path, columns: Columns | None = None) -> Named:
    lines = [ln.split("#", 1)[0].strip() for ln in file_text(p).splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise InvalidInputError(f"csv file {p} is empty")
    head = [c.strip() for c in lines[0].split(",")]
    where = _long_columns(p, head, columns)
    if where is not None:
        return _read_long_csv(p, lines, where, head)
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
    data = _cells(cells)
    names = None
    for labels in (header, index):
        if labels is not None:
            _warn_one_based(labels, p)
            if names is None and len(labels) == data.shape[1] and not _plain_ids(labels):
                names = tuple(labels)
    return data, names


def _read_long_csv(p: Path, lines: list[str], where: tuple[int, int, int], head: list[str]) -> Named:
    rows = [[c.strip() for c in ln.split(",")] for ln in lines[1:]]
    if not rows:
        raise InvalidInputError(f"csv file {p} has a header but no flows")
    if len(rows) > MAX_NNZ:
        raise InvalidInputError(f"csv file {p} holds {len(rows)} flows, above the limit of {MAX_NNZ}")
    for k, r in enumerate(rows):
        if len(r) != len(head):
            raise InvalidInputError(
                f"csv file {p} line {k + 2}: expected {','.join(head)}; got {','.join(r)!r}"
            )
    rows = [[r[k] for k in where] for r in rows]
    numbers = [_number(r[2]) for r in rows]
    if None in numbers:
        k = numbers.index(None)
        raise ValueError(f"line {k + 2}: column {head[where[2]]!r} must be a number; got {rows[k][2]!r}")
    values = np.array(numbers, dtype=np.float64)
    ends = [r[0] for r in rows] + [r[1] for r in rows]
    names: tuple[str, ...] | None = None
    if all(_number(c) is not None for c in ends):
        ij = np.array([_number(c) for c in ends], dtype=np.float64)
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
    data: Any = json.loads(file_text(p))
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
    ".csv.gz": _read_csv,
    ".json.gz": _read_json,
}


def demand_csv(matrix: ArrayLike | sp.sparray | Demand) -> str:
    """The text :func:`write_demand` writes to a ``.csv`` file (n rows of n numbers).

    >>> demand_csv([[0, 1.5], [2, 0]])
    '0,1.5\\n2,0\\n'
    """
    m: Any = matrix.to_dense() if isinstance(matrix, Demand) else matrix
    if sp.issparse(m):
        m = cast(Any, m).toarray()
    dense = np.asarray(m, dtype=np.float64)
    return "".join(",".join(f"{x:.17g}" for x in row) + "\n" for row in dense)


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
    text = demand_csv(dense) if suffix == ".csv.gz" else json.dumps(dense.tolist())
    return write_text(p, text, force=force)
