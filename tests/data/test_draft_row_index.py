"""A file's nameless first column (the row index R's write.csv and pandas' to_csv write) is
drafted an identifier, from the header alone, with a comment saying why: the rename note told the
custodian to declare it one, and the draft made it a quasi-identifier (or an identifier only when
its values happened to be near-unique)."""

from __future__ import annotations

import tomllib

import polars as pl

from crowdsafe.data import schema_draft
from crowdsafe.data.schema import Role
from crowdsafe.data.schema_draft import draft_schema


def _write(path, rows):
    # as pandas writes it: an empty first header field, then the row numbers
    path.write_text(",age,sex\n" + "".join(f"{i},{30 + i % 5},{'FM'[i % 2]}\n" for i in range(rows)))
    return path


def test_a_nameless_first_column_is_drafted_an_identifier_saying_why(tmp_path):
    draft = draft_schema(_write(tmp_path / "d.csv", 12))  # too few rows for the values to decide it
    column = next(a for a in draft.attributes if a.name == "column_1")
    assert column.role is Role.IDENTIFIER and column.hierarchy is None
    assert column.identifier == getattr(schema_draft, "ROW_INDEX", None)
    assert not column.role_from_data  # the header decided it, not the values
    text = draft.to_toml()
    assert tomllib.loads(text)["attributes"]["column_1"]["role"] == "identifier"
    comments = " ".join(text.replace("#", " ").split())  # the comment lines, unwrapped
    assert f"direct identifier, from the header (no name): {schema_draft.ROW_INDEX}" in comments


def test_the_release_then_drops_it(tmp_path):
    from crowdsafe import api

    data = _write(tmp_path / "d.csv", 12)
    schema = draft_schema(data).write(tmp_path / "s.toml")
    release = api.anonymize(str(data), schema=str(schema), k=2, report=False)
    assert "column_1" not in release.frame.columns and isinstance(release.frame, pl.DataFrame)
