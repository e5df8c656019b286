"""The anonymizers' table fast paths against their reference twins.

- cells.dense_ids: packed keys ranked by a bit table (span ≤ 2n + 2^16), by NumPy's unique
  (≤ DENSE_BY_NUMPY rows) or by Polars' dense rank;
- objectives.classification_block_bound: a dense (G', y) array (≤ DENSE_CELLS_PER_ROW cells per
  row) or the (G', y) that occur.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.anonymize import cells
from crowdsafe.selection import score as objectives


@st.composite
def packed_columns(draw):
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    n = draw(st.integers(1, 60))
    columns = [np.array(draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)), dtype=np.int64)
               for s in sizes]
    return columns, sizes


def reference_ids(columns):
    tuples = list(zip(*[c.tolist() for c in columns]))
    rank = {t: i for i, t in enumerate(sorted(set(tuples)))}
    return [rank[t] for t in tuples], len(rank)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(packed_columns())
def test_table_numpy_and_polars_ranks_agree(case):
    columns, sizes = case
    expected = reference_ids(columns)
    key = cells.packing.pack(columns, sizes, np.uint64)
    span = int(cells.packing.span(sizes))
    for ids, m in (cells._ids_by_table(key.astype(np.int64), span), cells._ids_by_numpy(key, span),
                   cells._ids_by_polars(key)):
        assert (ids.tolist(), m) == expected
        assert ids.dtype == np.int64


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_dense_ids_switches_at_dense_by_numpy(monkeypatch, shift):
    rng = np.random.default_rng(5)
    n = 300  # a span of 2^30, far above 2n + 2^16: ranked by a sort
    columns = [rng.integers(0, 4, n) * 8000, rng.integers(0, 5, n) * 6000]  # repeated tuples
    expected = reference_ids(columns)
    monkeypatch.setattr(cells, "DENSE_BY_NUMPY", n + shift)
    ids, m = cells.dense_ids(columns, [1 << 15, 1 << 15])
    assert (ids.tolist(), m) == expected


@st.composite
def block_tables(draw):
    """A classification table: rows (F, y) with F's rows contiguous, each F inside one G'."""
    target_values = draw(st.integers(1, 5))
    coarse_count = draw(st.integers(1, 6))
    counts, targets, fine_starts, coarse_of_row = [], [], [], []
    for _ in range(draw(st.integers(1, 12))):
        fine_starts.append(len(counts))
        g = draw(st.integers(0, coarse_count - 1))
        ys = sorted(draw(st.sets(st.integers(0, target_values - 1), min_size=1)))
        for y in ys:
            counts.append(draw(st.integers(1, 9)))
            targets.append(y)
            coarse_of_row.append(g)
    k = draw(st.integers(1, 6))
    as_array = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    return as_array(counts), as_array(targets), as_array(fine_starts), as_array(coarse_of_row), coarse_count, \
        target_values, k


@settings(max_examples=150, deadline=None)
@given(block_tables())
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_dense_and_sparse_block_bounds_agree(table):
    counts, targets, fine_starts, coarse_of_row, coarse_count, target_values, k = table
    majority = objectives.exact_sums(coarse_of_row[fine_starts], np.maximum.reduceat(counts, fine_starts),
                                     coarse_count)
    pair = coarse_of_row * target_values + targets
    args = (pair, counts, majority, coarse_count, target_values, k)
    assert objectives._block_bound_dense(*args) == objectives._block_bound_sparse(*args)


@settings(max_examples=100, deadline=None)
@given(block_tables(), st.integers(-1, 1))
def test_block_bound_is_the_same_on_both_sides_of_the_switch(table, shift):
    counts, targets, fine_starts, coarse_of_row, coarse_count, target_values, k = table
    args = (counts, targets, fine_starts, coarse_of_row, coarse_count, target_values, k)
    expected = objectives.classification_block_bound(*args)
    cells_per_row = coarse_count * target_values / len(counts)  # the rule's ratio on this table
    old = objectives.DENSE_CELLS_PER_ROW
    try:
        objectives.DENSE_CELLS_PER_ROW = max(cells_per_row + shift, 0)
        assert objectives.classification_block_bound(*args) == expected
    finally:
        objectives.DENSE_CELLS_PER_ROW = old
