"""What every trace reader produces: one :class:`RankTrace` per file, its :class:`CommOp` records.

The readers (:mod:`.kineto`, :mod:`.pytorch_et`, :mod:`.chakra`) only translate their format's
fields into these records; matching across ranks, the checks and the matrices are
:mod:`._assemble`'s. Records are small and picklable: ranks are parsed in worker processes.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field, fields
from typing import Any

from ocsched.errors import InvalidInputError

__all__ = [
    "COLLECTIVES",
    "DTYPE_BYTES",
    "ROOTED",
    "SKIPPED",
    "CommOp",
    "GroupInfo",
    "RankTrace",
    "int_list",
    "normalize",
]

#: The collectives ocsched turns into traffic (normalized names).
COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "reduce",
    "gather",
    "scatter",
    "send",
    "recv",
)
#: Collectives whose ``Rank`` argument is the root, not the caller.
ROOTED = frozenset({"broadcast", "reduce", "gather", "scatter"})
#: Records that move no data of their own: waits, barriers, the end of a coalesced batch.
SKIPPED = frozenset({"wait", "barrier", "coalesced", "init", "monitored_barrier"})

_ALIASES = {
    "allreduce": "all_reduce",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "alltoall": "all_to_all",
    "alltoallv": "all_to_all",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "gather": "gather",
    "scatter": "scatter",
    "send": "send",
    "recv": "recv",
    "wait": "wait",
    "barrier": "barrier",
    "coalesced": "coalesced",
    "init": "init",
    "monitoredbarrier": "monitored_barrier",
}
_SUFFIXES = ("base", "intotensor", "tensor", "coalesced", "single", "multigpu")

#: Bytes per element of each PyTorch dtype name (``c10::toString`` spellings and ``torch.`` names).
DTYPE_BYTES: dict[str, int] = {
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "complexhalf": 4,
    "complexfloat": 8,
    "complex64": 8,
    "complexdouble": 16,
    "complex128": 16,
    "byte": 1,
    "uint8": 1,
    "char": 1,
    "int8": 1,
    "short": 2,
    "int16": 2,
    "int": 4,
    "int32": 4,
    "long": 8,
    "int64": 8,
    "bool": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
    "float8_e8m0fnu": 1,
}


@functools.lru_cache(maxsize=256)
def normalize(name: str) -> str | None:
    """The normalized collective of a trace's name, or None if unknown.

    >>> normalize("_allgather_base"), normalize("all_to_allv"), normalize("nccl:all_reduce")
    ('all_gather', 'all_to_all', 'all_reduce')
    >>> normalize("reduce_scatter_tensor_coalesced"), normalize("recvAnysource") is None
    ('reduce_scatter', True)
    """
    key = name.strip().lower()
    key = key.split(":", 1)[1] if key.startswith(("nccl:", "gloo:", "c10d:")) else key
    key = re.sub(r"[^a-z0-9]", "", key)
    changed = True
    while changed:
        changed = False
        if key in _ALIASES:
            return _ALIASES[key]
        for suffix in _SUFFIXES:
            if key.endswith(suffix) and len(key) > len(suffix):
                key = key[: -len(suffix)]
                changed = True
    return _ALIASES.get(key)


def dtype_bytes(dtype: Any, where: str) -> int:
    """Bytes per element of a dtype name; refuses an unknown one."""
    key = str(dtype).strip().strip('"').lower().removeprefix("torch.").replace("c10::", "")
    if key not in DTYPE_BYTES:
        raise InvalidInputError(f"{where}: unknown dtype {dtype!r} (known: {', '.join(sorted(DTYPE_BYTES))})")
    return DTYPE_BYTES[key]


def int_list(value: Any, what: str, where: str, *, abbreviated_hint: str) -> tuple[int, ...] | None:
    """Read a list of integers written as a JSON list or as the profiler's string ``"[1, 2, 3]"``.

    Returns None for a missing value. Refuses an abbreviated list (``"[1, 2, ..., ...]"``, the
    profiler's cut after 30 entries) with ``abbreviated_hint`` saying how to get complete lists.

    >>> int_list("[3, 0, 5]", "split", "f", abbreviated_hint="")
    (3, 0, 5)
    >>> int_list([], "split", "f", abbreviated_hint="")
    ()
    """
    if value is None:
        return None
    if isinstance(value, str):
        fast = _text_list(value)
        if fast is not None:
            return fast
        text = value.strip().strip('"').strip()
        if "..." in text:
            raise InvalidInputError(
                f"{where}: {what!r} is abbreviated ({text[:60]}{'...' if len(text) > 60 else ''}); "
                f"the rest is not in the trace and ocsched does not guess it. {abbreviated_hint}"
            )
        if not (text.startswith("[") and text.endswith("]")):
            raise InvalidInputError(f"{where}: {what!r} must be a list of integers; got {value!r}")
        body = text[1:-1].strip()
        parts = [p.strip() for p in body.split(",")] if body else []
        try:
            return tuple(int(p) for p in parts)
        except ValueError:
            raise InvalidInputError(f"{where}: {what!r} must be a list of integers; got {value!r}") from None
    if isinstance(value, list | tuple):
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise InvalidInputError(f"{where}: {what!r} must be a list of integers; got {value!r}")
        return tuple(value)
    raise InvalidInputError(f"{where}: {what!r} must be a list of integers; got {value!r}")


@functools.lru_cache(maxsize=1024)
def _text_list(text: str) -> tuple[int, ...] | None:
    """A complete list of integers written as text, or None (abbreviated or malformed: see int_list)."""
    if "..." in text:
        return None
    try:
        parsed = json.loads(text.strip().strip('"'))  # the C decoder: long lists are common
    except json.JSONDecodeError:
        return None
    if isinstance(parsed, list) and all(type(v) is int for v in parsed):
        return tuple(parsed)
    return None


def opt_int(value: Any, what: str, where: str) -> int | None:
    """An optional integer field (ints, or digits in a string as the profiler writes some)."""
    if type(value) is int:
        return value
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"{where}: {what!r} must be an integer; got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value.strip('"')):
        return int(value.strip().strip('"'))
    raise InvalidInputError(f"{where}: {what!r} must be an integer; got {value!r}")


@dataclass(slots=True)
class CommOp:
    """One communication call as one rank recorded it.

    ``group_rank`` follows PyTorch's ``Rank`` argument: the caller's rank in its group, the
    root's for rooted collectives, the peer's for send and recv. Sizes are bytes. ``in_split``
    and ``out_split`` count rows (dim 0) of the input and output tensors, per group rank (a row
    holds ``in_bytes / sum(in_split)`` bytes). Times are microseconds.
    """

    kind: str
    name: str
    file: str  # one shared string per file (cheap to pickle back from a worker)
    loc: str  # where in the file: "event 12", "node 7"
    group: str | None = None
    group_size: int | None = None
    group_rank: int | None = None
    group_ranks: tuple[int, ...] | None = None
    ranks_prefix: tuple[int, ...] = ()  # the visible part of an abbreviated group-ranks list
    seq: int | None = None
    in_bytes: int | None = None
    out_bytes: int | None = None
    in_split: tuple[int, ...] | None = None
    out_split: tuple[int, ...] | None = None
    peer: int | None = None
    tag: int | None = None  # Chakra's comm_tag: send and recv pair by (source, destination, tag)
    root_known: bool = True
    uniform_all_to_all: bool = False  # Chakra ALL_TO_ALL: comm_size split evenly over the group
    ts: float | None = None
    dur: float | None = None
    comp_before: float = 0.0  # Chakra: compute (µs) on the longest COMP path since the previous comm node

    @property
    def where(self) -> str:
        """The file and the place in it, for messages."""
        return f"{self.file}: {self.loc}"


@dataclass(slots=True)
class GroupInfo:
    """What one file says of a process group: its global ranks (if complete) and its size."""

    ranks: tuple[int, ...] | None = None
    size: int | None = None
    desc: str = ""
    prefix: tuple[int, ...] = ()  # an abbreviated list's visible part, checked against the full one


@dataclass(slots=True)
class RankTrace:
    """One rank's file: its rank, its comm ops in order, and what it says of groups."""

    file: str
    rank: int | None
    world_size: int | None
    ops: list[CommOp] = field(default_factory=list)
    groups: dict[str, GroupInfo] = field(default_factory=dict)
    timing: str = "none"  # "kernel", "cpu", "comp" or "none": where ts/dur (or comp_before) come from
    notes: list[str] = field(default_factory=list)

    # Workers send these back: ops as plain tuples pickle in half the time of slotted objects.
    def __getstate__(self) -> dict[str, Any]:
        state = {f.name: getattr(self, f.name) for f in fields(self)}
        state["ops"] = [tuple([getattr(op, n) for n in _OP_FIELDS]) for op in self.ops]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["ops"] = [CommOp(*values) for values in state["ops"]]
        for name, value in state.items():
            object.__setattr__(self, name, value)


_OP_FIELDS = tuple(f.name for f in fields(CommOp))
