"""Figures from sweep results, for whatever grid and algorithms the results hold.

- ``delta-<label>``: mean makespan vs δ, one panel per switch count;
- ``switches-<label>``: mean makespan vs the number of switches, one panel per δ;
- ``bound-<label>``: makespan / lower bound vs δ, one panel per switch count;
- ``flows-<family>``: mean makespan vs the standard workload's flows per port;
- ``ratios``: mean makespan ratio of every algorithm to Spectra, per family.

Error bars span the minimum to the maximum over seeds (and over the instances of a label).
Runs on different fabrics are never joined by one line: each fabric (by content, see
:func:`~ocsched.report.tables.name_fabrics`) gets its own line per algorithm, labelled
``algorithm, fabric``, with its own marker; a ``switches`` x ``delta`` grid's runs form one line
per algorithm.
Colours are the Okabe-Ito palette (safe for colour-blind readers); every algorithm also has its
own marker and line style, so the figures read in black and white. matplotlib is imported inside
the functions, with the non-interactive Agg backend.
"""

from __future__ import annotations

import math
import os
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ocsched.report.output import DPI, FIGURE_FORMATS, check_figure_options, pyplot, save, slug
from ocsched.report.output import save_figure as save_figure
from ocsched.report.scales import Row, _makespan, _mean, _to_bound, doubles, time_unit
from ocsched.report.styles import FABRIC_MARKERS, HATCHES, STYLES, _style
from ocsched.report.styles import PALETTE as PALETTE
from ocsched.report.tables import algorithms_in, group, name_fabrics, natural, ratios
from ocsched.sweep.results import match_key

__all__ = [
    "DPI",
    "FIGURE_FORMATS",
    "STYLES",
    "check_figure_options",
    "doubles",
    "plot_bound_ratio",
    "plot_delta",
    "plot_flows",
    "plot_ratios",
    "plot_switches",
    "pyplot",
    "slug",
    "time_unit",
]


def _fabric_groups(rows: Sequence[Row]) -> list[tuple[str | None, list[Row]]]:
    """The rows of each fabric, by identity (name None: a switches x delta grid, first), in name order."""
    groups = group(rows, lambda r: (r.get("fabric"), r.get("fabric_id")))
    ordered = sorted(
        groups.items(), key=lambda kv: (kv[0][0] is not None, natural(kv[0][0] or ""), kv[0][1] or "")
    )
    return [(name, mine) for (name, _), mine in ordered]


def _series(
    ax: Any,
    xs: Sequence[float],
    rows: Sequence[Row],
    xkey: str,
    algs: Sequence[str],
    value: Callable[[Row], float],
    bound: bool,
    log: bool = True,
) -> None:
    """Plot the mean of ``value`` vs ``xkey`` per algorithm and fabric, min..max as error bars; the bound.

    Invariant: one line never joins runs of two fabrics (or a fabric and a grid): rows are split
    by fabric first, then by algorithm.
    """
    ok = [r for r in rows if r["ok"]]
    fabrics = _fabric_groups(ok)
    for f, (fabric, mine) in enumerate(fabrics):
        for k, a in enumerate(algs):
            # Offsets keep the error bars of different algorithms apart (relative on a log axis).
            step = k - (len(algs) - 1) / 2
            spread = (max(xs) - min(xs)) if len(xs) > 1 else 1.0
            pts = []
            for x in xs:
                vals = [
                    v
                    for v in (value(r) for r in mine if r[xkey] == x and r["algorithm"] == a)
                    if math.isfinite(v)
                ]
                if vals:
                    px_ = x * 2.0 ** (0.025 * step) if log else x + 0.006 * spread * step
                    pts.append((px_, _mean(vals), min(vals), max(vals)))
            if not pts:
                continue
            px, mean, lo, hi = zip(*pts, strict=True)
            marker, ls, color = _style(a, k)
            if f:
                marker = FABRIC_MARKERS[(f - 1) % len(FABRIC_MARKERS)]
            ax.errorbar(
                px,
                mean,
                yerr=[
                    [m - v for m, v in zip(mean, lo, strict=True)],
                    [v - m for m, v in zip(mean, hi, strict=True)],
                ],
                marker=marker,
                linestyle=ls,
                color=color,
                label=a if fabric is None else f"{a}, {fabric}",
                markerfacecolor="white",
                markersize=5,
                capsize=2,
                elinewidth=0.8,
                zorder=10 - k,
            )
        if bound:
            # The bound depends on the instance only, not the algorithm: average it once per
            # instance, over the deltas this fabric (or grid) has.
            here = [x for x in xs if any(r[xkey] == x for r in mine)]
            lb = [
                _mean(
                    g[0]["lower_bound"] for g in group([r for r in mine if r[xkey] == x], match_key).values()
                )
                for x in here
            ]
            name = "lower bound" if fabric is None else f"lower bound, {fabric}"
            marker = "" if len(here) > 1 else "_"  # a fabric has one delta: a tick, not a line
            ax.plot(here, lb, linestyle=":", marker=marker, color="0.0", linewidth=2.0, label=name)
    if not bound:
        ax.axhline(1.0, color="black", linewidth=0.8)
    ax.grid(True, color="0.85", linewidth=0.6)


