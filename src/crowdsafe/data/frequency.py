"""Frequency tables: the distinct tuples of some columns, each with the number of rows holding it.

Most privacy models and anonymization algorithms need only this table, which is far smaller
than the rows (Adult: 32,561 rows, 7,000-odd distinct quasi-identifier tuples).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

from crowdsafe.data import packing
from crowdsafe.data.dataset import Dataset
from crowdsafe.data.encoding import Encoding, frame_of
from crowdsafe.errors import HierarchyError, SchemaError

COUNT = "count"


def _check_columns(columns: Sequence[str] | str, available: Sequence[str]) -> list[str]:
    columns = [columns] if isinstance(columns, str) else list(columns)  # one name, not its characters
    if not columns:
        raise SchemaError("a frequency table needs at least one column")
    absent = [c for c in columns if c not in available]
    if absent:
        raise SchemaError(f"no column named '{absent[0]}'; the columns are: {', '.join(available)}")
    if COUNT in columns:
        raise SchemaError(f"a column named '{COUNT}' clashes with the frequency column; rename it")
    if len(set(columns)) != len(columns):
        raise SchemaError("a column is named twice in the frequency table's columns")
    return columns


def frequency_table(
    data: Dataset | pl.DataFrame,
    columns: Sequence[str] | str | None = None,
    *,
    levels: Mapping[str, int] | None = None,
) -> pl.DataFrame:
    """Distinct tuples of ``columns`` (default: the quasi-identifiers; of a frame: every column)
    with a ``count`` (Int64), from a Dataset or a Polars (eager or lazy) or pandas frame.

    ``levels`` generalizes columns of a Dataset to the given hierarchy level first (the
    frequency table *after* a recoding). A missing value is a value of its own. Rows are
    sorted by the columns (missing last), so the result does not depend on row order.
    """
    if not isinstance(data, Dataset):
        data = frame_of(data, "frequency_table")  # a pandas DataFrame or a LazyFrame: as a Polars frame
    if isinstance(data, Dataset):
        columns = _check_columns(columns if columns is not None else data.quasi_identifiers, data.columns)
        if levels:
            return _generalized_frequencies(data, columns, levels)
        return _decoded(data, columns, code_frequencies(Encoding({c: data.encoded(c) for c in columns})))
    else:
        if levels:
            raise SchemaError("levels need hierarchies: pass a Dataset, not a bare frame")
        frame = data
        columns = _check_columns(columns if columns is not None else data.columns, data.columns)
    table = frame.lazy().group_by(columns).agg(pl.len().cast(pl.Int64).alias(COUNT))
    return table.sort(columns, nulls_last=True).collect()


def _decoded(data: Dataset, columns: list[str], codes: pl.DataFrame) -> pl.DataFrame:
    """Replace code columns by the values they stand for."""
    return codes.with_columns(
        data.encoded(c).dictionary.gather(codes.get_column(c)).alias(c) for c in columns
    )


def _generalized_frequencies(data: Dataset, columns: list[str], levels: Mapping[str, int]) -> pl.DataFrame:
    """Count over hierarchy node codes (sorted in hierarchy order), then attach the labels."""
    stray = [c for c in levels if c not in columns]
    if stray:
        raise SchemaError(f"a level is given for '{stray[0]}', which is not among the columns counted")
    generalized = {}
    for column, level in levels.items():
        hierarchy = data.hierarchies.get(column)
        if hierarchy is None:
            raise HierarchyError(f"column '{column}' has no hierarchy; give one to generalize it")
        generalized[column] = hierarchy.generalize(data.encoded(column).codes, level)
    frame = data.frame.select(columns).with_columns(
        pl.Series(c, codes) for c, codes in generalized.items()
    )
    table = (
        frame.lazy().group_by(columns).agg(pl.len().cast(pl.Int64).alias(COUNT))
        .sort(columns, nulls_last=True).collect()
    )
    return table.with_columns(
        pl.Series(c, data.hierarchies[c].labels[levels[c]], dtype=pl.String).gather(table.get_column(c))
        for c in generalized
    )


def code_frequencies(encoding: Encoding, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """Distinct tuples of *codes* with their counts, from an :class:`Encoding`.

    Columns are UInt32 codes (look values up in ``encoding[c].dictionary``), plus ``count``.
    Codes are packed into one 64-bit key per row (mixed radix) when the product of the
    dictionary sizes allows it (:mod:`crowdsafe.data.packing`), so the group-by is over a single
    integer column.
    """
    columns = _check_columns(columns if columns is not None else list(encoding), list(encoding))
    sizes = [max(encoding[c].cardinality, 1) for c in columns]
    if packing.fits(sizes):
        key = packing.pack([encoding[c].codes for c in columns], sizes, np.uint64)
        counted = (
            pl.DataFrame({"key": key}).lazy().group_by("key").agg(pl.len().cast(pl.Int64).alias(COUNT))
            .sort("key").collect()
        )
        decoded = packing.unpack(counted.get_column("key").to_numpy(), sizes, packing.division_dtype(sizes))
        return pl.DataFrame({c: codes.astype(np.uint32) for c, codes in zip(columns, decoded)}).with_columns(
            counted.get_column(COUNT))
    frame = pl.DataFrame({c: encoding[c].codes for c in columns})
    return frame.lazy().group_by(columns).agg(pl.len().cast(pl.Int64).alias(COUNT)).sort(columns).collect()


# Class-size buckets for reports: [low, high] inclusive, high None = no upper bound.
SIZE_BUCKETS: tuple[tuple[int, int | None], ...] = (
    (1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, 999), (1000, None),
)


def class_sizes(counts: pl.Series | np.ndarray) -> dict[str, object]:
    """Summary of a frequency table's ``count`` column: the groups of equal tuples.

    Returns the number of groups, the smallest group (``smallest``; the table's k when the
    columns are the quasi-identifiers), the largest, the mean, the rows in groups of size 1
    (``uniques``), and per size bucket the number of groups and of rows.
    """
    sizes = np.asarray(counts.to_numpy() if isinstance(counts, pl.Series) else counts, dtype=np.int64)
    if len(sizes) == 0:
        raise SchemaError("an empty frequency table has no groups")
    rows = int(sizes.sum())
    buckets = []
    for low, high in SIZE_BUCKETS:
        inside = (sizes >= low) & (sizes <= (high if high is not None else np.iinfo(np.int64).max))
        buckets.append({
            "sizes": f"{low}" if low == high else (f"{low}-{high}" if high is not None else f"{low}+"),
            "low": low,
            "high": high,
            "groups": int(inside.sum()),
            "rows": int(sizes[inside].sum()),
        })
    return {
        "groups": len(sizes),
        "rows": rows,
        "smallest": int(sizes.min()),
        "largest": int(sizes.max()),
        "mean": rows / len(sizes),
        "uniques": int((sizes == 1).sum()),
        "buckets": buckets,
    }
