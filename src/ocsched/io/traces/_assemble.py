"""From per-rank records to phases: groups, matching across ranks, the checks, the order, the gaps.

Algorithm free of I/O: :func:`assemble` takes the :class:`~._ops.RankTrace` of every file and
returns :class:`PhaseSpec` objects holding byte matrices between ports.

1. **Ranks and groups.** Every file has one global rank. A process group's members (global
   ranks, in group order) come from a complete list (``Process Group Ranks``, ``pg_config``,
   the execution trace's process-group node, ``Global rank start/stride``, a
   ``comm_groups`` mapping), or else from the files themselves (each says its global rank and
   its rank in the group); an abbreviated list's visible part is checked against the result.
   A group whose members are not all in the trace is refused.
2. **Matching.** A group's collectives are matched across its members by sequence number
   (``Seq``); where a trace carries none, by their order in each rank's stream (logged as a
   warning). A sequence number seen on some members only, a collective that differs between
   members (kind, sizes, root, group size), or ``all_to_allv`` splits where rank i's ``In
   split size`` (what it sends) is not the transposed ``Out split size`` of its peers (what
   they receive) is refused, naming the files, ranks and sequence number. Sends and receives
   pair by (source, destination, tag) in order; their sizes must agree.
3. **Order.** Each rank's stream orders its operations; consecutive point-to-point operations,
   and operations a rank's own timestamps show overlapping, are unordered. A topological merge
   of the streams gives one order (earliest start, then group and sequence number, break ties).
4. **Phases.** ``concurrent="merge"`` (default) puts an operation into the current phase when
   no rank orders it after one of the phase's operations and, with timestamps, its time span
   overlaps the phase's; ``"separate"`` makes every operation its own phase.
5. **Gaps.** ``"timestamps"``: the compute before phase k is, for each of its ranks, the time
   from the end of that rank's previous operation to the start of its first one in phase k
   (rank-local differences: clocks of different hosts are never compared), and the gap is the
   largest over the ranks (the critical path across ranks). ``"comp"`` (Chakra): the largest
   COMP chain before the phase's operations (from the start, for the first phase). ``"none"``:
   0. With timestamps the first phase's gap is 0 (a profile starts at an arbitrary moment).
6. **Ports.** Ranks map to ports (identity, ``ranks_per_port``, or a mapping); traffic inside
   a port is local and dropped; a phase left without traffic is dropped and its gap carried
   into the next phase's.
"""

from __future__ import annotations

import heapq
import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.io.traces._collectives import collective_traffic
from ocsched.io.traces._ops import ROOTED, CommOp, RankTrace

__all__ = ["CONCURRENT", "GAPS", "PhaseSpec", "assemble"]

log = logging.getLogger("ocsched.io.traces")

#: How concurrent operations become phases.
CONCURRENT = ("merge", "separate")
#: Where gaps come from.
GAPS = ("auto", "timestamps", "comp", "none")
_P2P = ("send", "recv")


@dataclass(slots=True)
class _Matched:
    kind: str
    name: str
    group: str | None
    seq: int | None
    ranks: list[int]
    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    val: NDArray[np.float64]
    start: dict[int, float] = field(default_factory=dict)
    end: dict[int, float] = field(default_factory=dict)
    comp: float = 0.0


@dataclass(slots=True)
class PhaseSpec:
    """One phase: its byte matrix between ports (COO), its gap (µs), its name and provenance."""

    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    val: NDArray[np.float64]
    gap_us: float
    name: str
    ops: list[dict[str, Any]]
    local_bytes: float


def _world_key(group: str | None) -> str:
    return "" if group is None else group


def _label(group: str) -> str:
    return repr(group) if group else "(no process-group name: the whole trace)"


