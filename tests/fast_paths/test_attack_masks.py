"""The intersection attack's candidate sets as 64-bit masks against their reference twin, sorted
keys ``tuple * n_values + value`` (attacks/value_masks.py, rule ``fits_masks``: at most
``MASK_VALUES`` = 64 sensitive values). The whole public attack is run with the rule as it is
and with the twin forced, on both sides of the switch, and must give the same result."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.attacks import intersection_attack, locate, value_masks
from crowdsafe.data import Hierarchy
from crowdsafe.data.generalized import leaf_domain


def run(releases, targets, qi, sensitive, **options):
    result = intersection_attack(releases, targets, qi, sensitive, **options)
    return result.targets, result.releases, result.summary


def assert_same(one, other):
    targets, releases, summary = one
    other_targets, other_releases, other_summary = other
    assert targets.equals(other_targets)
    assert releases.equals(other_releases)
    assert summary == other_summary


def ring(n_values: int):
    """Targets 0..n-1, each in a class of its own in two releases whose two values overlap in
    the target's own value only: every target is breached, the last one on value n - 1."""
    values = [f"v{i:03d}" for i in range(n_values)]
    ages = [str(i) for i in range(n_values)]
    first = pl.DataFrame({"age": ages * 2, "s": values + values[1:] + values[:1]})
    second = pl.DataFrame({"age": ages * 2, "s": values + values[-1:] + values[:-1]})
    targets = pl.DataFrame({"age": list(range(n_values)), "s": values})
    return [first, second], targets


@pytest.mark.parametrize("n_values", [value_masks.MASK_VALUES - 1, value_masks.MASK_VALUES,
                                      value_masks.MASK_VALUES + 1])
def test_masks_and_keys_agree_at_the_switch(monkeypatch, n_values):
    releases, targets = ring(n_values)
    as_is = run(releases, targets, ["age"], "s")
    assert as_is[2]["perfect_breach"] == 1.0 and as_is[2]["perfect_breach_true"] == 1.0
    assert as_is[0].get_column("inferred_value").to_list() == targets.get_column("s").to_list()
    monkeypatch.setattr(value_masks, "MASK_VALUES", 0)  # the reference twin
    assert_same(as_is, run(releases, targets, ["age"], "s"))


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_the_switch_moves_with_the_constant(monkeypatch, shift):
    releases, targets = ring(5)
    expected = run(releases, targets, ["age"], "s")
    monkeypatch.setattr(value_masks, "MASK_VALUES", 5 + shift)
    assert value_masks.fits_masks(5) == (shift >= 0)
    assert_same(expected, run(releases, targets, ["age"], "s"))


AGES = ["[20, 29]", "[30, 39]", "[20, 39]", "25", "31", "*", "[25, 34]"]
ZIP = Hierarchy.from_columns("zip", ["13053", "13068", "14850", "14853"],
                             [["130**", "130**", "148**", "148**"], ["*"] * 4])
ZIPS = ["13053", "13068", "14850", "14853", "130**", "148**", "*"]


@st.composite
def attack_case(draw):
    n_values = draw(st.integers(1, 8))
    values = [f"s{i}" for i in range(n_values)]
    cells = values + ["*", "{" + ", ".join(values[:2]) + "}", None]

    def release():
        n = draw(st.integers(1, 12))
        return pl.DataFrame({"age": draw(st.lists(st.sampled_from(AGES), min_size=n, max_size=n)),
                             "zip": draw(st.lists(st.sampled_from(ZIPS), min_size=n, max_size=n)),
                             "s": draw(st.lists(st.sampled_from(cells), min_size=n, max_size=n))})

    releases = [release() for _ in range(draw(st.integers(1, 3)))]
    n = draw(st.integers(1, 10))
    targets = pl.DataFrame({"age": draw(st.lists(st.integers(18, 45), min_size=n, max_size=n)),
                            "zip": draw(st.lists(st.sampled_from(ZIP.leaves.to_list()), min_size=n, max_size=n)),
                            "s": draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))})
    return releases, targets


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(attack_case(), st.booleans())
def test_masks_and_keys_agree_on_random_releases(case, with_truth):
    releases, targets = case
    if not with_truth:
        targets = targets.drop("s")
    options = {"hierarchies": {"zip": ZIP}, "levels": (0.2, 0.5, 1.0)}
    as_is = run(releases, targets, ["age", "zip"], "s", **options)
    saved = value_masks.MASK_VALUES
    value_masks.MASK_VALUES = 0  # (hypothesis runs many examples in one test: no monkeypatch)
    try:
        twin = run(releases, targets, ["age", "zip"], "s", **options)
    finally:
        value_masks.MASK_VALUES = saved
    assert_same(as_is, twin)


