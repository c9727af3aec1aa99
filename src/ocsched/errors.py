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
    """A problem has no solution under the given constraints."""


class InvalidScheduleError(OcschedError):
    """A schedule breaks the model (raised by ``ValidationReport.raise_if_invalid``)."""
