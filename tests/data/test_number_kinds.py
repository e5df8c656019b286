"""How a numeric attribute holds its numbers: declared integer or real, or left to its values.

The type names (``integer``, ``real`` and their aliases, plain ``numeric``), the loader holding a
declared kind whatever the source (CSV text, a typed Parquet file, a frame), the refusal of a
value a declared integer cannot hold, and the schema draft writing the kind it read.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

from crowdsafe.data import NumberKind, Schema, load
from crowdsafe.data.schema import NUMBERS_FROM_DATA, declared_type
from crowdsafe.errors import SchemaError


@pytest.mark.parametrize("name, kind", [("integer", NumberKind.INTEGER), ("int", NumberKind.INTEGER),
                                        ("real", NumberKind.REAL), ("float", NumberKind.REAL),
                                        ("Double", NumberKind.REAL), ("continuous", NumberKind.REAL),
                                        ("numeric", None), ("number", None)])
def test_type_names_say_how_the_numbers_are_held(name, kind):
    assert declared_type(name) == (declared_type("numeric")[0], kind)


def test_only_a_plain_numeric_attribute_is_marked():
    schema = Schema.of({"a": "integer", "b": "numeric", "c": "real", "d": "categorical"})
    assert schema.unreviewed(["a", "b", "c", "d"]) == {"b": (NUMBERS_FROM_DATA,)}
    assert schema.unreviewed(["b"], ["order"]) == {}  # a reading marker: asked for with "reading"
    assert "numeric (integer)" in schema.summary() and schema.to_dict()["attributes"][0]["numbers"] == "integer"


def test_a_schema_file_declares_the_kind(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[attributes.a]\ntype = "integer"\n[attributes.b]\ntype = "real"\n[attributes.c]\n'
                    'type = "numeric"\n', encoding="utf-8")
    schema = Schema.from_toml(path)
    assert [schema[c].numbers for c in "abc"] == [NumberKind.INTEGER, NumberKind.REAL, None]


def _csv(tmp_path, values: list[str]) -> str:
    path = tmp_path / "t.csv"
    path.write_text("x,y\n" + "".join(f"{v},a\n" for v in values), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("values", [["1", "2", "3"], ["1", "2.5", "3"]])
def test_a_declared_real_is_read_as_floats_whatever_the_values(tmp_path, values):
    loaded = load(_csv(tmp_path, values), schema=Schema.of({"x": "real", "y": "categorical"}))
    assert loaded.frame.schema["x"] == pl.Float64


def test_a_declared_integer_reads_whole_numbers_written_with_a_point(tmp_path):
    loaded = load(_csv(tmp_path, ["1", "2.0", "", "3"]), schema=Schema.of({"x": "integer", "y": "categorical"}))
    assert loaded.frame.schema["x"] == pl.Int64 and loaded.frame.get_column("x").to_list() == [1, 2, None, 3]


@pytest.mark.parametrize("bad", ["2.5", "inf", "1e300"])
def test_a_declared_integer_refuses_what_it_cannot_hold_naming_the_row(tmp_path, bad):
    with pytest.raises(SchemaError, match=r"declared integer but row 2 of .* holds .*not a whole number"):
        load(_csv(tmp_path, ["1", bad, "3"]), schema=Schema.of({"x": "integer", "y": "categorical"}))


def test_a_typed_source_is_held_as_declared_too(tmp_path):
    path = tmp_path / "t.parquet"
    pl.DataFrame({"x": [1.0, 2.0, math.nan], "y": [1, 2, 3]}).write_parquet(path)
    loaded = load(str(path), schema=Schema.of({"x": "integer", "y": "real"}))
    assert loaded.frame.schema["x"] == pl.Int64 and loaded.frame.schema["y"] == pl.Float64
    assert loaded.frame.get_column("x").to_list() == [1, 2, None]  # a NaN is missing
    frame = pl.DataFrame({"x": pl.Series([1, 2], dtype=pl.UInt8), "y": [0.5, 1.0]})
    assert load(frame, schema=Schema.of({"x": "integer", "y": "real"})).frame.schema["x"] == pl.Int64
    with pytest.raises(SchemaError, match="row 1"):
        load(frame, schema=Schema.of({"x": "real", "y": "integer"}))


def test_without_a_declared_kind_the_values_still_decide(tmp_path):
    """A plain numeric column reads as before (marked, not refused)."""
    schema = Schema.of({"x": "numeric", "y": "categorical"})
    assert load(_csv(tmp_path, ["1", "2"]), schema=schema).frame.schema["x"] == pl.Int64
    assert load(_csv(tmp_path, ["1", "2.5"]), schema=schema).frame.schema["x"] == pl.Float64


def test_the_draft_writes_the_kind_it_read(tmp_path):
    from crowdsafe.data.schema_draft import draft_schema

    frame = pl.DataFrame({"whole": [1, 2, 3] * 10, "real": [0.5, 1.0, 2.0] * 10})
    text = draft_schema(frame).to_toml()
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    schema = Schema.from_toml(path)
    assert schema["whole"].numbers is NumberKind.INTEGER and schema["real"].numbers is NumberKind.REAL
    assert "every value is a whole number (from the data)" in text


def test_the_certificate_explains_the_marker_the_schema_sets():
    """privacy/ reads no data code: its copy of the marker must be the schema's, or the reason
    (how to declare the kind) would never be given."""
    from crowdsafe.privacy.certificate import unreviewed_reasons

    (reason,) = unreviewed_reasons({"x": (NUMBERS_FROM_DATA,)})
    assert reason.startswith("numbers read by their values: 'x'") and 'type = "real"' in reason
