"""Circuit export: a schedule as one row per circuit, written as CSV or Parquet."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ocsched._extras import install_hint
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.io._files import write_atomic, write_text
from ocsched.iteration import IterationSchedule
from ocsched.model import Configuration, Schedule
from ocsched.timing import held_times

#: Columns of a circuit table (:func:`circuit_table`), one row per circuit of every configuration.
CIRCUIT_COLUMNS = ("switch", "start", "end", "src", "dst", "served")
#: The column an iteration schedule's table adds: the phase (0-based) of the circuit's configuration.
PHASE_COLUMN = "phase"
CIRCUIT_FORMATS = ("circuits-csv", "circuits-parquet")

_INT_COLUMNS = ("switch", "src", "dst", PHASE_COLUMN)


def schedule_fabric(schedule: Schedule | IterationSchedule) -> Fabric:
    """Return the fabric ``schedule`` runs on, one switch per timeline.

    A :class:`~ocsched.model.Schedule` records its own (:meth:`~ocsched.model.Schedule.on_fabric`);
    an iteration schedule carries one in its ``fabric`` attribute when it has one, and runs on
    identical all-stop switches of its ``delta`` otherwise. A recorded fabric whose size differs
    from the number of timelines (an invalid schedule, which the validator reports) is replaced
    by that uniform one, so a table or a chart can still be drawn.

    >>> from ocsched.fabric import Fabric
    >>> schedule_fabric(Schedule(ports=2, delta=0.5, switches=((), ()))).deltas
    (0.5, 0.5)
    """
    s = max(1, len(schedule.switches))
    # IterationSchedule is to gain a `fabric` attribute; until it has one, it is uniform of `delta`.
    fab = schedule.on_fabric() if isinstance(schedule, Schedule) else getattr(schedule, "fabric", None)
    if not isinstance(fab, Fabric) or fab.size != s:
        fab = Fabric.uniform(s, schedule.delta if np.isfinite(schedule.delta) else 0.0)
    return fab


def served_per_circuit(
    confs: Sequence[Configuration], fabric: Fabric, switch: int
) -> list[NDArray[np.float64]]:
    """Return, per configuration of ``switch``, the demand each circuit serves (in its circuit order).

    Served is the switch's rate times the time the circuit is lit (:func:`ocsched.timing.held_times`):
    the configuration's duration, plus, under the partial model, the gap before it for a circuit
    kept from the previous configuration.
    """
    rate = fabric.switches[switch].rate
    tuples = []
    for c in confs:
        ins, outs = c.circuit_arrays()
        keep = outs >= 0
        tuples.append((c.start, c.duration, ins[keep], outs[keep]))
    held = held_times(tuples, model=fabric.model, windows=fabric.windows(switch))
    return [rate * h for h in held]


def circuit_table(schedule: Schedule | IterationSchedule) -> dict[str, NDArray[Any]]:
    """Return the schedule as columns, one row per circuit: switch, start, end, src, dst, served.

    ``served`` is the demand the circuit carries: its switch's rate times the time it is lit (the
    configuration's duration; under the partial model, a circuit kept from the previous
    configuration of its switch is also lit, and serves, through the gap before ``start``).
    Summed over the rows of an entry, it is what the validator credits to that entry. Rows follow
    the schedule: by switch, then configuration, then input port. When the schedule names its
    ports (``meta["port_names"]``), ``src_name`` and ``dst_name`` columns are added. An iteration
    schedule's table has a ``phase`` column after ``served``: the phase of each configuration.

    Examples
    --------
    >>> from ocsched.model import Configuration
    >>> c = Configuration.from_circuits(0.5, 2.0, [(0, 1), (1, 0)], ports=2)
    >>> t = circuit_table(Schedule(ports=2, delta=0.5, switches=((c,),)))
    >>> t["src"].tolist(), t["dst"].tolist(), t["end"].tolist(), t["served"].tolist()
    ([0, 1], [1, 0], [2.5, 2.5], [2.0, 2.0])

    A switch of rate 2 serves twice its time:

    >>> from ocsched.fabric import Fabric
    >>> fast = Schedule(ports=2, delta=0.5, switches=((c,),), fabric=Fabric.from_deltas([0.5], rates=[2.0]))
    >>> circuit_table(fast)["served"].tolist()
    [4.0, 4.0]
    """
    fabric = schedule_fabric(schedule)
    iteration = isinstance(schedule, IterationSchedule)
    keys = [*CIRCUIT_COLUMNS, PHASE_COLUMN] if iteration else list(CIRCUIT_COLUMNS)
    cols: dict[str, list[Any]] = {k: [] for k in keys}
    for b, sw in enumerate(schedule.switches):
        served = served_per_circuit(sw, fabric, b)
        phases = schedule.phase_of[b] if isinstance(schedule, IterationSchedule) else [0] * len(sw)
        for c, amounts, k in zip(sw, served, phases, strict=True):
            circuits = c.circuits
            cols["switch"] += [b] * len(circuits)
            cols["start"] += [c.start] * len(circuits)
            cols["end"] += [c.end] * len(circuits)
            cols["src"] += [i for i, _ in circuits]
            cols["dst"] += [j for _, j in circuits]
            cols["served"] += amounts.tolist()
            if iteration:
                cols[PHASE_COLUMN] += [k] * len(circuits)
    out: dict[str, NDArray[Any]] = {
        k: np.asarray(v, dtype=np.int64 if k in _INT_COLUMNS else np.float64) for k, v in cols.items()
    }
    names = schedule.meta.get("port_names")
    if isinstance(names, list) and len(names) == schedule.ports:
        label = np.asarray([str(x) for x in names], dtype=object)
        out["src_name"] = label[out["src"]]
        out["dst_name"] = label[out["dst"]]
    return out


def write_circuits(
    schedule: Schedule | IterationSchedule,
    path: str | os.PathLike[str],
    *,
    format: str = "circuits-csv",
    force: bool = False,
) -> Path:
    """Write :func:`circuit_table` as CSV (with a header) or Parquet (needs ``ocsched[sweep]``)."""
    if format not in CIRCUIT_FORMATS:
        raise InvalidInputError(f"`format` must be one of {', '.join(CIRCUIT_FORMATS)}; got {format!r}")
    table = circuit_table(schedule)
    if format == "circuits-parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise InvalidInputError(
                f"circuits-parquet needs pyarrow: {install_hint('sweep')} (or use circuits-csv)"
            ) from None
        arrow = pa.table({k: pa.array(v.tolist()) for k, v in table.items()})
        return write_atomic(path, lambda f: pq.write_table(arrow, f), force=force)
    text = circuits_csv(table)
    return write_text(path, text, force=force)


def circuits_csv(table: dict[str, NDArray[Any]]) -> str:
    """Format a :func:`circuit_table` as CSV text with a header line (floats round-trip exactly)."""

    def cell(x: Any) -> str:
        if isinstance(x, float | np.floating):
            return repr(float(x))
        text = str(x)
        return f'"{text.replace(chr(34), chr(34) * 2)}"' if any(ch in text for ch in ',"\n') else text

    keys = list(table)
    lines = [",".join(keys)]
    rows = len(table[keys[0]]) if keys else 0
    lines += [",".join(cell(table[k][r]) for k in keys) for r in range(rows)]
    return "\n".join(lines) + "\n"
