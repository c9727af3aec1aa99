"""A griffe extension: read the package's numpydoc docstrings as Markdown for mkdocstrings.

The docstrings are written for ``help()`` and doctests, in numpydoc with Sphinx-style roles.
mkdocstrings renders them as Markdown, so two things are translated, in the rendered copy only
(the source is untouched):

- a role such as ``:func:`~ocsched.decompose.decompose``` becomes an *optional* cross-reference:
  a link where the target is documented on the site, plain code elsewhere (so a reference to a
  private helper is never a broken link);
- a bare doctest (``>>>`` lines outside an ``Examples`` section) becomes a ``pycon`` code block,
  so its output is not read as Markdown (a list of tuples would look like a link);
- an inline literal ````x```` that wraps over lines is joined onto one line, so a continuation
  line starting with ``+`` or ``-`` is not read as a list item.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(func|class|meth|attr|data|mod|obj|exc|const):`(~?)([^`<]+?)`")
SECTION_RULE = re.compile(r"^\s*-{3,}\s*$")
LITERAL = re.compile(r"(?<!`)``(?!`)([^`]+?)(?<!`)``(?!`)")


def join_literals(text: str) -> str:
    """Put every ````...```` literal that wraps over lines (within a paragraph) on one line."""

    def sub(m: re.Match[str]) -> str:
        body = m.group(1)
        if "\n" not in body or "\n\n" in body:
            return m.group(0)
        return "``" + re.sub(r"\s*\n\s*", " ", body) + "``"

    return LITERAL.sub(sub, text)


def _identifier(obj: griffe.Object, target: str) -> str:
    """The full path a role's target names, seen from ``obj`` (a guess is fine: refs are optional)."""
    target = target.lstrip(".")
    if target.startswith("ocsched"):
        return target
    head = target.split(".", 1)[0]
    scope: Any = obj if (obj.is_class or obj.is_module) else obj.parent
    while scope is not None:
        if head in scope.members:
            return f"{scope.path}.{target}"
        scope = scope.parent
    return target


def roles_to_refs(text: str, obj: griffe.Object) -> str:
    """Replace every Sphinx role by an optional autorefs cross-reference."""

    def sub(m: re.Match[str]) -> str:
        short, target = m.group(2) == "~", m.group(3).strip()
        shown = target.rsplit(".", 1)[-1] if short else target
        if m.group(1) in ("func", "meth") and not shown.endswith(")"):
            shown += "()"
        ident = html.escape(_identifier(obj, target), quote=True)
        return f'<autoref identifier="{ident}" optional><code>{html.escape(shown)}</code></autoref>'

    return ROLE.sub(sub, text)


def fence_doctests(text: str) -> str:
    """Put every ``>>>`` block outside an ``Examples`` section into a ``pycon`` code fence."""
    lines = text.splitlines()
    out: list[str] = []
    section = ""
    k = 0
    while k < len(lines):
        line = lines[k]
        if k + 1 < len(lines) and line.strip() and SECTION_RULE.match(lines[k + 1]):
            section = line.strip().lower()
        stripped = line.lstrip()
        if stripped.startswith(">>>") and section not in ("examples", "example"):
            indent = line[: len(line) - len(stripped)]
            block = []
            while k < len(lines) and lines[k].strip():
                block.append(lines[k][len(indent) :] if lines[k].startswith(indent) else lines[k])
                k += 1
            if out and out[-1].strip():
                out.append("")
            out.extend([f"{indent}```pycon", *(indent + b for b in block), f"{indent}```"])
            continue
        out.append(line)
        k += 1
    return "\n".join(out)


class MarkdownDocstrings(griffe.Extension):
    """Translate roles and bare doctests in every docstring of the loaded package."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.is_alias or obj.docstring is None:
            return
        obj.docstring.value = roles_to_refs(fence_doctests(join_literals(obj.docstring.value)), obj)
