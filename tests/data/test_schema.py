"""Schema: roles, types, TOML, inference, role changes."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.data import AttributeType, Role, Schema
from crowdsafe.errors import InputError, SchemaError


def test_infer_makes_every_attribute_a_quasi_identifier_with_types_from_dtypes():
    when = pl.Series(["2020-01-01", "2021-01-01"]).str.to_date()
    frame = pl.DataFrame({"age": [30, 40], "zip": ["1", "2"], "when": when})
    schema = Schema.infer(frame)
    assert schema.names == ["age", "zip", "when"]
    assert schema.quasi_identifiers == ["age", "zip", "when"]
    assert [a.type for a in schema] == [AttributeType.NUMERIC, AttributeType.CATEGORICAL, AttributeType.DATE]
    assert schema.source == "inferred"
    assert schema.person_id is None


def test_infer_echo_prints_a_summary(capsys):
    Schema.infer(pl.DataFrame({"a": [1]}), echo=True)
    err = capsys.readouterr().err
    assert "inferred" in err and "quasi-identifier" in err and "numeric" in err


def test_with_roles_sets_exactly_the_named_roles():
    schema = Schema.of({"a": "numeric", "b": "categorical", "c": "categorical", "d": "numeric"})
    narrowed = schema.with_roles(qi=["a", "b"], sensitive="c")
    assert narrowed.quasi_identifiers == ["a", "b"]
    assert narrowed.sensitive == ["c"]
    assert narrowed["d"].role is Role.INSENSITIVE
    # changing only the sensitive attribute moves the former one out of the sensitive role
    again = narrowed.with_roles(sensitive=["d"])
    assert again.sensitive == ["d"] and again["c"].role is Role.INSENSITIVE
    assert again.quasi_identifiers == ["a", "b"]


def test_with_roles_rejects_unknown_and_overlapping_names():
    schema = Schema.of({"a": "numeric", "b": "categorical"})
    with pytest.raises(SchemaError, match="unknown attribute 'zz'"):
        schema.with_roles(qi=["zz"])
    with pytest.raises(SchemaError, match="both"):
        schema.with_roles(qi=["a"], sensitive=["a"])


def test_getitem_names_the_known_attributes():
    schema = Schema.of({"a": "numeric"})
    with pytest.raises(SchemaError, match="the attributes are: a"):
        schema["b"]


def test_from_toml_reads_roles_types_order_person_and_hierarchy(tmp_path):
    (tmp_path / "edu.csv").write_text("x;*\n")
    path = tmp_path / "schema.toml"
    path.write_text(
        """
person_id = "pid"
[attributes.pid]
role = "identifier"
type = "categorical"
[attributes.age]
type = "numeric"
hierarchy = { widths = [5, 10] }
[attributes.edu]
type = "ordinal"
order = ["low", "mid", "high"]
hierarchy = "edu.csv"
[attributes.income]
role = "sensitive"
type = "categorical"
"""
    )
    schema = Schema.from_toml(path)
    assert schema.names == ["pid", "age", "edu", "income"]
    assert schema.person_id == "pid"
    assert schema.identifiers == ["pid"]
    assert schema.quasi_identifiers == ["age", "edu"]
    assert schema.sensitive == ["income"]
    assert schema["edu"].order == ("low", "mid", "high")
    assert schema["edu"].hierarchy == str((tmp_path / "edu.csv").resolve())
    assert schema["age"].hierarchy == {"widths": [5, 10]}


@pytest.mark.parametrize(
    "text, message",
    [
        ("[attributes.a]\nrole='boss'\ntype='numeric'\n", "unknown role 'boss'"),
        ("[attributes.a]\ntype='number-ish'\n", "unknown type"),
        ("[attributes.a]\nrole='sensitive'\n", "has no type"),
        ("x = 1\n", "declares no"),
        ("[attributes.a\n", "not valid TOML"),
        ("person_id='p'\n[attributes.a]\ntype='numeric'\n", "person_id names 'p'"),
    ],
)
def test_from_toml_errors_name_the_problem(tmp_path, text, message):
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(SchemaError, match=message):
        Schema.from_toml(path)


def test_from_toml_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="schema file not found"):
        Schema.from_toml(tmp_path / "nope.toml")


def test_duplicate_attribute_is_refused():
    from crowdsafe.data import Attribute

    with pytest.raises(SchemaError, match="twice"):
        Schema((Attribute("a"), Attribute("a")))


def test_a_schema_file_with_a_byte_order_mark_reads_as_without(tmp_path):
    """Windows editors start a UTF-8 file with a BOM; TOML does not allow one, so it is dropped."""
    text = '[attributes.age]\ntype = "integer"\n[attributes.sex]\ntype = "categorical"\nrole = "sensitive"\n'
    plain, marked = tmp_path / "plain.toml", tmp_path / "marked.toml"
    plain.write_text(text, encoding="utf-8")
    marked.write_text(text, encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    assert Schema.from_toml(marked).attributes == Schema.from_toml(plain).attributes
