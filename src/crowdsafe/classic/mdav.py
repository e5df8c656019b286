"""MDAV microaggregation (Domingo-Ferrer and Mateo-Sanz 2002; Domingo-Ferrer and Torra 2005).

Maximum Distance to Average Vector: while at least 3k records remain, take the record r
farthest from the centroid of the remaining records and the record s farthest from r; make a
group of r and its k − 1 nearest remaining records, then one of s and its k − 1 nearest
remaining records. With 2k..3k − 1 records left, make one group around the record farthest
from the centroid and put the rest in a last group; with fewer than 2k, one last group. Every
group then publishes its centroid: the mean (or the median) of each numeric attribute and the
mode of each categorical one (ties: the first value in dictionary order). Each group holds at
least k records, so the release is k-anonymous.

Distances are standardized so that every attribute weighs the same: a numeric attribute
contributes ``(x − y)² / (2σ²)`` and a categorical one ``[x ≠ y] / (1 − Σ p²)``, where σ² is the
variance and p the value frequencies over the table — for both, the mean contribution over
random pairs of records is 1 (Domingo-Ferrer and Torra 2005 standardize numeric attributes; the
categorical weight is the same normalization applied to the 0/1 distance). Ordinal attributes
are treated as categorical.

The algorithm runs on cells (distinct tuples with counts): identical records are at distance
zero, so the k − 1 nearest records of a record start with its own copies. This is exactly MDAV
on records, with ties broken by cell (lowest tuple first). It is quadratic: about n²/k distance
evaluations for n distinct tuples.

The grouping is fitted to the data, so an MDAV release carries **no formal guarantee**.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl

from crowdsafe.anonymize.apply import check_k
from crowdsafe.anonymize.cells import EncodedCells, cell_table, rows_of_split_cells
from crowdsafe.anonymize.recoding import LocalRecoding
from crowdsafe.classic.attributes import describe_attributes
from crowdsafe.classic.mondrian import Partitioning, published_values
from crowdsafe.data import AttributeType, Dataset
from crowdsafe.errors import CUSTODIAN_REFUSAL, ParameterError, SchemaError
from crowdsafe.number_text import quantity

Aggregate = Literal["mean", "median"]


class _Space:
    """Cells as points in the standardized space, with the MDAV bookkeeping.

    Numeric attributes are scaled so that a squared difference is the attribute's contribution.
    A categorical attribute contributes its weight ``w_i`` unless the values match, and the
    categorical distance is evaluated, in attribute order, as ``W − w_1·[match] − w_2·[match] − …``
    (W the total weight): it depends only on *which* attributes match, so it is read from a
    table indexed by the bit pattern of matches (built once, with that same sequence of
    floating-point operations, so every distance is bit-for-bit the one the sequence gives).
    Codes are stored in the smallest unsigned integer type that holds them.

    The cells still holding rows are kept in cell order in compact arrays (``live``); emptied
    cells are masked until they are many, then dropped. The centroid's sums and the categorical
    value counts are updated as rows are taken, never recomputed.
    """

    TABLE_BITS = 16  # categorical attributes beyond the 16th are subtracted one by one
    COMPACT_AT = 16  # drop the emptied cells when they are more than 1/16 of the live ones

    def __init__(self, dataset: Dataset, cells: EncodedCells) -> None:
        counts = cells.counts.astype(float)
        total = counts.sum()
        numeric, columns, weights, sizes = [], [], [], []
        for j, name in enumerate(cells.columns):
            kind = dataset.schema[name].type
            codes = cells.codes[:, j]
            dictionary = dataset.encoded(name).dictionary
            if kind in (AttributeType.NUMERIC, AttributeType.DATE):
                if dictionary.null_count() and np.isin(np.flatnonzero(dictionary.is_null().to_numpy()), codes).any():
                    raise SchemaError(
                        f"numeric quasi-identifier '{name}' has missing values, which have no mean; "
                        "drop those rows (missing='drop') or declare the column categorical" + CUSTODIAN_REFUSAL,
                        parameter="missing",
                    )
                x = dictionary.to_physical().cast(pl.Float64).to_numpy()[codes]
                mean = (x * counts).sum() / total
                variance = ((x - mean) ** 2 * counts).sum() / total
                numeric.append(x / np.sqrt(2.0 * variance) if variance > 0 else np.zeros_like(x))
            else:
                p = np.bincount(codes, weights=counts, minlength=len(dictionary)) / total
                mismatch = 1.0 - float((p**2).sum())
                columns.append(codes)
                weights.append(1.0 / mismatch if mismatch > 1e-15 else 0.0)
                sizes.append(len(dictionary))
        m = cells.n_cells
        code_type = np.min_scalar_type(max(sizes, default=1))
        self.x = np.stack(numeric) if numeric else np.zeros((0, m))
        self.c = np.stack(columns).astype(code_type) if columns else np.zeros((0, m), dtype=code_type)
        self.weights = weights
        self.total_weight = float(sum(weights))
        self.table_bits = min(len(weights), self.TABLE_BITS)
        self.mask_type = np.uint8 if self.table_bits <= 8 else np.uint16
        self.bits = np.left_shift(1, np.arange(self.table_bits, dtype=self.mask_type))[:, None]
        pattern = np.arange(1 << self.table_bits)
        table = np.full(len(pattern), self.total_weight)
        for j in range(self.table_bits):
            table = table - np.where(pattern & (1 << j), weights[j], 0.0)
        self.table = table  # categorical distance of each match pattern of the first attributes
        self.remaining = cells.counts.astype(np.int64).copy()
        self.live = np.arange(m)
        self.x_live, self.c_live = self.x, self.c
        self.emptied = np.zeros(0, dtype=np.int64)  # live positions emptied since the last compaction
        self.sums = (self.x * self.remaining).sum(axis=1)
        # value counts of all categorical attributes side by side (padded with -1: never a mode)
        widest = max(sizes, default=0)
        self.count_offsets = np.arange(len(sizes), dtype=np.int64)[:, None] * widest
        self.value_counts = np.full((len(sizes), widest), -1.0)  # whole numbers: exact in float
        for row, (codes, size) in enumerate(zip(self.c, sizes)):
            self.value_counts[row, :size] = np.bincount(codes, weights=self.remaining, minlength=size)
        self.rows_left = int(self.remaining.sum())

    def distances(self, x: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Squared standardized distance of every live cell to the point (x, c); emptied cells: -1."""
        live_c, bits = self.c_live, self.table_bits
        if bits:
            matches = live_c[:bits] == c[:bits, None]
            out = self.table.take(np.bitwise_or.reduce(matches * self.bits, axis=0))
        else:
            out = np.full(len(self.live), self.total_weight)
        for j in range(self.table_bits, len(self.weights)):
            out -= np.where(live_c[j] == c[j], self.weights[j], 0.0)
        for values, target in zip(self.x_live, x):
            out += (values - target) ** 2
        out[self.emptied] = -1.0
        return out

    def centroid(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean of the numeric attributes and mode of the categorical ones over the rows left
        (the mode's ties: the lowest code)."""
        if not len(self.value_counts):
            return self.sums / self.rows_left, np.zeros(0, dtype=self.c.dtype)
        modes = self.value_counts.argmax(axis=1).astype(self.c.dtype)
        return self.sums / self.rows_left, modes

    def point(self, position: int) -> tuple[np.ndarray, np.ndarray]:
        return self.x_live[:, position], self.c_live[:, position]

    def take(self, distance: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Take the k rows nearest a point (``distance`` of the live cells to it, overwritten),
        ties by cell."""
        distance[self.emptied] = np.inf
        alive = len(self.live) - len(self.emptied)
        candidates = min(k, alive)
        if candidates < alive:
            pick = np.flatnonzero(distance <= np.partition(distance, candidates - 1)[candidates - 1])
        else:
            pick = np.setdiff1d(np.arange(len(self.live)), self.emptied)
        pick = pick[np.lexsort((self.live[pick], distance[pick]))]
        cells = self.live[pick]
        rows = self.remaining[cells]
        ends = np.cumsum(rows)
        used = ends - rows < k  # a cell is used while fewer than k rows are taken before it
        cells, rows, pick, ends = cells[used], rows[used], pick[used], ends[used]
        taken = rows.copy()
        taken[-1] -= max(int(ends[-1]) - k, 0)  # the last cell used gives only what is missing
        self.remaining[cells] -= taken
        self.rows_left -= int(taken.sum())
        self.sums -= (self.x_live[:, pick] * taken).sum(axis=1)
        self.value_counts -= np.bincount((self.c_live[:, pick] + self.count_offsets).T.ravel(),
                                         weights=np.repeat(taken, len(self.c_live)),
                                         minlength=self.value_counts.size).reshape(self.value_counts.shape)
        gone = pick[self.remaining[cells] == 0]
        if len(gone):
            self.emptied = np.concatenate([self.emptied, gone])
        if self.COMPACT_AT * len(self.emptied) > len(self.live):
            kept = np.ones(len(self.live), dtype=bool)
            kept[self.emptied] = False
            index = np.flatnonzero(kept)
            self.live = self.live[index]
            self.x_live, self.c_live = self.x_live.take(index, axis=1), self.c_live.take(index, axis=1)
            self.emptied = np.zeros(0, dtype=np.int64)
        return cells, taken


def _farthest(distance: np.ndarray) -> int:
    return int(np.argmax(distance))


def microaggregate(dataset: Dataset, cells: EncodedCells, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MDAV groups of ``cells``: pieces (cell, rows, group), every group ≥ k rows."""
    space = _Space(dataset, cells)
    if space.rows_left < k:
        raise ParameterError(
            f"the table has {quantity(space.rows_left, 'row')}, fewer than k = {k}: no group can hold k rows"
        )
    pieces: list[tuple[np.ndarray, np.ndarray]] = []
    while space.rows_left >= 3 * k:
        from_r = space.distances(*space.point(_farthest(space.distances(*space.centroid()))))
        s_point = space.point(_farthest(from_r))
        pieces.append(space.take(from_r, k))
        pieces.append(space.take(space.distances(*s_point), k))
    if space.rows_left >= 2 * k:
        from_r = space.distances(*space.point(_farthest(space.distances(*space.centroid()))))
        pieces.append(space.take(from_r, k))
    if space.rows_left > 0:
        rest = space.live[space.remaining[space.live] > 0]
        pieces.append((rest, space.remaining[rest].copy()))
    groups = np.concatenate([np.full(len(c), g, dtype=np.int64) for g, (c, _) in enumerate(pieces)])
    return np.concatenate([c for c, _ in pieces]), np.concatenate([t for _, t in pieces]), groups


def group_values(dataset: Dataset, cells: EncodedCells, piece_cell: np.ndarray, piece_rows: np.ndarray,
                 piece_group: np.ndarray, aggregate: Aggregate) -> dict[str, pl.Series]:
    """Per attribute, each group's published value: mean / median of numbers, mode of categories."""
    n_groups = int(piece_group.max()) + 1
    rows = np.bincount(piece_group, weights=piece_rows, minlength=n_groups)
    values: dict[str, pl.Series] = {}
    for j, name in enumerate(cells.columns):
        dictionary = dataset.encoded(name).dictionary
        codes = cells.codes[piece_cell, j]
        numeric = dataset.schema[name].type in (AttributeType.NUMERIC, AttributeType.DATE)
        if numeric and aggregate == "mean":
            x = dictionary.to_physical().cast(pl.Float64).to_numpy()[codes]
            mean = np.bincount(piece_group, weights=x * piece_rows, minlength=n_groups) / rows
            values[name] = pl.Series(name, mean, dtype=pl.Float64)
            if isinstance(dictionary.dtype, pl.Datetime):  # a timestamp's mean published as a timestamp
                values[name] = values[name].round().cast(pl.Int64).cast(dictionary.dtype)
            elif dictionary.dtype == pl.Date:  # a date's mean published as a date (the nearest day)
                values[name] = values[name].round().cast(pl.Int32).cast(pl.Date)
            continue
        if numeric:  # lower weighted median, an actual value of the group
            x = dictionary.to_physical().cast(pl.Float64).to_numpy()[codes]
            order = np.lexsort((x, piece_group))
            cum = np.cumsum(piece_rows[order])
            before = np.r_[0.0, np.cumsum(rows)[:-1]]
            at = np.searchsorted(cum, before + np.ceil(rows / 2), side="left")
            chosen = codes[order][at]
        else:
            size = len(dictionary)
            counts = np.bincount(piece_group * size + codes, weights=piece_rows, minlength=n_groups * size)
            chosen = counts.reshape(n_groups, size).argmax(axis=1)
        values[name] = dictionary.gather(chosen).alias(name)
    return values


def mdav(
    dataset: Dataset,
    k: int,
    *,
    columns: Sequence[str] | None = None,
    aggregate: Aggregate = "mean",
    cells: EncodedCells | None = None,
) -> LocalRecoding:
    """Fit MDAV to ``dataset`` and return its local recoding (apply it with Apply)."""
    k = check_k(k)
    if aggregate not in ("mean", "median"):
        raise ParameterError(f"MDAV aggregates numbers by 'mean' or 'median', not {aggregate!r}")
    columns = list(columns) if columns is not None else dataset.quasi_identifiers
    if cells is None:
        cells = cell_table(dataset, columns)
    piece_cell, piece_rows, piece_group = microaggregate(dataset, cells, k)
    values = group_values(dataset, cells, piece_cell, piece_rows, piece_group, aggregate)
    class_of_row = rows_of_split_cells(cells.row_cell, piece_cell, piece_rows, piece_group)
    n_groups = int(piece_group.max()) + 1
    extents = published_values(cells, describe_attributes(dataset, cells),
                               Partitioning(piece_cell, piece_rows, piece_group, n_groups))
    return LocalRecoding(
        name="MDAV microaggregation",
        class_of_row=class_of_row,
        values=values,
        details={"groups": n_groups, "aggregate": aggregate},
        extents=extents,
    )
