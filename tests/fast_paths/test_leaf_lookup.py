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


def hierarchy_and_values(case, categorical=pl.Categorical):
    """The case's hierarchy (with a missing leaf, absorbing, as drawn) and its values as a Series
    (cast to ``categorical`` when the case says so)."""
    kind, leaves, with_missing, absorbing, values, as_categorical = case
    h = Hierarchy.from_columns("c", pl.Series("c", leaves, dtype=DTYPES[kind]), [["*"] * len(leaves)])
    if with_missing:
        h = h.with_missing_leaf()
    if absorbing:
        h = h.absorbing()
    series = pl.Series("c", values, dtype=DTYPES[kind])
    return h, series.cast(categorical) if as_categorical else series


@settings(max_examples=200, deadline=None)
@given(cases())
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_dictionary_and_the_join_agree(case):
    h, series = hierarchy_and_values(case)
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


def codes_by_expression(h: Hierarchy, series: pl.Series):
    expression = h.leaf_code_expression("c", series.dtype)
    if expression is None:
        return None
    return series.to_frame("c").select(expression).get_column("c").to_list()


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=200, deadline=None)
@given(cases(), st.booleans())
def test_the_counting_expression_gives_leaf_codes_own_codes(case, as_enum):
    """:meth:`Hierarchy.leaf_code_expression` (one Polars select over the rows, what the sample is
    counted with) gives every row the code :meth:`Hierarchy.leaf_codes` gives it: missing values
    and values the leaves do not list on the missing leaf. It exists only for an absorbing
    hierarchy over text or integers (a Categorical or Enum is counted by its physical codes)."""
    kind, leaves, _, absorbing, _, as_categorical = case
    enum = as_enum and as_categorical  # (text leaves only: a categorical case is text)
    h, series = hierarchy_and_values(case, pl.Enum(sorted({*leaves, "z", "A"})) if enum else pl.Categorical)
    by_expression = codes_by_expression(h, series)
    if not absorbing or kind in ("date", "bool") or as_categorical:
        assert by_expression is None
    else:
        assert by_expression == h.leaf_codes(series).tolist()


def test_a_counting_expression_that_sends_unlisted_values_elsewhere_is_caught(monkeypatch):
    h = Hierarchy.from_columns("c", pl.Series("c", ["a", "b"]), [["*", "*"]]).absorbing()
    series = pl.Series("c", ["b", None, "z"])
    assert codes_by_expression(h, series) == h.leaf_codes(series).tolist() == [1, 2, 2]

    def first_leaf_by_default(self, column, dtype):  # "z" on leaf 0 instead of the missing leaf
        listed = self.leaves.drop_nulls()
        return pl.col(column).replace_strict(listed, list(range(len(listed))), default=0,
                                             return_dtype=pl.UInt32).fill_null(self.missing_leaf)

    monkeypatch.setattr(Hierarchy, "leaf_code_expression", first_leaf_by_default)
    assert codes_by_expression(h, series) != h.leaf_codes(series).tolist()


def test_leaves_that_repeat_a_value_leave_the_codes_to_leaf_codes():
    """A text hierarchy read over an integer column can hold "7" and "07": both are 7 there."""
    h = Hierarchy.from_columns("c", pl.Series("c", ["7", "07", "3"]), [["*"] * 3]).absorbing()
    assert h.leaf_code_expression("c", pl.Int64) is None
    assert h.leaf_code_expression("c", pl.String) is not None


@settings(max_examples=100, deadline=None)
@given(cases())
def test_the_outside_count_is_the_length_of_the_outside_list(case):
    """The custodian-only count of unlisted values, counted in one select for every column
    (:meth:`Hierarchy.outside_count`), is the length of :meth:`Hierarchy.outside`'s list."""
    h, series = hierarchy_and_values(case)
    counted = series.to_frame("c").select(h.outside_count("c", series.dtype)).item()
    assert counted == len(h.outside(series))


def test_a_missing_leaf_listed_first_gets_the_same_codes():
    """The expression's codes when the missing leaf is not the last one (a hierarchy that lists it
    itself), against leaf_codes: the other branch of how the expression finds the missing leaf."""
    h = Hierarchy.from_columns("c", pl.Series("c", [None, "a", "b"]), [["*"] * 3]).absorbing()
    series = pl.Series("c", ["b", None, "z", "a"])
    assert codes_by_expression(h, series) == h.leaf_codes(series).tolist() == [2, 0, 0, 1]
