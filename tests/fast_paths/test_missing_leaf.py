"""Hierarchy.with_missing_leaf appends the missing-value leaf and its ``?`` nodes to the arrays
where that is sure to give what rebuilding the hierarchy from its label columns gives
(``_missing_leaf_by_columns``, the twin): the same leaves, labels, parents, level names and flags,
on hierarchies of every kind the library builds, and on the cases the fast path leaves to the twin."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import flat, intervals
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.datasets import adult
from crowdsafe.errors import HierarchyError


def _same(a: Hierarchy, b: Hierarchy) -> bool:
    return (a.name == b.name and a.leaves.to_list() == b.leaves.to_list() and a.leaves.dtype == b.leaves.dtype
            and a.labels == b.labels and len(a.parents) == len(b.parents)
            and all(np.array_equal(x, y) for x, y in zip(a.parents, b.parents))
            and a.level_names == b.level_names and a.value_local == b.value_local
            and a.absorbs_outside == b.absorbs_outside)


def _both(h: Hierarchy) -> tuple[Hierarchy | None, Hierarchy]:
    return h._missing_leaf_appended(), h._missing_leaf_by_columns()


def test_adults_hierarchies_take_the_fast_path_and_match():
    for name, h in adult().hierarchies.items():
        if h.leaves.null_count():
            continue
        fast, twin = _both(h)
        assert fast is not None, name
        assert _same(fast, twin), name
        assert _same(h.with_missing_leaf(), twin)


@settings(max_examples=80, deadline=None)
@given(leaves=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "?", "*"]), min_size=1, max_size=6, unique=True),
       groups=st.lists(st.integers(0, 2), min_size=6, max_size=6), two_roots=st.booleans(), level_name=st.booleans())
def test_declared_hierarchies_match_the_rebuilt_ones(leaves, groups, two_roots, level_name):
    """Groups (labels G0..G2, or ``?``), then a root (``*``, or two top nodes): whichever path
    with_missing_leaf takes, it is the twin's hierarchy."""
    middle = ["?" if g == 2 else f"G{g}" for g in groups[:len(leaves)]]
    top = [("T" + m[-1]) if two_roots else "*" for m in middle]
    names = ["value", "group", "top"] if level_name else None
    try:
        h = Hierarchy.from_columns("c", pl.Series("c", leaves), [middle, top], names)
    except Exception:  # not a tree (a group under two tops): nothing to compare
        return
    try:
        twin = h._missing_leaf_by_columns()
    except HierarchyError as refused:  # a '?' node already under another parent: refused either way
        assert h._missing_leaf_appended() is None
        with pytest.raises(HierarchyError, match=str(refused).split(":")[0]):
            h.with_missing_leaf()
        return
    fast = h._missing_leaf_appended()
    assert fast is None or _same(fast, twin)
    assert _same(h.with_missing_leaf(), twin)


@pytest.mark.parametrize("made", [
    lambda: intervals("age", range(17, 91), widths=[5, 10, 20]),
    lambda: flat("sex", ["Female", "Male"]),
    lambda: Hierarchy.from_columns("n", pl.Series("n", [3.0, 1.5, 2.0]), [["low", "low", "high"], ["*"] * 3]),
])
def test_numeric_and_flat_hierarchies_match(made):
    h = made()
    fast, twin = _both(h)
    assert fast is not None and _same(fast, twin)


def test_nodes_not_numbered_by_first_appearance_go_to_the_twin():
    """Parents that number the level's nodes in another order than the leaves first meet them:
    the columns would renumber them, so the fast path steps aside (and a fast path that did not
    would differ: the check can fail)."""
    h = Hierarchy("c", pl.Series("c", ["a", "b"]), [["a", "b"], ["Y", "X"], ["*"]],
                  [np.array([1, 0], dtype=np.uint32), np.array([0, 0], dtype=np.uint32)])
    fast, twin = _both(h)
    assert fast is None and _same(h.with_missing_leaf(), twin)
    forced = Hierarchy("c", pl.concat([h.leaves, pl.Series("c", [None], dtype=pl.String)]),
                       [["a", "b", "?"], ["Y", "X", "?"], ["*"]],
                       [np.array([1, 0, 2], dtype=np.uint32), np.array([0, 0, 0], dtype=np.uint32)])
    assert not _same(forced, twin)
