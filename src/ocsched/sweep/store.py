"""The results folder: a Parquet dataset that pandas, polars and ``pyarrow.dataset`` read directly.

Layout::

    out/_manifest.parquet         no rows; the schema, and in its metadata the format, version,
                                  option column types and every config applied (JSON)
    out/parts/part-NNNNNN-XXXXXXXX.parquet   one per finished batch, written atomically
    out/.lock                     advisory lock held by a running sweep (empty)
    out.quarantine/               unreadable parts moved aside (their runs are redone)

pandas and ``pyarrow.dataset`` skip files starting with ``_`` or ``.``; polars reads every
non-empty file, so the manifest is itself a (row-less) Parquet file of the same schema and
nothing else non-empty lives in the folder: all three read the folder directly.
All parts share one schema (:func:`ocsched.sweep.results.schema`); when a config adds an option,
the existing parts are rewritten with the new (null) column before anything else is written.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from ocsched._extras import missing_extra
from ocsched._version import __version__
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.io import write_atomic
from ocsched.sweep.results import (
    RESULT_COLUMNS,
    conform,
    dedupe,
    from_legacy,
    merge_types,
    pyarrow_modules,
    read_table,
    schema,
)

__all__ = ["MANIFEST", "PARTS", "Store", "check_out", "locked", "quarantine_dir", "read_results"]

log = logging.getLogger(__name__)

MANIFEST = "_manifest.parquet"
META_KEY = b"ocsched.sweep"
LEGACY_MANIFEST = "manifest.json"
PARTS = "parts"
LOCK = ".lock"
FORMAT = "ocsched.sweep"
VERSION = 2


def read_manifest(out: Path) -> dict[str, Any]:
    """Return the manifest of ``out``, or raise one line saying what is wrong with it."""
    pa, pq = pyarrow_modules()
    try:
        meta = pq.read_schema(out / MANIFEST).metadata or {}
        data = json.loads(meta[META_KEY])
    except (pa.ArrowException, OSError, KeyError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidInputError(
            f"`out` {out}: {MANIFEST} is unreadable ({type(exc).__name__}); "
            "restore it or choose another --out"
        ) from None
    ok = (
        isinstance(data, dict)
        and data.get("format") == FORMAT
        and data.get("version") == VERSION
        and isinstance(data.get("options"), dict)
        and all(
            isinstance(v, str) and v in ("bool_", "int64", "float64", "string")
            for v in data["options"].values()
        )
        and isinstance(data.get("configs"), list)
    )
    if not ok:
        raise InvalidInputError(
            f"`out` {out}: {MANIFEST} is not an ocsched sweep manifest (version {VERSION}); "
            "restore it or choose another --out"
        )
    return dict(data)


def check_out(out: Path) -> None:
    """Raise unless ``out`` is new, an empty folder or a results folder (creates nothing)."""
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"`out` exists and is not a directory: {out}")
    if not out.is_dir() or not any(out.iterdir()):
        return
    if (out / LEGACY_MANIFEST).is_file() and not (out / MANIFEST).is_file():
        raise InvalidInputError(
            f"`out` {out} holds results of an older ocsched (manifest.json); `ocsched report` reads them, "
            "but new runs need another --out"
        )
    if not (out / MANIFEST).is_file():
        raise InvalidInputError(f"`out` directory {out} is not empty and holds no sweep; choose another")
    read_manifest(out)


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Create ``out`` and hold its advisory lock: a second sweep into the same folder is refused."""
    try:
        import filelock
    except ImportError:
        raise OcschedError(missing_extra("Sweeps", "filelock", "sweep")) from None
    out.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(out / LOCK)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        raise InvalidInputError(
            f"`out` {out} is in use by another sweep (lock {out / LOCK}); wait for it or choose another --out"
        ) from None
    try:
        yield
    finally:
        lock.release()


def quarantine_dir(out: Path) -> Path:
    """Where unreadable parts of ``out`` are moved (beside it: polars would read them inside)."""
    return out.parent / f"{out.name}.quarantine"


def _parts(out: Path) -> list[Path]:
    return sorted((out / PARTS).glob("part-*.parquet"))


def _read_part(part: Path) -> Any:
    """Read one part, or return None (with a warning) when it is unreadable."""
    pa, pq = pyarrow_modules()
    try:
        return pq.read_table(part)
    except (pa.ArrowException, OSError, ValueError) as exc:
        log.warning(
            "unreadable result part %s (%s); its runs count as not done", part, str(exc).splitlines()[0]
        )
        return None


def read_results(path: str | os.PathLike[str], *, name: str = "results") -> Any:
    """Read a results folder (or one ``.parquet`` / ``.csv`` file) as a :class:`pyarrow.Table`.

    Unreadable parts are skipped with a warning; a run stored twice counts once.

    Raises
    ------
    InvalidInputError
        If ``path`` is neither a results folder nor a readable ``.parquet``/``.csv`` file.
    """
    pa, _ = pyarrow_modules()
    p = Path(path)
    if not p.is_dir():
        return read_table(p, name=name)
    if (p / MANIFEST).is_file():
        types = read_manifest(p)["options"]
    elif (p / LEGACY_MANIFEST).is_file():
        types = {}
    else:
        raise InvalidInputError(f"`{name}` directory {p} has no {MANIFEST}: not a sweep result")
    tables = []
    for part in _parts(p):
        table = _read_part(part)
        if table is None:
            continue
        try:
            tables.append(conform(from_legacy(table), f"result part {part}"))
        except InvalidInputError as exc:
            log.warning("%s; its runs are left out", exc)
    if not tables:
        return schema(types).empty_table()
    table = pa.concat_tables(tables, promote_options="permissive")
    return dedupe(table)


