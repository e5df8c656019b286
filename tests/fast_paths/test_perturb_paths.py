"""The α-β algorithm's fast paths against their reference twins.

- estimator.subset_counts: a dense bincount of the whole grid (≤ DENSE_GRID_LIMIT cells) or a hash
  group-by of the cells present: the same counts, the dense one with the zeros;
- stages.insert_indices: rejection (:func:`_uniform_distinct`, count ≤ _DENSE_SHARE x available)
  or drawing the complement (:func:`_uniform_distinct_by_complement`). Randomized and consuming
  randomness differently, so compared in distribution: with fixed seeds, each twin's inclusion
  counts pass a chi-square test of uniformity and the two a chi-square test of homogeneity, at
  p > 1e-3, on both sides of the switch.

(stages.binomial's twins, popcount and rejection, are tested in tests/mechanisms/test_exact_binomial.py.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crowdsafe.perturb import estimator, stages
from crowdsafe.randomness import Randomness

P_FLOOR = 1e-3


@st.composite
def coded_columns(draw):
    sizes = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    n = draw(st.integers(0, 40))
    return [np.array(draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)), dtype=np.int64)
            for s in sizes], sizes


@settings(max_examples=150, deadline=None)
@given(coded_columns())
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_dense_and_sparse_counts_agree(case):
    codes, sizes = case
    key = codes[0]
    for column, size in zip(codes[1:], sizes[1:]):
        key = key * size + column
    cells, counts = estimator._counts_dense(key, int(np.prod(sizes)))
    present = counts > 0
    sparse_cells, sparse_counts = estimator._counts_sparse(key)
    assert sparse_cells.tolist() == cells[present].tolist()
    assert sparse_counts.tolist() == counts[present].tolist()


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_subset_counts_switch_at_dense_grid_limit(monkeypatch, shift):
    rng = np.random.default_rng(4)
    sizes = [3, 4, 5]  # 60 cells, 25 rows: some absent
    codes = [rng.integers(0, s, 25) for s in sizes]
    dense_cells, dense_counts = estimator.subset_counts(codes, sizes)
    monkeypatch.setattr(estimator, "DENSE_GRID_LIMIT", 60 + shift)
    cells, counts = estimator.subset_counts(codes, sizes)
    if shift >= 0:
        assert cells.tolist() == dense_cells.tolist() and counts.tolist() == dense_counts.tolist()
    else:
        present = dense_counts > 0
        assert cells.tolist() == dense_cells[present].tolist()
        assert counts.tolist() == dense_counts[present].tolist()


M = 24
EXISTING = np.array([0, 3, 7, 8, 15, 23], dtype=np.uint64)
FREE = np.setdiff1d(np.arange(M), EXISTING.astype(np.int64))  # 18 available: the switch at 9


def inclusion_counts(draw, count: int, seed: int, runs: int = 2000) -> np.ndarray:
    randomness = Randomness(seed)
    hits = np.zeros(M, dtype=np.int64)
    for _ in range(runs):
        drawn = draw(count, 0, M, EXISTING, randomness)
        assert len(drawn) == count and len(np.unique(drawn)) == count
        hits += np.bincount(drawn.astype(np.int64), minlength=M)
    assert hits[EXISTING.astype(np.int64)].sum() == 0
    return hits[FREE]


@pytest.mark.parametrize("count", [8, 9, 10])  # _DENSE_SHARE x 18 available = 9
def test_rejection_and_complement_draw_the_same_distribution(count):
    by_rejection = inclusion_counts(stages._uniform_distinct, count, 31)
    by_complement = inclusion_counts(stages._uniform_distinct_by_complement, count, 32)
    assert stats.chisquare(by_rejection).pvalue > P_FLOOR
    assert stats.chisquare(by_complement).pvalue > P_FLOOR
    table = np.vstack([by_rejection, by_complement])
    assert stats.chi2_contingency(table).pvalue > P_FLOOR


@pytest.mark.parametrize("count, twin", [(8, "_uniform_distinct"), (9, "_uniform_distinct"),
                                         (10, "_uniform_distinct_by_complement")])
def test_insert_indices_switches_at_the_dense_share(monkeypatch, count, twin):
    called = []
    original = getattr(stages, twin)
    monkeypatch.setattr(stages, twin, lambda *a: called.append(twin) or original(*a))
    stages.insert_indices(count, 0, M, EXISTING, Randomness(3))
    assert called[:1] == [twin]


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_indexed_and_per_attribute_insertions_draw_the_same_distribution():
    """A domain below perturb.domain.INDEX_LIMIT draws indices (insert_indices), a larger one
    draws each attribute's code (insert_tuples): on one small domain, the same distribution."""
    import polars as pl

    sizes = [3, 4, 2]  # index = c0·8 + c1·2 + c2, m = 24
    existing = EXISTING.astype(np.int64)
    frame = pl.DataFrame({"c0": existing // 8, "c1": (existing // 2) % 4, "c2": existing % 2}).cast(pl.UInt32)
    count, runs = 7, 800
    by_index = inclusion_counts(stages.insert_indices, count, 51, runs)
    randomness = Randomness(52)
    hits = np.zeros(M, dtype=np.int64)
    for _ in range(runs):
        drawn = stages.insert_tuples(count, sizes, frame, randomness)
        index = (drawn["c0"].to_numpy().astype(np.int64) * 8 + drawn["c1"].to_numpy() * 2 + drawn["c2"].to_numpy())
        assert len(np.unique(index)) == count
        hits += np.bincount(index, minlength=M)
    assert hits[existing].sum() == 0
    by_tuple = hits[FREE]
    assert stats.chisquare(by_tuple).pvalue > P_FLOOR
    assert stats.chi2_contingency(np.vstack([by_index, by_tuple])).pvalue > P_FLOOR
