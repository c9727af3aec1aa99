"""The online modes over sequences: schedule_iteration(predicted=...), OnlineScheduler, predictors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ocsched
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, Switch
from ocsched.iteration import Iteration, Phase
from ocsched.online import EMA, Last, LayerMovingAverage, OnlineScheduler, predictor, recourse
from ocsched.sequence import validate_iteration
from ocsched.workloads import generate


def _pair(seed: int = 0) -> tuple[Iteration, Iteration]:
    rng = np.random.default_rng(seed)
    mats = [generate("moe", gpus=8, rng=seed + k, normalize=True) for k in range(3)]
    actual = Iteration(Phase(m, gap_before=0.1 * k) for k, m in enumerate(mats))
    noisy = [m * rng.uniform(0.9, 1.1, m.shape) for m in mats]
    guess = Iteration(Phase(m, gap_before=0.1 * k) for k, m in enumerate(noisy))
    return actual, guess


@pytest.mark.parametrize("algorithm", ["independent", "spectra-seq"])
def test_iteration_from_predictions_is_valid(algorithm: str) -> None:
    actual, guess = _pair()
    out = ocsched.schedule_iteration(
        actual, switches=2, delta=0.02, algorithm=algorithm, base="spectra-pack", predicted=guess
    )
    assert validate_iteration(out, actual).ok
    assert len(out.meta["fit_modes"]) == len(actual)
    assert set(out.meta["fit_modes"]) <= {"fit", "repair", "plan+residual", "fallback"}


def test_iteration_without_predictions_is_unchanged() -> None:
    actual, _ = _pair(1)
    out = ocsched.schedule_iteration(actual, switches=2, delta=0.02, algorithm="independent")
    again = ocsched.schedule_iteration(
        actual, switches=2, delta=0.02, algorithm="independent", predicted=None
    )
    assert "fit_modes" not in out.meta
    assert out.makespan == again.makespan


def test_iteration_predictions_are_checked() -> None:
    actual, guess = _pair(2)
    short = Iteration(guess.phases[:2])
    with pytest.raises(InvalidInputError, match="3 phases"):
        ocsched.schedule_iteration(actual, switches=2, delta=0.02, predicted=short)
    with pytest.raises(InvalidInputError, match="predicted"):
        ocsched.schedule_iteration(actual, switches=2, delta=0.02, predicted=[1])  # type: ignore[arg-type]
    hetero = Fabric((Switch(0.02), Switch(0.05)))
    with pytest.raises(InvalidInputError, match="identical"):
        ocsched.schedule_iteration(actual, fabric=hetero, predicted=guess)


def test_online_scheduler_keeps_circuits_across_steps() -> None:
    base = generate("moe", gpus=16, rng=3, normalize=True)
    rng = np.random.default_rng(4)
    steps = [base * rng.uniform(0.97, 1.03, base.shape) for _ in range(5)]
    online = OnlineScheduler(switches=4, delta=0.01, predictor=Last())
    fresh = []
    for a in steps:
        out = online.step(a)
        assert ocsched.validate(out, a).ok
        fresh.append(ocsched.schedule(a, switches=4, delta=0.01, algorithm="spectra-pack"))
    assert next(h["mode"] for h in online.history) == "schedule"
    kept = sum(h["recourse"] for h in online.history[1:])
    independent = sum(recourse(x, y) for x, y in itertools.pairwise(fresh))
    assert kept < independent


def test_online_scheduler_per_layer_plans() -> None:
    layers = [generate("moe", gpus=8, rng=k, normalize=True) for k in range(2)]
    online = OnlineScheduler(switches=2, delta=0.01, predictor=LayerMovingAverage(window=2))
    for _ in range(2):
        for k, m in enumerate(layers):
            assert ocsched.validate(online.step(m, layer=k), m).ok
    assert [h["mode"] for h in online.history] == ["schedule", "schedule", "fit", "fit"]
    assert set(online.plans) == {0, 1}


def test_online_scheduler_recourse_weight_keeps_a_plan() -> None:
    base = generate("moe", gpus=8, rng=5, normalize=True)
    rng = np.random.default_rng(6)
    online = OnlineScheduler(switches=2, delta=0.01, recourse=1e9)
    online.step(base)
    first = online.plans[None]
    for _ in range(3):
        online.step(base * rng.uniform(0.95, 1.05, base.shape))
    assert online.plans[None] is first


def test_predictors() -> None:
    a, b = np.array([[0.0, 2.0], [4.0, 0.0]]), np.array([[0.0, 4.0], [0.0, 0.0]])
    last, ema, avg = Last(), EMA(alpha=0.25), LayerMovingAverage(window=2)
    assert last.predict() is None and ema.predict() is None and avg.predict() is None
    for p in (last, ema, avg):
        p.update(a)
        p.update(b)
    assert last.predict().tolist() == b.tolist()  # type: ignore[union-attr]
    assert ema.predict().tolist() == [[0.0, 2.5], [3.0, 0.0]]  # type: ignore[union-attr]
    assert avg.predict().tolist() == [[0.0, 3.0], [2.0, 0.0]]  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError, match="shape"):
        last.update(np.zeros((3, 3)))
    with pytest.raises(InvalidInputError, match="non-negative"):
        ema.update(-a)
    with pytest.raises(InvalidInputError, match="alpha"):
        EMA(alpha=1.5)
    with pytest.raises(InvalidInputError, match="predictor"):
        predictor("oracle")
    assert isinstance(predictor("layer-average", window=3), LayerMovingAverage)
