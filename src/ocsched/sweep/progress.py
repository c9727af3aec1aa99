"""What a running sweep reports: its progress after each batch, and its summary at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SweepProgress", "SweepSummary"]


@dataclass(frozen=True)
class SweepProgress:
    """Progress of a running sweep, passed to the ``progress`` callback after each batch.

    ``total`` counts the runs of this session (already finished runs are in ``skipped``).
    ``eta_s`` is None until every worker has finished a batch (before that a rate would mostly
    measure start-up); then it is the remaining runs at the average rate so far. Batches run in
    a shuffled order, so that rate samples the whole grid, not its cheapest corner.
    """

    total: int
    done: int
    failed: int
    skipped: int
    elapsed_s: float
    eta_s: float | None = None
    #: The Dask dashboard's address when the sweep runs on a cluster that serves one.
    dashboard: str | None = None


@dataclass(frozen=True)
class SweepSummary:
    """What :func:`run_sweep` did."""

    out: Path
    runs: int
    skipped: int
    done: int
    failed: int
    batches: int
    elapsed_s: float
    failures: list[str] = field(default_factory=list)
