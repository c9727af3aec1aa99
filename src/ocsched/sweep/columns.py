"""The columns of a sweep's result rows, declared once: name, Arrow type, unit and meaning.

:data:`COLUMNS` is the registry: the Parquet schema (:data:`RESULT_COLUMNS`, in order), the
documentation's table of the columns (:func:`columns_table`, rendered into the sweeps guide at
build time) and the readers of old results (a column a file lacks is added as nulls of its type)
all come from it. Generator options are further columns, ``opt_<option>``, typed by the options
the runs use.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COLUMNS", "RESULT_COLUMNS", "Column", "columns_table"]


@dataclass(frozen=True)
class Column:
    """One fixed column of a result row.

    Attributes
    ----------
    name : str
        The column's name.
    arrow : str
        Its Arrow type, as the name of a ``pyarrow`` type factory (``"float64"``, ``"string"``).
    description : str
        What it holds (one sentence).
    unit : str
        The unit of a number (``"s"``, ``"%"``), or ``""``.
    """

    name: str
    arrow: str
    description: str
    unit: str = ""


#: Every fixed column, in the order of a row.
COLUMNS: tuple[Column, ...] = (
    Column("key", "string", "The run's stable key: a hash of its parameters."),
    Column("family", "string", "The config's family of runs (a table in the report)."),
    Column("label", "string", "The workload entry's label (a row in the report)."),
    Column("workload", "string", "The generator's name, or the file's for your own matrices."),
    Column("normalized", "bool_", "Whether the matrix was divided by its largest line sum."),
    Column("link_gbps", "float64", "The link rate that turned bytes into seconds (null: none).", "Gb/s"),
    Column("seed", "int64", "The config's seed r of the instance."),
    Column("workload_seed", "int64", "The generator's seed (spawned from r)."),
    Column("algorithm_seed", "int64", "The scheduler's rng seed (spawned from r)."),
    Column("algorithm", "string", "The scheduler's name."),
    Column("switches", "int64", "Number of switches s."),
    Column("delta", "float64", "The reconfiguration delay (the largest, on a fabric)."),
    Column("fabric", "string", "The fabric's name in the config (null on a switches x delta grid)."),
    Column("fabric_id", "string", "A hash of the fabric's canonical JSON (two fabrics may share a name)."),
    Column("input_sha256", "string", "SHA-256 of the file the matrix was read from (null if generated)."),
    Column("ports", "int64", "Number of ports n."),
    Column("nonzeros", "int64", "Nonzero off-diagonal entries of the demand."),
    Column("makespan", "float64", "The schedule's makespan (an iteration's: the iteration time)."),
    Column("lower_bound", "float64", "The schedule's lower bound (an iteration's: the iteration bound)."),
    Column(
        "status",
        "string",
        "The schedule's status: heuristic, or the exact solver's optimal / node_limit / time_limit.",
    ),
    Column("dual_bound", "float64", "The bound the scheduler proved (exact solvers), else null."),
    Column(
        "best_bound",
        "float64",
        "The best proven bound: lower_bound(strong=True), or the dual bound if higher.",
    ),
    Column("configurations", "int64", "Configurations in the schedule."),
    Column("splits", "int64", "Pieces beyond one per permutation (permutations split across switches)."),
    Column("phases", "int64", "Iteration workloads: phases (null for single matrices)."),
    Column("exposed", "float64", "Iteration workloads: exposed communication, makespan minus the gaps."),
    Column(
        "delay_hidden_pct",
        "float64",
        "Iteration workloads: share of the delays hidden (outside their phase's window, or persisted).",
        "%",
    ),
    Column("reused_pct", "float64", "Iteration workloads: share of the configurations that persisted.", "%"),
    Column("ratio_independent", "float64", "Iteration workloads: exposed over independent's (same base)."),
    Column("ratio_bound", "float64", "Iteration workloads: exposed over the bound's exposed part."),
    Column(
        "wall_time_s", "float64", "Wall time of the schedule call (the only machine-dependent column).", "s"
    ),
    Column("ok", "bool_", "Whether the run gave a valid schedule."),
    Column("error", "string", "Why not (the generator's or scheduler's message, or the violations)."),
    Column("ocsched_version", "string", "The ocsched version that ran it."),
)

#: The fixed columns of a result row, in order, with their Arrow type names.
RESULT_COLUMNS: dict[str, str] = {c.name: c.arrow for c in COLUMNS}


def columns_table() -> str:
    """The Markdown table of :data:`COLUMNS` (name, type, unit, meaning).

    >>> columns_table().splitlines()[2].startswith("| `key` | string |")
    True
    """
    types = {"bool_": "bool", "float64": "float", "int64": "int", "string": "string"}
    rows = ["| column | type | unit | meaning |", "|---|---|---|---|"]
    for c in COLUMNS:
        rows.append(f"| `{c.name}` | {types.get(c.arrow, c.arrow)} | {c.unit} | {c.description} |")
    rows.append("| `opt_<option>` | the option's | | Each generator option the runs set (null where not). |")
    return "\n".join(rows)
