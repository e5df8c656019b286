"""Hierarchies: integer arrays per level, builders, CSV files, validation."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import Hierarchy, dates, flat, grouping, intervals, masking, ordered_groups
from crowdsafe.errors import HierarchyError


def _check_tree(h: Hierarchy) -> None:
    """Independent check: the ARX rows agree with the parent arrays level by level."""
    rows = h.to_rows()
    for level in range(h.height):
        parent_label = {}
        for row in rows:
            child, parent = row[level], row[level + 1]
            assert parent_label.setdefault(child, parent) == parent
        for j, label in enumerate(h.labels[level]):
            assert h.labels[level + 1][h.parents[level][j]] == parent_label[label]


def test_age_intervals_with_bottom_and_top_coding():
    h = intervals("age", range(17, 91), widths=[5, 10, 20], bottom=20, top=80)
    assert h.height == 4  # 5, 10, 20-year bands, then *
    rows = {int(r[0]): r[1:] for r in h.to_rows()}
    assert rows[17] == ["<20", "<20", "<20", "*"]
    assert rows[23] == ["[20, 25)", "[20, 30)", "[20, 40)", "*"]
    assert rows[79] == ["[75, 80)", "[70, 80)", "[60, 80)", "*"]
    assert rows[90] == [">=80", ">=80", ">=80", "*"]
    assert h.size(h.height) == 1
    _check_tree(h)


def test_intervals_from_cut_points_and_nesting_violation():
    h = intervals("hours", range(1, 100), cuts=[[20, 35, 41, 50, 60], [35, 50]])
    rows = {int(r[0]): r[1:] for r in h.to_rows()}
    assert rows[10] == ["<20", "<35", "*"]
    assert rows[40] == ["[35, 41)", "[35, 50)", "*"]
    assert rows[99] == [">=60", ">=50", "*"]
    with pytest.raises(HierarchyError, match="not a tree: cut point 45"):
        intervals("hours", range(1, 100), cuts=[[20, 40], [45]])
    with pytest.raises(HierarchyError, match="not a tree: width 12 of level 2 is not a whole multiple of width 5"):
        intervals("x", range(10), widths=[5, 12])


def test_leaf_counts_and_ranges_per_node():
    h = intervals("age", range(17, 91), widths=[10], bottom=20)
    counts = h.leaf_counts(1)
    assert counts.sum() == 74
    labels = list(h.labels[1])
    assert counts[labels.index("<20")] == 3
    assert counts[labels.index("[20, 30)")] == 10
    assert counts[labels.index("[90, 100)")] == 1
    ranges = h.ranges(1)
    assert ranges[labels.index("[20, 30)")].tolist() == [20, 29]
    assert ranges[labels.index("<20")].tolist() == [17, 19]
    assert h.ranges(2).tolist() == [[17, 90]]
    assert (h.leaf_counts(0) == 1).all()
    with pytest.raises(HierarchyError, match="text values"):
        flat("sex", ["F", "M"]).ranges(1)


def test_generalize_is_one_take_and_agrees_with_rows():
    h = ordered_groups("edu", ["a", "b", "c", "d", "e"], fanout=[2, 2])
    codes = np.array([0, 4, 2, 2], dtype=np.uint32)
    level1 = h.generalize(codes, 1)
    assert [h.labels[1][c] for c in level1] == ["a-b", "e", "c-d", "c-d"]
    level2 = h.generalize(codes, 2)
    assert [h.labels[2][c] for c in level2] == ["a-d", "e", "a-d", "a-d"]
    assert set(h.generalize(codes, h.height)) == {0}
    with pytest.raises(HierarchyError, match="levels 0..3"):
        h.generalize(codes, 4)


def test_ordered_groups_with_named_groups():
    h = ordered_groups("e", ["p", "m", "h", "b", "g"], groups=[[("school", 3), ("uni", 2)]])
    assert h.to_rows() == [["p", "school", "*"], ["m", "school", "*"], ["h", "school", "*"],
                           ["b", "uni", "*"], ["g", "uni", "*"]]
    with pytest.raises(HierarchyError, match="add up to 4"):
        ordered_groups("e", ["p", "m", "h", "b", "g"], groups=[[("school", 3), ("uni", 1)]])


def test_grouping_detects_a_value_in_two_groups_and_orphan_groups():
    with pytest.raises(HierarchyError, match="not a tree: 'Sales' is in both"):
        grouping("occ", [{"White": ["Sales", "Clerk"], "Service": ["Sales"]}])
    with pytest.raises(HierarchyError, match="group 'B' of level 1 belongs to no group"):
        grouping("x", [{"A": ["a"], "B": ["b"]}, {"AB": ["A"]}])
    h = grouping("x", [{"A": ["a", "b"], "B": ["c"]}, {"AB": ["A", "B"]}])
    assert h.height == 3 and h.labels[3] == ("*",)  # the root is always added ...
    h = grouping("x", [{"A": ["a", "b"], "B": ["c"]}, {"*": ["A", "B"]}])
    assert h.height == 2 and h.size(2) == 1  # ... unless the top given is already *


def test_masking_zip_codes():
    h = masking("zip", ["02139", "02138", "10001"], levels=3)
    rows = {r[0]: r[1:] for r in h.to_rows()}
    assert rows["02139"] == ["0213*", "021**", "02***", "*"]
    assert h.size(1) == 2  # 0213*, 1000*
    _check_tree(h)


def test_dates_day_month_year():
    values = [dt.date(2020, 1, 5), dt.date(2020, 1, 20), dt.date(2020, 7, 1), dt.date(2021, 2, 2)]
    h = dates("when", values)
    assert h.size(1) == 3 and h.size(2) == 2 and h.size(3) == 1
    assert h.to_rows()[0] == ["2020-01-05", "2020-01", "2020", "*"]
    assert h.ranges(2).tolist()[0] == [dt.date(2020, 1, 5).toordinal() - dt.date(1970, 1, 1).toordinal(),
                                       dt.date(2020, 7, 1).toordinal() - dt.date(1970, 1, 1).toordinal()]
    with pytest.raises(HierarchyError, match="fine to coarse"):
        dates("when", values, levels=("year", "month"))


def test_csv_round_trip_semicolon_and_comma(tmp_path):
    h = grouping("wc", [{"Gov": ["State-gov", "Local-gov"], "Private": ["Private"]}])
    path = h.write_csv(tmp_path / "wc.csv")
    assert path.read_text().splitlines()[0] == "State-gov;Gov;*"
    assert Hierarchy.from_csv(path, name="wc") == h
    comma = tmp_path / "c.csv"
    comma.write_text("a,A,*\nb,A,*\nc,C,*\n")
    assert Hierarchy.from_csv(comma).size(1) == 2


def test_csv_errors_name_the_problem(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a;A;*\nb;A;*\nc;A\n")
    with pytest.raises(HierarchyError, match="row 3 \\('c'\\) has 2 levels"):
        Hierarchy.from_csv(bad)
    non_tree = tmp_path / "nt.csv"
    non_tree.write_text("a;A;X\nb;A;Y\n")
    with pytest.raises(HierarchyError, match="not a tree: 'A' at level 1 has two parents at level 2: 'X' and 'Y'"):
        Hierarchy.from_csv(non_tree)
    twice = tmp_path / "tw.csv"
    twice.write_text("a;A\na;B\n")
    with pytest.raises(HierarchyError, match="lists the value 'a' twice"):
        Hierarchy.from_csv(twice)
    latin = tmp_path / "l.csv"
    latin.write_bytes("caf\xe9;*\n".encode("latin-1"))
    from crowdsafe.errors import InputError

    with pytest.raises(InputError, match="not UTF-8"):
        Hierarchy.from_csv(latin)


def test_leaf_codes_name_the_uncovered_value_and_match_types():
    h = Hierarchy.from_columns("age", pl.Series(["30", "40"]), [["*", "*"]])
    assert h.leaf_codes(pl.Series("age", [40, 30, 40])).tolist() == [1, 0, 1]
    with pytest.raises(HierarchyError, match="does not cover the value '50' of column 'age'"):
        h.leaf_codes(pl.Series("age", [30, 50]))
    with pytest.raises(HierarchyError, match="does not cover missing values"):
        h.leaf_codes(pl.Series("age", [30, None]))
    assert h.with_missing_leaf().leaf_codes(pl.Series("age", [30, None])).tolist() == [0, 2]


def test_with_missing_leaf_keeps_missing_apart_until_the_root():
    h = intervals("age", range(0, 20), widths=[10]).with_missing_leaf()
    assert h.to_rows()[-1] == ["?", "?", "*"]
    _check_tree(h)
    assert np.isnan(h.ranges(1)[list(h.labels[1]).index("?")]).all()


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(-500, 500), min_size=1, max_size=80, unique=True),
    base=st.integers(1, 7),
    factors=st.lists(st.integers(2, 4), min_size=0, max_size=3),
)
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_interval_nodes_contain_their_leaves(values, base, factors):
    widths = [base]
    for f in factors:
        widths.append(widths[-1] * f)
    h = intervals("v", values, widths=widths)
    _check_tree(h)
    leaves = np.asarray(h.leaves.to_list(), dtype=float)
    for level in range(1, len(widths) + 1):
        node = h.leaf_map(level)
        width = widths[level - 1]
        # every node of a width-w level covers values of one band only
        bands = np.floor(leaves / width)
        for j in range(h.size(level)):
            assert len(set(bands[node == j])) == 1
        low, high = h.ranges(level).T
        assert (low[node] <= leaves).all() and (leaves <= high[node]).all()
        assert h.leaf_counts(level).sum() == len(values)


# -- provenance: declared and observed hierarchies ---------------------------------------------------

SPECS = [{"widths": [5, 10]}, {"widths": [5, 10], "bottom": 20, "top": 60}, {"cuts": [[20, 40], [40]]},
         {"mask": 3}, {"flat": True}, {"fanout": [2, 2]}]


def _column(spec, values):
    if "mask" in spec:
        return pl.Series("x", [None if v is None else f"{v:05d}" for v in values], dtype=pl.String)
    return pl.Series("x", values, dtype=pl.Int64)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("values", [[30], [30, 31], [None], [30, 1_000_000_000_000], [7, 7, 7]])
def test_schema_builders_over_the_data_are_observed_and_as_high_as_their_specification(spec, values):
    """A builder applied to the column's values gives an ObservedHierarchy whose height and level
    names are the specification's whatever the values (none at all, one, an outlier): nothing
    public moves with a row."""
    from crowdsafe.data.builders import from_spec

    reference = from_spec(spec, _column(spec, [30, 45]), attribute="x")
    made = from_spec(spec, _column(spec, values), attribute="x")
    assert made.observed and reference.observed
    assert made.height == reference.height and made.level_names == reference.level_names
    assert made.value_local == ("fanout" not in spec)
    assert "leaves read from the data" in repr(made) and "30" not in repr(made)


def test_an_outlier_costs_nothing_to_band():
    """Bands are computed per value, not over a grid spanning the data (an outlier of 10^12 with
    width 5 would otherwise list 2 · 10^11 cut points)."""
    h = intervals("x", [3, 10**12], widths=[5, 10])
    assert h.to_rows() == [["3", "[0, 5)", "[0, 10)", "*"],
                           ["1000000000000", "[1000000000000, 1000000000005)", "[1000000000000, 1000000000010)",
                            "*"]]
    assert h.size(1) == 2


def test_lists_in_the_schema_are_declared():
    from crowdsafe.data.builders import from_spec

    column = pl.Series("x", ["a", "b"])
    assert not from_spec({"groups": [{"ab": ["a", "b", "c"]}]}, column, attribute="x").observed
    assert not from_spec({"fanout": [2], "order": ["a", "b", "c"]}, column, attribute="x").observed


def test_an_absorbing_hierarchy_publishes_an_unlisted_value_as_missing():
    h = Hierarchy.from_columns("c", pl.Series(["NL", "DE"]), [["EU", "EU"], ["*", "*"]])
    with pytest.raises(HierarchyError, match="does not cover the value 'XX'"):
        h.leaf_codes(pl.Series("c", ["NL", "XX"]))
    absorbing = h.absorbing()
    assert absorbing.size(0) == 3 and h.size(0) == 2  # the original is left as it was
    missing = absorbing.missing_leaf
    assert absorbing.leaf_codes(pl.Series("c", ["NL", "XX", None, "YY"])).tolist() == [0, missing, missing, missing]
    assert absorbing.labels[1][absorbing.parents[0][missing]] == "?"
    assert h.outside(pl.Series("c", ["YY", "NL", None, "XX", "YY"])).to_list() == ["XX", "YY"]
    assert absorbing.absorbing() is absorbing


def test_with_missing_leaf_leaves_the_original_untouched_and_keeps_the_kind():
    from crowdsafe.data.builders import observed_flat

    h = intervals("age", range(0, 5), widths=[5])
    before = h.leaves.to_list()
    h.with_missing_leaf()
    assert h.leaves.to_list() == before  # Series.extend works in place: the leaves must be copied
    observed = observed_flat(pl.Series("x", [1, 2]))
    assert observed.with_missing_leaf().observed and observed.absorbing().observed


def test_provenance_survives_a_pickle():
    import pickle

    from crowdsafe.data.builders import observed_flat

    observed = observed_flat(pl.Series("x", [1, 2])).absorbing()
    again = pickle.loads(pickle.dumps(observed))
    assert again.observed and again.absorbs_outside and again == observed


@pytest.mark.parametrize("build, said", [
    (lambda: intervals("x", [1, 2], cuts=[50, 10]), "cuts must be a list of lists"),
    (lambda: intervals("x", [1, 2], cuts="18,30"), "cuts must be a list of lists"),
    (lambda: ordered_groups("x", [1, 2, 3], fanout=3), "fanout must be a list of whole numbers"),
    (lambda: ordered_groups("x", [1, 2, 3], fanout=[True]), "fan-out must be a whole number"),
    (lambda: masking("x", ["abc"], levels=10**9), "from 1 to 64"),
])
def test_a_builder_given_the_wrong_shape_names_it(build, said):
    """A schema's builder table of the wrong shape is a one-line HierarchyError, never a TypeError
    from deep inside, nor (for a mask a billion levels deep) the machine's memory."""
    with pytest.raises(HierarchyError, match=said):
        build()
