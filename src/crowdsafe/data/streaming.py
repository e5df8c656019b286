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

import contextlib
import io
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from crowdsafe.data import decimal_comma as comma
from crowdsafe.data import short_years
from crowdsafe.data.column_names import stable_names
from crowdsafe.data.column_types import beyond_int64, reading_notes, usable, usable_frame, zone_free
from crowdsafe.data.date_inference import dated_types
from crowdsafe.data.io import (
    GZIP,
    PARQUET,
    ZSTD,
    csv_options,
    read_file,
    refuse_ragged_rows,
    sniff_format,
    tidy_text,
    wide_integer_columns,
)
from crowdsafe.data.missing import DEFAULT_MISSING_TOKENS
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import check_input, literal_path
from crowdsafe.identity import note_line

__all__ = ["COUNT", "EAGER_BYTES", "Scan", "frequency_table", "parquet_parts", "reads_eagerly", "scan_table"]

COUNT = "count"
_SHORT = "__crowdsafe_short_row"
EAGER_BYTES = 1 << 28  # 256 MiB on disk: read whole up to this, stream above


def parquet_parts(path: Path) -> list[Path]:
    """The Parquet part files of a folder, sorted by name: its files named ``*.parquet``, listed
    literally (the folder's name is never read as a pattern), or the file itself. The one place
    where one path means several files."""
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if not path.is_dir():
        return [path]
    # literal names, sorted; a FIFO among them is refused (check_input), not opened
    named = sorted((p for p in path.iterdir() if p.name.endswith(".parquet") and not p.is_dir()), key=lambda p: p.name)
    parts = [check_input(p) for p in named]
    if not parts:
        raise InputError(f"{path} is a folder without Parquet part files (*.parquet)")
    return parts


def disk_bytes(path: str | os.PathLike[str]) -> int:
    """The size on disk of a file or of a folder's Parquet parts."""
    return sum(p.stat().st_size for p in parquet_parts(literal_path(path)))


def reads_eagerly(path: str | os.PathLike[str]) -> bool:
    """The rule between the twins: read whole when the file (or the parts) take at most
    ``EAGER_BYTES`` on disk, or when it is a compressed CSV (scanned only after decompressing)."""
    path = literal_path(path)
    if disk_bytes(path) <= EAGER_BYTES:
        return True
    return not path.is_dir() and sniff_format(path)[0] in (GZIP, ZSTD)


class Scan(NamedTuple):
    """A lazy scan (:func:`scan_table`): the rows, whether the file is CSV, how its numbers
    written with a decimal comma are read (:mod:`crowdsafe.data.decimal_comma`), and the
    columns set aside for their type (:mod:`crowdsafe.data.column_types`)."""

    lazy: pl.LazyFrame
    is_csv: bool
    reading: comma.Mode = "off"
    unusable: Mapping[str, str] = {}


def scan_table(
    path: str | os.PathLike[str],
    *,
    separator: str | None = None,
    missing_tokens: Sequence[str] = DEFAULT_MISSING_TOKENS,
    text_columns: Sequence[str] = (),
    has_header: bool = True,
    infer_all: bool = False,
    decimal_comma: bool | None = None,
) -> Scan:
    """A lazy scan of a Parquet file, a folder of Parquet parts or an uncompressed CSV file, with
    the eager reader's column names (the stable rule), its usable columns (Parquet) and, for CSV,
    its options (literal path, line endings, decimal comma) and stripped text; the numeric
    conversion of CSV text is left to the caller (:func:`crowdsafe.data.io.tidy_text` with the
    scan's ``reading``). ``infer_all``: infer CSV types from every row (the eager reader's second try)."""
    path = literal_path(path)
    parts = parquet_parts(path)
    kind, head = (PARQUET, b"") if path.is_dir() else sniff_format(path)
    if kind == PARQUET:
        lazy = pl.scan_parquet(parts, glob=False)
        names = lazy.collect_schema().names()
        stable, renames = stable_names(names)
        lazy = lazy.rename(dict(zip(names, stable))) if renames else lazy
        as_text = beyond_int64(lazy)
        kept, unusable = usable(lazy.collect_schema(), as_text)
        reading_notes(str(path), lazy.collect_schema(), as_text)
        return Scan(lazy if kept is None else lazy.select(kept), False, "off", unusable)
    if kind in (GZIP, ZSTD):
        raise InputError(f"{path} is {kind}-compressed: it cannot be scanned lazily (read it whole)")
    options, _ = csv_options(path, separator=separator, missing_tokens=missing_tokens,
                             text_columns=text_columns, has_header=has_header, head=head,
                             decimal_comma=decimal_comma)
    options.pop("encoding")
    window = None if infer_all else 10_000
    # Polars' date inference is slow: the columns that could be dates are typed from the window's
    # rows alone and given to the scan as types (date_inference.dated_types)
    undated = {**options, "try_parse_dates": False}
    lazy = pl.scan_csv(path, infer_schema_length=window, **undated)
    try:
        dated = dated_types(lazy, window, options["schema_overrides"] or (), decimal_comma=bool(
            options.get("decimal_comma")))
    except pl.exceptions.PolarsError:  # a file Polars cannot read: refused where its rows are read, as before
        dated = None
    if dated is None:
        lazy = pl.scan_csv(path, infer_schema_length=window, **options)
    else:
        options = {**undated, "schema_overrides": {**(options["schema_overrides"] or {}), **dated} or None}
        lazy = pl.scan_csv(path, infer_schema_length=window, **options) if dated else lazy
    wide = wide_integer_columns(lazy.collect_schema())
    if wide:  # whole numbers beyond 64 bits: text, as the eager reader reads them
        options["schema_overrides"] = {**(options.get("schema_overrides") or {}), **{c: pl.String for c in wide}}
        lazy = pl.scan_csv(path, infer_schema_length=window, **options)
    short = short_years.columns(lazy)
    if short:  # dates with a two-digit year: text, as the eager reader reads them
        options["schema_overrides"] = {**(options.get("schema_overrides") or {}), **{c: pl.String for c in short}}
        lazy = pl.scan_csv(path, infer_schema_length=window, **options)
        print(note_line(short_years.note(str(path), short)), file=sys.stderr)
    names = lazy.collect_schema().names()
    stripped = [c.strip() for c in names]
    if stripped != names and len(set(stripped)) == len(stripped):  # as tidy_text renames
        lazy = lazy.rename(dict(zip(names, stripped)))
    lazy = zone_free(lazy, str(path))
    text = [c for c, t in lazy.collect_schema().items() if t == pl.String]
    reading = comma.mode(options["separator"], decimal_comma)
    return Scan(lazy.with_columns(pl.col(text).str.strip_chars()) if text else lazy, True, reading)


