"""Bidirectional circuits and several ports per endpoint: the fabric, schedule files, validate,
spectra-ports and its bound."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model_reference import reference
from ocsched import Fabric, InvalidInputError, Schedule, Switch, schedule, validate
from ocsched.bounds import lower_bound
from ocsched.bounds.ports import port_lines, ports_bound
from ocsched.decompose.bmatching import bmatching_candidates, circuit_incidence
from ocsched.exact.ports import solve_ports_exact
from ocsched.model import Configuration, Demand
from ocsched.schedulers import fabric_features


def _fabric(s: int = 2, delta: float = 0.1, *, k: int = 2, bidirectional: bool = True) -> Fabric:
    return Fabric((Switch(delta, bidirectional=bidirectional, ports_per_endpoint=k),) * s)


def _random(n: int, seed: int, density: float = 0.6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.random((n, n)) * (rng.random((n, n)) < density)
    np.fill_diagonal(d, 0.0)
    d[0, 1] = max(d[0, 1], 0.5)
    return d


def _hand(fabric: Fabric, n: int, confs: list[list[tuple[float, float, list[tuple[int, int]]]]]) -> Schedule:
    switches = tuple(tuple(_sparse(a, w, c, n) for a, w, c in sw) for sw in confs)
    return Schedule(ports=n, delta=max(fabric.deltas), switches=switches, fabric=fabric)


def _sparse(start: float, duration: float, circuits: list[tuple[int, int]], n: int) -> Configuration:
    ins = np.array([i for i, _ in circuits], np.int64)
    outs = np.array([j for _, j in circuits], np.int64)
    return Configuration.sparse(start, duration, ins, outs, ports=n)


# -- the fabric ---------------------------------------------------------------------------------


def test_switch_defaults_keep_the_classic_model() -> None:
    x = Switch(0.1)
    assert not x.bidirectional and x.ports_per_endpoint == 1 and x.is_plain
    assert Fabric.uniform(3, 0.1).is_uniform
    assert not _fabric().is_uniform
    assert fabric_features(_fabric()) == {"bidirectional", "ports"}
    assert fabric_features(_fabric(k=1)) == {"bidirectional"}
    assert fabric_features(_fabric(bidirectional=False)) == {"ports"}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ports_per_endpoint": 0}, "ports_per_endpoint"),
        ({"ports_per_endpoint": 65}, "ports_per_endpoint"),
        ({"ports_per_endpoint": 1.5}, "ports_per_endpoint"),
        ({"bidirectional": 1}, "bidirectional"),
    ],
)
def test_switch_refuses_bad_ports(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        Switch(0.1, **kwargs)  # type: ignore[arg-type]


def test_fabric_dict_round_trip() -> None:
    data = {"switches": [{"delta": 0.01, "count": 2, "bidirectional": True, "ports_per_endpoint": 2}]}
    fab = Fabric.from_dict(data)
    assert fab.switches[1] == Switch(0.01, bidirectional=True, ports_per_endpoint=2)
    assert Fabric.from_dict(fab.to_dict()) == fab
    # The classic switches write no port keys: their files stay as before.
    assert "bidirectional" not in Fabric.uniform(1, 0.1).to_dict()["switches"][0]
    with pytest.raises(InvalidInputError, match="ports_per_endpoint"):
        Fabric.from_dict({"switches": [{"delta": 0.1, "ports_per_endpoint": 0}]})


# -- schedule files -----------------------------------------------------------------------------


def test_schedule_v2_records_the_ports_and_reads_them_back() -> None:
    d = _random(6, 0)
    fab = _fabric(3, 0.05)
    sched = schedule(d, fabric=fab, algorithm="spectra-ports")
    data = json.loads(sched.to_json())
    assert data["version"] == 2
    assert all(sw["bidirectional"] is True and sw["ports_per_endpoint"] == 2 for sw in data["switches"])
    back = Schedule.from_json(sched.to_json())
    assert back.same_as(sched)
    assert validate(back, d).ok


def test_schedule_reader_allows_repeated_inputs_only_where_ports_allow() -> None:
    fab = _fabric(1, 0.1, bidirectional=False)
    sched = _hand(fab, 3, [[(0.1, 1.0, [(0, 1), (0, 2)])]])
    assert Schedule.from_json(sched.to_json()).switches[0][0].circuits == [(0, 1), (0, 2)]
    data = sched.to_dict()
    del data["switches"][0]["ports_per_endpoint"]
    with pytest.raises(InvalidInputError, match="uses input port 0 twice"):
        Schedule.from_dict(data)


# -- validate: the configuration semantics ------------------------------------------------------


def test_a_bidirectional_circuit_serves_both_directions() -> None:
    d = np.array([[0.0, 1.0], [0.5, 0.0]])
    fab = _fabric(1, 0.1, k=1)
    sched = _hand(fab, 2, [[(0.1, 1.0, [(0, 1)])]])
    assert validate(sched, d).ok
    assert sched.served().tolist() == [[0.0, 1.0], [1.0, 0.0]]
    # The same circuit on a directed switch serves 0 -> 1 only.
    directed = _hand(Fabric((Switch(0.1),)), 2, [[(0.1, 1.0, [(0, 1)])]])
    assert [v.kind for v in validate(directed, d).violations] == ["unserved"]


def test_k_ports_allow_k_circuits_per_endpoint_and_no_more() -> None:
    d = np.zeros((4, 4))
    d[0, 1] = d[0, 2] = d[0, 3] = 1.0
    two = _hand(
        _fabric(1, 0.1, bidirectional=False), 4, [[(0.1, 1.0, [(0, 1), (0, 2)]), (1.2, 1.0, [(0, 3)])]]
    )
    assert validate(two, d).ok
    three = _hand(_fabric(1, 0.1, bidirectional=False), 4, [[(0.1, 1.0, [(0, 1), (0, 2), (0, 3)])]])
    msgs = [str(v) for v in validate(three, d).violations]
    assert msgs == ["matching: switch 0 configuration 0: input port 0 used by more than 2 circuits (2 ports)"]


def test_bidirectional_ports_count_both_ends() -> None:
    # 0 is an input of one circuit and the output of another: two of its ports.
    d = np.zeros((3, 3))
    d[0, 1] = d[2, 0] = 1.0
    one = _hand(_fabric(1, 0.1, k=1), 3, [[(0.1, 1.0, [(0, 1), (2, 0)])]])
    msgs = [str(v) for v in validate(one, d).violations]
    assert msgs == [
        "matching: switch 0 configuration 0: port 0 ends more than 1 bidirectional circuits (1 ports)"
    ]
    assert validate(_hand(_fabric(1, 0.1, k=2), 3, [[(0.1, 1.0, [(0, 1), (2, 0)])]]), d).ok
    # On a directed switch of one port the same circuits are a matching.
    assert validate(_hand(Fabric((Switch(0.1),)), 3, [[(0.1, 1.0, [(0, 1), (2, 0)])]]), d).ok


def test_validate_reports_a_schedule_assuming_more_ports_than_the_fabric() -> None:
    d = np.array([[0.0, 1.0], [1.0, 0.0]])
    sched = _hand(_fabric(1, 0.1, k=2), 2, [[(0.1, 1.0, [(0, 1)])]])
    kinds = [v.kind for v in validate(sched, d, fabric=_fabric(1, 0.1, k=1)).violations]
    assert kinds == ["ports"]
    kinds = [v.kind for v in validate(sched, d, fabric=_fabric(1, 0.1, bidirectional=False)).violations]
    assert "ports" in kinds and "unserved" in kinds


@pytest.mark.parametrize("scale", [1e-9, 1.0, 1e9])
@pytest.mark.parametrize(("k", "bidirectional"), [(1, True), (2, True), (2, False), (3, True)])
def test_validate_agrees_with_the_reference(scale: float, k: int, bidirectional: bool) -> None:
    rng = np.random.default_rng(k * 10 + bidirectional)
    for seed in range(3):
        d = _random(5, seed) * scale
        fab = _fabric(2, 0.05 * scale, k=k, bidirectional=bidirectional)
        sched = schedule(d, fabric=fab, algorithm="spectra-ports")
        assert validate(sched, d).ok and reference(sched, d).sound()
        # Mutations: an extra circuit at the busiest endpoint (too many ports), a shortened piece.
        sw = [list(x) for x in sched.switches]
        b = int(np.argmax([len(x) for x in sw]))
        c = sw[b][0]
        ins, outs = c.circuit_arrays()
        p = int(np.bincount(np.concatenate([ins, outs]) if bidirectional else ins).argmax())
        extra = [(p, (p + 1 + int(rng.integers(4))) % 5)] * (k + 1)
        sw[b][0] = _sparse(c.start, c.duration, c.circuits + extra, 5)
        bad = Schedule(ports=5, delta=sched.delta, switches=tuple(map(tuple, sw)), fabric=fab)
        assert reference(bad, d).broken() and not validate(bad, d).ok
        sw = [list(x) for x in sched.switches]
        c = sw[b][0]
        sw[b][0] = Configuration.sparse(c.start, c.duration * 0.5, *c.circuit_arrays(), ports=5)
        short = Schedule(ports=5, delta=sched.delta, switches=tuple(map(tuple, sw)), fabric=fab)
        assert reference(short, d).broken() == (not validate(short, d).ok)


# -- decomposition, scheduler and bound ---------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "bidirectional"), [(1, False), (2, False), (1, True), (2, True), (3, True), (4, True)]
)
def test_candidates_cover_the_demand_within_the_ports(k: int, bidirectional: bool) -> None:
    for seed in range(4):
        dem = Demand.from_matrix(_random(9, seed))
        for bm in bmatching_candidates(dem, ports=k, bidirectional=bidirectional):
            inc = circuit_incidence(dem, bm.circuits, bidirectional=bidirectional)
            assert np.all(inc @ bm.weights >= dem.values * (1 - 1e-12)), bm.method
            for ins, outs in bm.circuits:
                sides = [np.concatenate([ins, outs])] if bidirectional else [ins, outs]
                assert all(np.bincount(x).max() <= k for x in sides), bm.method


def test_euler_orientation_reaches_the_fewest_configurations() -> None:
    # A dense symmetric demand on 2 ports: ceil(Delta / 2) configurations, the fewest possible.
    dem = Demand.from_matrix(_random(11, 3, density=1.0))
    bm = bmatching_candidates(dem, ports=2, bidirectional=True)[0]
    assert bm.method == "oriented" and len(bm) <= -(-10 // 2)


def test_ring_on_two_ports_is_one_configuration_and_optimal() -> None:
    d = np.zeros((8, 8))
    d[np.arange(8), (np.arange(8) + 1) % 8] = 1.0
    sched = schedule(d, fabric=_fabric(4, 0.1), algorithm="spectra-ports")
    assert validate(sched, d).ok
    assert sched.makespan == pytest.approx(0.1 + 2.0 / (2 * 4))
    assert sched.gap == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(("k", "bidirectional"), [(1, True), (2, True), (2, False), (3, False), (3, True)])
def test_spectra_ports_valid_above_its_bound_and_deterministic(k: int, bidirectional: bool) -> None:
    for seed in range(4):
        d = _random(8, seed, density=0.3 + 0.2 * seed)
        for s, delta in ((1, 0.2), (3, 0.05), (5, 0.01)):
            fab = _fabric(s, delta, k=k, bidirectional=bidirectional)
            sched = schedule(d, fabric=fab, algorithm="spectra-ports")
            assert validate(sched, d).ok
            assert sched.lower_bound is not None
            assert sched.makespan >= sched.lower_bound * (1 - 1e-12)
            again = schedule(d, fabric=fab, algorithm="spectra-ports")
            assert again.to_dict() | {"meta": {}} == sched.to_dict() | {"meta": {}}


def test_never_worse_than_the_directed_model_on_max_d_dt() -> None:
    for seed in range(6):
        d = _random(10, seed)
        w = np.maximum(d, d.T)
        for s, delta in ((2, 0.1), (6, 0.01)):
            ours = schedule(d, fabric=_fabric(s, delta), algorithm="spectra-ports")
            directed = schedule(w, switches=s, delta=delta, algorithm="spectra-pack")
            assert ours.makespan <= directed.makespan


def test_existing_schedulers_refuse_port_fabrics_in_one_line() -> None:
    with pytest.raises(InvalidInputError, match="does not support bidirectional, ports fabrics") as info:
        schedule(_random(4, 0), fabric=_fabric(), algorithm="spectra-pack")
    assert "\n" not in str(info.value)


def test_port_lines_and_bound_by_hand() -> None:
    d = np.zeros((3, 3))
    d[0, 1], d[1, 0], d[0, 2] = 2.0, 1.0, 1.0
    dem = Demand.from_matrix(d)
    sums, nnz = port_lines(dem, bidirectional=True)
    assert sums.tolist() == [3.0, 2.0, 1.0] and nnz.tolist() == [2, 1, 1]
    # 2 switches, 1 port, bidirectional: line 0 needs 3 of circuit time over 2 switches, 2 partners.
    assert ports_bound(dem, _fabric(2, 0.5, k=1)) == pytest.approx(3 / 2 + 0.5)
    # Directed, 2 ports: row 0 sums 3 over 2 x 2 ports, each switch at least one delay.
    assert ports_bound(dem, _fabric(2, 0.5, bidirectional=False)) == pytest.approx(3 / 4 + 0.5)
    # Mixed switches: the capacity root (rate 2 on switch 1).
    fab = Fabric((Switch(0.5, ports_per_endpoint=2), Switch(1.0, rate=2.0, ports_per_endpoint=2)))
    # Capacity 2 per unit from 0.5, 2 + 4 from 1.0: 1 by T = 1, the other 2 by 1 + 2 / 6.
    assert lower_bound(dem, fabric=fab) == pytest.approx(1.0 + 2 / 6)


# -- the tpu-pod workload and the command line --------------------------------------------------


@pytest.mark.parametrize("traffic", ["allreduce", "moe", "gpt"])
def test_tpu_pod_traffic(traffic: str) -> None:
    from ocsched.workloads import generate

    d = generate("tpu-pod", traffic=traffic, rng=3)
    assert d.shape == (64, 64) and not np.diag(d).any() and (d >= 0).all()
    top = max(d.sum(axis=0).max(), d.sum(axis=1).max())
    assert top == pytest.approx(4.0 * 96)  # the busiest cube: 4 ms over its 96 links
    assert np.array_equal(d, generate("tpu-pod", traffic=traffic, rng=3))
    if traffic == "moe":
        assert np.allclose(d, d.T)  # dispatch + combine
    if traffic == "allreduce":
        assert ((d > 0).sum(axis=1) == 3).all()  # three torus rings


def test_tpu_pod_refuses_a_pipeline_that_does_not_divide() -> None:
    from ocsched.workloads.tpu_pod import tpu_pod

    with pytest.raises(InvalidInputError, match="`pipeline` must divide"):
        tpu_pod(cubes=10, traffic="gpt", pipeline=4)


def test_cli_schedules_on_the_tpu_pod_preset(tmp_path: object) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    from ocsched.cli import app

    path = Path(str(tmp_path)) / "d.npy"
    np.save(path, _random(6, 1))
    runner = CliRunner()
    out = Path(str(tmp_path)) / "s.json"
    res = runner.invoke(
        app,
        [
            "schedule",
            str(path),
            "-s",
            "3",
            "-d",
            "0.1",
            "--bidirectional",
            "--ports-per-endpoint",
            "2",
            "-a",
            "spectra-ports",
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    sched = Schedule.from_json(out.read_text())
    assert sched.on_fabric() == _fabric(3, 0.1)
    res = runner.invoke(app, ["schedule", str(path), "--fabric", "tpu-pod", "-a", "spectra-ports"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["schedule", str(path), "--fabric", "tpu-pod"])
    assert res.exit_code == 2 and "does not support bidirectional, ports" in res.output
    res = runner.invoke(app, ["schedule", str(path), "-s", "2", "-d", "0.1", "--ports-per-endpoint", "0"])
    assert res.exit_code == 2 and "ports_per_endpoint" in res.output


def test_one_configuration_bound_by_hand() -> None:
    # One cube with 3 partners of 1 each, 2 switches of 2 ports, delta 10: the line bound says
    # (3/2 + 2 * 10) / 2 = 10.75; below 2 delta each of the 4 ports holds one partner for at most
    # T - delta, and every partner needs a whole port for 1, so T >= 11 (reached: 2 + 1 circuits).
    d = np.zeros((4, 4))
    d[0, 1] = d[0, 2] = d[0, 3] = 1.0
    fab = _fabric(2, 10.0)
    bound = ports_bound(Demand.from_matrix(d), fab)
    assert bound == pytest.approx(11.0, rel=1e-9) and bound <= 11.0
    sched = schedule(d, fabric=fab, algorithm="spectra-ports")
    assert sched.makespan >= bound
    assert solve_ports_exact(Demand.from_matrix(d), fab).makespan == pytest.approx(11.0)
    # 5 partners on 4 ports: one switch must hold two configurations.
    d[1, 2] = d[1, 3] = 0.0
    five = np.zeros((6, 6))
    five[0, 1:] = 1.0
    assert ports_bound(Demand.from_matrix(five), fab) == pytest.approx(20.0)
