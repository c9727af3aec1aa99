"""The port MILP on tiny instances: bound <= exact <= heuristic, and its configurations by hand."""

from __future__ import annotations

import numpy as np
import pytest

from ocsched import Fabric, Switch, schedule, validate
from ocsched.bounds.ports import ports_bound
from ocsched.exact.ports import port_configurations, solve_ports_exact
from ocsched.model import Demand, Schedule


def _random(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.random((n, n)) * (rng.random((n, n)) < 0.7)
    np.fill_diagonal(d, 0.0)
    d[0, 1] += 0.3
    return d


def test_configurations_by_hand() -> None:
    d = Demand.from_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    # Directed, 1 port: the 2-cycle; 2 ports: each circuit twice.
    assert port_configurations(d, ports=1, bidirectional=False) == [[(0, 1), (1, 0)]]
    assert port_configurations(d, ports=2, bidirectional=False) == [[(0, 1), (0, 1), (1, 0), (1, 0)]]
    # Bidirectional: one circuit per port.
    assert port_configurations(d, ports=2, bidirectional=True) == [[(0, 1), (0, 1)]]


def test_two_parallel_circuits_halve_the_time() -> None:
    d = Demand.from_matrix(np.array([[0.0, 1.0], [0.0, 0.0]]))
    r = solve_ports_exact(d, Fabric((Switch(0.1, bidirectional=True, ports_per_endpoint=2),)))
    assert r.status == "optimal" and r.makespan == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("n", "k", "bidirectional", "s"),
    [
        (4, 1, True, 2),
        (4, 2, True, 2),
        (3, 2, False, 2),
        pytest.param(4, 1, False, 2, marks=pytest.mark.slow),
        pytest.param(3, 2, True, 3, marks=pytest.mark.slow),
    ],
)
def test_bound_below_exact_below_heuristic(n: int, k: int, bidirectional: bool, s: int) -> None:
    # delta 1 against entries below 1.3: the one-configuration-per-switch argument applies.
    for seed, delta in ((0, 0.1), (1, 0.1), (2, 1.0), (3, 1.0)):
        d = _random(n, seed)
        dem = Demand.from_matrix(d)
        fab = Fabric((Switch(delta, bidirectional=bidirectional, ports_per_endpoint=k),) * s)
        res = solve_ports_exact(dem, fab)
        assert res.status == "optimal"
        sched = Schedule(ports=n, delta=delta, switches=res.switches, fabric=fab)
        assert validate(sched, d).ok
        heuristic = schedule(d, fabric=fab, algorithm="spectra-ports")
        bound = ports_bound(dem, fab)
        # The MILP's optimum is within HiGHS's relative gap (1e-9) and the coverage repair.
        assert bound <= res.makespan * (1 + 1e-9)
        assert res.dual_bound <= res.makespan * (1 + 1e-9)
        assert res.makespan <= heuristic.makespan * (1 + 1e-6)


def test_exact_ports_scheduler_is_valid_and_never_worse_than_spectra_ports() -> None:
    d = _random(4, 5)
    fab = Fabric((Switch(0.1, bidirectional=True, ports_per_endpoint=2),) * 2)
    exact = schedule(d, fabric=fab, algorithm="exact-ports")
    assert validate(exact, d).ok
    assert exact.makespan <= schedule(d, fabric=fab, algorithm="spectra-ports").makespan
    assert exact.dual_bound is not None and exact.dual_bound <= exact.makespan * (1 + 1e-9)
