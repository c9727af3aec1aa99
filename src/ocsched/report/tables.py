"""The summary table: per family and label, mean and max of every makespan ratio.

Ratios are taken per matching run (:func:`ocsched.sweep.results.match_key`: the same demand
matrix under the same switch count and delay, or on the same fabric: the same content, whatever
its name). Two different fabrics that share a name are shown as ``name [id]`` (the first digits
of their ``fabric_id``), with a warning (:func:`name_fabrics`). ``A/spectra`` is algorithm A's makespan over
Spectra's on that instance; ``spectra/LB`` is Spectra's makespan over the lower bound its schedule
carries, ``spectra/best`` over the best proven bound of the matrix (the strong bound or an exact
solver's dual bound, column ``best_bound``). Failed runs (``ok`` false) never enter a ratio;
they are counted in the table.

Rows of iteration workloads (column ``phases`` set) get their own table,
:func:`summarize_iterations`: per algorithm, the iteration time over its bound, the exposed
communication over the bound's exposed part and over ``independent``'s, and the delay hidden and
configurations reused.
"""

from __future__ import annotations

import csv
import io as _io
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.schedulers import SCHEDULERS
from ocsched.sweep.results import check_columns, match_key

__all__ = [
    "ITERATION_NOTE",
    "NOTE",
    "SummaryTable",
    "algorithms_in",
    "group",
    "is_iteration",
    "name_fabrics",
    "natural",
    "ratios",
    "summarize",
    "summarize_iterations",
]

Row = Mapping[str, Any]

log = logging.getLogger(__name__)

#: What the cells of the text and Markdown tables mean.
NOTE = (
    "cells: mean (max) over matching runs; A/spectra = A's makespan / Spectra's on the same instance; "
    "LB = the schedule's bound, best = the best proven bound"
)
#: What the cells of the iteration table mean.
ITERATION_NOTE = (
    "iterations: mean (max) per run; time/LB = iteration time / its bound; exposed = iteration time - gaps, "
    "over the bound's exposed part and over independent's (same base); hidden, reused: mean %"
)

#: The exact solver: the summary shows ``reference/exact`` (heuristic over optimum) for it.
EXACT = "exact"
#: The paper's algorithms first, in the paper's order; the other registered schedulers follow
#: in registry order (names the registry does not know follow them, sorted).
_LEAD = (
    "spectra",
    "spectra-pack",
    "spectra-greedy",
    "baseline",
    "baseline-eclipse",
    "eclipse",
    "solstice",
    "bvn",
    "naive",
    "exact",
)
ORDER = (*_LEAD, *(a for a in SCHEDULERS if a not in _LEAD))


def group(rows: Iterable[Row], key: Callable[[Row], Any] | Sequence[str]) -> dict[Any, list[Row]]:
    """Group rows by ``key`` (a function, or column names giving a tuple)."""
    # A column a row lacks (`fabric` in results from before fabrics) groups as None.
    fn = key if callable(key) else (lambda r, cols=tuple(key): tuple(r.get(c) for c in cols))
    out: dict[Any, list[Row]] = {}
    for r in rows:
        out.setdefault(fn(r), []).append(r)
    return out


def name_fabrics(rows: Sequence[Row]) -> list[Row]:
    """Return ``rows`` with each fabric named unambiguously: ``name [id]`` where a name is shared.

    Rows name their fabric (column ``fabric``) and identify it by content (``fabric_id``). When
    two different fabrics share a name (two configs swept into one folder), each is renamed to
    ``name [first 8 digits of its id]`` (``[no id]`` for rows written before identities), and a
    warning says so; otherwise the rows are returned as they are.

    >>> rows = [{"fabric": "f", "fabric_id": i} for i in ("1a2b3c4d5e", "5e6f7a8b9c", "1a2b3c4d5e")]
    >>> [r["fabric"] for r in name_fabrics(rows)]
    ['f [1a2b3c4d]', 'f [5e6f7a8b]', 'f [1a2b3c4d]']
    """
    ids: dict[str, set[str | None]] = {}
    for r in rows:
        if r.get("fabric") is not None:
            ids.setdefault(r["fabric"], set()).add(r.get("fabric_id"))
    shared = {name: v for name, v in ids.items() if len(v) > 1}
    if not shared:
        return list(rows)

    def shown(name: str, ident: str | None) -> str:
        return f"{name} [{ident[:8] if ident else 'no id'}]"

    for name, v in sorted(shared.items()):
        names = ", ".join(repr(shown(name, i)) for i in sorted(v, key=lambda i: i or ""))
        log.warning("the results hold %d different fabrics named %r; shown as %s", len(v), name, names)
    return [
        {**r, "fabric": shown(r["fabric"], r.get("fabric_id"))} if r.get("fabric") in shared else r
        for r in rows
    ]


def algorithms_in(rows: Iterable[Row]) -> list[str]:
    """The algorithms present in ``rows``, in the usual order."""
    present = {r["algorithm"] for r in rows}
    known = [a for a in ORDER if a in present]
    return known + sorted(present - set(known))


