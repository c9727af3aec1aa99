"""Trace files: which files a path names, opening them (gzip too), and reading big JSON in bounded memory.

A trace is a folder, a glob pattern, an archive (``.tar``, ``.tar.gz``, ``.tgz``, ``.zip``) or
a single file; each file holds one rank. :func:`expand` lists the files; archives are unpacked
into a temporary folder the caller owns (members are checked: no absolute paths, no ``..``).

:func:`scan_json` reads a JSON object key by key without loading the file: the items of one
named array (``traceEvents`` of a Kineto trace, ``nodes`` of an execution trace) are decoded one
at a time with the standard library's C decoder (``json.JSONDecoder.raw_decode``) from a buffer
of at most a few MB, and handed to a callback; the other top-level values (small metadata such
as ``distributedInfo``) are returned whole. Memory is bounded by the buffer and the largest
single item, whatever the file's size. A file of at most :data:`WHOLE_BYTES` (most ranks of a
profiled step) is decoded in one call instead, which gives the same items and values and saves
the per-item work; anything that call would read differently (not UTF-8, not one JSON object,
the array's key twice) goes through the streaming reader, which also names what is wrong.
"""

from __future__ import annotations

import fnmatch
import glob
import gzip
import io
import json
import os
import re
import shutil
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

from ocsched.errors import InvalidInputError

__all__ = ["MAX_TRACE_FILES", "expand", "open_binary", "rank_from_name", "scan_json", "sniff"]

#: Most files (ranks) one trace may have.
MAX_TRACE_FILES = 100_000
#: Bytes read per step while streaming a JSON file.
CHUNK = 1 << 20
#: Largest single JSON item or top-level value held at once (a Kineto event is a few hundred bytes).
MAX_ITEM_CHARS = 256 << 20
#: Files up to this size are decoded whole (their objects take about ten times as much memory).
WHOLE_BYTES = 8 << 20
_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip")
_TRACE_SUFFIXES = (".json", ".json.gz", ".et", ".et.gz")


