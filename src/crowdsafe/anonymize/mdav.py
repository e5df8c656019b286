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

from crowdsafe.anonymize.attributes import describe_attributes
from crowdsafe.anonymize.cells import CellTable, cell_table, rows_of_split_cells
from crowdsafe.anonymize.mondrian import Partitioning, published_values
from crowdsafe.anonymize.recoding import LocalRecoding
from crowdsafe.data import AttributeType, Dataset
from crowdsafe.errors import ParameterError, SchemaError

Aggregate = Literal["mean", "median"]


class _Space:
    """Cells as points in the standardized space.

    Numeric attributes are scaled so that a squared difference is the attribute's contribution.
    Categorical attributes are one-hot encoded with their weight, attribute-major: the
    categorical distance of every cell to a point is the total weight minus the sum of the
    point's value columns (``W − Σ_i w_i [c_i = v_i]``), one gather and one sum.
    The cells still holding rows are kept compacted (``live``); the centroid's sums and the
    categorical value counts are updated as rows are taken, never recomputed.
    """

    def __init__(self, dataset: Dataset, cells: CellTable) -> None:
        counts = cells.counts.astype(float)
        total = counts.sum()
        numeric, columns, weights, offsets = [], [], [], []
        offset = 0
        for j, name in enumerate(cells.columns):
            kind = dataset.schema[name].type
            codes = cells.codes[:, j]
            dictionary = dataset.encoded(name).dictionary
            if kind in (AttributeType.NUMERIC, AttributeType.DATE):
                if dictionary.null_count() and np.isin(np.flatnonzero(dictionary.is_null().to_numpy()), codes).any():
                    raise SchemaError(
                        f"numeric quasi-identifier '{name}' has missing values, which have no mean; "
                        "drop those rows (missing='drop') or declare the column categorical"
                    )
                x = dictionary.to_physical().cast(pl.Float64).to_numpy()[codes]
                mean = (x * counts).sum() / total
                variance = ((x - mean) ** 2 * counts).sum() / total
                numeric.append(x / np.sqrt(2.0 * variance) if variance > 0 else np.zeros_like(x))
            else:
                p = np.bincount(codes, weights=counts, minlength=len(dictionary)) / total
                mismatch = 1.0 - float((p**2).sum())
                columns.append(codes.astype(np.int64))
                weights.append(1.0 / mismatch if mismatch > 1e-15 else 0.0)
                offsets.append(offset)
                offset += len(dictionary)
        m = cells.n_cells
        self.x = np.stack(numeric) if numeric else np.zeros((0, m))
        self.c = np.stack(columns) if columns else np.zeros((0, m), dtype=np.int64)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.total_weight = float(sum(weights))
        self.onehot = np.zeros((offset, m))
        for codes, weight, start in zip(self.c, weights, offsets):
            self.onehot[start + codes, np.arange(m)] = weight
        self.remaining = cells.counts.astype(np.int64).copy()
        self.live = np.arange(m)
        self.x_live, self.c_live, self.onehot_live = self.x, self.c, self.onehot
        self.emptied = np.zeros(m, dtype=bool)  # per live position
        self.sums = (self.x * self.remaining).sum(axis=1)
        self.value_counts = [
            np.bincount(codes, weights=self.remaining, minlength=int(codes.max()) + 1) for codes in self.c
        ]
        self.rows_left = int(self.remaining.sum())

    def distances(self, x: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Squared standardized distance of every live cell to the point (x, c); emptied cells: -1."""
        out = np.full(len(self.live), self.total_weight)
        for row in self.offsets + c:
            np.subtract(out, self.onehot_live[row], out=out)
        for values, target in zip(self.x_live, x):
            out += (values - target) ** 2
        out[self.emptied] = -1.0
        return out

    def centroid(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean of the numeric attributes and mode of the categorical ones over the rows left."""
        modes = np.asarray([counts.argmax() for counts in self.value_counts], dtype=np.int64)
        return self.sums / self.rows_left, modes

    def point(self, position: int) -> tuple[np.ndarray, np.ndarray]:
        return self.x_live[:, position], self.c_live[:, position]

    def take(self, distance: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Take the k rows nearest a point (``distance`` of the live cells to it), ties by cell."""
        alive = len(self.live) - int(self.emptied.sum())
        candidates = min(k, alive)
        d = np.where(self.emptied, np.inf, distance)
        if candidates < alive:
            pick = np.flatnonzero(d <= np.partition(d, candidates - 1)[candidates - 1])
        else:
            pick = np.flatnonzero(~self.emptied)
        pick = pick[np.lexsort((self.live[pick], d[pick]))]
        cells = self.live[pick]
        rows = self.remaining[cells]
        taken = np.clip(k - (np.cumsum(rows) - rows), 0, rows)
        used = taken > 0
        cells, taken, pick = cells[used], taken[used], pick[used]
        self.remaining[cells] -= taken
        self.rows_left -= int(taken.sum())
        self.sums -= (self.x_live[:, pick] * taken).sum(axis=1)
        for counts, codes in zip(self.value_counts, self.c_live):
            np.subtract.at(counts, codes[pick], taken)
        self.emptied[pick[self.remaining[cells] == 0]] = True
        if 4 * int(self.emptied.sum()) > len(self.live):
            kept = ~self.emptied
            self.live = self.live[kept]
            self.x_live, self.c_live = self.x_live[:, kept], self.c_live[:, kept]
            self.onehot_live = self.onehot_live[:, kept]
            self.emptied = np.zeros(len(self.live), dtype=bool)
        return cells, taken


def _farthest(distance: np.ndarray) -> int:
    return int(np.argmax(distance))


def microaggregate(dataset: Dataset, cells: CellTable, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MDAV groups of ``cells``: pieces (cell, rows, group), every group ≥ k rows."""
    space = _Space(dataset, cells)
    if space.rows_left < k:
        raise ParameterError(
            f"the table has {space.rows_left:,} rows, fewer than k = {k}: no group can hold k rows"
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
        rest = space.live[~space.emptied]
        pieces.append((rest, space.remaining[rest].copy()))
    groups = np.concatenate([np.full(len(c), g, dtype=np.int64) for g, (c, _) in enumerate(pieces)])
    return np.concatenate([c for c, _ in pieces]), np.concatenate([t for _, t in pieces]), groups


def group_values(dataset: Dataset, cells: CellTable, piece_cell: np.ndarray, piece_rows: np.ndarray,
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
    cells: CellTable | None = None,
) -> LocalRecoding:
    """Fit MDAV to ``dataset`` and return its local recoding (apply it with Apply)."""
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
