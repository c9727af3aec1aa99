"""Every number on the command line is read by one ASCII-only grammar; none ends in a traceback.

Python's parsers are lenient in ways that crash or mislead a CLI: ``"²".isdigit()`` is True but
``int("²")`` raises, ``int("４")`` is 4, ``float("１.５")`` is 1.5, ``int("1_0")`` is 10 and
``float("inf")`` is accepted. Every numeric option of every command is tried here with such
values, through the real CLI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from helpers import D3
from ocsched.cli import app

SMALL = ("0", "1", "2", "3", "0.5")
BIG = (*SMALL, "17", "1e3", str(10**30), "9" * 400)

GAP = ["gap", "-w", "random"]

#: (command line before the option, the option, the name its error gives, bases to draw from,
#: how the value is written). Bases that would make a valid but long job are left out.
OPTIONS: list[tuple[list[str], str, str, tuple[str, ...], str]] = [
    (["schedule", "d3.npy", "-d", "0.1"], "--switches", "--switches", BIG, "{}"),
    (["schedule", "d3.npy", "-s", "2"], "--delta", "--delta", BIG, "{}"),
    (["schedule", "d3.npy", "-s", "2"], "--delta", "--delta", BIG, "0.1,{}"),
    (["schedule", "d3.npy", "-s", "2", "-d", "0.1"], "--seed", "--seed", BIG, "{}"),
    (["schedule", "it.npy", "-s", "1", "-d", "0.1"], "--gaps", "--gaps", BIG, "0,{}"),
    (["bound", "d3.npy", "-d", "0.1"], "--switches", "--switches", BIG, "{}"),
    (["bound", "d3.npy", "-s", "2"], "--delta", "--delta", BIG, "{}"),
    (["validate", "d3.npy", "s.json"], "--switches", "--switches", BIG, "{}"),
    (["validate", "d3.npy", "s.json"], "--delta", "--delta", BIG, "{}"),
    (["reschedule", "d3.npy", "s.json", "--fail-switch", "0"], "--at", "--at", BIG, "{}"),
    (["reschedule", "d3.npy", "s.json", "--at", "1"], "--fail-switch", "--fail-switch", BIG, "{}"),
    (["reschedule", "d3.npy", "s.json", "--at", "1"], "--fail-link", "--fail-link", BIG, "{}:0"),
    (["reschedule", "d3.npy", "s.json", "--at", "1"], "--fail-link", "--fail-link", BIG, "0:{}"),
    (["demo"], "--n", "--n", BIG, "{}"),
    (["demo", "--n", "17"], "--switches", "--switches", BIG, "{}"),
    (["demo", "--n", "17"], "--delta", "--delta", BIG, "{}"),
    (["demo", "--n", "17"], "--seed", "--seed", BIG, "{}"),
    (["generate", "standard", "--n", "8", "-o", "x.npy", "--force"], "--seed", "--seed", BIG, "{}"),
    (["generate", "moe8", "-o", "x.npy", "--force"], "--link-gbps", "--link-gbps", BIG, "{}"),
    (["generate", "standard", "-o", "x.npy", "--force"], "--n", "`n`", BIG, "{}"),
    (["generate", "standard", "--n", "8", "-o", "x.npy", "--force"], "--sigma", "`sigma`", BIG, "{}"),
    (["sweep", "c.toml", "--dry-run"], "--workers", "--workers", BIG, "{}"),
    (["sweep", "c.toml", "--dry-run"], "--wait", "--wait", BIG, "{}"),
    (["sweep", "c.toml", "--dry-run"], "--batch-size", "--batch-size", BIG, "{}"),
    ([*GAP, "-k", "1", "-s", "1", "-d", "0.1", "-t", "5"], "--n", "--n", SMALL, "{}"),
    ([*GAP, "--n", "2", "-s", "1", "-d", "0.1", "-t", "5"], "--samples", "--samples", SMALL, "{}"),
    ([*GAP, "--n", "2", "-k", "1", "-s", "1", "-d", "0.1"], "--time-limit", "--time-limit", BIG, "{}"),
    ([*GAP, "--n", "2", "-k", "1", "-s", "1", "-d", "0.1", "-t", "5"], "--seed", "--seed", BIG, "{}"),
    ([*GAP, "--n", "2", "-k", "1", "-s", "1", "-d", "0.1", "-t", "5"], "--density", "--density", BIG, "{}"),
    ([*GAP, "--n", "2", "-k", "1", "-d", "0.1", "-t", "5"], "--switches", "--switches", BIG, "{}"),
    ([*GAP, "--n", "2", "-k", "1", "-s", "1", "-t", "5"], "--delta", "--delta", BIG, "{}"),
]  # fmt: skip

#: Other scripts' digits for 0..9: fullwidth, Arabic-Indic, Devanagari, superscript, mathematical bold.
SCRIPTS = [
    "０１２３４５６７８９",
    "٠١٢٣٤٥٦٧٨٩",
    "०१२३४५६७८९",
    "⁰¹²³⁴⁵⁶⁷⁸⁹",
    "".join(chr(0x1D7CE + k) for k in range(10)),
]
#: Values no number grammar of ocsched accepts.
REFUSED = ["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "", " ", "1_0", "0x10", "1,,2", "²", "１", "١٢"]


def _files(tmp: Path) -> None:
    np.save(tmp / "d3.npy", D3)
    np.save(tmp / "it.npy", np.array([D3, D3]))
    res = CliRunner().invoke(
        app, ["schedule", str(tmp / "d3.npy"), "-s", "2", "-d", "0.1", "-o", str(tmp / "s.json")]
    )
    assert res.exit_code == 0, res.output
    (tmp / "c.toml").write_text(
        'switches = [2]\ndelta = [0.1]\nalgorithms = ["spectra"]\n\n'
        '[[workloads]]\nname = "standard"\noptions = { n = 6, flows = 2 }\n'
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    import typer.testing

    # The click command is built once, as in a process (typer's runner rebuilds it per call:
    # ~0.1 s, most of each call here).
    built = typer.testing._get_command(app)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(typer.testing, "_get_command", lambda typer_app: built if typer_app is app else None)
        tmp = tmp_path_factory.mktemp("cli-numbers")
        _files(tmp)
        yield tmp


def _invoke(cwd: Path, args: list[str]) -> Result:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, args)
    finally:
        os.chdir(old)


def assert_no_traceback(res: Result, args: list[str]) -> None:
    assert res.exit_code in (0, 1, 2), (args, res.exit_code, res.output, repr(res.exception))
    assert res.exception is None or isinstance(res.exception, SystemExit), (args, repr(res.exception))
    assert "Traceback" not in res.output, (args, res.output)
    if res.exit_code == 2:
        lines = [ln for ln in res.stderr.splitlines() if not ln.startswith(("timing", "gap:", "sweep:"))]
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, res.stderr)


@st.composite
def hostile(draw: st.DrawFn, bases: tuple[str, ...]) -> str:
    """A number written in one of the ways a user (or a paste) might: signs, blanks, other scripts, ..."""
    base = draw(st.sampled_from(bases))
    kind = draw(st.sampled_from(["plain", "sign", "blank", "script", "suffix", "refused"]))
    if kind == "sign":
        return draw(st.sampled_from("+-")) + base
    if kind == "blank":
        return (
            draw(st.sampled_from([" ", "\t", "\u00a0", "\u2003", "\n"]))
            + base
            + draw(st.sampled_from(["", " ", "\n"]))
        )
    if kind == "script":
        digits = draw(st.sampled_from(SCRIPTS))
        return "".join(digits[int(c)] if c.isdigit() and c.isascii() else c for c in base)
    if kind == "suffix":
        return base + draw(st.sampled_from(["_0", "e999", "e-999", ".", "..", "%", "s", "j", ":", "²"]))
    if kind == "refused":
        return draw(st.sampled_from(REFUSED))
    return base


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_numeric_option_parses_hostile_values_without_a_traceback(
    files: Path, data: st.DataObject
) -> None:
    before, option, name, bases, written = data.draw(st.sampled_from(OPTIONS))
    value = written.format(data.draw(hostile(bases)))
    args = [*before, option, value]
    res = _invoke(files, args)
    assert_no_traceback(res, args)
    if not value.isascii():  # other scripts' digits (and non-ASCII blanks) are never numbers here
        assert res.exit_code == 2 and name in res.stderr, (args, res.output)


@pytest.mark.parametrize("value", ["²", "４", "٣", "1_0", "nan", "inf", "1e999"])
def test_every_numeric_option_refuses_what_is_not_an_ascii_finite_number(files: Path, value: str) -> None:
    for before, option, name, _, written in OPTIONS:
        args = [*before, option, written.format(value)]
        res = _invoke(files, args)
        assert_no_traceback(res, args)
        assert res.exit_code == 2, (args, res.output)
        assert name in res.stderr and "Traceback" not in res.output, (args, res.stderr)


def test_the_fail_link_of_the_issue(files: Path) -> None:
    res = _invoke(files, ["reschedule", "d3.npy", "s.json", "--at", "1", "--fail-link", "²:0"])
    assert res.exit_code == 2 and res.stderr == (
        "error: `--fail-link` must be PORT:SWITCH (0-based integers, SWITCH < 1024); got '²:0'\n"
    )
