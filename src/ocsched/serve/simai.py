"""SimAI's external OXC service: collective flows as ``[src_rank, dst_rank, step, datasize]``.

SimAI (with ``AS_OXC_ENABLE=1``) posts a cross-rack collective to ``/api/oxc/allreduce``: the
rank table, ``dpCommDomain`` (groups of ranks, each one communicator), ``commDomainVolume``
(bytes of each rank's buffer), ``rankIdRackIdMap`` and ``algName``. It reads back a list of
flows and turns each step into one round of sends that waits for the previous step's sends into
its source (each source and each destination at most once per step, steps contiguous from 0).

Two kinds of flows, by ``algName``:

- ``ALGO_OXC_RING`` (SimAI's default): the ring, with the ranks of one rack adjacent so that it
  crosses between racks as few times as there are racks. All-reduce is a reduce-scatter and an
  all-gather of 2 (k - 1) steps, each rank sending one of k chunks to its successor per step;
  all-to-all is k - 1 shifts, step t sending each rank's chunk for the rank t + 1 ahead.
- the name of an ocsched scheduler (``spectra``, ...): the traffic as a demand matrix between
  the ranks (all-to-all: every rank's chunk for every other; all-reduce: the reduce-scatter and
  then the all-gather, direct), scheduled on the fabric of the request's optional ``fabric``
  field (one switch without delay by default) in bytes at line rate. Every configuration is a
  step, in order of start; a step's flows are its circuits with the bytes they carry.

Groups must not share ranks (a shared rank would send twice in one step); all groups start at
step 0. Chunk sizes are whole bytes: the k chunks of V bytes differ by at most one byte and add
up to V.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ocsched.fabric import Fabric
from ocsched.model import Demand, Schedule
from ocsched.schedulers import ALIASES, SCHEDULERS, schedule
from ocsched.serve.limits import Limits
from ocsched.serve.requests import RequestError, field, only
from ocsched.validation import validate

RING = "ALGO_OXC_RING"
#: The collectives served, by endpoint name.
COLLECTIVES = ("allreduce", "alltoall")
#: SimAI's default rack of a rank missing from the map: ``rank // GPUS_PER_SERVER``.
GPUS_PER_SERVER = 8
MAX_VOLUME = 2**63 - 1

KEYS = frozenset({"ranktable", "dpCommDomain", "commDomainVolume", "rankIdRackIdMap", "algName", "fabric"})


@dataclass(frozen=True)
class Request:
    """A SimAI request, reduced to what the flows depend on (its canonical form, the cache key)."""

    collective: str
    groups: tuple[tuple[int, ...], ...]  # each ordered as its ring runs
    volume: int
    algorithm: str
    fabric: tuple[tuple[float, float], ...]  # (delta, rate) per switch, for ocsched algorithms


def algorithms() -> list[str]:
    """The ``algName`` values served: the ring, and every ocsched scheduler."""
    return [RING, *SCHEDULERS]


def parse(collective: str, body: Mapping[str, Any], limits: Limits) -> Request:
    """Check a SimAI body and return its canonical :class:`Request`.

    Examples
    --------
    >>> r = parse("allreduce", {"dpCommDomain": [[15, 7]], "commDomainVolume": 8,
    ...     "rankIdRackIdMap": {"7": "r0", "15": "r1"}, "algName": "ALGO_OXC_RING"}, Limits())
    >>> r.groups, r.volume
    (((7, 15),), 8)
    """
    only(body, KEYS)
    known = _ranktable(body.get("ranktable"), limits)
    racks = _rack_map(body.get("rankIdRackIdMap"), known)
    raw = body.get("dpCommDomain")
    if not isinstance(raw, list) or not raw:
        raise RequestError(
            422, "dpCommDomain", f"`dpCommDomain` must be a non-empty list of rank lists; got {raw!r}"
        )
    seen: set[int] = set()
    groups = []
    for g, ranks in enumerate(raw):
        where = f"dpCommDomain[{g}]"
        if not isinstance(ranks, list) or not all(_is_rank(r) for r in ranks):
            raise RequestError(422, "dpCommDomain", f"`{where}` must be a list of ranks (integers >= 0)")
        if len(seen) + len(ranks) > limits.max_ports:
            raise RequestError(
                422, "dpCommDomain", f"`dpCommDomain` names more than {limits.max_ports} ranks"
            )
        for r in ranks:
            if r in seen:
                raise RequestError(
                    422, "dpCommDomain", f"`{where}` repeats rank {r} (of this or another group)"
                )
            if known is not None and r not in known:
                raise RequestError(422, "dpCommDomain", f"`{where}` names rank {r}, absent from `ranktable`")
            seen.add(r)
        groups.append(_ring_order(ranks, racks))
    # Each step sends at most once from every rank: k(k - 1) flows per all-to-all of k ranks at the
    # least, twice that for an all-reduce; measured before anything is built.
    per = 2 if collective == "allreduce" else 1
    total = sum(per * len(g) * (len(g) - 1) for g in groups)
    if total > limits.max_flows:
        raise RequestError(
            422, "dpCommDomain", f"`dpCommDomain` asks for {total} flows or more; at most {limits.max_flows}"
        )
    volume = body.get("commDomainVolume")
    if isinstance(volume, float) and volume.is_integer():
        volume = int(volume)
    if isinstance(volume, bool) or not isinstance(volume, int) or not 0 <= volume <= MAX_VOLUME:
        raise RequestError(
            422,
            "commDomainVolume",
            f"`commDomainVolume` must be a whole number of bytes >= 0; got {volume!r}",
        )
    alg = body.get("algName", RING)
    alg = ALIASES.get(alg, alg) if isinstance(alg, str) else alg
    if alg not in algorithms():
        raise RequestError(
            422, "algName", f"unknown `algName` {alg!r}; choose one of {', '.join(algorithms())}"
        )
    fab: tuple[tuple[float, float], ...] = ((0.0, 1.0),)
    if body.get("fabric") is not None:
        with field("fabric"):
            f = Fabric.from_dict(body["fabric"], name="fabric")
        if f.size > limits.max_switches or f.down or f.failed_links or f.reconfiguration.keeps_circuits:
            raise RequestError(
                422,
                "fabric",
                f"`fabric` must be at most {limits.max_switches} all-stop switches without failures",
            )
        fab = tuple(zip(f.deltas, f.rates, strict=True))
    return Request(collective, tuple(groups), volume, alg, fab if alg != RING else ())


def _is_rank(r: object) -> bool:
    return isinstance(r, int) and not isinstance(r, bool) and 0 <= r < 2**31


def _ranktable(raw: Any, limits: Limits) -> dict[int, str] | None:
    """The ranks of a rank table and each one's first network instance (its rack), if it has one."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise RequestError(422, "ranktable", f"`ranktable` must be an object; got {type(raw).__name__}")
    ranks = raw.get("rank_list")
    if not isinstance(ranks, list):
        raise RequestError(422, "ranktable", "`ranktable.rank_list` must be a list")
    if len(ranks) > limits.max_ports:
        raise RequestError(
            422, "ranktable", f"`ranktable.rank_list` lists {len(ranks)}; at most {limits.max_ports}"
        )
    count = raw.get("rank_count")
    if count is not None and count != len(ranks):
        raise RequestError(
            422, "ranktable", f"`ranktable.rank_count` = {count!r} but `rank_list` lists {len(ranks)} ranks"
        )
    out: dict[int, str] = {}
    for k, entry in enumerate(ranks):
        rid = entry.get("rank_id") if isinstance(entry, Mapping) else None
        if not _is_rank(rid):
            raise RequestError(
                422, "ranktable", f"`ranktable.rank_list[{k}].rank_id` must be an integer >= 0"
            )
        assert isinstance(rid, int)
        levels = entry.get("level_list")
        rack = ""
        if isinstance(levels, list) and levels and isinstance(levels[0], Mapping):
            rack = str(levels[0].get("net_instance_id", ""))
        out[rid] = rack
    return out


