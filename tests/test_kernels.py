"""Every kernel gives the same result interpreted and compiled (ocsched._jit.Kernel)."""

from __future__ import annotations

import numpy as np
import pytest

import ocsched
from ocsched import _jit
from ocsched.fabric import Fabric, LinkDown, SwitchDown

pytestmark = pytest.mark.skipif(not _jit.HAVE_NUMBA, reason="numba not installed")


def _dict(sched: ocsched.Schedule) -> dict[str, object]:
    data = sched.to_dict()
    data["meta"] = {k: v for k, v in data["meta"].items() if k != "runtime_s"}
    return data


def _matrix(seed: int, n: int, density: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.random((n, n)) * (rng.random((n, n)) < density)
    np.fill_diagonal(d, 0.0)
    return d


FABRICS = {
    "uniform": Fabric.uniform(3, 0.05),
    "mixed": Fabric.from_deltas([0.05, 0.5], rates=[1.0, 2.0]),
    "failing": Fabric.uniform(3, 0.05).with_failures(
        down=[SwitchDown(1, 0.05, 0.12)], failed_links=[LinkDown(port=2, switch=2)]
    ),
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_every_scheduler_same_interpreted_and_compiled(seed: int, fabric: str) -> None:
    d = _matrix(seed, 7 + seed, 0.6)
    fab = FABRICS[fabric]
    for name in ocsched.SCHEDULERS:
        try:
            with _jit.compiled_only():
                fast = ocsched.schedule(d, fabric=fab, algorithm=name, rng=seed)
        except ocsched.InvalidInputError:
            continue  # this scheduler does not support the fabric
        with _jit.interpreted_only():
            slow = ocsched.schedule(d, fabric=fab, algorithm=name, rng=seed)
        assert _dict(slow) == _dict(fast), name


def test_bounds_same_interpreted_and_compiled() -> None:
    d = _matrix(3, 9, 0.5)
    with _jit.compiled_only():
        fast = [ocsched.lower_bound(d, switches=2, delta=0.05, strong=True)]
        fast += [ocsched.lower_bound(d, fabric=f) for f in FABRICS.values()]
    with _jit.interpreted_only():
        slow = [ocsched.lower_bound(d, switches=2, delta=0.05, strong=True)]
        slow += [ocsched.lower_bound(d, fabric=f) for f in FABRICS.values()]
    assert [x.hex() for x in slow] == [x.hex() for x in fast]


def _total(a: np.ndarray) -> float:
    s = 0.0
    for x in a:
        s += x
    return s


total = _jit.Kernel(_total, budget=100)


def test_small_calls_run_interpreted_large_compiled() -> None:
    # A fresh kernel (nothing compiled in this process): by its work against its budget.
    fresh = _jit.Kernel(_total, budget=100)
    assert not fresh.uses_compiled(np.zeros(5))
    assert fresh.uses_compiled(np.zeros(101)) == (not _jit._disabled())
    with _jit.interpreted_only():
        assert not fresh.uses_compiled(np.zeros(101))
    a = np.random.default_rng(0).random(300)
    assert total(a) == total.interpreted(a) == _total(a)
