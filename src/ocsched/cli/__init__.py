"""The ``ocsched`` command: a thin typer layer over the library.

Each module of this package (not starting with ``_``) adds its commands to the one typer app
when imported; :func:`main` imports them all and runs it.
"""

from __future__ import annotations

import importlib
import pkgutil

from ocsched.cli._app import app

__all__ = ["app", "main"]

for _mod in pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")


def main() -> None:
    """Entry point of the ``ocsched`` console script."""
    app()
