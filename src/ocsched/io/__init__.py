"""Read and write demand matrices, schedules and traces: the only library module that opens files.

Demand files, by suffix:

- ``.npy``: one dense 2-D array.
- ``.npz``: a scipy sparse matrix saved with :func:`scipy.sparse.save_npz`, or a NumPy archive
  holding one array (or an array named ``demand``).
- ``.csv``: n rows of n numbers (dense), or long form with a header naming a source, a
  destination and an amount column (``src,dst,value``, networkx's ``source,target,weight``,
  ``from,to,bytes``, ...; or ``columns=``) and one flow per line (n = the largest port + 1;
  repeated pairs add up). ``#`` starts a comment. A dense
  file may carry a header row and an index column (what ``pandas.DataFrame.to_csv`` writes); the
  header's port names are kept (:func:`read_demand_named`). Ports that look 1-based (port 0 never
  used) are logged as a warning.
- ``.json``: a list of n lists of n numbers, or ``{"demand": [[...], ...]}``.
- ``.csv.gz``, ``.json.gz``: the same, gzip-compressed (schedules and iterations too).

Sizes are checked before anything is allocated (``.npy`` headers, ``.npz`` members, long-form
ports): a file may not make ocsched hold more than :data:`MAX_DENSE_ELEMENTS` dense entries,
:data:`MAX_NNZ` nonzeros or :data:`MAX_PORTS` ports; JSON nested too deeply is refused.

Writes never replace an existing file unless ``force=True``, and go through a temporary file so
an interrupted write leaves nothing half-written.

One module per kind of file: :mod:`~ocsched.io.demand`, :mod:`~ocsched.io.schedule`,
:mod:`~ocsched.io.circuits` (circuit export), :mod:`~ocsched.io.fabric` (FABRIC.toml),
:mod:`~ocsched.io.iteration` (sequences of phases), :mod:`~ocsched.io.trace` (coflow traces,
:func:`read_coflow_trace`), :mod:`~ocsched.io.traces` (multi-rank PyTorch and Chakra traces as
iterations, :func:`read_trace`), and :mod:`~ocsched.io._files` (limits, atomic writes) under them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ocsched._lazy import lazy_attributes
from ocsched.io._files import (
    MAX_DENSE_ELEMENTS,
    MAX_DENSE_PORTS,
    MAX_NNZ,
    MAX_PORTS,
    MAX_SWITCHES,
    check_writable,
    write_atomic,
)
from ocsched.io.circuits import (
    CIRCUIT_COLUMNS,
    CIRCUIT_FORMATS,
    PHASE_COLUMN,
    circuit_table,
    circuits_csv,
    schedule_fabric,
    write_circuits,
)
from ocsched.io.demand import DEMAND_SUFFIXES, demand_csv, read_demand, read_demand_named, write_demand
from ocsched.io.fabric import fabric_from_options as fabric_from_options
from ocsched.io.fabric import read_fabric as read_fabric
from ocsched.io.iteration import (
    GAPS_FILE,
    is_iteration,
    read_iteration,
    read_iteration_schedule,
    write_iteration,
    write_iteration_schedule,
)
from ocsched.io.schedule import read_any_schedule, read_schedule, read_schedule_checked, write_schedule
from ocsched.io.trace import generate
from ocsched.io.trace import read_trace as read_coflow_trace

if TYPE_CHECKING:
    from ocsched.io import exports as exports
    from ocsched.io import traces as traces
    from ocsched.io.exports import EXPORTERS, export, read_export
    from ocsched.io.traces import read_trace


# The trace importers and the exporters build on the whole library (schedulers, validators):
# loaded on first use, so that reading a demand (`ocsched bound`) does not import them.
_LAZY = {
    "traces": ("ocsched.io.traces", None),
    "read_trace": ("ocsched.io.traces", "read_trace"),
    "exports": ("ocsched.io.exports", None),
    "EXPORTERS": ("ocsched.io.exports", "EXPORTERS"),
    "export": ("ocsched.io.exports", "export"),
    "read_export": ("ocsched.io.exports", "read_export"),
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "CIRCUIT_COLUMNS",
    "CIRCUIT_FORMATS",
    "DEMAND_SUFFIXES",
    "EXPORTERS",
    "GAPS_FILE",
    "MAX_DENSE_ELEMENTS",
    "MAX_DENSE_PORTS",
    "MAX_NNZ",
    "MAX_PORTS",
    "MAX_SWITCHES",
    "PHASE_COLUMN",
    "check_writable",
    "circuit_table",
    "circuits_csv",
    "demand_csv",
    "export",
    "generate",
    "is_iteration",
    "read_any_schedule",
    "read_coflow_trace",
    "read_demand",
    "read_demand_named",
    "read_export",
    "read_iteration",
    "read_iteration_schedule",
    "read_schedule",
    "read_schedule_checked",
    "read_trace",
    "schedule_fabric",
    "write_atomic",
    "write_circuits",
    "write_demand",
    "write_iteration",
    "write_iteration_schedule",
    "write_schedule",
]
