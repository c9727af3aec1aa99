"""Schedules out: the files simulators, controllers and viewers read (one module per format).

:data:`EXPORTERS` maps a format name to its :class:`Exporter` (writer, reader, whether it takes
iteration schedules, its file extension); :func:`export` writes a schedule in one of them and
:func:`read_export` reads it back, so ``validate(read_export(export(...)))`` holds for each.

Examples
--------
>>> import tempfile, pathlib, ocsched
>>> sched = ocsched.schedule([[0, 1], [1, 0]], switches=1, delta=0.5)
>>> out = pathlib.Path(tempfile.mkdtemp()) / "orders.json"
>>> export(sched, format="oxc-orders", path=out).info
{'recourse': 2}
>>> ocsched.validate(read_export(out, format="oxc-orders"), [[0, 1], [1, 0]]).ok
True
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.io.exports import astra_sim, chrome_trace, circuits, ns3, oxc, slices
from ocsched.io.exports._common import AnySchedule, ExportResult

__all__ = ["EXPORTERS", "ExportResult", "Exporter", "export", "read_export"]


@dataclass(frozen=True)
class Exporter:
    """One export format: how to write it and read it back."""

    write: Callable[..., ExportResult]
    read: Callable[[Path], AnySchedule]
    iterations: bool  # takes iteration schedules (with their phases)
    extension: str  # of the file written; "" for a folder
    summary: str


def _astra_write(schedule: AnySchedule, path: str | os.PathLike[str], **options: Any) -> ExportResult:
    if "link_rate" not in options:
        raise InvalidInputError("astra-sim needs `link_rate` (e.g. '400Gbps'): comm_size is in bytes")
    return ExportResult(tuple(astra_sim.write_astra_sim(schedule, path, **options)))


#: Export formats by name (the CLI's ``--format`` choices).
EXPORTERS: dict[str, Exporter] = {
    "circuits": Exporter(
        circuits.write_circuits_csv, circuits.read_circuits_csv, True, ".csv", "one CSV row per circuit"
    ),
    "circuits-parquet": Exporter(
        circuits.write_circuits_parquet,
        circuits.read_circuits_parquet,
        True,
        ".parquet",
        "the same as Parquet",
    ),
    "chrome-trace": Exporter(
        chrome_trace.write_chrome_trace, chrome_trace.read_chrome_trace, True, ".json", "Perfetto timeline"
    ),
    "oxc-orders": Exporter(
        oxc.write_oxc_orders, oxc.read_oxc_orders, True, ".json", "OCS controller delete/add batches"
    ),
    "slices": Exporter(slices.write_slices, slices.read_slices, True, ".txt", "Opera/OpenOptics slice grid"),
    "ns3": Exporter(ns3.write_ns3, ns3.read_ns3, True, "", "ns-3 circuit-switch topology files"),
    "astra-sim": Exporter(_astra_write, astra_sim.read_astra_sim, True, "", "ASTRA-sim Chakra ETs"),
}
#: Older names still accepted.
ALIASES = {"circuits-csv": "circuits"}


def _exporter(format: str) -> Exporter:
    name = ALIASES.get(format, format)
    if name not in EXPORTERS:
        raise InvalidInputError(f"`format` must be one of {', '.join(EXPORTERS)}; got {format!r}")
    return EXPORTERS[name]


def _options(write: Callable[..., ExportResult]) -> set[str]:
    target = astra_sim.write_astra_sim if write is _astra_write else write
    params = inspect.signature(target).parameters.values()
    return {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def export(
    schedule: AnySchedule, *, format: str, path: str | os.PathLike[str], force: bool = False, **options: Any
) -> ExportResult:
    """Write ``schedule`` at ``path`` in ``format`` (a key of :data:`EXPORTERS`).

    Parameters
    ----------
    schedule
        A single-matrix or iteration schedule, on any fabric.
    format
        The format's name.
    path
        The file (or, for ``ns3`` and ``astra-sim``, the folder) to write.
    force
        Overwrite existing files.
    **options
        The format's own options: ``time_unit`` (chrome-trace, slices, astra-sim), ``merge``
        and ``offset_us`` (chrome-trace), ``slice_length`` and ``method`` (slices), ``link_rate``,
        ``prefix`` and ``collective`` (astra-sim).

    Returns
    -------
    ExportResult
        The files written and what the export measured (``recourse``, ``quantization_loss``).

    Raises
    ------
    InvalidInputError
        For an unknown format or option, or a bad value.
    """
    exporter = _exporter(format)
    allowed = _options(exporter.write) - {"force"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise InvalidInputError(
            f"`{unknown[0]}` is not an option of format {format!r} "
            f"(its options: {', '.join(sorted(allowed)) or 'none'})"
        )
    return exporter.write(schedule, path, force=force, **options)


def read_export(path: str | os.PathLike[str], *, format: str) -> AnySchedule:
    """Read back a schedule :func:`export` wrote in ``format``."""
    return _exporter(format).read(Path(path))
