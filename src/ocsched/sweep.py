"""Parameter sweeps: expand a grid into small run specs, execute them, keep resumable results.

A sweep config (TOML) names workloads with their options and seeds, switch counts ``switches``,
reconfiguration delays ``delta`` and algorithms::

    switches = [4, 16]
    delta = [0.01, 0.04]
    algorithms = ["spectra", "spectra-noeq"]
    normalized = true            # divide each matrix by its largest line sum (default true)

    [[workloads]]
    name = "standard"            # a key of ocsched.workloads.WORKLOADS
    label = "Standard"           # optional; names the row in reports (default: name)
    family = "standard"          # optional; groups labels in reports (default: label)
    seeds = 5                    # 5 -> seeds 0..4, or an explicit list [3, 8]
    options = { n = 100 }        # fixed generator options
    grid = { flows = [8, 16] }   # optional: each combination is a separate instance
    # switches, delta, algorithms, normalized and link_gbps may be overridden per workload

Every (workload, options, seed) is one *instance*; every instance runs every algorithm, switch
count and delta. A run is a :class:`RunSpec` (parameters only, never a matrix), identified by a
stable :attr:`RunSpec.key`. Runs are grouped into batches so that each matrix is generated once per
batch and reused for all its algorithms, ``s`` and ``delta``.

Results directory layout (see :func:`run_sweep`): ``manifest.json`` (the config and version) and
``parts/part-NNNNNN-XXXXXXXX.parquet``, one Parquet file per finished batch, each written to a
temporary name and renamed into place. A crash or interrupt therefore loses at most the batches
in flight; a rerun reads the keys of all parts and runs only what is missing.

Seeds: the config's seed ``r`` of an instance is expanded with :class:`numpy.random.SeedSequence`:
``SeedSequence(r).spawn(2)`` gives the workload's seed and the algorithm's ``rng`` seed; all three
are recorded in every row.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import signal
import tempfile
import time
import tomllib
import uuid
from collections import Counter
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ocsched.errors import InvalidInputError, OcschedError

__all__ = [
    "PRESETS",
    "RESULT_COLUMNS",
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
    "read_results",
    "run_batch",
    "run_sweep",
]

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
PARTS = "parts"
MANIFEST_FORMAT = "ocsched.sweep"
PRESETS = ("paper", "quick")

#: Columns of a result row, in order, with their Arrow type names.
RESULT_COLUMNS: dict[str, str] = {
    "key": "string",
    "family": "string",
    "label": "string",
    "workload": "string",
    "options": "string",  # canonical JSON of every generator option set by the config
    "normalized": "bool_",
    "link_gbps": "float64",
    "seed": "int64",
    "workload_seed": "int64",
    "algorithm_seed": "int64",
    "algorithm": "string",
    "switches": "int64",
    "delta": "float64",
    "ports": "int64",
    "flows": "int64",  # nonzero off-diagonal entries of the demand
    "makespan": "float64",
    "lower_bound": "float64",
    "configurations": "int64",
    "splits": "int64",
    "wall_time_s": "float64",
    "ok": "bool_",
    "error": "string",
    "ocsched_version": "string",
}

_TOP_KEYS = {"switches", "delta", "algorithms", "normalized", "link_gbps", "workloads", "name", "description"}
_WL_KEYS = {"name", "label", "family", "seeds", "options", "grid"} | (
    _TOP_KEYS - {"workloads", "name", "description"}
)


def _need(module: str, extra: str) -> Any:
    """Import an optional dependency, or raise with the install hint."""
    import importlib

    what = {"sweep": "Sweep result files need pyarrow", "dask": "--cluster needs Dask distributed"}[extra]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise OcschedError(f"{what}: pip install 'ocsched[{extra}]'") from None


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: an instance (workload, options, seed) and a scheduler setting.

    Attributes
    ----------
    family, label : str
        Report grouping (cosmetic, but part of the key).
    workload : str
        Workload name for :func:`ocsched.workloads.generate`.
    options : str
        Canonical JSON object of the generator options.
    normalized : bool
        Normalise the matrix to largest line sum 1.
    link_gbps : float or None
        Link rate for byte-valued workloads.
    seed : int
        The config's seed of this instance (see :func:`derive_seeds`).
    algorithm : str
        Scheduler name.
    switches : int
        Number of OCSes s.
    delta : float
        Reconfiguration delay.
    """

    family: str
    label: str
    workload: str
    options: str
    normalized: bool
    link_gbps: float | None
    seed: int
    algorithm: str
    switches: int
    delta: float

    @property
    def key(self) -> str:
        """Stable identifier: a hash of every field (independent of grid order and version)."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:24]

    @property
    def instance(self) -> tuple[str, str, bool, float | None, int]:
        """What determines the demand matrix."""
        return (self.workload, self.options, self.normalized, self.link_gbps, self.seed)


def derive_seeds(seed: int) -> tuple[int, int]:
    """Return ``(workload_seed, algorithm_seed)`` derived from a config seed with SeedSequence.

    >>> derive_seeds(0) == derive_seeds(0), derive_seeds(0) != derive_seeds(1)
    (True, True)
    """
    wl, alg = np.random.SeedSequence(seed).spawn(2)
    return int(wl.generate_state(1, np.uint32)[0]), int(alg.generate_state(1, np.uint32)[0])


# --------------------------------------------------------------------------- config


def load_config(source: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """Read a sweep config: a TOML file path, a preset name (``"paper"``, ``"quick"``) or a dict.

    Raises
    ------
    InvalidInputError
        If the file is missing or not TOML, or the config is malformed (see :func:`expand`).
    """
    if isinstance(source, Mapping):
        cfg = dict(source)
    elif isinstance(source, str) and source in PRESETS:
        text = (resources.files("ocsched") / "presets" / f"{source}.toml").read_text()
        cfg = tomllib.loads(text)
    else:
        p = Path(source)
        if not p.is_file():
            raise InvalidInputError(f"`config` file not found: {p}")
        try:
            cfg = tomllib.loads(p.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InvalidInputError(f"`config` file {p} is not valid TOML: {exc}") from None
    expand(cfg)  # validate now, at the boundary
    return cfg


def _as_list(value: Any, name: str) -> list[Any]:
    out = value if isinstance(value, list) else [value]
    if not out:
        raise InvalidInputError(f"`{name}` must not be empty")
    return out


def _check_scalar(value: Any, name: str) -> None:
    if not isinstance(value, bool | int | float | str):
        raise InvalidInputError(f"`{name}` must be a number, string or boolean; got {value!r}")


def expand(config: Mapping[str, Any]) -> list[RunSpec]:
    """Expand a sweep config (see the module docstring) into its runs, in grid order.

    Raises
    ------
    InvalidInputError
        For an unknown key, workload, workload option or algorithm, or a bad value; the message
        names the offending entry.

    Examples
    --------
    >>> cfg = {"switches": [4, 16], "delta": 0.04, "algorithms": ["spectra"],
    ...        "workloads": [{"name": "standard", "seeds": 3, "options": {"n": 20}}]}
    >>> runs = expand(cfg)
    >>> len(runs), runs[0].workload, runs[0].options, len({r.key for r in runs})
    (6, 'standard', '{"n": 20}', 6)
    """
    from ocsched._checks import check_delta, check_switches
    from ocsched.schedulers import SCHEDULERS as ALGORITHMS
    from ocsched.workloads import WORKLOADS

    unknown = sorted(set(config) - _TOP_KEYS)
    if unknown:
        raise InvalidInputError(
            f"config has unknown key {unknown[0]!r}; allowed: {', '.join(sorted(_TOP_KEYS))}"
        )
    entries = config.get("workloads")
    if not isinstance(entries, list) or not entries:
        raise InvalidInputError("config needs a non-empty [[workloads]] list")
    runs: list[RunSpec] = []
    for k, entry in enumerate(entries):
        where = f"workloads[{k}]"
        if not isinstance(entry, Mapping):
            raise InvalidInputError(f"`{where}` must be a table; got {entry!r}")
        bad = sorted(set(entry) - _WL_KEYS)
        if bad:
            raise InvalidInputError(
                f"`{where}` has unknown key {bad[0]!r}; allowed: {', '.join(sorted(_WL_KEYS))}"
            )

        def get(key: str, default: Any, entry: Mapping[str, Any] = entry) -> Any:
            return entry.get(key, config.get(key, default))

        name = entry.get("name")
        if name not in WORKLOADS:
            raise InvalidInputError(
                f"`{where}.name` is {name!r}; choose one of {', '.join(sorted(WORKLOADS))}"
            )
        label = str(entry.get("label", name))
        family = str(entry.get("family", label))
        known = WORKLOADS[name].options()
        options = dict(entry.get("options", {}))
        grid = dict(entry.get("grid", {}))
        for opt, val in [*options.items(), *((g, v) for g, vs in grid.items() for v in _as_list(vs, g))]:
            if opt not in known:
                raise InvalidInputError(
                    f"`{where}`: workload {name!r} has no option {opt!r}; its options are {', '.join(known)}"
                )
            _check_scalar(val, f"{where}.{opt}")
        seeds_raw = entry.get("seeds", 1)
        if isinstance(seeds_raw, int) and not isinstance(seeds_raw, bool):
            if seeds_raw < 1:
                raise InvalidInputError(f"`{where}.seeds` must be >= 1 or a list of seeds; got {seeds_raw}")
            seeds = list(range(seeds_raw))
        elif (
            isinstance(seeds_raw, list)
            and seeds_raw
            and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in seeds_raw)
        ):
            seeds = list(seeds_raw)
        else:
            raise InvalidInputError(
                f"`{where}.seeds` must be a count or a list of integers >= 0; got {seeds_raw!r}"
            )
        algs = [str(a) for a in _as_list(get("algorithms", ["spectra"]), f"{where}.algorithms")]
        for a in algs:
            if a not in ALGORITHMS:
                raise InvalidInputError(
                    f"`{where}`: unknown algorithm {a!r}; choose one of {', '.join(ALGORITHMS)}"
                )
        switches = [
            check_switches(x, name=f"{where}.switches") for x in _as_list(get("switches", None), "switches")
        ]
        deltas = [check_delta(x, name=f"{where}.delta") for x in _as_list(get("delta", None), "delta")]
        normalized = get("normalized", True)
        if not isinstance(normalized, bool):
            raise InvalidInputError(f"`{where}.normalized` must be true or false; got {normalized!r}")
        gbps = get("link_gbps", None)
        if gbps is not None and (isinstance(gbps, bool) or not isinstance(gbps, int | float) or not gbps > 0):
            raise InvalidInputError(f"`{where}.link_gbps` must be a positive number; got {gbps!r}")
        axes = [[(g, v) for v in _as_list(vs, g)] for g, vs in grid.items()]
        for combo in itertools.product(*axes):
            opts = {**options, **dict(combo)}
            lab = " ".join([label, *(f"{g}={v}" for g, v in combo)])
            opts_json = json.dumps(opts, sort_keys=True)
            for seed, alg, s, d in itertools.product(seeds, algs, switches, deltas):
                runs.append(
                    RunSpec(
                        family,
                        lab,
                        name,
                        opts_json,
                        normalized,
                        None if gbps is None else float(gbps),
                        int(seed),
                        alg,
                        s,
                        d,
                    )
                )
    keys = [r.key for r in runs]
    if len(set(keys)) != len(keys):
        raise InvalidInputError("config lists the same run twice (repeated workload entry or value)")
    return runs


# --------------------------------------------------------------------------- running


def _row(spec: RunSpec, **values: Any) -> dict[str, Any]:
    from ocsched import __version__

    wl_seed, alg_seed = derive_seeds(spec.seed)
    row: dict[str, Any] = dict.fromkeys(RESULT_COLUMNS)
    row.update(asdict(spec))
    row.update(key=spec.key, workload_seed=wl_seed, algorithm_seed=alg_seed, ocsched_version=__version__)
    row.update(values)
    return row


def run_batch(specs: Sequence[RunSpec]) -> list[dict[str, Any]]:
    """Run ``specs`` serially and return one result row per spec (same order).

    Each instance's matrix is generated once and reused by every spec of that instance. Each
    schedule is validated; an invalid schedule or an exception is a row with ``ok=False``, the
    message in ``error`` and no makespan.
    """
    from ocsched.model import Demand
    from ocsched.schedulers import schedule
    from ocsched.validate import validate
    from ocsched.workloads import generate

    demands: dict[tuple[str, str, bool, float | None, int], Demand | str] = {}
    rows = []
    for spec in specs:
        if spec.instance not in demands:
            try:
                m = generate(
                    spec.workload,
                    seed=derive_seeds(spec.seed)[0],
                    normalized=spec.normalized,
                    link_gbps=spec.link_gbps,
                    **json.loads(spec.options),
                )
                # A port's traffic to itself never crosses the fabric (as in `ocsched demo`).
                np.fill_diagonal(m, 0.0)
                demands[spec.instance] = Demand.from_matrix(m)
            except Exception as exc:
                demands[spec.instance] = f"workload: {type(exc).__name__}: {exc}"
        dem = demands[spec.instance]
        if isinstance(dem, str):
            rows.append(_row(spec, ok=False, error=dem))
            continue
        base = {"ports": dem.n, "flows": dem.nnz}
        try:
            t0 = time.perf_counter()
            sched = schedule(
                dem,
                switches=spec.switches,
                delta=spec.delta,
                algorithm=spec.algorithm,
                rng=derive_seeds(spec.seed)[1],
            )
            wall = time.perf_counter() - t0
            report = validate(sched, dem)
        except Exception as exc:
            rows.append(_row(spec, **base, ok=False, error=f"{type(exc).__name__}: {exc}"))
            continue
        if not report.ok:
            shown = "; ".join(str(v) for v in report.violations[:3])
            rows.append(
                _row(
                    spec,
                    **base,
                    wall_time_s=wall,
                    ok=False,
                    error=f"invalid schedule ({len(report.violations)} violations): {shown}",
                )
            )
            continue
        rows.append(
            _row(
                spec,
                **base,
                makespan=sched.makespan,
                lower_bound=sched.lower_bound,
                configurations=sched.num_configurations,
                splits=sched.splits,
                wall_time_s=wall,
                ok=True,
            )
        )
    return rows


def make_batches(specs: Sequence[RunSpec], batch_size: int) -> list[list[RunSpec]]:
    """Pack specs into batches of at most ``batch_size``, keeping each instance's runs together.

    Whole instances are packed greedily; an instance with more runs than ``batch_size`` is cut
    into chunks (its matrix is then generated once per chunk).

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


