"""The scheme presets (selection/mechanism.py ``PRESETS``) are ordered by coarseness per column,
none ≤ fine ≤ medium ≤ coarse ≤ h − 1 (no preset takes a column to its root), so each has at most
the possible tuples of the one before; and the plan's resolution line names the preset with the
fewest possible tuples when none fits. Until 2026-11-30 a height-1 hierarchy (race, sex, income
on Adult) went to the root in ``fine`` and ``medium`` but stayed exact in ``coarse``: on Adult
medium had 9,000 possible tuples, coarse 243,000, and the line named coarse."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crowdsafe.anonymize.plan import PlanRequest
from crowdsafe.anonymize.publish import plan_for_dataset, prepare_dataset, resolution_outlook
from crowdsafe.datasets import adult
from crowdsafe.selection import PRESETS, fixed_scheme
from crowdsafe.selection.mechanism import _preset_level

ORDER = ("none", "fine", "medium", "coarse")
# the levels by height, written out by hand: (none, fine, medium, coarse)
BY_HAND = {0: (0, 0, 0, 0), 1: (0, 0, 0, 0), 2: (0, 1, 1, 1), 3: (0, 1, 2, 2), 4: (0, 1, 2, 3), 5: (0, 1, 3, 4),
           6: (0, 1, 3, 5)}


def test_the_presets_are_listed_finest_first():
    assert tuple(PRESETS) == ORDER


@pytest.mark.parametrize("height", sorted(BY_HAND))
def test_the_levels_by_height(height):
    assert tuple(_preset_level(p, height) for p in ORDER) == BY_HAND[height]


@given(st.integers(0, 60))
def test_the_presets_are_ordered_and_below_the_root(height):
    levels = [_preset_level(p, height) for p in ORDER]
    assert levels == sorted(levels) and levels[0] == 0
    assert levels[-1] == max(height - 1, 0)  # coarse: one level below the root


@pytest.fixture(scope="module")
def adult_prepared():
    prepared, columns, _ = prepare_dataset(adult())
    return prepared, list(columns)


def _possible(prepared, columns, preset) -> int:
    levels = fixed_scheme(prepared, columns, preset).levels
    return math.prod(prepared.hierarchies[c].size(levels[c]) for c in columns)


def test_each_preset_has_at_most_the_possible_tuples_of_the_one_before(adult_prepared):
    prepared, columns = adult_prepared
    possible = [_possible(prepared, columns, p) for p in ORDER]
    assert possible == sorted(possible, reverse=True)
    heights = {c: prepared.hierarchies[c].height for c in columns}
    assert {c for c, h in heights.items() if h == 1} == {"race", "sex", "income"}  # the premise
    assert all(fixed_scheme(prepared, columns, p).levels[c] == 0 for p in ORDER for c in ("race", "sex", "income"))


def test_the_resolution_line_names_the_preset_with_the_fewest_tuples(adult_prepared):
    """At ε = 0.05 on Adult no preset fits (about 19 classes of k rows): the outlook is the
    preset with the fewest possible tuples, computed here from the hierarchies."""
    prepared, columns = adult_prepared
    plan = plan_for_dataset(adult(), PlanRequest(0.05, 1e-6))
    outlook = resolution_outlook(prepared, columns, plan, prepared.frame.height)
    possible = {p: _possible(prepared, columns, p) for p in ORDER}
    assert min(possible.values()) > outlook["classes_fillable"]  # the premise: nothing fits
    assert outlook["possible_tuples"] == min(possible.values()) == possible[outlook["preset"]]
    assert outlook["preset"] == "coarse"


def test_the_line_that_no_preset_fits_says_what_to_change():
    """Found by a new user's walk-through (eight columns of a 5,000-row hospital table): the line
    said that not even the coarse preset fits, and nothing of what to do about it."""
    from crowdsafe.anonymize.publish import plan_fact_lines

    outlook = {"classes_fillable": 57.0, "preset": "coarse", "levels": {"a": 2, "b": 1}, "possible_tuples": 900}
    lines = dict(plan_fact_lines({"expected_sample_rows": 1547.0, "input_rows": 5000, "resolution": outlook}))
    assert "not even the coarse preset fits" in lines["resolution"]
    assert "publish fewer columns, give them coarser hierarchies or raise epsilon" in lines["resolution"]
    fits = dict(plan_fact_lines({"expected_sample_rows": 1547.0, "input_rows": 5000,
                                 "resolution": {**outlook, "possible_tuples": 50}}))
    assert "finest preset that fits" in fits["resolution"] and "fewer columns" not in fits["resolution"]
