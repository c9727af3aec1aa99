"""The summary table: per family and label, mean and max of every makespan ratio.

Ratios are taken per matching run (:func:`ocsched.sweep.results.match_key`: the same demand
matrix under the same switch count and delay). ``A/spectra`` is algorithm A's makespan over
Spectra's on that instance; ``spectra/LB`` is Spectra's makespan over the lower bound. Failed runs
(``ok`` false) never enter a ratio; they are counted in the table.
"""

from __future__ import annotations

import csv
import io as _io
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ocsched.errors import InvalidInputError
from ocsched.sweep.results import check_columns, match_key

__all__ = ["NOTE", "SummaryTable", "algorithms_in", "group", "natural", "ratios", "summarize"]

Row = Mapping[str, Any]

#: What the cells of the text and Markdown tables mean.
NOTE = "cells: mean (max) over matching runs; A/spectra = A's makespan / Spectra's on the same instance"

#: The order algorithms are listed in (others follow, sorted).
ORDER = (
    "spectra",
    "spectra-pack",
    "spectra-noeq",
    "baseline",
    "baseline-eclipse",
    "eclipse",
    "solstice",
    "bvn",
    "naive",
    "exact",
)


def group(rows: Iterable[Row], key: Callable[[Row], Any] | Sequence[str]) -> dict[Any, list[Row]]:
    """Group rows by ``key`` (a function, or column names giving a tuple)."""
    # A column a row lacks (`fabric` in results from before fabrics) groups as None.
    fn = key if callable(key) else (lambda r, cols=tuple(key): tuple(r.get(c) for c in cols))
    out: dict[Any, list[Row]] = {}
    for r in rows:
        out.setdefault(fn(r), []).append(r)
    return out


def algorithms_in(rows: Iterable[Row]) -> list[str]:
    """The algorithms present in ``rows``, in the usual order."""
    present = {r["algorithm"] for r in rows}
    known = [a for a in ORDER if a in present]
    return known + sorted(present - set(known))


def ratios(rows: Sequence[Row], num: str, den: str | None) -> list[float]:
    """``num/den`` makespan ratios per matching run (``den=None``: over the lower bound)."""
    out = []
    for grp in group(rows, match_key).values():
        by = {r["algorithm"]: r for r in grp if r["ok"]}
        if num not in by:
            continue
        top = by[num]["makespan"]
        bottom = by[num]["lower_bound"] if den is None else by[den]["makespan"] if den in by else None
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

    def text(self) -> str:
        """Plain text, columns aligned."""
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]
        lines = [
            "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
            for r in [self.header, *self.rows]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def markdown(self) -> str:
        """A GitHub Markdown table."""
        align = ["---" if i < 2 else "---:" for i in range(len(self.header))]
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
    """Build the summary table: per family and label, mean (max) of every ratio.

    Columns: family, label, the ``by`` columns (e.g. ``("switches",)`` for one line per switch
    count), runs, failed runs, ``reference/LB``, then ``A/reference`` for every other algorithm
    present. A family with several labels also gets an "all" line.

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
    bad = [b for b in by if b not in BY_COLUMNS]
    if bad:
        raise InvalidInputError(f"`by` must name {', '.join(BY_COLUMNS)}; got {bad[0]!r}")
    algs = algorithms_in(rows)
    others = [a for a in algs if a != reference]
    has_ref = reference in algs
    series: list[tuple[str, str, str | None]] = [(f"{reference}/LB", reference, None)] if has_ref else []
    series += [
        (f"{a}/{reference}" if has_ref else f"{a}/LB", a, reference if has_ref else None) for a in others
    ]
    header = ["family", "label", *by, "runs", "failed", *(s[0] for s in series)]
    data_header = ["family", "label", *by, "runs", "failed"]
    data_header += [f"{name}_{stat}" for name, _, _ in series for stat in ("mean", "max")]
    table: list[list[str]] = []
    data: list[list[Any]] = []

    def line(family: str, label: str, key: tuple[Any, ...], grp: Sequence[Row]) -> None:
        counts = [len(grp), sum(1 for r in grp if not r["ok"])]
        stats = [_stats(ratios(grp, num, den)) for _, num, den in series]
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