def _rack_map(raw: Any, known: dict[int, str] | None) -> dict[int, str]:
    """Each rank's rack: ``rankIdRackIdMap``, else the rank table's network instance."""
    racks = {r: rack for r, rack in (known or {}).items() if rack}
    if raw is None:
        return racks
    if not isinstance(raw, Mapping):
        raise RequestError(
            422, "rankIdRackIdMap", f"`rankIdRackIdMap` must be an object; got {type(raw).__name__}"
        )
    for key, rack in raw.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit()) or not isinstance(rack, str):
            raise RequestError(
                422,
                "rankIdRackIdMap",
                f"`rankIdRackIdMap` maps rank strings to rack strings; got {key!r}: {rack!r}",
            )
        racks[int(key)] = rack
    return racks


def _ring_order(ranks: list[int], racks: dict[int, str]) -> tuple[int, ...]:
    """The ranks with each rack's adjacent: racks by their smallest rank, ranks ascending within."""
    rack_of = {r: racks.get(r, f"rack_{r // GPUS_PER_SERVER}") for r in ranks}
    first: dict[str, int] = {}
    for r in sorted(ranks):
        first.setdefault(rack_of[r], r)
    return tuple(sorted(ranks, key=lambda r: (first[rack_of[r]], r)))


def chunks(volume: int, k: int) -> list[int]:
    """Split ``volume`` bytes into ``k`` whole chunks differing by at most one byte.

    >>> chunks(10, 4)
    [3, 3, 2, 2]
    """
    q, r = divmod(volume, k)
    return [q + (j < r) for j in range(k)]


