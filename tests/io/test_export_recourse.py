"""Recourse (model/recourse.py): circuits deleted plus added at every boundary, kept ones free."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ocsched.model import Configuration, Schedule
from ocsched.model.recourse import changes, recourse, switch_recourse


def _perm(draw: st.DrawFn, n: int) -> list[int]:
    outs = draw(st.permutations(range(n)))
    idle = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return [-1 if off else j for j, off in zip(outs, idle, strict=True)]


@settings(max_examples=60)
@given(st.data())
def test_changes_turn_one_matching_into_the_next(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 8))
    a = Configuration(0.5, 1.0, np.array(_perm(data.draw, n), np.int64))
    b = Configuration(2.0, 1.0, np.array(_perm(data.draw, n), np.int64))
    d = changes(a, b)
    state = set(a.circuits) - {tuple(x) for x in d.deleted.tolist()}
    assert not state & {tuple(x) for x in d.added.tolist()}  # a kept circuit is never re-added
    state |= {tuple(x) for x in d.added.tolist()}
    assert state == set(b.circuits)
    assert d.total == len(set(a.circuits) ^ set(b.circuits))


def test_recourse_counts_set_up_and_changes_not_tear_down() -> None:
    a = Configuration.from_circuits(0.5, 1.0, [(0, 1), (1, 0)], ports=3)
    b = Configuration.from_circuits(2.0, 1.0, [(0, 1), (1, 2)], ports=3)
    assert switch_recourse([a]) == 2
    assert switch_recourse([a, b]) == 2 + 2  # (1, 0) out, (1, 2) in; (0, 1) kept
    assert switch_recourse([a, a]) == 2
    assert recourse(Schedule(ports=3, delta=0.5, switches=((a, b), (), (b,)))) == 4 + 0 + 2
    assert changes(b, None).total == 2
