"""The ``ocsched`` command: a thin typer layer over the library.

Each command module adds its commands to the one typer app when imported; they are imported
here by name, so the app is complete as soon as this package is.
"""

from __future__ import annotations

from ocsched.cli import core, evaluate, exact, export, sweep, traces, workloads
from ocsched.cli._app import app

__all__ = ["app", "main"]

_COMMAND_MODULES = (
    core,
    evaluate,
    exact,
    export,
    sweep,
    traces,
    workloads,
)  # imported for their @app.command()s


def main() -> None:
    """Entry point of the ``ocsched`` console script."""
    app()
