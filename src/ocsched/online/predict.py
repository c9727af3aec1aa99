"""Predict the next demand from the ones seen: last, exponential moving average, per-layer average.

Every predictor has ``update(actual, layer=None)`` (learn one observed matrix) and
``predict(layer=None)`` (the prediction, or None before any observation of that layer). They are
listed in :data:`PREDICTORS` and built by name with :func:`predictor`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from ocsched._checks import check_choice, check_int, check_number
from ocsched._types import FloatArray
from ocsched.errors import InvalidInputError

__all__ = ["EMA", "PREDICTORS", "Last", "LayerMovingAverage", "Predictor", "predictor"]


class Predictor(Protocol):
    """What :class:`~ocsched.online.OnlineScheduler` needs from a predictor."""

    def update(self, actual: ArrayLike, layer: Hashable | None = None) -> None: ...

    def predict(self, layer: Hashable | None = None) -> FloatArray | None: ...


def _matrix(actual: ArrayLike, shape: tuple[int, ...] | None) -> FloatArray:
    a = np.array(actual, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise InvalidInputError(f"`actual` must be a square matrix; got shape {a.shape}")
    if shape is not None and a.shape != shape:
        raise InvalidInputError(f"`actual` must have shape {shape} like the matrices before; got {a.shape}")
    if not np.isfinite(a).all() or (a < 0).any():
        raise InvalidInputError("`actual` must be finite and non-negative")
    return a


class Last:
    """Predict the last matrix seen (per layer when updates name one).

    >>> p = Last()
    >>> p.update([[0, 1], [2, 0]])
    >>> p.predict().tolist()
    [[0.0, 1.0], [2.0, 0.0]]
    """

    def __init__(self) -> None:
        self._last: dict[Hashable | None, FloatArray] = {}

    def update(self, actual: ArrayLike, layer: Hashable | None = None) -> None:
        """Learn ``actual`` (of ``layer``)."""
        shape = next(iter(self._last.values())).shape if self._last else None
        self._last[layer] = _matrix(actual, shape)

    def predict(self, layer: Hashable | None = None) -> FloatArray | None:
        """The last matrix of ``layer`` (None before any)."""
        x = self._last.get(layer)
        return None if x is None else x.copy()


class EMA:
    """Exponential moving average: ``p <- alpha * actual + (1 - alpha) * p`` (per layer when named).

    Parameters
    ----------
    alpha : float
        Weight of the newest matrix, in (0, 1]; 1 is :class:`Last`.

    >>> p = EMA(alpha=0.5)
    >>> p.update([[0, 2], [2, 0]]); p.update([[0, 4], [0, 0]])
    >>> p.predict().tolist()
    [[0.0, 3.0], [1.0, 0.0]]
    """

    def __init__(self, alpha: float = 0.5) -> None:
        self.alpha = check_number(alpha, "alpha", low=0.0, closed=False)
        if self.alpha > 1.0:
            raise InvalidInputError(f"`alpha` must be in (0, 1]; got {alpha!r}")
        self._avg: dict[Hashable | None, FloatArray] = {}

    def update(self, actual: ArrayLike, layer: Hashable | None = None) -> None:
        """Learn ``actual`` (of ``layer``)."""
        shape = next(iter(self._avg.values())).shape if self._avg else None
        a = _matrix(actual, shape)
        old = self._avg.get(layer)
        self._avg[layer] = a if old is None else self.alpha * a + (1.0 - self.alpha) * old

    def predict(self, layer: Hashable | None = None) -> FloatArray | None:
        """The average of ``layer`` (None before any)."""
        x = self._avg.get(layer)
        return None if x is None else x.copy()


class LayerMovingAverage:
    """Per layer, the mean of its last ``window`` matrices (EPLB-style expert-load averaging).

    Parameters
    ----------
    window : int
        How many of a layer's latest matrices are averaged (>= 1).

    >>> p = LayerMovingAverage(window=2)
    >>> for x in (1, 2, 4):
    ...     p.update([[0, x], [0, 0]], layer="L0")
    >>> p.predict("L0")[0, 1], p.predict("L1") is None
    (np.float64(3.0), True)
    """

    def __init__(self, window: int = 4) -> None:
        self.window = check_int(window, "window")
        self._seen: dict[Hashable | None, deque[FloatArray]] = {}

    def update(self, actual: ArrayLike, layer: Hashable | None = None) -> None:
        """Learn ``actual`` of ``layer``."""
        shape = next(iter(self._seen.values()))[0].shape if self._seen else None
        self._seen.setdefault(layer, deque(maxlen=self.window)).append(_matrix(actual, shape))

    def predict(self, layer: Hashable | None = None) -> FloatArray | None:
        """The mean of ``layer``'s last ``window`` matrices (None before any)."""
        q = self._seen.get(layer)
        if not q:
            return None
        out: FloatArray = np.mean(np.stack(list(q)), axis=0)
        return out


#: Predictors by name, for :func:`predictor`, :class:`~ocsched.online.OnlineScheduler` and the benchmarks.
PREDICTORS: dict[str, type[Last] | type[EMA] | type[LayerMovingAverage]] = {
    "last": Last,
    "ema": EMA,
    "layer-average": LayerMovingAverage,
}


def predictor(name: str, **options: Any) -> Predictor:
    """Build the predictor ``name`` (a key of :data:`PREDICTORS`) with its options.

    >>> type(predictor("ema", alpha=0.3)).__name__
    'EMA'
    """
    check_choice(name, "predictor", PREDICTORS)
    try:
        out: Predictor = PREDICTORS[name](**options)
    except TypeError as exc:
        raise InvalidInputError(f"bad option for predictor {name!r}: {exc}") from None
    return out