def is_iteration(row: Row) -> bool:
    """True for a row of an iteration workload (its ``phases`` column is set)."""
    return row.get("phases") is not None


def ratios(rows: Sequence[Row], num: str, den: str | None, bound: str = "lower_bound") -> list[float]:
    """``num/den`` makespan ratios per matching run (``den=None``: over the row's ``bound`` column)."""
    out = []
    for grp in group(rows, match_key).values():
        by = {r["algorithm"]: r for r in grp if r["ok"]}
        if num not in by:
            continue
        top = by[num]["makespan"]
        bottom = by[num].get(bound) if den is None else by[den]["makespan"] if den in by else None
        if bottom is not None and bottom > 0:
            out.append(top / bottom)
    return out


def natural(text: str) -> list[Any]:
    """Sort key putting "x=8" before "x=16"."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text) if t]


@dataclass(frozen=True)
class SummaryTable:
    """The summary as text cells (:meth:`text`, :meth:`markdown`) and as numbers (:meth:`csv`).

    ``rows`` hold the display cells (``"1.086 (1.199)"``); ``data`` holds the same lines with one
    number per statistic under ``data_header`` (``spectra/LB_mean``, ``spectra/LB_max``, ...;
    None where a ratio has no runs).
    """

    header: list[str]
    rows: list[list[str]]
    data_header: list[str]
    data: list[list[Any]]
    left: int = 2  # leading text columns (left-aligned); the rest are numbers

    def text(self) -> str:
        """Plain text, columns aligned."""
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]
        lines = [
            "  ".join(
                c.ljust(w) if i < self.left else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
            for r in [self.header, *self.rows]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def markdown(self) -> str:
        """A GitHub Markdown table."""
        align = ["---" if i < self.left else "---:" for i in range(len(self.header))]
        return "".join("| " + " | ".join(r) + " |\n" for r in [self.header, align, *self.rows])

    def csv(self) -> str:
        """Machine-readable CSV: one numeric column per statistic, empty where there is no value."""
        buf = _io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.data_header)
        writer.writerows([["" if v is None else v for v in line] for line in self.data])
        return buf.getvalue()


def _stats(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return sum(values) / len(values), max(values)


#: Columns the summary can split its lines by (``ocsched report --by``).
BY_COLUMNS = ("switches", "delta", "seed", "fabric")


def _cell(value: Any) -> str:
    """A ``by`` value as shown: numbers in short form, a missing fabric as "-"."""
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def summarize(rows: Sequence[Row], *, reference: str = "spectra", by: Sequence[str] = ()) -> SummaryTable:
    """Build the summary table of single-matrix runs: per family and label, mean (max) of every ratio.

    Columns: family, label, the ``by`` columns (e.g. ``("switches",)`` for one line per switch
    count), runs, failed runs, ``reference/LB``, ``reference/best`` (when rows carry ``best_bound``),
    ``reference/exact`` (when the exact solver ran: the heuristic over the optimum, or over the
    exact solver's best schedule where it stopped early), then ``A/reference`` for every other
    algorithm present. A family with several labels also gets
    an "all" line. Iteration runs are left out (:func:`summarize_iterations`).

    Raises
    ------
    InvalidInputError
        If ``rows`` is empty or ``by`` names a column other than switches, delta, seed or fabric.

    Examples
    --------
    >>> rows = [dict(family="f", label="x", workload="w", normalized=True, link_gbps=None,
    ...              seed=0, switches=4, delta=0.1, algorithm=a, ok=True, makespan=m, lower_bound=1.0)
    ...         for a, m in (("spectra", 1.2), ("baseline", 1.8))]
    >>> table = summarize(rows)
    >>> print(table.text(), end="")
    family  label  runs  failed     spectra/LB  baseline/spectra
    ------  -----  ----  ------  -------------  ----------------
    f       x         2       0  1.200 (1.200)     1.500 (1.500)
    >>> print(table.csv(), end="")
    family,label,runs,failed,spectra/LB_mean,spectra/LB_max,baseline/spectra_mean,baseline/spectra_max
    f,x,2,0,1.2,1.2,1.5,1.5
    """
    if not rows:
        raise InvalidInputError("`results` holds no rows")
    check_columns(rows)
    rows = [r for r in name_fabrics(rows) if not is_iteration(r)]
    if not rows:
        raise InvalidInputError("`results` hold only iteration runs (see summarize_iterations)")
    bad = [b for b in by if b not in BY_COLUMNS]
    if bad:
        raise InvalidInputError(f"`by` must name {', '.join(BY_COLUMNS)}; got {bad[0]!r}")
    algs = algorithms_in(rows)
    others = [a for a in algs if a != reference]
    has_ref = reference in algs
    # (column, numerator, denominator algorithm or None for a bound column, which bound)
    series: list[tuple[str, str, str | None, str]] = []
    if has_ref:
        series.append((f"{reference}/LB", reference, None, "lower_bound"))
        if any(r.get("best_bound") is not None for r in rows):  # results from before best_bound lack it
            series.append((f"{reference}/best", reference, None, "best_bound"))
        if EXACT in others:  # the heuristic against the optimum, beside its bounds
            series.append((f"{reference}/{EXACT}", reference, EXACT, "lower_bound"))
            others = [a for a in others if a != EXACT]
    series += [
        (f"{a}/{reference}" if has_ref else f"{a}/LB", a, reference if has_ref else None, "lower_bound")
        for a in others
    ]
    header = ["family", "label", *by, "runs", "failed", *(s[0] for s in series)]
    data_header = ["family", "label", *by, "runs", "failed"]
    data_header += [f"{name}_{stat}" for name, _, _, _ in series for stat in ("mean", "max")]
    table: list[list[str]] = []
    data: list[list[Any]] = []

    def line(family: str, label: str, key: tuple[Any, ...], grp: Sequence[Row]) -> None:
        counts = [len(grp), sum(1 for r in grp if not r["ok"])]
        stats = [_stats(ratios(grp, num, den, bound)) for _, num, den, bound in series]
        table.append(
            [family, label, *map(_cell, key), *map(str, counts)]
            + ["-" if m is None else f"{m:.3f} ({x:.3f})" for m, x in stats]
        )
        data.append(
            [family, label, *key, *counts, *(None if v is None else round(v, 12) for p in stats for v in p)]
        )

    for (family,), fam_rows in sorted(group(rows, ["family"]).items(), key=lambda kv: natural(kv[0][0])):
        # Rows without a fabric (a switches x delta grid) have fabric None: they sort first.
        for key, sub in sorted(
            group(fam_rows, by).items(), key=lambda kv: [(v is not None, v) for v in kv[0]]
        ):
            labels = group(sub, ["label"])
            for (label,), lab_rows in sorted(labels.items(), key=lambda kv: natural(kv[0][0])):
                line(family, label, key, lab_rows)
            if len(labels) > 1:
                line(family, "all", key, sub)
    return SummaryTable(header, table, data_header, data)


def summarize_iterations(rows: Sequence[Row]) -> SummaryTable:
    """The iteration table: per family, label and algorithm, how each iteration scheduler did.

    Columns: runs, failed, ``time/LB`` (iteration time over the iteration bound), ``exposed/bound``
    (exposed communication over the bound's exposed part), ``exposed/independent`` (over
    ``independent``'s with the same base scheduler), each mean (max); ``hidden %`` and
    ``reused %`` (means). Only rows with ``phases`` set count (:func:`is_iteration`).

    Raises
    ------
    InvalidInputError
        If no row is an iteration run.

    Examples
    --------
    >>> rows = [dict(family="f", label="x", algorithm="spectra-seq", ok=True, phases=4, makespan=3.0,
    ...              lower_bound=2.5, ratio_bound=1.5, ratio_independent=0.5, delay_hidden_pct=80.0,
    ...              reused_pct=25.0)]
    >>> t = summarize_iterations(rows)
    >>> t.header[5:]
    ['time/LB', 'exposed/bound', 'exposed/independent', 'hidden %', 'reused %']
    >>> t.rows[0][2:]
    ['spectra-seq', '1', '0', '1.200 (1.200)', '1.500 (1.500)', '0.500 (0.500)', '80.0', '25.0']
    """
    mine = [r for r in rows if is_iteration(r)]
    if not mine:
        raise InvalidInputError("`results` hold no iteration runs")
    header = ["family", "label", "algorithm", "runs", "failed"]
    header += ["time/LB", "exposed/bound", "exposed/independent", "hidden %", "reused %"]
    data_header = [*header[:5], "time/LB_mean", "time/LB_max", "exposed/bound_mean", "exposed/bound_max"]
    data_header += [
        "exposed/independent_mean",
        "exposed/independent_max",
        "hidden_pct_mean",
        "reused_pct_mean",
    ]
    table: list[list[str]] = []
    data: list[list[Any]] = []
    keyed = group(mine, ["family", "label"])
    for family, label in sorted(keyed, key=lambda k: (natural(k[0]), natural(k[1]))):
        by_alg = group(keyed[family, label], ["algorithm"])
        for (alg,) in sorted(by_alg, key=lambda k: natural(k[0])):
            grp = by_alg[(alg,)]
            ok = [r for r in grp if r["ok"]]
            time_lb = [r["makespan"] / r["lower_bound"] for r in ok if r.get("lower_bound")]
            stats = [_stats(time_lb), *(_stats([r[c] for r in ok if r.get(c) is not None]) for c in _RATIOS)]
            means = [_stats([r[c] for r in ok if r.get(c) is not None])[0] for c in _PCTS]
            counts = [len(grp), len(grp) - len(ok)]
            table.append(
                [family, label, alg, *map(str, counts)]
                + ["-" if m is None else f"{m:.3f} ({x:.3f})" for m, x in stats]
                + ["-" if m is None else f"{m:.1f}" for m in means]
            )
            data.append(
                [family, label, alg, *counts]
                + [None if v is None else round(v, 12) for p in stats for v in p]
                + [None if m is None else round(m, 12) for m in means]
            )
    return SummaryTable(header, table, data_header, data, left=3)


_RATIOS = ("ratio_bound", "ratio_independent")
_PCTS = ("delay_hidden_pct", "reused_pct")
