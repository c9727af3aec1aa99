"""Hybrid fabrics: a packet switch (EPS) beside the circuits — model, file form, bound, schedulers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ocsched
from model_reference import reference
from ocsched import Fabric
from ocsched.bounds.hybrid import hybrid_bound, hybrid_line_bound
from ocsched.errors import InvalidInputError
from ocsched.hybrid import (
    circuits_only,
    eps_only,
    proportional,
    small_entry_trim,
    spectra_hybrid,
)
from ocsched.model import Configuration, Demand, Schedule
from ocsched.schedulers import fabric_features
from ocsched.workloads import generate

HYBRID = ("spectra-hybrid", "solstice-hybrid", "mixnet-greedy")


def _random(seed: int, n: int = 8, density: float = 0.6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.random((n, n)) * (rng.random((n, n)) < density)
    d[rng.random((n, n)) < 0.3] *= 0.02  # small entries worth trimming
    np.fill_diagonal(d, 0.0)
    return d


def _hand() -> tuple[np.ndarray, Schedule]:
    """Circuits serve (0,1) and (1,0) on one switch; the EPS serves the small (0,2) and (2,0)."""
    d = np.array([[0, 1.0, 0.2], [1.0, 0, 0], [0.2, 0, 0]])
    fab = Fabric.uniform(1, 0.1).with_eps(0.5)
    c = Configuration.from_circuits(0.1, 1.0, [(0, 1), (1, 0)], ports=3)
    eps = Demand.from_matrix(np.array([[0, 0, 0.2], [0, 0, 0], [0.2, 0, 0]]))
    return d, Schedule(ports=3, delta=0.1, switches=((c,),), fabric=fab, eps=eps)


def test_fabric_eps_is_a_feature_and_rate_zero_is_plain() -> None:
    f = Fabric.uniform(2, 0.1)
    assert f.with_eps(0.0) == f and f.with_eps(0.0).is_uniform
    assert f.with_eps(0.0, latency=3.0) == f  # a latency without a packet switch means nothing
    h = f.with_eps(0.5, latency=0.01)
    assert not h.is_uniform and fabric_features(h) == {"eps"}
    assert Fabric.from_dict(h.to_dict()) == h
    assert "eps_rate" not in f.to_dict()  # plain fabric files unchanged
    with pytest.raises(InvalidInputError, match="eps_rate"):
        f.with_eps(-1.0)
    with pytest.raises(InvalidInputError, match="eps_latency"):
        Fabric.from_dict({"switches": [{"delta": 0.1}], "eps_rate": 1, "eps_latency": float("nan")})


def test_hand_checked_schedule_makespan_and_validity() -> None:
    d, sched = _hand()
    # Circuits end at 1.1; the EPS carries 0.2 per busiest port at rate 0.5: 0.4.
    assert sched.eps_time == pytest.approx(0.4)
    assert sched.makespan == pytest.approx(1.1)
    assert ocsched.validate(sched, d).ok
    assert reference(sched, d).sound()
    slow = dataclasses.replace(sched, fabric=sched.on_fabric().with_eps(0.1))
    assert slow.makespan == pytest.approx(2.0)  # 0.2 / 0.1: the EPS is now the bottleneck
    assert ocsched.validate(slow, d).ok


def test_validate_rejects_a_missing_eps_entry_and_a_fabric_without_eps() -> None:
    d, sched = _hand()
    short = dataclasses.replace(sched, eps=Demand.from_matrix(np.array([[0, 0, 0.2], [0] * 3, [0] * 3])))
    assert [v.kind for v in ocsched.validate(short, d).violations] == ["unserved"]
    assert reference(short, d).broken()
    none = dataclasses.replace(sched, fabric=sched.on_fabric().without_eps())
    assert "eps" in [v.kind for v in ocsched.validate(none, d).violations]
    assert reference(none, d).broken()
    slower = sched.on_fabric().with_eps(0.25)
    assert "eps" in [v.kind for v in ocsched.validate(sched, d, fabric=slower).violations]
    assert reference(sched, d, fabric=slower).broken()


def test_validate_tolerance_is_relative_at_any_magnitude() -> None:
    for scale in (1e-9, 1.0, 1e9):
        d, sched = _hand()
        c = sched.switches[0][0]
        big = Schedule(
            ports=3,
            delta=0.1 * scale,
            switches=((Configuration.from_circuits(0.1 * scale, 1.0 * scale, c.circuits, ports=3),),),
            fabric=Fabric.uniform(1, 0.1 * scale).with_eps(0.5),
            eps=sched.eps.scaled(scale) if sched.eps is not None else None,
        )
        assert ocsched.validate(big, d * scale).ok
        short = dataclasses.replace(big, eps=big.eps.scaled(1 - 1e-6) if big.eps is not None else None)
        assert not ocsched.validate(short, d * scale).ok


def test_schedule_file_round_trip_and_refusals() -> None:
    d, sched = _hand()
    data = sched.to_dict()
    assert data["version"] == 2 and data["eps"]["rate"] == 0.5
    back = Schedule.from_dict(json.loads(json.dumps(data)))
    assert back.same_as(sched) and ocsched.validate(back, d).ok
    bad = json.loads(json.dumps(data))
    bad["eps"]["entries"].append([0, 0, 1.0])
    with pytest.raises(InvalidInputError, match=r"eps\.entries"):
        Schedule.from_dict(bad)
    bad = json.loads(json.dumps(data))
    bad["eps"]["rate"] = 0
    with pytest.raises(InvalidInputError, match=r"eps\.rate"):
        Schedule.from_dict(bad)
    bad = json.loads(json.dumps(data))
    bad["makespan"] = 0.3  # below the EPS's time with a slower EPS
    bad["eps"]["rate"] = 0.1
    with pytest.raises(InvalidInputError, match="makespan"):
        Schedule.from_dict(bad)
    v1 = ocsched.schedule(d, switches=1, delta=0.1).to_dict()
    v1["eps"] = data["eps"]
    with pytest.raises(InvalidInputError, match="eps"):
        Schedule.from_dict(v1)


def test_schema_knows_the_eps_section() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schedule.schema.json").read_text())
    _, sched = _hand()
    jsonschema.validate(json.loads(sched.to_json()), schema)
    bad = json.loads(sched.to_json())
    bad["eps"]["extra"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_plain_schedulers_refuse_an_eps_fabric_in_one_line() -> None:
    fab = Fabric.uniform(2, 0.1).with_eps(0.5)
    with pytest.raises(InvalidInputError, match="does not support eps"):
        ocsched.schedule(_random(0), fabric=fab, algorithm="spectra-pack")


@pytest.mark.parametrize("algorithm", HYBRID)
def test_hybrid_schedulers_on_a_plain_fabric_schedule_circuits_only(algorithm: str) -> None:
    d = _random(1)
    sched = ocsched.schedule(d, fabric=Fabric.uniform(2, 0.05), algorithm=algorithm)
    assert sched.eps is None and sched.to_dict()["version"] == 1
    assert ocsched.validate(sched, d).ok


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 9),
    s=st.integers(1, 4),
    delta=st.sampled_from([0.0, 0.01, 0.1, 0.5]),
    rho=st.sampled_from([0.05, 0.3, 1.0, 3.0]),
    latency=st.sampled_from([0.0, 0.05]),
)
def test_hybrid_schedules_are_valid_above_the_bound_and_deterministic(
    seed: int, n: int, s: int, delta: float, rho: float, latency: float
) -> None:
    d = _random(seed, n)
    fab = Fabric.uniform(s, delta).with_eps(rho, latency)
    lb = hybrid_bound(Demand.from_matrix(d), fab)
    for algorithm in HYBRID:
        sched = ocsched.schedule(d, fabric=fab, algorithm=algorithm)
        report = ocsched.validate(sched, d)
        assert report.ok, (algorithm, report.violations[:3])
        assert reference(sched, d).sound(), algorithm
        assert sched.lower_bound == lb
        assert lb <= sched.makespan * (1 + 1e-12), algorithm
        again = ocsched.schedule(d, fabric=fab, algorithm=algorithm)
        assert again.makespan == sched.makespan
        assert Schedule.from_json(sched.to_json()).same_as(sched)


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 9),
    s=st.integers(1, 4),
    delta=st.sampled_from([0.0, 0.01, 0.1]),
    rho=st.sampled_from([0.1, 0.5, 1.0]),
)
def test_spectra_hybrid_is_never_worse_than_its_simple_candidates(
    seed: int, n: int, s: int, delta: float, rho: float
) -> None:
    dem = Demand.from_matrix(_random(seed, n))
    fab = Fabric.uniform(s, delta).with_eps(rho)
    best = spectra_hybrid(dem, fab).makespan
    pack = circuits_only(dem, fab)
    for other in (pack, eps_only(dem, fab), proportional(dem, fab, base=pack)):
        assert best <= other.makespan
    from ocsched.hybrid import _line_estimate, _scale

    trim = small_entry_trim(dem, fab, scale=_scale(dem, fab, pack.makespan))
    assert best <= trim.makespan
    assert _line_estimate(dem, dem.values, fab.without_eps()) <= pack.makespan * (1 + 1e-12)


def test_hybrid_bound_hand_checked_and_at_rho_zero_no_eps() -> None:
    d = Demand.from_matrix(np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]]))
    # A line of two unit entries, s = 1, delta = 0.5, rho = 1: all on the EPS takes 2; one entry
    # there (1 <= T) and one on the circuit (T >= 0.5 + 1 - T) gives 1.25; both on circuits 1.5.
    assert hybrid_line_bound(d, switches=1, delta=0.5, rho=1.0) == pytest.approx(1.25)
    # rho -> 0: the line argument of the plain fabric, (max(k, s) delta + load) / s.
    assert hybrid_line_bound(d, switches=1, delta=0.5, rho=1e-12) == pytest.approx(3.0)
    # Latency: nothing reaches the EPS before L, so with L = 10 the circuits carry everything.
    assert hybrid_line_bound(d, switches=1, delta=0.5, rho=1.0, latency=10.0) == pytest.approx(3.0)


def test_spectra_hybrid_beats_circuits_only_on_moe() -> None:
    d = generate("moe", gpus=16, normalize=True, rng=0)
    fab = Fabric.uniform(4, 0.04).with_eps(1.0)
    hyb = ocsched.schedule(d, fabric=fab, algorithm="spectra-hybrid")
    pack = ocsched.schedule(d, fabric=fab.without_eps(), algorithm="spectra-pack")
    assert hyb.makespan < 0.8 * pack.makespan
    assert ocsched.validate(hyb, d).ok


@pytest.mark.parametrize("seed", range(4))
def test_exact_hybrid_is_optimal_above_the_bound_and_below_the_heuristics(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = _random(seed, n=3 + seed % 2)
    fab = Fabric.uniform(1 + seed % 2, float(rng.choice([0.01, 0.1]))).with_eps(float(rng.choice([0.2, 1.0])))
    ex = ocsched.schedule(d, fabric=fab, algorithm="exact-hybrid")
    assert ocsched.validate(ex, d).ok and reference(ex, d).sound()
    assert ex.status == "optimal"
    assert ex.lower_bound is not None and ex.lower_bound <= ex.makespan * (1 + 1e-12)
    for algorithm in HYBRID:
        other = ocsched.schedule(d, fabric=fab, algorithm=algorithm).makespan
        assert ex.makespan <= other * (1 + 1e-9), algorithm  # HiGHS's tolerances, made relative


def test_sweep_eps_rate_grid_key_runs_hybrid_fabrics() -> None:
    from ocsched.sweep import expand, run_batch

    cfg = {
        "switches": [2],
        "delta": 0.04,
        "eps_rate": [0, 0.5],
        "algorithms": ["spectra-hybrid"],
        "workloads": [{"name": "standard", "options": {"n": 8, "flows": 3}}],
    }
    specs = expand(cfg)
    assert [s.fabric for s in specs] == [None, "2 switches, delta 0.04, eps 0.5"]
    rows = run_batch(specs)
    from ocsched.sweep.run import _demand

    d = _demand(specs[1])
    direct = ocsched.schedule(d, fabric=Fabric.uniform(2, 0.04).with_eps(0.5), algorithm="spectra-hybrid")
    assert rows[1]["makespan"] == pytest.approx(direct.makespan)
    assert rows[1]["lower_bound"] == pytest.approx(direct.lower_bound)
    with pytest.raises(InvalidInputError, match="does not support eps"):
        expand({**cfg, "algorithms": ["spectra"]})


def test_cli_eps_rate_schedules_validates_and_refuses_bad_values(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ocsched.cli import app

    np.save(tmp_path / "d.npy", _random(3, 6))
    out = tmp_path / "s.json"
    args = ["schedule", str(tmp_path / "d.npy"), "--switches", "2", "--delta", "0.05"]
    res = CliRunner().invoke(app, [*args, "--eps-rate", "0.5", "-a", "spectra-hybrid", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "eps" in res.stdout
    sched = Schedule.from_json(out.read_text())
    assert sched.on_fabric().eps_rate == 0.5 and ocsched.validate(sched, _random(3, 6)).ok
    res = CliRunner().invoke(app, ["validate", str(tmp_path / "d.npy"), str(out)])
    assert res.exit_code == 0, res.output
    for bad, word in (
        (["--eps-rate", "-1", "-a", "spectra-hybrid"], "eps_rate"),
        (["--eps-rate", "0.5"], "eps"),
    ):
        res = CliRunner().invoke(app, [*args, *bad])
        assert res.exit_code == 2 and word in res.stderr and "Traceback" not in res.stderr
    res = CliRunner().invoke(app, [*args, "--eps-latency", "0.1", "-a", "spectra-hybrid"])
    assert res.exit_code == 2 and "--eps-latency" in res.stderr
