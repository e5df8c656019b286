"""The distinct canonical cells of the columns of a release's classes, and each cell's rank.

Two spellings of one cell ('[25,34]' and '[25, 34]') are one cell: every distinct (column,
text) is rewritten canonically once (:func:`~crowdsafe.data.cell_reader.canonical_texts`), and
each column's distinct canonical cells are sorted in code point order, the missing cell last, so
that classes are numbered in the order of their cells (:func:`crowdsafe.attacks.locate.class_tables`).
The ranks of the texts have a fast path in Python (a few hundred texts: cheaper than a Polars
call) and a reference twin by Polars' dense rank (tests/fast_paths/test_attack_lookups.py).
Attack code: it reads releases, carries no guarantee of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import polars as pl

from crowdsafe.anonymize.cells import first_of_each
from crowdsafe.data.arrays import unique_inverse
from crowdsafe.data.cell_reader import canonical_texts, categorical_ids, cell_text

PYTHON_SORTED = 5_000  # distinct canonical cells ranked in Python up to this many, else by Polars


def canonical_ranks(columns: Sequence[pl.Series]) -> list[tuple[np.ndarray, pl.Series]]:
    """Per column of cells: the column's distinct canonical cells, sorted (missing last), and
    each cell's rank among them; for all columns at once (their cells written as text, each
    distinct (column, text) made canonical once). Up to ``PYTHON_SORTED`` distinct canonical
    texts are sorted in Python (code point order, the byte order Polars sorts UTF-8 text in:
    cheaper than a Polars call for a few hundred), more by Polars. The texts are told apart by
    the categorical ids of one cast of them all (equal texts, equal ids): one cast here costs
    less than one per column in the group-bys (docs/performance.md, round 19 of the attack)."""
    written = [cell_text(column) for column in columns]
    lengths = np.array([len(w) for w in written], dtype=np.int64)
    n_groups = len(written)
    group = np.repeat(np.arange(n_groups, dtype=np.int64), lengths)
    texts = pl.concat(written)
    every_id = categorical_ids(texts) + 1  # (the missing cell: 0)
    span = int(every_id.max(initial=0)) + 1
    distinct, code = unique_inverse(group * span + every_id, n_groups * span)  # distinct (group, text)
    canonical = canonical_texts(texts[first_of_each(code, len(distinct))])
    # each distinct text's rank among them all, the missing cell last
    order, n_ranks = _text_ranks(canonical)
    pairs, pair_of = unique_inverse((distinct // span) * n_ranks + order, n_groups * n_ranks)
    bounds = np.searchsorted(pairs // n_ranks, np.arange(n_groups + 1))
    cells = canonical[first_of_each(pair_of, len(pairs))]
    rank = (pair_of - bounds[distinct // span])[code]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return [(rank[offsets[g]: offsets[g + 1]], cells.slice(bounds[g], bounds[g + 1] - bounds[g]))
            for g in range(n_groups)]


def _text_ranks(texts: pl.Series) -> tuple[np.ndarray, int]:
    """Each text's dense rank among the distinct ``texts`` (code point order, the missing cell
    last) and the number of ranks (the distinct texts + 1 for the missing cell).

    Fast path :func:`_text_ranks_by_python` up to :data:`PYTHON_SORTED` texts (cheaper than a
    Polars call for a few hundred), else its reference twin :func:`_text_ranks_by_polars`."""
    if len(texts) <= PYTHON_SORTED:
        return _text_ranks_by_python(texts)
    return _text_ranks_by_polars(texts)


def _text_ranks_by_python(texts: pl.Series) -> tuple[np.ndarray, int]:
    """:func:`_text_ranks` by Python's sort (code point order, which is the byte order Polars
    sorts UTF-8 text in)."""
    listed = texts.to_list()
    ordered = sorted({text for text in listed if text is not None})
    rank_of = {text: rank for rank, text in enumerate(ordered)}
    n_ranks = len(ordered) + 1
    return np.array([rank_of.get(text, n_ranks - 1) for text in listed], dtype=np.int64), n_ranks  # missing: last


def _text_ranks_by_polars(texts: pl.Series) -> tuple[np.ndarray, int]:
    """:func:`_text_ranks` by Polars' dense rank (many distinct texts: centroids, say)."""
    dense = texts.rank("dense").cast(pl.Int64)
    n_ranks = int(cast("int | None", dense.max()) or 0) + 1
    return dense.fill_null(n_ranks).to_numpy() - 1, n_ranks
