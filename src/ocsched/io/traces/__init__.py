"""Traffic from traces: PyTorch profiler (Kineto) traces, PyTorch execution traces and Chakra ETs.

:func:`read_trace` turns a multi-rank trace into an :class:`~ocsched.Iteration`: each
collective (or send/recv, or set of concurrent ones) becomes a phase whose matrix is the
traffic between ports, in the time it takes at the link rate; the compute between them becomes
the phases' ``gap_before``. :data:`TRACE_FORMATS` lists the formats, one module each:
:mod:`~ocsched.io.traces.kineto`, :mod:`~ocsched.io.traces.pytorch_et`,
:mod:`~ocsched.io.traces.chakra` (with its protobuf and pure-Python codecs in
:mod:`~ocsched.io.traces._chakra_codec`). The semantics (matching, checks, order, phases, gaps,
ports) are :mod:`~ocsched.io.traces._assemble`'s; the collective formulas
:mod:`~ocsched.io.traces._collectives`'; :mod:`~ocsched.io.traces.synthetic` writes traces of
known traffic in every format.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.sparse as sp

from ocsched import Iteration, Phase
from ocsched.errors import InvalidInputError
from ocsched.io import MAX_PORTS
from ocsched.io.traces import chakra, kineto, pytorch_et
from ocsched.io.traces._assemble import CONCURRENT, GAPS, assemble
from ocsched.io.traces._collectives import ALGORITHMS
from ocsched.io.traces._ops import COLLECTIVES, RankTrace
from ocsched.io.traces._stream import expand, sniff
from ocsched.units import TIME_UNITS, bytes_per_second, bytes_to_seconds

__all__ = [
    "ALGORITHMS",
    "CODECS",
    "CONCURRENT",
    "GAPS",
    "TRACE_FORMATS",
    "TraceFormat",
    "TraceIteration",
    "detect_format",
    "is_trace",
    "provenance",
    "read_trace",
]

#: Codecs of the Chakra reader: protobuf if installed (``auto``), or the pure-Python one.
CODECS = ("auto", "protobuf", "python")
#: Trace sizes (bytes) below which files are parsed in this process (workers cost more).
_PARALLEL_FROM = 8 << 20


@dataclass(frozen=True)
class TraceFormat:
    """One trace format: what it is, how to recognise a file, how to read one rank's file."""

    description: str
    sniff: Callable[[Path, bytes], bool]
    read_rank: Callable[..., RankTrace]
    gaps: str  # where its gaps come from by default


def _read_chakra(path: Path, codec: str = "auto") -> RankTrace:
    return chakra.read_rank(path, codec_name=codec)


def _read_kineto(path: Path, codec: str = "auto") -> RankTrace:
    return kineto.read_rank(path)


def _read_et(path: Path, codec: str = "auto") -> RankTrace:
    return pytorch_et.read_rank(path)


#: The trace formats, by the name ``format=`` and ``--format`` take.
TRACE_FORMATS: dict[str, TraceFormat] = {
    "kineto": TraceFormat(
        "PyTorch profiler (Kineto) Chrome-trace JSON, one file per rank (.json, .json.gz)",
        lambda p, head: kineto.sniff_kineto(head),
        _read_kineto,
        "timestamps (NCCL kernels, else CPU events)",
    ),
    "pytorch-et": TraceFormat(
        "PyTorch execution trace (ExecutionTraceObserver JSON, schema 1.0.x/1.1.x), one file per rank",
        lambda p, head: pytorch_et.sniff_pytorch_et(head),
        _read_et,
        "none (execution traces have no timestamps), or the trace linker's ts/dur",
    ),
    "chakra": TraceFormat(
        "Chakra execution trace, <prefix>.<rank>.et protobuf streams (optionally gzipped)",
        chakra.sniff_chakra,
        _read_chakra,
        "COMP node durations",
    ),
}


def detect_format(file: str | os.PathLike[str]) -> str | None:
    """Return the trace format of one file, or None if it is none of :data:`TRACE_FORMATS`.

    >>> detect_format("missing.json") is None
    True
    """
    p = Path(file)
    if not p.is_file():
        return None
    head = sniff(p)
    for name in ("chakra", "kineto", "pytorch-et"):
        if TRACE_FORMATS[name].sniff(p, head):
            return name
    return None


