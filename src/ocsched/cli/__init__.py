"""The ``ocsched`` command: a thin typer layer over the library.

Each command module adds its commands to the one typer app when imported; they are imported
here by name, so the app is complete as soon as this package is.
"""

from __future__ import annotations

from ocsched.cli import core, exact, export, serve, sweep, traces, workloads
from ocsched.cli._app import app

__all__ = ["app", "main"]

_COMMAND_MODULES = (core, exact, export, serve, sweep, traces, workloads)  # for their @app.command()s


def main() -> None:
    """Entry point of the ``ocsched`` console script."""
    app()
