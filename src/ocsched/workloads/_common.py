"""Helpers shared by the workload families."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ocsched._checks import check_int
from ocsched.errors import InvalidInputError

__all__ = ["block_diagonal", "call_generator", "normalize", "options_of"]


class Registered(Protocol):
    """A registry entry with a generator function (a workload or an iteration workload)."""

    @property
    def func(self) -> Callable[..., Any]: ...


def options_of(func: Callable[..., Any]) -> dict[str, Any]:
    """The keyword options of a workload generator and their defaults (``rng`` excluded).

    >>> options_of(lambda *, n=4, rng=None: None)
    {'n': 4}
    """
    sig = inspect.signature(func)
    return {k: p.default for k, p in sig.parameters.items() if k != "rng"}


def call_generator(
    registry: Mapping[str, Registered],
    name: str,
    seed: int | np.random.Generator | None,
    options: Mapping[str, Any],
    *,
    kind: str = "workload",
) -> Any:
    """Run generator ``name`` of ``registry`` with ``options`` (checked) and a generator seeded by ``seed``.

    Raises
    ------
    InvalidInputError
        For an unknown name or option (the message lists the valid ones).

    >>> call_generator({"w": type("W", (), {"func": staticmethod(lambda *, n=2: n)})()}, "w", 0, {"n": 3})
    3
    """
    if name not in registry:
        raise InvalidInputError(f"unknown {kind} {name!r}; choose one of {', '.join(sorted(registry))}")
    func = registry[name].func
    known = options_of(func)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidInputError(
            f"workload {name!r} has no option {unknown[0]!r}; its options are {', '.join(known) or 'none'}"
        )
    kwargs = dict(options)
    if "rng" in inspect.signature(func).parameters:
        kwargs["rng"] = np.random.default_rng(seed)
    return func(**kwargs)


_UNSET: Any = object()  # a keyword that was not passed (None is a valid seed)


def renamed(new: Any, old: Any, new_name: str, old_name: str, default: Any) -> Any:
    """The value of keyword ``new_name``, or of its deprecated spelling ``old_name`` (with a warning).

    >>> renamed(_UNSET, _UNSET, "rng", "seed", None) is None
    True
    """
    if old is _UNSET:
        return default if new is _UNSET else new
    if new is not _UNSET:
        raise InvalidInputError(f"give `{new_name}` only (`{old_name}` is its deprecated spelling)")
    warnings.warn(
        f"`{old_name}=` is deprecated; use `{new_name}=` (the same value)", DeprecationWarning, stacklevel=3
    )
    return old


def normalize(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """Divide by the largest row or column sum (the paper's convention); zero stays zero.

    >>> normalize(np.array([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [[0.0, 1.0], [0.5, 0.0]]
    """
    m = np.asarray(matrix, dtype=np.float64)
    top = max(float(m.sum(axis=0).max(initial=0.0)), float(m.sum(axis=1).max(initial=0.0)))
    return m / top if top > 0 else m


def block_diagonal(block: NDArray[np.float64], copies: int) -> NDArray[np.float64]:
    """Place ``copies`` copies of the square ``block`` on the diagonal of a larger zero matrix.

    >>> block_diagonal(np.array([[0.0, 1.0], [2.0, 0.0]]), 2).astype(int).tolist()
    [[0, 1, 0, 0], [2, 0, 0, 0], [0, 0, 0, 1], [0, 0, 2, 0]]
    """
    c = check_int(copies, "copies")
    return np.asarray(np.kron(np.eye(c), np.asarray(block, dtype=np.float64)), dtype=np.float64)
