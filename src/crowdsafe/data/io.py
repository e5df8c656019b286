"""Reading and writing table files (CSV, Parquet) and frames (Polars, pandas).

The first step of the load pipeline (:mod:`crowdsafe.data.pipeline`): bytes become a Polars
frame. No schema and no missing-value policy are applied here. ``complete_schema`` is the
schema step's (:mod:`crowdsafe.data.schema`), importable here too for the Spark engine, which
applies it to the distinct values it reads.
"""

from __future__ import annotations

import csv
import io
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from crowdsafe.arguments import strings
from crowdsafe.csv_safety import unescape_frame, write_csv
from crowdsafe.data import decimal_comma as comma
from crowdsafe.data import short_years
from crowdsafe.data.column_names import describe_renames, stable_names
from crowdsafe.data.column_types import usable_frame, wide_integer_note, zone_free
from crowdsafe.data.column_words import is_code_name
from crowdsafe.data.dataset import Dataset
from crowdsafe.data.date_inference import with_dates
from crowdsafe.data.line_endings import line_ending
from crowdsafe.data.missing import DEFAULT_MISSING_TOKENS
from crowdsafe.data.nul_bytes import refuse_nul, refuse_nul_in_file
from crowdsafe.data.row_widths import file_chunks, first_ragged
from crowdsafe.data.schema import complete_schema
from crowdsafe.data.sep_line import sep_line, sep_note, without_sep_line
from crowdsafe.data.text_bytes import NOT_UTF8, text_problem, utf8_complaint
from crowdsafe.errors import CUSTODIAN_REFUSAL, EMPTY_TABLE, CrowdsafeError, InputError, ParameterError, first_line
from crowdsafe.files import atomic_paths, check_input, check_input_path
from crowdsafe.identity import note_line

__all__ = ["TableRead", "as_frame", "complete_schema", "frame_kind", "header_names", "in_kind", "ragged_row_error",
           "read_file", "read_table", "refuse_ragged_rows", "sniff_format", "tidy_text", "write"]

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".data", ".csv.gz", ".csv.zst", ".gz", ".zst")
PARQUET_SUFFIXES = (".parquet", ".pq")
_SEPARATORS = (",", ";", "\t", "|")
HEAD_BYTES = 65536  # the first bytes of a file that are sniffed (format, separator, line endings)
FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

