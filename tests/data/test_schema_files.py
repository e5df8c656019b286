"""Declared types are enforced on load, and schema files can build hierarchies."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from crowdsafe.data import Attribute, AttributeType, Role, Schema, frequency_table, load
from crowdsafe.errors import HierarchyError, InputError, SchemaError


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_declared_dates_are_parsed_and_bad_dates_named(tmp_path):
    data = _write(tmp_path, "d.csv", "visit,code\n2021-03-04,a\n2020-12-31,b\n")
    schema = Schema.of({"visit": "date", "code": "categorical"})
    frame = load(data, schema=schema).frame
    assert frame.get_column("visit").to_list() == [dt.date(2021, 3, 4), dt.date(2020, 12, 31)]
    bad = _write(tmp_path, "b.csv", "visit,code\n2021-03-04,a\nyesterday,b\n")
    with pytest.raises(SchemaError, match="row 2 .* 'yesterday', which is not a date"):
        load(bad, schema=schema)


def test_ordinal_values_outside_the_declared_order_are_named(tmp_path):
    data = _write(tmp_path, "o.csv", "level\nlow\nhigh\nextreme\n")
    schema = Schema((Attribute("level", Role.QUASI_IDENTIFIER, AttributeType.ORDINAL, ("low", "mid", "high")),))
    loaded = load(data, schema=schema)  # not refused at load: a DP command handles it without stopping
    with pytest.raises(SchemaError, match="'extreme', which is not in its declared order"):
        loaded.validate_domains()
    from crowdsafe import api

    with pytest.raises(SchemaError, match="'extreme', which is not in its declared order"):
        api.check(data, schema=schema)


def test_undeclared_columns_are_added_as_quasi_identifiers(tmp_path):
    data = _write(tmp_path, "u.csv", "a,b,c\n1,x,y\n")
    loaded = load(data, schema=Schema.of({"b": "categorical"}, sensitive="b"))
    assert loaded.quasi_identifiers == ["a", "c"]
    assert loaded.sensitive == ["b"]


def test_hierarchy_specifications_in_a_schema_file(tmp_path):
    data = _write(
        tmp_path, "p.csv",
        "age,zip,visit,grade,sex\n23,02139,2021-01-05,b,F\n37,02138,2021-02-01,c,M\n41,10001,2022-07-09,a,F\n",
    )
    schema = _write(tmp_path, "s.toml", """
[attributes.age]
type = "numeric"
hierarchy = { widths = [10, 20], top = 40 }
[attributes.zip]
type = "categorical"
hierarchy = { mask = 3 }
[attributes.visit]
type = "date"
hierarchy = { dates = ["month", "year"] }
[attributes.grade]
type = "ordinal"
order = ["a", "b", "c"]
hierarchy = { fanout = [2], order = ["a", "b", "c"] }
[attributes.sex]
type = "categorical"
hierarchy = { flat = true }
""")
    loaded = load(data, schema=schema)
    assert set(loaded.hierarchies) == {"age", "zip", "visit", "grade", "sex"}
    table = frequency_table(loaded, ["age", "zip", "visit", "grade"],
                            levels={"age": 1, "zip": 3, "visit": 2, "grade": 1})
    assert table.rows() == [
        ("[20, 30)", "02***", "2021", "a-b", 1),
        ("[30, 40)", "02***", "2021", "c", 1),
        (">=40", "10***", "2022", "a-b", 1),
    ]
    assert loaded.recode({"sex": 1}).get_column("sex").cast(pl.String).to_list() == ["*", "*", "*"]


def test_bad_hierarchy_specifications(tmp_path):
    data = _write(tmp_path, "p.csv", "age,name\n23,x\n")
    for spec, message in [
        ("{ widths = [10], colour = 1 }", "unknown key"),
        ("{ teleport = 1 }", "unknown specification"),
        ("{ dates = ['month'] }", "need a date column"),
        ("\"missing.csv\"", "hierarchy file not found"),
    ]:
        schema = _write(tmp_path, "s.toml", f'[attributes.age]\ntype = "numeric"\nhierarchy = {spec}\n')
        with pytest.raises((HierarchyError, InputError), match=message):
            load(data, schema=schema)
    schema = _write(tmp_path, "s.toml", '[attributes.name]\ntype = "categorical"\nhierarchy = { widths = [5] }\n')
    with pytest.raises(HierarchyError, match="intervals need a numeric column"):
        load(data, schema=schema)


def test_with_frame_and_recode_keep_schema_and_hierarchies():
    from crowdsafe.datasets import adult

    data = adult(drop_missing=True)
    sample = data.with_frame(data.frame.head(100))
    assert sample.n_rows == 100 and sample.hierarchies.keys() == data.hierarchies.keys()
    recoded = sample.recode({"age": 5, "education": 2})
    assert set(recoded.get_column("age").cast(pl.String)) == {"*"}
    assert set(recoded.get_column("education").cast(pl.String)) <= {
        "No diploma", "High school or associate", "University degree"}
