"""ocsched.online: plan on a prediction, fit to the actual demand (validity, guarantees, fallbacks)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

import ocsched
from ocsched import _jit
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.model import Configuration, Schedule
from ocsched.online import plan, recourse, recourse_counts, relative_l1
from ocsched.online.plan import Plan
from ocsched.workloads import generate
from strategies import demands, fabrics

F64 = NDArray[np.float64]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _residual_baseline(p: Plan, actual: F64) -> float:
    """The plan's schedule as planned, then the residual scheduled by the plan's algorithm after it."""
    cover = np.zeros_like(actual)
    for b, confs in enumerate(p.schedule.switches):
        rate = p.fabric.rates[b]
        for c in confs:
            perm = np.asarray(c.perm)
            (i,) = np.nonzero(perm >= 0)
            cover[i, perm[i]] += c.duration * rate
    resid = np.maximum(actual - cover, 0.0)
    np.fill_diagonal(resid, 0.0)
    if not (resid > 0).any():
        return p.makespan
    return p.makespan + ocsched.schedule(resid, fabric=p.fabric, algorithm=p.algorithm).makespan


@st.composite
def actuals(draw: st.DrawFn, predicted: F64) -> F64:
    """An actual demand near or far from ``predicted``: noise, zeros, new entries, a scale change."""
    n = predicted.shape[0]
    kind = draw(st.sampled_from(["noise", "zeros", "new", "scale", "all-zero", "same", "other"]))
    shape = (n, n)
    if kind == "same":
        a = predicted.copy()
    elif kind == "all-zero":
        a = np.zeros(shape)
    elif kind == "noise":
        f = draw(hnp.arrays(np.float64, shape, elements=st.floats(0.5, 1.5)))
        a = predicted * f
    elif kind == "zeros":
        a = predicted * draw(hnp.arrays(np.bool_, shape))
    elif kind == "new":
        a = predicted + draw(hnp.arrays(np.float64, shape, elements=st.floats(0.0, 1.0))) * draw(
            hnp.arrays(np.bool_, shape)
        )
    elif kind == "scale":
        a = predicted * draw(st.sampled_from([1e-6, 0.1, 0.5, 2.0, 10.0, 1e6]))
    else:
        a = draw(hnp.arrays(np.float64, shape, elements=st.floats(0.0, 1.0)))
    np.fill_diagonal(a, 0.0)
    return a


def _check(p: Plan, a: F64) -> Schedule:
    out = p.fit(a)
    assert ocsched.validate(out, a, fabric=p.fabric).ok, ocsched.validate(out, a, fabric=p.fabric)
    assert out.meta["online"]["mode"] in {"fit", "repair", "plan+residual", "fallback"}
    assert out.makespan <= _residual_baseline(p, a) * (1 + 1e-9) + 1e-12
    return out


@SETTINGS
@given(st.data())
def test_fit_is_valid_and_never_worse_than_plan_then_residual(data: st.DataObject) -> None:
    d = data.draw(demands(max_n=6))
    s = data.draw(st.integers(1, 4))
    delta = data.draw(st.sampled_from([0.0, 0.01, 0.2, 2.0]))
    p = plan(d, switches=s, delta=delta, max_error=data.draw(st.sampled_from([0.2, 1e9])))
    _check(p, data.draw(actuals(d)))


@SETTINGS
@given(st.data())
def test_fit_on_heterogeneous_fabrics(data: st.DataObject) -> None:
    d = data.draw(demands(max_n=5))
    fab = data.draw(fabrics(d.shape[0], float(d.max(initial=0.0)), failures=False, models=("all-stop",)))
    p = plan(d, fabric=fab, max_error=1e9)
    _check(p, data.draw(actuals(d)))


@SETTINGS
@given(st.data())
def test_fit_never_grows_a_configuration_when_actual_is_below_prediction(data: st.DataObject) -> None:
    d = data.draw(demands(max_n=6))
    p = plan(d, switches=data.draw(st.integers(1, 4)), delta=0.05, max_error=1e9)
    shrink = data.draw(hnp.arrays(np.float64, d.shape, elements=st.floats(0.0, 1.0)))
    out = p.fit(d * shrink)
    assert out.meta["online"]["mode"] == "fit"
    assert out.makespan <= p.makespan * (1 + 1e-9) + 1e-12


def test_fit_of_the_prediction_keeps_the_plan() -> None:
    d = generate("moe", gpus=16, rng=3, normalize=True)
    p = plan(d, switches=4, delta=0.02)
    out = p.fit(d)
    assert out.meta["online"] | {"error": 0.0} == out.meta["online"]
    assert out.makespan <= p.makespan * (1 + 1e-12)
    assert ocsched.validate(out, d).ok


def test_small_drift_stays_near_a_fresh_schedule() -> None:
    d = generate("moe", gpus=32, rng=1, normalize=True)
    rng = np.random.default_rng(0)
    a = d * rng.uniform(0.97, 1.03, d.shape)
    p = plan(d, switches=4, delta=0.02)
    out = p.fit(a)
    fresh = ocsched.schedule(a, switches=4, delta=0.02, algorithm="spectra-pack")
    assert out.meta["online"]["mode"] == "fit"
    assert out.makespan <= 1.05 * fresh.makespan


def test_fallback_above_the_error_limit_is_the_fresh_schedule() -> None:
    d = generate("moe", gpus=16, rng=2, normalize=True)
    a = generate("moe", gpus=16, rng=9, normalize=True)
    p = plan(d, switches=2, delta=0.05, max_error=0.01)
    err = relative_l1(d, a)
    assert err > 0.01
    out = p.fit(a)
    fresh = ocsched.schedule(a, switches=2, delta=0.05, algorithm="spectra-pack")
    assert out.meta["online"]["mode"] == "fallback"
    assert out.meta["online"]["error"] == pytest.approx(err)
    assert out.makespan == fresh.makespan
    assert p.fit(a, max_error=10.0).meta["online"]["mode"] != "fallback"


def test_new_entries_are_repaired() -> None:
    d = np.zeros((4, 4))
    d[0, 1] = d[1, 0] = 1.0
    a = d.copy()
    a[2, 3] = 0.5
    p = plan(d, switches=2, delta=0.1, max_error=1e9)
    out = p.fit(a)
    assert out.meta["online"]["mode"] == "repair"
    assert ocsched.validate(out, a).ok


def test_same_input_same_schedule() -> None:
    d = generate("moe", gpus=16, rng=4, normalize=True)
    a = d * np.random.default_rng(1).uniform(0.9, 1.1, d.shape)
    x, y = plan(d, switches=3, delta=0.01).fit(a), plan(d, switches=3, delta=0.01).fit(a)
    assert [[(c.start, c.duration, c.circuits) for c in sw] for sw in x.switches] == [
        [(c.start, c.duration, c.circuits) for c in sw] for sw in y.switches
    ]


def test_recourse_weight_keeps_configurations_on_their_switches() -> None:
    d = generate("moe", gpus=16, rng=5, normalize=True)
    a = d * np.random.default_rng(2).uniform(0.7, 1.3, d.shape)
    free = plan(d, switches=4, delta=0.01, max_error=1e9).fit(a)
    kept = plan(d, switches=4, delta=0.01, max_error=1e9, recourse=1e9).fit(a)
    assert kept.meta["online"]["recourse"] <= free.meta["online"]["recourse"]
    assert kept.meta["online"]["added"] == 0  # nothing moved: only configurations dropped
    assert ocsched.validate(kept, a).ok


def test_previous_schedule_starts_each_switch_with_its_held_configuration() -> None:
    d = generate("moe", gpus=16, rng=6, normalize=True)
    p = plan(d, switches=2, delta=0.01, max_error=1e9)
    first = p.fit(d)
    second = p.fit(d * 1.01, previous=first)
    for b, sw in enumerate(second.switches):
        if sw and len(sw) > 1:
            assert np.array_equal(sw[0].perm, first.switches[b][-1].perm)
    assert second.meta["online"]["recourse"] == recourse(first, second)


@pytest.mark.parametrize(
    ("fabric", "feature"),
    [
        (Fabric((Switch(0.1), Switch(0.1)), down=(SwitchDown(1, 0.0, 1.0),)), "failures"),
        (Fabric((Switch(0.1), Switch(0.1)), failed_links=(LinkDown(0, 1),)), "failures"),
        (Fabric.uniform(2, 0.1, model="partial"), "partial"),
    ],
)
def test_unsupported_fabrics_are_refused_in_one_line(fabric: Fabric, feature: str) -> None:
    with pytest.raises(InvalidInputError, match=feature) as exc:
        plan(np.ones((3, 3)) - np.eye(3), fabric=fabric)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda p: p.fit(np.ones((4, 4))), "4 x 4|3 x 3"),
        (lambda p: p.fit([[0, -1, 0], [0, 0, 0], [0, 0, 0]]), "negative|non-negative"),
        (lambda p: p.fit(np.full((3, 3), np.nan)), "finite|NaN|nan"),
        (lambda p: p.fit(np.zeros((3, 3)), max_error=-1), "max_error"),
    ],
)
def test_bad_actuals_are_refused(call: object, match: str) -> None:
    p = plan(np.ones((3, 3)) - np.eye(3), switches=2, delta=0.1)
    with pytest.raises(InvalidInputError, match=match):
        call(p)  # type: ignore[operator]


def test_bad_plan_arguments_are_refused() -> None:
    d = np.ones((3, 3)) - np.eye(3)
    with pytest.raises(InvalidInputError, match="algorithm"):
        plan(d, switches=2, delta=0.1, algorithm="nope")
    with pytest.raises(InvalidInputError, match="max_error"):
        plan(d, switches=2, delta=0.1, max_error=-0.5)
    with pytest.raises(InvalidInputError, match="recourse"):
        plan(d, switches=2, delta=0.1, recourse=-1)


def test_recourse_counts_circuits_added_and_removed_per_switch() -> None:
    a = (Configuration(0.1, 1.0, np.array([1, 2, 0])),)
    b = (Configuration(0.1, 1.0, np.array([1, 0, -1])),)
    x = Schedule(ports=3, delta=0.1, switches=(a, ()))
    y = Schedule(ports=3, delta=0.1, switches=((), b))
    assert recourse_counts(x, x) == (0, 0)
    assert recourse_counts(x, y) == (2, 3)
    assert recourse(x, y) == 5
    z = Schedule(ports=3, delta=0.1, switches=(b,))
    assert recourse_counts(x, z) == (1, 2)  # (1,0) added; (1,2), (2,0) removed; (0,1) kept


@pytest.mark.skipif(not _jit.HAVE_NUMBA, reason="numba not installed")
def test_fit_runs_its_kernels_compiled_whatever_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fit is the latency path: even a 3 x 3 runs compiled (prepared by plan()), with the
    # same result as the interpreted kernels.
    from ocsched.online import _kernels

    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    d = np.array([[0, 3, 1], [1, 0, 3], [3, 1, 0]], dtype=float)
    calls: list[bool] = []
    real = _jit.Kernel.uses_compiled

    def spy(self: _jit.Kernel, *args: object) -> bool:
        out = real(self, *args)
        if self is _kernels.scan:
            calls.append(out)
        return out

    monkeypatch.setattr(_jit.Kernel, "uses_compiled", spy)
    p = plan(d, switches=2, delta=0.5)
    fitted = p.fit(d * 1.05)
    assert calls and all(calls)
    with _jit.interpreted_only():
        again = p._fit(d * 1.05, previous=None, max_error=None)
    assert fitted.to_dict()["switches"] == again.to_dict()["switches"]
