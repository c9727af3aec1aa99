"""Run every code block of the README and of the docs pages in order, as a reader would.

Each page (``README.md``, then ``docs/**/*.md``) runs on its own, in a fresh temporary folder,
its blocks top to bottom, so later blocks see the files and the Python names earlier ones made,
exactly as for a reader following the page. The conventions (also in the docs' Development >
Testing page):

- A ``python`` or ``pycon`` block whose first line starts with ``>>>`` is a doctest: its output
  is compared. Any other ``python`` block is executed. The page's Python blocks share one
  namespace and run in this process, in the page's folder.
- In a ``console`` block a line starting with ``$ `` is a command; a ``<<'EOF'`` here-document
  runs up to its ``EOF`` line; any other line is output shown to the reader (not compared). In a
  ``sh`` block every line is a command (a trailing ``\\`` continues it). Commands run with bash,
  with the virtualenv's ``bin`` first on ``PATH``, and must exit 0 without a traceback.
- A command whose line ends with ``# skip-test`` is not run (too slow, needs a cluster, or works
  on the repository itself, like ``make demo``); a block right after a ``<!-- skip-test -->``
  line is not run at all.
- A page with a ``<!-- docs-test: slow -->`` line (alone on its line) runs only under
  ``-m slow`` (``make slow``), which keeps the default run's share of the docs short.

Other languages (``toml``, ``json``, ``text``, ...) are shown, never run.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Another README to check instead (e.g. a proposed edit): OCSCHED_README=path pytest tests/test_readme.py
README = Path(os.environ.get("OCSCHED_README", ROOT / "README.md"))
DOCS = ROOT / "docs"
SKIP = "# skip-test"
SLOW_PAGE = "<!-- docs-test: slow -->"
FENCE = re.compile(r"^(\s*)```\s*([\w-]*)")
SHELL = ("sh", "console")
PYTHON = ("python", "py", "pycon")


@dataclass(frozen=True)
class Command:
    line: int  # 1-based line of the page where the command starts
    text: str
    skipped: bool


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language, first line (1-based) and body."""

    lang: str
    line: int
    body: str
    skipped: bool


