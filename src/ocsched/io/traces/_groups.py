"""Step 1 of :func:`~ocsched.io.traces._assemble.assemble`: the members of every process group.

:func:`_resolve_groups` gives each group its global ranks in group order, from a complete list
(the trace's or a ``comm_groups`` mapping) or from what each file says of itself, and refuses
a group that is inconsistent or has members without a trace file. The helpers that name a
group in messages, and the point-to-point kinds every later step sets apart, are here too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from ocsched.errors import InvalidInputError
from ocsched.io.traces._ops import ROOTED, CommOp, RankTrace

_P2P = ("send", "recv")


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
