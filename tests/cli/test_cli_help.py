"""``-h`` as people read it: no ``<bool>``, defaults visible, panels, EXAMPLES, did-you-mean."""

from __future__ import annotations

import re

import pytest
import typer.main

from helpers import run
from ocsched.cli import app
from ocsched.cli._help import PANELS

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def help_text(*args: str) -> str:
    res = run(*args, "-h")
    assert res.exit_code == 0, res.stderr
    return res.stdout


def flat(text: str) -> str:
    """The words of a help screen, without its boxes' borders."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_type_placeholders_and_has_examples(command: str) -> None:
    text = help_text(command)
    assert "<bool>" not in text and "<path>" not in text.split("Options")[-1]
    assert "<str>" not in text and "<list[" not in text
    assert "Examples:" in text
    # each example line is a command of ocsched
    examples = text.split("Examples:")[1]
    assert f"ocsched {command}" in examples


@pytest.mark.parametrize("command", COMMANDS)
def test_positional_metavars_are_upper_case(command: str) -> None:
    usage = next(line for line in help_text(command).splitlines() if "Usage:" in line)
    for name in re.findall(r"[{\[]([A-Za-z_]+)[}\]]", usage):
        if name != "OPTIONS":
            assert name.isupper(), usage


def test_choice_lists_do_not_break_mid_word() -> None:
    text = help_text("schedule")
    # the long algorithm list is in the help column, between words
    assert "One of: spectra, spectra-greedy" in flat(text)
    for line in text.splitlines():
        assert not re.search(r"\|[a-z]+-$", line.strip(" │")), line


def test_demo_help_shows_its_defaults() -> None:
    text = flat(help_text("demo"))
    assert "default 16" in text and "default 0.04" in text
    assert "OCSes ." not in text


def test_commands_are_grouped_in_panels() -> None:
    text = help_text()
    for title in ("Schedule", "Evaluate", "Workloads", "Files"):
        assert f"─ {title} ─" in text
    assert set(PANELS.values()) == {"Schedule", "Evaluate", "Workloads", "Files"}
    # every registered command is in a panel
    assert set(COMMANDS) <= set(PANELS)


def test_a_typo_gets_did_you_mean() -> None:
    res = run("schedul")
    assert res.exit_code == 2 and "Did you mean 'schedule'" in res.stderr
    res = run("bound", "x.npy", "--delat", "1")
    assert res.exit_code == 2 and "--delta" in res.stderr


def test_dash_o_means_out_everywhere() -> None:
    for command in COMMANDS:
        options = help_text(command).split("Examples:")[0]
        for line in options.splitlines():
            if re.search(r"\s-o\s", line):
                assert "--out" in line, (command, line)


def test_gap_option_flag_is_long_only() -> None:
    text = help_text("gap")
    assert "--option" in text
    res = run("gap", "-w", "random", "--n", "3", "-o", "flows=3")
    assert res.exit_code == 2


def test_report_by_includes_fabric() -> None:
    assert "fabric" in " ".join(flat(help_text("report")).split("--by")[1].split()[:12])