class Store:
    """An open, locked results folder: knows the finished keys and writes new parts."""

    def __init__(
        self,
        out: Path,
        config: Mapping[str, Any],
        types: Mapping[str, str],
        *,
        force: bool,
        fabric_ids: Mapping[str, str] | None = None,
    ) -> None:
        """Open ``out`` for ``config``; ``fabric_ids`` maps run keys to their fabric's identity.

        Parts written before a fixed column existed are rewritten with it; a part's rows from
        before ``fabric_id`` get theirs from ``fabric_ids`` (the key holds the fabric's content).
        """
        self.out = out
        self.fabric_ids = dict(fabric_ids or {})
        if force and (out / MANIFEST).is_file():
            for f in (out / PARTS).glob("*"):
                f.unlink()
            (out / MANIFEST).unlink()
        manifest: dict[str, Any] = {"format": FORMAT, "version": VERSION, "options": {}, "configs": []}
        grown = False  # a fixed column added since the folder was written (e.g. `fabric`)
        if (out / MANIFEST).is_file():
            manifest = read_manifest(out)
            _, pq = pyarrow_modules()
            grown = not set(RESULT_COLUMNS) <= set(pq.read_schema(out / MANIFEST).names)
        old_types: dict[str, str] = dict(manifest["options"])
        merged = dict(old_types)
        for k, t in types.items():
            merged[k] = merge_types(merged.get(k), t)
        self.types = dict(sorted(merged.items()))
        (out / PARTS).mkdir(parents=True, exist_ok=True)
        for stale in [*out.glob(".*.tmp"), *(out / PARTS).glob(".*.tmp")]:  # left by a killed run
            stale.unlink()
        self.finished = self._scan(migrate=grown or self.types != old_types)
        plain = json.loads(json.dumps(config, default=str))  # TOML dates become strings
        if plain not in manifest["configs"]:
            manifest["configs"].append(plain)
        manifest.update(options=self.types, ocsched_version=__version__)
        empty = schema(self.types).with_metadata({META_KEY: json.dumps(manifest).encode()}).empty_table()
        _write_table(out / MANIFEST, empty, force=True)

    def _scan(self, *, migrate: bool) -> set[str]:
        """Collect finished keys; quarantine unreadable parts; rewrite parts to a grown schema."""
        target = schema(self.types)
        keys: set[str] = set()
        for part in _parts(self.out):
            table = _read_part(part)
            if table is None or "key" not in table.column_names:
                dest = quarantine_dir(self.out) / part.name
                dest.parent.mkdir(exist_ok=True)
                os.replace(part, dest)
                log.warning("moved unreadable part to %s; its runs will be redone", dest)
                continue
            if migrate and table.schema != target:
                table = _fill_fabric_ids(_conform(table, target), self.fabric_ids)
                _write_table(part, table, force=True)
            keys.update(table.column("key").to_pylist())
        return keys

    def write(self, rows: list[dict[str, Any]]) -> Path:
        """Write ``rows`` as a new part, atomically (Invariant: a part file is complete or absent)."""
        pa, _ = pyarrow_modules()
        table = pa.Table.from_pylist(rows, schema=schema(self.types))
        seq = len(_parts(self.out))
        final = self.out / PARTS / f"part-{seq:06d}-{uuid.uuid4().hex[:8]}.parquet"
        return _write_table(final, table)


def _write_table(path: Path, table: Any, *, force: bool = False) -> Path:
    _, pq = pyarrow_modules()

    def write(f: IO[bytes]) -> None:
        pq.write_table(table, f)

    return write_atomic(path, write, force=force, name="part")


def _fill_fabric_ids(table: Any, ids: Mapping[str, str]) -> Any:
    """Set a null ``fabric_id`` from ``ids`` (by run key): rows written before the column existed."""
    if not ids or "fabric_id" not in table.column_names:
        return table
    pa, _ = pyarrow_modules()
    keys = table.column("key").to_pylist()
    have = table.column("fabric_id").to_pylist()
    filled = [v if v is not None else ids.get(k) for k, v in zip(keys, have, strict=True)]
    if filled == have:
        return table
    at = table.column_names.index("fabric_id")
    return table.set_column(at, table.schema.field(at), pa.array(filled, pa.string()))


def _conform(table: Any, target: Any) -> Any:
    """Cast ``table`` to ``target``, adding missing columns as nulls."""
    pa, _ = pyarrow_modules()
    cols = []
    for f in target:
        if f.name in table.column_names:
            cols.append(table.column(f.name).cast(f.type))
        else:
            cols.append(pa.nulls(len(table), f.type))
    return pa.Table.from_arrays(cols, schema=target)
