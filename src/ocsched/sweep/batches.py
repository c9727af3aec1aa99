"""A sweep's batches: runs packed so that each instance's matrix is generated once per batch.

:func:`make_batches` keeps each instance's runs together; the default batch size balances the
load over the workers (a few batches each) and bounds what a crash loses.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ocsched.sweep.results import RunSpec

__all__ = ["make_batches"]


def make_batches(specs: Sequence[RunSpec], batch_size: int) -> list[list[RunSpec]]:
    """Pack specs into batches of at most ``batch_size``, keeping each instance's runs together.

    Whole instances are packed greedily; an instance with more runs than ``batch_size`` is cut
    into chunks (its matrix is then generated once per chunk).

    >>> from ocsched.sweep import expand
    >>> cfg = {"switches": [4, 16], "delta": [0.01, 0.04], "algorithms": ["spectra"],
    ...        "workloads": [{"name": "standard", "seeds": 3, "options": {"n": 10}}]}
    >>> [len(b) for b in make_batches(expand(cfg), 8)]
    [8, 4]
    """
    groups: dict[tuple[str, str, bool, float | None, int], list[RunSpec]] = {}
    for s in specs:
        groups.setdefault(s.instance, []).append(s)
    batches: list[list[RunSpec]] = []
    current: list[RunSpec] = []
    for runs in groups.values():
        if current and len(current) + len(runs) > batch_size:
            batches.append(current)
            current = []
        for i in range(0, len(runs), batch_size):
            chunk = runs[i : i + batch_size]
            if len(chunk) == batch_size:
                batches.append(chunk)
            else:
                current.extend(chunk)
    if current:
        batches.append(current)
    return batches


def _default_batch_size(todo: Sequence[RunSpec], parallel: int, per_worker: int) -> int:
    # About `per_worker` batches per worker balance the load; at least one typical instance per
    # batch (so each matrix is built once) and at most 256 runs (bounded loss on a crash).
    per_instance = Counter(s.instance for s in todo)
    typical = sorted(per_instance.values())[len(per_instance) // 2] if per_instance else 1
    return max(1, min(256, max(typical, math.ceil(len(todo) / (per_worker * parallel)))))
