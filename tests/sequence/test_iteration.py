"""Iterations: the model, its formats, the iteration schedulers, the bound, the validator, workloads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ocsched
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric, LinkDown, Switch
from ocsched.io import (
    is_iteration,
    read_iteration,
    read_iteration_schedule,
    write_iteration,
    write_iteration_schedule,
)
from ocsched.iteration import Iteration, IterationSchedule, Phase
from ocsched.model import Configuration
from ocsched.sequence import (
    ITERATION_SCHEDULERS,
    iteration_lower_bound,
    iteration_row,
    schedule_iteration,
    validate_iteration,
)
from ocsched.workloads import ITERATION_WORKLOADS, generate_iteration
from ocsched.workloads.gpt import gpt
from ocsched.workloads.iteration import coflow_sequence, gpt_iteration, moe_iteration
from strategies import iterations

REL = 1e-9
SWAP = [[0, 1], [1, 0]]


def two_phase(gap: float = 0.2) -> Iteration:
    return Iteration([Phase(SWAP, name="a"), Phase(SWAP, gap_before=gap, name="b")])


# --- the model and its checks ----------------------------------------------------------------------


def test_worked_example_by_hand() -> None:
    # One switch, delta 0.5: phase a holds the swap for 1 from 0.5 to 1.5; after a 0.2 gap phase b
    # uses the same permutation, which persists: it starts at the release 1.7 and ends at 2.7.
    # Independent pays the delay again: 1.5 + 0.2 + 0.5 + 1 = 3.2.
    it = two_phase()
    seq = schedule_iteration(it, switches=1, delta=0.5)
    ind = schedule_iteration(it, switches=1, delta=0.5, algorithm="independent")
    assert [(c.start, c.duration) for c in seq.switches[0]] == [(0.5, 1.0), (1.7, 1.0)]
    assert seq.releases == (0.0, 1.7) and seq.ends == (1.5, 2.7)
    assert seq.phase_makespans == pytest.approx((1.5, 1.0))
    assert seq.makespan == pytest.approx(2.7) and ind.makespan == pytest.approx(3.2)
    assert seq.exposed == pytest.approx(2.5) and seq.persisted == 1
    assert seq.lower_bound == pytest.approx(2.7)  # tight here
    assert seq.phase_spans()[1] == ("b", 1.5, 1.7, 2.7)


def test_a_gap_of_delta_hides_the_delay() -> None:
    it = Iteration([Phase(SWAP), Phase([[0, 2], [0, 0]], gap_before=0.5)])
    seq = schedule_iteration(it, switches=1, delta=0.5)
    # New permutation, reconfigured during the gap: starts at the release 2.0, no exposed delay.
    assert seq.switches[0][1].start == pytest.approx(2.0)
    assert seq.makespan == pytest.approx(4.0)
    assert seq.hidden_delay == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: Iteration([]), "at least one phase"),
        (lambda: Iteration([Phase(SWAP), Phase(np.zeros((3, 3)))]), r"same n; phase 1"),
        (lambda: Phase(SWAP, gap_before=-1.0), "gap_before"),
        (lambda: Phase([[0, -1], [0, 0]], name="x"), r"phase 'x' demand.*non-negative"),
        (lambda: Phase(SWAP, name=3), "name"),  # type: ignore[arg-type]
        (lambda: Iteration([SWAP]), "must be an ocsched.Phase"),  # type: ignore[list-item]
        (lambda: Iteration.from_matrices(np.zeros((2, 2, 2)), gaps=[0.0]), "one entry per phase"),
        (lambda: Iteration.from_matrices(np.zeros((2, 2, 2)), gaps=[0.0, -1.0]), r"`gaps\[1\]`.*>= 0"),
        (lambda: Iteration.from_matrices(np.zeros((2, 2, 2)), gaps=float("nan")), r"`gaps` .*got nan"),
    ],
)
def test_model_errors(build: object, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        build()  # type: ignore[operator]


def test_iteration_json_round_trip() -> None:
    it = Iteration([Phase(SWAP, name="a"), Phase([[0, 2.5], [0, 0]], gap_before=1.5, name="b")])
    back = Iteration.from_json(it.to_json())
    assert back.names == it.names and back.gaps == it.gaps
    for p, q in zip(back.phases, it.phases, strict=True):
        assert np.array_equal(p.demand.to_dense(), q.demand.to_dense())


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"format": "ocsched.schedule", "version": 1, "phases": []}, "format"),
        ({"format": "ocsched.sequence", "version": 2, "phases": []}, "version"),
        ({"format": "ocsched.sequence", "version": 1, "phases": []}, "non-empty list"),
        ({"format": "ocsched.sequence", "version": 1, "phases": [{"demand": [[0, "x"]]}]}, "numbers"),
        (
            {"format": "ocsched.sequence", "version": 1, "phases": [{"demand": SWAP, "gap_before": "1"}]},
            "gap",
        ),
        (
            {
                "format": "ocsched.sequence",
                "version": 1,
                "ports": 2,
                "phases": [{"demand": {"src": [0], "dst": [5], "value": [1]}}],
            },
            "ports must be integers in 0..1",
        ),
        (
            {"format": "ocsched.sequence", "version": 1, "phases": [{"demand": SWAP}, {"demand": [[0]]}]},
            "same n",
        ),
    ],
)
def test_iteration_file_errors(data: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        Iteration.from_dict(data)


def test_iteration_schedule_json_round_trip_and_recorded_makespan() -> None:
    sched = schedule_iteration(two_phase(), switches=2, delta=0.1)
    back = IterationSchedule.from_json(sched.to_json())
    assert back.makespan == sched.makespan and back.phase_of == sched.phase_of and back.names == sched.names
    assert validate_iteration(back, two_phase()).ok
    data = sched.to_dict()
    data["makespan"] = 99.0
    with pytest.raises(InvalidInputError, match="disagrees"):
        IterationSchedule.from_dict(data)
    data = sched.to_dict()
    data["switches"][0]["configurations"][0]["phase"] = 7
    with pytest.raises(InvalidInputError, match="phase"):
        IterationSchedule.from_dict(data)


# --- the validator ---------------------------------------------------------------------------------


def hand(confs: list[tuple[float, float, int]], gaps: tuple[float, ...] = (0.0, 0.2)) -> IterationSchedule:
    switch = tuple(Configuration.from_circuits(t, w, [(0, 1), (1, 0)], ports=2) for t, w, _ in confs)
    return IterationSchedule(2, 0.5, (switch,), (tuple(k for *_, k in confs),), gaps, ("a", "b"))


def test_validator_accepts_persistence_and_reports_each_violation() -> None:
    it = two_phase()
    assert validate_iteration(hand([(0.5, 1.0, 0), (1.7, 1.0, 1)]), it).ok
    kinds = {v.kind for v in validate_iteration(hand([(0.5, 1.0, 0), (1.6, 1.0, 1)]), it).violations}
    assert kinds == {"barrier"}  # persisting is fine, starting before the release is not
    rep = validate_iteration(hand([(0.2, 1.0, 0), (1.7, 1.0, 1)]), it)
    assert {v.kind for v in rep.violations} == {"timing"}  # the first configuration pays delta
    rep = validate_iteration(hand([(0.5, 0.4, 0), (1.7, 1.0, 1)]), it)
    assert [v.kind for v in rep.violations] == ["unserved"] * 2  # both entries of phase 0
    assert "phase 0 ('a')" in rep.violations[0].message
    rep = validate_iteration(hand([(0.5, 1.0, 1), (1.7, 1.0, 0)]), it)
    assert "phases" in {v.kind for v in rep.violations}
    rep = validate_iteration(hand([(0.5, 1.0, 0), (1.7, 1.0, 1)]), it, delta=1.0)
    assert {v.kind for v in rep.violations} >= {"delta", "timing"}


def test_validator_new_permutation_pays_the_delay() -> None:
    it = Iteration([Phase(SWAP), Phase([[0, 2], [0, 0]], gap_before=0.2)])
    a = Configuration.from_circuits(0.5, 1.0, [(0, 1), (1, 0)], ports=2)
    b = Configuration.from_circuits(1.7, 2.0, [(0, 1)], ports=2)  # differs: needs 1.5 + 0.5
    sched = IterationSchedule(2, 0.5, ((a, b),), ((0, 1),), it.gaps, it.names)
    assert {v.kind for v in validate_iteration(sched, it).violations} == {"timing"}


# --- schedulers: properties ------------------------------------------------------------------------


@given(data=iterations(), s=st.integers(1, 4), scale=st.sampled_from([0.0, 0.01, 0.2, 1.0]))
def test_seq_is_valid_never_worse_than_independent_and_above_the_bound(
    data: tuple[list[np.ndarray], list[float]], s: int, scale: float
) -> None:
    mats, gaps = data
    it = Iteration.from_matrices(mats, gaps=gaps)
    top = max(float(m.max(initial=0.0)) for m in mats) or 1.0
    delta = scale * top
    ind = schedule_iteration(it, switches=s, delta=delta, algorithm="independent")
    seq = schedule_iteration(it, switches=s, delta=delta)
    for sched in (ind, seq):
        rep = validate_iteration(sched, it)
        assert rep.ok, rep.violations
        assert sched.makespan >= iteration_lower_bound(it, switches=s, delta=delta) * (1 - REL) - 1e-12
    assert seq.makespan <= ind.makespan * (1 + REL) + 1e-12


@settings(max_examples=25)
@given(data=iterations(max_phases=3, max_n=5), base=st.sampled_from(["spectra-pack", "baseline", "eclipse"]))
def test_never_worse_on_other_bases(data: tuple[list[np.ndarray], list[float]], base: str) -> None:
    mats, gaps = data
    it = Iteration.from_matrices(mats, gaps=gaps)
    ind = schedule_iteration(it, switches=2, delta=0.1, algorithm="independent", base=base, rng=3)
    seq = schedule_iteration(it, switches=2, delta=0.1, base=base, rng=3)
    assert validate_iteration(seq, it).ok
    assert seq.makespan <= ind.makespan * (1 + REL) + 1e-12


@settings(max_examples=15)
@given(data=iterations(max_phases=3, max_n=3))
def test_bound_holds_for_near_optimal_phases(data: tuple[list[np.ndarray], list[float]]) -> None:
    # The exact per-phase base gives the best single-matrix schedules, and spectra-seq re-arranges
    # them; no valid schedule may beat the bound (the bound's proof covers every schedule).
    mats, gaps = data
    it = Iteration.from_matrices(mats, gaps=gaps)
    seq = schedule_iteration(it, switches=2, delta=0.3, base="exact")
    assert validate_iteration(seq, it).ok
    assert seq.makespan >= iteration_lower_bound(it, switches=2, delta=0.3) * (1 - REL)


def test_bound_counts_only_hideable_delay() -> None:
    # First phase, no gap: nothing can hide, so the bound is the single-matrix bound.
    it = Iteration([Phase(SWAP)])
    assert iteration_lower_bound(it, switches=1, delta=0.5) == pytest.approx(
        ocsched.lower_bound(SWAP, switches=1, delta=0.5)
    )
    gap = Iteration([Phase(SWAP, gap_before=0.3)])  # a gap of 0.3 hides 0.3 of the first delay
    assert iteration_lower_bound(gap, switches=1, delta=0.5) == pytest.approx(0.3 + 1.5 - 0.3)


@settings(max_examples=20)
@given(data=iterations(max_phases=4, max_n=4))
def test_bound_is_at_least_the_per_phase_bound(data: tuple[list[np.ndarray], list[float]]) -> None:
    # Runs of one phase are one of the partitions the bound maximises over.
    mats, gaps = data
    it = Iteration.from_matrices(mats, gaps=gaps)
    per_phase = it.total_gap + sum(
        max(
            0.0,
            ocsched.lower_bound(p.demand, switches=2, delta=0.3)
            - (min(p.gap_before, 0.3) if k == 0 else 0.3),
        )
        for k, p in enumerate(it.phases)
    )
    assert iteration_lower_bound(it, switches=2, delta=0.3) >= per_phase * (1 - REL)


def test_bound_runs_charge_a_delay_that_cannot_hide() -> None:
    # Phase 2 follows an empty phase 1 with no gap: its delay has nowhere to hide. Alone it would
    # be charged 1.5 - 0.5; the run of both is charged the whole single-matrix bound, and met.
    it = Iteration([Phase([[0, 0], [0, 0]]), Phase(SWAP)])
    assert iteration_lower_bound(it, switches=1, delta=0.5) == pytest.approx(1.5)
    assert schedule_iteration(it, switches=1, delta=0.5).makespan == pytest.approx(1.5)


def test_line_bound_across_the_barrier_is_tight_here() -> None:
    # Row 0 sends 2 to port 2, then after a gap of 0.1 the ring. Two switches, delta 0.5: the
    # runs alone give 2.25; the line bound across the barrier 2.5, which spectra-seq meets.
    send, ring = [[0, 0, 2], [0, 0, 0], [0, 0, 0]], [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    it = Iteration([Phase(send), Phase(ring, gap_before=0.1)])
    assert iteration_lower_bound(it, switches=2, delta=0.5) == pytest.approx(2.5)
    seq = schedule_iteration(it, switches=2, delta=0.5)
    assert validate_iteration(seq, it).ok and seq.makespan == pytest.approx(2.5)


@settings(max_examples=25)
@given(data=iterations(max_phases=3, max_n=3), s=st.integers(1, 3), delta=st.sampled_from([0.1, 0.5, 2.0]))
def test_no_schedule_beats_the_bound(
    data: tuple[list[np.ndarray], list[float]], s: int, delta: float
) -> None:
    # Exact per-phase schedules re-arranged by spectra-seq, and independent ones: all valid, none
    # below the bound (runs and the line bound across barriers), for 1-3 switches and any delta.
    mats, gaps = data
    it = Iteration.from_matrices(mats, gaps=gaps)
    bound = iteration_lower_bound(it, switches=s, delta=delta)
    for algorithm in ("spectra-seq", "independent"):
        sched = schedule_iteration(it, switches=s, delta=delta, algorithm=algorithm, base="exact")
        assert validate_iteration(sched, it).ok
        assert sched.makespan >= bound * (1 - REL)


def test_recurring_phases_persist_and_ratios_are_reported() -> None:
    ring = np.roll(np.eye(8), 1, axis=1)
    it = Iteration([Phase(ring, gap_before=0.01, name=f"ar{k}") for k in range(6)])
    seq = schedule_iteration(it, switches=4, delta=0.5)
    ind = schedule_iteration(it, switches=4, delta=0.5, algorithm="independent")
    assert seq.exposed == pytest.approx(0.49 + 6 * 0.25)  # one exposed delay (0.5 - 0.01), then persistence
    row = iteration_row(seq, independent=ind)
    assert row["reused_pct"] == pytest.approx(100 * 5 / 6)
    assert row["ratio_independent"] == pytest.approx(seq.exposed / ind.exposed)
    assert row["ratio_bound"] == pytest.approx(seq.exposed / (seq.lower_bound - sum(it.gaps)))
    assert 0 < row["delay_hidden_pct"] <= 100


def test_dedication_beats_reconfiguring_between_small_phases() -> None:
    # A big recurring phase and a small different one, no gaps, delta large: keeping one switch for
    # the small one (3 x 1/3 of 4 per big phase, 0.1 per small one, one delay each at the start:
    # about 13.4) beats reconfiguring the four switches every time (independent: 20.1).
    big = np.roll(np.eye(8), 1, axis=1) * 4.0
    small = np.roll(np.eye(8), 3, axis=1) * 0.1
    it = Iteration([Phase(big if k % 3 else small) for k in range(12)])
    seq = schedule_iteration(it, switches=4, delta=1.0)
    ind = schedule_iteration(it, switches=4, delta=1.0, algorithm="independent")
    assert validate_iteration(seq, it).ok
    assert seq.makespan < 0.7 * ind.makespan


def test_same_seed_same_schedule() -> None:
    it = moe_iteration(gpus=8, layers=2, rng=0, gaps=0.0)
    a = schedule_iteration(it, switches=3, delta=1e-4, base="baseline", rng=5)
    b = schedule_iteration(it, switches=3, delta=1e-4, base="baseline", rng=5)
    assert a.to_dict()["switches"] == b.to_dict()["switches"]


def test_scheduler_argument_errors() -> None:
    it = two_phase()
    with pytest.raises(InvalidInputError, match="algorithm"):
        schedule_iteration(it, switches=2, delta=0.1, algorithm="nope")
    with pytest.raises(InvalidInputError, match="base"):
        schedule_iteration(it, switches=2, delta=0.1, base="nope")
    # Any fabric is scheduled; only a base that cannot run on it is refused, naming the feature.
    with pytest.raises(InvalidInputError, match="base 'naive' does not support heterogeneous"):
        schedule_iteration(it, fabric=Fabric((Switch(0.1), Switch(0.2))), base="naive")
    with pytest.raises(InvalidInputError, match="base 'spectra-partial' needs a fabric with partial"):
        schedule_iteration(it, switches=2, delta=0.1, base="spectra-partial")
    with pytest.raises(InvalidInputError, match="port outside"):
        schedule_iteration(it, fabric=Fabric.uniform(2, 0.1).with_failures(failed_links=[LinkDown(5, 0)]))
    with pytest.raises(InvalidInputError, match="Iteration"):
        schedule_iteration([SWAP], switches=2, delta=0.1)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="switches"):
        schedule_iteration(it, switches=0, delta=0.1)
    assert schedule_iteration(it, fabric=Fabric.uniform(2, 0.1)).num_switches == 2
    assert set(ITERATION_SCHEDULERS) == {"independent", "spectra-seq"}


# --- workloads -------------------------------------------------------------------------------------


def test_gpt_iteration_adds_up_to_the_gpt_matrix() -> None:
    opts = {"preset": "gpt3-125m", "tp": 2, "pp": 2, "dp": 2, "micro_batches": 3}
    it = gpt_iteration(**opts, link_gbps=8e-9)  # 1 byte = 1 time unit
    total = sum(p.demand.to_dense() for p in it.phases)
    assert np.allclose(total, gpt(**opts), rtol=1e-12)
    assert all(g >= 0 for g in it.gaps) and it.total_gap > 0
    assert it.names[-1] == "dp-allreduce"
    assert gpt_iteration(preset="gpt3-125m", tp=2, pp=2, dp=2, gaps=0.0).total_gap == 0.0


def test_gpt_iteration_phases_and_errors() -> None:
    it = gpt_iteration(preset="gpt3-125m", tp=1, pp=2, dp=2, micro_batches=2)
    assert not any(".attn" in n for n in it.names)  # no TP traffic: compute joins the sends' gaps
    with pytest.raises(InvalidInputError, match="pp"):
        gpt_iteration(preset="gpt3-125m", pp=5)
    with pytest.raises(InvalidInputError, match="tflops"):
        gpt_iteration(tflops=0)
    with pytest.raises(InvalidInputError, match="one entry per phase"):
        gpt_iteration(preset="gpt3-125m", tp=2, pp=2, dp=2, gaps=[0.0, 1.0])


def test_moe_iteration_drift() -> None:
    same = moe_iteration(gpus=8, layers=3, drift=0.0, tokens=200_000, rng=1)
    free = moe_iteration(gpus=8, layers=3, drift=1.0, tokens=200_000, rng=1)

    def change(it: Iteration) -> float:
        a, b = it.phases[0].demand.to_dense(), it.phases[2].demand.to_dense()
        return float(np.abs(a - b).sum() / a.sum())

    assert change(same) < 0.05 < change(free)  # drift 0: counts resampled, popularity kept
    assert len(same) == 6 and same.phases[1].gap_before > 0
    with pytest.raises(InvalidInputError, match="drift"):
        moe_iteration(gpus=8, drift=1.5)
    assert moe_iteration(gpus=8, layers=2, gaps=0.0, rng=0).total_gap == 0.0


def test_coflow_sequence_gaps_follow_arrivals() -> None:
    it = coflow_sequence(count=5)
    assert it.n == 150 and it.gaps[0] == 0.0 and all(g >= 0 for g in it.gaps)
    with pytest.raises(InvalidInputError, match="count"):
        coflow_sequence(start=500, count=100)


def test_iteration_workload_registry() -> None:
    assert set(ITERATION_WORKLOADS) == {"gpt-iteration", "moe-iteration", "coflow-sequence"}
    assert len(generate_iteration("moe-iteration", gpus=8, layers=1, rng=0)) == 2
    with pytest.raises(InvalidInputError, match="unknown iteration workload"):
        generate_iteration("nope")
    with pytest.raises(InvalidInputError, match="no option 'layerz'"):
        generate_iteration("moe-iteration", layerz=3)


# --- files -----------------------------------------------------------------------------------------


def test_read_iteration_formats(tmp_path: Path) -> None:
    it = two_phase(0.3)
    write_iteration(it, tmp_path / "it.json")
    assert read_iteration(tmp_path / "it.json").gaps == (0.0, 0.3) and is_iteration(tmp_path / "it.json")
    np.save(tmp_path / "it.npy", np.stack([np.array(SWAP, float)] * 3))
    assert read_iteration(tmp_path / "it.npy", gaps=[0.0, 1.0, 2.0]).gaps == (0.0, 1.0, 2.0)
    folder = tmp_path / "phases"
    folder.mkdir()
    (folder / "b.csv").write_text("0,1\n1,0\n")
    (folder / "a.json").write_text(json.dumps([[0, 2], [0, 0]]))
    (folder / "gaps.csv").write_text("gap_before\n0.5\n0.25\n")
    got = read_iteration(folder)
    assert got.names == ("a", "b") and got.gaps == (0.5, 0.25) and is_iteration(folder)
    assert not is_iteration(tmp_path / "nothing.json")


def test_read_iteration_errors(tmp_path: Path) -> None:
    np.save(tmp_path / "flat.npy", np.zeros((2, 2)))
    with pytest.raises(InvalidInputError, match="K x n x n"):
        read_iteration(tmp_path / "flat.npy")
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a.csv").write_text("0,1\n1,0\n")
    (folder / "b.csv").write_text("0,1,1\n1,0,1\n1,1,0\n")
    with pytest.raises(InvalidInputError, match="same n"):
        read_iteration(folder)
    (folder / "b.csv").write_text("0,-1\n1,0\n")
    with pytest.raises(InvalidInputError, match="phase b"):
        read_iteration(folder)
    with pytest.raises(InvalidInputError, match="not found"):
        read_iteration(tmp_path / "missing.json")
    (tmp_path / "it.json").write_text(two_phase().to_json())
    with pytest.raises(InvalidInputError, match="carries its own gaps"):
        read_iteration(tmp_path / "it.json", gaps=1.0)


def test_write_and_read_iteration_schedule(tmp_path: Path) -> None:
    sched = schedule_iteration(two_phase(), switches=2, delta=0.1)
    path = write_iteration_schedule(sched, tmp_path / "s.json")
    assert read_iteration_schedule(path).makespan == sched.makespan
    with pytest.raises(InvalidInputError, match="exists"):
        write_iteration_schedule(sched, path)


def test_validation_lists_at_most_max_violations() -> None:
    it = two_phase()
    seq = schedule_iteration(it, switches=1, delta=0.5)
    early = IterationSchedule(
        seq.ports,
        seq.delta,
        tuple(tuple(Configuration(0.0, c.duration, c.perm) for c in sw) for sw in seq.switches),
        seq.phase_of,
        seq.gaps,
        seq.names,
    )
    full = validate_iteration(early, it, max_violations=100).violations
    short = validate_iteration(early, it, max_violations=1).violations
    assert len(full) > 1 and short[0] == full[0] and [v.kind for v in short[1:]] == ["truncated"]


def test_order_ends_with_the_piece_the_next_phase_can_keep_cheapest() -> None:
    from ocsched.model import Demand
    from ocsched.sequence._common import perm_key
    from ocsched.sequence.layout import order, reuse_cost

    a, b, c = np.array([1, 2, 0]), np.array([2, 0, 1]), np.array([1, 0, -1])
    nxt = Demand.from_matrix([[0, 5, 1], [1, 0, 1], [1, 1, 0]])
    cost = reuse_cost(nxt)
    assert (cost(a), cost(b), cost(c)) == (5.0, 1.0, 5.0)  # a's circuits carry 5, 1, 1 next; b's 1, 1, 1
    assert cost(np.array([-1, -1, 2])) == np.inf  # its one circuit carries nothing next
    pieces = [(c, 3.0), (a, 2.0), (b, 4.0)]
    got = [perm_key(p) for p, _ in order(pieces, perm_key(a), set(), cost)]
    assert got == [perm_key(a), perm_key(c), perm_key(b)]  # held first, cheapest to keep last
    assert [perm_key(p) for p, _ in order(pieces, None, set())][-1] == perm_key(a)  # else smallest last
    got = [perm_key(p) for p, _ in order(pieces, None, {perm_key(c)}, cost)]
    assert got[-1] == perm_key(c)  # a permutation the next phase uses still wins
