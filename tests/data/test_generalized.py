"""Reading generalized release cells: ranges, sets, hierarchy node labels, '*', missing."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import Hierarchy, intervals
from crowdsafe.data.generalized import AttributeDomain, CellKind, canonical_cells, is_generalized, parse_cell
from crowdsafe.datasets import adult
from crowdsafe.errors import InputError


@pytest.mark.parametrize(
    ("text", "kind", "low", "high", "low_closed", "high_closed"),
    [
        ("[25, 34]", CellKind.RANGE, 25, 34, True, True),
        ("[25,35)", CellKind.RANGE, 25, 35, True, False),
        ("(1.5, 2e3]", CellKind.RANGE, 1.5, 2000, False, True),
        ("[900K, 35M]", CellKind.RANGE, 900_000, 35_000_000, True, True),
        (">=90", CellKind.RANGE, 90, np.inf, True, True),
        (">90", CellKind.RANGE, 90, np.inf, False, True),
        ("<18", CellKind.RANGE, -np.inf, 18, True, False),
        ("<= -3", CellKind.RANGE, -np.inf, -3, True, True),
        # ISO 31-11 (ARX, many statistics offices): an outward bracket opens its end
        ("[20, 30[", CellKind.RANGE, 20, 30, True, False),
        ("]20 ; 30]", CellKind.RANGE, 20, 30, False, True),
        ("]20,30[", CellKind.RANGE, 20, 30, False, False),
    ],
)
def test_parse_ranges(text, kind, low, high, low_closed, high_closed):
    cell = parse_cell(text)
    assert (cell.kind, cell.low, cell.high, cell.low_closed, cell.high_closed) == (
        kind, low, high, low_closed, high_closed)


def test_parse_other_cells():
    assert parse_cell(" * ").kind is CellKind.ANY
    assert parse_cell(None).kind is CellKind.MISSING
    s = parse_cell("{Separated, Divorced}")
    assert s.kind is CellKind.SET and s.members == ("Divorced", "Separated")
    assert s.text == "{Divorced, Separated}"
    assert parse_cell("Private").kind is CellKind.VALUE
    assert parse_cell("[2020-01-01, 2020-01-31]").high - parse_cell("[2020-01-01, 2020-01-31]").low == 30


def test_canonical_cells_and_detection():
    cells = pl.Series("x", ["[25,34]", "[25, 34]", "{b, a}", "{a}", "*", None, "plain", "[25; 35[", "]25, 35]"])
    assert canonical_cells(cells).to_list() == ["[25, 34]", "[25, 34]", "{a, b}", "a", "*", None, "plain",
                                                "[25, 35)", "(25, 35]"]
    assert is_generalized(cells)
    assert not is_generalized(pl.Series("x", ["a", "b"]))


def test_cover_against_adult_hierarchies():
    data = adult()
    occupation = AttributeDomain.of(data, "occupation")
    leaves = occupation.values.to_list()
    cells = pl.Series("occupation", [
        "Sales", "Technical, sales and clerical", "{Sales, Tech-support}",
        "{Farming-fishing, Technical, sales and clerical}", "*", None, "White collar",
    ])
    cover = occupation.cover(cells)
    members = [sorted(str(leaves[c]) for c in cover.members(j)) for j in range(len(cells))]
    assert members[0] == ["Sales"]
    assert members[1] == ["Adm-clerical", "Sales", "Tech-support"]
    assert members[2] == ["Sales", "Tech-support"]
    assert members[3] == ["Adm-clerical", "Farming-fishing", "Sales", "Tech-support"]
    assert len(members[4]) == len(leaves)
    assert members[5] == ["None"]  # the missing value is a value of its own
    assert list(cover.kind) == [CellKind.VALUE, CellKind.NODE, CellKind.SET, CellKind.SET, CellKind.ANY,
                                CellKind.MISSING, CellKind.NODE]
    assert list(cover.level) == [0, 1, 1, 3, 3, 0, 2]  # farming is blue collar: only the root holds both
    ncp = cover.ncp()
    assert ncp[0] == 0 and ncp[4] == 1 and ncp[1] == pytest.approx(3 / len(leaves))


def test_numeric_cover_and_equal_coverage_is_one_value():
    data = adult()
    age = AttributeDomain.of(data, "age")
    cover = age.cover(pl.Series("age", ["[25, 30)", "[25, 29]", "[25,29.5]", ">=80", "<20", "40", "*"]))
    assert list(cover.size[:3]) == [5, 5, 5]
    assert cover.canonical[0] == cover.canonical[1] == cover.canonical[2]
    assert (cover.low[3], cover.high[3]) == (80, 90)
    assert (cover.low[4], cover.high[4]) == (17, 19)
    assert cover.ncp()[0] == pytest.approx(4 / 73)
    assert cover.ncp()[6] == 1.0
    assert cover.level[0] == 1 and cover.level[5] == 0


def test_cover_from_values_and_dates():
    dates = [dt.date(2020, 1, 1), dt.date(2020, 1, 15), dt.date(2020, 2, 1)]
    domain = AttributeDomain.from_values(pl.Series("d", dates))
    cover = domain.cover(pl.Series("d", ["[2020-01-01, 2020-01-31]", "2020-02-01"]))
    assert list(cover.size) == [2, 1]
    h = intervals("x", [1, 2, 3, 4], widths=[2])
    numbers = AttributeDomain.from_values(pl.Series("x", [1, 2]), h)
    assert numbers.size == 4  # the hierarchy's leaves, not just the observed values


@pytest.mark.parametrize(
    ("column", "cell", "message"),
    [
        ("age", "[200, 300]", "covers no value"),
        ("workclass", "[1, 2]", "not numbers"),
        ("workclass", "Astronaut", "neither a value"),
        ("sex", None, "has a missing value, but the original has none"),
    ],
)
def test_bad_cells_are_clear_errors(column, cell, message):
    domain = AttributeDomain.of(adult(), column)
    with pytest.raises(InputError, match=message):
        domain.cover(pl.Series(column, [cell], dtype=pl.String))


def test_lowest_label_wins_when_a_label_repeats():
    h = Hierarchy.from_columns("m", ["a", "b", "c"], [["ab", "ab", "c"], ["ab", "ab", "c"], ["*"] * 3])
    cover = AttributeDomain("m", h.leaves, h).cover(pl.Series("m", ["ab", "c"]))
    assert list(cover.level) == [1, 0]


def test_masked_values_cover_the_values_they_may_mask():
    """``130**``: the values of five characters starting with 130 (ARX's and crowdsafe's mask
    hierarchies write them); read after values, labels, ranges and sets."""
    zips = AttributeDomain.from_values(pl.Series("zip", ["13053", "13068", "1305", "130531", "14850", None]))
    cover = zips.cover(pl.Series("zip", ["130**", "1305*", "13***", "{130**, 14850}", "13053"]), strict=False)
    covered = [sorted(zips.values.gather(cover.indices[a:b]).to_list()) for a, b in zip(cover.indptr, cover.indptr[1:])]
    assert covered == [["13053", "13068"], ["13053"], ["13053", "13068"], ["13053", "13068", "14850"], ["13053"]]
    assert list(cover.kind) == [CellKind.SET] * 4 + [CellKind.VALUE]
    ages = AttributeDomain.from_values(pl.Series("age", [5, 20, 25, 29, 31, 250]))
    cover = ages.cover(pl.Series("age", ["2*", "2**", "3*"]), strict=False)
    assert ages.values.gather(cover.indices).to_list() == [20, 25, 29, 250, 31]
    # against the original (strict), a masked value masks one value at least
    with pytest.raises(InputError, match=r"holds '9\*\*\*\*', which is neither .* a masked value nor '\*'"):
        zips.cover(pl.Series("zip", ["9****"]))


def test_bands_are_ranges_in_numeric_columns_only():
    ages = AttributeDomain.from_values(pl.Series("age", [5, 20, 25, 29, 31, 90, 95]))
    cover = ages.cover(pl.Series("age", ["20-29", "20 - 31", "90+", "29-20"]), strict=False)
    covered = [ages.values.gather(cover.indices[a:b]).to_list() for a, b in zip(cover.indptr, cover.indptr[1:])]
    assert covered == [[20, 25, 29], [20, 25, 29, 31], [90, 95], []]
    assert list(cover.kind) == [CellKind.RANGE] * 3 + [CellKind.VALUE]
    bands = AttributeDomain.from_values(pl.Series("band", ["20-29", "30-39"]))  # text: a band is a value
    cover = bands.cover(pl.Series("band", ["20-29", "40-49"]), strict=False)
    assert list(cover.kind) == [CellKind.VALUE, CellKind.VALUE] and cover.indices.tolist() == [0]



def _lowest_level_one_at_a_time(hierarchy: Hierarchy, codes: np.ndarray) -> int:
    """The reference: each level in turn until one node holds every code (the top if none)."""
    if len(codes) == 1:
        return 0
    for level in range(hierarchy.height + 1):
        if len(set(hierarchy.leaf_map(level)[codes].tolist())) == 1:
            return level
    return hierarchy.height


@settings(max_examples=60)
@given(st.lists(st.sets(st.integers(0, 14), min_size=1, max_size=6), min_size=1, max_size=12))
def test_cover_levels_match_the_one_cell_at_a_time_reference(subsets):
    """The levels of a cover's cells, found for every cell at once, equal the lowest node found
    one cell and one level at a time, in Adult's occupation hierarchy and in one with two roots
    (where a cell spanning both gets the top level)."""
    occupation = AttributeDomain.of(adult(), "occupation")
    groups, roots = [f"g{i // 3}" for i in range(15)], ["r0" if i < 9 else "r1" for i in range(15)]
    two_roots = Hierarchy.from_columns("v", [f"v{i}" for i in range(15)], [groups, roots])
    for domain in (occupation, AttributeDomain("v", two_roots.leaves, two_roots)):
        leaves = domain.values.to_list()
        present = [code for code, leaf in enumerate(leaves) if leaf is not None]  # no missing member
        picked = [sorted(present[c % len(present)] for c in subset) for subset in subsets]
        cells = [str(leaves[p[0]]) if len(set(p)) == 1 else "{" + ", ".join(sorted({str(leaves[c]) for c in p})) + "}"
                 for p in picked]
        cover = domain.cover(pl.Series(domain.name, cells))
        expected = [_lowest_level_one_at_a_time(domain.hierarchy, np.unique(p)) for p in picked]
        assert list(cover.level) == expected, cells
