"""Online scheduling: plan on a predicted demand, fit to the actual one at dispatch time.

A controller knows a layer's exact traffic only just before it moves, but routing drifts
little from step to step. :func:`plan` schedules a prediction once and keeps the
configurations as arrays; :meth:`Plan.fit` re-fits their durations to the actual demand,
re-places them cheaply, repairs entries the plan misses and falls back to a full schedule when
the prediction is too far off, in microseconds on the fast path. :mod:`~ocsched.online.predict`
holds the predictors and :class:`OnlineScheduler` the rolling loop (predict, plan, fit, learn);
:mod:`~ocsched.online.recourse` counts the circuits that change between consecutive schedules.

Modules: :mod:`~ocsched.online.plan` (:class:`Plan`, :func:`plan`), :mod:`~ocsched.online.predict`,
:mod:`~ocsched.online.rolling` (:class:`OnlineScheduler`), :mod:`~ocsched.online.recourse` and
:mod:`~ocsched.online._kernels` (the compiled re-fit and re-balance); the fit's helpers are
:mod:`~ocsched.online._inputs` (the demand), :mod:`~ocsched.online._lit` (the lit circuits)
and :mod:`~ocsched.online._bounds` (its lower bounds).
"""

from __future__ import annotations

from ocsched.online.plan import DEFAULT_MAX_ERROR, SUPPORTED, Plan, plan, relative_l1
from ocsched.online.predict import EMA, PREDICTORS, Last, LayerMovingAverage, Predictor, predictor
from ocsched.online.recourse import recourse, recourse_counts
from ocsched.online.rolling import OnlineScheduler

__all__ = [
    "DEFAULT_MAX_ERROR",
    "EMA",
    "PREDICTORS",
    "SUPPORTED",
    "Last",
    "LayerMovingAverage",
    "OnlineScheduler",
    "Plan",
    "Predictor",
    "plan",
    "predictor",
    "recourse",
    "recourse_counts",
    "relative_l1",
]
