"""Execute sweeps: batches of runs on a local process pool or a Dask cluster, stored as they finish.

Runs are grouped into batches so that each matrix is generated once per batch and reused for all
its algorithms, ``s`` and ``delta``. Batches run in a shuffled (seeded) order, so the rate of the
first finished batches is a fair sample of the whole sweep and the ETA means something.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ocsched._jit import clock
from ocsched.bounds import lower_bound
from ocsched.errors import InvalidInputError
from ocsched.fabric import Fabric
from ocsched.io import generate, read_demand
from ocsched.iteration import Iteration, IterationSchedule
from ocsched.model import Demand
from ocsched.schedulers import schedule
from ocsched.sweep._iteration_run import _iteration_run
from ocsched.sweep._workers import _worker_init
from ocsched.sweep.batches import _default_batch_size, make_batches
from ocsched.sweep.cluster import dashboard_link, dask_client, dask_results, distributed_module
from ocsched.sweep.config import FILE_WORKLOAD, base_dir, expand, load_config
from ocsched.sweep.progress import SweepProgress, SweepSummary
from ocsched.sweep.results import RunSpec, derive_seeds, option_types, pyarrow_modules, result_row
from ocsched.sweep.store import MANIFEST, Store, check_out, locked
from ocsched.validation import validate
from ocsched.workloads import ITERATION_WORKLOADS, generate_iteration, normalize

__all__ = [
    "SweepEstimate",
    "SweepProgress",
    "SweepSummary",
    "estimate_sweep",
    "make_batches",
    "run_batch",
    "run_sweep",
]

log = logging.getLogger(__name__)


def _demand(spec: RunSpec) -> Demand | Iteration:
    if spec.workload in ITERATION_WORKLOADS:
        return generate_iteration(spec.workload, rng=derive_seeds(spec.seed)[0], **spec.option_values())
    if spec.workload == FILE_WORKLOAD:
        assert spec.source is not None  # set by expand for every file run
        m = read_demand(spec.source, name=spec.label).to_dense()
        if spec.normalized:
            m = normalize(m)
    else:
        m = generate(
            spec.workload,
            rng=derive_seeds(spec.seed)[0],
            normalize=spec.normalized,
            link_gbps=spec.link_gbps,
            **spec.option_values(),
        )
    # A port's traffic to itself never crosses the fabric (as in `ocsched demo`).
    m = np.array(m, dtype=np.float64)
    np.fill_diagonal(m, 0.0)
    return Demand.from_matrix(m)


def run_batch(specs: Sequence[RunSpec], types: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Run ``specs`` serially and return one result row per spec (same order).

    Each instance's matrix is generated once and reused by every spec of that instance. Each
    schedule is validated; an invalid schedule or an exception is a row with ``ok=False``, the
    message in ``error`` and no makespan. ``types`` are the option columns (default: those of
    ``specs``).
    """
    types = option_types(specs) if types is None else types
    demands: dict[tuple[str, str, bool, float | None, int], Demand | Iteration | str] = {}
    best: dict[tuple[Any, ...], float] = {}  # best bound per matrix and setting
    independent: dict[tuple[Any, ...], IterationSchedule] = {}  # per iteration, setting and base
    rows = []
    for spec in specs:
        if spec.instance not in demands:
            try:
                demands[spec.instance] = _demand(spec)
            except Exception as exc:
                demands[spec.instance] = f"workload: {type(exc).__name__}: {exc}"
        dem = demands[spec.instance]
        if isinstance(dem, str):
            rows.append(result_row(spec, types, ok=False, error=dem))
            continue
        if isinstance(dem, Iteration):
            rows.append(_iteration_run(spec, types, dem, independent))
            continue
        base = {"ports": dem.n, "nonzeros": dem.nnz}
        try:
            t0 = clock()
            if spec.fabric_spec is None:
                sched = schedule(
                    dem,
                    switches=spec.switches,
                    delta=spec.delta,
                    algorithm=spec.algorithm,
                    rng=derive_seeds(spec.seed)[1],
                )
                wall = clock() - t0
                report = validate(sched, dem)
            else:
                fab = Fabric.from_dict(json.loads(spec.fabric_spec))
                # The row's lower_bound is the schedule's: lower_bound(dem, fabric=fab).
                sched = schedule(dem, fabric=fab, algorithm=spec.algorithm, rng=derive_seeds(spec.seed)[1])
                wall = clock() - t0
                report = validate(sched, dem, fabric=fab)
        except Exception as exc:
            rows.append(result_row(spec, types, **base, ok=False, error=f"{type(exc).__name__}: {exc}"))
            continue
        if not report.ok:
            shown = "; ".join(str(v) for v in report.violations[:3])
            error = f"invalid schedule ({len(report.violations)} violations): {shown}"
            rows.append(result_row(spec, types, **base, wall_time_s=wall, ok=False, error=error))
            continue
        setting = (spec.instance, spec.switches, spec.delta, spec.fabric_spec)
        if setting not in best:
            best[setting] = _strong_bound(dem, spec)
        proven = [b for b in (best[setting], sched.lower_bound, sched.dual_bound) if b is not None]
        rows.append(
            result_row(
                spec,
                types,
                **base,
                makespan=sched.makespan,
                lower_bound=sched.lower_bound,
                status=sched.status,
                dual_bound=sched.dual_bound,
                best_bound=max(proven) if proven else None,
                configurations=sched.num_configurations,
                splits=sched.splits,
                wall_time_s=wall,
                ok=True,
            )
        )
    return rows