def _counted(lazy: pl.LazyFrame, columns: Sequence[str], label: Any, *also: pl.Expr) -> pl.LazyFrame:
    present = lazy.collect_schema().names()
    absent = [c for c in columns if c not in present]
    if absent:
        raise InputError(f"{label} has no column '{absent[0]}' (it has {', '.join(present)})")
    if COUNT in columns:
        raise ParameterError(f"a frequency table names its counts '{COUNT}': rename that column", parameter="columns")
    return lazy.group_by(list(columns)).agg(pl.len().cast(pl.Int64).alias(COUNT), *also)


def _sorted(counted: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    return counted.sort(list(columns), nulls_last=False)


def _unusable_refusal(path: Path, columns: Sequence[str], unusable: Mapping[str, str]) -> None:
    """Refuse a counted column of a type crowdsafe cannot use (:mod:`crowdsafe.data.column_types`)."""
    for name in columns:
        if name in unusable:
            raise InputError(f"column '{name}' of {path} is {unusable[name]}, which crowdsafe cannot count")


def _frequency_by_eager_read(path: Path, columns: Sequence[str], **options: Any) -> pl.DataFrame:
    """The reference twin (small files): the table read whole, then counted."""
    if path.is_dir():
        frame = pl.read_parquet(parquet_parts(path), glob=False)
        stable, renames = stable_names(frame.columns)
        frame = frame.rename(dict(zip(frame.columns, stable))) if renames else frame
        frame, unusable = usable_frame(frame, str(path))
    else:
        read = read_file(path, **options)
        frame, unusable = read.frame, dict(read.unusable)
    _unusable_refusal(path, columns, unusable)
    return _sorted(_counted(frame.lazy(), columns, path).collect(), columns)


def _frequency_by_streaming(path: Path, columns: Sequence[str], **options: Any) -> pl.DataFrame:
    """The streaming twin (large files): scanned lazily, counted by the streaming engine; CSV's
    numeric conversion on the counted values, equal values' counts added."""
    lazy, is_csv, reading, unusable = scan_table(path, **options)
    _unusable_refusal(path, columns, unusable)
    names = lazy.collect_schema().names()
    # a row shorter than the header leaves the last column missing: noted in the same pass (io._read_csv)
    short = [pl.col(names[-1]).is_null().any().alias(_SHORT)] if is_csv and len(names) > 1 else []
    try:
        counted = _counted(lazy, columns, path, *short).collect(engine="streaming")
    except pl.exceptions.ComputeError:
        if not is_csv:
            raise
        lazy = scan_table(path, infer_all=True, **options).lazy  # a late value the first rows' types miss
        try:
            counted = _counted(lazy, columns, path, *short).collect(engine="streaming")
        except pl.exceptions.ComputeError:
            refuse_ragged_rows(path, options.get("separator"), options.get("has_header", True))  # a longer row
            raise
    if short:
        if counted.get_column(_SHORT).any():
            refuse_ragged_rows(path, options.get("separator"), options.get("has_header", True))
        counted = counted.drop(_SHORT)
    late = short_years.among({c: counted.get_column(c) for c in columns}) if is_csv else []
    if late:  # a two-digit year past the rows the types came from: counted again as text, as read whole
        print(note_line(short_years.note(str(path), late)), file=sys.stderr)
        with contextlib.redirect_stderr(io.StringIO()):  # the first scan gave its notes
            return _frequency_by_streaming(path, columns, **{**options,
                                                             "text_columns": [*options["text_columns"], *late]})
    if is_csv:
        counted = tidy_text(counted, set(options.get("text_columns", ())), reading)
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
    decimal_comma: bool | None = None,
) -> pl.DataFrame:
    """The distinct tuples of ``columns`` in the table at ``path`` (a CSV or Parquet file, or a
    folder of Parquet parts) with their counts (``count``), sorted; read whole or streamed
    (:func:`reads_eagerly`), the same table either way (module docstring)."""
    path = literal_path(path)
    options: dict[str, Any] = dict(missing_tokens=missing_tokens, text_columns=text_columns, has_header=has_header,
                                   separator=separator, decimal_comma=decimal_comma)
    if reads_eagerly(path):
        return _frequency_by_eager_read(path, columns, **options)
    return _frequency_by_streaming(path, columns, **options)
