"""The attacks' fast paths against their reference twins.

- intersection_tables._in_sorted: bitmap (universe ≤ DENSE_PAIRS) vs binary search (used by the
  candidate sets' sorted-key twin, forced here with value_masks.MASK_VALUES = 0);
- exact_location._join_children: direct tables (≤ DENSE_KEYS keys; a partition table when the keys are
  distinct, else a table of runs) vs binary search;
- exact_location._pair_order: one scatter (no tuple in two pairs) vs a sort of the pairs' keys;
- exact_location.walk: every table in one walk vs one walk each (each with its joins by direct
  tables or by binary search, and its columns of runs by ranges or by keys), against a
  specification written here;
- cell_ranks._text_ranks: Python's sort (≤ PYTHON_SORTED texts) vs Polars' dense rank.
Each twin is run on the same inputs, and the switch is moved (the constant patched to a small
value) so that the public attack runs on both sides of it.
"""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.attacks import cell_ranks, exact_location, intersection_attack, intersection_tables, locate, value_masks
from crowdsafe.data import Hierarchy


@st.composite
def keys_in_universe(draw):
    universe = draw(st.integers(1, 200))
    present = sorted(set(draw(st.lists(st.integers(0, universe - 1), min_size=1, max_size=60))))
    keys = draw(st.lists(st.integers(0, universe - 1), max_size=80))
    return np.array(keys, dtype=np.int64), np.array(present, dtype=np.int64), universe


@settings(max_examples=200, deadline=None)
@given(keys_in_universe())
def test_bitmap_and_binary_search_agree(case):
    keys, present, universe = case
    expected = np.isin(keys, present)
    assert (intersection_tables._in_sorted_by_bitmap(keys, present, universe) == expected).all()
    assert (intersection_tables._in_sorted_by_search(keys, present) == expected).all()


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_in_sorted_switches_at_dense_pairs(monkeypatch, shift):
    universe = 50
    rng = np.random.default_rng(7)
    present = np.unique(rng.integers(0, universe, 20))
    keys = rng.integers(0, universe, 100)
    monkeypatch.setattr(intersection_tables, "DENSE_PAIRS", universe + shift)
    assert (intersection_tables._in_sorted(keys, present, universe) == np.isin(keys, present)).all()


@st.composite
def join_case(draw, distinct: bool):
    n_keys = draw(st.integers(1, 40))
    if distinct:
        key = draw(st.lists(st.integers(0, n_keys - 1), unique=True, max_size=n_keys))
    else:
        key = draw(st.lists(st.integers(0, n_keys - 1), max_size=60))
    wanted = draw(st.lists(st.integers(0, n_keys - 1), max_size=60))
    key = np.array(key, dtype=np.int64)
    child = np.arange(len(key), dtype=np.int64)[::-1].copy()  # labels from 0, not in key order
    wanted = np.array(wanted, dtype=np.int64)
    pair_target = np.arange(len(wanted), dtype=np.int64) * 5 + 2
    return pair_target, wanted, key, child, n_keys


def join_reference(pair_target, wanted, key, child):
    """Each wanted key's children, a pair at a time (a Python loop: the specification)."""
    targets, children = [], []
    for t, w in zip(pair_target.tolist(), wanted.tolist()):
        for k, c in zip(key.tolist(), child.tolist()):
            if k == w:
                targets.append(t)
                children.append(c)
    return targets, children


def as_lists(pairs):
    return [a.tolist() for a in pairs]


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=200, deadline=None)
@given(join_case(distinct=False))
def test_join_by_runs_and_by_search_agree(case):
    pair_target, wanted, key, child, n_keys = case
    expected = list(join_reference(pair_target, wanted, key, child))
    counts = np.bincount(key, minlength=n_keys)
    assert as_lists(exact_location._join_by_search(pair_target, wanted, key, child, n_keys)) == expected
    assert as_lists(exact_location._join_by_runs(pair_target, wanted, key, child, counts)) == expected


@settings(max_examples=200, deadline=None)
@given(join_case(distinct=True))
def test_join_by_partition_agrees_on_distinct_keys(case):
    pair_target, wanted, key, child, n_keys = case
    expected = list(join_reference(pair_target, wanted, key, child))
    assert as_lists(exact_location._join_by_partition(pair_target, wanted, key, child, n_keys)) == expected
    assert as_lists(exact_location._join_by_search(pair_target, wanted, key, child, n_keys)) == expected


@st.composite
def located_pairs(draw):
    n_tuples, n_classes = draw(st.integers(1, 12)), draw(st.integers(1, 6))
    pairs = draw(st.lists(st.tuples(st.integers(0, n_tuples - 1), st.integers(0, n_classes - 1)), unique=True,
                          max_size=n_tuples * n_classes))
    one_each = draw(st.booleans())  # a strict partition: at most one class per tuple (the fast path)
    if one_each:
        pairs = list({t: (t, k) for t, k in pairs}.values())
    pairs = draw(st.permutations(pairs))
    tuples = np.array([t for t, _ in pairs], dtype=np.int64)
    classes = np.array([k for _, k in pairs], dtype=np.int64)
    return tuples, classes, n_tuples, n_classes