@dataclass(frozen=True)
class SweepProgress:
    """Progress of a running sweep, passed to the ``progress`` callback after each batch.

    ``total`` counts the runs of this session (already finished runs are in ``skipped``).
    """

    total: int
    done: int
    failed: int
    skipped: int
    elapsed_s: float


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


def _schema() -> Any:
    pa = _need("pyarrow", "sweep")
    return pa.schema([(c, getattr(pa, t)()) for c, t in RESULT_COLUMNS.items()])


def _write_part(parts: Path, rows: list[dict[str, Any]]) -> Path:
    pa = _need("pyarrow", "sweep")
    pq = _need("pyarrow.parquet", "sweep")
    table = pa.Table.from_pylist(rows, schema=_schema())
    seq = len(list(parts.glob("part-*.parquet")))
    final = parts / f"part-{seq:06d}-{uuid.uuid4().hex[:8]}.parquet"
    fd, tmp = tempfile.mkstemp(dir=parts, prefix=".part-", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, final)  # Invariant: a part file is complete or absent.
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return final


def read_results(path: str | os.PathLike[str]) -> Any:
    """Read a results directory (or one Parquet/CSV file) as a :class:`pyarrow.Table`.

    Raises
    ------
    InvalidInputError
        If ``path`` is neither a results directory nor a ``.parquet``/``.csv`` file.
    """
    pa = _need("pyarrow", "sweep")
    pq = _need("pyarrow.parquet", "sweep")
    p = Path(path)
    if p.is_dir():
        if not (p / MANIFEST).is_file():
            raise InvalidInputError(f"`results` directory {p} has no {MANIFEST}: not a sweep result")
        files = sorted((p / PARTS).glob("part-*.parquet"))
        tables = [pq.read_table(f, schema=_schema()) for f in files]
        return pa.concat_tables(tables) if tables else _schema().empty_table()
    if p.is_file() and p.suffix == ".parquet":
        return pq.read_table(p)
    if p.is_file() and p.suffix == ".csv":
        pcsv = _need("pyarrow.csv", "sweep")
        types = {c: getattr(pa, t)() for c, t in RESULT_COLUMNS.items()}
        return pcsv.read_csv(
            p, convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=True)
        )
    raise InvalidInputError(f"`results` must be a sweep directory, .parquet or .csv file; got {p}")


