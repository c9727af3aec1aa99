"""Parameter sweeps: expand a grid into small run specs, execute them, keep resumable results.

- :mod:`~ocsched.sweep.config`: the TOML config and its expansion into runs (each entry's fabrics or
  grid in :mod:`~ocsched.sweep.settings`);
- :mod:`~ocsched.sweep.results`: the one result schema (a run, its key, its row);
- :mod:`~ocsched.sweep.store`: the results folder (a Parquet dataset, locked while a sweep runs);
- :mod:`~ocsched.sweep.run`: execution on a local process pool or a Dask cluster (the batches in
  :mod:`~ocsched.sweep.batches`, what a sweep reports in :mod:`~ocsched.sweep.progress`);
- :mod:`~ocsched.sweep.gap`: heuristics against the exact optimum on tiny instances.
"""

from __future__ import annotations

import os
from pathlib import Path

from ocsched.io import write_atomic
from ocsched.sweep.config import PRESETS, expand, load_config
from ocsched.sweep.gap import GapReport, run_gap
from ocsched.sweep.results import RESULT_COLUMNS, RunSpec, derive_seeds, match_key, pyarrow_modules
from ocsched.sweep.run import (
    SweepEstimate,
    SweepProgress,
    SweepSummary,
    estimate_sweep,
    make_batches,
    run_batch,
    run_sweep,
)
from ocsched.sweep.store import read_results

__all__ = [
    "PRESETS",
    "RESULT_COLUMNS",
    "GapReport",
    "RunSpec",
    "SweepEstimate",
    "SweepProgress",
    "SweepSummary",
    "derive_seeds",
    "estimate_sweep",
    "expand",
    "export_csv",
    "load_config",
    "make_batches",
    "match_key",
    "read_results",
    "run_batch",
    "run_gap",
    "run_sweep",
]


def export_csv(path: str | os.PathLike[str], out: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write the results at ``path`` as one CSV file ``out`` (never overwritten without ``force``)."""
    pyarrow_modules()
    import pyarrow.csv as pcsv

    table = read_results(path).sort_by(
        [("family", "ascending"), ("label", "ascending"), ("key", "ascending")]
    )
    return write_atomic(out, lambda f: pcsv.write_csv(table, f), force=force, name="--csv")