@settings(max_examples=200, deadline=None)
@given(located_pairs())
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_pair_order_by_scatter_and_by_sort_agree(case):
    tuples, classes, n_tuples, n_classes = case
    expected = sorted(range(len(tuples)), key=lambda i: (tuples[i], classes[i]))
    assert exact_location._pair_order(tuples, classes, n_tuples, n_classes).tolist() == expected
    assert exact_location._pair_order_by_sort(tuples, classes, n_tuples, n_classes).tolist() == expected


AGE_HIERARCHY = Hierarchy.from_columns("age", list(range(15, 81)), [["*"] * 66])
QUAD_HIERARCHY = Hierarchy.from_columns("zip", ["z1", "z2", "z3", "z4"],
                                        [["north", "north", "south", "south"], ["*"] * 4])


@st.composite
def walk_case(draw):
    def age_cell() -> str:
        low = draw(st.integers(15, 70))
        return draw(st.sampled_from([f"[{low}, {low + draw(st.integers(0, 10))}]", str(low), "*", "?"]))

    def zip_cell() -> str:
        chosen = sorted(draw(st.sets(st.sampled_from(["z1", "z2", "z3", "z4"]), min_size=1, max_size=3)))
        return draw(st.sampled_from([chosen[0], "north", "south", "*"] + (["{" + ", ".join(chosen) + "}"]
                                                                         if draw(st.booleans()) else [])))

    releases = []
    for _ in range(draw(st.integers(1, 3))):
        rows = [(age_cell(), zip_cell(), "x") for _ in range(draw(st.integers(1, 8)))]
        releases.append(pl.DataFrame(rows, schema={"age": pl.String, "zip": pl.String, "s": pl.String}, orient="row"))
    n = draw(st.integers(1, 12))
    targets = pl.DataFrame({"age": draw(st.lists(st.integers(15, 80), min_size=n, max_size=n)),
                            "zip": draw(st.lists(st.sampled_from(["z1", "z2", "z3", "z4"]), min_size=n, max_size=n))})
    return releases, targets, draw(st.booleans())


@pytest.mark.slow  # over a second (the quick loop: README)
@settings(max_examples=150, deadline=None)
@given(walk_case())
def test_walk_of_every_table_and_of_one_at_a_time_agree(case):
    releases, targets, age_leaves = case
    qi = ["age", "zip"]
    hierarchies = {"zip": QUAD_HIERARCHY, **({"age": AGE_HIERARCHY} if age_leaves else {})}
    tables = locate.class_tables(releases, qi, "s")
    domains, codes = locate.encode_targets(targets, qi, hierarchies)
    read = locate.read_tables(tables, qi, [domains[c] for c in qi])
    covers = [c for c, _ in read]
    tuple_of_target, n_tuples = locate.group_ids([codes[c] for c in qi], [domains[c].size for c in qi])
    first = np.array([int(np.flatnonzero(tuple_of_target == t)[0]) for t in range(n_tuples)])
    tuple_codes = {c: codes[c][first] for c in qi}
    expected = []  # the specification: every (tuple, class) whose cells all cover the tuple's codes
    for table, cover in zip(tables, covers):
        found = [(t, k) for t in range(n_tuples) for k in range(table.n_classes)
                 if all(tuple_codes[c][t] in cover[c].indices[cover[c].indptr[cell]: cover[c].indptr[cell + 1]]
                        for c in qi for cell in [table.cell_of_class[c][k]])]
        expected.append([[t for t, _ in found], [k for _, k in found]])
    for order in (qi, qi[::-1]):
        trie = exact_location.target_trie(tuple_codes, {c: domains[c].size for c in qi}, order)
        # ranges: by keys only, by ranges where the cells allow and they are cheaper, and by
        # ranges wherever the cells allow
        for dense, ranges, cheaper in [(1 << 24, False, None), (0, False, None), (1 << 24, True, None),
                                       (0, True, None), (1 << 24, True, True)]:
            with (patch.object(exact_location, "DENSE_KEYS", dense), patch.object(exact_location, "RANGES", ranges),
                  patch.object(exact_location, "_ranges_cheaper",
                               (lambda *_: True) if cheaper else exact_location._ranges_cheaper)):
                joint = exact_location.walk(exact_location.class_trie(tables, covers, order), trie)
                one = [exact_location.walk(exact_location.class_trie([t], [c], order), trie)[0]
                       for t, c in zip(tables, covers)]
            assert [as_lists(pairs) for pairs in joint] == expected, (order, dense, ranges, cheaper)
            assert [as_lists(pairs) for pairs in one] == expected, (order, dense, ranges, cheaper)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=4)), max_size=40))
