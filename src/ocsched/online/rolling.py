"""The rolling online scheduler: predict, plan off the critical path, fit at dispatch time, learn."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ocsched._checks import check_number
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.model import Schedule
from ocsched.online.plan import DEFAULT_MAX_ERROR, Plan, plan
from ocsched.online.predict import EMA, Predictor
from ocsched.online.recourse import recourse
from ocsched.schedulers import as_fabric, scheduler_name

__all__ = ["OnlineScheduler"]


class OnlineScheduler:
    """Schedule a stream of demands (layer after layer, iteration after iteration) from predictions.

    Parameters
    ----------
    switches, delta : int, float
        Identical all-stop switches (or ``fabric=``).
    fabric : Fabric, optional
        All-stop switches with their own delays and rates, as :func:`~ocsched.online.plan` takes.
    predictor : Predictor, optional
        Learns each actual matrix; :class:`~ocsched.online.predict.EMA` (alpha 0.5) by default.
    algorithm : str
        The scheduler of plans and fallbacks.
    max_error : float
        Passed to :func:`~ocsched.online.plan`.
    recourse : float
        Makespan (demand unit) worth one circuit change. A new plan replaces a layer's plan only
        if, on the new prediction, its makespan beats the old plan's fit by more than
        ``recourse`` times the circuits it changes; ``fit`` re-places a configuration on another
        switch only if that gains more than ``recourse`` per circuit moved.

    Notes
    -----
    :meth:`step` serves one actual matrix: the layer's plan (made from the prediction before
    it) is fitted to it, each switch starting with the configuration closest to the one it
    holds; the first matrix of a layer is scheduled afresh. The predictor then learns the matrix
    and the layer is re-planned on the new prediction (work that runs while the layer's traffic
    flows, off the dispatch path). ``history`` keeps, per step, the mode, the measured error,
    the makespan and the recourse against the schedule before.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> base = rng.random((8, 8))
    >>> online = OnlineScheduler(switches=2, delta=0.05)
    >>> for _ in range(3):
    ...     s = online.step(base * rng.uniform(0.95, 1.05, (8, 8)))
    >>> [h["mode"] for h in online.history]
    ['schedule', 'fit', 'fit']
    """

    def __init__(
        self,
        *,
        switches: int | None = None,
        delta: float | None = None,
        fabric: Fabric | None = None,
        predictor: Predictor | None = None,
        algorithm: str = "spectra-pack",
        max_error: float = DEFAULT_MAX_ERROR,
        recourse: float = 0.0,
    ) -> None:
        self.fabric = as_fabric(switches, delta, fabric)
        self.predictor: Predictor = EMA() if predictor is None else predictor
        if not (hasattr(self.predictor, "update") and hasattr(self.predictor, "predict")):
            raise InvalidInputError("`predictor` must have update(actual, layer) and predict(layer)")
        self.algorithm = scheduler_name(algorithm)
        self.max_error = check_number(max_error, "max_error", low=0.0)
        self.recourse = check_number(recourse, "recourse", low=0.0)
        self.plans: dict[Hashable | None, Plan] = {}
        self.previous: Schedule | None = None
        self.history: list[dict[str, Any]] = []

    def _plan(self, predicted: ArrayLike) -> Plan:
        return plan(
            predicted,
            fabric=self.fabric,
            algorithm=self.algorithm,
            max_error=self.max_error,
            recourse=self.recourse,
        )

    def step(self, actual: ArrayLike, layer: Hashable | None = None) -> Schedule:
        """Return a valid schedule of ``actual`` (of ``layer``), then learn it."""
        a = np.array(actual, dtype=np.float64)
        current = self.plans.get(layer)
        if current is None:
            fresh = self._plan(a)
            out = fresh.fit(a, previous=self.previous)
            mode = "schedule"
        else:
            out = current.fit(a, previous=self.previous)
            mode = out.meta["online"]["mode"]
        self.history.append(
            {
                "layer": layer,
                "mode": mode,
                "error": out.meta["online"]["error"],
                "makespan": out.makespan,
                "recourse": 0 if self.previous is None else recourse(self.previous, out),
            }
        )
        self.previous = out
        self.predictor.update(a, layer)
        pred = self.predictor.predict(layer)
        if pred is not None:
            self._replan(layer, pred)
        return out

    def _replan(self, layer: Hashable | None, pred: np.ndarray[Any, Any]) -> None:
        """Adopt a plan made on the new prediction unless keeping the old one saves more than it costs."""
        new = self._plan(pred)
        old = self.plans.get(layer)
        if old is None or self.recourse == 0.0:
            self.plans[layer] = new
            return
        kept = old.fit(pred, previous=self.previous)
        changes = recourse(kept, new.schedule)
        if kept.makespan - new.makespan > self.recourse * changes:
            self.plans[layer] = new