def _panels(
    rows: Sequence[Row],
    xs: Sequence[float],
    xkey: str,
    pkey: str,
    pvals: Sequence[Any],
    algs: Sequence[str],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    ptitle: Callable[[Any], str],
    value: Callable[[Row], float],
    bound: bool,
    out_stem: str | os.PathLike[str],
    formats: Sequence[str],
    dpi: int = DPI,
) -> list[Path]:
    """One panel per value of ``pkey``: ``value`` of each algorithm against ``xkey``.

    The x axis is log2 when each value doubles the one before (δ = 0.01, 0.02, 0.04; s = 2, 4,
    8), linear otherwise, with a tick at every value.
    """
    log = doubles(xs)
    plt = pyplot()
    ncols = min(len(pvals), 4)
    nrows = math.ceil(len(pvals) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.4 * nrows), squeeze=False)
    flat = [ax for line in axes for ax in line]
    for ax, p in zip(flat, pvals, strict=False):
        _series(ax, xs, [r for r in rows if r[pkey] == p], xkey, algs, value, bound, log)
        if log:
            ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_title(f"{title}, {ptitle(p)}", fontsize=10)
    for ax in flat[len(pvals) :]:
        ax.set_visible(False)
    for line in axes:
        line[0].set_ylabel(ylabel)
    legend_ax = flat[min(len(pvals), ncols) - 1]
    handles, names = legend_ax.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda i: names[i].startswith("lower bound"))  # bounds last
    legend_ax.legend([handles[i] for i in order], [names[i] for i in order], fontsize=7, frameon=False)
    return save(fig, Path(out_stem), formats, dpi)


def _pick(rows: Sequence[Row], label: str, family: str | None) -> list[Row]:
    mine = [r for r in rows if r["label"] == label and (family is None or r["family"] == family)]
    return name_fabrics(mine)


def _present(rows: Sequence[Row], key: str, wanted: Sequence[Any] | None) -> list[Any]:
    have = sorted({r[key] for r in rows})
    return have if wanted is None else [v for v in wanted if v in have]


def _algs(rows: Sequence[Row], wanted: Sequence[str] | None) -> list[str]:
    have = algorithms_in(rows)
    return have if wanted is None else [a for a in wanted if a in have]


def _axes(
    rows: Sequence[Row], switches: Sequence[int] | None, algorithms: Sequence[str] | None, x: str
) -> tuple[list[Any], list[str], list[Any]]:
    """The switch counts and algorithms wanted and present in ``rows``, and every value of column ``x``."""
    return _present(rows, "switches", switches), _algs(rows, algorithms), _present(rows, x, None)


def plot_delta(
    rows: Sequence[Row],
    out_stem: str | os.PathLike[str],
    *,
    label: str,
    family: str | None = None,
    switches: Sequence[int] | None = None,
    algorithms: Sequence[str] | None = None,
    formats: Sequence[str] = ("png", "pdf"),
    dpi: int = DPI,
) -> list[Path]:
    """Plot mean makespan vs delta, one panel per switch count, for the runs of ``label``.

    ``family``, if given, restricts to that family too; ``switches`` and ``algorithms`` default
    to every one present. Returns the written files (``out_stem`` + ``.png`` / ``.pdf``); an
    empty list when the label has fewer than two deltas.
    """
    mine = _pick(rows, label, family)
    svals, algs, deltas = _axes(mine, switches, algorithms, "delta")
    if len(deltas) < 2 or not svals or not algs:
        return []
    return _panels(
        mine, deltas, "delta", "switches", svals, algs,
        xlabel=f"reconfiguration delay δ ({time_unit(mine)})",
        ylabel=f"makespan ({time_unit(mine)}; mean, min-max over seeds)", title=label,
        ptitle=lambda s: f"s = {s}", value=_makespan, bound=True, out_stem=out_stem, formats=formats,
        dpi=dpi,
    )  # fmt: skip


def plot_switches(
    rows: Sequence[Row],
    out_stem: str | os.PathLike[str],
    *,
    label: str,
    family: str | None = None,
    algorithms: Sequence[str] | None = None,
    formats: Sequence[str] = ("png", "pdf"),
    dpi: int = DPI,
) -> list[Path]:
    """Plot mean makespan vs the number of switches, one panel per delta; [] if fewer than two counts."""
    mine = _pick(rows, label, family)
    svals, algs, deltas = _axes(mine, None, algorithms, "delta")
    if len(svals) < 2 or not algs:
        return []
    return _panels(
        mine, svals, "switches", "delta", deltas, algs,
        xlabel="number of switches s", ylabel=f"makespan ({time_unit(mine)}; mean, min-max over seeds)",
        title=label,
        ptitle=lambda d: f"δ = {d:g}", value=_makespan, bound=True, out_stem=out_stem, formats=formats,
        dpi=dpi,
    )  # fmt: skip


