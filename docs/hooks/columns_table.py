"""The table of a sweep's result columns, generated from :data:`ocsched.sweep.columns.COLUMNS`.

An mkdocs hook (``hooks:`` in ``mkdocs.yml``): the marker ``<!-- result-columns -->`` in a docs
page is replaced by the table at build time, so the documented columns are the stored ones.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- result-columns -->"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """mkdocs hook: put the columns table where a page has the marker."""
    if MARKER not in markdown:
        return markdown
    from ocsched.sweep.columns import columns_table

    return markdown.replace(MARKER, columns_table())
