"""Chakra execution traces (``.et``): one protobuf stream per rank, ``<prefix>.<rank>.et``, maybe gzipped.

What a file gives (schema ``mlcommons/chakra : schema/protobuf/et_def.proto``): a
``GlobalMetadata``, then ``Node``s. ``COMM_COLL_NODE``: ``comm_type`` (the
``CollectiveCommType``), ``comm_size`` (bytes, as ASTRA-sim reads it: the buffer of each rank
for all-reduce, reduce-scatter and all-to-all, the contribution of each rank for all-gather)
and ``pg_name``; ``COMM_SEND_NODE`` / ``COMM_RECV_NODE``: ``comm_dst`` / ``comm_src`` (global
ranks; the other end is the file's rank), ``comm_size``, ``comm_tag``; ``COMP_NODE``:
``duration_micros``. The gap before a communication node is the longest chain of COMP
durations back to the previous communication node along ``data_deps`` and ``ctrl_deps``.
Process groups come from ASTRA-sim's ``--comm-group-configuration`` JSON (``{"<pg_name>":
[ranks]}``), or from the PyTorch ``METADATA`` node a converted trace keeps; a node without a
``pg_name`` runs on every rank of the trace. Chakra nodes carry no sequence numbers: a group's
collectives are matched by their order, and the import says so.

Broadcast and reduce nodes name no root: they are refused (or dropped with ``skip``).
"""

from __future__ import annotations

import heapq
import json
from pathlib import Path
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.io.traces import _chakra_codec as codec
from ocsched.io.traces._ops import CommOp, GroupInfo, RankTrace, int_list
from ocsched.io.traces._stream import open_binary, rank_from_name

__all__ = ["read_rank", "sniff_chakra"]

_KINDS = {
    "ALL_REDUCE": "all_reduce",
    "REDUCE": "reduce",
    "ALL_GATHER": "all_gather",
    "GATHER": "gather",
    "SCATTER": "scatter",
    "BROADCAST": "broadcast",
    "ALL_TO_ALL": "all_to_all",
    "REDUCE_SCATTER": "reduce_scatter",
    "REDUCE_SCATTER_BLOCK": "reduce_scatter",
    "BARRIER": "barrier",
}
COMP, SEND, RECV, COLL, METADATA = 4, 5, 6, 7, 1


def sniff_chakra(path: Path, head: bytes) -> bool:
    """True if a file is named like a Chakra trace and starts like one (a short metadata message)."""
    name = path.name.lower()
    return name.endswith((".et", ".et.gz")) and bool(head)


def _decoder(codec_name: str) -> Any:
    if codec_name == "python" or (codec_name == "auto" and not codec.protobuf_available()):
        return codec.node_dict, codec.metadata_dict
    classes = codec.protobuf_classes()
    node_cls, meta_cls = classes["Node"], classes["GlobalMetadata"]

    def node(raw: bytes) -> dict[str, Any]:
        m = node_cls()
        m.ParseFromString(raw)
        return codec.to_plain(m)

    def meta(raw: bytes) -> dict[str, Any]:
        m = meta_cls()
        m.ParseFromString(raw)
        return codec.to_plain(m)

    return node, meta


def _int_attr(attrs: dict[str, tuple[str, Any]], key: str, where: str) -> int | None:
    if key not in attrs:
        return None
    kind, value = attrs[key]
    if kind.endswith("_list") or isinstance(value, bool | str | bytes | float) or value is None:
        raise InvalidInputError(f"{where}: attribute {key!r} must be an integer; got {kind} {value!r}")
    return int(value)


def _metadata_groups(values: str, trace: RankTrace, where: str) -> None:
    """The PyTorch process-group list a converted trace keeps in a METADATA node's input values."""
    text = values.strip()
    if text.startswith("['") and text.endswith("']"):
        text = text[2:-2]  # the converter stored str() of a one-string list
    try:
        groups = json.loads(text)
    except json.JSONDecodeError:
        return
    if isinstance(groups, list) and len(groups) == 1 and isinstance(groups[0], str):
        try:
            groups = json.loads(groups[0])
        except json.JSONDecodeError:
            return
    if not isinstance(groups, list):
        return
    for pg in groups:
        if isinstance(pg, dict) and "pg_name" in pg:
            ranks = pg.get("ranks")
            full = (
                int_list(ranks, "ranks", where, abbreviated_hint="")
                if isinstance(ranks, list) and ranks
                else None
            )
            trace.groups[str(pg["pg_name"])] = GroupInfo(
                ranks=full, size=None, desc=str(pg.get("pg_desc", ""))
            )