def _strong_bound(dem: Demand, spec: RunSpec) -> float:
    """The strong lower bound of ``dem`` under the run's setting (computed once per matrix and setting)."""
    if spec.fabric_spec is None:
        return lower_bound(dem, switches=spec.switches, delta=spec.delta, strong=True)
    return lower_bound(dem, fabric=Fabric.from_dict(json.loads(spec.fabric_spec)), strong=True)


def run_typed(job: tuple[list[RunSpec], dict[str, str]]) -> list[dict[str, Any]]:
    return run_batch(*job)


def _pool_results(
    batches: list[list[RunSpec]], types: dict[str, str], workers: int
) -> Generator[list[dict[str, Any]], None, None]:
    import multiprocessing as mp

    if workers == 1 or len(batches) <= 1:
        for b in batches:
            yield run_batch(b, types)
        return
    method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    pool = mp.get_context(method).Pool(
        min(workers, len(batches)), initializer=_worker_init, initargs=(os.getpid(),)
    )
    try:
        yield from pool.imap_unordered(run_typed, [(b, types) for b in batches])
        pool.close()
    finally:
        # On an interrupt (or an error) the batches in flight are dropped: they are not written,
        # so a rerun does them again. Terminating beats waiting for them to finish.
        pool.terminate()
        pool.join()


def run_sweep(
    config: str | os.PathLike[str] | Mapping[str, Any],
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    cluster: Any = None,
    batch_size: int | None = None,
    force: bool = False,
    progress: Callable[[SweepProgress], None] | None = None,
    wait_s: float = 30.0,
) -> SweepSummary:
    """Run every run of ``config`` not yet in ``out`` and store the rows there.

    Parameters
    ----------
    config : path, preset name or mapping
        See :func:`~ocsched.sweep.config.load_config`.
    out : path
        Results folder (see :mod:`ocsched.sweep.store`). Rerunning resumes: finished runs are
        skipped; a config that extends the grid (one more delta) runs only the new runs.
    workers : int, optional
        Local processes (default: all cores); 1 runs in this process. With ``cluster="local"``,
        the number of Dask workers.
    cluster : str, distributed.Client or cluster object, optional
        ``"local"`` (start a Dask LocalCluster, its dashboard on a free port), the address of a
        Dask scheduler (``tcp://host:8786``), a ``distributed.Client`` (used and left open), or
        any cluster object with a ``scheduler_address`` (a dask-jobqueue ``SLURMCluster``, a
        ``LocalCluster`` you started); needs ``ocsched[dask]``. The dashboard's address is in
        every :class:`SweepProgress` (``dashboard``) and logged at the start.
    batch_size : int, optional
        Runs per task. Default: at least one instance's runs; about 32 batches per local worker
        or 8 per Dask worker (Dask's per-task overhead is larger); at most 256 runs.
    force : bool
        Delete existing results in ``out`` first.
    progress : callable, optional
        Called with a :class:`SweepProgress` after each finished batch (and once at the start).
        An exception it raises (e.g. KeyboardInterrupt) stops the sweep; written batches stay.
    wait_s : float
        With ``cluster``: how long to wait for the scheduler and for its first worker.

    Returns
    -------
    SweepSummary

    Raises
    ------
    InvalidInputError
        For a malformed config, an ``out`` that holds something else or is in use by another
        sweep, or a malformed cluster address.
    OcschedError
        If pyarrow (or Dask, with ``cluster``) is not installed (the message gives the install
        hint), or the cluster cannot be reached, has no worker, or is lost. Nothing is created
        in ``out`` before the cluster is ready.

    Notes
    -----
    The local pool starts workers with ``forkserver`` (``spawn`` where unavailable), which
    re-imports the main module: scripts calling this need the ``if __name__ == "__main__":`` guard.
    Workers exit when the sweep's process dies. Rows are identical whatever the execution mode,
    except ``wall_time_s``.

    Examples
    --------
    >>> import tempfile
    >>> cfg = {"switches": 4, "delta": 0.04, "algorithms": ["spectra"],
    ...        "workloads": [{"name": "standard", "seeds": 2, "options": {"n": 12, "flows": 4}}]}
    >>> out = tempfile.mkdtemp()
    >>> s = run_sweep(cfg, out, workers=1)
    >>> s.done, s.failed, run_sweep(cfg, out, workers=1).skipped
    (2, 0, 2)
    """
    pyarrow_modules()
    if cluster is not None:
        distributed_module()
    cfg = load_config(config)
    specs = expand(cfg, base=base_dir(config))
    types = option_types(specs)
    out_p = Path(out)
    nworkers = workers if workers is not None else (os.cpu_count() or 1)
    if nworkers < 1:
        raise InvalidInputError(f"`workers` must be >= 1; got {workers}")
    if batch_size is not None and batch_size < 1:
        raise InvalidInputError(f"`batch_size` must be >= 1; got {batch_size}")
    if not force:
        check_out(out_p)
    elif out_p.is_dir() and any(out_p.iterdir()) and not (out_p / MANIFEST).is_file():
        raise InvalidInputError(f"`out` directory {out_p} is not empty and holds no sweep; choose another")
    t0 = clock()
    done = failed = 0
    failures: list[str] = []
    with contextlib.ExitStack() as stack:
        client = None
        dashboard = None
        if cluster is not None:
            client = stack.enter_context(dask_client(cluster, nworkers, wait_s))
            dashboard = dashboard_link(client)
            if dashboard:
                log.info("Dask dashboard: %s", dashboard)
        stack.enter_context(locked(out_p))
        ids = {s.key: s.fabric_id for s in specs if s.fabric_id is not None}
        store = Store(out_p, cfg, types, force=force, fabric_ids=ids)
        todo = [s for s in specs if s.key not in store.finished]
        if client is None:
            parallel = nworkers
            batches = make_batches(todo, batch_size or _default_batch_size(todo, nworkers, 32))
        else:
            parallel = max(1, sum(client.nthreads().values()))
            batches = make_batches(todo, batch_size or _default_batch_size(todo, parallel, 8))
        order = np.random.default_rng(0).permutation(len(batches))
        batches = [batches[i] for i in order]
        source = (
            _pool_results(batches, store.types, nworkers)
            if client is None
            else dask_results(batches, store.types, client, run_typed)
        )
        stack.enter_context(contextlib.closing(source))
        log.info(
            "sweep %s: %d runs, %d done before, %d batches",
            out_p,
            len(specs),
            len(specs) - len(todo),
            len(batches),
        )
        finished_batches = 0

        def report() -> None:
            if progress is None:
                return
            elapsed = clock() - t0
            eta = None
            if done and finished_batches >= min(parallel, len(batches)):
                eta = elapsed / done * (len(todo) - done)
            progress(SweepProgress(len(todo), done, failed, len(specs) - len(todo), elapsed, eta, dashboard))

        report()
        for rows in source:
            store.write(rows)
            done += len(rows)
            finished_batches += 1
            bad = [r for r in rows if not r["ok"]]
            failed += len(bad)
            failures.extend(
                f"{r['label']} seed={r['seed']} {r['algorithm']} "
                + (f"fabric={r['fabric']}" if r["fabric"] else f"s={r['switches']} delta={r['delta']:g}")
                + f": {r['error']}"
                for r in bad
            )
            report()
    return SweepSummary(
        out_p,
        len(specs),
        len(specs) - len(todo),
        done,
        failed,
        len(batches),
        clock() - t0,
        failures,
    )


