"""Steps 3 and 4 of :func:`~ocsched.io.traces._assemble.assemble`: the order, then the phases.

:func:`_order` merges the ranks' streams topologically into one order of the matched
operations (consecutive point-to-point operations, and those a rank's timestamps show
overlapping, share a level and are unordered there), refusing orders that deadlock;
:func:`_phases` cuts that order into phases, merging operations no rank orders (and, with
timestamps, overlapping in time) when ``concurrent="merge"``.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from ocsched.errors import InvalidInputError
from ocsched.io.traces._groups import _P2P, _label
from ocsched.io.traces._matching import _Matched
from ocsched.io.traces._ops import CommOp, RankTrace


def _levels(trace: RankTrace) -> list[int]:
    """Each op's level in one rank's stream: p2p runs and overlapping ops share a level."""
    levels: list[int] = []
    level = -1
    prev: CommOp | None = None
    for op in trace.ops:
        same = prev is not None and (
            (prev.kind in _P2P and op.kind in _P2P)
            or (prev.ts is not None and op.ts is not None and op.ts < prev.ts + (prev.dur or 0.0))
        )
        if not same:
            level += 1
        levels.append(level)
        prev = op
    return levels


def _order(
    matched: list[_Matched], slots: dict[int, list[int]], traces: Sequence[RankTrace]
) -> tuple[list[int], dict[int, dict[int, int]]]:
    """A total order of the matched ops consistent with every rank's stream; each op's level per rank."""
    by_rank = {t.rank: t for t in traces if t.rank is not None}
    level_of: dict[int, dict[int, int]] = defaultdict(dict)  # op -> rank -> level
    per_rank_levels: dict[int, list[list[int]]] = {}
    for r, ops_of in slots.items():
        lv = _levels(by_rank[r])
        groups: list[list[int]] = []
        for mid, lev in zip(ops_of, lv, strict=True):
            if lev == len(groups):
                groups.append([])
            groups[lev].append(mid)
            level_of[mid][r] = lev
        per_rank_levels[r] = groups
    done_level = {r: -1 for r in slots}  # highest level fully done on each rank
    pending = {r: [len(g) for g in groups] for r, groups in per_rank_levels.items()}
    # Invariant: waiting[op] = how many of its ranks have not yet reached the op's level there.
    waiting = [len(level_of[mid]) for mid in range(len(matched))]
    order: list[int] = []
    done = [False] * len(matched)

    def key(mid: int) -> tuple[float, str, int, int]:
        m = matched[mid]
        start = min(m.start.values()) if m.start else 0.0
        return (start, m.group or "", m.seq if m.seq is not None else -1, mid)

    heap: list[tuple[tuple[float, str, int, int], int]] = []

    def reach(r: int, level: int) -> None:
        if level < len(per_rank_levels[r]):
            for cand in per_rank_levels[r][level]:
                waiting[cand] -= 1
                if waiting[cand] == 0:
                    heapq.heappush(heap, (key(cand), cand))

    for r in per_rank_levels:
        reach(r, 0)
    while heap:
        _, mid = heapq.heappop(heap)
        done[mid] = True
        order.append(mid)
        for r, lev in level_of[mid].items():
            pending[r][lev] -= 1
            while done_level[r] + 1 < len(pending[r]) and pending[r][done_level[r] + 1] == 0:
                done_level[r] += 1
                reach(r, done_level[r] + 1)
    if len(order) != len(matched):
        stuck = next(mid for mid in range(len(matched)) if not done[mid])
        m = matched[stuck]
        raise InvalidInputError(
            f"the ranks order their collectives inconsistently (a deadlock): {m.name} of process group "
            f"{_label(m.group or '')} (seq {m.seq}) waits on ranks {sorted(m.ranks)[:8]} for operations that "
            "wait on it"
        )
    return order, level_of


def _phases(
    order: list[int], matched: list[_Matched], level_of: dict[int, dict[int, int]], concurrent: str
) -> list[list[int]]:
    phases: list[list[int]] = []
    current: list[int] = []
    lowest: dict[int, int] = {}  # rank -> lowest level of the current phase's ops on that rank
    span = [np.inf, -np.inf]
    for mid in order:
        m = matched[mid]
        joins = bool(current) and concurrent == "merge"
        if joins:
            # Not after any op of the phase on a shared rank (same level = unordered there).
            joins = all(lev <= lowest[r] for r, lev in level_of[mid].items() if r in lowest)
        if joins and m.start and np.isfinite(span[0]):
            starts = [m.start[r] for r in m.start]
            ends = [m.end[r] for r in m.end]
            disjoint = not (set(level_of[mid]) & set(lowest))
            if disjoint and (min(starts) >= span[1] or max(ends) <= span[0]):
                joins = False
        if not joins:
            if current:
                phases.append(current)
            current, lowest, span = [], {}, [np.inf, -np.inf]
        current.append(mid)
        for r, lev in level_of[mid].items():
            lowest[r] = min(lowest.get(r, lev), lev)
        if m.start:
            span = [min(span[0], *m.start.values()), max(span[1], *m.end.values())]
    if current:
        phases.append(current)
    return phases