def is_trace(path: str | os.PathLike[str]) -> bool:
    """Return True if ``path`` is a trace :func:`read_trace` reads (what ``ocsched schedule`` checks first).

    A trace file, an archive of them, a glob pattern matching them, or a folder holding only
    trace files (a folder of demand matrices is an iteration, not a trace).
    """
    text = os.fspath(path)
    p = Path(text)
    if p.is_file() and p.name.lower().endswith((".tar", ".tar.gz", ".tgz", ".zip")):
        return True
    if p.is_file():
        return detect_format(p) is not None
    if p.is_dir():
        files = [q for q in p.iterdir() if q.is_file() and not q.name.startswith(".")]
        kinds = {q: detect_format(q) for q in files}
        if "chakra" in kinds.values():  # a Chakra folder may keep its comm-group JSON beside the ranks
            kinds = {q: k for q, k in kinds.items() if k is not None or not q.name.lower().endswith(".json")}
        return bool(kinds) and all(k is not None for k in kinds.values())
    if any(c in text for c in "*?["):
        import glob

        found = [Path(m) for m in glob.glob(text)]
        return bool(found) and all(q.is_dir() or detect_format(q) is not None for q in found)
    return False


@dataclass(frozen=True, eq=False, init=False)
class TraceIteration(Iteration):
    """An :class:`~ocsched.Iteration` read from a trace, with its provenance in ``meta``.

    ``to_dict`` / ``to_json`` (what :func:`ocsched.io.write_iteration` writes) add a ``"meta"``
    object, which readers of the ``ocsched.sequence`` format ignore.
    """

    meta: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, phases: Iterable[Phase], *, meta: Mapping[str, Any]) -> None:
        super().__init__(phases)
        object.__setattr__(self, "meta", MappingProxyType(dict(meta)))

    def to_dict(self) -> dict[str, Any]:
        """The ``ocsched.sequence`` form with the provenance under ``"meta"``."""
        out = super().to_dict()
        out["meta"] = _plain(self.meta)
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def provenance(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The trace provenance an ``ocsched.sequence`` file written by ``ocsched import`` keeps, or ``{}``."""
    p = Path(path)
    if not (p.is_file() and p.suffix.lower() == ".json"):
        return {}
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    meta = data.get("meta") if isinstance(data, dict) else None
    trace = meta.get("trace") if isinstance(meta, dict) else None
    return {"trace": trace} if isinstance(trace, dict) else {}


def _parse(args: tuple[str, str, str]) -> RankTrace:
    fmt, path, codec = args
    return TRACE_FORMATS[fmt].read_rank(Path(path), codec)


def _formats(files: Sequence[Path], fmt: str) -> str:
    found = {f: detect_format(f) for f in files}
    if fmt in ("auto", "chakra") and "chakra" in found.values():
        # A Chakra trace folder may hold its comm-group JSON (given with comm_groups=): not a rank.
        found = {f: k for f, k in found.items() if not (k is None and f.name.lower().endswith(".json"))}
    if fmt == "auto":
        kinds = {k for k in found.values() if k is not None}
        unknown = [f for f, k in found.items() if k is None]
        if unknown:
            raise InvalidInputError(
                f"`trace` file {unknown[0]} is not a trace ocsched reads ({', '.join(TRACE_FORMATS)})"
            )
        if len(kinds) > 1:
            by = {k: next(f for f, kk in found.items() if kk == k) for k in kinds}
            shown = ", ".join(f"{by[k]} is {k}" for k in sorted(kinds))
            raise InvalidInputError(f"`trace` mixes formats: {shown}")
        return kinds.pop()
    if fmt not in TRACE_FORMATS:
        raise InvalidInputError(f"`format` must be auto or one of {', '.join(TRACE_FORMATS)}; got {fmt!r}")
    for f, k in found.items():
        if k != fmt:
            raise InvalidInputError(
                f"`trace` file {f} is not a {fmt} trace"
                + (f" (it is a {k} trace)" if k else " (it is no trace format ocsched reads)")
            )
    return fmt


def _read_all(files: Sequence[Path], fmt: str, codec: str, workers: int | None) -> list[RankTrace]:
    total = sum(f.stat().st_size for f in files)
    n = os.cpu_count() or 1
    w = min(len(files), n) if workers is None else min(len(files), workers)
    jobs = [(fmt, str(f), codec) for f in files]
    if w <= 1 or (workers is None and total < _PARALLEL_FROM):
        return [_parse(j) for j in jobs]
    # fork: the workers inherit the imported library (spawning re-imports numpy and numba).
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with ProcessPoolExecutor(max_workers=w, mp_context=multiprocessing.get_context(method)) as pool:
        return list(pool.map(_parse, jobs, chunksize=max(1, len(jobs) // (4 * w))))


def _mapping(value: Any, what: str) -> dict[str, Any]:
    """A mapping given inline or as a JSON file (``--port-map``, ``--comm-groups``)."""
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    p = Path(os.fspath(value))
    try:
        text = p.read_text()
    except OSError as exc:
        raise InvalidInputError(f"`{what}` file {p} cannot be read: {exc.strerror or exc}") from None
    if p.suffix.lower() == ".csv":
        out: dict[str, Any] = {}
        for k, line in enumerate(text.splitlines()):
            line = line.split("#", 1)[0].strip()
            if not line or (k == 0 and not line.replace(",", "").replace(" ", "").lstrip("-").isdigit()):
                continue
            parts = [x.strip() for x in line.split(",")]
            if len(parts) != 2:
                raise InvalidInputError(f"`{what}` file {p}: line {k + 1} must be 'rank,port'; got {line!r}")
            out[parts[0]] = parts[1]
        return out
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"`{what}` file {p} is not JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"`{what}` file {p} must hold a JSON object; got {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise InvalidInputError(f"`{what}` must be an integer; got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise InvalidInputError(f"`{what}` must be an integer; got {value!r}")


def _ports(
    ranks: Sequence[int], ranks_per_port: int | None, port_map: Any
) -> tuple[np.ndarray[Any, np.dtype[np.int64]], int, str]:
    top = max(ranks)
    if ranks_per_port is not None and port_map is not None:
        raise InvalidInputError("give `ranks_per_port` or `port_map`, not both")
    if port_map is not None:
        raw = _mapping(port_map, "port_map")
        table = {_int(k, "port_map rank"): _int(v, "port_map port") for k, v in raw.items()}
        missing = [r for r in ranks if r not in table]
        if missing:
            raise InvalidInputError(f"`port_map` gives no port for rank {missing[0]} (of the trace's ranks)")
        bad = [(r, p) for r, p in table.items() if not 0 <= p < MAX_PORTS]
        if bad:
            raise InvalidInputError(
                f"`port_map` ports must be in 0..{MAX_PORTS - 1}; rank {bad[0][0]} -> {bad[0][1]}"
            )
        port_of = np.full(top + 1, -1, dtype=np.int64)
        for r in ranks:
            port_of[r] = table[r]
        return port_of, max(table[r] for r in ranks) + 1, "map"
    k = 1 if ranks_per_port is None else _int(ranks_per_port, "ranks_per_port")
    if k < 1:
        raise InvalidInputError(f"`ranks_per_port` must be >= 1; got {k}")
    port_of = np.arange(top + 1, dtype=np.int64) // k
    return port_of, int(port_of[top]) + 1, "identity" if k == 1 else f"ranks_per_port={k}"


def _choice(value: str, choices: Sequence[str], what: str) -> str:
    if value not in choices:
        raise InvalidInputError(f"`{what}` must be one of {', '.join(choices)}; got {value!r}")
    return value


def read_trace(
    path: str | os.PathLike[str],
    *,
    link_rate: str | float,
    format: str = "auto",
    time_unit: str = "s",
    collective_algorithm: str = "ring",
    concurrent: str = "merge",
    gaps: str = "auto",
    ranks_per_port: int | None = None,
    port_map: Mapping[Any, Any] | str | os.PathLike[str] | None = None,
    comm_groups: Mapping[Any, Sequence[int]] | str | os.PathLike[str] | None = None,
    skip: Iterable[str] = (),
    workers: int | None = None,
    codec: str = "auto",
) -> TraceIteration:
    """Read a multi-rank trace into an iteration: one phase per collective, compute as gaps.

    Parameters
    ----------
    path
        A folder of per-rank files, a glob pattern, an archive (``.tar(.gz)``, ``.zip``), or one file.
    link_rate
        One OCS link's line rate (``"400Gbps"``, ``"50GB/s"``, or bytes per second): bytes become
        time at this rate.
    format
        ``"auto"`` (from the files' contents) or a key of :data:`TRACE_FORMATS`.
    time_unit
        Unit of the demand's entries and gaps (a key of :data:`ocsched.units.TIME_UNITS`);
        ``--delta`` is then in this unit too.
    collective_algorithm
        How all-reduce, all-gather, reduce-scatter, broadcast and reduce move data (one of
        :data:`ALGORITHMS`; formulas in :mod:`~ocsched.io.traces._collectives`). All-to-all(v)
        and send/recv are exact whatever it is.
    concurrent
        ``"merge"``: operations no rank orders (and, with timestamps, overlapping in time) share
        a phase; ``"separate"``: one phase each.
    gaps
        ``"auto"``, ``"timestamps"``, ``"comp"`` or ``"none"`` (see :mod:`~ocsched.io.traces._assemble`).
    ranks_per_port, port_map
        Ranks to ports: identity by default; ``rank // ranks_per_port``; or a mapping
        ``{rank: port}`` (or a JSON object / ``rank,port`` CSV file). Traffic inside a port is dropped.
    comm_groups
        Process groups ``{name: [global ranks]}`` (or ASTRA-sim's ``--comm-group-configuration``
        JSON file), for traces that do not list them.
    skip
        Collective kinds to leave out (e.g. ``("broadcast",)`` for Chakra broadcasts, which name
        no root); recorded in ``meta``.
    workers
        Processes parsing ranks in parallel (default: the CPUs, for traces over 8 MB).
    codec
        Chakra only: ``"auto"``, ``"protobuf"`` or ``"python"`` (:data:`CODECS`).

    Returns
    -------
    TraceIteration
        The iteration, with ``meta["trace"]``: source files, format, options, per phase its
        collectives (name, process group, seq, bytes) and the local bytes dropped.

    Raises
    ------
    InvalidInputError
        One line naming the file, rank and sequence number, for anything the trace does not say
        exactly: a missing rank or group member, a sequence number seen on some ranks only,
        inconsistent splits or sizes, an abbreviated list, a file of another format.

    Examples
    --------
    >>> import tempfile
    >>> from ocsched.io.traces import synthetic
    >>> folder = tempfile.mkdtemp()
    >>> ops = [synthetic.all_to_allv([[0, 2, 1], [3, 0, 0], [1, 1, 0]], row_bytes=1024)]
    >>> _ = synthetic.write(folder, ops, format="kineto")
    >>> it = read_trace(folder, link_rate=1.0)  # 1 byte/s: entries are bytes
    >>> it.phases[0].demand.to_dense().tolist()
    [[0.0, 2048.0, 1024.0], [3072.0, 0.0, 0.0], [1024.0, 1024.0, 0.0]]
    """
    rate = bytes_per_second(link_rate, name="link_rate")
    _choice(time_unit, tuple(TIME_UNITS), "time_unit")
    _choice(collective_algorithm, ALGORITHMS, "collective_algorithm")
    _choice(concurrent, CONCURRENT, "concurrent")
    _choice(gaps, GAPS, "gaps")
    _choice(codec, CODECS, "codec")
    skip_set = frozenset(skip)
    for s in skip_set:
        _choice(s, COLLECTIVES, "skip")
    if workers is not None and _int(workers, "workers") < 1:
        raise InvalidInputError(f"`workers` must be >= 1; got {workers}")
    groups = None
    if comm_groups is not None:
        raw = _mapping(comm_groups, "comm_groups")
        groups = {}
        for k, v in raw.items():
            if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
                raise InvalidInputError(f"`comm_groups` group {k!r} must be a list of ranks; got {v!r}")
            groups[k] = v
    with tempfile.TemporaryDirectory(prefix="ocsched-trace-") as scratch:
        files = expand(path, Path(scratch))
        fmt = _formats(files, format)
        files = [f for f in files if fmt != "chakra" or not f.name.lower().endswith(".json")]
        traces = _read_all(files, fmt, codec, workers)
        owner: dict[int, str] = {}
        for t in traces:
            if t.rank is None:
                raise InvalidInputError(
                    f"`trace` file {t.file} does not say its rank (no distributedInfo.rank, and its name "
                    "gives none: name files rank-<k>.json or <prefix>.<k>.et)"
                )
            if t.rank < 0 or t.rank >= MAX_PORTS:
                raise InvalidInputError(f"`trace` file {t.file}: rank {t.rank} is out of range")
            if t.rank in owner:
                raise InvalidInputError(f"`trace` files {owner[t.rank]} and {t.file} are both rank {t.rank}")
            owner[t.rank] = t.file
            if t.world_size is not None and t.rank >= t.world_size:
                raise InvalidInputError(
                    f"`trace` file {t.file}: rank {t.rank} >= its world size {t.world_size}"
                )
        shown = {t.file: t.rank for t in traces}
        if Path(scratch) in Path(traces[0].file).parents:
            shown = {os.path.relpath(f, scratch): r for f, r in shown.items()}
        ranks = sorted(owner)
        port_of, n, mapping = _ports(ranks, ranks_per_port, port_map)
        specs, meta = assemble(
            traces,
            algorithm=collective_algorithm,
            concurrent=concurrent,
            gaps=gaps,
            port_of=port_of,
            comm_groups=groups,
            skip=skip_set,
        )
    if not specs:
        raise InvalidInputError("`trace` has no traffic between ports (all of it stays inside ports)")
    per_unit = TIME_UNITS[time_unit]
    phases = []
    for spec in specs:
        seconds = bytes_to_seconds(spec.val, rate) * per_unit
        matrix = sp.coo_array((seconds, (spec.src, spec.dst)), shape=(n, n))
        matrix.sum_duplicates()
        phases.append(Phase(matrix, gap_before=spec.gap_us / (1e6 / per_unit), name=spec.name))
    meta.update(
        format=fmt,
        source=os.fspath(path),
        files=shown,
        link_rate=link_rate if isinstance(link_rate, str) else float(link_rate),
        link_rate_bytes_per_s=rate,
        time_unit=time_unit,
        ports=n,
        ranks_to_ports=mapping,
        phases=[{"name": s.name, "ops": s.ops, "local_bytes": s.local_bytes} for s in specs],
    )
    return TraceIteration(phases, meta={"trace": meta})
