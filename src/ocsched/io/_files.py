"""File plumbing shared by every writer: size limits, the writable check, atomic writes."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

# The input limits (one home, ocsched._limits), re-exported where the readers have always had them.
from ocsched._limits import MAX_DENSE_ELEMENTS as MAX_DENSE_ELEMENTS
from ocsched._limits import MAX_DENSE_PORTS as MAX_DENSE_PORTS
from ocsched._limits import MAX_GZIP_TEXT as MAX_GZIP_TEXT
from ocsched._limits import MAX_NNZ as MAX_NNZ
from ocsched._limits import MAX_PORTS as MAX_PORTS
from ocsched._limits import MAX_SWITCHES as MAX_SWITCHES
from ocsched.errors import InvalidInputError, OcschedError


def check_writable(path: str | os.PathLike[str], *, force: bool = False, name: str = "out") -> Path:
    """Return ``path`` as a Path if a file can be written there, else raise, before any work is done.

    Raises if ``path`` is a folder, exists (and ``force`` is False), lies under a file, or its
    folder (or the nearest existing ancestor, for folders still to be created) does not accept a
    new file: a temporary file or folder is created there and removed at once.
    """
    p = Path(path)
    if p.is_dir():
        raise InvalidInputError(f"`{name}` is a directory, expected a file path: {p}")
    if p.exists() and not force:
        raise InvalidInputError(f"`{name}` file already exists: {p} (use --force to overwrite)")
    ancestor = p.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InvalidInputError(f"`{name}` cannot be created under {ancestor}, which is not a folder: {p}")
    try:
        if ancestor == p.parent:
            with tempfile.TemporaryFile(dir=ancestor):
                pass
        else:
            os.rmdir(tempfile.mkdtemp(dir=ancestor))
    except OSError as exc:
        raise InvalidInputError(f"`{name}` cannot be written: {p} ({exc.strerror or exc})") from None
    return p


def write_atomic(
    path: str | os.PathLike[str],
    write: Callable[[IO[bytes]], object],
    *,
    force: bool = False,
    name: str = "out",
) -> Path:
    """Call ``write(f)`` on a temporary file beside ``path``, then move it into place.

    Raises
    ------
    InvalidInputError
        If ``path`` cannot be written (see :func:`check_writable`) or appeared meanwhile.
    OcschedError
        If the system refuses the write itself (a full disk, a quota, an I/O error): one line,
        ``no space left on device writing <path>``. Nothing is left behind: ``path`` keeps its
        old content (or stays absent) and the temporary file is removed.
    """
    p = check_writable(path, force=force, name=name)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    except OSError as exc:
        raise OcschedError(f"{os_reason(exc)} writing {p}") from None
    try:
        # mkstemp creates the file 0600; give it the mode a plain open() would (umask applied).
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            write(f)
        if not force and p.exists():  # appeared meanwhile: still never overwrite
            raise InvalidInputError(f"`{name}` file already exists: {p} (use --force to overwrite)")
        os.replace(tmp, p)
    except OSError as exc:  # ENOSPC, EDQUOT, EIO...; pyarrow's own I/O errors are OSErrors too
        raise OcschedError(f"{os_reason(exc)} writing {p}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return p


def os_reason(exc: OSError) -> str:
    """The system's one-line reason for ``exc``, lower-case: ``"no space left on device"``.

    >>> import errno
    >>> os_reason(OSError(errno.ENOSPC, "No space left on device"))
    'no space left on device'
    """
    text = os.strerror(exc.errno) if exc.errno else (str(exc).splitlines() or [type(exc).__name__])[0]
    return text[:1].lower() + text[1:]


def file_text(p: Path, what: str = "file") -> str:
    """Return the text of file ``p``, gunzipped if its name ends ``.gz``.

    Raises the system's errors (:class:`OSError`, :class:`UnicodeDecodeError`, :class:`EOFError`)
    for the caller to word; :class:`InvalidInputError` (naming ``what``) if a compressed file
    expands beyond :data:`MAX_GZIP_TEXT` bytes.
    """
    if not p.name.lower().endswith(".gz"):
        return p.read_text()
    import gzip

    with gzip.open(p, "rb") as fh:
        data = fh.read(MAX_GZIP_TEXT + 1)
    if len(data) > MAX_GZIP_TEXT:
        raise InvalidInputError(f"{what} {p} expands beyond {MAX_GZIP_TEXT} bytes")
    return data.decode()


def read_text(p: Path, what: str) -> str:
    """Return the text of file ``p`` (gunzipped if its name ends ``.gz``); ``what`` names it in errors."""
    if not p.is_file():
        raise InvalidInputError(f"{what} not found: {p}")
    try:
        return file_text(p, what)
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InvalidInputError(f"{what} {p} could not be read: {exc}") from None


def write_text(path: str | os.PathLike[str], text: str, *, force: bool = False) -> Path:
    """Write ``text`` (UTF-8, gzip-compressed if the name ends ``.gz``) through :func:`write_atomic`."""
    data = text.encode()
    if Path(path).name.lower().endswith(".gz"):
        import gzip

        data = gzip.compress(data, compresslevel=6, mtime=0)  # mtime 0: the same bytes every time
    return write_atomic(path, lambda f: f.write(data), force=force)


def _umask() -> int:
    mask = os.umask(0)  # the only portable way to read it: set, then restore at once
    os.umask(mask)
    return mask
