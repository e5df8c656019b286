"""An observed hierarchy's height comes from its rule, never from the values the data holds.

The lattice (so the number of candidates, ε1 and β) is built from the hierarchies' heights, so a
height that moved with one row would put a fact about the data into a certificate fit for
release. ``{"mask": None}`` made the depth the longest value present: refused now from the schema
alone; ``fanout`` without an ``order`` left out its root when the only value present was ``*``.
The pair of neighbouring tables runs in tests/privacy_boundary/test_mechanism_inputs.py
(``builders`` and ``mask-unbounded``).
"""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data.builders import from_spec
from crowdsafe.data.schema import Attribute, AttributeType, Role, Schema
from crowdsafe.errors import CrowdsafeError, HierarchyError

TEXT_SPECS = [{"mask": 1}, {"mask": 4}, {"fanout": [2]}, {"fanout": [2, 3]}, {"flat": True}]
DATE_SPECS = [{"dates": ["month", "year"]}, {"dates": ["quarter", "decade"]}, {"dates": []}]
NUMBER_SPECS = [{"widths": [5, 10]}, {"cuts": [[20, 40], [40]], "bottom": 0, "top": 90}]

texts = st.text(alphabet="0123*ab", min_size=0, max_size=9)
days = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 12, 31))
numbers = st.integers(min_value=-10**6, max_value=10**6)


def _height(spec, values, dtype) -> int:
    return from_spec(spec, pl.Series("x", values, dtype=dtype), attribute="x").height


@settings(max_examples=60, deadline=None)
@given(spec=st.sampled_from(TEXT_SPECS), values=st.lists(texts | st.none(), max_size=6), added=texts | st.none())
def test_a_text_builders_height_does_not_move_with_one_row(spec, values, added):
    """D and D plus one row (any text: longer than every other, ``*``, empty, missing): the same height."""
    assert _height(spec, values, pl.String) == _height(spec, [*values, added], pl.String)


@settings(max_examples=40, deadline=None)
@given(spec=st.sampled_from(DATE_SPECS), values=st.lists(days | st.none(), max_size=6), added=days | st.none())
def test_a_date_builders_height_does_not_move_with_one_row(spec, values, added):
    assert _height(spec, values, pl.Date) == _height(spec, [*values, added], pl.Date) == len(spec["dates"]) + 1


@settings(max_examples=40, deadline=None)
@given(spec=st.sampled_from(NUMBER_SPECS), values=st.lists(numbers | st.none(), max_size=6),
       added=numbers | st.none())
def test_an_interval_builders_height_does_not_move_with_one_row(spec, values, added):
    assert _height(spec, values, pl.Int64) == _height(spec, [*values, added], pl.Int64) == 3


def test_fanout_over_a_lone_star_keeps_its_root():
    """The case the property found: ``fanout`` over the values present, the only one ``*``, made
    its last level the root (height 1); a second value gave it its own root (height 2)."""
    assert _height({"fanout": [2]}, ["*"], pl.String) == _height({"fanout": [2]}, ["*", "x"], pl.String) == 2


@pytest.mark.parametrize("depth", [None, 2.5, True, 0, 65, "4", [3]])
def test_a_mask_without_a_whole_number_depth_is_refused_from_the_schema(depth):
    """Refused when the attribute is declared, before any table is read, in one line naming the
    column: the depth cannot be taken from the longest value."""
    with pytest.raises(HierarchyError) as caught:
        Attribute("zip", Role.QUASI_IDENTIFIER, AttributeType.CATEGORICAL, hierarchy={"mask": depth})
    message = str(caught.value)
    assert "\n" not in message and "'zip'" in message and "whole number of characters from 1 to 64" in message
    assert repr(depth) in message


def test_a_mask_depth_in_a_schema_file_must_be_a_whole_number(tmp_path):
    path = tmp_path / "schema.toml"
    path.write_text('[attributes.zip]\ntype = "categorical"\nhierarchy = { mask = 2.5 }\n', encoding="utf-8")
    with pytest.raises(CrowdsafeError, match=r"'zip': mask must be a whole number .* got 2\.5"):
        Schema.from_toml(path)
    path.write_text('[attributes.zip]\ntype = "categorical"\nhierarchy = { mask = 4 }\n', encoding="utf-8")
    assert Schema.from_toml(path)["zip"].hierarchy == {"mask": 4}


@pytest.mark.parametrize(("levels", "said"), [
    (None, "dates must be a list of levels"),
    ("month", "dates must be a list of levels"),
    (["week"], "unknown date level 'week'"),
    ([1], "unknown date level 1"),
    (["year", "month"], "must go from fine to coarse"),
])
def test_date_levels_of_the_wrong_shape_are_refused_from_the_schema(levels, said):
    """Before the fix ``None`` or ``[1]`` reached the builder as a TypeError; now one line at declaration."""
    with pytest.raises(HierarchyError, match=said) as caught:
        Attribute("born", Role.QUASI_IDENTIFIER, AttributeType.DATE, hierarchy={"dates": levels})
    assert "'born'" in str(caught.value) and "\n" not in str(caught.value)
