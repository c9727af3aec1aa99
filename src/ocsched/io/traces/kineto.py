"""PyTorch profiler (Kineto) traces: Chrome trace-event JSON, one file per rank, optionally gzipped.

What a file gives: every collective's metadata in the ``args`` of its ``record_param_comms`` CPU
event and again on the NCCL kernel launched for it (``"Collective name"``, ``"dtype"``, ``"In
msg nelems"``, ``"Out msg nelems"``, ``"In split size"``, ``"Out split size"``, ``"Group size"``,
``"Process Group Name"``/``"Description"``/``"Ranks"``, ``"Rank"``, ``"Src Rank"``/``"Dst Rank"``,
``"Seq"``), and the rank in ``distributedInfo`` (with the process groups in
``distributedInfo.pg_config`` in recent versions). Each collective is read once: from the CPU
events (every call is recorded there), with the start and duration of the matching NCCL kernels
when the file has one kernel per call, in the same order (the GPU's timeline, which is where
compute separates collectives); otherwise the CPU events' own times are used and the file's
timing says so.

The file is streamed (:func:`ocsched.io.traces._stream.scan_json`): memory does not grow with
its size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.io.traces._ops import (
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

__all__ = ["ABBREVIATED_HINT", "read_rank", "sniff_kineto"]

#: How to get complete lists when the profiler abbreviated them.
ABBREVIATED_HINT = (
    "PyTorch's profiler writes at most 30 entries of these lists in its trace; record a PyTorch "
    "execution trace (torch.profiler.ExecutionTraceObserver) of the same run, whose "
    "record_param_comms nodes keep the complete lists, and import that (--format pytorch-et)."
)


def sniff_kineto(head: bytes) -> bool:
    """True if the start of a file looks like a Kineto trace."""
    return b'"traceEvents"' in head or (b'"schemaVersion"' in head and b'"distributedInfo"' in head)


def _op(event: dict[str, Any], file: str, loc: str) -> CommOp | None:
    where = f"{file}: {loc}"
    args = event.get("args")
    if not isinstance(args, dict):
        return None
    name = args.get("Collective name")
    if not isinstance(name, str):
        return None
    kind = normalize(name)
    if kind is None:
        raise InvalidInputError(
            f"{where}: unknown collective {name!r} (ocsched reads all_reduce, all_gather, "
            "reduce_scatter, all_to_all(v), broadcast, reduce, gather, scatter, send, recv)"
        )
    if kind in SKIPPED:
        return None
    seq = opt_int(args.get("Seq"), "Seq", where)
    op = CommOp(kind=kind, name=name, file=file, loc=loc, seq=seq)
    pg = args.get("Process Group Name")
    op.group = None if pg is None else str(pg).strip('"')
    op.group_size = opt_int(args.get("Group size"), "Group size", where)
    op.group_rank = opt_int(args.get("Rank"), "Rank", where)
    ranks = args.get("Process Group Ranks")
    if ranks is not None:
        text = str(ranks)
        if "..." in text:
            # Abbreviated: kept as a prefix to check, the full list must come from elsewhere.
            visible = text.strip().strip('"').strip("[]").split(",")
            prefix = tuple(int(v) for v in (s.strip() for s in visible) if v.lstrip("-").isdigit())
            op.ranks_prefix = prefix
        else:
            op.group_ranks = int_list(ranks, "Process Group Ranks", where, abbreviated_hint=ABBREVIATED_HINT)
            if op.group_ranks == ():
                op.group_ranks = None
    if op.group_ranks is None and ranks is None:
        start = opt_int(args.get("Global rank start"), "Global rank start", where)
        stride = opt_int(args.get("Global rank stride"), "Global rank stride", where)
        if start is not None and stride is not None and stride > 0 and op.group_size:
            op.group_ranks = tuple(start + k * stride for k in range(op.group_size))
    in_n = opt_int(args.get("In msg nelems"), "In msg nelems", where)
    out_n = opt_int(args.get("Out msg nelems"), "Out msg nelems", where)
    dtype = args.get("dtype")
    if dtype is None:
        if in_n or out_n:
            raise InvalidInputError(f"{where}: collective {name!r} has element counts but no 'dtype'")
        esize = 0
    else:
        esize = dtype_bytes(dtype, where)
    op.in_bytes = None if in_n is None else in_n * esize
    op.out_bytes = None if out_n is None else out_n * esize
    if kind == "all_to_all":
        op.in_split = int_list(
            args.get("In split size"), "In split size", where, abbreviated_hint=ABBREVIATED_HINT
        )
        op.out_split = int_list(
            args.get("Out split size"), "Out split size", where, abbreviated_hint=ABBREVIATED_HINT
        )
    if kind in ("send", "recv"):
        peer = args.get("Dst Rank" if kind == "send" else "Src Rank")
        op.peer = opt_int(peer, "Dst Rank" if kind == "send" else "Src Rank", where)
    ts, dur = event.get("ts"), event.get("dur")
    op.ts = float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else None
    op.dur = float(dur) if isinstance(dur, int | float) and not isinstance(dur, bool) else None
    return op


def _raw_key(args: dict[str, Any]) -> tuple[Any, ...]:
    """What identifies one call in its CPU event and its kernel (both carry the same metadata)."""
    return (
        args.get("Collective name"),
        args.get("Process Group Name"),
        args.get("Seq"),
        args.get("In msg nelems"),
        args.get("Out msg nelems"),
        args.get("dtype"),
    )


def _time(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def read_rank(path: Path) -> RankTrace:
    """Read one rank's Kineto trace (streamed).

    Raises
    ------
    InvalidInputError
        If the file is not a Kineto trace, is malformed, or a collective's fields are invalid or
        abbreviated (the message names the file and the event).
    """
    cpu: list[CommOp] = []
    cpu_keys: list[tuple[Any, ...]] = []
    # Kernels are only needed for their times: kept raw (key, event, place), parsed only if the
    # file has no CPU events.
    kernels: list[tuple[tuple[Any, ...], dict[str, Any], str]] = []
    fname = str(path)
    count = [0]

    def on_event(event: Any) -> None:
        count[0] += 1
        if type(event) is not dict:
            return
        args = event.get("args")
        if type(args) is not dict or "Collective name" not in args:
            return
        is_cpu = event.get("name") == "record_param_comms"
        if not is_cpu and event.get("cat") != "kernel":
            return
        key = _raw_key(args)
        if is_cpu:
            op = _op(event, fname, f"event {count[0] - 1}")
            if op is not None:
                cpu.append(op)
                cpu_keys.append(key)
        elif normalize(str(args["Collective name"])) not in SKIPPED:
            kernels.append((key, event, f"event {count[0] - 1}"))

    try:
        with open_binary(path) as f:
            top, found = scan_json(f, "traceEvents", on_event, str(path))
    except OSError as exc:
        raise InvalidInputError(f"`trace` file {path} cannot be read: {exc.strerror or exc}") from None
    if not found:
        raise InvalidInputError(
            f"`trace` file {path} is not a PyTorch profiler (Kineto) trace: no 'traceEvents'"
        )
    info = top.get("distributedInfo")
    info = info if isinstance(info, dict) else {}
    rank = opt_int(info.get("rank"), "distributedInfo.rank", str(path))
    named = rank_from_name(path)
    if rank is None:
        rank = named
    world = opt_int(info.get("world_size"), "distributedInfo.world_size", str(path))
    trace = RankTrace(file=str(path), rank=rank, world_size=world)
    pg_config = info.get("pg_config")
    if isinstance(pg_config, list):
        for pg in pg_config:
            if not isinstance(pg, dict) or "pg_name" not in pg:
                continue
            ranks = pg.get("ranks")
            size = opt_int(pg.get("pg_size", pg.get("group_size")), "pg_size", str(path))
            full: tuple[int, ...] | None = None
            if isinstance(ranks, list) and ranks:
                full = int_list(ranks, "pg_config ranks", str(path), abbreviated_hint=ABBREVIATED_HINT)
            elif isinstance(ranks, list) and world is not None and size == world:
                full = tuple(range(world))  # an empty list is the world group
            trace.groups[str(pg["pg_name"])] = GroupInfo(
                ranks=full, size=size, desc=str(pg.get("pg_desc", ""))
            )
    # Trace events are not in time order (a profiler writes CPU events, then GPU ones).
    order = sorted(range(len(cpu)), key=lambda k: cpu[k].ts or 0.0)
    cpu, cpu_keys = [cpu[k] for k in order], [cpu_keys[k] for k in order]
    kernels.sort(key=lambda t: _time(t[1].get("ts")) or 0.0)
    ops = cpu if cpu else [op for _, ev, loc in kernels if (op := _op(ev, fname, loc)) is not None]
    if (
        cpu
        and kernels
        and len(kernels) == len(cpu)
        and all(k[0] == c for k, c in zip(kernels, cpu_keys, strict=True))
    ):
        for c, (_, ev, _) in zip(cpu, kernels, strict=True):
            c.ts, c.dur = _time(ev.get("ts")), _time(ev.get("dur"))
        trace.timing = "kernel"
    else:
        trace.timing = "cpu" if cpu else ("kernel" if kernels else "none")
        if cpu and kernels:
            trace.notes.append(
                f"{path}: {len(kernels)} NCCL kernels for {len(cpu)} collective calls; CPU times used"
            )
    for op in ops:
        if op.ranks_prefix and op.group is not None:
            info = trace.groups.setdefault(op.group, GroupInfo(size=op.group_size))
            info.prefix = op.ranks_prefix
        elif op.group_ranks is not None and op.group is not None:
            info = trace.groups.setdefault(op.group, GroupInfo(size=op.group_size))
            if info.ranks is None:
                info.ranks = op.group_ranks
            elif info.ranks != op.group_ranks:
                raise InvalidInputError(
                    f"{op.where}: process group {op.group!r} has ranks {list(op.group_ranks)} here but "
                    f"{list(info.ranks)} earlier in the file"
                )
    trace.ops = ops
    return trace
