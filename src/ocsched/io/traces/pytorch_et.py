"""PyTorch execution traces (``torch.profiler.ExecutionTraceObserver`` JSON, schema 1.0.x and 1.1.x).

What a file gives: ``nodes[]``, where each collective is a ``record_param_comms`` node whose
inputs are ``[tensors, seq, process_group, rank, collective_name, in_split, out_split,
(global_rank_start, global_rank_stride,) world_size]`` (the tensors are
``[id, storage_id, offset, numel, element_bytes, device]``; ``seq`` may be ``[seq, is_p2p]`` and
the process group ``[name, description]`` or, in old traces, a pointer), recent versions adding
``collective_name``, ``in_msg_nelems``, ``in_split_size``, ``pg_name``... as node attributes;
and a ``## process_group:init ##`` node whose first input is the JSON list of process groups
(``pg_name``, ``ranks`` with ``[]`` for the world, ``backend_id`` for old pointer names). The
lists are complete (this is where to go when a profiler trace abbreviates them). The file has
no rank of its own: it comes from the file's name (``rank-3.json``, ``et.3.json``) or from the
rank it holds in a group of known members. Execution traces carry no timestamps, except the
ones Chakra's trace linker adds (``ts``, ``dur``), which are used when present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.io.traces._ops import (
    ROOTED,
    SKIPPED,
    CommOp,
    GroupInfo,
    RankTrace,
    dtype_bytes,
    int_list,
    normalize,
    opt_int,
)
from ocsched.io.traces._stream import open_binary, rank_from_name, scan_json

__all__ = ["read_rank", "sniff_pytorch_et"]

_HINT = "the execution trace's lists are complete; this one is malformed"


def sniff_pytorch_et(head: bytes) -> bool:
    """True if the start of a file looks like a PyTorch execution trace."""
    return b'"nodes"' in head and b'"schema"' in head and b'"traceEvents"' not in head


def _is_tensor(v: Any) -> bool:
    return (
        isinstance(v, list)
        and len(v) == 6
        and isinstance(v[5], str)
        and all(isinstance(x, int) and not isinstance(x, bool) for x in v[:5])
    )


def _tensor_bytes(v: Any) -> tuple[int, int] | None:
    """(bytes, element bytes) of a tensor value or a (nested) list of them; None if none."""
    if _is_tensor(v):
        return v[3] * v[4], v[4]
    if isinstance(v, list):
        total, esize, any_ = 0, 0, False
        for x in v:
            got = _tensor_bytes(x)
            if got is not None:
                total += got[0]
                esize = esize or got[1]
                any_ = True
        return (total, esize) if any_ else None
    return None


def _pg_init(node: dict[str, Any], trace: RankTrace, pointers: dict[int, str], where: str) -> None:
    raw = node.get("inputs")
    values = raw.get("values") if isinstance(raw, dict) else None
    if not isinstance(values, list) or not values or not isinstance(values[0], str):
        return
    try:
        groups = json.loads(values[0])
    except json.JSONDecodeError:
        raise InvalidInputError(f"{where}: the process-group list is not JSON: {values[0][:80]!r}") from None
    if not isinstance(groups, list):
        return
    for pg in groups:
        if not isinstance(pg, dict) or "pg_name" not in pg:
            continue
        name = str(pg["pg_name"])
        size = opt_int(pg.get("pg_size", pg.get("group_size")), "pg_size", where)
        ranks = pg.get("ranks")
        full = None
        if isinstance(ranks, list) and ranks:
            full = int_list(ranks, "ranks", where, abbreviated_hint=_HINT)
        trace.groups[name] = GroupInfo(ranks=full, size=size, desc=str(pg.get("pg_desc", "")))
        if isinstance(ranks, list) and not ranks:
            trace.groups[name].desc = trace.groups[name].desc or "world"
            trace.notes.append(f"world:{name}")
        backend = pg.get("backend_id")
        if isinstance(backend, int):
            pointers[backend] = name


def _op(node: dict[str, Any], pointers: dict[int, str], file: str, loc: str) -> CommOp | None:
    where = f"{file}: {loc}"
    raw_inputs = node.get("inputs")
    inputs: dict[str, Any] = raw_inputs if isinstance(raw_inputs, dict) else {}
    raw_vals, raw_types = inputs.get("values"), inputs.get("types")
    vals: list[Any] = raw_vals if isinstance(raw_vals, list) else []
    types: list[Any] = raw_types if isinstance(raw_types, list) else []
    attrs = {a.get("name"): a.get("value") for a in node.get("attrs") or [] if isinstance(a, dict)}
    # The collective's name: an attribute in recent traces, else the first String input naming one.
    c = next(
        (
            i
            for i, v in enumerate(vals)
            if i >= 3
            and isinstance(v, str)
            and (i >= len(types) or "String" in str(types[i]))
            and normalize(v)
        ),
        None,
    )
    name = attrs.get("collective_name")
    name = name if isinstance(name, str) and name else (vals[c] if c is not None else None)
    if not isinstance(name, str) or c is None:
        raise InvalidInputError(f"{where}: record_param_comms node without a collective name in its inputs")
    kind = normalize(name)
    if kind is None:
        raise InvalidInputError(f"{where}: unknown collective {name!r}")
    if kind in SKIPPED:
        return None
    seq_v, pg_v, rank_v = vals[c - 3], vals[c - 2], vals[c - 1]
    seq = opt_int(seq_v[0] if isinstance(seq_v, list) and seq_v else seq_v, "seq", where)
    op = CommOp(kind=kind, name=name, file=file, loc=loc, seq=seq if seq is not None and seq >= 0 else None)
    pg_name = attrs.get("pg_name")
    if isinstance(pg_name, str) and pg_name:
        op.group = pg_name
    elif isinstance(pg_v, list) and pg_v:
        op.group = str(pg_v[0])
    elif isinstance(pg_v, int) and not isinstance(pg_v, bool):
        op.group = pointers.get(pg_v, str(pg_v))
    elif isinstance(pg_v, str):
        op.group = pg_v
    op.group_rank = opt_int(rank_v, "rank", where)
    tail = vals[c + 3 :]
    op.group_size = opt_int(attrs.get("pg_size"), "pg_size", where)
    if op.group_size is None and tail:
        op.group_size = opt_int(tail[-1], "world_size", where)
    if len(tail) >= 3:
        start, stride = (
            opt_int(tail[0], "global_rank_start", where),
            opt_int(tail[1], "global_rank_stride", where),
        )
        if start is not None and stride is not None and start >= 0 and stride > 0 and op.group_size:
            op.group_ranks = tuple(start + k * stride for k in range(op.group_size))
    tensors_in = _tensor_bytes(vals[c - 4]) if c >= 4 else None
    raw_outputs = node.get("outputs")
    tensors_out = _tensor_bytes(raw_outputs.get("values")) if isinstance(raw_outputs, dict) else None
    esize = None
    if attrs.get("dtype") is not None:
        esize = dtype_bytes(attrs["dtype"], where)
    in_n, out_n = (
        opt_int(attrs.get("in_msg_nelems"), "in_msg_nelems", where),
        opt_int(attrs.get("out_msg_nelems"), "out_msg_nelems", where),
    )
    if in_n is not None and esize is not None:
        op.in_bytes = in_n * esize
    elif tensors_in is not None:
        op.in_bytes = tensors_in[0]
    if out_n is not None and esize is not None:
        op.out_bytes = out_n * esize
    elif tensors_out is not None:
        op.out_bytes = tensors_out[0]
    if kind == "all_to_all":
        in_split = attrs.get("in_split_size", vals[c + 1] if c + 1 < len(vals) else None)
        out_split = attrs.get("out_split_size", vals[c + 2] if c + 2 < len(vals) else None)
        op.in_split = int_list(in_split, "in_split", where, abbreviated_hint=_HINT)
        op.out_split = int_list(out_split, "out_split", where, abbreviated_hint=_HINT)
    if kind == "recv" and op.in_bytes is None:
        op.in_bytes = op.out_bytes
    ts = node.get("ts")
    dur = node.get("dur", node.get("inclusive_dur"))
    op.ts = float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else None
    op.dur = float(dur) if isinstance(dur, int | float) and not isinstance(dur, bool) else None
    return op


def read_rank(path: Path) -> RankTrace:
    """Read one rank's execution trace (streamed).

    Raises
    ------
    InvalidInputError
        If the file is not an execution trace, or a ``record_param_comms`` node is malformed
        (the message names the file and the node id).
    """
    trace = RankTrace(file=str(path), rank=rank_from_name(path), world_size=None)
    pointers: dict[int, str] = {}
    raw: list[tuple[int, dict[str, Any]]] = []

    def on_node(node: Any) -> None:
        if not isinstance(node, dict):
            return
        name = node.get("name")
        if not isinstance(name, str):
            return
        if "process_group:init" in name:
            _pg_init(node, trace, pointers, f"{path}: node {node.get('id')}")
        elif name == "record_param_comms":
            nid = node.get("id")
            raw.append((nid if isinstance(nid, int) else len(raw), node))

    try:
        with open_binary(path) as f:
            top, found = scan_json(f, "nodes", on_node, str(path))
    except OSError as exc:
        raise InvalidInputError(f"`trace` file {path} cannot be read: {exc.strerror or exc}") from None
    if not found or "schema" not in top:
        raise InvalidInputError(
            f"`trace` file {path} is not a PyTorch execution trace: no 'schema' and 'nodes'"
        )
    # Node ids follow the order in which the operators started; the file lists them as they ended.
    raw.sort(key=lambda t: t[0])
    fname = str(path)
    for nid, node in raw:
        op = _op(node, pointers, fname, f"node {nid}")
        if op is not None:
            trace.ops.append(op)
    trace.timing = "timestamps" if trace.ops and all(o.ts is not None for o in trace.ops) else "none"
    worlds = [n.split(":", 1)[1] for n in trace.notes if n.startswith("world:")]
    trace.notes = [n for n in trace.notes if not n.startswith("world:")]
    for name in worlds:
        world = trace.groups[name]
        if world.ranks is None and world.size:
            world.ranks = tuple(range(world.size))  # ``ranks: []`` names the world group
    if trace.rank is None:
        for op in trace.ops:
            g = trace.groups.get(op.group or "")
            members = op.group_ranks or (g.ranks if g else None)
            rooted = op.kind in ROOTED or op.kind in ("send", "recv")
            if not rooted and members and op.group_rank is not None and 0 <= op.group_rank < len(members):
                trace.rank = members[op.group_rank]
                break
    return trace