# Formats recognised by their first bytes, whatever the file's name: what is read and what is named.
GZIP, ZSTD, PARQUET, TEXT = "gzip", "zstd", "parquet", "text"
_MAGIC_READ = ((b"\x1f\x8b", GZIP), (b"\x28\xb5\x2f\xfd", ZSTD), (b"PAR1", PARQUET))
_CONVERT = "save it as CSV (UTF-8) or Parquet and give that file"
_MAGIC_NAMED = (
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", f"an Excel 97-2003 workbook (.xls, OLE2); {_CONVERT}"),
    (b"BZh", "a bzip2-compressed file; decompress it (bunzip2) or re-compress it with gzip or zstd"),
    (b"\xfd7zXZ\x00", "an xz-compressed file; decompress it (unxz) or re-compress it with gzip or zstd"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive; extract the CSV file from it and give that file"),
    (b"SQLite format 3\x00", "an SQLite database (a crowdsafe ledger?); export the table as CSV"),
    (b"%PDF", "a PDF document, not a table"),
    (b"ARROW1", f"an Arrow IPC (Feather) file; {_CONVERT}"),
    (b"ORC", f"an ORC file; {_CONVERT}"),
    (b"Obj\x01", f"an Avro file; {_CONVERT}"),
    (b"\x89PNG", "a PNG image, not a table"),
    (b"\xff\xd8\xff", "a JPEG image, not a table"),
)


def _suffix(path: Path) -> str:
    name = path.name.lower()
    for suffix in (*CSV_SUFFIXES, *PARQUET_SUFFIXES):
        if name.endswith(suffix):
            return suffix
    return path.suffix.lower()


def _decompressed_head(path: Path, codec: str) -> bytes:
    """The first bytes of a gzip or zstd file, decompressed (by PyArrow's codecs)."""
    import pyarrow as pa

    try:
        with pa.CompressedInputStream(pa.OSFile(str(path)), codec) as stream:
            return stream.read(HEAD_BYTES)
    except (OSError, pa.ArrowException) as exc:
        first = first_line(exc)
        raise InputError(f"{path} is a {codec}-compressed file that cannot be decompressed: {first}") from None


def sniff_format(path: str | os.PathLike[str]) -> tuple[str, bytes]:
    """The format of the file at ``path`` from its first bytes, whatever its name: ``"gzip"``
    or ``"zstd"`` (compressed CSV), ``"parquet"`` or ``"text"``, with the first bytes of its
    (decompressed) text. Raises :class:`InputError` naming any other format (Excel, ZIP,
    bzip2, xz, SQLite, PDF, UTF-16, other binary) and how to convert it."""
    path = check_input(path)  # a FIFO or a device: refused before the open (which could block)
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except IsADirectoryError:
        raise InputError(f"{path} is a folder, expected a CSV or Parquet file") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    if not head:
        raise InputError(f"{path} is empty")
    for magic, kind in _MAGIC_READ:
        if head.startswith(magic):
            if kind == PARQUET:
                return kind, b""
            text = _decompressed_head(path, kind)
            problem = text_problem(text)
            if problem:
                raise InputError(f"{path} is {kind}-compressed and {problem.removeprefix('is ')}")
            return kind, text
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        if b"xl/" in head or b"[Content_Types].xml" in head:
            raise InputError(f"{path} is an Excel workbook (.xlsx); {_CONVERT}")
        if b"opendocument.spreadsheet" in head:
            raise InputError(f"{path} is an OpenDocument spreadsheet (.ods); {_CONVERT}")
        raise InputError(f"{path} is a ZIP archive; extract the CSV file from it and give that file")
    for magic, what in _MAGIC_NAMED:
        if head.startswith(magic):
            raise InputError(f"{path} is {what}")
    problem = text_problem(head)
    if problem:
        raise InputError(f"{path} {problem}")
    return TEXT, head


def _sniff_separator(head: bytes) -> str:
    first = head.split(b"\n", 1)[0].split(b"\r", 1)[0]  # the header line, whatever the line break
    counts = {sep: first.count(sep.encode()) for sep in _SEPARATORS}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else ","


def resolve_separator(separator: str | None, head: bytes) -> str:
    """The field separator: ``separator`` when given (one ASCII character other than a quote or
    a line break, else a :class:`ParameterError`), else the one a first line ``sep=X`` names
    (Excel's hint, :mod:`crowdsafe.data.sep_line`), else the one sniffed from ``head``."""
    if separator is None:
        found = sep_line(head)
        return found.separator if found is not None else _sniff_separator(head)
    if not isinstance(separator, str) or len(separator) != 1 or not separator.isascii() or separator in '"\r\n':
        raise ParameterError(
            f"the separator parameter must be one ASCII character other than a quote or a line break "
            f"(such as ',', ';', '|' or a tab), got {separator!r}", parameter="separator")
    return separator


def csv_options(
    path: Path,
    *,
    separator: str | None,
    missing_tokens: Sequence[str],
    text_columns: Sequence[str],
    has_header: bool,
    head: bytes,
    decimal_comma: bool | None = None,
) -> tuple[dict[str, Any], bool]:
    """The options Polars reads a CSV file with (eagerly here, lazily in
    :mod:`crowdsafe.data.streaming`), and whether the column names are given to Polars (the
    header is then skipped as a row: a file without rows is "a header but no rows").

    The path is read as it is written, never as a glob pattern (``data[1].csv`` is that file);
    the line break is the file's own (:func:`crowdsafe.data.line_endings.line_ending`, which
    refuses mixed line endings); ``decimal_comma`` (None: nothing said) sets the reading of
    numbers written with a decimal comma (:mod:`crowdsafe.data.decimal_comma`); the columns of
    ``text_columns`` and those named like a postal code (``zip``, ``PLZ``, ``code postal``...) are
    read as text. The names are crowdsafe's reading of the header (:func:`header_names`) when the
    stable rule renames one or a name holds a quote (Polars keeps a doubled quote ``""`` in a
    header name doubled: ``"quo""te"`` would be ``quo""te``, not ``quo"te``)."""
    if not head.strip():
        raise InputError(f"{path} is empty")
    if has_header and len(head) >= HEAD_BYTES and b"\n" not in head and b"\r" not in head:
        # the names are read from the first 64 KiB: a longer header would be read cut short
        raise InputError(f"the header of {path} is longer than {HEAD_BYTES // 1024} KiB (thousands of columns): "
                         "crowdsafe reads headers up to that size; keep the columns the run needs")
    eol = line_ending(head, str(path), complete=len(head) < HEAD_BYTES)
    separator = resolve_separator(separator, head)
    raw = header_names(head, separator) if has_header else []
    names, renames = stable_names(raw)
    codes = [n for n in names if is_code_name(n)]  # postal codes as text: 01067 stays 01067
    options: dict[str, Any] = dict(
        separator=separator,
        null_values=list(missing_tokens),
        has_header=has_header,
        schema_overrides={c: pl.String for c in [*text_columns, *codes]} or None,
        try_parse_dates=True,
        encoding="utf8",
        eol_char=eol,
        glob=False,
    )
    if comma.mode(separator, decimal_comma) == "on":
        options["decimal_comma"] = True  # Polars then reads '1.234' as text, never as 1.234
    renamed = any(r.reason != "blanks around the name" for r in renames) if has_header else False
    if renamed:  # Polars' own renaming (a_duplicated_0) is replaced by the documented stable rule
        print(note_line(describe_renames(str(path), renames)), file=sys.stderr)
    named = renamed or any('"' in name for name in raw)
    if named:
        options.update(has_header=False, skip_rows=1, new_columns=names)
    excel = sep_line(head)
    if excel is not None:  # Excel's 'sep=;' first line: skipped (Polars takes one of skip_rows/skip_lines)
        print(note_line(sep_note(str(path), excel)), file=sys.stderr)
        options["skip_lines"] = 1 + (header_lines(head, separator) if options.pop("skip_rows", 0) else 0)
    return options, named


def wide_integer_columns(schema: Mapping[str, pl.DataType]) -> list[str]:
    """The columns of a CSV file's inferred ``schema`` that Polars read as integers wider than 64
    bits (whole numbers beyond int64: NumPy has no such type). The CSV readers read them as text."""
    return [name for name, dtype in schema.items() if dtype in (pl.Int128, pl.UInt128)]


def _read_csv(
    path: Path,
    *,
    separator: str | None,
    missing_tokens: Sequence[str],
    text_columns: Sequence[str],
    has_header: bool,
    head: bytes,
    decimal_comma: bool | None,
    empty: bool = False,
) -> tuple[pl.DataFrame, comma.Mode]:
    options, named = csv_options(path, separator=separator, missing_tokens=missing_tokens,
                                 text_columns=text_columns, has_header=has_header, head=head,
                                 decimal_comma=decimal_comma)
    reading = comma.mode(options["separator"], decimal_comma)
    # read without Polars' slow date inference; only the columns that could be dates read with it
    frame, window = _polars_read(path, {**options, "try_parse_dates": False}, has_header, named, empty)
    text, decimal = options["schema_overrides"] or (), options.get("decimal_comma", False)
    dated = with_dates(frame, window, text, decimal_comma=decimal) if frame.height else frame
    frame = dated if dated is not None else _polars_read(path, options, has_header, named, empty)[0]
    if frame.width > 1 and frame.get_column(frame.columns[-1]).null_count():
        # Polars reads a row shorter than the header with nulls for the fields it lacks: one leaves
        # the last column missing, so only then are the rows' widths read (from the bytes)
        refuse_ragged_rows(path, options["separator"], has_header)
    return frame, reading


def _polars_read(path: Path, options: dict[str, Any], has_header: bool, named: bool,
                 empty: bool) -> tuple[pl.DataFrame, int | None]:
    """The frame Polars reads with ``options``, and the rows its types were inferred from (None:
    all). The refusals name the file (no Polars message is passed on whole)."""
    separator = options["separator"]
    window: int | None = 10_000
    try:
        try:
            frame = pl.read_csv(path, infer_schema_length=window, **options)
        except pl.exceptions.ComputeError as exc:
            if any(word in str(exc).lower() for word in ("utf-8", "utf8", "more fields")):
                raise
            # a value late in the file does not fit the type guessed from the first rows
            window = None
            frame = pl.read_csv(path, infer_schema_length=window, **options)
    except pl.exceptions.NoDataError:
        if named and empty:  # a header and no rows (the names given, the header skipped as a row):
            # the columns as text, as Polars reads such a file when it reads the header itself
            return pl.DataFrame(schema=dict.fromkeys(options["new_columns"], pl.String)), window
        raise InputError(f"{path} has a header but no rows" + EMPTY_TABLE if named else f"{path} is empty") from None
    except pl.exceptions.ComputeError as exc:
        if utf8_complaint(exc):
            raise InputError(f"{path} {NOT_UTF8}") from None
        first = first_line(exc)
        # a row longer than the header (or, with the names given, a first row of another width)
        raise (ragged_row_error(path, separator, has_header)
               or InputError(f"cannot parse {path} as CSV: {first}")) from None
    except pl.exceptions.PolarsError as exc:
        first = first_line(exc)
        raise (ragged_row_error(path, separator, has_header)
               or InputError(f"cannot read {path} as CSV: {first}")) from None
    return frame, window


def ragged_row_error(path: Path, separator: str | None = None, has_header: bool = True, *,
                     custodian: bool = True) -> InputError | None:
    """The refusal of the CSV file at ``path`` when a row has more or fewer fields than its header
    (the first row when ``has_header`` is False), naming the first such row's line
    (:mod:`crowdsafe.data.row_widths`); None when every row has the header's fields or the file
    cannot be read again (the caller's message then stands). ``separator``: None, sniffed.
    ``custodian``: the file is the custodian's data, so the line named is a fact about it and the
    message ends with :data:`~crowdsafe.errors.CUSTODIAN_REFUSAL` (docs/privacy-boundary.md); False
    for a published table (a release or view, public as it is)."""
    import pyarrow as pa

    try:
        kind, head = sniff_format(path)
        if kind == PARQUET:
            return None
        separator = resolve_separator(separator, head)
        eol = line_ending(head, str(path), complete=len(head) < HEAD_BYTES)
        excel = sep_line(head)
        chunks = file_chunks(path, kind if kind in (GZIP, ZSTD) else None)
        if excel is not None:  # Excel's 'sep=;' line is no record: the header is the next line
            chunks = _skipped(chunks, excel.length)
        found = first_ragged(chunks, separator=separator, eol=eol)
    except (CrowdsafeError, OSError, pa.ArrowException):
        return None
    if found is None:
        return None
    line, fields, width, empty = found
    line += excel is not None
    first = "the header" if has_header else "the first row"
    label = CUSTODIAN_REFUSAL if custodian else ""
    if empty:  # a blank line is no row (it was read as one of missing values): said so, where it is
        return InputError(f"cannot parse {path} as CSV: line {line} is empty where {first} has {width} fields "
                          f"(a blank line is no row: remove it){label}")
    what = f"has {fields} field{'' if fields == 1 else 's'}"
    return InputError(f"cannot parse {path} as CSV: line {line} {what} where {first} has {width} (a ragged row)"
                      f"{label}")


def _skipped(chunks: Iterator[bytes], count: int) -> Iterator[bytes]:
    """``chunks`` without their first ``count`` bytes."""
    for chunk in chunks:
        if count >= len(chunk):
            count -= len(chunk)
            continue
        yield chunk[count:]
        count = 0


def refuse_ragged_rows(path: Path, separator: str | None = None, has_header: bool = True, *,
                       custodian: bool = True) -> None:
    """Raise :func:`ragged_row_error`'s refusal, if any."""
    error = ragged_row_error(path, separator, has_header, custodian=custodian)
    if error is not None:
        raise error


def with_written_names(frame: FrameT, path: str | os.PathLike[str], separator: str = ",") -> FrameT:
    """``frame`` (read by Polars from the CSV file at ``path``, or a scan of it) with its column
    names as the header writes them when one holds a double quote: Polars keeps its doubling
    (``"quo""te"`` read as ``quo""te``), :func:`header_names` reads it as written. For the readers
    of releases and views, which read every cell as text."""
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
    names = header_names(head, separator)
    columns = frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns
    if not any('"' in n for n in names) or len(names) != len(columns):
        return frame
    return frame.rename(dict(zip(columns, names)))


def header_names(head: bytes, separator: str | None = None) -> list[str]:
    """The column names of a CSV file's header line (the first record of ``head``), as written
    (the separator sniffed from the line when not given)."""
    separator = resolve_separator(separator, head)
    text = without_sep_line(head).decode("utf-8", errors="replace").removeprefix("\ufeff")
    try:
        return next(csv.reader(io.StringIO(text, newline=""), delimiter=separator), [])  # any line break
    except csv.Error:
        return []


def header_lines(head: bytes, separator: str) -> int:
    """The physical lines of the header record of ``head`` (its ``sep=`` line not counted): more
    than one when a quoted name holds a line break."""
    text = without_sep_line(head).decode("utf-8", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    try:
        next(reader, None)
    except csv.Error:
        return 1
    return max(reader.line_num, 1)


def tidy_text(frame: pl.DataFrame, declared: set[str], reading: comma.Mode = "off") -> pl.DataFrame:
    """Strip blanks around text values; undeclared text columns holding only numbers become numeric
    (numbers written with a decimal comma too, as ``reading`` says: :mod:`crowdsafe.data.decimal_comma`),
    except those named like a postal code (:func:`~crowdsafe.data.column_words.is_code_name`: ``zip``,
    ``PLZ``, ``CAP``...), kept as text so that leading zeros survive (a schema that declares one
    numeric converts it when the table is coerced).

    Files such as Adult separate fields by ', ', which leaves a blank before every value.
    """
    return tidied_text(frame, declared, reading)[0]


def tidied_text(frame: pl.DataFrame, declared: set[str], reading: comma.Mode = "off") -> tuple[pl.DataFrame, list[str]]:
    """:func:`tidy_text`, and the columns it read as numbers written with a decimal comma. Every
    decision depends on the set of a column's values only (so the distinct values decide as the
    rows do, :mod:`crowdsafe.data.streamed_table`)."""
    stripped = [c.strip() for c in frame.columns]
    if stripped != frame.columns and len(set(stripped)) == len(stripped):
        frame = frame.rename(dict(zip(frame.columns, stripped)))
    text = [c for c, t in frame.schema.items() if t == pl.String]
    if not text:
        return frame, []
    frame = frame.with_columns(pl.col(text).str.strip_chars())
    declared = declared | {c for c in text if is_code_name(c)}
    commas = comma.columns(frame, declared, reading)
    numeric = []
    for column in text:
        if column in declared or (reading == "on" and column not in commas):  # "on": '1.5' is not a number
            continue
        series = frame.get_column(column)
        if column in commas:
            series = series.to_frame().select(comma.number_text(pl.col(column))).to_series()
        for dtype in (pl.Int64, pl.Float64):
            cast = series.cast(dtype, strict=False)
            if cast.null_count() == series.null_count() and series.null_count() < len(series):
                numeric.append(cast)
                break
    return (frame.with_columns(numeric) if numeric else frame), commas


def as_frame(data: Any) -> pl.DataFrame | None:
    """``data`` as a Polars frame if it is a Polars (eager or lazy) or pandas frame, else None."""
    if isinstance(data, pl.DataFrame):
        return data
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    module = type(data).__module__
    if module.startswith("pandas"):
        import pandas as pd

        if isinstance(data, pd.DataFrame):
            from crowdsafe.data.pandas_frames import from_pandas

            return from_pandas(data)  # a column that cannot be converted is named
    return None


#: The kinds of frame a caller gets back (:func:`frame_kind`): what the data was given as.
POLARS, PANDAS = "polars", "pandas"


def frame_kind(data: Any) -> str:
    """The kind of frame a caller who gave ``data`` gets back: ``"pandas"`` for a pandas DataFrame
    ("pandas in gives pandas out"), else ``"polars"`` (a Polars frame, a file, a bundled name, a
    Dataset). Decided from the type of the object, never from its rows."""
    if type(data).__module__.startswith("pandas"):
        import pandas as pd

        if isinstance(data, pd.DataFrame):
            return PANDAS
    return POLARS


def in_kind(frame: Any, kind: str) -> Any:
    """``frame`` as ``kind`` (:func:`frame_kind`): a Polars frame becomes a pandas one for
    ``"pandas"``; anything else (a Polars frame for ``"polars"``, a Spark DataFrame) is returned as it is."""
    if kind == PANDAS and isinstance(frame, pl.DataFrame):
        return _to_pandas(frame)
    return frame


def _to_pandas(frame: pl.DataFrame) -> Any:
    """``frame`` as a pandas DataFrame, an integer or Boolean column holding missing values as
    pandas' nullable type (``Int64``, ``boolean``), not float64 with NaN (``to_pandas``'s default)."""
    import pandas as pd

    table = frame.to_pandas()
    nullable = [c for c in frame.columns if frame[c].null_count() and (frame[c].dtype.is_integer()
                                                                        or frame[c].dtype == pl.Boolean)]
    if nullable:
        mapper = {dtype: getattr(pd, f"{name}Dtype")() for dtype, name in _NULLABLE.items()}
        typed = frame.select(nullable).to_pandas(types_mapper=lambda arrow: mapper.get(str(arrow)))
        for column in nullable:
            table[column] = typed[column]
    return table


_NULLABLE = {"int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64", "uint8": "UInt8",
             "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64", "bool": "Boolean"}


@dataclass(frozen=True)
class TableRead:
    """A table file as read (:func:`read_file`): its usable columns, the columns read as numbers
    written with a decimal comma (an ``"auto"`` read: :mod:`crowdsafe.data.decimal_comma`), and
    the columns set aside for their type, with what each is (:mod:`crowdsafe.data.column_types`)."""

    frame: pl.DataFrame
    decimal_comma: tuple[str, ...] = ()
    unusable: Mapping[str, str] = field(default_factory=dict)
    #: the columns whose reading an undeclared "auto" read left to the data (:func:`comma.undeclared`)
    decided: tuple[str, ...] = ()
    csv: bool = True


def read_file(
    path: str | os.PathLike[str],
    *,
    separator: str | None = None,
    missing_tokens: Sequence[str] = DEFAULT_MISSING_TOKENS,
    text_columns: Sequence[str] = (),
    has_header: bool = True,
    unescape_formulas: bool = False,
    decimal_comma: bool | None = None,
    empty: bool = False,
) -> TableRead:
    """:func:`read_table`, with the columns of a type crowdsafe cannot use set aside instead of
    refused, and which columns were read with a decimal comma (the note is printed here).
    ``empty``: a CSV file with a header and no rows is read (no row), not refused."""
    path, missing_tokens = Path(path), strings(missing_tokens, "missing_tokens", "a missing-value token")
    check_input_path(path)  # a name too long for the system is said so (Path.exists raises OSError)
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if path.is_dir():
        raise InputError(f"{path} is a folder, expected a CSV or Parquet file")
    kind, head = sniff_format(path)
    suffix = _suffix(path)
    if kind == PARQUET:
        try:
            frame = pl.read_parquet(path, glob=False)
        except (pl.exceptions.PolarsError, OSError) as exc:
            first = first_line(exc)
            raise InputError(f"cannot read {path} as Parquet: {first}") from None
        names, renames = stable_names(frame.columns)
        if renames:
            print(note_line(describe_renames(str(path), renames)), file=sys.stderr)
            frame = frame.rename(dict(zip(frame.columns, names)))
        frame, unusable = usable_frame(frame, str(path))
        refuse_nul(frame, path)
        return TableRead(frame, (), unusable, csv=False)
    if kind in (GZIP, ZSTD) or suffix in (*CSV_SUFFIXES, *PARQUET_SUFFIXES) or suffix == "":
        frame, reading = _read_csv(path, separator=separator, missing_tokens=missing_tokens,
                                   text_columns=text_columns, has_header=has_header, head=head,
                                   decimal_comma=decimal_comma, empty=empty)
        wide = wide_integer_columns(frame.schema)
        if wide:  # read again with those columns as text (as written, so exact)
            text_columns = [*text_columns, *wide]
            frame, reading = _read_csv(path, separator=separator, missing_tokens=missing_tokens,
                                       text_columns=text_columns, has_header=has_header, head=head,
                                       decimal_comma=decimal_comma, empty=empty)
            print(note_line(wide_integer_note(str(path), wide)), file=sys.stderr)
        short = short_years.columns(frame)
        if short:  # dates with a two-digit year (13.03.23 read as the year 23): text, as written
            text_columns = [*text_columns, *short]
            frame, reading = _read_csv(path, separator=separator, missing_tokens=missing_tokens,
                                       text_columns=text_columns, has_header=has_header, head=head,
                                       decimal_comma=decimal_comma, empty=empty)
            print(note_line(short_years.note(str(path), short)), file=sys.stderr)
        if kind in (GZIP, ZSTD):  # the head was sniffed: a NUL further on (ds6 #3)
            refuse_nul(frame, path)
        else:
            refuse_nul_in_file(path, HEAD_BYTES)
        if unescape_formulas:
            frame = unescape_frame(frame)
        frame, commas = tidied_text(zone_free(frame, str(path)), set(text_columns), reading)
        decided = tuple(comma.undeclared(frame.columns, set(text_columns), reading))
        if commas and reading == "auto":
            print(note_line(comma.note(str(path), commas, comma.points(frame, commas))), file=sys.stderr)
        return TableRead(frame, tuple(commas), decided=decided)
    raise InputError(f"cannot tell the format of {path}: use a .csv or .parquet file name")


def read_table(path: str | os.PathLike[str], **options: Any) -> pl.DataFrame:
    """Read a CSV or Parquet file into a Polars frame (no schema, no missing-value policy).
    ``options``: :func:`read_file`'s (``separator``, ``missing_tokens``, ``text_columns``,
    ``has_header``, ``unescape_formulas``, ``decimal_comma``).

    ``unescape_formulas``: the file is a formula-safe CSV written by crowdsafe (a release, a
    view); undo its escape (``'=1+1`` -> ``=1+1``, :func:`crowdsafe.csv_safety.unescape_frame`).

    The format is read from the file's first bytes, not its name (:func:`sniff_format`): a
    gzip- or zstd-compressed CSV and a Parquet file are read whatever they are called; an Excel
    workbook, another archive or binary file, or UTF-16 text is refused with one line saying
    what it is and how to convert it. The path is literal (never a glob pattern). CSV: the line
    endings are the file's own (mixed ones refused), and ``decimal_comma`` (None: a
    ``;``-separated file's numbers written with a decimal comma are found, with a note; True /
    False: always / never) reads numbers written ``1.234,5``. A Parquet column of a type
    crowdsafe cannot use (nested, binary, duration, time) is refused in one line
    (:mod:`crowdsafe.data.column_types`; :func:`crowdsafe.data.load` drops it instead when the
    run does not need it).
    """
    read = read_file(path, **options)
    for name, kind in read.unusable.items():
        raise InputError(f"column '{name}' of {path} is {kind}, which crowdsafe cannot use; "
                         "drop it from the file (or save the table without it)")
    return read.frame


def write(data: Dataset | pl.DataFrame, path: str | os.PathLike[str], *, escape_formulas: bool = True) -> Path:
    """Write a Dataset or frame to CSV or Parquet (by the file name's extension), atomically.

    CSV text cells and column names that a spreadsheet would run as a formula are written with a
    leading apostrophe unless ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`);
    Parquet keeps the raw values.
    """
    frame = data.frame if isinstance(data, Dataset) else data
    if not isinstance(frame, pl.DataFrame):
        frame = as_frame(data)
        if frame is None:
            raise ParameterError(f"cannot write a {type(data).__name__}; give a Dataset or a DataFrame")
    path = Path(path)
    suffix = _suffix(path)
    if suffix not in (*PARQUET_SUFFIXES, ".csv", ".tsv"):
        raise ParameterError(f"cannot tell the output format of {path}: use a .csv or .parquet file name")
    from crowdsafe.output_guard import replaced_first  # a release replaced: its certificate and report go

    with atomic_paths([path], remove_first=replaced_first(path)) as (tmp,):
        if suffix in PARQUET_SUFFIXES:
            frame.write_parquet(tmp)
        else:
            write_csv(frame, tmp, escape_formulas=escape_formulas, separator="\t" if suffix == ".tsv" else ",")
    return path
