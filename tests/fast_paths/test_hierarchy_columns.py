"""``Hierarchy.from_columns``'s fast paths (a ``str`` or ``int`` labelled inline; a level of one
label, a root, numbered without sorting its labels) against its reference twin: the labelling
and numbering before them (every value through ``_label``, every level through NumPy text and
``np.unique``), on label columns mixing text, integers, booleans, floats, missing values, NumPy
integers and a text subclass, constant or not, with and without a NUL (which NumPy's text drops
at the end, so a constant label holding one takes the sorting path). The same labels, parents
and refusals."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crowdsafe.data.hierarchy as hierarchy
from crowdsafe.data.hierarchy import Hierarchy, _label
from crowdsafe.errors import HierarchyError


class Text(str):
    def __str__(self) -> str:
        return f"<{str.__str__(self)}>"


LABELS = ["*", "a", "a\x00", "1", "True", 1, 0, True, False, 1.0, 2.5, -0.0, None, np.int64(1), Text("a")]


def _reference(leaves: pl.Series, levels: list[list]) -> tuple[list[list[str]], list[list[int]]]:
    """The labels and parents as from_columns numbered them before its fast paths."""
    ids = [np.arange(len(leaves), dtype=np.uint32)]
    labels = [[_label(v) for v in leaves.to_list()]]
    for level in levels:
        column = np.asarray([_label(v) for v in level], dtype=object).astype(str)
        uniques, first, inverse = np.unique(column, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        renumber = np.empty(len(order), dtype=np.uint32)
        renumber[order] = np.arange(len(order), dtype=np.uint32)
        ids.append(renumber[inverse.ravel()])
        labels.append([str(x) for x in uniques[order]])
    parents = []
    for depth in range(len(ids) - 1):
        child, parent = ids[depth], ids[depth + 1]
        table = np.full(len(labels[depth]), np.iinfo(np.uint32).max, dtype=np.uint32)
        table[child[::-1]] = parent[::-1]
        if np.any(table[child] != parent):
            return labels, []  # not a tree: refused
        parents.append(table.tolist())
    return labels, parents


def _built(leaves: pl.Series, levels: list[list]) -> tuple[list[list[str]], list[list[int]]]:
    try:
        made = Hierarchy.from_columns("c", leaves, levels)
    except HierarchyError as exc:
        assert "is not a tree" in str(exc)
        return [], []
    return [list(level) for level in made.labels], [p.tolist() for p in made.parents]


@st.composite
def _columns(draw) -> tuple[pl.Series, list[list]]:
    n = draw(st.integers(1, 12))
    leaves = pl.Series("c", draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n, unique=True)))
    levels = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):  # one label for every leaf (the fast path, or NUL: not)
            levels.append([draw(st.sampled_from(LABELS))] * n)
        else:
            levels.append(draw(st.lists(st.sampled_from(LABELS), min_size=n, max_size=n)))
    return leaves, levels


@settings(max_examples=200, deadline=None)
@given(columns=_columns())
def test_from_columns_numbers_the_labels_as_its_twin(columns):
    leaves, levels = columns
    labels, parents = _reference(leaves, levels)
    assert _built(leaves, levels) == ((labels, parents) if parents else ([], []))  # ([], []): refused


@pytest.mark.parametrize("leaves", [["x", "y", None], [3, 1, 2], [1.5, 2.0, None], [True, False]])
def test_a_flat_hierarchy_as_its_twin(leaves):
    series = pl.Series("c", leaves)
    levels = [["*"] * len(leaves)]
    assert _built(series, levels) == _reference(series, levels)


def test_the_twin_comparison_fails_on_a_constant_label_with_a_nul_taken_whole(monkeypatch):
    """Broken variant: the one-label path taken for a label ending in NUL (NumPy's text, and so
    the reference, drops the NUL): the labels differ."""
    def careless(labels):
        if labels.count(labels[0]) == len(labels):
            return np.zeros(len(labels), dtype=np.uint32), [labels[0]]
        raise AssertionError("not reached")

    monkeypatch.setattr(hierarchy, "_first_appearance_ids", careless)
    series, levels = pl.Series("c", [1, 2]), [["a\x00", "a\x00"]]
    assert _built(series, levels) != _reference(series, levels)
