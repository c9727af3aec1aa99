"""The documentation's machinery: the generated tables, the hooks, the page runner, offline builds.

The site itself is built by ``make docs`` (``mkdocs build --strict``, part of ``make test``); these
tests check the pieces that keep it honest: what the hooks generate comes from the code, the
runner of ``tests/test_readme.py`` fails when an example is wrong, and nothing in ``mkdocs.yml``
needs the network.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

import test_readme  # the page runner
from ocsched.schedulers import FEATURES, SCHEDULERS
from ocsched.sequence import ITERATION_SCHEDULERS

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "docs" / "hooks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


support_table = _load("support_table")
cli_reference = _load("cli_reference")
docstrings = _load("docstrings")


def _rows(table: str) -> dict[str, list[str]]:
    out = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        out[cells[0].strip("`")] = cells[1:]
    return out


def test_support_table_has_every_scheduler_and_its_features() -> None:
    table = support_table.support_table()
    head = [c.strip() for c in table.splitlines()[0].strip("|").split(" | ")]
    assert len(head) == len(FEATURES) + 3
    rows = _rows(table)
    assert list(rows) == [*SCHEDULERS, *ITERATION_SCHEDULERS]
    for name, sch in SCHEDULERS.items():
        cells = rows[name]
        for k, feature in enumerate(FEATURES):
            want = "needed" if feature in sch.requires else "yes" if feature in sch.supports else "-"
            assert cells[k] == want, (name, feature)
        assert cells[-1] == sch.description.replace("|", "\\|")
    assert rows["exact"][len(FEATURES)] == f"as `base` (n <= {SCHEDULERS['exact'].max_ports})"
    assert all(rows[n][len(FEATURES)] == "iteration scheduler" for n in ITERATION_SCHEDULERS)


def test_support_table_hook_fills_the_marker_only() -> None:
    page = f"before\n{support_table.MARKER}\nafter"
    assert support_table.on_page_markdown(page) == f"before\n{support_table.support_table()}\nafter"
    assert support_table.on_page_markdown("no marker") == "no marker"


def test_readme_table_is_replaced_between_its_markers() -> None:
    stale = f"x\n{support_table.BEGIN}\n| old |\n{support_table.END}\ny"
    fresh = support_table.with_table(stale)
    assert support_table.readme_table(fresh) == support_table.support_table()
    assert fresh.startswith("x\n") and fresh.endswith("\ny")


def test_cli_reference_covers_every_command_and_option() -> None:
    import typer.main

    from ocsched.cli import app

    text = cli_reference.cli_markdown()
    group = typer.main.get_command(app)
    commands = getattr(group, "commands", {})
    assert commands
    for name, cmd in commands.items():
        assert f"## `ocsched {name}`" in text, name
        for param in cmd.params:
            for flag in [*param.opts, *getattr(param, "secondary_opts", [])]:
                if flag.startswith("-"):
                    assert flag in text, (name, flag)
    assert "`spectra`" in text  # a default, and the output of `ocsched algorithms`
    for name in SCHEDULERS:
        assert name in text


def test_cli_reference_keeps_pipes_literal_in_code_and_escapes_them_in_text() -> None:
    assert cli_reference._cell("`a|b` or c|d") == "`a|b` or c\\|d"
    assert cli_reference._plain("needs ocsched\\[dask]") == "needs ocsched[dask]"


def test_roles_become_optional_cross_references() -> None:
    import griffe

    mod = griffe.Module("ocsched")
    out = docstrings.roles_to_refs("see :func:`~ocsched.assign.pack` and :mod:`ocsched.io`", mod)
    assert '<autoref identifier="ocsched.assign.pack" optional><code>pack()</code></autoref>' in out
    assert '<autoref identifier="ocsched.io" optional><code>ocsched.io</code></autoref>' in out
    assert ":func:" not in out and ":mod:" not in out


def test_bare_doctests_are_fenced_but_examples_sections_are_not() -> None:
    text = "Summary.\n\n>>> f()\n[('a', 1)]\n\nExamples\n--------\n>>> g()\n2"
    out = docstrings.fence_doctests(text)
    assert "```pycon\n>>> f()\n[('a', 1)]\n```" in out
    assert out.endswith("Examples\n--------\n>>> g()\n2")


def test_wrapped_literals_are_joined() -> None:
    assert docstrings.join_literals("``a +\n    b`` and ``c``") == "``a + b`` and ``c``"
    assert docstrings.join_literals("``a``\n\n``b``") == "``a``\n\n``b``"


@pytest.mark.parametrize(
    "page",
    [
        "```pycon\n>>> 1 + 1\n3\n```\n",  # wrong output
        "```python\nraise ValueError('broken example')\n```\n",
        "```console\n$ false\n```\n",
        "```python\nx = 1\n```\n\n```pycon\n>>> y\n1\n```\n",  # a name no block defined
    ],
)
def test_the_page_runner_fails_on_a_broken_example(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "page.md"
    path.write_text(page)
    (tmp_path / "run").mkdir()
    with pytest.raises((AssertionError, ValueError)):
        test_readme.run_page(path, tmp_path / "run", monkeypatch)


def test_the_page_runner_runs_in_order_and_honours_the_markers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "page.md"
    path.write_text(
        "```console\n$ echo 41 > n.txt\n$ false  # skip-test\n```\n\n"
        "<!-- skip-test: shown only -->\n```sh\nfalse\n```\n\n"
        "```python\nimport pathlib\nn = int(pathlib.Path('n.txt').read_text()) + 1\n```\n\n"
        "```pycon\n>>> n\n42\n\n```\n\n```toml\nnot = run\n```\n"
    )
    (tmp_path / "run").mkdir()
    assert test_readme.run_page(path, tmp_path / "run", monkeypatch) == 3


def test_mkdocs_builds_offline() -> None:
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["theme"]["font"] is False  # no Google Fonts
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]]
    assert set(plugins) <= {"search", "mkdocstrings"}, plugins  # none that fetch anything
    handler = next(p for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    python = handler["mkdocstrings"]["handlers"]["python"]
    assert "inventories" not in python and "import" not in python  # no objects.inv downloads
    assert config.get("strict") is True
    assert "/site/" in (ROOT / ".gitignore").read_text().splitlines()
