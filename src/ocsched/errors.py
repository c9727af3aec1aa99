"""Exceptions raised by ocsched.

Every error the library raises on purpose derives from :class:`OcschedError`, so callers can
catch them all at once; :class:`InvalidInputError` is also a :class:`ValueError`.
"""

from __future__ import annotations

__all__ = ["InfeasibleError", "InvalidInputError", "InvalidScheduleError", "OcschedError"]


class OcschedError(Exception):
    """Base class of every error raised by ocsched."""


class InvalidInputError(OcschedError, ValueError):
    """An argument or input file is malformed: the message names it and the offending value."""


class InfeasibleError(OcschedError):
    """A problem has no solution under the given constraints, or a heuristic found none.

    ``proved`` tells which: True when the message carries a proof (an entry or a port that
    cannot be served before its links fail), False when a heuristic found no placement and
    nothing was proved (another algorithm may succeed).

    >>> InfeasibleError("no placement found", proved=False).proved
    False
    """

    def __init__(self, message: str, *, proved: bool = True) -> None:
        super().__init__(message)
        self.proved = proved


class InvalidScheduleError(OcschedError):
    """A schedule breaks the model (raised by ``ValidationReport.raise_if_invalid``)."""
