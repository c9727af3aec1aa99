"""Tests of ocsched.report and the `ocsched report` / `ocsched plot` commands."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ocsched
from ocsched import io, report, sweep
from ocsched._extras import install_hint
from ocsched.cli import app
from ocsched.errors import InvalidInputError, OcschedError

pytest.importorskip("pyarrow")
pytest.importorskip("matplotlib")

runner = CliRunner()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _row(
    algorithm: str,
    makespan: float | None,
    *,
    seed: int = 0,
    s: int = 4,
    delta: float = 0.04,
    label: str = "x",
    family: str = "f",
    lb: float = 1.0,
    **options: Any,
) -> dict[str, Any]:
    return dict(
        family=family,
        label=label,
        workload="w",
        **{f"opt_{k}": v for k, v in options.items()},
        normalized=True,
        link_gbps=None,
        seed=seed,
        switches=s,
        delta=delta,
        algorithm=algorithm,
        ok=makespan is not None,
        makespan=makespan,
        lower_bound=lb,
    )


def test_ratios_are_per_matching_run() -> None:
    rows = [
        _row("spectra", 1.0, seed=0),
        _row("baseline", 2.0, seed=0),
        _row("spectra", 2.0, seed=1),
        _row("baseline", 3.0, seed=1),
        # Same seed, other delta: a separate instance; baseline missing there (no ratio).
        _row("spectra", 4.0, seed=1, delta=0.08),
    ]
    t = report.summarize(rows)
    assert t.header == ["family", "label", "runs", "failed", "spectra/LB", "baseline/spectra"]
    # baseline/spectra over matched runs: 2/1 and 3/2 -> mean 1.75, max 2. spectra/LB: 1, 2, 4.
    assert t.rows == [["f", "x", "5", "0", "2.333 (4.000)", "1.750 (2.000)"]]


def test_failed_runs_are_counted_not_averaged() -> None:
    rows = [
        _row("spectra", 1.0),
        _row("baseline", None),
        _row("spectra", 1.5, seed=1),
        _row("baseline", 3.0, seed=1),
    ]
    t = report.summarize(rows)
    assert t.rows == [["f", "x", "4", "1", "1.250 (1.500)", "2.000 (2.000)"]]


def test_families_labels_and_all_row_in_natural_order() -> None:
    rows = []
    for label, k in (("F n=16", 2.0), ("F n=8", 4.0)):
        rows += [_row("spectra", 1.0, label=label), _row("naive", k, label=label)]
    rows += [_row("spectra", 1.0, family="A", label="a"), _row("naive", 1.0, family="A", label="a")]
    t = report.summarize(rows)
    assert [r[:2] for r in t.rows] == [["A", "a"], ["f", "F n=8"], ["f", "F n=16"], ["f", "all"]]
    assert t.rows[-1][-1] == "3.000 (4.000)"


def test_without_spectra_ratios_are_to_the_bound() -> None:
    t = report.summarize([_row("naive", 1.5, lb=1.0), _row("bvn", 1.2, lb=1.0)])
    assert t.header[-2:] == ["bvn/LB", "naive/LB"]  # registry order of the plot styles
    assert t.rows[0][-2:] == ["1.200 (1.200)", "1.500 (1.500)"]
    assert report.plot_ratios([_row("naive", 1.5)], "unused", reference="spectra") == []


def test_table_formats() -> None:
    t = report.summarize([_row("spectra", 1.0), _row("baseline", 2.0)])
    md = t.markdown().splitlines()
    assert md[0] == "| family | label | runs | failed | spectra/LB | baseline/spectra |"
    assert md[1] == "| --- | --- | ---: | ---: | ---: | ---: |"
    assert t.csv().splitlines()[1] == "f,x,2,0,1.0,1.0,2.0,2.0"
    lines = t.text().splitlines()
    assert len({len(line) for line in lines[:2]}) == 1  # header and rule aligned


def test_empty_results_raise() -> None:
    with pytest.raises(InvalidInputError, match="no rows"):
        report.summarize([])


CONFIG: dict[str, Any] = {
    "switches": [2, 4],
    "delta": [0.02, 0.08],
    "algorithms": ["spectra", "spectra-greedy"],
    "workloads": [
        {"name": "standard", "label": "S", "seeds": 2, "options": {"n": 12, "flows": 4}},
        {
            "name": "standard",
            "label": "F",
            "family": "flows",
            "options": {"n": 12},
            "grid": {"flows": [2, 4, 8]},
            "delta": 0.04,
        },
    ],
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("res") / "r"
    sweep.run_sweep(CONFIG, out, workers=1)
    return out


def test_write_report_files_and_figures(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    rep = report.write_report(results, out)
    table, written = rep.table, rep.written
    names = sorted(p.name for p in written)
    stems = ["delta-s", "bound-s", "switches-s", "flows-flows", "ratios"]
    stems += [f"switches-f-flows-{f}" for f in (2, 4, 8)]  # one delta each, but two switch counts
    assert names == sorted(
        ["summary.txt", "summary.md", "summary.csv"]
        + [f"{stem}.{ext}" for stem in stems for ext in ("png", "pdf")]
    )
    assert sorted(n.split(":")[0] for n in rep.skipped) == sorted(
        f"{kind}-f-flows-{f}" for kind in ("delta", "bound") for f in (2, 4, 8)
    )
    assert all("has one delta (0.04)" in n for n in rep.skipped)
    assert (out / "summary.md").read_text() == table.markdown()
    for p in written:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == PNG_MAGIC
        if p.suffix == ".pdf":
            assert p.read_bytes()[:5] == b"%PDF-"
    with pytest.raises(InvalidInputError, match="not empty"):
        report.write_report(results, out)
    report.write_report(results, out, force=True, figures=False)


def test_plot_delta_needs_two_deltas(results: Path, tmp_path: Path) -> None:
    rows = report.load_rows(results)
    assert report.plot_delta(rows, tmp_path / "d", label="F flows=2") == []  # one delta only
    assert report.plot_flows(rows, tmp_path / "f", family="S") == []  # no flows option set
    paths = report.plot_delta(rows, tmp_path / "d", label="S", switches=(2,), formats=("png",))
    assert [p.name for p in paths] == ["d.png"]


def test_cli_report(results: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["report", str(results)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].split() == [
        "family",
        "label",
        "runs",
        "failed",
        "spectra/LB",
        "spectra/best",
        "spectra-greedy/spectra",
    ]
    res = runner.invoke(app, ["report", str(results), "--format", "markdown", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("| family |") and "wrote" in res.stdout
    assert (tmp_path / "o" / "ratios.png").is_file()
    res = runner.invoke(app, ["report", str(results), "--format", "html"])
    assert res.exit_code == 2 and "`--format`" in res.stderr and "'csv'" in res.stderr
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "no _manifest.parquet" in res.stderr


def _schedule_file(tmp_path: Path) -> Path:
    d = [[0, 3, 1, 0], [1, 0, 3, 0], [3, 1, 0, 2], [0, 0, 2, 0]]
    sched = ocsched.schedule(d, switches=2, delta=0.3)
    return io.write_schedule(sched, tmp_path / "s.json")


def test_plot_schedule_groups_pieces_and_refuses_overwrite(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sched = io.read_schedule(_schedule_file(tmp_path))
    p = report.write_schedule_plot(sched, tmp_path / "g.png")
    assert p.read_bytes()[:8] == PNG_MAGIC
    assert plt.get_fignums() == []  # figure closed
    with pytest.raises(InvalidInputError, match="already exists"):
        report.write_schedule_plot(sched, p)
    report.write_schedule_plot(sched, p, force=True)
    with pytest.raises(InvalidInputError, match=r"\.png, \.pdf or \.svg"):
        report.write_schedule_plot(sched, tmp_path / "g.jpg")


def test_cli_plot(tmp_path: Path) -> None:
    sfile = _schedule_file(tmp_path)
    out = tmp_path / "gantt.png"
    res = runner.invoke(app, ["plot", str(sfile), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:8] == PNG_MAGIC
    res = runner.invoke(app, ["plot", str(sfile), "--out", str(out)])
    assert res.exit_code == 2 and "already exists" in res.stderr
    res = runner.invoke(app, ["plot", str(tmp_path / "none.json"), "--out", str(tmp_path / "x.png")])
    assert res.exit_code == 2 and "not found" in res.stderr


def test_permutation_groups_match_circuit_sets() -> None:
    from ocsched.workloads import generate

    d = generate("standard", n=16, flows=4, rng=3, normalize=True)
    sched = ocsched.schedule(d, switches=8, delta=0.02)
    assert sched.splits > 0  # equalization split some permutations across switches
    groups = report.permutation_groups(sched)
    confs = [c for sw in sched.switches for c in sw]
    flat = [g for sw in groups for g in sw]
    assert len(flat) == len(confs)
    for a in range(len(confs)):
        for b in range(len(confs)):
            same = bool((confs[a].perm == confs[b].perm).all())
            assert (flat[a] == flat[b]) == same
    assert max(flat) + 1 == len(confs) - sched.splits


def test_by_splits_lines() -> None:
    rows = [
        _row("spectra", 1.0, s=4),
        _row("baseline", 2.0, s=4),
        _row("spectra", 1.0, s=16),
        _row("baseline", 3.0, s=16),
    ]
    t = report.summarize(rows, by=["switches"])
    assert t.header[:3] == ["family", "label", "switches"]
    assert [r[2] for r in t.rows] == ["4", "16"]
    assert [r[-1] for r in t.rows] == ["2.000 (2.000)", "3.000 (3.000)"]
    with pytest.raises(InvalidInputError, match="`by` must name"):
        report.summarize(rows, by=["algorithm"])


def test_missing_matplotlib_gives_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    rows = [_row("spectra", 1.0), _row("baseline", 2.0)]
    assert report.summarize(rows).rows  # tables need no extra
    with pytest.raises(OcschedError, match=re.escape(install_hint("plot"))):
        report.plot_ratios(rows, tmp_path / "r")


# --------------------------------------------------------------------------- machine-readable output


def test_csv_is_numeric_with_notes_on_stderr(results: Path, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    res = runner.invoke(
        app, ["report", str(results), "--format", "csv", "--out", str(tmp_path / "o"), "--no-figures"]
    )
    assert res.exit_code == 0, res.output
    csv_text = res.stdout.split("wrote ")[0]
    assert "cells:" not in res.stdout and "cells:" not in (tmp_path / "o" / "summary.csv").read_text()
    for text in (csv_text, (tmp_path / "o" / "summary.csv").read_text()):
        df = pd.read_csv(io_module().StringIO(text))
        stats = [c for c in df.columns if c.endswith(("_mean", "_max"))]
        assert stats == [
            "spectra/LB_mean",
            "spectra/LB_max",
            "spectra/best_mean",
            "spectra/best_max",
            "spectra-greedy/spectra_mean",
            "spectra-greedy/spectra_max",
        ]
        assert all(df[c].dtype.kind == "f" for c in stats) and df["runs"].dtype.kind == "i"
        assert (df["spectra/LB_mean"] <= df["spectra/LB_max"]).all() and (df["spectra/LB_mean"] >= 1).all()
    table = report.summarize(report.load_rows(results))
    first = table.rows[0][-1]  # "mean (max)" text cell of the same statistic
    assert first == f"{table.data[0][-2]:.3f} ({table.data[0][-1]:.3f})"


def io_module() -> Any:
    import io as std_io

    return std_io


# --------------------------------------------------------------------------- figures for any grid


def test_figures_for_any_grid_and_every_algorithm(tmp_path: Path) -> None:
    algs = ["spectra", "spectra-greedy", "baseline", "eclipse", "naive"]
    cfg = {
        "switches": [2, 8, 32],
        "delta": [0.02, 0.08],
        "algorithms": algs,
        "workloads": [{"name": "standard", "label": "S", "seeds": 2, "options": {"n": 8, "flows": 3}}],
    }
    sweep.run_sweep(cfg, tmp_path / "r", workers=1)
    rep = report.write_report(tmp_path / "r", tmp_path / "o", by=["switches"])
    assert all(p.stat().st_size > 10_000 for p in rep.written if p.suffix == ".png")
    names = {p.name for p in rep.written if p.suffix == ".png"}
    assert names == {"delta-s.png", "bound-s.png", "switches-s.png", "ratios.png"}
    assert rep.skipped == []
    rows = report.load_rows(tmp_path / "r")
    import matplotlib.pyplot as plt

    # Every algorithm and every switch count is drawn: read back the legend and panel titles.
    fig_rows = [r for r in rows if r["label"] == "S"]
    assert {r["switches"] for r in fig_rows} == {2, 8, 32}
    captured: list[Any] = []
    real_save = report.figures.save
    try:
        report.figures.save = lambda fig, stem, formats, dpi=150: captured.append(fig) or []  # type: ignore[assignment]
        report.plot_delta(rows, tmp_path / "x", label="S")
    finally:
        report.figures.save = real_save  # type: ignore[assignment]
    (fig,) = captured
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["S, s = 2", "S, s = 8", "S, s = 32"]
    legend = [t.get_text() for t in axes[-1].get_legend().get_texts()]
    assert legend == [*algs, "lower bound"]
    plt.close(fig)


def test_styles_distinct_in_colour_and_in_black_and_white() -> None:
    from ocsched.report.figures import STYLES
    from ocsched.report.tables import ORDER
    from ocsched.schedulers import SCHEDULERS

    assert set(SCHEDULERS) <= set(STYLES) and set(SCHEDULERS) <= set(
        ORDER
    )  # every scheduler, from the registry

    assert len({m for m, _, _ in STYLES.values()}) == len(STYLES)  # markers alone tell them apart
    assert len({str(ls) for _, ls, _ in STYLES.values()}) == len(STYLES)


# --------------------------------------------------------------------------- Gantt charts


def test_plot_schedule_returns_axes_with_zero_based_switches() -> None:
    import matplotlib.pyplot as plt

    d = [[0, 3, 1, 0], [1, 0, 3, 0], [3, 1, 0, 2], [0, 0, 2, 0]]
    sched = ocsched.schedule(d, switches=3, delta=0.3)
    fig, ax = plt.subplots()
    assert report.plot_schedule(sched, ax) is ax
    assert [t.get_text() for t in ax.get_yticklabels()] == ["OCS 0", "OCS 1", "OCS 2"]
    # Each configuration's dark interval ends where it starts and lasts delta (timing.dark_interval).
    bars = [p for p in ax.patches if p.get_facecolor()[:3] == (1.0, 1.0, 1.0)]
    starts = sorted(c.start for sw in sched.switches for c in sw)
    assert sorted(round(b.get_x() + b.get_width(), 12) for b in bars) == [round(s, 12) for s in starts]
    assert all(b.get_width() == pytest.approx(0.3) for b in bars)
    plt.close(fig)
    ax2 = report.plot_schedule(sched)  # a new figure, left open for a notebook to show
    assert ax2.figure is not fig
    plt.close(ax2.figure)


def _write_json(path: Path, data: dict[str, Any]) -> Path:
    import json

    path.write_text(json.dumps(data))
    return path


def test_cli_plot_bad_inputs_are_one_line(tmp_path: Path) -> None:
    import json

    sfile = _schedule_file(tmp_path)
    data = json.loads(sfile.read_text())
    res = runner.invoke(app, ["plot", str(sfile), "--out", str(tmp_path / "missing" / "dir" / "g.png")])
    assert res.exit_code == 2 and "folder does not exist" in res.stderr
    assert not (tmp_path / "missing").exists()
    many = {**data, "switches": data["switches"] + [{"configurations": []} for _ in range(100_000)]}
    nan = json.loads(sfile.read_text().replace('"start": 0.3', '"start": NaN', 1))
    inf = json.loads(sfile.read_text().replace('"start": 0.3', '"start": Infinity', 1))
    for name, bad in (("many", many), ("nan", nan), ("inf", inf)):
        f = _write_json(tmp_path / f"{name}.json", bad)
        res = runner.invoke(app, ["plot", str(f), "--out", str(tmp_path / f"{name}.png")])
        assert res.exit_code == 2, (name, res.output)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output
        assert ("a chart draws at most" if name == "many" else "non-finite time") in res.stderr
        assert not (tmp_path / f"{name}.png").exists()


def test_summary_splits_by_fabric() -> None:
    # Two fabrics of one label: `--by fabric` gives a line each, ratios matched within a fabric.
    rows = [
        {**_row("spectra", 1.2), "fabric": "mixed"},
        {**_row("baseline", 2.4), "fabric": "mixed"},
        {**_row("spectra", 1.0), "fabric": "mems"},
        {**_row("baseline", 1.5), "fabric": "mems"},
    ]
    table = report.summarize(rows, by=["fabric"])
    lines = {r[2]: r for r in table.rows}
    assert set(lines) == {"mems", "mixed"}
    assert lines["mixed"][-1] == "2.000 (2.000)" and lines["mems"][-1] == "1.500 (1.500)"
    # Rows from before fabrics (no column) group as "-".
    old = report.summarize([_row("spectra", 1.2), _row("baseline", 2.4)], by=["fabric"])
    assert old.rows[0][2] == "-"
    with pytest.raises(InvalidInputError, match="fabric"):
        report.summarize(rows, by=["colour"])


def test_iteration_runs_get_their_own_table(tmp_path: Path) -> None:
    cfg = {
        "switches": 2,
        "delta": 0.05,
        "algorithms": ["spectra"],
        "workloads": [
            {"name": "standard", "seeds": 1, "options": {"n": 6, "flows": 2}},
            {"name": "moe-iteration", "options": {"gpus": 4, "layers": 2}, "delta": [0.001, 0.1]},
        ],
    }
    sweep.run_sweep(cfg, tmp_path / "r", workers=1)
    rows = report.load_rows(tmp_path / "r")
    main, its = report.summaries(rows)
    assert main is not None and [line[:3] for line in main.data] == [["standard", "standard", 1]]
    assert its is not None and [line[2] for line in its.data] == ["independent", "spectra-seq"]
    ind, seq = its.data
    assert ind[3:5] == [2, 0] and ind[9] == ind[10] == 1.0  # exposed / independent's, mean and max
    assert seq[9] <= 1.0  # spectra-seq is never later than independent
    res = runner.invoke(app, ["report", str(tmp_path / "r"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "exposed/independent" in res.stdout and "spectra/best" in res.stdout
    assert (tmp_path / "o" / "iterations.csv").is_file() and (tmp_path / "o" / "summary.md").is_file()
    res = runner.invoke(app, ["report", str(tmp_path / "r"), "--format", "csv"])
    assert res.exit_code == 0 and "exposed/independent" not in res.stdout and "iterations.csv" in res.stderr
    only_iterations = [r for r in rows if r["phases"] is not None]
    with pytest.raises(InvalidInputError, match="only iteration runs"):
        report.summarize(only_iterations)
    assert report.summaries(only_iterations)[0] is None


def test_summary_shows_heuristic_over_best_bound_and_over_exact_side_by_side() -> None:
    base = dict(family="f", label="x", workload="w", normalized=True, link_gbps=None, seed=0, switches=2)
    rows = [
        {**base, "delta": d, "algorithm": a, "ok": True, "makespan": m, "lower_bound": 1.0, "best_bound": 1.1}
        for d, ms in ((0.1, (1.2, 1.15)), (0.2, (1.4, 1.4)))
        for a, m in zip(("spectra", "exact"), ms, strict=True)
    ]
    t = report.summarize(rows)
    assert t.header[4:] == ["spectra/LB", "spectra/best", "spectra/exact"]  # no exact/spectra column
    assert t.rows[0][4:] == ["1.300 (1.400)", "1.182 (1.273)", "1.022 (1.043)"]


# --------------------------------------------------------------------------- fabrics in figures


def _captured(plot: Any, *args: Any, **kw: Any) -> Any:
    """The figure a plot function draws (not saved)."""
    captured: list[Any] = []
    real_save = report.figures.save
    try:
        report.figures.save = lambda fig, stem, formats, dpi=150: captured.append(fig) or [stem]  # type: ignore[assignment]
        plot(*args, **kw)
    finally:
        report.figures.save = real_save  # type: ignore[assignment]
    (fig,) = captured
    return fig


def test_delta_figure_draws_one_line_per_fabric() -> None:
    import matplotlib.pyplot as plt

    # A grid over two deltas, and two different fabrics named "f" of one size (largest delay
    # 0.01 and 0.1): before, "spectra" joined both fabrics' points into one line.
    rows = [_row("spectra", m, delta=d) for d, m in ((0.02, 1.1), (0.08, 1.3))]
    rows += [
        {**_row("spectra", m, delta=d), "fabric": "f", "fabric_id": i}
        for d, m, i in ((0.01, 1.0, "aa" * 8), (0.1, 2.0, "bb" * 8))
    ]
    fig = _captured(report.plot_delta, rows, "x", label="x")
    (ax,) = [a for a in fig.axes if a.get_visible()]
    lines = {c.get_label(): c.lines[0].get_xdata().tolist() for c in ax.containers}
    assert set(lines) == {"spectra", "spectra, f [aaaaaaaa]", "spectra, f [bbbbbbbb]"}
    assert len(lines["spectra"]) == 2
    assert len(lines["spectra, f [aaaaaaaa]"]) == len(lines["spectra, f [bbbbbbbb]"]) == 1
    # The bound too: one per fabric, none joining two.
    bounds = [ln for ln in ax.get_lines() if ln.get_label().startswith("lower bound")]
    assert sorted(ln.get_label() for ln in bounds) == [
        "lower bound",
        "lower bound, f [aaaaaaaa]",
        "lower bound, f [bbbbbbbb]",
    ]
    assert sorted(len(ln.get_xdata()) for ln in bounds) == [1, 1, 2]
    plt.close(fig)


def test_switches_figure_never_joins_fabrics() -> None:
    import matplotlib.pyplot as plt

    rows = [
        {**_row("spectra", 1.0 + s, s=s, delta=0.1), "fabric": name, "fabric_id": name * 8}
        for s, name in ((2, "a"), (4, "b"))
    ]
    fig = _captured(report.plot_switches, rows, "x", label="x")
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert sorted(len(c.lines[0].get_xdata()) for c in ax.containers) == [1, 1]
    plt.close(fig)


# --------------------------------------------------------------------------- files that are not results


def _part_rows(results: Path) -> list[dict[str, Any]]:
    return report.load_rows(results)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda r: {**r, "makespan": None}, "no finite makespan"),
        (lambda r: {**r, "lower_bound": "x"}, "column 'lower_bound' holds string"),
        (lambda r: {**r, "switches": None}, "column 'switches' has empty cells"),
        (lambda r: {**r, "family": None}, "column 'family' has empty cells"),
        (lambda r: {**r, "ok": None}, "column 'ok' has empty cells"),
        (lambda r: {**r, "delta": float("nan")}, "column 'delta' holds a value below 0.0 or not finite"),
        (lambda r: {**r, "opt_n": [1, 2]}, "option column 'opt_n' holds list"),
        (lambda r: {k: v for k, v in r.items() if k != "label"}, "has no column 'label'"),
    ],
)
def test_report_refuses_a_parquet_file_that_is_not_results_in_one_line(
    results: Path, tmp_path: Path, change: Any, needle: str
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [change(r) for r in _part_rows(results)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "x.parquet")
    res = runner.invoke(app, ["report", str(tmp_path / "x.parquet")])
    assert res.exit_code == 2, (res.output, res.exception)
    assert len(res.stderr.splitlines()) == 1 and "Traceback" not in res.output
    assert res.stderr.startswith("error: `results` file") and needle in res.stderr


def test_report_reads_a_parquet_file_of_results_whatever_wrote_it(results: Path, tmp_path: Path) -> None:
    import pandas as pd

    rows = _part_rows(results)
    pd.DataFrame(rows).to_parquet(tmp_path / "x.parquet")  # pandas' own types (e.g. object columns)
    res = runner.invoke(app, ["report", str(tmp_path / "x.parquet")])
    assert res.exit_code == 0, res.output
    assert res.stdout == runner.invoke(app, ["report", str(results)]).stdout


def test_a_bad_part_in_a_results_folder_is_left_out_with_a_warning(
    results: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "r"
    shutil.copytree(results, folder)
    rows = [{**r, "makespan": "fast"} for r in _part_rows(results)[:2]]
    pq.write_table(pa.Table.from_pylist(rows), folder / "parts" / "part-999999-deadbeef.parquet")
    with caplog.at_level("WARNING"):
        assert len(report.load_rows(folder)) == len(report.load_rows(results))
    assert "part-999999-deadbeef.parquet" in caplog.text and "left out" in caplog.text


# --------------------------------------------------------------------------- Gantt charts of fabrics


def _gids(ax: Any, gid: str) -> list[Any]:
    return [a for a in [*ax.patches, *ax.lines, *ax.texts] if a.get_gid() == gid]


def test_gantt_draws_each_switchs_own_delay() -> None:
    import matplotlib.pyplot as plt

    from helpers import conf
    from ocsched.fabric import Fabric

    fab = Fabric.from_deltas([0.05, 0.5], rates=[1.0, 2.0])
    sw0 = (conf(0.05, 1.0, [1, 0]), conf(1.1, 0.5, [0, 1]))
    sw1 = (conf(0.5, 0.4, [1, 0]),)
    sched = ocsched.Schedule(ports=2, delta=0.5, switches=(sw0, sw1), fabric=fab)
    ax = report.plot_schedule(sched)
    dark = _gids(ax, "dark")
    # One dark interval before each configuration, of its own switch's delay, ending at its start.
    got = sorted(
        (
            round(p.get_y() + p.get_height() / 2),
            round(p.get_width(), 12),
            round(p.get_x() + p.get_width(), 12),
        )
        for p in dark
    )
    assert got == [(0, 0.05, 0.05), (0, 0.05, 1.1), (1, 0.5, 0.5)]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["OCS 0 (δ 0.05)", "OCS 1 (δ 0.5, ×2)"]
    plt.close(ax.figure)


def test_gantt_draws_down_windows_and_failed_links() -> None:
    import matplotlib.pyplot as plt

    from helpers import conf
    from ocsched.fabric import Fabric, LinkDown, SwitchDown

    fab = Fabric.uniform(2, 0.1).with_failures(
        [SwitchDown(1, 0.5, 1.0), SwitchDown(0, 2.5)],
        [LinkDown(3, 0, 1.5), LinkDown(2, 0, 1.5), LinkDown(1, 1)],
    )
    sw0 = (conf(0.1, 1.0, [1, 0, 3, 2]),)
    sw1 = (conf(0.1, 0.4, [1, 0, 3, 2]), conf(1.1, 1.5, [2, 3, 0, 1]))
    sched = ocsched.Schedule(ports=4, delta=0.1, switches=(sw0, sw1), fabric=fab)
    ax = report.plot_schedule(sched)
    down = sorted(
        (round(p.get_y() + p.get_height() / 2), p.get_x(), round(p.get_x() + p.get_width(), 9))
        for p in _gids(ax, "down")
    )
    xmax = ax.get_xlim()[1]
    assert down == [(0, 2.5, round(xmax, 9)), (1, 0.5, 1.0)]  # down for good: to the chart's end
    marks = sorted(
        (ln.get_xdata()[0], ln.get_ydata()[0]) for ln in _gids(ax, "failed-link") if hasattr(ln, "get_xdata")
    )
    assert marks == [(0.0, 1), (1.5, 0)]
    texts = sorted(t.get_text() for t in _gids(ax, "failed-link") if hasattr(t, "get_text"))
    assert texts == ["port 1 fail at 0", "ports 2, 3 fail at 1.5"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"switch down", "failed link", "reconfiguration delay δ"} <= set(legend)
    plt.close(ax.figure)


def test_gantt_under_partial_draws_what_the_timing_rule_says() -> None:
    import matplotlib.pyplot as plt

    from helpers import conf
    from ocsched.fabric import Fabric

    fab = Fabric.uniform(1, 0.5, model="partial")
    # (0, 1) is kept throughout (lit through the gaps 1.5..2 and 3..3.5); the second configuration
    # lights no new circuit, the third lights (1, 0): a dark strip before it.
    sw = (conf(0.5, 1.0, [1, -1]), conf(2.0, 1.0, [1, -1]), conf(3.5, 1.0, [1, 0]))
    sched = ocsched.Schedule(ports=2, delta=0.5, switches=(sw,), fabric=fab)
    assert ocsched.validate(sched, [[0, 4.0], [1.0, 0]]).ok  # 1 + 0.5 + 1 + 0.5 + 1 served on (0, 1)
    ax = report.plot_schedule(sched)
    dark = sorted((p.get_x(), p.get_width()) for p in _gids(ax, "dark"))
    assert dark == [(0.0, 0.5), (3.0, 0.5)]  # before the first and the third, not the second
    kept = [(p.get_x(), p.get_width()) for p in _gids(ax, "kept")]
    assert kept == [(1.5, 0.5), (3.0, 0.5)]
    assert [(p.get_x(), p.get_width()) for p in _gids(ax, "configuration")] == [
        (0.5, 1.0),
        (2.0, 1.0),
        (3.5, 1.0),
    ]
    plt.close(ax.figure)


def test_gantt_of_an_iteration_shades_its_phases_and_skips_persisting_delays() -> None:
    import matplotlib.pyplot as plt

    from ocsched.iteration import Iteration, Phase
    from ocsched.report.gantt import plot_iteration_schedule
    from ocsched.sequence import schedule_iteration

    ring = [[0, 1], [1, 0]]
    it = Iteration(
        [Phase(ring, name="a"), Phase(ring, gap_before=0.3, name="b"), Phase([[0, 2], [0, 0]], name="c")]
    )
    seq = schedule_iteration(it, switches=2, delta=0.1)
    ax = plot_iteration_schedule(seq)
    spans = [
        x
        for p in _gids(ax, "phase")
        if hasattr(p, "get_width")
        for x in (p.get_x(), p.get_x() + p.get_width())
    ]
    assert spans == pytest.approx([x for _, _, r, e in seq.phase_spans() for x in (r, e)])
    dark = _gids(ax, "dark")
    persisting = sum(
        ocsched.iteration.persists(a, b) for sw in seq.switches for a, b in itertools.pairwise(sw)
    )
    assert len(dark) == seq.num_configurations - persisting
    plt.close(ax.figure)


def test_cli_plot_reads_either_schedule_kind(tmp_path: Path) -> None:
    from ocsched.iteration import Iteration, Phase
    from ocsched.sequence import schedule_iteration

    ring = [[0, 1], [1, 0]]
    seq = schedule_iteration(Iteration([Phase(ring, name="a"), Phase(ring, name="b")]), switches=1, delta=0.1)
    path = io.write_iteration_schedule(seq, tmp_path / "it.json")
    res = runner.invoke(app, ["plot", str(path), "--out", str(tmp_path / "g.png")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "g.png").read_bytes()[:8] == PNG_MAGIC
