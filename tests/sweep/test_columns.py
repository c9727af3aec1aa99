"""The result-column registry: one declaration per stored column, the schema and the docs from it."""

from __future__ import annotations

import pytest

from ocsched.sweep.columns import COLUMNS, RESULT_COLUMNS, columns_table

pa = pytest.importorskip("pyarrow")


def test_every_column_is_declared_once_with_a_type_and_a_meaning() -> None:
    names = [c.name for c in COLUMNS]
    assert len(set(names)) == len(names) and list(RESULT_COLUMNS) == names
    for c in COLUMNS:
        assert isinstance(getattr(pa, c.arrow)(), pa.DataType), c.name
        assert c.description.endswith(".") and c.description[0].isupper(), c.name


def test_the_stored_schema_is_the_registry() -> None:
    from ocsched.sweep.results import schema

    fixed = [f for f in schema({"n": "int64"}) if not f.name.startswith("opt_")]
    assert [(f.name, f.type) for f in fixed] == [(c.name, getattr(pa, c.arrow)()) for c in COLUMNS]


def test_the_docs_table_lists_every_column() -> None:
    table = columns_table().splitlines()
    assert len(table) == 2 + len(COLUMNS) + 1  # head, rule, the columns, the option columns
    assert all(f"| `{c.name}` |" in line for c, line in zip(COLUMNS, table[2:], strict=False))
