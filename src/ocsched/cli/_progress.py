"""Progress for long commands: a rich bar on a terminal, plain periodic lines otherwise (batch logs)."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import typer

__all__ = ["ProgressLine", "duration"]


def duration(seconds: float) -> str:
    """Human duration: ``12.3 s``, ``4.5 min``, ``1.2 h``."""
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


class ProgressLine:
    """Show ``done/total`` with an ETA on stderr: a live bar on a terminal, else one plain line
    every ``interval`` seconds (and at the start and the end).

    Under ``--quiet`` nothing is shown. ``update(done, total, eta_s, extra)``: ``eta_s`` None
    means "not known yet" (shown as such, never guessed); ``extra`` is appended (e.g. "3 failed").
    """

    def __init__(
        self,
        what: str,
        *,
        interval: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        echo: Callable[[str], None] | None = None,
    ) -> None:
        from rich.console import Console

        self.what = what
        self.interval = interval
        self.clock = clock
        self.console = Console(stderr=True)
        from ocsched.cli._output import is_quiet

        quiet = echo is None and is_quiet()  # --quiet: no progress at all
        self.live = self.console.is_terminal and echo is None and not quiet
        self.echo = echo or ((lambda line: None) if quiet else (lambda line: typer.echo(line, err=True)))
        self.t0 = clock()
        self.last: float | None = None
        self.state: tuple[int, int, float | None, str] | None = None
        self.shown: tuple[int, int, float | None, str] | None = None
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressLine:
        if self.live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn(f"[bold]{self.what}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[extra]}"),
                TimeElapsedColumn(),
                TextColumn("ETA {task.fields[eta]}"),
                console=self.console,
            )
            self._bar.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, exc, tb)
        elif self.state is not None and self.state != self.shown:
            self._print()

    def _eta(self, eta_s: float | None, done: int, total: int) -> str:
        if done >= total:
            return "0 s"
        return "estimating" if eta_s is None else duration(eta_s)

    def _print(self) -> None:
        assert self.state is not None
        done, total, eta_s, extra = self.state
        now = self.clock()
        self.echo(
            f"{self.what}: {done}/{total}{', ' + extra if extra else ''}; "
            f"elapsed {duration(now - self.t0)}, ETA {self._eta(eta_s, done, total)}"
        )
        self.last = now
        self.shown = self.state

    def update(self, done: int, total: int, eta_s: float | None = None, extra: str = "") -> None:
        """Record progress; print or redraw as the output allows."""
        self.state = (done, total, eta_s, extra)
        if self._bar is not None:
            fields = {"extra": extra, "eta": self._eta(eta_s, done, total)}
            if self._task is None:
                self._task = self._bar.add_task(self.what, total=total, **fields)
            self._bar.update(self._task, completed=done, total=total, **fields)
        elif self.last is None or self.clock() - self.last >= self.interval or done >= total:
            self._print()
