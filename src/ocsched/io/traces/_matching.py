"""Step 2 of :func:`~ocsched.io.traces._assemble.assemble`: matching operations across ranks.

:func:`_match` pairs a group's collectives across its members by sequence number (or, without
one, by their order in each rank's stream), checks that the members agree (kind, sizes, root,
group size, the ``all_to_allv`` splits) and turns each into global-rank traffic from cached
collective patterns; sends pair with receives by (source, destination, tag). Each match is a
:class:`_Matched`, with its per-rank times and the compute before it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.io.traces._collectives import collective_traffic
from ocsched.io.traces._groups import _P2P, _label, _world_key
from ocsched.io.traces._ops import ROOTED, CommOp, RankTrace

log = logging.getLogger("ocsched.io.traces")


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
    # Each rank's collectives by process group, in its order (one pass, not one per group).
    of_group: dict[int, dict[str, list[int]]] = {}
    for r, t in by_rank.items():
        mine: dict[str, list[int]] = defaultdict(list)
        for i, op in enumerate(t.ops):
            if op.kind not in _P2P:
                mine[_world_key(op.group)].append(i)
        of_group[r] = mine
    for g, ranks in members.items():
        lists = [of_group[r].get(g, []) for r in ranks]
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
