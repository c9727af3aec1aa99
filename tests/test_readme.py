"""Run the README's shell examples in order, in a fresh folder, as a new user would.

The Python examples run as doctests (``--doctest-glob=README.md``); this does the same for the
``sh`` and ``console`` blocks. Conventions, documented in the README's Development section:

- In a ``console`` block, a line starting with ``$ `` is a command; a ``<<'EOF'`` here-document
  runs up to its ``EOF`` line; any other line is output shown to the reader (not compared).
- In a ``sh`` block every line is a command (a trailing ``\\`` continues it).
- A command whose line ends with ``# skip-test`` is not run (too slow, needs a cluster, or works
  on the repository itself, like ``make demo``); a block right after a ``<!-- skip-test -->``
  line is not run at all.

Every other command must exit 0 without a traceback. Commands run one after another in one
temporary folder with the virtualenv's ``bin`` first on ``PATH``, so later commands see the
files earlier ones wrote, exactly as in a terminal following the README top to bottom.
"""

from __future__ import annotations

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
SKIP = "# skip-test"
FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Command:
    line: int  # 1-based line of the README where the command starts
    text: str
    skipped: bool


def readme_commands(text: str) -> list[Command]:
    """Extract the commands of the ``sh`` and ``console`` blocks, in order."""
    out: list[Command] = []
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
        lang, start = m.group(1), k + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if lang in ("sh", "console"):
            out.extend(_block(lines, start, end, console=lang == "console", skipped=skip_block))
        skip_block = False
        k = end + 1
    return out


def _block(lines: list[str], start: int, end: int, *, console: bool, skipped: bool) -> list[Command]:
    out: list[Command] = []
    k = start
    while k < end:
        raw = lines[k]
        if console and not raw.startswith("$ "):
            k += 1  # output shown to the reader
            continue
        first = k
        text = raw[2:] if console else raw
        while text.endswith("\\") and k + 1 < end:
            k += 1
            text = text[:-1] + " " + lines[k].strip()
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", text)
        if heredoc:
            body = []
            while k + 1 < end and lines[k + 1].strip() != heredoc.group(1):
                k += 1
                body.append(lines[k])
            k += 1
            text = "\n".join([text, *body, heredoc.group(1)])
        if text.strip() and not text.lstrip().startswith("#"):
            out.append(Command(first + 1, text, skipped or text.rstrip().endswith(SKIP)))
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
        ]
    )
    got = [(c.line, c.text, c.skipped) for c in readme_commands(text)]
    assert got == [
        (2, "cat > a.toml <<'EOF'\nx = 1\nEOF", False),
        (5, "ocsched bound d.npy  -s 2 -d 0.5", False),
        (8, "make demo   # skip-test", True),
        (12, "dask scheduler", True),
    ]


def _run_in_order(commands: list[Command], folder: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env.pop("PYTHONWARNINGS", None)
    for cmd in commands:
        if cmd.skipped:
            continue
        res = subprocess.run(
            ["bash", "-c", cmd.text], cwd=folder, env=env, capture_output=True, text=True, timeout=600
        )
        where = f"{README.name} line {cmd.line}: {cmd.text.splitlines()[0]!r}"
        assert res.returncode == 0, f"{where} exited {res.returncode}\n{res.stdout}\n{res.stderr}"
        assert "Traceback" not in res.stderr, f"{where}\n{res.stderr}"


@pytest.mark.slow  # about a minute: it runs the README's sweep and report
def test_readme_commands_run_in_order(tmp_path: Path) -> None:
    commands = readme_commands(README.read_text())
    assert any(not c.skipped for c in commands), "no runnable command found in the README"
    _run_in_order(commands, tmp_path)


def test_readme_first_example_runs(tmp_path: Path) -> None:
    # The default run's share: the first block with a runnable command (the worked example).
    text = README.read_text()
    commands = [c for c in readme_commands(text) if not c.skipped]
    assert commands, "no runnable command found in the README"
    lines = text.splitlines()
    end = next(k for k in range(commands[0].line, len(lines)) if lines[k].startswith("```"))  # its fence
    _run_in_order([c for c in commands if c.line <= end], tmp_path)


def test_citation_matches_the_version() -> None:
    from ocsched._version import __version__

    text = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", text, flags=re.M)
    assert re.search(rf'^version: "{re.escape(__version__)}"$', text, flags=re.M)
    assert re.search(r"^license: MIT$", text, flags=re.M)


def test_readme_documents_the_skip_marker() -> None:
    # Skipped commands are visible to README readers and authors, and the convention is explained.
    text = README.read_text()
    if any(c.skipped for c in readme_commands(text)):
        assert "skip-test" in text.split("## Development", 1)[-1]