@dataclass(frozen=True)
class SweepEstimate:
    """Result of :func:`estimate_sweep`."""

    runs: int
    todo: int
    sampled: int
    seconds_per_run: float
    workers: int

    @property
    def seconds(self) -> float:
        """Estimated wall time of the remaining runs on ``workers`` processes."""
        return self.todo * self.seconds_per_run / self.workers


def estimate_sweep(
    config: str | os.PathLike[str] | Mapping[str, Any],
    out: str | os.PathLike[str] | None = None,
    *,
    workers: int | None = None,
    sample: int = 8,
    rng: np.random.Generator | int | None = 0,
) -> SweepEstimate:
    """Count the runs of ``config`` (minus those finished in ``out``) and time a random sample.

    The sample runs in this process (matrix generation included), so the estimate assumes each
    worker is as fast as this one and ignores batching, which only makes the real sweep faster.
    With ``out``, the sample's rows are stored there like any finished batch (the folder is
    created if needed): the real sweep into ``out`` skips them, so the estimate costs nothing.
    ``todo`` and :attr:`SweepEstimate.seconds` count the runs left after the sample.
    """
    cfg = load_config(config)
    specs = expand(cfg, base=base_dir(config))
    out_p = Path(out) if out is not None else None
    if out_p is not None:
        check_out(out_p)
    with contextlib.ExitStack() as stack:
        store = None
        finished: set[str] = set()
        if out_p is not None:
            stack.enter_context(locked(out_p))
            ids = {s.key: s.fabric_id for s in specs if s.fabric_id is not None}
            store = Store(out_p, cfg, option_types(specs), force=False, fabric_ids=ids)
            finished = set(store.finished)
        todo = [s for s in specs if s.key not in finished]
        gen = np.random.default_rng(rng)
        picked = [todo[i] for i in sorted(gen.choice(len(todo), size=min(sample, len(todo)), replace=False))]
        rows: list[dict[str, Any]] = []
        t0 = clock()
        for spec in picked:
            rows.extend(run_batch([spec], None if store is None else store.types))
        per_run = (clock() - t0) / max(len(picked), 1)
        if store is not None and rows:
            store.write(rows)
    nworkers = workers if workers is not None else (os.cpu_count() or 1)
    left = len(todo) - (len(picked) if store is not None else 0)
    return SweepEstimate(len(specs), left, len(picked), per_run, max(nworkers, 1))
