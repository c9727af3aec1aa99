"""The result schema, defined once: what a run is (:class:`RunSpec`), its key, and the row it yields.

A row has the fixed columns of :data:`RESULT_COLUMNS` (declared in :mod:`ocsched.sweep.columns`)
followed by one typed column per generator option set anywhere in the sweep's config, named
``opt_<option>`` (``opt_flows`` is the standard workload's "flows per port"). Rows that share
:func:`match_key` scheduled the same demand matrix under the same switch count and delay (or the
same fabric: its identity ``fabric_id``, a hash of its content, not only its name), so the report
compares algorithms on them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ocsched._extras import missing_extra
from ocsched._version import __version__
from ocsched.errors import InvalidInputError, OcschedError
from ocsched.schedulers import ALIASES
from ocsched.sweep.columns import RESULT_COLUMNS as RESULT_COLUMNS

__all__ = [
    "IDENTITY_COLUMNS",
    "MATCH_COLUMNS",
    "OPTION_PREFIX",
    "RESULT_COLUMNS",
    "RunSpec",
    "derive_seeds",
    "fabric_id",
    "match_key",
    "option_types",
    "read_table",
    "result_row",
    "schema",
]

log = logging.getLogger(__name__)


#: Generator option ``x`` is stored in the column ``opt_x``.
OPTION_PREFIX = "opt_"

#: Columns (besides the ``opt_*`` ones) shared by the rows of one matrix under one setting.
MATCH_COLUMNS = ("family", "label", "workload", "normalized", "link_gbps", "seed", "switches", "delta")
#: Further identity columns of a setting and an input (null where they do not apply).
IDENTITY_COLUMNS = ("fabric", "fabric_id", "input_sha256")

_ARROW_OF = {bool: "bool_", int: "int64", float: "float64", str: "string"}


def pyarrow_modules() -> tuple[Any, Any]:
    """Return ``(pyarrow, pyarrow.parquet)``, or raise with the install hint."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise OcschedError(missing_extra("Sweep result files need pyarrow", "sweep")) from None
    return pa, pq


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: an instance (workload, options, seed) and a scheduler setting.

    Attributes
    ----------
    family, label : str
        Report grouping (cosmetic, but part of the key).
    workload : str
        Workload name for :func:`ocsched.io.generate`, or ``"file"`` for a user's matrix file.
    options : str
        Canonical JSON object of the generator options (``{"path": ...}`` for a file).
    normalized : bool
        Normalise the matrix to largest line sum 1.
    link_gbps : float or None
        Link rate for byte-valued workloads.
    seed : int
        The config's seed of this instance (see :func:`derive_seeds`).
    algorithm : str
        Scheduler name.
    switches : int
        Number of OCSes s (a fabric's size).
    delta : float
        Reconfiguration delay (a fabric's largest).
    source : str or None
        Absolute path of a file workload's matrix (where to read it; not part of the key).
    fabric : str or None
        Name of the fabric (config ``fabrics``); None: ``switches`` identical all-stop switches.
    fabric_spec : str or None
        Canonical JSON of the fabric (:func:`ocsched.sweep.config.canonical_fabric`), part of the key.
    input_sha256 : str or None
        SHA-256 of the file the matrix is read from (a file workload, a coflow trace), part of the
        key: the same path holding other bytes is another run.
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
    source: str | None = field(default=None, compare=False)
    fabric: str | None = None
    fabric_spec: str | None = None
    input_sha256: str | None = None

    @property
    def key(self) -> str:
        """Stable identifier: a hash of every field but ``source`` (independent of grid order and version).

        Everything that changes the run's result is in it (the fabric's whole content, the input
        file's bytes), so a results folder never takes one run for another.
        """
        fields = asdict(self)
        del fields["source"]
        # The keys predate the scheduler renames: hash the name the scheduler had then.
        fields["algorithm"] = algorithm_name(self.algorithm, _FORMER)
        if self.fabric_spec is None:  # the keys of switches x delta grids predate fabrics
            del fields["fabric"], fields["fabric_spec"]
        if self.input_sha256 is None:  # ... and those of generated matrices predate file digests
            del fields["input_sha256"]
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:24]

    @property
    def fabric_id(self) -> str | None:
        """The fabric's identity: a hash of its canonical JSON (None on a switches x delta grid)."""
        return fabric_id(self.fabric_spec)

    @property
    def instance(self) -> tuple[str, str, bool, float | None, int]:
        """What determines the demand matrix."""
        return (self.workload, self.options, self.normalized, self.link_gbps, self.seed)

    def option_values(self) -> dict[str, Any]:
        """The generator options as a dict."""
        values: dict[str, Any] = json.loads(self.options)
        return values


def fabric_id(spec: str | None) -> str | None:
    """A short stable hash of a fabric's canonical JSON (its identity in result rows).

    >>> fabric_id('{"model": "all-stop"}') == fabric_id('{"model": "all-stop"}'), fabric_id(None)
    (True, None)
    """
    return None if spec is None else hashlib.sha256(spec.encode()).hexdigest()[:16]


def derive_seeds(seed: int) -> tuple[int, int]:
    """Return ``(workload_seed, algorithm_seed)`` derived from a config seed with SeedSequence.

    >>> derive_seeds(0) == derive_seeds(0), derive_seeds(0) != derive_seeds(1)
    (True, True)
    """
    wl, alg = np.random.SeedSequence(seed).spawn(2)
    return int(wl.generate_state(1, np.uint32)[0]), int(alg.generate_state(1, np.uint32)[0])


def merge_types(a: str | None, b: str) -> str:
    """Return the column type holding values of types ``a`` and ``b`` (ints widen to floats, else text).

    >>> merge_types("int64", "float64"), merge_types("bool_", "int64"), merge_types(None, "int64")
    ('float64', 'string', 'int64')
    """
    if a is None or a == b:
        return b
    return "float64" if {a, b} == {"int64", "float64"} else "string"


def option_types(specs: Iterable[RunSpec], start: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return ``{option: Arrow type name}`` for every option the specs set (merged into ``start``).

    >>> s = RunSpec("f", "l", "standard", '{"flows": 8, "n": 10}', True, None, 0, "spectra", 4, 0.1)
    >>> option_types([s])
    {'flows': 'int64', 'n': 'int64'}
    """
    types = dict(start or {})
    seen: set[str] = set()
    for spec in specs:
        if spec.options in seen:
            continue
        seen.add(spec.options)
        for name, value in spec.option_values().items():
            types[name] = merge_types(types.get(name), _ARROW_OF[type(value)])
    return dict(sorted(types.items()))


def _cell(value: Any, kind: str) -> Any:
    if kind == "float64":
        return float(value)
    if kind == "string" and not isinstance(value, str):
        return json.dumps(value)
    return value


def result_row(spec: RunSpec, types: Mapping[str, str], **values: Any) -> dict[str, Any]:
    """Return the row of ``spec`` with ``values`` (makespan, ok, ...) and null in every other column."""
    wl_seed, alg_seed = derive_seeds(spec.seed)
    row: dict[str, Any] = dict.fromkeys(RESULT_COLUMNS)
    row.update({k: v for k, v in asdict(spec).items() if k in RESULT_COLUMNS})
    row.update(
        key=spec.key,
        fabric_id=spec.fabric_id,
        workload_seed=wl_seed,
        algorithm_seed=alg_seed,
        ocsched_version=__version__,
    )
    row.update(values)
    opts = spec.option_values()
    for name, kind in types.items():
        row[OPTION_PREFIX + name] = _cell(opts[name], kind) if name in opts else None
    return row


def schema(types: Mapping[str, str]) -> Any:
    """The Arrow schema of result rows with the option columns ``types``."""
    pa, _ = pyarrow_modules()
    cols = [(c, getattr(pa, t)()) for c, t in RESULT_COLUMNS.items()]
    cols += [(OPTION_PREFIX + name, getattr(pa, t)()) for name, t in types.items()]
    return pa.schema(cols)


def match_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """The instance-and-setting key of a row: rows sharing it scheduled the same matrix the same way.

    >>> a = {"family": "f", "label": "l", "workload": "w", "normalized": True, "link_gbps": None,
    ...      "seed": 0, "switches": 4, "delta": 0.1, "algorithm": "spectra", "opt_n": 8}
    >>> match_key(a) == match_key({**a, "algorithm": "baseline"})
    True
    >>> match_key(a) == match_key({**a, "opt_n": 9})
    False
    >>> match_key(a) == match_key({**a, "fabric": "mixed"})
    False

    Two fabrics of one name are told apart by their content (``fabric_id``), two files of one
    path by their bytes (``input_sha256``):

    >>> f = {**a, "fabric": "f"}
    >>> match_key({**f, "fabric_id": "1a2b"}) == match_key({**f, "fabric_id": "3c4d"})
    False
    """
    opts = tuple(sorted((k, v) for k, v in row.items() if k.startswith(OPTION_PREFIX)))
    ident = (row.get("fabric"), row.get("fabric_id"), row.get("input_sha256"))
    return (*(row[c] for c in MATCH_COLUMNS), *ident, opts)


_FORMER = {new: old for old, new in ALIASES.items()}


def algorithm_name(name: str, names: Mapping[str, str] = ALIASES) -> str:
    """A run's algorithm (``"scheduler"`` or ``"iteration-scheduler:base"``), each part renamed by ``names``.

    By default a former scheduler name (:data:`~ocsched.schedulers.ALIASES`) becomes the current one.

    >>> algorithm_name("spectra-bff"), algorithm_name("independent:spectra-noeq")
    ('spectra-partial', 'independent:spectra-greedy')
    """
    alg, sep, base = name.partition(":")
    return names.get(alg, alg) + sep + names.get(base, base)


def dedupe(table: Any) -> Any:
    """Keep the first row of each key (two writers into one folder must not double-count)."""
    keys = table.column("key").to_pylist()
    seen: set[str] = set()
    keep = [i for i, k in enumerate(keys) if not (k in seen or seen.add(k))]  # type: ignore[func-returns-value]
    if len(keep) < len(keys):
        log.warning("ignored %d duplicate result rows (same run key)", len(keys) - len(keep))
        return table.take(keep)
    return table


def from_legacy(table: Any) -> Any:
    """Convert rows of ocsched <= 0.x (``options`` JSON, ``flows`` = nonzeros) to this schema."""
    pa, _ = pyarrow_modules()
    if "options" not in table.column_names:
        return table
    opts = [json.loads(o) if o else {} for o in table.column("options").to_pylist()]
    table = table.drop_columns(["options"]).rename_columns(
        ["nonzeros" if c == "flows" else c for c in table.column_names if c != "options"]
    )
    for name in ("status", "dual_bound"):
        if name not in table.column_names:
            table = table.append_column(name, pa.nulls(len(table), getattr(pa, RESULT_COLUMNS[name])()))
    types: dict[str, str] = {}
    for o in opts:
        for k, v in o.items():
            types[k] = merge_types(types.get(k), _ARROW_OF[type(v)])
    for name, kind in sorted(types.items()):
        values = [_cell(o[name], kind) if name in o else None for o in opts]
        table = table.append_column(OPTION_PREFIX + name, pa.array(values, getattr(pa, kind)()))
    return table.select([c for c in schema(types).names if c in table.column_names])


def read_table(path: str | os.PathLike[str], *, name: str = "results") -> Any:
    """Read one ``.parquet`` or ``.csv`` file of result rows as a :class:`pyarrow.Table`.

    Raises
    ------
    InvalidInputError
        If the file is missing, not of this suffix, unreadable or lacks the result columns.
    """
    pa, pq = pyarrow_modules()
    p = Path(path)
    if not p.is_file() or p.suffix not in (".parquet", ".csv"):
        raise InvalidInputError(f"`{name}` must be a sweep directory, .parquet or .csv file; got {p}")
    try:
        if p.suffix == ".parquet":
            table = pq.read_table(p)
        else:
            import pyarrow.csv as pcsv

            types = {c: getattr(pa, t)() for c, t in RESULT_COLUMNS.items()}
            table = pcsv.read_csv(
                p, convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=True)
            )
    except (pa.ArrowException, OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidInputError(f"`{name}` file {p} is not a readable result file: {first}") from None
    return dedupe(conform(from_legacy(table), f"`{name}` file {p}"))


#: Columns every result row must fill (the report groups and matches rows by them).
REQUIRED = ("key", "family", "label", "workload", "seed", "algorithm", "switches", "delta", "ok")


def conform(table: Any, what: str) -> Any:
    """Return ``table`` with every result column cast to its type, or raise one line saying why not.

    A Parquet or CSV file that is not sweep results (another table, a hand-edited part) is refused
    here, naming ``what`` and the first offending column: a required column missing or null, a
    column of the wrong type, an option column that is not a number, boolean or string, or a
    successful run (``ok``) without a finite makespan.

    Raises
    ------
    InvalidInputError
        As above.
    """
    pa, _ = pyarrow_modules()
    import pyarrow.compute as pc

    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        raise InvalidInputError(f"{what} has no column {missing[0]!r}: not sweep results")
    for k, name in enumerate(table.column_names):
        col = table.column(k)
        if name in RESULT_COLUMNS:
            kind = getattr(pa, RESULT_COLUMNS[name])()
            if col.type != kind:
                try:
                    table = table.set_column(k, pa.field(name, kind), col.cast(kind))
                except (pa.ArrowException, ValueError):
                    raise InvalidInputError(
                        f"{what}: column {name!r} holds {col.type}, not {kind}: not sweep results"
                    ) from None
        elif name.startswith(OPTION_PREFIX) and not (
            pa.types.is_boolean(col.type)
            or pa.types.is_integer(col.type)
            or pa.types.is_floating(col.type)
            or pa.types.is_string(col.type)
            or pa.types.is_large_string(col.type)
            or pa.types.is_null(col.type)
        ):
            raise InvalidInputError(
                f"{what}: option column {name!r} holds {col.type}, not a number, boolean or string"
            )
    for name in REQUIRED:
        if table.column(name).null_count:
            raise InvalidInputError(f"{what}: column {name!r} has empty cells: not sweep results")
    if "makespan" not in table.column_names:
        raise InvalidInputError(f"{what} has no column 'makespan': not sweep results")
    for name, low in (("switches", 1), ("delta", 0.0)):
        col = table.column(name)
        good = pc.and_(pc.greater_equal(col, low), pc.is_finite(col) if name == "delta" else True)
        if len(col) and pc.all(good).as_py() is False:
            raise InvalidInputError(f"{what}: column {name!r} holds a value below {low} or not finite")
    span = table.filter(table.column("ok")).column("makespan")
    if span.null_count or pc.all(pc.is_finite(span)).as_py() is False:
        raise InvalidInputError(f"{what}: a run marked ok has no finite makespan: not sweep results")
    # Rows stored before a scheduler was renamed name it by its alias: read them by the current name.
    k = table.column_names.index("algorithm")
    names = table.column(k).to_pylist()
    current = [algorithm_name(a) for a in names]
    if current != names:
        table = table.set_column(k, table.field(k), pa.array(current, table.field(k).type))
    return table


def check_columns(rows: Sequence[Mapping[str, Any]], name: str = "results") -> None:
    """Raise unless ``rows`` carry the columns the report needs."""
    if rows:
        missing = [
            c for c in (*MATCH_COLUMNS, "algorithm", "makespan", "lower_bound", "ok") if c not in rows[0]
        ]
        if missing:
            raise InvalidInputError(f"`{name}` rows have no column {missing[0]!r}: not sweep results")
