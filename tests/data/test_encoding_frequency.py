"""Encoding and frequency tables, checked against plain-Python counting."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import (
    Schema,
    code_frequencies,
    encode,
    encode_series,
    flat,
    frequency_table,
    intervals,
    load,
    ordered_groups,
)
from crowdsafe.data.encoding import encode_with_hierarchy
from crowdsafe.errors import HierarchyError, SchemaError

_values = st.one_of(
    st.lists(st.one_of(st.none(), st.integers(-3, 3)), min_size=1, max_size=40),
    st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), min_size=1, max_size=40),
    st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "é", "", "zz"])), min_size=1, max_size=40),
    st.lists(st.one_of(st.none(), st.floats(-5, 5, allow_nan=False)), min_size=1, max_size=40),
)


@settings(max_examples=150, deadline=None)
@given(values=_values, categorical=st.booleans())
def test_encoding_round_trips_and_is_sorted_with_missing_last(values, categorical):
    series = pl.Series("x", values, strict=False)
    if categorical and series.dtype == pl.String:
        series = series.cast(pl.Categorical)
    codes, dictionary = encode_series(series)
    assert codes.dtype == np.uint32 and len(codes) == len(values)
    decoded = dictionary.gather(codes)
    if series.dtype.is_float():
        series = series + 0.0  # -0.0 and 0.0 are one value, decoded as 0.0
    assert decoded.cast(pl.String).to_list() == series.cast(pl.String).to_list()
    distinct = sorted({v for v in series.cast(pl.String).to_list() if v is not None},
                      key=lambda v: float(v) if series.dtype.is_numeric() else v)
    present = [v for v in dictionary.cast(pl.String).to_list() if v is not None]
    assert present == distinct  # deterministic: sorted values
    if series.null_count():
        assert dictionary[-1] is None


def test_negative_zero_is_zero_whatever_the_row_order():
    for values in ([0.0, -0.0, 1.5], [-0.0, 0.0, 1.5]):
        codes, dictionary = encode_series(pl.Series("x", values))
        assert codes.tolist() == [0, 0, 1]
        assert dictionary.cast(pl.String).to_list() == ["0.0", "1.5"]


def test_encoding_does_not_depend_on_row_order():
    a = pl.Series("x", ["b", "a", "c", "a"]).cast(pl.Categorical)
    b = pl.Series("x", ["c", "a", "a", "b"]).cast(pl.Categorical)
    assert encode_series(a)[1].to_list() == encode_series(b)[1].to_list() == ["a", "b", "c"]


def test_encode_uses_hierarchy_leaves_and_declared_order():
    frame = pl.DataFrame({"age": [23, 37, 23], "edu": ["high", "low", "mid"]})
    schema = Schema.of({"age": "numeric", "edu": "ordinal"})
    schema = Schema(tuple(a if a.name != "edu" else type(a)("edu", a.role, a.type, ("low", "mid", "high"))
                          for a in schema))
    h = intervals("age", range(0, 100), widths=[10])
    data = load(frame, schema=schema, hierarchies={"age": h})
    enc = encode(data)
    assert enc["age"].codes.tolist() == [23, 37, 23]  # leaf codes: leaves are 0..99
    assert [h.labels[1][c] for c in h.generalize(enc["age"].codes, 1)] == ["[20, 30)", "[30, 40)", "[20, 30)"]
    assert enc["edu"].dictionary.to_list() == ["low", "mid", "high"]
    assert enc["edu"].codes.tolist() == [2, 0, 1]


def test_enum_categories_absent_from_the_data_need_no_hierarchy_leaf():
    enum = pl.Enum(["north", "south", "east", "west"])
    series = pl.Series("region", ["west", "north", "west"], dtype=enum)
    h = flat("region", ["north", "west"])  # covers only the values present
    encoded = encode_with_hierarchy(series, h)
    assert h.leaves.gather(encoded.codes).to_list() == ["west", "north", "west"]
    with pytest.raises(HierarchyError, match="'south'"):
        encode_with_hierarchy(pl.Series("region", ["south"], dtype=enum), h)


def test_encode_rejects_unknown_columns():
    with pytest.raises(SchemaError, match="no column named 'q'"):
        encode(pl.DataFrame({"a": [1]}), ["q"])


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["F", "M", None]), st.integers(0, 4), st.sampled_from(["x", "y"])),
                     min_size=1, max_size=60))
def test_frequency_table_matches_python_counter(rows):
    frame = pl.DataFrame(rows, schema=["sex", "n", "z"], orient="row")
    table = frequency_table(frame, ["sex", "n"])
    assert table.schema["count"] == pl.Int64
    expected = Counter((s, n) for s, n, _ in rows)
    got = {(r["sex"], r["n"]): r["count"] for r in table.iter_rows(named=True)}
    assert got == dict(expected)
    codes = code_frequencies(encode(frame, ["sex", "n"]))
    assert sorted(codes.get_column("count").to_list()) == sorted(expected.values())
    assert codes.get_column("count").sum() == len(rows)


def test_frequency_table_after_recoding_uses_hierarchy_order():
    frame = pl.DataFrame({"age": [5, 15, 25, 95, 17], "edu": ["a", "b", "c", "d", "a"]})
    data = load(frame, hierarchies={
        "age": intervals("age", range(0, 100), widths=[10, 50]),
        "edu": ordered_groups("edu", ["a", "b", "c", "d"], fanout=[2]),
    })
    table = frequency_table(data, ["age", "edu"], levels={"age": 2, "edu": 1})
    assert table.rows() == [("[0, 50)", "a-b", 3), ("[0, 50)", "c-d", 1), ("[50, 100)", "c-d", 1)]
    assert frequency_table(data, ["age"], levels={"age": 3}).rows() == [("*", 5)]
    with pytest.raises(SchemaError, match="not among the columns"):
        frequency_table(data, ["age"], levels={"edu": 1})
    plain = load(frame)
    with pytest.raises(HierarchyError, match="no hierarchy"):
        frequency_table(plain, ["age"], levels={"age": 1})


def test_frequency_table_rejects_bad_columns():
    frame = pl.DataFrame({"a": [1], "count": [2]})
    with pytest.raises(SchemaError, match="clashes"):
        frequency_table(frame, ["count"])
    with pytest.raises(SchemaError, match="no column named 'b'"):
        frequency_table(frame, ["b"])


def test_code_frequencies_without_packing_when_the_key_space_is_too_large():
    rng = np.random.default_rng(3)
    n = 70_000
    frame = pl.DataFrame({f"c{i}": rng.permutation(n) for i in range(4)})  # 70,000^4 > 2^63 keys
    frame = pl.concat([frame, frame.head(5)])
    table = code_frequencies(encode(frame))
    assert table.height == n
    assert sorted(table.get_column("count").to_list())[-5:] == [2] * 5
