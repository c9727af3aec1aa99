"""Compile every kernel once, ahead of the first real run (``ocsched warmup``, ``make demo``).

Small calls run interpreted and need no compile (:mod:`ocsched._jit`); a large one compiles
the kernels it uses, once per machine, into numba's on-disk cache. :func:`warmup` compiles them
all at set-up instead, by running every scheduler, the iteration schedulers, a reschedule and
the bounds on tiny instances with every kernel forced onto its compiled path. Run it once per
machine or container image (a Dask or cluster worker shares the cache if its
``NUMBA_CACHE_DIR`` is shared, else run it on each).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ocsched import _jit
from ocsched.bounds import lower_bound
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.fabric import Fabric, LinkDown, Switch, SwitchDown
from ocsched.online import plan
from ocsched.reschedule import SwitchFailure, reschedule
from ocsched.schedulers import SCHEDULERS, schedule
from ocsched.sequence import schedule_iteration
from ocsched.workloads import generate_iteration

__all__ = ["WarmupReport", "warmup"]


@dataclass(frozen=True)
class WarmupReport:
    """What :func:`warmup` did: kernels compiled or loaded, the seconds it took, the cache."""

    kernels: int
    compiled: int
    seconds: float
    cache: Path | None


def warmup() -> WarmupReport:
    """Compile (or load from the cache) every kernel that a schedule, bound or reschedule uses.

    Returns
    -------
    WarmupReport
        ``compiled`` counts the kernels called from Python now compiled in this process (the
        kernels they call are compiled into them; 0 without numba or with
        ``NUMBA_DISABLE_JIT``); ``seconds`` the compile and cache-load time.

    Examples
    --------
    >>> from ocsched.warmup import warmup
    >>> warmup().kernels > 0  # doctest: +SKIP
    True
    """
    t0 = _jit.compile_seconds()
    rng = np.random.default_rng(0)
    d = rng.random((6, 6))
    np.fill_diagonal(d, 0.0)
    sparse = d * (rng.random((6, 6)) < 0.5)
    fabrics = [
        Fabric.uniform(2, 0.05),
        Fabric.from_deltas([0.05, 0.5], rates=[1.0, 2.0]),
        Fabric.uniform(3, 0.05).with_failures(
            down=[SwitchDown(1, 0.05, 0.12)], failed_links=[LinkDown(port=3, switch=2)]
        ),
        Fabric.uniform(2, 0.05, model="partial"),
        Fabric.uniform(2, 0.05).with_eps(0.5),
        Fabric(switches=(Switch(0.05, bidirectional=True, ports_per_endpoint=2),) * 2),
    ]
    with _jit.compiled_only():
        for mat in (d, sparse):
            for fab in fabrics:
                lower_bound(mat, fabric=fab)
                # The exact solver has no kernel of its own (its incumbents are the others').
                for name in (n for n in SCHEDULERS if n != "exact"):
                    # A scheduler that does not support this fabric says so: nothing to compile.
                    with contextlib.suppress(InvalidInputError, OcschedError):
                        sched = schedule(mat, fabric=fab, algorithm=name, rng=0)
            lower_bound(mat, switches=2, delta=0.05, strong=True)
        sched = schedule(d, switches=2, delta=0.05, rng=0)
        reschedule(sched, d, SwitchFailure(1, sched.makespan / 2))
        it = generate_iteration("moe-iteration", gpus=8, layers=2, rng=0)
        schedule_iteration(it, switches=2, delta=0.05, rng=0)
        plan(d, switches=2, delta=0.05).fit(d * 1.1)
    _jit.mark_warm()
    compiled = [k for k in _jit.kernels() if k._dispatcher is not None and k._dispatcher.signatures]
    return WarmupReport(
        kernels=len(_jit.kernels()),
        compiled=len(compiled),
        seconds=_jit.compile_seconds() - t0,
        cache=None if not compiled else _jit.cache_dir(),
    )
