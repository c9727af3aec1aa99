"""The command-line reference, generated from the typer app at build time (an mkdocs hook).

The page ``reference/cli.md`` holds a hand-written introduction and the marker
``<!-- cli-reference -->``; this hook replaces the marker with one section per command of
``ocsched.cli.app``: its help text, usage line, arguments and options (with their defaults), and
for the commands that list registries (``algorithms``, ``workloads``) their output. Nothing of
it is written by hand, so the page always matches ``ocsched COMMAND --help``.
"""

from __future__ import annotations

import re
from typing import Any

MARKER = "<!-- cli-reference -->"
_RICH_ESCAPE = re.compile(r"\\(\[)")  # rich markup escapes a literal "[" as "\["
_TRAILER = re.compile(r"\s*\[([^\[\]]*)\]\s*$")  # click's "[default: 1; 1<=x<=4; required]"


def _plain(text: str | None) -> str:
    return _RICH_ESCAPE.sub(r"\1", text or "").strip()


def _cell(text: str) -> str:
    """One table cell: one line, pipes escaped outside code spans (inside them a pipe is literal)."""
    parts = " ".join(_plain(text).split()).split("`")
    return "`".join(p if k % 2 else p.replace("|", "\\|") for k, p in enumerate(parts))


def _default(param: Any) -> str:
    if getattr(param, "required", False):
        return "required"
    value = param.default
    if value is None or callable(value) or type(value).__name__ == "DefaultPlaceholder":
        return ""
    if isinstance(value, bool):
        if getattr(param, "secondary_opts", None):  # --x / --no-x
            return f"`{param.opts[0] if value else param.secondary_opts[0]}`"
        return "off" if value is False else "on"
    if isinstance(value, list | tuple):
        return ", ".join(f"`{v}`" for v in value)
    return f"`{value}`"


def _registry_output(name: str) -> str:
    """What ``ocsched NAME`` prints (the commands that list a registry)."""
    from typer.testing import CliRunner

    from ocsched.cli import app

    res = CliRunner().invoke(app, [name])
    if res.exit_code != 0:
        raise RuntimeError(f"`ocsched {name}` exited {res.exit_code}: {res.output}")
    return res.stdout.rstrip()


def cli_markdown() -> str:
    """Return the Markdown of every command of ``ocsched.cli.app``."""
    import typer
    import typer.main

    from ocsched.cli import app

    group = typer.main.get_command(app)
    root = typer.Context(group, info_name="ocsched")
    out = [
        f"`ocsched` — {_plain(group.help)}",
        "",
        "| command | what it does |",
        "| --- | --- |",
    ]
    commands = getattr(group, "commands", {})
    for name, cmd in commands.items():
        if not cmd.hidden:
            out.append(f"| [`{name}`](#ocsched-{name}) | {_cell(cmd.get_short_help_str(limit=200))} |")
    out += ["", "Options of `ocsched` itself:", "", *_params(group, root, "options"), ""]
    for name, cmd in commands.items():
        if cmd.hidden:
            continue
        ctx = typer.Context(cmd, info_name=name, parent=root)
        out += [f"## `ocsched {name}` {{#ocsched-{name}}}", ""]
        out += ["```text", cmd.get_usage(ctx).replace("Usage: ", "").strip(), "```", ""]
        out += [_plain(cmd.help), ""]
        for kind in ("arguments", "options"):
            rows = _params(cmd, ctx, kind)
            if rows:
                out += [f"**{kind.capitalize()}**", "", *rows, ""]
        if cmd.epilog:
            out += ["```text", _plain(cmd.epilog), "```", ""]
        if name in ("algorithms", "workloads"):
            out += ["Output (the registry, today):", "", "```text", _registry_output(name), "```", ""]
    return "\n".join(out)


def _params(cmd: Any, ctx: Any, kind: str) -> list[str]:
    want = "argument" if kind == "arguments" else "option"
    params = [p for p in cmd.get_params(ctx) if p.param_type_name == want and not getattr(p, "hidden", False)]
    if not params:
        return []
    rows = ["| name | description | default |", "| --- | --- | --- |"]
    for p in params:
        record = p.get_help_record(ctx)
        if record is None:
            continue
        flags, help_text = record
        help_text = _TRAILER.sub(_ranges_only, help_text)
        rows.append(f"| `{' '.join(_plain(flags).split())}` | {_cell(help_text)} | {_default(p)} |")
    return rows


def _ranges_only(m: re.Match[str]) -> str:
    """Keep the range of click's trailer; the default and "required" have their own column."""
    keep = [x for x in m.group(1).split("; ") if x != "required" and not x.startswith("default:")]
    return f" [{'; '.join(keep)}]" if keep else ""


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """mkdocs hook: fill the CLI reference page."""
    return markdown.replace(MARKER, cli_markdown()) if MARKER in markdown else markdown