def code_blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, in order, with the skip marker applied."""
    out: list[Block] = []
    lines = text.splitlines()
    k = 0
    skip_block = False
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            if lines[k].strip():  # a marker applies to the block right after it
                skip_block = lines[k].strip().startswith("<!-- skip-test")
            k += 1
            continue
        indent, lang, start = m.group(1), m.group(2), k + 1
        end = start
        while end < len(lines) and not lines[end].strip().startswith("```"):
            end += 1
        assert end < len(lines), f"line {k + 1}: a code block is never closed"
        body = [ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines[start:end]]
        out.append(Block(lang, start + 1, "\n".join(body), skip_block))
        skip_block = False
        k = end + 1
    return out


def readme_commands(text: str) -> list[Command]:
    """Extract the commands of the ``sh`` and ``console`` blocks, in order."""
    return [c for b in code_blocks(text) if b.lang in SHELL for c in shell_commands(b)]


def shell_commands(block: Block) -> list[Command]:
    lines = block.body.splitlines()
    console = block.lang == "console"
    out: list[Command] = []
    k = 0
    while k < len(lines):
        raw = lines[k]
        if console and not raw.startswith("$ "):
            k += 1  # output shown to the reader
            continue
        first = k
        text = raw[2:] if console else raw
        while text.endswith("\\") and k + 1 < len(lines):
            k += 1
            text = text[:-1] + " " + lines[k].strip()
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", text)
        if heredoc:
            body = []
            while k + 1 < len(lines) and lines[k + 1].strip() != heredoc.group(1):
                k += 1
                body.append(lines[k])
            k += 1
            text = "\n".join([text, *body, heredoc.group(1)])
        if text.strip() and not text.lstrip().startswith("#"):
            out.append(Command(block.line + first, text, block.skipped or text.rstrip().endswith(SKIP)))
        k += 1
    return out


def test_extract_conventions() -> None:
    text = "\n".join(
        [
            "```console",
            "$ cat > a.toml <<'EOF'",
            "x = 1",
            "EOF",
            "$ ocsched bound d.npy \\",
            "    -s 2 -d 0.5",
            "lower bound  2.75",
            "$ make demo   # skip-test",
            "```",
            "<!-- skip-test: needs a cluster -->",
            "```sh",
            "dask scheduler",
            "```",
            "```python",
            "print(1)",
            "```",
            "- a list item:",
            "",
            "    ```pycon",
            "    >>> 1 + 1",
            "    2",
            "    ```",
        ]
    )
    got = [(c.line, c.text, c.skipped) for c in readme_commands(text)]
    assert got == [
        (2, "cat > a.toml <<'EOF'\nx = 1\nEOF", False),
        (5, "ocsched bound d.npy  -s 2 -d 0.5", False),
        (8, "make demo   # skip-test", True),
        (12, "dask scheduler", True),
    ]
    blocks = [(b.lang, b.line, b.body, b.skipped) for b in code_blocks(text)]
    assert blocks[2:] == [("python", 15, "print(1)", False), ("pycon", 20, ">>> 1 + 1\n2", False)]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env.pop("PYTHONWARNINGS", None)
    return env


def _run_shell(cmd: Command, folder: Path, where: str) -> None:
    res = subprocess.run(
        ["bash", "-c", cmd.text], cwd=folder, env=_env(), capture_output=True, text=True, timeout=600
    )
    where = f"{where} line {cmd.line}: {cmd.text.splitlines()[0]!r}"
    assert res.returncode == 0, f"{where} exited {res.returncode}\n{res.stdout}\n{res.stderr}"
    assert "Traceback" not in res.stderr, f"{where}\n{res.stderr}"


def _run_python(block: Block, globs: dict[str, object], where: str) -> None:
    name = f"{where} line {block.line}"
    if block.body.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block.body, globs, name, where, block.line - 1)
        report: list[str] = []
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, out=report.append, clear_globs=False)
        globs.update(test.globs)  # a DocTest runs on a copy: later blocks see its names
        assert not runner.failures, "".join(report)
    else:
        exec(compile(block.body, name, "exec"), globs)


def run_page(path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run the page's blocks in order in ``folder``; return how many blocks ran."""
    where = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    globs: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    for block in code_blocks(path.read_text()):
        if block.skipped:
            continue
        if block.lang in SHELL:
            for cmd in shell_commands(block):
                if not cmd.skipped:
                    _run_shell(cmd, folder, where)
            ran += 1
        elif block.lang in PYTHON:
            _run_python(block, globs, where)
            ran += 1
    return ran


def _pages() -> list[object]:
    pages = [README, *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]
    out: list[object] = []
    for p in pages:
        slow = any(line.strip() == SLOW_PAGE for line in p.read_text().splitlines())
        name = str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else p.name
        out.append(pytest.param(p, id=name, marks=[pytest.mark.slow] if slow else []))
    return out


@pytest.mark.parametrize("page", _pages())
def test_page_runs_in_order(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_page(page, tmp_path, monkeypatch)


def test_readme_runs_something() -> None:
    blocks = [b for b in code_blocks(README.read_text()) if not b.skipped and b.lang in (*SHELL, *PYTHON)]
    assert any(b.lang in SHELL for b in blocks), "no runnable command in the README"
    assert any(b.lang in PYTHON for b in blocks), "no runnable Python example in the README"


def test_readme_starts_with_the_two_setup_commands() -> None:
    first = code_blocks(README.read_text())[0]
    assert [ln.split("#")[0].strip() for ln in first.body.splitlines()] == ["make demo", "make test"]


def test_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= 210


def test_readme_scheduler_table_is_generated() -> None:
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import support_table
    finally:
        sys.path.pop(0)
    got = support_table.readme_table(README.read_text())
    assert got is not None, "the README has no generated schedulers table"
    assert got == support_table.support_table(), (
        "the README's schedulers table is out of date: run `python docs/hooks/support_table.py --write`"
    )


def test_citation_matches_the_version() -> None:
    from ocsched._version import __version__

    text = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", text, flags=re.M)
    assert re.search(rf'^version: "{re.escape(__version__)}"$', text, flags=re.M)
    assert re.search(r"^license: MIT$", text, flags=re.M)


def test_the_markers_are_documented() -> None:
    # Page authors find the markers explained where the docs describe testing.
    text = (DOCS / "development" / "testing.md").read_text()
    for marker in ("# skip-test", "<!-- skip-test -->", SLOW_PAGE):
        assert marker in text, marker
