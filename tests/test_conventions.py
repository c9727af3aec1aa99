"""The library's conventions: per-algorithm options, one spelling, port names, frames and figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ocsched
from ocsched import InvalidInputError, schedule
from ocsched.cli import app
from ocsched.schedulers import SCHEDULERS

D3 = [[0, 3, 1], [1, 0, 3], [3, 1, 0]]


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return res.exit_code, res.output


# --- options={...} per algorithm -------------------------------------------------------------


def test_every_registry_option_default_is_accepted_by_its_scheduler() -> None:
    for name, sch in SCHEDULERS.items():
        for key, opt in sch.options.items():
            assert opt.check(opt.default, key) == opt.default, (name, key)


def test_exact_node_limit_is_passed_and_recorded() -> None:
    s = schedule(D3, switches=2, delta=0.5, algorithm="exact", options={"node_limit": 3})
    assert s.meta["options"] == {"node_limit": 3}
    assert ocsched.validate(s, D3).ok
    assert "options" not in schedule(D3, switches=2, delta=0.5).meta  # no options, no key


def test_options_from_text_are_converted() -> None:
    s = schedule(
        D3, switches=2, delta=0.5, algorithm="exact", options={"node_limit": "7", "time_limit": "none"}
    )
    assert s.meta["options"] == {"node_limit": 7, "time_limit": None}


def test_baseline_order_reaches_the_split() -> None:
    from ocsched.baseline import split_schedule

    rng = np.random.default_rng(3)
    d = rng.random((12, 12)) * (rng.random((12, 12)) < 0.5)
    np.fill_diagonal(d, 0)
    b = schedule(d, switches=3, delta=0.1, algorithm="baseline", rng=1, options={"order": "random"})
    assert ocsched.validate(b, d).ok
    assert b.meta["options"] == {"order": "random"}
    want, _ = split_schedule(ocsched.Demand.from_matrix(d), switches=3, delta=0.1, rng=1, order="random")
    assert all(
        len(x) == len(y) and all(p.same_as(q) for p, q in zip(x, y, strict=True))
        for x, y in zip(b.switches, want, strict=True)
    )


def test_unknown_option_lists_the_allowed_ones() -> None:
    with pytest.raises(
        InvalidInputError, match=r"unknown option 'effort'.*allowed options: node_limit, time_limit"
    ):
        schedule(D3, switches=2, delta=0.5, algorithm="exact", options={"effort": 1})
    with pytest.raises(InvalidInputError, match="'spectra'; it takes none"):
        schedule(D3, switches=2, delta=0.5, options={"order": "index"})


@pytest.mark.parametrize(
    ("algorithm", "options", "match"),
    [
        ("exact", {"node_limit": 0}, r"`node_limit` must be a finite number >= 1; got 0"),
        ("exact", {"node_limit": 2.5}, r"`node_limit` must be an integer; got 2.5"),
        ("exact", {"node_limit": None}, r"`node_limit` must be given a value"),
        ("baseline", {"order": "zigzag"}, r"`order` must be one of index, random; got 'zigzag'"),
        ("spectra-opt", {"node_limit": "many"}, r"`node_limit` must be an integer; got 'many'"),
    ],
)
def test_bad_option_values(algorithm: str, options: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        schedule(D3, switches=2, delta=0.5, algorithm=algorithm, options=options)


def test_cli_option_flag(tmp_path: Path) -> None:
    p = tmp_path / "d.npy"
    np.save(p, np.array(D3, dtype=float))
    out = tmp_path / "s.json"
    code, text = _cli(
        "schedule", str(p), "-s", "2", "-d", "0.5", "-a", "exact", "--option", "node_limit=4", "-o", str(out)
    )
    assert code == 0, text
    assert ocsched.Schedule.from_json(out.read_text()).meta["options"] == {"node_limit": 4}
    code, text = _cli("schedule", str(p), "-s", "2", "-d", "0.5", "-a", "exact", "--option", "nodes=4")
    assert code == 2 and "allowed options: node_limit, time_limit" in text
    code, text = _cli("schedule", str(p), "-s", "2", "-d", "0.5", "--option", "node_limit")
    assert code == 2 and "`--option` must be KEY=VALUE" in text


# --- bring your own traffic: bytes, DataFrames, graphs, np.asarray ----------------------------


def test_from_bytes_uses_the_units_helpers() -> None:
    from ocsched.units import bytes_per_second

    d = ocsched.Demand.from_bytes([[0, 5e9], [1e9, 0]], link_rate="400Gbps")
    assert d.to_dense().tolist() == [[0.0, 0.1], [0.02, 0.0]]
    same = ocsched.Demand.from_bytes([[0, 5e9], [1e9, 0]], link_rate=bytes_per_second("50GB/s"))
    assert np.array_equal(np.asarray(same), np.asarray(d))
    with pytest.raises(InvalidInputError, match="`link_rate` must be a rate with a unit"):
        ocsched.Demand.from_bytes([[0, 1], [1, 0]], link_rate="400 furlongs")
    with pytest.raises(InvalidInputError, match=r"must be non-negative; demand\[0, 1\] = -1"):
        ocsched.Demand.from_bytes([[0, -1], [1, 0]], link_rate="1Gbps")


def test_asarray_of_a_demand() -> None:
    d = ocsched.Demand.from_matrix(D3)
    a = np.asarray(d)
    assert a.dtype == np.float64 and a.tolist() == [[0.0, 3.0, 1.0], [1.0, 0.0, 3.0], [3.0, 1.0, 0.0]]
    assert np.asarray(d, dtype=np.float32).dtype == np.float32
    assert float(np.sum(d)) == 12.0


def test_dataframe_labels_become_port_names() -> None:
    pd = pytest.importorskip("pandas")
    names = ["gpu01", "gpu02", "gpu03"]
    df = pd.DataFrame(D3, index=names, columns=names)
    d = ocsched.Demand.from_matrix(df)
    assert d.port_names == tuple(names)
    s = schedule(df, switches=2, delta=0.5)
    assert s.meta["port_names"] == names
    assert ocsched.validate(s, df).ok
    # columns in another order are aligned to the index, as pandas aligns by label
    shuffled = df[["gpu03", "gpu01", "gpu02"]]
    assert np.array_equal(np.asarray(ocsched.Demand.from_matrix(shuffled)), np.asarray(D3, dtype=float))
    # a default RangeIndex names nothing
    assert ocsched.Demand.from_matrix(pd.DataFrame(D3)).port_names is None
    with pytest.raises(InvalidInputError, match="labels in only one of them: gpu03, gpu04"):
        ocsched.Demand.from_matrix(pd.DataFrame(D3, index=names, columns=["gpu01", "gpu02", "gpu04"]))


def test_networkx_digraph_is_a_demand() -> None:
    nx = pytest.importorskip("networkx")
    g = nx.DiGraph()
    g.add_weighted_edges_from([("a", "b", 3.0), ("b", "c", 3.0), ("c", "a", 3.0), ("a", "c", 1.0)])
    d = ocsched.Demand.from_matrix(g)
    assert d.port_names == ("a", "b", "c")
    assert np.asarray(d).tolist() == [[0, 3, 1], [0, 0, 3], [3, 0, 0]]
    s = schedule(g, switches=2, delta=0.5)
    assert s.meta["port_names"] == ["a", "b", "c"] and ocsched.validate(s, g).ok
    h = nx.DiGraph()
    h.add_edge(0, 1, bytes=8e9)
    assert np.asarray(ocsched.Demand.from_matrix(h, weight="bytes")).tolist() == [[0, 8e9], [0, 0]]
    assert ocsched.Demand.from_matrix(h, weight="bytes").port_names is None
    with pytest.raises(InvalidInputError, match=r"edge \(0, 1\) has no 'weight' attribute"):
        ocsched.Demand.from_matrix(h)
    with pytest.raises(InvalidInputError, match="must be directed"):
        ocsched.Demand.from_matrix(nx.Graph([(0, 1)]))


def test_install_hint_follows_the_install() -> None:
    from ocsched import _extras

    _extras._from_source.cache_clear()
    # this test suite runs from an editable install of the clone
    assert _extras.install_hint("plot") == "pip install -e '.[plot]'"
    assert (
        _extras.missing_extra("figures need matplotlib", "plot")
        == "figures need matplotlib: pip install -e '.[plot]'"
    )


def test_install_hint_outside_a_clone(monkeypatch: pytest.MonkeyPatch) -> None:
    from ocsched import _extras

    monkeypatch.setattr(_extras, "_from_source", lambda: False)
    assert _extras.install_hint("dask") == "pip install 'ocsched[dask]'"


# --- one spelling: rng=, normalize; validate's keywords ----------------------------------------


def test_generate_takes_rng_and_seed_is_deprecated() -> None:
    from ocsched.workloads import generate, generate_iteration

    a = generate("standard", n=20, rng=4, normalize=True)
    with pytest.warns(DeprecationWarning, match="`seed=` is deprecated; use `rng=`"):
        b = generate("standard", n=20, seed=4, normalize=True)
    with pytest.warns(DeprecationWarning, match="`normalized=` is deprecated; use `normalize=`"):
        c = generate("standard", n=20, rng=4, normalized=True)
    assert np.array_equal(a, b) and np.array_equal(a, c)
    assert np.array_equal(
        generate("standard", n=20, rng=np.random.default_rng(4)), generate("standard", n=20, rng=4)
    )
    with pytest.raises(InvalidInputError, match="give `rng` only"):
        generate("standard", n=20, rng=1, seed=1)
    it = generate_iteration("moe-iteration", gpus=8, layers=2, rng=3)
    with pytest.warns(DeprecationWarning, match="`seed=`"):
        old = generate_iteration("moe-iteration", gpus=8, layers=2, seed=3)
    assert all(
        np.array_equal(np.asarray(p.demand), np.asarray(q.demand))
        for p, q in zip(it.phases, old.phases, strict=True)
    )


def test_sweep_config_spells_normalize_too() -> None:
    from ocsched.sweep.config import expand, load_config

    base = {"switches": 2, "delta": 0.1, "algorithms": ["spectra"], "workloads": [{"name": "moe8"}]}
    new = load_config({**base, "normalize": False})
    assert [r.normalized for r in expand(new)] == [False]
    with pytest.raises(InvalidInputError, match="give `normalize` or `normalized`, not both"):
        load_config({**base, "normalize": False, "normalized": True})


def test_validate_has_explicit_keywords() -> None:
    import inspect

    params = inspect.signature(ocsched.validate).parameters
    assert [p for p in params if params[p].kind is inspect.Parameter.KEYWORD_ONLY] == [
        "fabric",
        "delta",
        "switches",
        "tol",
        "max_violations",
    ]
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    s = schedule(D3, switches=2, delta=0.5)
    assert not ocsched.validate(s, D3, delta=0.6).ok  # claims a smaller delay than the real one
    with pytest.raises(TypeError):
        ocsched.validate(s, D3, fabirc=None)  # type: ignore[call-arg]


def test_the_reconfiguration_model_is_asked_not_named() -> None:
    # What a model means lives in ocsched.timing (and the fabric that holds it): elsewhere code
    # asks fabric.reconfiguration, never compares the model's name.
    import re

    from ocsched.fabric import MODELS, Fabric
    from ocsched.schedulers import fabric_features
    from ocsched.timing import ALL_STOP, PARTIAL, RECONFIGURATIONS, reconfiguration

    src = Path(ocsched.__file__).parent
    named = re.compile(r"""(==|!=)\s*["'](partial|all-stop)["']|["'](partial|all-stop)["']\s*(==|!=)""")
    found = [
        f"{path.relative_to(src)}:{k}"
        for path in sorted(src.rglob("*.py"))
        if path.parent.name != "timing" and path.name != "fabric.py"
        for k, line in enumerate(path.read_text().splitlines(), 1)
        if named.search(line) and not line.strip().startswith(">>>")
    ]
    assert found == []
    assert MODELS == tuple(RECONFIGURATIONS) == ("all-stop", "partial")
    assert Fabric.uniform(2, 0.1).reconfiguration is ALL_STOP
    assert Fabric.uniform(2, 0.1, model="partial").reconfiguration is PARTIAL
    assert fabric_features(Fabric.uniform(2, 0.1, model="partial")) == set(PARTIAL.features) == {"partial"}
    with pytest.raises(ValueError, match="unknown reconfiguration model 'x'"):
        reconfiguration("x")
