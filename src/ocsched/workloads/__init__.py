"""Traffic generators: one module per family, all reachable by name through :func:`generate`.

Every generator is a function ``f(*, rng, **options) -> ndarray`` registered in
:data:`WORKLOADS` with its natural unit: ``"time"`` (already time at one link's line rate) or
``"bytes"``. :func:`generate` seeds it, converts bytes to seconds with ``link_gbps`` and
normalises on request.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError

__all__ = ["WORKLOADS", "Workload", "generate", "normalize", "register", "workloads"]

Generator = Callable[..., NDArray[np.float64]]


@dataclass(frozen=True)
class Workload:
    """A registered traffic generator.

    Attributes
    ----------
    name : str
        Registry key, used by the CLI and sweeps.
    func : callable
        ``func(*, rng, **options) -> ndarray`` returning an n x n matrix.
    unit : {"time", "bytes"}
        What the returned entries measure.
    description : str
        One line for listings.
    """

    name: str
    func: Generator
    unit: str
    description: str

    def options(self) -> dict[str, Any]:
        """The generator's options and their defaults (``rng`` excluded)."""
        sig = inspect.signature(self.func)
        return {k: p.default for k, p in sig.parameters.items() if k != "rng"}


WORKLOADS: dict[str, Workload] = {}


def register(name: str, *, unit: str, description: str) -> Callable[[Generator], Generator]:
    """Decorator adding a generator to :data:`WORKLOADS`."""
    if unit not in ("time", "bytes"):
        raise ValueError(f"unit must be 'time' or 'bytes'; got {unit!r}")

    def deco(func: Generator) -> Generator:
        WORKLOADS[name] = Workload(name, func, unit, description)
        return func

    return deco


def workloads() -> dict[str, str]:
    """Return ``{name: one-line description}`` of every registered workload."""
    _load_all()
    return {k: w.description for k, w in sorted(WORKLOADS.items())}


def normalize(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """Divide by the largest row or column sum (the paper's convention); zero stays zero.

    >>> normalize(np.array([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [[0.0, 1.0], [0.5, 0.0]]
    """
    m = np.asarray(matrix, dtype=np.float64)
    top = max(float(m.sum(axis=0).max(initial=0.0)), float(m.sum(axis=1).max(initial=0.0)))
    return m / top if top > 0 else m


def generate(
    name: str,
    *,
    seed: int | np.random.Generator | None = None,
    link_gbps: float | None = None,
    normalized: bool = False,
    **options: Any,
) -> NDArray[np.float64]:
    """Generate the workload ``name`` with ``options``.

    Parameters
    ----------
    name : str
        A key of :data:`WORKLOADS` (see :func:`workloads`).
    seed : int, Generator or None
        Seed for the generator's randomness.
    link_gbps : float, optional
        For byte-valued workloads: convert bytes to seconds on one link of this rate.
    normalized : bool
        Divide by the largest line sum (applied last).
    **options
        The generator's own options.

    Examples
    --------
    >>> d = generate("standard", n=8, flows=4, seed=1, normalized=True)
    >>> d.shape, round(float(max(d.sum(0).max(), d.sum(1).max())), 9)
    ((8, 8), 1.0)
    """
    _load_all()
    if name not in WORKLOADS:
        raise InvalidInputError(f"unknown workload {name!r}; choose one of {', '.join(sorted(WORKLOADS))}")
    w = WORKLOADS[name]
    known = w.options()
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidInputError(
            f"workload {name!r} has no option {unknown[0]!r}; its options are {', '.join(known) or 'none'}"
        )
    kwargs = dict(options)
    if "rng" in inspect.signature(w.func).parameters:
        kwargs["rng"] = np.random.default_rng(seed)
    matrix = np.asarray(w.func(**kwargs), dtype=np.float64)
    if link_gbps is not None:
        if not (isinstance(link_gbps, int | float) and np.isfinite(link_gbps) and link_gbps > 0):
            raise InvalidInputError(f"`link_gbps` must be a positive number; got {link_gbps!r}")
        if w.unit == "bytes":
            matrix = matrix * 8.0 / (float(link_gbps) * 1e9)
    if normalized:
        matrix = normalize(matrix)
    return matrix


def check_int(value: object, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise naming ``name`` if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InvalidInputError(f"`{name}` must be an integer >= {minimum}; got {value!r}")
    return int(value)


def check_number(
    value: object, name: str, *, low: float = 0.0, high: float = np.inf, closed: bool = True
) -> float:
    """Return ``value`` as a float, or raise naming ``name`` unless it is finite and in range.

    The range is ``[low, high]``, or ``(low, high)`` when ``closed`` is False.
    """
    ok = (
        not isinstance(value, bool)
        and isinstance(value, int | float | np.integer | np.floating)
        and bool(np.isfinite(value))
    )
    if ok:
        v = float(value)  # type: ignore[arg-type]
        ok = low <= v <= high if closed else low < v < high
    if not ok:
        lo, hi = ("[", "]") if closed else ("(", ")")
        where = f" in {lo}{low:g}, {high:g}{hi}" if np.isfinite(low) or np.isfinite(high) else ""
        raise InvalidInputError(f"`{name}` must be a finite number{where}; got {value!r}")
    return float(value)  # type: ignore[arg-type]


def check_choice(value: object, name: str, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise listing them."""
    valid = list(choices)
    if not isinstance(value, str) or value not in valid:
        raise InvalidInputError(f"`{name}` must be one of {', '.join(valid)}; got {value!r}")
    return value


def block_diagonal(block: NDArray[np.float64], copies: int) -> NDArray[np.float64]:
    """Place ``copies`` copies of the square ``block`` on the diagonal of a larger zero matrix.

    >>> block_diagonal(np.array([[0.0, 1.0], [2.0, 0.0]]), 2).astype(int).tolist()
    [[0, 1, 0, 0], [2, 0, 0, 0], [0, 0, 0, 1], [0, 0, 2, 0]]
    """
    c = check_int(copies, "copies")
    return np.asarray(np.kron(np.eye(c), np.asarray(block, dtype=np.float64)), dtype=np.float64)


def _load_all() -> None:
    # Importing a family module registers its generators.
    from ocsched.workloads import coflow, gpt, moe, standard  # noqa: F401