def _resolve_groups(
    traces: Sequence[RankTrace], comm_groups: Mapping[str, Sequence[int]] | None
) -> dict[str, list[int]]:
    """Members (global ranks, group order) of every process group the ops use."""
    file_of = {t.rank: t.file for t in traces}
    all_ranks = sorted(r for r in file_of if r is not None)
    known: dict[str, tuple[tuple[int, ...], str]] = {}
    sizes: dict[str, set[int]] = defaultdict(set)
    prefixes: dict[str, tuple[tuple[int, ...], str]] = {}

    def add(g: str, ranks: tuple[int, ...], source: str) -> None:
        if g in known and known[g][0] != ranks:
            raise InvalidInputError(
                f"process group {_label(g)} has ranks {list(known[g][0])} in {known[g][1]} but "
                f"{list(ranks)} in {source}"
            )
        known.setdefault(g, (ranks, source))

    if comm_groups:
        for g, ranks in comm_groups.items():
            add(str(g), tuple(int(r) for r in ranks), "the comm_groups mapping")
    for t in traces:
        for g, info in t.groups.items():
            if info.ranks is not None:
                add(g, info.ranks, t.file)
            if info.size:
                sizes[g].add(info.size)
            if info.prefix:
                prefixes[g] = (info.prefix, t.file)
        for op in t.ops:
            key = _world_key(op.group)
            if op.group_ranks is not None and known.get(key, (None,))[0] != op.group_ranks:
                add(key, op.group_ranks, op.where)
            if op.group_size:
                sizes[key].add(op.group_size)
    # What each file says of itself: (group, group rank) -> global rank.
    reports: dict[str, dict[int, tuple[int, CommOp]]] = defaultdict(dict)
    mine: dict[tuple[str, int], tuple[int, CommOp]] = {}
    used: set[str] = set()
    for t in traces:
        for op in t.ops:
            key = _world_key(op.group)
            used.add(key)
            if op.kind in ROOTED or op.kind in _P2P or op.group_rank is None or t.rank is None:
                continue
            seen = reports[key].get(op.group_rank)
            if seen is not None and seen[0] == t.rank:
                continue
            if seen is not None:
                raise InvalidInputError(
                    f"process group {_label(key)}: group rank {op.group_rank} is rank {seen[0]} in "
                    f"{seen[1].where} "
                    f"but rank {t.rank} in {op.where}"
                )
            reports[key][op.group_rank] = (t.rank, op)
            # One file is one rank: it must name one group rank in each group.
            own = mine.setdefault((key, t.rank), (op.group_rank, op))
            if own[0] != op.group_rank:
                raise InvalidInputError(
                    f"process group {_label(key)}: rank {t.rank} is group rank {own[0]} in "
                    f"{own[1].where} but "
                    f"{op.group_rank} in {op.where}"
                )
    members: dict[str, list[int]] = {}
    for g in sorted(used):
        if g in known:
            ranks = list(known[g][0])
        elif g == "":
            ranks = all_ranks
        elif g in reports and sizes.get(g):
            size = max(sizes[g])
            have = reports[g]
            missing = [k for k in range(size) if k not in have]
            if missing:
                raise InvalidInputError(
                    f"process group {_label(g)} has {size} ranks, but no trace file is group rank "
                    f"{missing[0]}{' (and ' + str(len(missing) - 1) + ' more)' if len(missing) > 1 else ''}: "
                    f"the trace has files for ranks {all_ranks[:16]}{'...' if len(all_ranks) > 16 else ''}; "
                    "give every rank's file, or the group's ranks with --comm-groups"
                )
            ranks = [have[k][0] for k in range(size)]
        else:
            raise InvalidInputError(
                f"process group {_label(g)}: the trace says neither its ranks nor its size; "
                "give them with --comm-groups"
            )
        if len(set(ranks)) != len(ranks):
            raise InvalidInputError(f"process group {_label(g)} lists a rank twice: {ranks}")
        for k, (rank, said) in reports.get(g, {}).items():
            if k >= len(ranks) or ranks[k] != rank:
                raise InvalidInputError(
                    f"{said.where}: rank {rank} says it is group rank {k} of process group {_label(g)}, "
                    "whose ranks "
                    f"are {ranks}"
                )
        for size in sizes.get(g, ()):
            if size != len(ranks):
                raise InvalidInputError(
                    f"process group {_label(g)}: group size {size} in the trace but {len(ranks)} "
                    f"ranks {ranks}"
                )
        if g in prefixes:
            prefix, where = prefixes[g]
            if tuple(ranks[: len(prefix)]) != prefix:
                raise InvalidInputError(
                    f"{where}: the abbreviated ranks of process group {_label(g)} start {list(prefix)}, "
                    f"but its members are {ranks}"
                )
        absent = [r for r in ranks if r not in file_of]
        if absent:
            raise InvalidInputError(
                f"process group {_label(g)} (ranks {ranks[:16]}{'...' if len(ranks) > 16 else ''}) "
                "includes rank "
                f"{absent[0]}, which has no trace file (the trace has ranks {all_ranks[:16]}"
                f"{'...' if len(all_ranks) > 16 else ''})"
            )
        members[g] = ranks
    return members


