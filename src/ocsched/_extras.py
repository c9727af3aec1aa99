"""Install hints for optional extras, worded for how ocsched was installed (one place for all of them)."""

from __future__ import annotations

import functools
import json

__all__ = ["install_hint", "missing_extra"]


@functools.cache
def _from_source() -> bool:
    """True for an editable install or a source tree on the path (a clone): ``pip install -e`` applies."""
    from importlib import metadata  # ~0.1 s to import: only when a hint is shown

    try:
        dist = metadata.distribution("ocsched")
    except metadata.PackageNotFoundError:
        return True  # imported from a source tree that was never installed
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    try:
        info = json.loads(text)
    except ValueError:
        return False
    return bool(info.get("dir_info", {}).get("editable", False))


def install_hint(extra: str) -> str:
    """Return the command that installs ``extra``: ``pip install -e '.[plot]'`` in a clone, else from PyPI.

    >>> install_hint("plot") in ("pip install -e '.[plot]'", "pip install 'ocsched[plot]'")
    True
    """
    return f"pip install -e '.[{extra}]'" if _from_source() else f"pip install 'ocsched[{extra}]'"


def missing_extra(what: str, package: str, extra: str) -> str:
    """Return the one-line message for a missing optional package: ``what`` needs ``package``, and how.

    >>> missing_extra("figures", "matplotlib", "plot").startswith("figures need matplotlib: pip install")
    True
    """
    return f"{what} need {package}: {install_hint(extra)}"