def read_rank(path: Path, *, codec_name: str = "auto") -> RankTrace:
    """Read one rank's Chakra trace.

    Raises
    ------
    InvalidInputError
        If the file name gives no rank, the stream is not valid protobuf, or a communication
        node lacks a field it needs (the message names the file and the node id).
    """
    rank = rank_from_name(path)
    if rank is None:
        raise InvalidInputError(f"`trace` file {path}: a Chakra trace must be named <prefix>.<rank>.et")
    trace = RankTrace(file=str(path), rank=rank, world_size=None, timing="comp")
    decode_node, decode_meta = _decoder(codec_name)
    fname = str(path)
    # Per node: its dependencies and either a COMP duration or the index of its comm op.
    deps: dict[int, tuple[int, ...]] = {}
    comp: dict[int, float] = {}
    comm_of: dict[int, int] = {}
    order: list[int] = []
    try:
        with open_binary(path) as f:
            first = True
            for raw in codec.iter_messages(f):
                if first:
                    decode_meta(raw)
                    first = False
                    continue
                node = decode_node(raw)
                nid = node["id"]
                where = f"{path}: node {nid} ({node['name'][:40]})"
                if nid in deps:
                    raise InvalidInputError(f"{where}: node id {nid} appears twice")
                deps[nid] = tuple(node["data_deps"]) + tuple(node["ctrl_deps"])
                order.append(nid)
                attrs = {name: (kind, value) for name, kind, value in node["attr"]}
                ntype = node["type"]
                if ntype == COMP:
                    comp[nid] = float(node["duration_micros"])
                elif ntype == METADATA:
                    _metadata_groups(node["inputs"]["values"], trace, where)
                elif ntype in (SEND, RECV, COLL):
                    op = _comm_op(ntype, attrs, fname, f"node {nid}")
                    if op is not None:
                        comm_of[nid] = len(trace.ops)
                        trace.ops.append(op)
    except codec.WireError as exc:
        raise InvalidInputError(f"`trace` file {path} is not a Chakra trace: {exc}") from None
    except OSError as exc:
        raise InvalidInputError(f"`trace` file {path} cannot be read: {exc.strerror or exc}") from None
    if first:
        raise InvalidInputError(
            f"`trace` file {path} is empty: a Chakra trace starts with its GlobalMetadata"
        )
    _comp_paths(trace, deps, comp, comm_of, order, str(path))
    return trace


def _comm_op(ntype: int, attrs: dict[str, tuple[str, Any]], file: str, loc: str) -> CommOp | None:
    where = f"{file}: {loc}"
    size = _int_attr(attrs, "comm_size", where)
    if size is None or size < 0:
        raise InvalidInputError(f"{where}: communication node without a comm_size >= 0")
    pg = attrs.get("pg_name")
    group = str(pg[1]) if pg is not None and pg[1] not in ("", None) else None
    if ntype == COLL:
        ctype = _int_attr(attrs, "comm_type", where)
        name = codec.COLLECTIVE_TYPES.get(ctype if ctype is not None else -1)
        if name is None:
            raise InvalidInputError(
                f"{where}: COMM_COLL node with comm_type {ctype!r} (not a CollectiveCommType)"
            )
        kind = _KINDS[name]
        if kind == "barrier":
            return None
        op = CommOp(kind=kind, name=name, file=file, loc=loc, group=group, in_bytes=size)
        if kind in ("broadcast", "reduce", "gather", "scatter"):
            op.root_known = False
        op.uniform_all_to_all = kind == "all_to_all"
        return op
    kind = "send" if ntype == SEND else "recv"
    peer = _int_attr(attrs, "comm_dst" if kind == "send" else "comm_src", where)
    if peer is None:
        raise InvalidInputError(
            f"{where}: {kind} node without {'comm_dst' if kind == 'send' else 'comm_src'} (its peer)"
        )
    tag = _int_attr(attrs, "comm_tag", where)
    return CommOp(
        kind=kind,
        name=f"COMM_{kind.upper()}",
        file=file,
        loc=loc,
        group=group,
        in_bytes=size,
        peer=peer,
        tag=tag,
    )


def _comp_paths(
    trace: RankTrace,
    deps: dict[int, tuple[int, ...]],
    comp: dict[int, float],
    comm_of: dict[int, int],
    order: list[int],
    where: str,
) -> None:
    """Set each comm op's ``comp_before`` and order the ops as the dependencies run them."""
    # Topological order (file order breaks ties), iteratively: traces have millions of nodes.
    position = {nid: k for k, nid in enumerate(order)}
    indegree = {nid: 0 for nid in order}
    children: dict[int, list[int]] = {}
    for nid in order:
        for d in deps[nid]:
            if d in indegree and d != nid:
                indegree[nid] += 1
                children.setdefault(d, []).append(nid)
    ready = [(position[n], n) for n in order if indegree[n] == 0]
    heapq.heapify(ready)
    path: dict[int, float] = {}  # longest COMP chain ending at the node, reset at comm nodes
    topo: list[int] = []
    while ready:
        _, nid = heapq.heappop(ready)
        topo.append(nid)
        before = max((path.get(d, 0.0) for d in deps[nid] if d in indegree), default=0.0)
        if nid in comm_of:
            trace.ops[comm_of[nid]].comp_before = before
            path[nid] = 0.0
        else:
            path[nid] = before + comp.get(nid, 0.0)
        for c in children.get(nid, ()):
            indegree[c] -= 1
            if indegree[c] == 0:
                heapq.heappush(ready, (position[c], c))
    if len(topo) != len(order):
        raise InvalidInputError(f"`trace` file {where}: the node dependencies have a cycle")
    topo_index = {n: k for k, n in enumerate(topo)}
    trace.ops = [trace.ops[i] for _, i in sorted(comm_of.items(), key=lambda t: topo_index[t[0]])]
