"""No label of a suggested text hierarchy names a data value (issue 35): the draft's hierarchies
for text are masks, groups labelled by a masked first word, or groups whose labels name no value,
never ranges whose ends are values. A property test over random strings, and the cases that
used to fail."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data.builders import from_spec
from crowdsafe.data.hierarchy_draft import MAX_LISTED, neutral_groups, suggest_hierarchy
from hierarchy_labels import labels_naming_values

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
WORDY = st.builds(lambda a, b: f"{a} {b}", st.sampled_from(["THEFT", "DRUG", "Group", "group", "x"]),
                  st.sampled_from(["1", "A", "PETTY", "*", "group 1", ""]))


def _built(name: str, values: list[str]):
    column = pl.Series(name, values, dtype=pl.String)
    suggestion = suggest_hierarchy(name, column, "categorical")
    return suggestion, from_spec(suggestion.spec, column, attribute=name)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(TEXT, WORDY, st.sampled_from(["group 1", "group 2", "groups 1-2", "[group 1]"])),
                min_size=1, max_size=60))
@pytest.mark.slow
def test_no_suggested_text_label_names_a_value(values):
    suggestion, hierarchy = _built("category", values)
    assert labels_naming_values(hierarchy) == [], suggestion.spec


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="0123456789", min_size=5, max_size=5), min_size=1, max_size=40))
def test_postal_codes_are_masked(codes):
    suggestion, hierarchy = _built("PLZ", codes)
    assert suggestion.kind == "mask" and labels_naming_values(hierarchy) == []


def test_cities_get_neutral_groups_not_ranges_of_names():
    cities = ["Aachen", "Berlin", "Bonn", "Dresden", "Essen", "Kiel", "Köln", "Mainz", "Ulm", "Jena"] * 3
    suggestion, hierarchy = _built("Ort", cities)
    assert suggestion.kind == "frequency" and "order" not in suggestion.spec
    labels = {label for level in hierarchy.labels[1:] for label in level}
    assert labels <= {"*", "group 1", "group 2", "group 3", "group 4", "groups 1-2", "groups 3-4"}, labels
    assert not any(city in label for label in labels for city in set(cities))


def test_first_words_are_masked_labels():
    charges = ["THEFT PETTY", "THEFT GRAND", "DRUG POSSESSION", "DRUG SALE", "DUI"] * 5
    suggestion, hierarchy = _built("charge", charges)
    assert suggestion.kind == "groups" and set(suggestion.spec["groups"][0]) == {"THEFT*", "DRUG*", "DUI*"}
    assert labels_naming_values(hierarchy) == []


def test_a_first_word_label_a_value_spells_falls_back_to_neutral_groups():
    values = ["THEFT PETTY", "THEFT GRAND", "THEFT*", "DRUG SALE", "DRUG USE", "DUI"] * 3
    suggestion, hierarchy = _built("charge", values)  # "THEFT*" would publish every theft as that value
    assert suggestion.kind == "frequency" and labels_naming_values(hierarchy) == []


def test_a_label_a_value_spells_is_bracketed():
    groups = neutral_groups(["group 1", "b", "c", "d", "e"], [2, 2])
    assert list(groups[0]) == ["[group 1]", "[group 2]", "[group 3]"]
    assert list(groups[1]) == ["[groups 1-2]", "[groups 3]"]


def test_the_draft_never_lists_hundreds_of_values():
    surnames = [f"Name{i:03d}x" for i in range(404)] + [f"N{i}" for i in range(404)]  # varied lengths: no mask
    suggestion, _ = _built("col7", surnames * 2)
    assert suggestion.kind == "flat" and MAX_LISTED <= 100