def plot_bound_ratio(
    rows: Sequence[Row],
    out_stem: str | os.PathLike[str],
    *,
    label: str,
    family: str | None = None,
    algorithms: Sequence[str] | None = None,
    formats: Sequence[str] = ("png", "pdf"),
    dpi: int = DPI,
) -> list[Path]:
    """Plot makespan / lower bound vs delta, one panel per switch count; [] if fewer than two deltas."""
    mine = _pick(rows, label, family)
    svals, algs, deltas = _axes(mine, None, algorithms, "delta")
    if len(deltas) < 2 or not algs:
        return []
    return _panels(
        mine, deltas, "delta", "switches", svals, algs,
        xlabel=f"reconfiguration delay δ ({time_unit(mine)})", ylabel="makespan / lower bound", title=label,
        ptitle=lambda s: f"s = {s}", value=_to_bound, bound=False, out_stem=out_stem, formats=formats,
        dpi=dpi,
    )  # fmt: skip


def plot_flows(
    rows: Sequence[Row],
    out_stem: str | os.PathLike[str],
    *,
    family: str,
    delta: float | None = None,
    switches: Sequence[int] | None = None,
    algorithms: Sequence[str] | None = None,
    formats: Sequence[str] = ("png", "pdf"),
    dpi: int = DPI,
) -> list[Path]:
    """Plot mean makespan vs the workload option ``flows`` (flows per port, column ``opt_flows``).

    Uses the runs of ``family`` that set ``flows``, at ``delta`` (default: the family's only
    delta, or 0.04 if it has several); returns [] if fewer than two values.
    """
    mine = name_fabrics([r for r in rows if r["family"] == family and r.get("opt_flows") is not None])
    if delta is None:
        deltas = {r["delta"] for r in mine}
        delta = deltas.pop() if len(deltas) == 1 else 0.04
    mine = [r for r in mine if math.isclose(r["delta"], delta)]
    svals, algs, xs = _axes(mine, switches, algorithms, "opt_flows")
    if len(xs) < 2 or not svals or not algs:
        return []
    return _panels(
        mine, xs, "opt_flows", "switches", svals, algs,
        xlabel="flows per port", ylabel=f"makespan ({time_unit(mine)}; mean, min-max over seeds)",
        title=f"{family}, δ = {delta:g}",
        ptitle=lambda s: f"s = {s}", value=_makespan, bound=True, out_stem=out_stem, formats=formats,
        dpi=dpi,
    )  # fmt: skip


def plot_ratios(
    rows: Sequence[Row],
    out_stem: str | os.PathLike[str],
    *,
    reference: str | None = None,
    formats: Sequence[str] = ("png", "pdf"),
    dpi: int = DPI,
) -> list[Path]:
    """Bar chart of every algorithm's mean makespan / lower bound, per family (the headline figure).

    Every bar is on one scale, how far above a bound no schedule can beat (1 = proven
    optimal), so one poor algorithm does not squash the others; the y axis turns logarithmic
    when the largest ratio is over 4. With ``reference`` (e.g. ``"spectra"``), the older chart:
    the reference's ratio to the bound, then every other algorithm's ratio to the reference.
    Bars are coloured and hatched differently per algorithm (readable in black and white). []
    without runs that carry a lower bound (or without the reference).
    """
    algs = algorithms_in(rows)
    if reference is None:
        if not any(r.get("lower_bound") for r in rows if r["ok"]):
            return []
        series: list[tuple[str, str, str | None]] = [(a, a, None) for a in algs]
    else:
        if reference not in algs:
            return []
        series = [(f"{reference}/LB", reference, None)] + [
            (f"{a}/{reference}", a, reference) for a in algs if a != reference
        ]
    families = sorted(group(rows, ["family"]), key=lambda k: natural(k[0]))
    plt = pyplot()
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(min(14.0, max(6.0, 2.0 + 1.8 * len(families))), 4.0))
    top = 1.0
    for k, (name, num, den) in enumerate(series):
        vals = [_mean(ratios([r for r in rows if r["family"] == f], num, den)) for (f,) in families]
        top = max([top, *(v for v in vals if math.isfinite(v))])
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(families))]
        first = k == 0 and reference is not None
        ax.bar(
            xs,
            vals,
            width,
            label=name,
            color="white" if first else _style(num, k)[2],
            alpha=1.0 if first else 0.75,
            edgecolor="black",
            linewidth=0.6,
            hatch=HATCHES[k % len(HATCHES)],
            gid="ratio",
        )
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(families)), [textwrap.fill(f, 16) for (f,) in families])
    if reference is None:
        ax.set_ylabel("makespan / lower bound (mean; 1 = optimal)")
        ax.set_ylim(bottom=1.0 if top <= 4 else 0.9)
        if top > 4:
            ax.set_yscale("log")
    else:
        ax.set_ylabel("mean makespan ratio")
    ax.legend(
        fontsize=7, frameon=False, ncol=min(len(series), 5), loc="upper left", bbox_to_anchor=(0, -0.16)
    )
    ax.grid(True, axis="y", color="0.85", linewidth=0.6)
    return save(fig, Path(out_stem), formats, dpi)
