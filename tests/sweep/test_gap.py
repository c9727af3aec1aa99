"""Tests of ocsched.sweep.gap and the `ocsched gap` command."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import run
from ocsched import InvalidInputError
from ocsched.exact import solve_exact
from ocsched.model import Demand
from ocsched.schedulers import schedule
from ocsched.sweep.gap import GapProgress, run_gap
from ocsched.workloads import WORKLOADS, Workload
from ocsched.workloads.random import random_instance

pytest.importorskip("highspy")


def test_run_gap_matches_direct_solves() -> None:
    seen: list[GapProgress] = []
    rep = run_gap(
        "random",
        n=3,
        switches=[2],
        deltas=[0.05],
        samples=2,
        seed=4,
        algorithms=["spectra"],
        progress=seen.append,
    )
    assert [p.done for p in seen] == [0, 1, 2] and seen[-1].total == 2
    assert seen[0].eta_s is None and seen[-1].eta_s == 0.0
    (row,) = rep.rows
    want = []
    for k in range(2):
        dem = Demand.from_matrix(random_instance(3, density=0.5, rng=4 + k))
        res = solve_exact(dem, switches=2, delta=0.05, time_limit=60.0)
        want.append(schedule(dem, switches=2, delta=0.05, algorithm="spectra", rng=4).makespan / res.makespan)
    assert row.ratios["spectra"] == pytest.approx(want, rel=1e-9)
    assert rep.total.optimal == row.optimal == 2
    assert "spectra" in rep.text().splitlines()[1]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"workload": "random", "n": 1}, r"`n` must be an integer in 2..32; got 1"),
        ({"workload": "random", "n": 10**6}, r"`n` must be an integer in 2..32; got 1000000"),
        ({"workload": "random", "n": 3, "samples": 0}, "`samples` must be an integer >= 1"),
        ({"workload": "random", "n": 3, "options": {"flows": 2}}, "takes no options"),
        ({"workload": "nope", "n": 3}, "`workload` must be one of random, "),
        ({"workload": "random", "n": 3, "algorithms": ["exact"]}, "`algorithms` must be one of"),
        ({"workload": "random", "n": 3, "time_limit": 0}, "`time_limit` must be a finite number > 0"),
        ({"workload": "standard", "n": 3, "options": {"disjoint": "maybe"}}, "disjoint"),
    ],
)
def test_run_gap_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        run_gap(samples=kwargs.pop("samples", 1), **kwargs)  # type: ignore[arg-type]


def test_gap_command_prints_table() -> None:
    r = run(
        "gap", "--workload", "random", "--n", "3", "--samples", "2", "--switches", "1,2", "--delta", "0.05"
    )
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    header = next(line for line in lines if "exact/LB" in line)
    names = header.split()
    # Every heuristic has two columns: h/exact and h/LB (the best bound), side by side.
    assert names.index("spectra/LB") == names.index("spectra/exact") + 1
    assert "spectra-greedy/exact" in names and "spectra-pack/LB" in names
    rows = [line.split() for line in lines if line.split()[:1] in (["1"], ["2"], ["all"])]
    assert [row[0] for row in rows] == ["1", "2", "all"]
    # Every cell is mean/max with mean <= max; exact/LB >= 1 and spectra/exact >= 1 - RTOL.
    for row in rows:
        for cell in row[-len(header.split()[3:]) :]:
            mean, top = (float(x) for x in cell.split("/"))
            assert 1 - 1e-4 <= mean <= top + 1e-12
    # Not a terminal: progress as plain lines on stderr, never on stdout.
    assert "gap: exact solves: 0/4" in r.stderr and "gap: exact solves: 4/4" in r.stderr
    assert "exact solves" not in r.stdout


def test_gap_command_standard_with_option() -> None:
    r = run(
        "gap",
        "-w",
        "standard",
        "--n",
        "4",
        "-k",
        "1",
        "-s",
        "2",
        "-d",
        "0.04",
        "--option",
        "flows=3",
        "-a",
        "spectra",
    )
    assert r.exit_code == 0, r.output
    assert "spectra" in r.stdout and "spectra-greedy" not in r.stdout


def test_gap_command_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        WORKLOADS, "nosize", Workload("nosize", lambda *, rng=None: np.ones((2, 2)), "time", "x", ())
    )
    cases = [
        (["--workload", "nosize", "--n", "3"], "no `n` option"),
        (["--workload", "nope", "--n", "3"], "'nope'"),
        (["--workload", "standard", "--n", "3", "--option", "colour=3"], "no option 'colour'"),
        (["--workload", "standard", "--n", "3", "--option", "disjoint=maybe"], "disjoint"),
        (["--workload", "random", "--n", "3", "--samples", "0"], "--samples"),
        (["--workload", "random", "--n", "3", "-a", "nope"], "'nope'"),
        (["--workload", "random", "--n", "3", "-s", "1,x"], "--switches"),
    ]
    for args, msg in cases:
        r = run("gap", *args)
        assert r.exit_code == 2, (args, r.output)
        assert msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
        assert "Traceback" not in r.output


def test_gap_uses_a_node_limit_and_no_clock_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    import ocsched.sweep.gap as gap

    seen: list[tuple[object, object]] = []
    real = gap.solve_exact

    def spy(*args: object, **kwargs: object) -> object:
        seen.append((kwargs.get("time_limit"), kwargs.get("node_limit")))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gap, "solve_exact", spy)
    rep = gap.run_gap("random", n=3, switches=[1], deltas=[0.05], samples=1, algorithms=["spectra"])
    assert seen == [(None, gap.DEFAULT_NODE_LIMIT)]
    assert "1000 branch-and-bound nodes per solve" in rep.text() and "time limit" not in rep.text()
    res = run(
        "gap",
        "-w",
        "random",
        "--n",
        "3",
        "--switches",
        "1",
        "--delta",
        "0.05",
        "--samples",
        "1",
        "--node-limit",
        "50",
    )
    assert res.exit_code == 0, res.stderr
    assert seen[-1] == (None, 50) and "50 branch-and-bound nodes" in res.stdout
    res = run(
        "gap",
        "-w",
        "random",
        "--n",
        "3",
        "--switches",
        "1",
        "--delta",
        "0.05",
        "--samples",
        "1",
        "--time-limit",
        "30",
    )
    assert (
        res.exit_code == 0 and seen[-1] == (30.0, gap.DEFAULT_NODE_LIMIT) and "time limit 30 s" in res.stdout
    )