def open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing gzip (by its magic bytes, not its name)."""
    with path.open("rb") as f:
        head = f.read(2)
    if head == b"\x1f\x8b":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def sniff(path: Path, size: int = 65536) -> bytes:
    """The first ``size`` bytes of ``path`` (decompressed); empty if it cannot be read."""
    try:
        with open_binary(path) as f:
            return f.read(size)
    except (OSError, EOFError, gzip.BadGzipFile):
        return b""


def _is_archive(p: Path) -> bool:
    name = p.name.lower()
    return p.is_file() and name.endswith(_ARCHIVES)


def _unpack(archive: Path, into: Path) -> Path:
    """Unpack ``archive`` into a fresh folder under ``into`` (safe member paths only)."""
    target = into / re.sub(r"[^A-Za-z0-9_.-]", "_", archive.name)
    target.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    _check_member(archive, info.filename)
                    if len(z.infolist()) > MAX_TRACE_FILES:
                        raise InvalidInputError(
                            f"`trace` archive {archive} has more than {MAX_TRACE_FILES} files"
                        )
                z.extractall(target)
        else:
            with tarfile.open(archive) as t:
                members = []
                for m in t:
                    _check_member(archive, m.name)
                    if m.isfile():
                        members.append(m)
                    if len(members) > MAX_TRACE_FILES:
                        raise InvalidInputError(
                            f"`trace` archive {archive} has more than {MAX_TRACE_FILES} files"
                        )
                for m in members:
                    src = t.extractfile(m)
                    if src is None:
                        continue
                    dest = target / m.name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    with src, dest.open("wb") as out:
                        shutil.copyfileobj(src, out)
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InvalidInputError(f"`trace` archive {archive} cannot be read: {exc}") from None
    return target


def _check_member(archive: Path, name: str) -> None:
    parts = Path(name).parts
    if name.startswith(("/", "\\")) or ".." in parts:
        raise InvalidInputError(f"`trace` archive {archive} has an unsafe member path {name!r}")


def _trace_files(folder: Path) -> list[Path]:
    out = []
    for p in sorted(folder.rglob("*")):
        # macOS resource forks (._name) and hidden files are not traces.
        if p.is_file() and not p.name.startswith(".") and p.name.lower().endswith(_TRACE_SUFFIXES):
            out.append(p)
    return out


def expand(path: str | os.PathLike[str], scratch: Path) -> list[Path]:
    """Return the trace files ``path`` names, sorted; archives are unpacked under ``scratch``.

    Raises
    ------
    InvalidInputError
        If nothing matches, the path does not exist, or there are more than
        :data:`MAX_TRACE_FILES` files.
    """
    text = os.fspath(path)
    p = Path(text)
    if p.is_dir():
        files = _trace_files(p)
    elif _is_archive(p):
        files = _trace_files(_unpack(p, scratch))
    elif p.is_file():
        files = [p]
    elif glob.has_magic(text):
        files = []
        for m in sorted(glob.glob(text, recursive=True)):
            q = Path(m)
            if _is_archive(q):
                files.extend(_trace_files(_unpack(q, scratch)))
            elif q.is_dir():
                files.extend(_trace_files(q))
            elif q.is_file():
                files.append(q)
        if not files:
            raise InvalidInputError(f"`trace` pattern {text!r} matches no file")
    else:
        raise InvalidInputError(f"`trace` not found: {text}")
    if not files:
        raise InvalidInputError(
            f"`trace` {text} holds no trace file (expected {', '.join('*' + s for s in _TRACE_SUFFIXES)})"
        )
    if len(files) > MAX_TRACE_FILES:
        raise InvalidInputError(
            f"`trace` {text} has {len(files)} files, above the limit of {MAX_TRACE_FILES}"
        )
    return files


_RANK_PATTERNS = (
    re.compile(r"rank[-_.]?(\d+)", re.IGNORECASE),
    re.compile(r"\.(\d+)\.et(?:\.gz)?$", re.IGNORECASE),
)


def rank_from_name(path: Path) -> int | None:
    """The rank a file's name gives (``rank-3.json``, ``rank3.pt.trace.json``, ``prefix.3.et``), if any.

    >>> rank_from_name(Path("rank-12.Jul_15.pt.trace.json.gz")), rank_from_name(Path("ar.3.et"))
    (12, 3)
    >>> rank_from_name(Path("trace.json")) is None
    True
    """
    for pattern in _RANK_PATTERNS:
        found = pattern.findall(path.name)
        if len(found) == 1:
            return int(found[0])
    return None


def matches(path: Path, patterns: tuple[str, ...]) -> bool:
    """True if the file name matches one of the glob ``patterns``."""
    return any(fnmatch.fnmatch(path.name.lower(), pat) for pat in patterns)


class _Reader:
    """A text buffer over a stream that grows on demand and forgets what was consumed."""

    def __init__(self, stream: IO[bytes], where: str) -> None:
        self.text = io.TextIOWrapper(stream, encoding="utf-8", errors="strict")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.where = where
        self.consumed = 0  # characters dropped before buf[0] (for error offsets)

    def more(self) -> bool:
        if self.eof:
            return False
        try:
            chunk = self.text.read(CHUNK)
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"{self.where}: not UTF-8 text ({exc.reason})") from None
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise InvalidInputError(f"{self.where}: cannot be read ({exc})") from None
        if not chunk:
            self.eof = True
            return False
        if self.pos:
            self.consumed += self.pos
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += chunk
        return True

    def skip_ws(self) -> str:
        """Skip whitespace; return the next character ('' at the end)."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in " \t\r\n":
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self.more():
                return ""

    def expect(self, chars: str) -> str:
        c = self.skip_ws()
        if not c or c not in chars:
            found = repr(c) if c else "the end of the file"
            raise InvalidInputError(
                f"{self.where}: malformed JSON at character {self.consumed + self.pos}: "
                f"expected one of {chars!r}, found {found}"
            )
        self.pos += 1
        return c

    def value(self, decoder: json.JSONDecoder) -> Any:
        """Decode one JSON value at the cursor, reading more text until it is complete."""
        self.skip_ws()
        while True:
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                # Incomplete (more text may finish it) or malformed (the end came first).
                if len(self.buf) - self.pos > MAX_ITEM_CHARS:
                    raise InvalidInputError(
                        f"{self.where}: a JSON value at character {self.consumed + self.pos} is larger "
                        f"than {MAX_ITEM_CHARS} characters"
                    ) from None
                if not self.more():
                    raise InvalidInputError(
                        f"{self.where}: malformed JSON at character {self.consumed + exc.pos}: {exc.msg}"
                    ) from None
                continue
            # A number near the buffer's end may continue in the next chunk ("1.5e" + "-3").
            near_end = not self.eof and len(self.buf) - end < 64
            if near_end and isinstance(value, int | float) and not isinstance(value, bool) and self.more():
                continue
            self.pos = end
            return value


