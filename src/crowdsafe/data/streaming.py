"""Frequency tables of files larger than memory: read lazily, reduced by Polars' streaming engine.

:func:`frequency_table` counts the distinct tuples of some columns of a CSV or Parquet file (or a
folder of Parquet parts) without holding the table in memory: the file is scanned lazily
(``scan_parquet`` / ``scan_csv``, with the options :func:`crowdsafe.data.io.read_table` reads it
with) and reduced to its counts with ``collect(engine="streaming")``, so peak memory grows with
the number of distinct tuples, not with the rows. CSV text is tidied as the eager reader tidies it
(:func:`crowdsafe.data.io.tidy_text`): blanks stripped on the rows, the numeric conversion on the
counted distinct values (the same set of values, so the same decision), then counts of values that
became equal are added.

Two ways to the same table (a fast path and its reference twin; the rule is :func:`reads_eagerly`):
a file of at most ``EAGER_BYTES`` on disk is read whole (:func:`_frequency_by_eager_read`,
faster for small tables), a larger one is streamed (:func:`_frequency_by_streaming`). Both return
the same frame: the columns, then ``count`` (Int64), sorted by the columns (nulls first).

It reads no privacy parameter and publishes nothing: a frequency table of the input is
custodian-side data, like the table itself.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from crowdsafe.data.column_names import stable_names
from crowdsafe.data.io import GZIP, PARQUET, ZSTD, csv_options, read_table, sniff_format, tidy_text
from crowdsafe.data.missing import DEFAULT_MISSING_TOKENS
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import check_input

__all__ = ["COUNT", "EAGER_BYTES", "frequency_table", "reads_eagerly", "scan_table"]

COUNT = "count"
EAGER_BYTES = 1 << 28  # 256 MiB on disk: read whole up to this, stream above


def _parts(path: Path) -> list[Path]:
    """The Parquet part files of a folder (sorted), or the file itself."""
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if not path.is_dir():
        return [path]
    parts = [check_input(p) for p in sorted(path.glob("*.parquet"))]  # a FIFO among them would block
    if not parts:
        raise InputError(f"{path} is a folder without Parquet part files (*.parquet)")
    return parts


def disk_bytes(path: str | os.PathLike[str]) -> int:
    """The size on disk of a file or of a folder's Parquet parts."""
    return sum(p.stat().st_size for p in _parts(Path(path)))


def reads_eagerly(path: str | os.PathLike[str]) -> bool:
    """The rule between the twins: read whole when the file (or the parts) take at most
    ``EAGER_BYTES`` on disk, or when it is a compressed CSV (scanned only after decompressing)."""
    path = Path(path)
    if disk_bytes(path) <= EAGER_BYTES:
        return True
    return not path.is_dir() and sniff_format(path)[0] in (GZIP, ZSTD)


def scan_table(
    path: str | os.PathLike[str],
    *,
    separator: str | None = None,
    missing_tokens: Sequence[str] = DEFAULT_MISSING_TOKENS,
    text_columns: Sequence[str] = (),
    has_header: bool = True,
    infer_all: bool = False,
) -> tuple[pl.LazyFrame, bool]:
    """A lazy scan of a Parquet file, a folder of Parquet parts or an uncompressed CSV file, with
    the eager reader's column names (the stable rule) and, for CSV, its options and stripped
    text; and whether it is CSV (its numeric conversion is left to the caller). ``infer_all``:
    infer CSV types from every row (the eager reader's second try)."""
    path = Path(path)
    parts = _parts(path)
    kind, head = (PARQUET, b"") if path.is_dir() else sniff_format(path)
    if kind == PARQUET:
        lazy = pl.scan_parquet(parts)
        names = lazy.collect_schema().names()
        stable, renames = stable_names(names)
        return (lazy.rename(dict(zip(names, stable))) if renames else lazy), False
    if kind in (GZIP, ZSTD):
        raise InputError(f"{path} is {kind}-compressed: it cannot be scanned lazily (read it whole)")
    options, _ = csv_options(path, separator=separator, missing_tokens=missing_tokens,
                             text_columns=text_columns, has_header=has_header, head=head)
    options.pop("encoding")
    lazy = pl.scan_csv(path, infer_schema_length=None if infer_all else 10_000, **options)
    names = lazy.collect_schema().names()
    stripped = [c.strip() for c in names]
    if stripped != names and len(set(stripped)) == len(stripped):  # as tidy_text renames
        lazy = lazy.rename(dict(zip(names, stripped)))
    text = [c for c, t in lazy.collect_schema().items() if t == pl.String]
    return (lazy.with_columns(pl.col(text).str.strip_chars()) if text else lazy), True


def _counted(lazy: pl.LazyFrame, columns: Sequence[str], label: Any) -> pl.LazyFrame:
    present = lazy.collect_schema().names()
    absent = [c for c in columns if c not in present]
    if absent:
        raise InputError(f"{label} has no column '{absent[0]}' (it has {', '.join(present)})")
    if COUNT in columns:
        raise ParameterError(f"a frequency table names its counts '{COUNT}': rename that column", parameter="columns")
    return lazy.group_by(list(columns)).agg(pl.len().cast(pl.Int64).alias(COUNT))


def _sorted(counted: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    return counted.sort(list(columns), nulls_last=False)


def _frequency_by_eager_read(path: Path, columns: Sequence[str], **options: Any) -> pl.DataFrame:
    """The reference twin (small files): the table read whole, then counted."""
    if path.is_dir():
        frame = pl.read_parquet(_parts(path))
        stable, renames = stable_names(frame.columns)
        frame = frame.rename(dict(zip(frame.columns, stable))) if renames else frame
    else:
        frame = read_table(path, **options)
    return _sorted(_counted(frame.lazy(), columns, path).collect(), columns)


def _frequency_by_streaming(path: Path, columns: Sequence[str], **options: Any) -> pl.DataFrame:
    """The streaming twin (large files): scanned lazily, counted by the streaming engine; CSV's
    numeric conversion on the counted values, equal values' counts added."""
    lazy, is_csv = scan_table(path, **options)
    try:
        counted = _counted(lazy, columns, path).collect(engine="streaming")
    except pl.exceptions.ComputeError:
        if not is_csv:
            raise
        lazy, _ = scan_table(path, infer_all=True, **options)  # a late value the first rows' types miss
        counted = _counted(lazy, columns, path).collect(engine="streaming")
    if is_csv:
        counted = tidy_text(counted, set(options.get("text_columns", ())))
        counted = counted.group_by(list(columns)).agg(pl.col(COUNT).sum())
    return _sorted(counted, columns)


def frequency_table(
    path: str | os.PathLike[str],
    columns: Sequence[str],
    *,
    separator: str | None = None,
    missing_tokens: Sequence[str] = DEFAULT_MISSING_TOKENS,
    text_columns: Sequence[str] = (),
    has_header: bool = True,
) -> pl.DataFrame:
    """The distinct tuples of ``columns`` in the table at ``path`` (a CSV or Parquet file, or a
    folder of Parquet parts) with their counts (``count``), sorted; read whole or streamed
    (:func:`reads_eagerly`), the same table either way (module docstring)."""
    path = Path(path)
    options: dict[str, Any] = dict(missing_tokens=missing_tokens, text_columns=text_columns, has_header=has_header,
                                   separator=separator)
    if reads_eagerly(path):
        return _frequency_by_eager_read(path, columns, **options)
    return _frequency_by_streaming(path, columns, **options)
