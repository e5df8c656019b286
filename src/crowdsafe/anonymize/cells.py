"""The cell table: the distinct tuples of some encoded columns, with how many rows hold each.

Anonymization algorithms work on cells, never on rows: Adult's 30,162 complete rows hold
18,109 distinct tuples of its 8 quasi-identifiers, and a million synthetic rows about 200,000.
Rows are touched twice only: once to find their cell (:func:`cell_table`), once to map them
through the chosen recoding (:func:`crowdsafe.anonymize.apply.apply`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from crowdsafe.data import Dataset, packing
from crowdsafe.data.arrays import unique_inverse
from crowdsafe.errors import EMPTY_TABLE, SchemaError

# up to this many rows one NumPy sort (arrays.unique_inverse) ranks packed keys faster than
# Polars' dense rank; beyond, Polars ranks on several threads and wins (random 40-bit keys on
# 2 cores: 5.0 against 5.6 ms at 150k rows, 9.1 against 7.5 ms at 200k, 29 against 21 ms at 512k)
DENSE_BY_NUMPY = 1 << 17


def dense_ids(columns: Sequence[np.ndarray], sizes: Sequence[int]) -> tuple[np.ndarray, int]:
    """Group ids (0..m-1, in lexicographic order of the tuples) of rows of integer ``columns``.

    ``sizes[j]`` bounds the values of column j (all values lie in ``[0, sizes[j])``). Columns are
    packed into one 64-bit key when the product of the sizes allows it (ranked through a table of
    every possible key when there are at most 2n + 2^16, :func:`_ids_by_table`; else by one sort:
    NumPy's for up to ``DENSE_BY_NUMPY`` rows, :func:`_ids_by_numpy`, Polars' beyond,
    :func:`_ids_by_polars`: the same ids), else grouped by Polars over the columns.
    Returns (ids as int64, number of groups).
    """
    n = len(columns[0]) if columns else 0
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    span = packing.span(sizes)
    if span <= 2 * n + (1 << 16):  # few possible tuples: rank them by a bit table, no sort
        return _ids_by_table(packing.pack(columns, sizes), int(span))
    if span < 2.0**63:
        key = packing.pack(columns, sizes, np.uint64)
        if n <= DENSE_BY_NUMPY:
            return _ids_by_numpy(key, int(span))
        return _ids_by_polars(key)
    frame = pl.DataFrame({f"c{j}": values for j, values in enumerate(columns)})  # wider than 64 bits
    ids = frame.select(pl.struct(pl.all()).rank("dense")).to_series().to_numpy().astype(np.int64) - 1
    return ids, int(ids.max()) + 1


def _ids_by_table(key: np.ndarray, span: int) -> tuple[np.ndarray, int]:
    """:func:`dense_ids` of packed keys below ``span`` by a bit table of every possible key."""
    present = np.zeros(span, dtype=bool)
    present[key] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    return rank[key], int(rank[-1]) + 1


def _ids_by_numpy(key: np.ndarray, span: int) -> tuple[np.ndarray, int]:
    """:func:`dense_ids` of packed keys below ``span`` by one NumPy sort
    (:func:`crowdsafe.data.arrays.unique_inverse`: radix passes or keys packed with their
    positions; half the time of ``np.unique``'s argsort at 100k keys)."""
    keys, ids = unique_inverse(key, span)
    return ids, len(keys)


def _ids_by_polars(key: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`dense_ids` of packed keys by Polars' dense rank (on several threads)."""
    ids = pl.Series(key).rank("dense").to_numpy().astype(np.int64) - 1
    return ids, int(ids.max()) + 1


def first_of_each(ids: np.ndarray, m: int) -> np.ndarray:
    """For each group id in 0..m-1, the index of one row holding it."""
    where = np.empty(m, dtype=np.int64)
    where[ids] = np.arange(len(ids), dtype=np.int64)
    return where


@dataclass(frozen=True)
class EncodedCells:
    """Distinct tuples of ``columns`` (plus the sensitive attribute, when one is given).

    ``codes[:, j]`` are the data layer's codes of ``columns[j]`` (leaf codes when the column has
    a hierarchy); ``counts`` the rows per cell; ``sensitive`` the sensitive attribute's code per
    cell (None without one); ``row_cell`` the cell of every row. Cells are sorted by their
    tuple of codes (lexicographically, sensitive code last), so the table does not depend on
    row order.
    """

    columns: tuple[str, ...]
    codes: np.ndarray  # (m, d) int64
    counts: np.ndarray  # (m,) int64
    sensitive: np.ndarray | None  # (m,) int64
    sensitive_name: str | None
    row_cell: np.ndarray  # (n,) int64

    @property
    def n_cells(self) -> int:
        return len(self.counts)

    @property
    def n_rows(self) -> int:
        return len(self.row_cell)


def cell_table(dataset: Dataset, columns: Sequence[str], sensitive: str | None = None) -> EncodedCells:
    """Build the :class:`EncodedCells` of ``columns`` (and ``sensitive``) of ``dataset``."""
    columns = tuple(columns)
    if not columns:
        raise SchemaError("no quasi-identifiers to anonymize; name them with qi=[...]", parameter="qi")
    if dataset.n_rows == 0:
        raise SchemaError("the data has no rows" + EMPTY_TABLE)
    names = list(columns) + ([sensitive] if sensitive is not None else [])
    encoded = [dataset.encoded(name) for name in names]
    ids, m = dense_ids([e.codes for e in encoded], [e.cardinality for e in encoded])
    where = first_of_each(ids, m)
    codes = np.column_stack([e.codes[where].astype(np.int64) for e in encoded])
    counts = np.bincount(ids, minlength=m).astype(np.int64)
    return EncodedCells(
        columns=columns,
        codes=np.ascontiguousarray(codes[:, : len(columns)]),
        counts=counts,
        sensitive=codes[:, -1].copy() if sensitive is not None else None,
        sensitive_name=sensitive,
        row_cell=ids,
    )


def rows_of_split_cells(
    row_cell: np.ndarray, entry_cell: np.ndarray, entry_count: np.ndarray, entry_class: np.ndarray
) -> np.ndarray:
    """The class of every row when a cell's rows may be shared between several classes.

    ``entry_*`` describe the pieces a recoding cut cells into: piece i holds ``entry_count[i]``
    rows of cell ``entry_cell[i]`` and puts them in class ``entry_class[i]``. The rows of a cell
    are dealt to its pieces in row order (the first ``entry_count`` rows to the first piece, in
    the order the pieces are listed), so every row gets exactly one class and each piece gets
    exactly its count.
    """
    n_cells = int(row_cell.max()) + 1 if len(row_cell) else 0
    pieces = np.bincount(entry_cell, minlength=n_cells)
    single = pieces == 1
    class_of_cell = np.full(n_cells, -1, dtype=np.int64)
    lone = single[entry_cell]
    class_of_cell[entry_cell[lone]] = entry_class[lone]
    result = class_of_cell[row_cell]
    shared_rows = np.flatnonzero(~single[row_cell])
    if len(shared_rows) == 0:
        return result
    # rank of each shared row within its cell, in row order
    cells = row_cell[shared_rows]
    order = np.argsort(cells, kind="stable")
    sorted_cells = cells[order]
    starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
    lengths = np.diff(np.r_[starts, len(sorted_cells)])
    rank = np.arange(len(sorted_cells)) - np.repeat(starts, lengths)
    # pieces of shared cells, grouped by cell (stable: listing order kept), with cumulative ends
    shared_entries = np.flatnonzero(~single[entry_cell])
    piece_order = shared_entries[np.argsort(entry_cell[shared_entries], kind="stable")]
    piece_cells = entry_cell[piece_order]
    ends = np.cumsum(entry_count[piece_order])
    first_piece = np.searchsorted(piece_cells, sorted_cells, side="left")
    before = np.where(first_piece > 0, ends[np.maximum(first_piece - 1, 0)], 0)
    position = before + rank  # global position among the shared pieces' rows
    piece = np.searchsorted(ends, position, side="right")
    result[shared_rows[order]] = entry_class[piece_order[piece]]
    return result
