"""The ``ocsched`` command: a thin typer layer over the library.

Each command module adds its commands to the one typer app when imported. ``ocsched.cli.app``
is complete (every command module imported); the console script, :func:`main`, imports only the
module of the command it runs (:data:`COMMANDS`), so that a light command starts fast.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__all__ = ["COMMANDS", "app", "main"]

#: The command modules, each imported for its ``@app.command()``s.
_COMMAND_MODULES = ("core", "evaluate", "gap", "export", "serve", "sweep", "traces", "workloads", "warmup")
#: Each command and the module that defines it (a test checks this against the app).
COMMANDS = {
    "schedule": "core",
    "validate": "evaluate",
    "bound": "evaluate",
    "reschedule": "evaluate",
    "algorithms": "core",
    "demo": "core",
    "gap": "gap",
    "export": "export",
    "sweep": "sweep",
    "report": "sweep",
    "plot": "sweep",
    "import": "traces",
    "serve": "serve",
    "generate": "workloads",
    "workloads": "workloads",
    "warmup": "warmup",
}


def _import_all() -> Any:
    for name in _COMMAND_MODULES:
        importlib.import_module(f"ocsched.cli.{name}")
    from ocsched.cli._app import app

    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return _import_all()
    if name in _COMMAND_MODULES:
        return importlib.import_module(f"ocsched.cli.{name}")
    raise AttributeError(f"module 'ocsched.cli' has no attribute {name!r}")


def main() -> None:
    """Entry point of the ``ocsched`` console script."""
    words = [a for a in sys.argv[1:] if not a.startswith("-")]
    module = COMMANDS.get(words[0]) if words else None
    if module is None:  # help, a typo ("did you mean"), a global option: the whole app
        _import_all()()
        return
    importlib.import_module(f"ocsched.cli.{module}")
    from ocsched.cli._app import app

    # Typer builds (and reads the annotations of) every registered command before it runs
    # one: build only the one asked for.
    only = [c for c in app.registered_commands if c.name == words[0]]
    saved = app.registered_commands
    app.registered_commands = only
    try:
        app()
    finally:
        app.registered_commands = saved
