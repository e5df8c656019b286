"""Column names that look alike but differ in their Unicode form or by a byte-order mark
(intlsweep #4): the refusal says how they differ (escaped), and a frame's first column name loses
a byte-order mark as the CSV reader's does."""

from __future__ import annotations

import unicodedata

import polars as pl
import pytest

from crowdsafe.data import Schema, load
from crowdsafe.data.schema import complete_schema
from crowdsafe.data.unicode_forms import name_note
from crowdsafe.errors import SchemaError
from crowdsafe.mechanisms.query_language import check_columns, parse

NFC = "Région"
NFD = unicodedata.normalize("NFD", NFC)
FORMS = "same text in different Unicode normalisation forms"


def _frame(name: str) -> pl.DataFrame:
    return pl.DataFrame({name: ["a", "b"] * 5, "Sexe": ["F", "M"] * 5})


def test_a_schema_name_in_the_other_form_is_explained():
    with pytest.raises(SchemaError) as raised:
        complete_schema(Schema.of({NFC: "categorical"}), _frame(NFD))
    message = str(raised.value)
    assert FORMS in message and "'Re\\u0301gion'" in message and "'R\\xe9gion'" in message


def test_a_role_name_in_the_other_form_is_explained():
    schema = Schema.of({NFD: "categorical", "Sexe": "categorical"})
    with pytest.raises(SchemaError, match=FORMS):
        schema.with_roles(qi=["Sexe"], sensitive=NFC)


def test_a_query_column_in_the_other_form_is_explained():
    with pytest.raises(SchemaError) as raised:
        check_columns(parse(f"count where `{NFC}` = 'x'"), [NFD, "Sexe"])
    assert FORMS in str(raised.value) and "did you mean" not in str(raised.value)


def test_a_byte_order_mark_is_named():
    note = name_note("Alter", ["\ufeffAlter", "Sexe"])
    assert "'\\ufeffAlter'" in note and "byte-order mark" in note


@pytest.mark.parametrize(("name", "names"), [("Region", ["Région"]), ("age", ["Age"]), ("x", ["y", "x "]),
                                             ("Région", ["Région", "Sexe"])])
def test_names_that_do_not_look_alike_get_no_note(name, names):
    assert name_note(name, names) == ""


@pytest.mark.parametrize("kind", ["polars", "pandas"])
def test_a_frames_first_column_loses_its_byte_order_mark(kind):
    frame = pl.DataFrame({"\ufeffAlter": [30, 40] * 5, "Sexe": ["F", "M"] * 5})
    data = frame.to_pandas() if kind == "pandas" else frame
    loaded = load(data, schema=Schema.of({"Alter": "numeric", "Sexe": "categorical"}))
    assert loaded.frame.columns == ["Alter", "Sexe"]


def test_a_mark_whose_bare_name_is_taken_is_kept():
    frame = pl.DataFrame({"\ufeffAlter": [1, 2] * 5, "Alter": [3, 4] * 5})
    assert load(frame).frame.columns == ["\ufeffAlter", "Alter"]
