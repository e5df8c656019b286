"""Bernoulli(p) sampling of a table's rows, drawn on its frequency table (binomial thinning).

A table reduced to its frequency table (distinct tuples, each with its count c) and sampled row
by row, every row kept independently with probability p, keeps in each cell the number of
successes among its c rows' independent Bernoulli(p) trials: Binomial(c, p), independently of
every other cell (their rows are other rows). The rows of one cell are the same tuple, so the
sample's frequency table is everything a row-level draw decides about the counted columns.
:func:`thinned_counts` draws that table directly, with the same law, exactly:

- a cell of at most ``LARGE_CELL`` rows draws its rows' trials, one exact Bernoulli(p) per row
  (:meth:`crowdsafe.randomness.Randomness.bernoulli`, exact for the float p), and keeps their
  sum; cells are taken in the order given, in chunks of whole cells of at most ``CHUNK_ROWS``
  rows (the trials of a chunk are one vectorised draw);
- a larger cell draws one exact Binomial(c, p) (:func:`crowdsafe.mechanisms.binomial.binomial`:
  about log2 c + 2 fair binomials, not c words).

Either way the cell's count is Binomial(c, p) exactly and the cells are independent (disjoint
parts of one stream), so the output's law is that of counting a row-level Bernoulli(p) sample;
:func:`thinned_counts_by_rows` (every cell by its rows' trials) is the reference twin the tests
compare it with. A seeded run is reproducible for the same cells in the same order; its draws are
not those of a row mask over the table, which reads the stream in row order.

Cost: one 64-bit word per row of the small cells, a few per large cell; no loop over rows in
Python (a loop over the large cells, at most n / ``LARGE_CELL`` of them). It reads no data beyond
the counts given and knows nothing of privacy beyond the law above.
"""

from __future__ import annotations

import numpy as np

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.binomial import binomial
from crowdsafe.randomness import Randomness

#: Cells of more rows than this draw one exact binomial instead of a trial per row.
LARGE_CELL = 4096
#: Rows whose trials are drawn at once (whole cells; memory: 9 bytes per row while drawn).
CHUNK_ROWS = 1 << 22

__all__ = ["CHUNK_ROWS", "LARGE_CELL", "thinned_counts", "thinned_counts_by_rows"]


def thinned_counts(randomness: Randomness, counts: np.ndarray, p: float) -> np.ndarray:
    """Each cell's count of a Bernoulli(p) sample of the rows the ``counts`` stand for (module
    docstring): int64, aligned with ``counts`` (whole numbers ≥ 0); p = 1 keeps every row."""
    counts = _checked(counts, p)
    if p == 1.0:
        return counts.copy()
    return _thinned(randomness, counts, p, LARGE_CELL)


def thinned_counts_by_rows(randomness: Randomness, counts: np.ndarray, p: float) -> np.ndarray:
    """:func:`thinned_counts`' reference twin: every cell by its rows' Bernoulli(p) trials."""
    counts = _checked(counts, p)
    if p == 1.0:
        return counts.copy()
    return _thinned(randomness, counts, p, None)


def _checked(counts: np.ndarray, p: float) -> np.ndarray:
    if isinstance(p, bool) or not isinstance(p, (float, int, np.floating)) or not 0.0 <= float(p) <= 1.0:
        raise ParameterError(f"a sampling probability must lie in [0, 1], got {p!r}")
    values = np.asarray(counts)
    if values.ndim != 1 or (values.size and (values.dtype.kind not in "iu" or int(values.min()) < 0)):
        raise ParameterError("cell counts are a one-dimensional array of whole numbers >= 0")
    return values.astype(np.int64, copy=False)


def _thinned(randomness: Randomness, counts: np.ndarray, p: float, large: int | None) -> np.ndarray:
    kept = np.zeros(len(counts), dtype=np.int64)
    by_rows = np.flatnonzero((counts > 0) if large is None else ((counts > 0) & (counts <= large)))
    if len(by_rows):
        sizes = counts[by_rows]
        ends = np.cumsum(sizes)
        start = 0  # the first cell of the chunk
        while start < len(by_rows):
            before = int(ends[start - 1]) if start else 0
            # whole cells up to CHUNK_ROWS rows (at least one cell, whatever its size)
            stop = max(int(np.searchsorted(ends, before + CHUNK_ROWS, side="right")), start + 1)
            trials = randomness.bernoulli(int(ends[stop - 1]) - before, float(p)).view(np.uint8)
            offsets = np.concatenate([[0], ends[start:stop - 1] - before])
            kept[by_rows[start:stop]] = np.add.reduceat(trials, offsets, dtype=np.int64)
            start = stop
    if large is not None:
        for cell in np.flatnonzero(counts > large):
            kept[cell] = binomial(randomness.generator, int(counts[cell]), float(p))
    return kept
