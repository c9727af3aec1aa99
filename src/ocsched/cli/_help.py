"""``-h`` as people read it: commands in panels, EXAMPLES epilogs, plain metavars.

typer's defaults show ``<bool>`` after a flag (``--force <bool>``, though ``--force true`` is an
error), ``<path>``/``<str>`` for values, lowercase ``{demand}`` beside ``SCHEDULE`` for
arguments, and long choice lists folded mid-word. :func:`tidy` rewrites a command's parameters
once, when the group hands it out: flags show nothing, values an upper-case metavar, arguments
their upper-case name, and a choice list longer than :data:`MAX_CHOICES_SHOWN` characters moves
into the help text, where it wraps between words.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXAMPLES", "PANELS", "tidy"]

#: Help panels of ``ocsched -h``: command name -> panel title (a command not listed: "Commands").
PANELS: dict[str, str] = {
    **dict.fromkeys(("schedule", "reschedule", "algorithms", "demo", "warmup", "serve"), "Schedule"),
    **dict.fromkeys(("bound", "validate", "gap", "sweep", "report"), "Evaluate"),
    **dict.fromkeys(("generate", "workloads", "import"), "Workloads"),
    **dict.fromkeys(("export", "plot"), "Files"),
}

#: EXAMPLES of the commands whose module gives none (one command line each).
EXAMPLES: dict[str, str] = {
    "sweep": "ocsched sweep --preset quick --out results/quick\n"
    "ocsched sweep my.toml --out results/my --dry-run",
    "report": "ocsched report results/quick\nocsched report results/quick --by fabric -o out/",
    "plot": "ocsched plot s.json --out s.png",
    "import": "ocsched import traces/ --link-rate 400Gbps -o it.json",
    "warmup": "ocsched warmup",
    "serve": "ocsched serve\nocsched serve --port 0 --workers 2   # a free port, printed on start",
    "demo": "ocsched demo\nocsched demo --n 200 -s 8 -d 0.01",
}

#: Longest choice list shown as the metavar (``all-stop|partial``); longer ones go into the help.
MAX_CHOICES_SHOWN = 24

_PLAIN = {"path": "PATH", "str": "TEXT", "int": "INTEGER", "float": "FLOAT", "list[str]": "TEXT"}


def _choices(param: Any) -> list[str] | None:
    desc = getattr(param, "type_descriptor", None)  # typer's view of the annotation (Literal choices)
    values = getattr(desc, "choices", None) if getattr(desc, "is_choice", False) else None
    values = values or getattr(getattr(param, "type", None), "choices", None)
    return [str(v) for v in values] if values else None


def _tidy_param(param: Any, ctx: Any) -> None:
    if getattr(param, "param_type_name", "") == "argument":
        if param.metavar is None:
            param.metavar = param.name.upper()
        return
    if getattr(param, "is_flag", False) and not getattr(param, "count", False):
        param.metavar = ""  # a flag takes no value: show none
        return
    if param.metavar is not None:
        return
    choices = _choices(param)
    if choices:
        shown = "|".join(choices)
        if len(shown) <= MAX_CHOICES_SHOWN:
            param.metavar = shown
        else:
            param.metavar = (param.name or "value").upper()
            help_text = (param.help or "").rstrip()
            param.help = f"{help_text} One of: {', '.join(choices)}.".strip()
        return
    try:
        shown = param.display_type(ctx)
    except (AttributeError, TypeError):
        return
    if isinstance(shown, str) and shown.startswith("<") and shown.endswith(">"):
        param.metavar = _PLAIN.get(shown[1:-1], shown[1:-1].upper())


def tidy(command: Any, name: str | None = None) -> Any:
    """Give ``command`` its panel, EXAMPLES epilog and plain metavars (once; returns it)."""
    if command is None or getattr(command, "_ocsched_tidy", False):
        return command
    import typer

    name = name or command.name or ""
    if name in PANELS:
        command.rich_help_panel = PANELS[name]
    epilog = command.epilog or EXAMPLES.get(name)
    if epilog and not epilog.startswith("Examples"):
        lines = [ln.strip() for ln in epilog.strip().splitlines() if ln.strip()]
        # "\[": a literal bracket under rich markup; one paragraph, so the lines stay lines
        command.epilog = "Examples:\n" + "\n".join("  " + ln.replace("[", "\\[") for ln in lines)
    ctx = typer.Context(command, info_name=name)
    for param in getattr(command, "params", []):
        _tidy_param(param, ctx)
    made = command.get_help_option

    def help_option(ctx: Any) -> Any:  # made by click when needed (its names come from the context)
        option = made(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = help_option
    command._ocsched_tidy = True
    return command
