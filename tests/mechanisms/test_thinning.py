"""mechanisms.thinning: a Bernoulli(p) sample of a table's rows drawn on its frequency table.

The law each cell must have is Binomial(c, p) (SciPy's pmf, never the code under test), cells
independent. Fixed seeds; a chi-square p-value below 1e-3 fails; a correlation's z-score must
stay within 4.5. Each path is forced in turn (a trial per row, one exact binomial per large
cell, chunks cut between cells), and a broken thinning must fail the same checks.
"""

from __future__ import annotations

import numpy as np
import pytest

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import thinning
from crowdsafe.randomness import Randomness
from statistics_helpers import binomial_fit_pvalue

P_FLOOR = 1e-3
Z_LIMIT = 4.5
SIZES = (1, 7, 300)
DRAWS = 3000


def _cells(sizes=SIZES, draws=DRAWS) -> np.ndarray:
    """``draws`` cells of each size, interleaved (so neighbouring cells differ in size)."""
    return np.tile(np.asarray(sizes, dtype=np.int64), draws)


def _check_law(kept: np.ndarray, counts: np.ndarray, p: float) -> None:
    for size in np.unique(counts):
        at = counts == size
        assert binomial_fit_pvalue(kept[at], int(size), p) > P_FLOOR, size
    # independence: neighbouring cells of the same size are uncorrelated
    same = kept[counts == 7]
    r = np.corrcoef(same[0::2][: len(same) // 2], same[1::2][: len(same) // 2])[0, 1]
    assert abs(r) * np.sqrt(len(same) // 2) < Z_LIMIT


@pytest.mark.parametrize("large_cell, chunk_rows", [
    (thinning.LARGE_CELL, thinning.CHUNK_ROWS),  # every cell by its rows' trials, one chunk
    (5, thinning.CHUNK_ROWS),  # cells of 7 and 300 rows: one exact binomial each
    (thinning.LARGE_CELL, 100),  # many chunks; a 300-row cell is a chunk of its own
])
@pytest.mark.parametrize("p", [0.3, 0.593])
def test_each_cell_is_binomial_and_independent(monkeypatch, large_cell, chunk_rows, p):
    monkeypatch.setattr(thinning, "LARGE_CELL", large_cell)
    monkeypatch.setattr(thinning, "CHUNK_ROWS", chunk_rows)
    counts = _cells()
    kept = thinning.thinned_counts(Randomness(11), counts, p)
    assert kept.dtype == np.int64 and np.all((0 <= kept) & (kept <= counts))
    _check_law(kept, counts, p)


def test_the_reference_twin_has_the_same_law_and_the_same_draws_without_large_cells():
    counts = _cells()
    by_rows = thinning.thinned_counts_by_rows(Randomness(12), counts, 0.3)
    _check_law(by_rows, counts, 0.3)
    # no cell above LARGE_CELL: the fast path draws exactly what the twin draws
    np.testing.assert_array_equal(thinning.thinned_counts(Randomness(12), counts, 0.3), by_rows)


def test_a_large_cell_has_the_binomial_mean_and_variance():
    """Cells of 10^6 rows (one exact binomial each): mean and variance of 400 draws within 4.5
    standard errors of n·p and n·p·(1 − p)."""
    n, p, draws = 1_000_000, 0.593, 400
    kept = thinning.thinned_counts(Randomness(13), np.full(draws, n), p)
    mean, variance = n * p, n * p * (1 - p)
    assert abs(kept.mean() - mean) / np.sqrt(variance / draws) < Z_LIMIT
    assert abs(kept.var(ddof=1) - variance) / (variance * np.sqrt(2 / (draws - 1))) < Z_LIMIT


def test_the_checks_reject_a_broken_thinning(monkeypatch):
    """Broken on purpose: one trial decides a whole cell (all its rows kept or none), and a large
    cell's count rounded to its mean. The same checks fail."""
    counts = _cells()
    rows_kept_together = counts * Randomness(14).bernoulli(len(counts), 0.3)
    with pytest.raises(AssertionError):
        _check_law(rows_kept_together, counts, 0.3)
    monkeypatch.setattr(thinning, "LARGE_CELL", 5)
    monkeypatch.setattr(thinning, "binomial", lambda generator, n, p: round(n * p))
    with pytest.raises(AssertionError):
        _check_law(thinning.thinned_counts(Randomness(14), counts, 0.3), counts, 0.3)


def test_edges_and_refusals():
    counts = np.array([0, 3, 0, 5000, 1], dtype=np.int64)
    np.testing.assert_array_equal(thinning.thinned_counts(Randomness(1), counts, 1.0), counts)
    np.testing.assert_array_equal(thinning.thinned_counts(Randomness(1), counts, 0.0), np.zeros(5, dtype=np.int64))
    kept = thinning.thinned_counts(Randomness(1), counts, 0.5)
    assert kept[0] == kept[2] == 0 and np.all(kept <= counts)
    np.testing.assert_array_equal(kept, thinning.thinned_counts(Randomness(1), counts, 0.5))  # seeded: reproducible
    assert len(thinning.thinned_counts(Randomness(1), np.zeros(0, dtype=np.int64), 0.5)) == 0
    for p in (-0.1, 1.5, float("nan"), True):
        with pytest.raises(ParameterError):
            thinning.thinned_counts(Randomness(1), counts, p)
    for bad in (np.array([1.5]), np.array([-1]), np.ones((2, 2), dtype=np.int64)):
        with pytest.raises(ParameterError):
            thinning.thinned_counts(Randomness(1), bad, 0.5)
