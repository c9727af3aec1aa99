"""Former scheduler names (``ALIASES``) keep working everywhere a scheduler is named.

``spectra-noeq`` became ``spectra-greedy`` and ``spectra-bff`` became ``spectra-partial``: the old
names are accepted by Python, the CLI, sweep configs, schedule files and the online path; what is
recorded is the current name, and sweep keys are those the old names had (old folders resume).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import run
from ocsched import Fabric, InvalidInputError, Iteration, Phase, Switch, schedule
from ocsched.model.failures import SwitchFailure
from ocsched.online import OnlineScheduler, plan
from ocsched.schedulers import ALIASES, SCHEDULERS, scheduler_name
from ocsched.sequence import schedule_iteration
from ocsched.sequence.reschedule import reschedule_iteration
from ocsched.workloads import generate

PARTIAL = Fabric((Switch(0.08),) * 3, model="partial")
D = generate("standard", rng=3, n=10, flows=3)


def test_aliases_name_current_schedulers() -> None:
    assert ALIASES == {"spectra-noeq": "spectra-greedy", "spectra-bff": "spectra-partial"}
    assert not set(ALIASES) & set(SCHEDULERS)  # a former name never shadows a scheduler
    assert set(ALIASES.values()) <= set(SCHEDULERS)
    for name in SCHEDULERS:
        assert scheduler_name(name) == name


@pytest.mark.parametrize("bad", ["spectra-nope", "", "SPECTRA", 3, None])
def test_unknown_names_are_refused_with_the_choices(bad: object) -> None:
    with pytest.raises(InvalidInputError, match=r"unknown base .*choose one of spectra, spectra-greedy"):
        scheduler_name(bad, "base")


@pytest.mark.parametrize(("old", "new"), list(ALIASES.items()))
def test_schedule_under_a_former_name_is_the_schedule_under_the_new(old: str, new: str) -> None:
    kw: dict[str, Any] = {"fabric": PARTIAL} if new == "spectra-partial" else {"switches": 4, "delta": 0.04}
    a, b = schedule(D, algorithm=old, rng=1, **kw), schedule(D, algorithm=new, rng=1, **kw)
    assert a.algorithm == b.algorithm == new
    assert a.same_as(b)


def test_cli_accepts_and_lists_former_names(tmp_path: Path) -> None:
    np.save(tmp_path / "d.npy", D)
    out = tmp_path / "s.json"
    res = run("schedule", tmp_path / "d.npy", "-s", "4", "-d", "0.04", "-a", "spectra-noeq", "-o", out)
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["algorithm"] == "spectra-greedy"
    listed = json.loads(run("algorithms", "--json").stdout)
    assert listed["aliases"] == ALIASES
    bad = run("schedule", tmp_path / "d.npy", "-a", "spectra-nope")
    assert bad.exit_code == 2 and "spectra-nope" in bad.output


def test_sweep_keys_are_those_of_the_former_names() -> None:
    """Keys computed by ocsched 2d2a190, before the rename: resuming an old folder skips its runs."""
    from ocsched.sweep import expand

    part = {"name": "partial", "model": "partial", "switches": [{"delta": 0.08, "count": 3}]}
    std = {"name": "standard", "seeds": 1, "options": {"n": 12}}
    moe = {"name": "moe-iteration", "seeds": 1, "options": {"gpus": 5, "layers": 1}}
    cfg = {
        "workloads": [
            {**std, "switches": 4, "delta": 0.04, "algorithms": ["spectra-noeq"]},
            {**std, "fabrics": [part], "algorithms": ["spectra-bff"]},
            {**moe, "fabrics": [part], "algorithms": ["independent:spectra-bff", "spectra-seq:spectra-bff"]},
            {**moe, "switches": 4, "delta": 0.04, "algorithms": ["independent:spectra-noeq"]},
        ]
    }
    got = [(r.algorithm, r.key) for r in expand(cfg)]
    assert got == [
        ("spectra-greedy", "70e14f3e15cb347d662ceb54"),
        ("spectra-partial", "71bfef7b00345bee1888df99"),
        ("independent:spectra-partial", "560097edb28dd8baef8bbd91"),
        ("spectra-seq:spectra-partial", "6a6251fbef5852a1b4a66b9a"),
        ("independent:spectra-greedy", "833c8a584eca0797b18b5588"),
    ]
    # The new names give the same runs.
    renamed = json.loads(json.dumps(cfg).replace("spectra-noeq", "spectra-greedy").replace("bff", "partial"))
    assert [(r.algorithm, r.key) for r in expand(renamed)] == got


def test_old_results_folder_resumes_and_reads_under_the_new_names(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from ocsched import sweep

    def cfg(name: str) -> dict[str, Any]:
        entry = {"name": "standard", "seeds": 2, "options": {"n": 8, "flows": 2}}
        return {"switches": 4, "delta": 0.04, "algorithms": [name, "spectra"], "workloads": [entry]}

    out = tmp_path / "r"
    assert sweep.run_sweep(cfg("spectra-greedy"), out, workers=1).done == 4
    # Rewrite the parts as the old version wrote them: the same keys, the former name.
    for part in sorted((out / "parts").glob("*.parquet")):
        table = pq.read_table(part)
        k = table.column_names.index("algorithm")
        old = [a.replace("spectra-greedy", "spectra-noeq") for a in table.column(k).to_pylist()]
        pq.write_table(table.set_column(k, table.field(k), pa.array(old, table.field(k).type)), part)
    assert "spectra-noeq" in {
        a for p in (out / "parts").glob("*.parquet") for a in pq.read_table(p).column("algorithm").to_pylist()
    }
    read = sweep.read_results(out)
    assert sorted(set(read.column("algorithm").to_pylist())) == ["spectra", "spectra-greedy"]
    summary = sweep.run_sweep(cfg("spectra-greedy"), out, workers=1)
    assert (summary.skipped, summary.done) == (4, 0)
    assert sweep.run_sweep(cfg("spectra-noeq"), out, workers=1).skipped == 4


def _iteration() -> Iteration:
    rng = np.random.default_rng(5)
    return Iteration(
        tuple(Phase(rng.uniform(0, 1, (4, 4)) * (1 - np.eye(4)), gap_before=0.1) for _ in range(3))
    )


def _body(sched: Any) -> dict[str, Any]:
    return {k: v for k, v in sched.to_dict().items() if k not in ("meta", "algorithm")}


def test_iteration_and_its_reschedule_read_former_base_names() -> None:
    it = _iteration()
    old = schedule_iteration(it, fabric=PARTIAL, base="spectra-bff", rng=0)
    new = schedule_iteration(it, fabric=PARTIAL, base="spectra-partial", rng=0)
    assert old.algorithm == new.algorithm == "spectra-seq/spectra-partial"
    assert old.makespan == new.makespan
    # A schedule file written before the rename names its base by the former name.
    greedy = schedule_iteration(it, switches=3, delta=0.05, base="spectra-greedy", rng=0)
    before = dataclasses.replace(greedy, algorithm="spectra-seq/spectra-noeq")
    fail = SwitchFailure(switch=0, at=greedy.makespan / 2)
    want = reschedule_iteration(greedy, it, fail)
    got = reschedule_iteration(before, it, fail)
    assert got.algorithm == want.algorithm == "spectra-seq/spectra-greedy"
    assert _body(got) == _body(want)
    # ... which matters: the default base would give another schedule.
    assert _body(reschedule_iteration(greedy, it, fail, base="spectra")) != _body(want)
    with pytest.raises(InvalidInputError, match="unknown base 'nope'"):
        reschedule_iteration(greedy, it, fail, base="nope")


def test_online_paths_take_former_names() -> None:
    a = np.asarray(D)
    assert plan(a, switches=4, delta=0.04, algorithm="spectra-noeq").algorithm == "spectra-greedy"
    assert OnlineScheduler(switches=4, delta=0.04, algorithm="spectra-noeq").algorithm == "spectra-greedy"
    with pytest.raises(InvalidInputError, match="unknown algorithm 'nope'"):
        plan(a, switches=4, delta=0.04, algorithm="nope")
