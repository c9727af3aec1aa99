"""Figures written to files: matplotlib on the Agg backend, formats, resolution, file names.

matplotlib is imported inside :func:`pyplot`, only when a figure is drawn; every file is written
atomically (:func:`ocsched.io.write_atomic`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ocsched._extras import missing_extra
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.io import write_atomic

__all__ = ["DPI", "FIGURE_FORMATS", "check_figure_options", "pyplot", "save", "save_figure", "slug"]


def pyplot() -> Any:
    """Return ``matplotlib.pyplot`` on the Agg backend, or raise with the install hint."""
    try:
        import matplotlib
    except ImportError:
        raise OcschedError(missing_extra("figures need matplotlib", "plot")) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def slug(text: str) -> str:
    """A file-name stem for ``text``.

    >>> slug("Standard n=100")
    'standard-n-100'
    """
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


#: Formats a figure is written in (``--figure-format``), and the default resolution of raster ones.
FIGURE_FORMATS = ("png", "pdf", "svg")
DPI = 150


def check_figure_options(formats: Sequence[str], dpi: int) -> None:
    """Raise :class:`InvalidInputError` for an unknown format or a resolution outside 10..2400."""
    bad = [f for f in formats if f not in FIGURE_FORMATS]
    if bad or not formats:
        raise InvalidInputError(
            f"`--figure-format` must be one of {', '.join(FIGURE_FORMATS)}; got {bad[0] if bad else 'none'!r}"
        )
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 10 <= dpi <= 2400:
        raise InvalidInputError(f"`--dpi` must be an integer in 10..2400; got {dpi!r}")


def save(fig: Any, stem: Path, formats: Sequence[str], dpi: int = DPI) -> list[Path]:
    """Lay out, write ``stem.<fmt>`` for each format (atomically), and close the figure (also on error)."""
    paths = []
    try:
        fig.tight_layout()
        for fmt in formats:
            paths.append(save_figure(fig, stem.with_suffix(f".{fmt}"), force=True, dpi=dpi))
    finally:
        pyplot().close(fig)
    return paths


def save_figure(fig: Any, path: Path, *, force: bool = False, dpi: int = DPI) -> Path:
    """Write ``fig`` to ``path`` through :func:`ocsched.io.write_atomic` (format from the suffix)."""

    def write(f: IO[bytes]) -> None:
        fig.savefig(f, format=path.suffix[1:].lower(), dpi=dpi, bbox_inches="tight")

    return write_atomic(path, write, force=force, name="--out")
