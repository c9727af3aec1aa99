"""The one place hot loops are compiled: numba's ``njit`` (cached on disk), plain Python without numba.

numba is a dependency; the fallback keeps every kernel importable (and slow) where it is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    from numba import njit as _njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

__all__ = ["HAVE_NUMBA", "jit"]


def jit(func: Callable[..., Any]) -> Callable[..., Any]:
    """Compile ``func`` with numba (``cache=True, nogil=True``), or return it unchanged without numba.

    ``func`` must live in a file (numba caches it next to its module, in ``__pycache__``).
    """
    if HAVE_NUMBA:
        return _njit(cache=True, nogil=True)(func)
    return func  # pragma: no cover