def export_csv(path: str | os.PathLike[str], out: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write the results at ``path`` as one CSV file ``out`` (never overwritten without ``force``)."""
    from ocsched.io import write_atomic

    pcsv = _need("pyarrow.csv", "sweep")
    table = read_results(path).sort_by(
        [("family", "ascending"), ("label", "ascending"), ("key", "ascending")]
    )
    return write_atomic(out, lambda f: pcsv.write_csv(table, f), force=force, name="--csv")


def _prepare(out: Path, config: Mapping[str, Any], force: bool) -> set[str]:
    """Create or check the results directory; return the keys already finished."""
    from ocsched import __version__

    manifest = {"format": MANIFEST_FORMAT, "version": 1, "ocsched_version": __version__, "config": config}
    if out.exists() and not out.is_dir():
        raise InvalidInputError(f"`out` exists and is not a directory: {out}")
    if out.is_dir() and any(out.iterdir()):
        mpath = out / MANIFEST
        if not mpath.is_file():
            raise InvalidInputError(f"`out` directory {out} is not empty and holds no sweep; choose another")
        old = json.loads(mpath.read_text())
        if force:
            for f in (out / PARTS).glob("*"):
                f.unlink()
            mpath.unlink()
        elif old.get("config") != json.loads(json.dumps(config, default=str)):
            raise InvalidInputError(
                f"`out` {out} holds results of a different config; use --force to overwrite or another --out"
            )
        else:
            for stale in (out / PARTS).glob(".part-*.tmp"):  # left by a killed run; never read
                stale.unlink()
            return set(read_results(out).column("key").to_pylist())
    (out / PARTS).mkdir(parents=True, exist_ok=True)
    tmp = out / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, default=str))  # TOML dates become strings
    os.replace(tmp, out / MANIFEST)
    return set()


def _ignore_sigint() -> None:
    # Workers leave Ctrl-C to the parent, which cancels the pool and keeps what was written.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _pool_results(batches: list[list[RunSpec]], workers: int) -> Generator[list[dict[str, Any]], None, None]:
    import multiprocessing as mp

    if workers == 1:
        for b in batches:
            yield run_batch(b)
        return
    method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    pool = mp.get_context(method).Pool(min(workers, len(batches)), initializer=_ignore_sigint)
    try:
        yield from pool.imap_unordered(run_batch, batches)
        pool.close()
    finally:
        # On an interrupt (or an error) the batches in flight are dropped: they are not written,
        # so a rerun does them again. Terminating beats waiting for them to finish.
        pool.terminate()
        pool.join()


def _dask_results(batches: list[list[RunSpec]], client: Any) -> Generator[list[dict[str, Any]], None, None]:
    distributed = _need("distributed", "dask")
    futures = client.map(run_batch, batches, pure=False)
    try:
        for fut in distributed.as_completed(futures):
            yield fut.result()
    finally:
        client.cancel(futures)


def _default_batch_size(todo: Sequence[RunSpec], parallel: int, per_worker: int) -> int:
    # About `per_worker` batches per worker balance the load; at least one typical instance per
    # batch (so each matrix is built once) and at most 256 runs (bounded loss on a crash).
    per_instance = Counter(s.instance for s in todo)
    typical = sorted(per_instance.values())[len(per_instance) // 2] if per_instance else 1
    return max(1, min(256, max(typical, math.ceil(len(todo) / (per_worker * parallel)))))


def run_sweep(
    config: str | os.PathLike[str] | Mapping[str, Any],
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    cluster: str | None = None,
    batch_size: int | None = None,
    force: bool = False,
    progress: Callable[[SweepProgress], None] | None = None,
) -> SweepSummary:
    """Run every run of ``config`` not yet in ``out`` and store the rows there.

    Parameters
    ----------
    config : path, preset name or mapping
        See :func:`load_config`.
    out : path
        Results directory: ``manifest.json`` plus ``parts/*.parquet`` (one per finished batch,
        written atomically). Rerunning with the same config resumes: finished runs are skipped.
    workers : int, optional
        Local processes (default: all cores); 1 runs in this process. Ignored with ``cluster``.
    cluster : str, optional
        Address of a Dask distributed scheduler (``tcp://host:8786``); needs ``ocsched[dask]``.
    batch_size : int, optional
        Runs per task. Default: at least one instance's runs; about 32 batches per local worker
        or 8 per Dask worker (Dask's per-task overhead is larger); at most 256 runs.
    force : bool
        Delete existing results in ``out`` first. Without it, ``out`` must be empty, new, or hold
        results of the same config.
    progress : callable, optional
        Called with a :class:`SweepProgress` after each finished batch (and once at the start).
        An exception it raises (e.g. KeyboardInterrupt) stops the sweep; written batches stay.

    Returns
    -------
    SweepSummary

    Raises
    ------
    InvalidInputError
        For a malformed config, or an ``out`` that holds something else.
    OcschedError
        If pyarrow (or Dask, with ``cluster``) is not installed; the message gives the install hint.

    Notes
    -----
    The local pool starts workers with ``forkserver`` (``spawn`` where unavailable), which
    re-imports the main module: scripts calling this need the ``if __name__ == "__main__":`` guard.
    Rows are identical whatever the execution mode, except ``wall_time_s``.

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
    _need("pyarrow.parquet", "sweep")
    if cluster is not None:
        _need("distributed", "dask")
    cfg = load_config(config)
    specs = expand(cfg)
    out_p = Path(out)
    finished = _prepare(out_p, cfg, force)
    todo = [s for s in specs if s.key not in finished]
    nworkers = workers if workers is not None else (os.cpu_count() or 1)
    if nworkers < 1:
        raise InvalidInputError(f"`workers` must be >= 1; got {workers}")
    if batch_size is not None and batch_size < 1:
        raise InvalidInputError(f"`batch_size` must be >= 1; got {batch_size}")
    t0 = time.perf_counter()
    done = failed = 0
    failures: list[str] = []

    def report() -> None:
        if progress is not None:
            progress(SweepProgress(len(todo), done, failed, len(specs) - len(todo), time.perf_counter() - t0))

    with contextlib.ExitStack() as stack:
        if cluster is None:
            batches = make_batches(todo, batch_size or _default_batch_size(todo, nworkers, 32))
            source = _pool_results(batches, nworkers)
        else:
            distributed = _need("distributed", "dask")
            client = stack.enter_context(distributed.Client(cluster, timeout="20s"))
            parallel = max(1, sum(client.nthreads().values()))
            batches = make_batches(todo, batch_size or _default_batch_size(todo, parallel, 8))
            source = _dask_results(batches, client)
        stack.enter_context(contextlib.closing(source))
        log.info(
            "sweep %s: %d runs, %d done before, %d batches",
            out_p,
            len(specs),
            len(specs) - len(todo),
            len(batches),
        )
        report()
        for rows in source:
            _write_part(out_p / PARTS, rows)
            done += len(rows)
            bad = [r for r in rows if not r["ok"]]
            failed += len(bad)
            failures.extend(
                f"{r['label']} seed={r['seed']} {r['algorithm']} s={r['switches']} "
                f"delta={r['delta']:g}: {r['error']}"
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
        time.perf_counter() - t0,
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
    """
    cfg = load_config(config)
    specs = expand(cfg)
    finished: set[str] = set()
    if out is not None and (Path(out) / MANIFEST).is_file():
        finished = set(read_results(out).column("key").to_pylist())
    todo = [s for s in specs if s.key not in finished]
    gen = np.random.default_rng(rng)
    picked = [todo[i] for i in sorted(gen.choice(len(todo), size=min(sample, len(todo)), replace=False))]
    t0 = time.perf_counter()
    for spec in picked:
        run_batch([spec])
    per_run = (time.perf_counter() - t0) / max(len(picked), 1)
    nworkers = workers if workers is not None else (os.cpu_count() or 1)
    return SweepEstimate(len(specs), len(todo), len(picked), per_run, max(nworkers, 1))
