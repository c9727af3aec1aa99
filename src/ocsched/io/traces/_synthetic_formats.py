"""How each trace format records a synthetic operation: the per-rank file writers.

:func:`~ocsched.io.traces.synthetic.write` hands every rank's operations to one writer here:
Kineto Chrome-trace JSON (a CPU op and its NCCL kernel per operation, with optional compute
filler), PyTorch execution-trace JSON (a ``record_param_comms`` node per operation after the
process-group node) or a Chakra ET protobuf stream (COMP and COMM nodes). The format tables
(profiler names, Chakra collective types, element sizes) and the element counts of an
operation are here too, since only the writers and the argument checks of
:func:`~ocsched.io.traces.synthetic.collective` read them.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ocsched.errors import InvalidInputError
from ocsched.io.traces import _chakra_codec as codec

if TYPE_CHECKING:  # annotations only: synthetic imports this module
    from ocsched.io.traces.synthetic import SyntheticOp

_KINETO_NAMES = {
    "all_reduce": "allreduce",
    "all_gather": "_allgather_base",
    "reduce_scatter": "_reduce_scatter_base",
    "all_to_all": "all_to_allv",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "gather": "gather",
    "scatter": "scatter",
}
_CHAKRA_TYPES = {
    "all_reduce": 0,
    "reduce": 1,
    "all_gather": 2,
    "broadcast": 5,
    "all_to_all": 6,
    "reduce_scatter": 7,
}
_DTYPES = {"Float": 4, "BFloat16": 2, "Half": 2, "Double": 8, "Byte": 1}


def _open(path: Path, gz: bool) -> IO[str]:
    if gz:
        return gzip.open(path, "wt", encoding="utf-8")
    return path.open("w", encoding="utf-8")


def _elements(op: SyntheticOp, i: int) -> tuple[int, int, list[int], list[int]]:
    """(in elements, out elements, in split, out split) of group rank i."""
    esize = _DTYPES[op.dtype]
    g = len(op.ranks)
    if op.kind == "all_to_all":
        assert op.rows is not None
        if op.row_bytes % esize:
            raise InvalidInputError(
                f"`row_bytes` must be a multiple of the {op.dtype} element ({esize} bytes)"
            )
        per_row = op.row_bytes // esize
        ins = op.rows[i]
        outs = [op.rows[j][i] for j in range(g)]
        return sum(ins) * per_row, sum(outs) * per_row, ins, outs
    if op.nbytes % esize:
        raise InvalidInputError(f"`nbytes` must be a multiple of the {op.dtype} element ({esize} bytes)")
    n = op.nbytes // esize
    if op.kind == "all_gather":
        return n, n * g, [], []
    if op.kind == "reduce_scatter":
        if n % g:
            raise InvalidInputError("a reduce-scatter's input must split into equal chunks")
        return n, n // g, [], []
    if op.kind == "gather":
        return n, n * g if i == op.root else 0, [], []
    if op.kind == "scatter":
        return n * g if i == op.root else 0, n, [], []
    return n, n, [], []


def _kineto_events(
    op: SyntheticOp, r: int, seq: int | None, pg: str, ts: float, dur: float, world: int, abbreviate: bool
) -> list[dict[str, Any]]:
    def fmt(xs: Sequence[int]) -> str:
        if abbreviate and len(xs) > 30:
            return "[" + ", ".join(map(str, xs[:30])) + ", ...]"
        return "[" + ", ".join(map(str, xs)) + "]"

    if op.kind == "send":
        src, dst = op.ranks
        n = op.nbytes
        name = "send" if r == src else "recv"
        peer = dst if r == src else src
        args: dict[str, Any] = {
            "Collective name": name,
            "dtype": "Byte",
            "In msg nelems": n,
            "Out msg nelems": n,
            "In split size": "[]",
            "Out split size": "[]",
            "Group size": world,
            "Process Group Name": pg,
            "Process Group Description": "default_pg",
            "Process Group Ranks": fmt(list(range(world))),
            "Rank": peer,
            ("Dst Rank" if name == "send" else "Src Rank"): peer,
        }
    else:
        i = op.ranks.index(r)
        in_n, out_n, ins, outs = _elements(op, i)
        args = {
            "Collective name": _KINETO_NAMES[op.kind],
            "dtype": op.dtype,
            "In msg nelems": in_n,
            "Out msg nelems": out_n,
            "In split size": fmt(ins),
            "Out split size": fmt(outs),
            "Group size": len(op.ranks),
            "Process Group Name": pg,
            "Process Group Description": "default_pg" if pg == "0" else f"group_{pg}",
            "Process Group Ranks": fmt(op.ranks),
            "Rank": op.root if op.kind in ("broadcast", "reduce", "gather", "scatter") else i,
        }
    if seq is not None:
        args["Seq"] = seq
    cpu = {
        "ph": "X",
        "cat": "cpu_op",
        "name": "record_param_comms",
        "pid": r,
        "tid": 1,
        "ts": ts - 5.0,
        "dur": 2.0,
        "args": args,
    }
    kernel = {
        "ph": "X",
        "cat": "kernel",
        "name": f"ncclDevKernel_{op.kind}",
        "pid": 0,
        "tid": 7,
        "ts": ts,
        "dur": dur,
        "args": dict(args),
    }
    return [cpu, kernel]


def _pg_of(op: SyntheticOp, groups: dict[tuple[int, ...], str], world: int) -> str:
    return groups[tuple(op.ranks) if op.kind != "send" else tuple(range(world))]


def _write_kineto(
    out: Path,
    r: int,
    world: int,
    ops: Sequence[SyntheticOp],
    mine: list[int],
    groups: dict[tuple[int, ...], str],
    seqs: list[int | None],
    times: list[tuple[float, float]],
    gz: bool,
    abbreviate: bool,
    filler: int,
) -> Path:
    path = out / f"rank-{r}.json{'.gz' if gz else ''}"
    pg_config = [
        {
            "pg_name": name,
            "pg_desc": "default_pg" if name == "0" else f"group_{name}",
            "backend_config": "cuda:nccl",
            "pg_size": len(key),
            "ranks": list(key) if name != "0" else [],
        }
        for key, name in groups.items()
    ]
    info = {"backend": "nccl", "rank": r, "world_size": world, "pg_count": len(pg_config)}
    if not abbreviate:
        info["pg_config"] = pg_config
    with _open(path, gz) as f:
        f.write('{"schemaVersion": 1, "distributedInfo": ' + json.dumps(info) + ', "traceEvents": [\n')
        first = True
        for k in mine:
            op = ops[k]
            ts, dur = times[k]
            for j in range(filler):
                # Compute between collectives: a GEMM kernel and its CPU launch, ending before the collective.
                start = ts - op.gap_us + j * op.gap_us / max(filler, 1)
                for ev in (
                    {
                        "ph": "X",
                        "cat": "cpu_op",
                        "name": "aten::mm",
                        "pid": r,
                        "tid": 1,
                        "ts": start,
                        "dur": 1.0,
                        "args": {"External id": k * 100 + j, "Input Dims": [[4096, 4096], [4096, 4096]]},
                    },
                    {
                        "ph": "X",
                        "cat": "kernel",
                        "name": "sm90_xmma_gemm_bf16bf16_bf16f32",
                        "pid": 0,
                        "tid": 7,
                        "ts": start + 1.0,
                        "dur": max(op.gap_us / max(filler, 1) - 2.0, 0.0),
                        "args": {"External id": k * 100 + j, "grid": [132, 1, 1], "block": [384, 1, 1]},
                    },
                ):
                    f.write(("" if first else ",\n") + json.dumps(ev))
                    first = False
            for ev in _kineto_events(op, r, seqs[k], _pg_of(op, groups, world), ts, dur, world, abbreviate):
                f.write(("" if first else ",\n") + json.dumps(ev))
                first = False
        f.write('\n], "traceName": "' + path.name + '"}\n')
    return path


def _tensor(tid: int, numel: int, esize: int) -> list[Any]:
    return [tid, tid + 1, 0, numel, esize, "cuda:0"]


def _write_et(
    out: Path,
    r: int,
    world: int,
    ops: Sequence[SyntheticOp],
    mine: list[int],
    groups: dict[tuple[int, ...], str],
    seqs: list[int | None],
    gz: bool,
) -> Path:
    path = out / f"et-rank-{r}.json{'.gz' if gz else ''}"
    pgs = [
        {
            "pg_name": name,
            "pg_desc": "default_pg" if name == "0" else f"group_{name}",
            "backend_config": "cuda:nccl",
            "pg_size": len(key),
            "ranks": [] if name == "0" else list(key),
        }
        for key, name in groups.items()
    ]
    nid = 2
    with _open(path, gz) as f:
        f.write(
            '{"schema": "1.1.1-chakra.0.0.4", "pid": 1, "time": "2026-01-01 00:00:00", '
            '"start_ts": 0, "nodes": [\n'
        )
        init = {
            "id": nid,
            "name": "## process_group:init ##",
            "ctrl_deps": 1,
            "inputs": {"values": [json.dumps(pgs)], "shapes": [[]], "types": ["String"]},
            "outputs": {"values": [], "shapes": [], "types": []},
            "attrs": [],
        }
        f.write(json.dumps(init))
        for k in mine:
            op = ops[k]
            nid += 1
            pg = _pg_of(op, groups, world)
            esize = _DTYPES[op.dtype]
            if op.kind == "send":
                src, dst = op.ranks
                name = "send" if r == src else "recv"
                peer = dst if r == src else src
                in_n = out_n = op.nbytes // esize
                ins: list[int] = []
                outs: list[int] = []
                rank_arg = peer
                size = world
            else:
                i = op.ranks.index(r)
                in_n, out_n, ins, outs = _elements(op, i)
                name = _KINETO_NAMES[op.kind]
                rank_arg = op.root if op.kind in ("broadcast", "reduce", "gather", "scatter") else i
                size = len(op.ranks)
            s = seqs[k] if seqs[k] is not None else -1
            node = {
                "id": nid,
                "name": "record_param_comms",
                "ctrl_deps": 2,
                "inputs": {
                    "values": [
                        [_tensor(10 * nid, in_n, esize)],
                        [s, op.kind == "send"],
                        [pg, f"group_{pg}"],
                        rank_arg,
                        name,
                        ins,
                        outs,
                        size,
                    ],
                    "shapes": [[[in_n]], [], [], [], [], [], [], []],
                    "types": [
                        f"GenericList[Tensor({op.dtype.lower()})]",
                        "Tuple[Int,Bool]",
                        "Tuple[String,String]",
                        "Int",
                        "String",
                        "GenericList[Int]",
                        "GenericList[Int]",
                        "Int",
                    ],
                },
                "outputs": {
                    "values": [[_tensor(10 * nid + 5, out_n, esize)]],
                    "shapes": [[[out_n]]],
                    "types": [f"GenericList[Tensor({op.dtype.lower()})]"],
                },
                "attrs": [
                    {"name": "rf_id", "type": "uint64", "value": nid},
                    {"name": "seq_id", "type": "int64", "value": -1},
                ],
            }
            f.write(",\n" + json.dumps(node))
        f.write('\n], "finish_ts": 1}\n')
    return path


def _write_chakra(
    out: Path,
    r: int,
    world: int,
    ops: Sequence[SyntheticOp],
    mine: list[int],
    groups: dict[tuple[int, ...], str],
) -> Path:
    path = out / f"trace.{r}.et"
    with path.open("wb") as f:
        codec.write_message(f, codec.encode_metadata("0.0.4"))
        nid, last = 0, None
        for k in mine:
            op = ops[k]
            deps: list[int] = [] if last is None else [last]
            if op.gap_us:
                comp = {
                    "id": nid,
                    "name": f"compute_{k}",
                    "type": 4,
                    "data_deps": deps,
                    "duration_micros": int(op.gap_us),
                    "attr": [("is_cpu_op", "bool_val", False)],
                }
                codec.write_message(f, codec.encode_node(comp))
                deps, nid = [nid], nid + 1
            pg = _pg_of(op, groups, world)
            attr: list[tuple[str, str, Any]]
            if op.kind == "send":
                src, dst = op.ranks
                ntype = 5 if r == src else 6
                attr = [("comm_size", "int64_val", op.nbytes), ("comm_tag", "int32_val", k)]
                attr.append(("comm_dst", "int32_val", dst) if r == src else ("comm_src", "int32_val", src))
            else:
                if op.kind not in _CHAKRA_TYPES:
                    raise InvalidInputError(f"Chakra traces have no {op.kind} of ocsched's synthetic kinds")
                if op.kind == "all_to_all":
                    assert op.rows is not None
                    g = len(op.rows)
                    off = {op.rows[i][j] for i in range(g) for j in range(g) if i != j}
                    if len(off) > 1:
                        raise InvalidInputError(
                            "Chakra's ALL_TO_ALL is uniform: use sends for per-peer splits"
                        )
                    nbytes = off.pop() * op.row_bytes * g
                else:
                    nbytes = op.nbytes
                ntype = 7
                attr = [
                    ("is_cpu_op", "bool_val", False),
                    ("comm_type", "int64_val", _CHAKRA_TYPES[op.kind]),
                    ("comm_size", "int64_val", nbytes),
                ]
                if pg != "0":
                    attr.append(("pg_name", "string_val", pg))
            node = {
                "id": nid,
                "name": f"{op.kind}_{k}",
                "type": ntype,
                "data_deps": deps,
                "duration_micros": int(op.dur_us),
                "attr": attr,
            }
            codec.write_message(f, codec.encode_node(node))
            last, nid = nid, nid + 1
    return path