def test_tuple_masks_match_the_sets():
    # classes 0..2 hold {0, 1}, {}, {2}; tuple 0 in classes 0 and 2, tuple 1 in class 1, tuple 2 nowhere
    masks = np.array([0b011, 0, 0b100], dtype=np.uint64)
    candidates, prior = value_masks.tuple_masks(3, np.array([0, 0, 1]), np.array([0, 2, 1]), masks)
    assert candidates.tolist() == [0b111, 0, 0b111]
    assert prior.tolist() == [3, 3, 3]  # an empty located set counts what the release publishes
    sizes, only = value_masks.sizes_and_only(np.array([0b100, 0b110, 1 << 63], dtype=np.uint64))
    assert sizes.tolist() == [1, 2, 1] and only[[0, 2]].tolist() == [2, 63]


# the releases' sensitive leaves ORed as bits in their group-by (locate.LEAF_MASKS, when the
# sensitive attribute has a hierarchy of at most 64 text leaves) against their reference twin,
# the list of each class's distinct cells; a release holding a cell that is no leaf (a label,
# '*', a set, a spaced or missing cell) falls back to the twin, alone
SICK = ["flu", "hiv", "cold", "cancer"]
SICK_HIERARCHY = Hierarchy.from_columns("s", SICK, [["viral", "viral", "viral", "other"], ["*"] * 4])


@st.composite
def leaf_case(draw):
    cells = SICK + (draw(st.lists(st.sampled_from(["viral", "*", "{flu, hiv}", " flu", None]), max_size=2))
                    if draw(st.booleans()) else [])
    releases = []
    for _ in range(draw(st.integers(1, 3))):
        rows = draw(st.lists(st.tuples(st.sampled_from(["[20, 29]", "[30, 39]", "25", "*"]), st.sampled_from(cells)),
                             min_size=1, max_size=12))
        releases.append(pl.DataFrame(rows, schema={"age": pl.String, "s": pl.String}, orient="row"))
    n = draw(st.integers(1, 8))
    targets = pl.DataFrame({"age": draw(st.lists(st.integers(18, 45), min_size=n, max_size=n)),
                            "s": draw(st.lists(st.sampled_from(SICK), min_size=n, max_size=n))})
    return releases, targets


@pytest.mark.slow  # over a second (the quick loop: README)
@settings(max_examples=80, deadline=None)
@given(leaf_case())
def test_leaf_masks_and_lists_agree(case):
    releases, targets = case
    hierarchies = {"s": SICK_HIERARCHY}
    expected = run(releases, targets, ["age"], "s", hierarchies=hierarchies)
    listed = locate.class_tables(releases, ["age"], "s")
    leaves = locate.leaf_masks(SICK_HIERARCHY, leaf_domain("s", SICK_HIERARCHY))
    assert leaves is not None
    with patch.object(locate, "LEAF_MASKS", False):
        assert_same(run(releases, targets, ["age"], "s", hierarchies=hierarchies), expected)
    masked = locate.class_tables_and_codes(releases, ["age"], "s", sensitive_leaves=leaves)[0]
    for table, other in zip(masked, listed):  # the same classes, each holding the same cells
        assert table.n_classes == other.n_classes and (table.sizes == other.sizes).all()
        for t in (table, other):
            assert t.sensitive_cells is not None and t.sensitive_held is not None
        held = [{(int(k), table.sensitive_cells[int(c)]) for k, c in zip(*table.sensitive_held)}
                for table in (table, other)]
        assert held[0] == held[1]


@pytest.mark.parametrize("n_leaves", [63, 64])  # a no-leaf cell flagged by the top bit, or counted
@pytest.mark.parametrize("stray", ["*", None, "v000 "])
def test_a_cell_that_is_no_leaf_falls_back_at_either_width(n_leaves, stray):
    values = [f"v{i:03d}" for i in range(n_leaves)]
    hierarchy = Hierarchy.from_columns("s", values, [["*"] * n_leaves])
    leaves = locate.leaf_masks(hierarchy, leaf_domain("s", hierarchy))
    assert leaves is not None
    clean = pl.DataFrame({"age": ["[20, 29]"] * 4 + ["[30, 39]"] * 2, "s": values[:3] + [values[-1]] + values[:2]})
    strayed = clean.with_columns(pl.Series("s", values[:3] + [stray] + values[:2], dtype=pl.String))
    targets = pl.DataFrame({"age": [21, 33, 25], "s": values[:2] + [values[-1]]})
    for releases in ([clean, clean], [clean, strayed]):
        expected = run(releases, targets, ["age"], "s", hierarchies={"s": hierarchy})
        with patch.object(locate, "LEAF_MASKS", False):
            assert_same(run(releases, targets, ["age"], "s", hierarchies={"s": hierarchy}), expected)
        masked = locate.class_tables_and_codes(releases, ["age"], "s", sensitive_leaves=leaves)[0]
        listed = locate.class_tables(releases, ["age"], "s")
        for table, other in zip(masked, listed):
            held = [{(int(k), t.sensitive_cells[int(c)]) for k, c in zip(*t.sensitive_held)} for t in (table, other)]
            assert held[0] == held[1]
    # the highest leaf is one bit below the flag: the class holding it is read as holding a leaf
    assert (values[-1] in {c for c in masked[0].sensitive_cells.to_list()})