def test_text_ranks_by_python_and_by_polars_agree(texts):
    series = pl.Series(texts, dtype=pl.String)
    order, n_ranks = cell_ranks._text_ranks_by_python(series)
    other, other_n = cell_ranks._text_ranks_by_polars(series)
    assert n_ranks == other_n
    assert order.tolist() == other.tolist()


# the public attack on both sides of each switch: a release with overlapping generalized cells
# (so several children per key: the table of runs), one with disjoint cells (the partition
# table), and targets located in both
ZIP_HIERARCHY = Hierarchy.from_columns("zip", ["13053", "13068", "14850", "14853"],
                                       [["130**", "130**", "148**", "148**"], ["*"] * 4])
RELEASES = [
    pl.DataFrame({"age": ["[20-29]", "[20-29]", "[30-39]", "[30-39]", "25", "*"],
                  "zip": ["130**", "130**", "148**", "14850", "13053", "148**"],
                  "s": ["flu", "cancer", "flu", "hiv", "cold", "cold"]}),
    pl.DataFrame({"age": ["[20-24]", "[25-29]", "[30-34]", "[35-39]"],
                  "zip": ["13053", "13068", "14850", "14853"],
                  "s": ["flu", "cold", "hiv", "flu"]}),
]
TARGETS = pl.DataFrame({"age": [22, 25, 31, 36, 38], "zip": ["13053", "13053", "14850", "14853", "14850"],
                        "s": ["flu", "cold", "hiv", "flu", "flu"]})


def attack() -> tuple[pl.DataFrame, dict]:
    result = intersection_attack(RELEASES, TARGETS, ["age", "zip"], "s", hierarchies={"zip": ZIP_HIERARCHY})
    return result.targets, result.summary


@pytest.mark.parametrize("name, limits", [
    ("DENSE_KEYS", [0, 3, 4, 5, 8, 13, 19, 20, 40]),  # the joins' key counts lie in 4..20
    ("LEAF_MASKS", [False, True]),  # the sensitive leaves as bits in the group-by, or listed
    ("DENSE_PAIRS", [0, 19, 20, 21]),  # 5 targets x 4 sensitive values = 20 pairs
    ("PYTHON_SORTED", [0, 15, 16, 17]),  # 16 distinct canonical cells
    ("RANGES", [False, True]),  # columns of runs walked by ranges, or by keys only
    ("RANGE_KEYS", [0, 3, 4, 14, 15, 16]),  # the targets' two levels have 4 and 15 keys: counted up to the limit
])
def test_attack_is_the_same_on_both_sides_of_the_switch(monkeypatch, name, limits):
    if name == "DENSE_PAIRS":  # the sorted keys' look-up: the candidate sets as keys, not masks
        monkeypatch.setattr(value_masks, "MASK_VALUES", 0)
    expected_targets, expected_summary = attack()
    module = {"DENSE_PAIRS": intersection_tables, "DENSE_KEYS": exact_location, "RANGES": exact_location,
              "RANGE_KEYS": exact_location, "PYTHON_SORTED": cell_ranks}.get(name, locate)
    for limit in limits:
        monkeypatch.setattr(module, name, limit)
        targets, summary = attack()
        assert targets.equals(expected_targets), (name, limit)
        assert summary == expected_summary, (name, limit)


def test_the_attack_walks_columns_of_runs_by_ranges(monkeypatch):
    """The fixture's cells are runs of codes (ranges, hierarchy nodes, '*'): the walk takes the
    by-ranges step on some column, and none once RANGES is off (the switch above is not idle)."""
    steps = []
    by_ranges = exact_location._by_ranges
    monkeypatch.setattr(exact_location, "_by_ranges", lambda *a: steps.append(1) or by_ranges(*a))
    attack()
    assert steps
    steps.clear()
    monkeypatch.setattr(exact_location, "RANGES", False)
    attack()
    assert not steps


def test_runs_and_counts_below():
    # cells: {1, 2, 3}, {}, {0}, {2, 4}: the last is no run
    size, first, indices = np.array([3, 0, 1]), np.array([0, 3, 3]), np.array([1, 2, 3, 0])
    low, high = exact_location._runs(size, first, indices)
    assert low.tolist() == [1, 0, 0] and high.tolist() == [3, -1, 0]
    assert exact_location._runs(np.array([3, 2]), np.array([0, 3]), np.array([1, 2, 3, 2, 4])) == (None, None)
    below = exact_location._keys_below(np.array([1, 4, 5]), 7)
    assert below.tolist() == [0, 0, 1, 1, 1, 2, 3, 3]