class _Templates:
    """Cached collective patterns: group-rank (src, dst, coefficient) arrays per (kind, G, root)."""

    def __init__(self, algorithm: str) -> None:
        self.algorithm = algorithm
        self.cache: dict[
            tuple[str, int, int], tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]
        ] = {}

    def get(
        self, kind: str, g: int, root: int, where: str
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        key = (kind, g, root)
        if key not in self.cache:
            trip = collective_traffic(kind, g, Fraction(1), algorithm=self.algorithm, root=root, where=where)
            src = np.array([t[0] for t in trip], dtype=np.int64)
            dst = np.array([t[1] for t in trip], dtype=np.int64)
            coef = np.array([float(t[2]) for t in trip], dtype=np.float64)
            self.cache[key] = (src, dst, coef)
        return self.cache[key]


def _describe(op: CommOp) -> str:
    return op.where


def _same(values: list[tuple[Any, CommOp]], what: str, g: str, seq: Any) -> Any:
    first = values[0]
    for v in values[1:]:
        if v[0] != first[0]:
            raise InvalidInputError(
                f"collective {first[1].name!r} (seq {seq}) of process group {_label(g)} has {what} "
                f"{first[0]} in "
                f"{_describe(first[1])} but {v[0]} in {_describe(v[1])}"
            )
    return first[0]


def _all_to_all(
    ops: list[CommOp], members: list[int], g: str, seq: Any
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    size = len(members)
    sent = np.zeros((size, size), dtype=np.float64)
    received = np.zeros((size, size), dtype=np.float64)
    for i, op in enumerate(ops):
        total = op.in_bytes or 0
        if op.uniform_all_to_all or not op.in_split:
            if total % size:
                raise InvalidInputError(
                    f"{op.where}: all-to-all of {total} bytes without splits does not divide evenly over "
                    f"{size} ranks"
                )
            sent[i, :] = total // size
        else:
            if len(op.in_split) != size:
                raise InvalidInputError(
                    f"{op.where}: 'In split size' has {len(op.in_split)} entries for a group of {size} ranks "
                    "(a truncated list?)"
                )
            rows = sum(op.in_split)
            if rows == 0:
                sent[i, :] = 0
            else:
                if total % rows:
                    raise InvalidInputError(
                        f"{op.where}: the input's {total} bytes are not a whole number of rows of the "
                        f"{rows} rows its splits count"
                    )
                sent[i, :] = np.asarray(op.in_split, dtype=np.float64) * (total // rows)
        out_total = op.out_bytes
        if op.uniform_all_to_all or out_total is None:
            received[i, :] = np.nan  # nothing to check against
        elif not op.out_split:
            if out_total % size:
                raise InvalidInputError(
                    f"{op.where}: all-to-all output of {out_total} bytes does not divide evenly over "
                    f"{size} ranks"
                )
            received[i, :] = out_total // size
        else:
            if len(op.out_split) != size:
                raise InvalidInputError(
                    f"{op.where}: 'Out split size' has {len(op.out_split)} entries for a group of "
                    f"{size} ranks"
                )
            rows = sum(op.out_split)
            if rows and out_total % rows:
                raise InvalidInputError(
                    f"{op.where}: the output's {out_total} bytes are not a whole number of rows of the "
                    f"{rows} rows its splits count"
                )
            received[i, :] = np.asarray(op.out_split, dtype=np.float64) * (out_total // rows if rows else 0)
    # Invariant: what i sends j (row i of `sent`) is what j receives from i (column i of `received`).
    check = ~np.isnan(received.T)
    bad = np.argwhere(check & (sent != received.T))
    if bad.size:
        i, j = (int(x) for x in bad[0])
        raise InvalidInputError(
            f"all_to_allv (seq {seq}) of process group {_label(g)}: rank {members[i]} sends "
            f"{sent[i, j]:.0f} bytes "
            f"to rank {members[j]} ({ops[i].where}, 'In split size'), but rank {members[j]} receives "
            f"{received[j, i]:.0f} from it ({ops[j].where}, 'Out split size')"
        )
    np.fill_diagonal(sent, 0.0)
    src, dst = np.nonzero(sent)
    return src.astype(np.int64), dst.astype(np.int64), sent[src, dst]


def _collective(
    ops: list[CommOp], members: list[int], g: str, seq: Any, templates: _Templates
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    kind = ops[0].kind
    size = len(members)
    first = ops[0]
    _same([(op.group_size or size, op) for op in ops], "group size", g, seq)
    if kind == "all_to_all":
        return _all_to_all(ops, members, g, seq)
    root = 0
    if kind in ROOTED:
        if not all(op.root_known for op in ops):
            raise InvalidInputError(
                f"{first.where}: {first.name} names no root, so its traffic is unknown; drop these "
                f"collectives with --skip {kind} (skip=('{kind}',))"
            )
        got = _same([(op.group_rank, op) for op in ops], "root", g, seq)
        if got is None or not 0 <= got < size:
            raise InvalidInputError(
                f"{first.where}: {first.name} has root {got}, not a rank of its {size}-rank group"
            )
        root = got
    if kind == "scatter":
        amount = _same(
            [(op.out_bytes, op) for k, op in enumerate(ops) if k != root] or [(0, first)], "size", g, seq
        )
    elif kind == "gather":
        amount = _same(
            [(op.in_bytes, op) for k, op in enumerate(ops) if k != root] or [(0, first)], "size", g, seq
        )
    else:
        amount = _same([(op.in_bytes, op) for op in ops], "size", g, seq)
    if amount is None:
        raise InvalidInputError(f"{first.where}: {first.name} gives no message size")
    src, dst, coef = templates.get(kind, size, root, first.where)
    return src, dst, coef * float(amount)


def _timing(m: _Matched, op: CommOp, rank: int) -> None:
    ts = op.ts
    if ts is not None:
        end = ts + (op.dur or 0.0)
        if rank in m.start:
            m.start[rank] = min(m.start[rank], ts)
            m.end[rank] = max(m.end[rank], end)
        else:
            m.start[rank], m.end[rank] = ts, end
    if op.comp_before > m.comp:
        m.comp = op.comp_before


def _match(
    traces: Sequence[RankTrace], members: dict[str, list[int]], algorithm: str, notes: list[str]
) -> tuple[list[_Matched], dict[int, list[int]], dict[str, str]]:
    """Match every op across ranks; return the matched ops and, per rank, its ops' ids in order."""
    by_rank = {t.rank: t for t in traces if t.rank is not None}
    slots: dict[int, list[int]] = {r: [-1] * len(t.ops) for r, t in by_rank.items()}
    matched: list[_Matched] = []
    matching: dict[str, str] = {}
    templates = _Templates(algorithm)
    for g, ranks in members.items():
        lists = []
        for r in ranks:
            idx = [
                i for i, op in enumerate(by_rank[r].ops) if _world_key(op.group) == g and op.kind not in _P2P
            ]
            lists.append(idx)
        if not any(lists):
            continue
        with_seq = all(
            by_rank[r].ops[i].seq is not None for r, idx in zip(ranks, lists, strict=True) for i in idx
        )
        keyed: list[dict[Any, int]] = []
        if with_seq:
            matching[g] = "seq"
            for r, idx in zip(ranks, lists, strict=True):
                d: dict[Any, int] = {}
                for i in idx:
                    s = by_rank[r].ops[i].seq
                    if s in d:
                        raise InvalidInputError(
                            f"{by_rank[r].ops[i].where}: seq {s} of process group {_label(g)} "
                            f"appears twice in rank {r}"
                        )
                    d[s] = i
                keyed.append(d)
        else:
            matching[g] = "order"
            keyed = [{k: i for k, i in enumerate(idx)} for idx in lists]
        keys = sorted(set().union(*keyed), key=lambda k: (k is None, k))
        for key in keys:
            for r, d in zip(ranks, keyed, strict=True):
                if key not in d:
                    other = next(rr for rr, dd in zip(ranks, keyed, strict=True) if key in dd)
                    op = by_rank[other].ops[keyed[ranks.index(other)][key]]
                    what = f"seq {key}" if with_seq else f"collective number {key + 1}"
                    raise InvalidInputError(
                        f"{what} of process group {_label(g)} ({op.name}) is in {op.where} (rank {other}) "
                        f"but not in {by_rank[r].file} (rank {r})"
                    )
            ops = [by_rank[r].ops[d[key]] for r, d in zip(ranks, keyed, strict=True)]
            seq = key if with_seq else None
            _same([(op.kind, op) for op in ops], "kind", g, key)
            src, dst, val = _collective(ops, ranks, g, key, templates)
            gl = np.asarray(ranks, dtype=np.int64)
            m = _Matched(ops[0].kind, ops[0].name, g, seq, list(ranks), gl[src], gl[dst], val)
            mid = len(matched)
            matched.append(m)
            for r, d, op in zip(ranks, keyed, ops, strict=True):
                slots[r][d[key]] = mid
                _timing(m, op, r)
    by_order = [g for g, how in matching.items() if how == "order"]
    if by_order:
        msg = (
            "the trace has no sequence numbers (Seq) for process group(s) "
            f"{', '.join(_label(g) for g in by_order[:5])}"
            f"{' ...' if len(by_order) > 5 else ''}: their collectives are matched across ranks by "
            "their order"
        )
        log.warning(msg)
        notes.append(msg)
    # Point to point: the k-th send a -> b (tag t) is the k-th receive at b from a (tag t).
    sends: dict[tuple[int, int, Any], list[tuple[int, int]]] = defaultdict(list)
    recvs: dict[tuple[int, int, Any], list[tuple[int, int]]] = defaultdict(list)
    for r, t in by_rank.items():
        for i, op in enumerate(t.ops):
            if op.kind not in _P2P:
                continue
            peer = op.peer
            if peer is None and op.group_rank is not None:
                group = members.get(_world_key(op.group))
                if group is not None and 0 <= op.group_rank < len(group):
                    peer = group[op.group_rank]
            if peer is None:
                raise InvalidInputError(f"{op.where}: {op.kind} names no peer rank")
            if peer not in by_rank:
                raise InvalidInputError(f"{op.where}: {op.kind} with rank {peer}, which has no trace file")
            key = (r, peer, op.tag) if op.kind == "send" else (peer, r, op.tag)
            (sends if op.kind == "send" else recvs)[key].append((r, i))
    for key in sorted(set(sends) | set(recvs), key=lambda k: (k[0], k[1], k[2] is None, k[2] or 0)):
        s_list, r_list = sends.get(key, []), recvs.get(key, [])
        if len(s_list) != len(r_list):
            a, b, tag = key
            have, lack = (s_list, "receive") if len(s_list) > len(r_list) else (r_list, "send")
            extra = have[min(len(s_list), len(r_list))]
            op = by_rank[extra[0]].ops[extra[1]]
            raise InvalidInputError(
                f"{op.where}: {op.kind} between rank {a} and rank "
                f"{b}{'' if tag is None else f' (tag {tag})'} has no "
                f"matching {lack} in {by_rank[b if lack == 'receive' else a].file}"
            )
        for (ra, ia), (rb, ib) in zip(s_list, r_list, strict=True):
            so, ro = by_rank[ra].ops[ia], by_rank[rb].ops[ib]
            sb = so.in_bytes if so.in_bytes is not None else so.out_bytes
            rbytes = ro.out_bytes if ro.out_bytes is not None else ro.in_bytes
            if sb is None or (rbytes is not None and sb != rbytes):
                raise InvalidInputError(
                    f"send of {sb} bytes ({so.where}) and receive of {rbytes} bytes ({ro.where}) do not match"
                )
            m = _Matched(
                "send",
                "send/recv",
                so.group,
                None,
                [ra, rb],
                np.array([ra], dtype=np.int64),
                np.array([rb], dtype=np.int64),
                np.array([float(sb)], dtype=np.float64),
            )
            mid = len(matched)
            matched.append(m)
            slots[ra][ia] = mid
            slots[rb][ib] = mid
            _timing(m, so, ra)
            _timing(m, ro, rb)
    order = {r: s for r, s in slots.items()}
    return matched, order, matching


def _op_label(m: _Matched) -> str:
    if m.kind == "send":
        return f"send {m.ranks[0]}->{m.ranks[1]}"
    return m.kind + (f" pg={m.group}" if m.group else "") + (f" seq={m.seq}" if m.seq is not None else "")


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


def assemble(
    traces: Sequence[RankTrace],
    *,
    algorithm: str,
    concurrent: str,
    gaps: str,
    port_of: NDArray[np.int64],
    comm_groups: Mapping[str, Sequence[int]] | None = None,
    skip: frozenset[str] = frozenset(),
) -> tuple[list[PhaseSpec], dict[str, Any]]:
    """Turn per-rank records into phases between ports; return them and the provenance.

    ``port_of[rank]`` is the port of each global rank.

    Raises
    ------
    InvalidInputError
        On any inconsistency across ranks (see the module's notes); messages name the file,
        rank and sequence number.
    """
    notes: list[str] = [n for t in traces for n in t.notes]
    dropped: dict[str, int] = defaultdict(int)
    for t in traces:
        kept = []
        for op in t.ops:
            if op.kind in skip:
                dropped[op.kind] += 1
            else:
                kept.append(op)
        t.ops = kept
    members = _resolve_groups(traces, comm_groups)
    matched, slots, matching = _match(traces, members, algorithm, notes)
    if not matched:
        raise InvalidInputError("`trace` has no communication: no collective or send/recv in its files")
    timed = all(m.start for m in matched)
    mode = gaps
    if gaps == "auto":
        timings = {t.timing for t in traces}
        mode = "comp" if timings == {"comp"} else ("timestamps" if timed else "none")
    if mode == "timestamps" and not timed:
        raise InvalidInputError(
            "`gaps` = 'timestamps' but the trace's operations carry no timestamps (use gaps='none' or 'comp')"
        )
    order, level_of = _order(matched, slots, traces)
    groups = _phases(order, matched, level_of, concurrent)
    prev_end: dict[int, float] = {}
    specs: list[PhaseSpec] = []
    carried = 0.0
    for k, ids in enumerate(groups):
        ms = [matched[i] for i in ids]
        gap = 0.0
        if mode == "timestamps":
            starts: dict[int, float] = {}
            ends: dict[int, float] = {}
            for m in ms:
                for r, s in m.start.items():
                    starts[r] = min(starts.get(r, s), s)
                    ends[r] = max(ends.get(r, m.end[r]), m.end[r])
            gap = max([starts[r] - prev_end[r] for r in starts if r in prev_end] + [0.0])
            prev_end.update(ends)
        elif mode == "comp":
            gap = max([m.comp for m in ms] + [0.0])
        src = np.concatenate([port_of[m.src] for m in ms])
        dst = np.concatenate([port_of[m.dst] for m in ms])
        val = np.concatenate([m.val for m in ms])
        local = src == dst
        local_bytes = float(val[local].sum())
        src, dst, val = src[~local], dst[~local], val[~local]
        info = [
            {
                "collective": m.name,
                "kind": m.kind,
                "group": m.group,
                "seq": m.seq,
                "ranks": len(m.ranks),
                "bytes": float(m.val.sum()),
            }
            for m in ms
        ]
        labels = sorted({_op_label(m) for m in ms})
        name = " + ".join(labels[:3]) + (f" (+{len(labels) - 3} more)" if len(labels) > 3 else "")
        if not val.size or not val.any():
            carried += gap
            notes.append(f"phase {k} ({name}) has no traffic between ports: dropped, its gap carried on")
            continue
        specs.append(PhaseSpec(src, dst, val, gap + carried, name, info, local_bytes))
        carried = 0.0
    meta = {
        "gaps": mode,
        "concurrent": concurrent,
        "collective_algorithm": algorithm,
        "matching": matching,
        "groups": {g or "(world)": r for g, r in members.items()},
        "skipped": dict(dropped),
        "notes": notes,
        "operations": len(matched),
    }
    return specs, meta
