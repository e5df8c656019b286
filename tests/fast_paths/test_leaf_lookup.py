"""Hierarchy.leaf_codes looks a few values up in a Python dictionary of the leaves
(``LOOKUP_IN_PYTHON``), more by a Polars join: the same codes, the same refusals, on both sides
of the switch."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import hierarchy as hierarchy_module
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.errors import HierarchyError

LEAVES = {
    "text": ["a", "b", "", "é", "10"],
    "int": [3, -1, 0, 10, 7],
    "date": [dt.date(2020, 1, 1), dt.date(1999, 12, 31), dt.date(2000, 2, 29), dt.date(1970, 1, 1),
             dt.date(2024, 6, 1)],
    "bool": [True, False],
}
DTYPES = {"text": pl.String, "int": pl.Int64, "date": pl.Date, "bool": pl.Boolean}


def codes_or_error(h: Hierarchy, values: pl.Series):
    try:
        return h.leaf_codes(values).tolist()
    except HierarchyError as error:
        return str(error)


@st.composite
def cases(draw):
    kind = draw(st.sampled_from(sorted(LEAVES)))
    leaves = LEAVES[kind]
    with_missing = draw(st.booleans())
    absorbing = draw(st.booleans())
    outside = {"text": ["z", "A"], "int": [99, -5], "date": [dt.date(2001, 1, 1)], "bool": []}[kind]
    values = draw(st.lists(st.sampled_from(leaves + outside + [None]), max_size=12))
    as_categorical = kind == "text" and draw(st.booleans())
    return kind, leaves, with_missing, absorbing, values, as_categorical


@settings(max_examples=200, deadline=None)
@given(cases())
def test_the_dictionary_and_the_join_agree(case):
    kind, leaves, with_missing, absorbing, values, as_categorical = case
    h = Hierarchy.from_columns("c", pl.Series("c", leaves, dtype=DTYPES[kind]), [["*"] * len(leaves)])
    if with_missing:
        h = h.with_missing_leaf()
    if absorbing:
        h = h.absorbing()
    series = pl.Series("c", values, dtype=DTYPES[kind])
    if as_categorical:
        series = series.cast(pl.Categorical)
    fast = codes_or_error(h, series)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hierarchy_module, "LOOKUP_IN_PYTHON", -1)
        joined = codes_or_error(h, series)
    assert fast == joined


def test_few_values_skip_the_join(monkeypatch):
    h = Hierarchy.from_columns("c", pl.Series("c", ["a", "b"]), [["*", "*"]])
    calls = []
    real = pl.DataFrame.join
    monkeypatch.setattr(pl.DataFrame, "join", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert h.leaf_codes(pl.Series("c", ["b", "a", "b"])).tolist() == [1, 0, 1]
    assert not calls
    monkeypatch.setattr(hierarchy_module, "LOOKUP_IN_PYTHON", 2)
    assert h.leaf_codes(pl.Series("c", ["b", "a", "b"])).tolist() == [1, 0, 1]
    assert calls == [1]
