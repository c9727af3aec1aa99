"""Traces of known traffic, in every format: for tests, benchmarks, and simulators' inputs.

Describe the operations globally (:func:`all_to_allv`, :func:`collective`, :func:`send`), then
:func:`write` gives every rank its file in the chosen format, as PyTorch or Chakra would have
recorded it: the same operation once per participating rank, with its group, sequence number,
sizes, splits and times. Reading the result back with :func:`ocsched.io.read_trace` must give
the traffic the operations describe (the round-trip tests do exactly that). Files are written
event by event, so a trace of any size takes little memory (``filler`` compute events make big
files for the benchmarks).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ocsched.errors import InvalidInputError
from ocsched.io.traces._synthetic_formats import _KINETO_NAMES, _write_chakra, _write_et, _write_kineto

__all__ = ["SyntheticOp", "all_to_allv", "collective", "send", "write"]


@dataclass
class SyntheticOp:
    """One operation of a synthetic trace (build it with the functions below)."""

    kind: str
    ranks: list[int]  # the group's global ranks, in group order (for send: [src, dst])
    nbytes: int = 0  # bytes per rank (all-reduce ...), the chunk (all-gather), or the message (send)
    rows: list[list[int]] | None = None  # all_to_allv: rows[i][j] = rows group rank i sends to j
    row_bytes: int = 0
    root: int = 0
    group: str | None = None  # process-group name (default: one per distinct rank list)
    gap_us: float = 0.0  # compute before it (µs)
    dur_us: float = 10.0
    dtype: str = "Float"
    parallel: bool = False  # starts with the previous op (a concurrent collective on other ranks)


def all_to_allv(
    rows: Sequence[Sequence[int]],
    *,
    row_bytes: int,
    ranks: Sequence[int] | None = None,
    group: str | None = None,
    gap_us: float = 0.0,
    dur_us: float = 10.0,
    dtype: str = "BFloat16",
    parallel: bool = False,
) -> SyntheticOp:
    """An all-to-allv: ``rows[i][j]`` rows of ``row_bytes`` bytes from group rank i to j."""
    g = len(rows)
    if any(len(r) != g for r in rows):
        raise InvalidInputError("`rows` must be a square matrix")
    return SyntheticOp(
        "all_to_all",
        list(range(g)) if ranks is None else list(ranks),
        rows=[list(r) for r in rows],
        row_bytes=row_bytes,
        group=group,
        gap_us=gap_us,
        dur_us=dur_us,
        dtype=dtype,
        parallel=parallel,
    )


def collective(
    kind: str,
    nbytes: int,
    *,
    ranks: Sequence[int],
    root: int = 0,
    group: str | None = None,
    gap_us: float = 0.0,
    dur_us: float = 10.0,
    dtype: str = "Float",
    parallel: bool = False,
) -> SyntheticOp:
    """An all-reduce, all-gather, reduce-scatter, broadcast, reduce, gather or scatter on ``ranks``."""
    if kind not in _KINETO_NAMES or kind == "all_to_all":
        raise InvalidInputError(
            f"`kind` must be one of {', '.join(k for k in _KINETO_NAMES if k != 'all_to_all')}"
        )
    return SyntheticOp(
        kind,
        list(ranks),
        nbytes=nbytes,
        root=root,
        group=group,
        gap_us=gap_us,
        dur_us=dur_us,
        dtype=dtype,
        parallel=parallel,
    )


def send(
    src: int, dst: int, nbytes: int, *, gap_us: float = 0.0, dur_us: float = 10.0, group: str | None = None
) -> SyntheticOp:
    """A point-to-point send of ``nbytes`` from rank ``src`` to rank ``dst`` (and its receive)."""
    return SyntheticOp(
        "send", [src, dst], nbytes=nbytes, gap_us=gap_us, dur_us=dur_us, group=group, dtype="Byte"
    )


def _groups(ops: Sequence[SyntheticOp], world: int) -> dict[tuple[int, ...], str]:
    names: dict[tuple[int, ...], str] = {tuple(range(world)): "0"}
    for op in ops:
        key = tuple(op.ranks) if op.kind != "send" else tuple(range(world))
        if op.group is not None:
            names[key] = op.group
        elif key not in names:
            names[key] = str(len(names))
    return names


def _schedule(ops: Sequence[SyntheticOp]) -> list[tuple[float, float]]:
    """Start and duration (µs) of each op, one after the other with its gap before it."""
    t = 1000.0
    out: list[tuple[float, float]] = []
    for op in ops:
        if op.parallel and out:
            out.append((out[-1][0], op.dur_us))
            t = max(t, out[-1][0] + op.dur_us)
            continue
        t += op.gap_us
        out.append((t, op.dur_us))
        t += op.dur_us
    return out


def write(
    folder: str | os.PathLike[str],
    ops: Sequence[SyntheticOp],
    *,
    format: str,
    world: int | None = None,
    seq: bool = True,
    gzip_files: bool = False,
    abbreviate: bool = False,
    filler: int = 0,
    drop_rank: int | None = None,
) -> list[Path]:
    """Write one file per rank of ``ops`` in ``format`` (``kineto``, ``pytorch-et`` or ``chakra``).

    ``seq=False`` leaves sequence numbers out (as older traces do); ``abbreviate`` cuts lists
    after 30 entries as the profiler does; ``filler`` adds that many compute events per
    operation (Kineto: a kernel and a CPU op each); ``drop_rank`` writes no file for that rank.
    Chakra traces also get ``comm_groups.json`` (ASTRA-sim's ``--comm-group-configuration``)
    when groups other than the world are used. Returns the files written.
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    world = world or 1 + max(max(op.ranks) for op in ops)
    groups = _groups(ops, world)
    times = _schedule(ops)
    counters: dict[str, int] = {}
    seqs: list[int | None] = []
    for op in ops:
        key = tuple(op.ranks) if op.kind != "send" else tuple(range(world))
        pg = groups[key]
        if op.kind == "send":
            seqs.append(None)
            continue
        counters[pg] = counters.get(pg, 0) + 1
        seqs.append(counters[pg] if seq else None)
    files: list[Path] = []
    for r in range(world):
        if r == drop_rank:
            continue
        mine = [k for k, op in enumerate(ops) if r in op.ranks]
        if format == "kineto":
            files.append(
                _write_kineto(out, r, world, ops, mine, groups, seqs, times, gzip_files, abbreviate, filler)
            )
        elif format == "pytorch-et":
            files.append(_write_et(out, r, world, ops, mine, groups, seqs, gzip_files))
        elif format == "chakra":
            files.append(_write_chakra(out, r, world, ops, mine, groups))
        else:
            raise InvalidInputError(f"`format` must be kineto, pytorch-et or chakra; got {format!r}")
    if format == "chakra":
        extra = {name: list(key) for key, name in groups.items() if name != "0"}
        if extra:
            (out / "comm_groups.json").write_text(json.dumps(extra))
    return files