def flows(req: Request) -> list[list[int]]:
    """The reply: ``[src_rank, dst_rank, step, datasize]`` for every group, steps from 0.

    >>> flows(Request("allreduce", ((7, 15),), 134217728, RING, ()))
    [[7, 15, 0, 67108864], [15, 7, 0, 67108864], [7, 15, 1, 67108864], [15, 7, 1, 67108864]]
    """
    out: list[list[int]] = []
    for group in req.groups:
        if len(group) < 2:
            continue
        if req.algorithm == RING:
            out.extend(_ring(group, req.volume, req.collective))
        else:
            out.extend(_scheduled(group, req))
    out.sort(key=lambda f: (f[2], f[0]))
    return out


def _ring(group: tuple[int, ...], volume: int, collective: str) -> list[list[int]]:
    k = len(group)
    size = chunks(volume, k)
    out: list[list[int]] = []
    if collective == "allreduce":
        # Reduce-scatter: at step t position p passes chunk (p - t) on; all-gather: chunk (p + 1 - t).
        for t in range(2 * (k - 1)):
            shift = -t if t < k - 1 else 1 - (t - (k - 1))
            out.extend([group[p], group[(p + 1) % k], t, size[(p + shift) % k]] for p in range(k))
    else:
        for t in range(k - 1):
            out.extend([group[p], group[(p + t + 1) % k], t, size[(p + t + 1) % k]] for p in range(k))
    return out


def _scheduled(group: tuple[int, ...], req: Request) -> list[list[int]]:
    """The collective's demand between the group's ranks, scheduled, one step per configuration."""
    k = len(group)
    size = np.array(chunks(req.volume, k), dtype=np.int64)
    # demand[i, j]: bytes rank i sends rank j; all-to-all and the reduce-scatter send chunk j to j.
    phase = np.broadcast_to(size[None, :], (k, k)).copy()
    np.fill_diagonal(phase, 0)
    fab = Fabric.from_deltas([d for d, _ in req.fabric], rates=[r for _, r in req.fabric])
    phases = [phase] if req.collective == "alltoall" else [phase, phase.T.copy()]
    out: list[list[int]] = []
    step = 0
    for bytes_ in phases:
        steps = _steps(bytes_, fab, req.algorithm)
        out.extend([group[i], group[j], step + t, int(b)] for t, i, j, b in steps)
        step += max((t for t, *_ in steps), default=-1) + 1
    return out


def _steps(
    bytes_: np.ndarray[Any, np.dtype[np.int64]], fab: Fabric, algorithm: str
) -> list[tuple[int, int, int, int]]:
    """``(step, i, j, bytes)`` of the schedule of ``bytes_``: each configuration a step, by start time.

    A circuit carries ``ceil(capacity)`` whole bytes of what its pair has left, so the steps add up
    to the demand exactly (a valid schedule's capacity covers it).
    """
    if not bytes_.any():
        return []
    dem = Demand.from_matrix(sp.coo_array(bytes_.astype(np.float64)))
    sched: Schedule = schedule(dem, fabric=fab, algorithm=algorithm, rng=0)
    report = validate(sched, dem, fabric=fab)
    if not report.ok:  # a bug, never a reply
        raise RuntimeError(f"internal error: the schedule found is invalid ({report.violations[0]})")
    left = bytes_.copy()
    rates = fab.rates
    confs = sorted(
        ((c.start, b, c) for b, sw in enumerate(sched.switches) for c in sw), key=lambda x: (x[0], x[1])
    )
    out: list[tuple[int, int, int, int]] = []
    step = 0
    for _, b, c in confs:
        ins, outs = c.circuit_arrays()
        give = np.minimum(left[ins, outs], int(np.ceil(c.duration * rates[b])))
        keep = give > 0
        if not keep.any():
            continue
        left[ins[keep], outs[keep]] -= give[keep]
        out.extend(
            (step, int(i), int(j), int(g)) for i, j, g in zip(ins[keep], outs[keep], give[keep], strict=True)
        )
        step += 1
    if left.any():  # the schedule validated, so its capacity covers every byte
        raise RuntimeError("internal error: the steps do not carry the whole collective")
    return out
