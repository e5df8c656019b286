"""A hierarchy level in words (issue 35): ``age in ranges of 10``, not ``level 2``; from public
information only (a declared hierarchy's labels, an observed one's level names)."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from crowdsafe.data import Hierarchy
from crowdsafe.data.builders import dates, flat, grouping, intervals, masking, observed_flat
from crowdsafe.data.hierarchy import ObservedHierarchy
from crowdsafe.data.level_words import level_words
from crowdsafe.datasets.uci_adult import hierarchies as adult_hierarchies


def words(hierarchy: Hierarchy) -> list[str]:
    published = hierarchy.absorbing()  # as the safe pipeline publishes it: with its missing-value leaf
    return [published.describe_level(level) for level in range(published.height + 1)]


def test_adult_levels_say_what_they_do():
    adult = adult_hierarchies()
    assert words(adult["age"]) == [
        "age: exact values", "age in ranges of 5; >=80 as one group", "age in ranges of 10; >=80 as one group",
        "age in ranges of 20; >=80 as one group", "age in 2 ranges: [0, 40), >=40", "age: suppressed (*)"]
    assert words(adult["education"]) == ["education: exact values", "education: 8 groups", "education: 3 groups",
                                         "education: suppressed (*)"]
    assert words(adult["hours-per-week"])[2] == "hours-per-week in 3 ranges: <35, [35, 41), >=41"
    assert words(adult["sex"]) == ["sex: exact values", "sex: suppressed (*)"]


def test_declared_masks_dates_and_groups():
    zip_code = Hierarchy.from_columns("zip", ["02139", "02138", "10001"],
                                      [["0213*", "0213*", "1000*"], ["021**", "021**", "100**"], ["*"] * 3])
    assert words(zip_code)[1:] == ["zip: last 1 digit masked", "zip: last 2 digits masked", "zip: suppressed (*)"]
    assert words(masking("code", ["ab1", "ab2"], levels=1))[1] == "code: last 1 character masked"
    assert words(dates("day", [dt.date(2020, 1, 2)], levels=("month", "year")))[1:] == [
        "day by month", "day by year", "day: suppressed (*)"]
    sex = grouping("sex", [{"person": ["F", "M"]}])
    assert words(sex)[1] == "sex: 1 group"


def _observed(values: list[int]) -> ObservedHierarchy:
    return ObservedHierarchy.of(intervals("age", values, widths=[10, 20]))


def test_an_observed_hierarchy_is_described_by_its_rule_alone():
    """Two observed hierarchies under one rule, over different values (the data's): the same
    words at every level. Their labels differ, so words read from the labels would not."""
    few, many = _observed([21, 22]), _observed(list(range(0, 100)))
    assert words(few) == words(many) == ["age: exact values", "age in ranges of 10", "age in ranges of 20",
                                          "age: suppressed (*)"]
    assert few.labels[1] != many.labels[1]
    masked = [ObservedHierarchy.of(masking("zip", values, levels=2)) for values in (["02139"], ["a1", "b22"])]
    assert words(masked[0]) == words(masked[1])
    assert words(masked[0])[1] == "zip: last 1 character masked"  # not "digit": the leaves are data
    assert words(observed_flat(pl.Series("note", ["x", None]))) == ["note: exact values", "note: suppressed (*)"]


def test_the_broken_variant_is_caught(monkeypatch):
    """Words read from an observed hierarchy's labels (as if it were declared) depend on the data:
    the check above fails on them."""
    monkeypatch.setattr(ObservedHierarchy, "observed", False)
    few, many = _observed([21, 22]), _observed(list(range(0, 100)))
    assert words(few) != words(many)
    assert level_words(few, 1) == "age in 1 range: [20, 30)"


@pytest.mark.parametrize("hierarchy", [flat("x", ["a"]), intervals("n", [1.5, 2.5], widths=[0.5])])
def test_every_level_has_words(hierarchy):
    assert all(words(hierarchy))