def scan_json(
    stream: IO[bytes], array_key: str, on_item: Callable[[Any], None], where: str
) -> tuple[dict[str, Any], bool]:
    """Stream a top-level JSON object: call ``on_item`` on each item of ``array_key``.

    Returns the other top-level keys with their values, and whether ``array_key`` was found.

    Raises
    ------
    InvalidInputError
        If the text is not one JSON object (naming ``where`` and the character offset).

    Examples
    --------
    >>> seen = []
    >>> scan_json(io.BytesIO(b'{"a": 1, "xs": [{"k": 2}, 3], "b": [4]}'), "xs", seen.append, "t.json")
    ({'a': 1, 'b': [4]}, True)
    >>> seen
    [{'k': 2}, 3]
    """
    try:
        head = stream.read(WHOLE_BYTES + 1)
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise InvalidInputError(f"{where}: cannot be read ({exc})") from None
    if len(head) <= WHOLE_BYTES:
        whole = _whole(head, array_key)
        if whole is not None:
            items, other = whole
            for item in items or ():
                on_item(item)
            return other, items is not None
        stream = io.BytesIO(head)
    else:
        stream = cast(IO[bytes], io.BufferedReader(_Chain(head, stream), CHUNK))
    r = _Reader(stream, where)
    try:
        return _scan(r, array_key, on_item, where)
    finally:
        # The caller closes the stream: the text layer lets go of it without closing it.
        r.text.detach()


def _whole(data: bytes, array_key: str) -> tuple[list[Any] | None, dict[str, Any]] | None:
    """``(items, other keys)`` of a whole file's JSON object; None where streaming must decide.

    ``items`` is None when the key is absent or not an array (kept among the other keys then, as
    the streaming reader keeps it).
    """
    key = json.dumps(array_key).encode()
    if data.count(key) > 1:  # perhaps the key twice: the streaming reader visits every one
        return None
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    items = doc.get(array_key)
    if not isinstance(items, list):
        return None, doc
    del doc[array_key]
    return items, doc


class _Chain(io.RawIOBase):
    """The bytes already read, then the rest of the stream."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self.head = memoryview(head)
        self.rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self.head.nbytes:
            k = min(len(b), self.head.nbytes)
            b[:k] = self.head[:k]
            self.head = self.head[k:]
            return k
        data = self.rest.read(len(b))
        b[: len(data)] = data
        return len(data)


_WS_RE = re.compile(r"[ \t\n\r]*")


def _ws(buf: str, pos: int) -> int:
    """The position after the whitespace at ``pos`` (the pattern matches the empty string too)."""
    m = _WS_RE.match(buf, pos)
    return m.end() if m else pos


def _items(r: _Reader, decoder: json.JSONDecoder, on_item: Callable[[Any], None]) -> None:
    """The items of an array up to its ``]``: a fast path over the buffer, the careful one at its edges."""
    scan = decoder.raw_decode
    while True:
        buf, pos = r.buf, r.pos
        # Fast path: an object or list whose end and following separator are in the buffer.
        if pos < len(buf) and buf[pos] in "{[":
            try:
                item, end = scan(buf, pos)
            except json.JSONDecodeError:
                item, end = None, -1
            if end > 0:
                nxt = _ws(buf, end)
                if nxt < len(buf) and buf[nxt] in ",]":
                    on_item(item)
                    r.pos = nxt + 1
                    if buf[nxt] == "]":
                        return
                    r.pos = _ws(buf, r.pos)
                    continue
        on_item(r.value(decoder))
        if r.expect(",]") == "]":
            return
        r.skip_ws()


def _scan(
    r: _Reader, array_key: str, on_item: Callable[[Any], None], where: str
) -> tuple[dict[str, Any], bool]:
    decoder = json.JSONDecoder()
    other: dict[str, Any] = {}
    found = False
    r.expect("{")
    if r.skip_ws() == "}":
        r.pos += 1
        return other, False
    while True:
        key = r.value(decoder)
        if not isinstance(key, str):
            raise InvalidInputError(f"{where}: malformed JSON: an object key must be a string; got {key!r}")
        r.expect(":")
        if key == array_key and r.skip_ws() == "[":
            found = True
            r.pos += 1
            if r.skip_ws() == "]":
                r.pos += 1
            else:
                _items(r, decoder, on_item)
        else:
            other[key] = r.value(decoder)
        if r.expect(",}") == "}":
            break
    if r.skip_ws():
        raise InvalidInputError(f"{where}: text after the JSON object at character {r.consumed + r.pos}")
    return other, found
