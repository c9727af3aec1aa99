"""From per-rank records to phases: groups, matching across ranks, the checks, the order, the gaps.

Algorithm free of I/O: :func:`assemble` takes the :class:`~._ops.RankTrace` of every file and
returns :class:`PhaseSpec` objects holding byte matrices between ports. Steps 1 and 2 below are
:mod:`._groups`' and :mod:`._matching`'s, steps 3 and 4 :mod:`._ordering`'s; the gaps and the
ports are worked out here.

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

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched.errors import InvalidInputError
from ocsched.io.traces._groups import _resolve_groups
from ocsched.io.traces._matching import _match, _Matched
from ocsched.io.traces._ops import RankTrace
from ocsched.io.traces._ordering import _order, _phases

__all__ = ["CONCURRENT", "GAPS", "PhaseSpec", "assemble"]

#: How concurrent operations become phases.
CONCURRENT = ("merge", "separate")
#: Where gaps come from.
GAPS = ("auto", "timestamps", "comp", "none")


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


def _op_label(m: _Matched) -> str:
    if m.kind == "send":
        return f"send {m.ranks[0]}->{m.ranks[1]}"
    return m.kind + (f" pg={m.group}" if m.group else "") + (f" seq={m.seq}" if m.seq is not None else "")


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
