"""The table fingerprint behind :meth:`Dataset.fingerprint <crowdsafe.data.Dataset.fingerprint>`:
a digest of a table's content as a multiset of rows, in which each value counts by what it is,
not by the type a schema declared for its column.

**What counts as the same content.** The ledger knows a table by this digest, so a table must
keep it however its schema types a column: a custodian who reviews a drafted schema and declares
``age`` ``real`` instead of ``integer``, or a postal code ``categorical`` instead of numeric, has
the same people's data, and must find the budget they spent. Each value is therefore put in a
canonical form before it is hashed, one of five kinds:

- a **number**: any numeric column, and text that reads as a number the way a declared numeric
  column reads it (blanks stripped; Polars' cast to an integer, else to a float; a number written
  with a decimal comma, ``1,5``). A whole number within 64 bits is that integer (the integer 30,
  the real 30.0 and the texts ``"30"``, ``"030"``, ``"30.0"`` and ``"3e1"`` are one value: so a
  CSV column of ``030`` cells read as text or as integers is one content); another number is its
  float64 value. NaN counts as missing (every missing-value policy reads it so);
- a **boolean**: a boolean column, and the texts ``true`` / ``false`` in any case;
- a **date**: a date column, a datetime column *by its date* (a declared ``date`` loads a datetime
  column as its dates, so the time of day cannot count, or that declaration would be new data), and
  text that reads as a date or a datetime (Polars' date, then datetime, reading with its own
  format inference, as a declared ``date`` column is read);
- **text**: any other value (String, Categorical and Enum alike), hashed by its rank among the
  column's distinct text values, which the column's header holds;
- **missing**.

**Unicode forms.** Text values and column names count in Unicode NFC: ``Zürich`` written with
the composed ``ü`` (NFC) or as ``u`` and a combining diaeresis (NFD, as macOS tools and some
exporters save it) is one value, and ``âge`` one column name (ds6 #4: the same rows re-saved in
NFD got a fresh budget). The normal form is taken for hashing only, of the distinct values
(:func:`nfc_dictionary`: skipped when every value is ASCII, and when every value is NFC already,
which leaves the identity of a table written in NFC exactly as it was before).

The identity is thus *coarser* than the typed table, never finer: the same file read under any
schema (any declared types, text columns or not) gives one identity, and two tables that differ
only in how a value is spelt (``030`` and ``30``, ``True`` and ``true``, a time of day) share one
identity and so one budget, which errs on the side of privacy. What a declaration cannot turn
into the same value stays apart: a number written with a ``.`` thousands separator in a file read
with a decimal comma (``1.234`` is 1234 declared numeric, 1.234 read back from text), a number
whose thousands are grouped by spaces (``29 824,00`` is 29824 read with ``--decimal-comma``, text
otherwise: counting it as a number would change the identity earlier versions recorded), a date
written in digits only (``20200105`` is a number) and a date in a format Polars' inference does
not read. Roles, hierarchies, the file's name and its format (CSV or Parquet) do not count, nor
does the order of the columns (a schema that lists its columns in another order puts the table's
columns in that order): they are hashed in the order of their names.

Each row's hash is a polynomial in its columns' mixed values, mixed again; two sums modulo 2^64
over the rows (of the hash and of a second bijection of it) make a 128-bit multiset digest: the
rows' order does not count. The earlier digest (``crowdsafe-dataset-multiset-v3``, which hashed
each column's declared type with its raw values) is kept in
:mod:`crowdsafe.data.legacy_fingerprint`, so that a ledger written before this one can still be
matched (:meth:`crowdsafe.privacy.ledger.Ledger.identity_of`).
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import decimal_comma as comma

FINGERPRINT_VERSION = b"crowdsafe-dataset-multiset-v4"

_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_START = np.uint64(0x9E3779B97F4A7C15)
_SECOND = np.uint64(0xD1B54A32D192ED03)
_STEP = np.uint64(0x100000001B3)
_NULL = np.uint64(0x5851F42D4C957F2D)
# Each kind but the integers goes through its own second bijection, so that no value of one kind
# hashes like a value of another by construction (a float's bits are an integer too).
_FLOAT = np.uint64(0x2545F4914F6CDD1D)
_BOOL = np.uint64(0x9FB21C651E98DF25)
_DATE = np.uint64(0xC2B2AE3D27D4EB4F)
_TEXT = np.uint64(0x165667B19E3779F9)
_INT64_LOW, _INT64_HIGH = -(2.0**63), 2.0**63

#: Rows hashed at a time by the fingerprint: every pass over a block stays in the CPU's caches.
_BLOCK_ROWS = 1 << 16


def is_text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))


def mix(values: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser, in place on a uint64 array (wrapping arithmetic): a fixed
    bijection that spreads every input bit over the output. Stable across versions and
    machines, unlike Polars' row hashes."""
    values ^= values >> np.uint64(30)
    values *= _MIX_1
    values ^= values >> np.uint64(27)
    values *= _MIX_2
    values ^= values >> np.uint64(31)
    return values


def _tagged(values: np.ndarray, tag: np.uint64) -> np.ndarray:
    """``values`` (uint64, a fresh array: changed in place) through the bijection of one kind."""
    mix(values)
    values ^= tag
    return mix(values)


def _integers(values: np.ndarray) -> np.ndarray:
    """The hashes of integers (int64): the kind every whole number is hashed as."""
    return mix(values.astype(np.int64, copy=True).view(np.uint64) + np.uint64(1))


def _numbers(values: np.ndarray) -> np.ndarray:
    """The hashes of float64 numbers: a whole one within 64 bits as that integer, another by its
    bits; NaN as missing."""
    with np.errstate(invalid="ignore"):
        whole = (np.trunc(values) == values) & (values >= _INT64_LOW) & (values < _INT64_HIGH)
    if whole.all():
        return _integers(values.astype(np.int64))
    out = np.empty(len(values), dtype=np.uint64)
    out[whole] = _integers(values[whole].astype(np.int64))
    rest = ~whole
    out[rest] = _tagged((values[rest] + 0.0).view(np.uint64).copy(), _FLOAT)
    out[np.isnan(values)] = _NULL
    return out


def _days(values: np.ndarray, tag: np.uint64 = _DATE) -> np.ndarray:
    return _tagged(values.astype(np.int64).view(np.uint64).copy(), tag)


#: What a value that reads as a number (Polars' casts: digits, a sign, a point, NaN, infinity), a
#: boolean or a date must start with (blanks first allowed): anything else stays text.
_MAYBE_NOT_TEXT = r"(?i)^\s*(?:[-+]?(?:[0-9.]|nan|inf)|true\s*$|false\s*$)"


def canonical_values(dictionary: pl.Series) -> tuple[pl.Series, np.ndarray]:
    """A text column's distinct values (``dictionary``: sorted, no missing) in canonical form (the
    module's docstring): the sorted values that stay text, and each entry's hash (uint64)."""
    n = len(dictionary)
    hashes = np.zeros(n, dtype=np.uint64)
    text = dictionary.cast(pl.String)
    if not n:
        return text, hashes
    if not text.str.contains(_MAYBE_NOT_TEXT).any():  # nothing a number, a boolean or a date: all text
        return text, _tagged(np.arange(1, n + 1, dtype=np.uint64), _TEXT)
    value = pl.col("v").str.strip_chars()
    with_comma = value.str.contains(comma.PATTERN) & value.str.contains(",", literal=True)
    read = text.to_frame("v").select(  # one Polars call: it runs in parallel, without the GIL
        value.cast(pl.Int64, strict=False).alias("whole"),
        pl.when(with_comma).then(comma.number_text(value)).otherwise(value).cast(pl.Float64, strict=False)
        .alias("real"),
        value.str.to_lowercase().alias("lower"),
        value.str.contains(r"^[0-9]{1,4}[-/.][0-9]").alias("datelike"),
    ).select(pl.col("whole").is_not_null().alias("is_int"), pl.col("whole").fill_null(0),
             pl.col("real").is_not_null().alias("is_real"), pl.col("real").fill_null(0.0),
             (pl.col("lower") == "true").alias("true"), (pl.col("lower") == "false").alias("false"), "datelike")
    columns = {name: read.get_column(name).to_numpy() for name in read.columns}
    is_int = columns["is_int"]
    is_real = columns["is_real"] & ~is_int
    if is_int.any():
        hashes[is_int] = _integers(columns["whole"][is_int])
    if is_real.any():
        hashes[is_real] = _numbers(columns["real"][is_real])
    rest = ~(is_int | is_real)
    for word, code in (("true", 2), ("false", 1)):
        found = columns[word] & rest
        if found.any():
            hashes[found] = _tagged(np.full(int(found.sum()), code, dtype=np.uint64), _BOOL)
            rest &= ~found
    candidates = rest & columns["datelike"]
    if candidates.any():
        dated = _dates_of(text.filter(pl.Series(candidates)).str.strip_chars())
        is_date = np.zeros(n, dtype=np.bool_)
        is_date[np.flatnonzero(candidates)] = dated.is_not_null().to_numpy()
        if is_date.any():
            hashes[is_date] = _days(dated.drop_nulls().to_physical().to_numpy())
        rest &= ~is_date
    kept = text.filter(pl.Series(rest)) if not rest.all() else text  # sorted, as the dictionary is
    hashes[rest] = _tagged(np.arange(1, len(kept) + 1, dtype=np.uint64), _TEXT)
    return kept, hashes


def _dates_of(text: pl.Series) -> pl.Series:
    """``text`` read as dates (None where it is not one): a date, else a datetime's date, each by
    Polars' own format inference (as a declared ``date`` column is read)."""
    try:
        dates = text.str.to_date(strict=False)
    except pl.exceptions.PolarsError:
        dates = pl.Series(text.name, [None] * len(text), dtype=pl.Date)
    if dates.null_count():
        try:
            times = text.str.to_datetime(strict=False).dt.date()
        except pl.exceptions.PolarsError:
            return dates
        dates = dates.fill_null(times)
    return dates


def text_codes(series: pl.Series) -> tuple[pl.Series, np.ndarray, np.ndarray]:
    """Canonical form of a text column: its sorted distinct values, a table of ranks (UInt32) and,
    per row, an index into the table: the rank of the row's value among the distinct values is
    ``table[index]``. A missing value's entry is arbitrary (the fingerprint replaces it).

    A Categorical or Enum column is indexed by its physical codes (the table is over the codes);
    only its distinct values are ever turned into strings.
    """
    physical = series.to_physical() if isinstance(series.dtype, (pl.Categorical, pl.Enum)) else None
    high: Any = physical.max() if physical is not None else None  # the largest physical code (an int)
    if physical is not None and high is not None and int(high) < 4 * len(series) + (1 << 16):
        # the physical codes present (a table of every code, no hashing), then only those made
        # text; a missing value gets code high + 1 (rank 0)
        codes = physical.fill_null(int(high) + 1).to_numpy() if physical.null_count() else physical.to_numpy()
        seen = np.zeros(int(high) + 2, dtype=np.bool_)
        seen[codes] = True
        present = np.flatnonzero(seen[:-1])
        values = pl.Series(series.name, present, dtype=pl.UInt32).cat.to(series.dtype).cast(pl.String)
        lookup = np.zeros(len(seen), dtype=np.uint32)
        lookup[present] = values.rank("ordinal").to_numpy().astype(np.uint32) - 1
        return values.sort(), lookup, codes
    # Distinct values first (small), so a Categorical column is never expanded to strings.
    distinct = series.drop_nulls().unique()
    dictionary = distinct.cast(pl.String).sort()
    if isinstance(series.dtype, (pl.Categorical, pl.Enum)) and len(distinct):
        distinct_codes = distinct.to_physical().to_numpy().astype(np.int64)
        lookup = np.zeros(int(distinct_codes.max()) + 1, dtype=np.uint32)
        lookup[distinct_codes] = distinct.cast(pl.String).rank("ordinal").to_numpy().astype(np.uint32) - 1
        return dictionary, lookup, series.to_physical().fill_null(0).to_numpy()
    enum_codes = series.cast(pl.Enum(dictionary.to_list())).to_physical().cast(pl.UInt32)
    return dictionary, np.arange(max(len(dictionary), 1), dtype=np.uint32), enum_codes.fill_null(0).to_numpy()


def nfc_name(name: str) -> str:
    """A column name as the fingerprint hashes and orders it: in Unicode NFC (the module's docstring)."""
    return name if name.isascii() else unicodedata.normalize("NFC", name)


def nfc_dictionary(dictionary: pl.Series) -> tuple[pl.Series, np.ndarray | None]:
    """A text column's sorted distinct values (``dictionary``) in Unicode NFC, sorted and distinct
    again (two forms of one value merge), and the new rank of each old entry; ``None`` in place of
    the ranks when nothing changes (all ASCII, or all NFC already: the dictionary is returned as
    it is, so the identity of a table in NFC is unchanged)."""
    if not len(dictionary) or not (dictionary.str.len_bytes() != dictionary.str.len_chars()).any():
        return dictionary, None  # every value ASCII
    normal = dictionary.str.normalize("NFC")
    if normal.equals(dictionary):
        return dictionary, None
    merged = normal.unique().sort()
    return merged, merged.search_sorted(normal).to_numpy().astype(np.uint32)


def string_bytes(strings: pl.Series) -> list[bytes]:
    """The strings' UTF-8 lengths (little-endian int64) and their bytes end to end (no nulls)."""
    lengths = strings.str.len_bytes().cast(pl.Int64).to_numpy().astype("<i8")
    joined = strings.str.join("").item() if len(strings) else ""
    return [lengths.tobytes(), joined.encode("utf-8")]


@dataclass(frozen=True)
class ColumnValues:
    """A column's mixed uint64 value of each row, made a block of rows at a time: with ``table``,
    ``table[index[row]]``; otherwise by ``kind``: ``"int"``, ``_mix(index[row] + 1)`` (``index``:
    uint64 bits); ``"number"``, :func:`_numbers` (``index``: float64); ``"bool"`` / ``"date"``,
    that kind's hash of ``index`` (int64). ``missing`` rows (a bool mask, or None) take a constant."""

    index: np.ndarray
    table: np.ndarray | None
    missing: np.ndarray | None
    kind: str = "int"

    def rows(self, start: int, stop: int) -> np.ndarray:
        """The values of rows start..stop − 1 (a fresh array: the column's own memory is not touched)."""
        part = self.index[start:stop]
        if self.table is not None:
            values = self.table[part]
        elif self.kind == "int":
            values = mix(part + np.uint64(1))
        elif self.kind == "number":
            values = _numbers(part)
        else:
            values = _days(part, _BOOL if self.kind == "bool" else _DATE)
        if self.missing is not None:
            values[self.missing[start:stop]] = _NULL
        return values


class _Header:
    """A column's header digest: each part length-prefixed."""

    def __init__(self) -> None:
        self.digest = hashlib.blake2b(digest_size=32)

    def put(self, part: bytes | np.ndarray) -> None:
        view = (part.data if isinstance(part, np.ndarray) else memoryview(part)).cast("B")
        self.digest.update(view.nbytes.to_bytes(8, "little"))
        self.digest.update(view)


def text_header(name: str, kept: pl.Series) -> bytes:
    """The header of a column named ``name`` whose values that stay text are ``kept`` (sorted)."""
    header = _Header()
    header.put(nfc_name(name).encode())
    header.put(b"value")
    for part in string_bytes(kept):
        header.put(part)
    return header.digest.digest()


def is_text_column(dtype: pl.DataType) -> bool:
    """Whether the fingerprint reads a column of ``dtype`` through its distinct values (text,
    Categorical, Enum and any type that is not a number, a date, a datetime or a boolean)."""
    return is_text(dtype) or not (dtype.is_numeric() or dtype == pl.Date or isinstance(dtype, pl.Datetime)
                                  or dtype == pl.Boolean)


def column_values(series: pl.Series) -> tuple[bytes, ColumnValues]:
    """A column in canonical form (module docstring): its header bytes (the name and the sorted
    values that stay text) and its :class:`ColumnValues`. Both depend only on the multiset of the
    column's values, not on their order, nor on the column's type where the values are the same."""
    dtype = series.dtype
    missing = series.is_null().to_numpy() if series.null_count() else None
    if is_text_column(dtype):
        dictionary, ranks, index = text_codes(series if is_text(dtype) else series.cast(pl.String))
        dictionary, merged = nfc_dictionary(dictionary)
        if merged is not None:
            ranks = merged[ranks]
        kept, hashes = canonical_values(dictionary)
        table = (hashes if len(hashes) else np.zeros(1, dtype=np.uint64))[ranks]
        return text_header(series.name, kept), ColumnValues(index, table, missing)
    header = text_header(series.name, pl.Series([], dtype=pl.String))
    if dtype == pl.Boolean:
        return header, ColumnValues(series.cast(pl.Int64).fill_null(0).to_numpy() + 1, None, missing, "bool")
    if dtype == pl.Date or isinstance(dtype, pl.Datetime):
        days = series.dt.date() if dtype != pl.Date else series  # a datetime by its date
        index = days.to_physical().cast(pl.Int64).fill_null(0).to_numpy()
        return header, ColumnValues(index, None, missing, "date")
    if dtype.is_integer():
        held = series.cast(pl.Int64, strict=False)  # beyond 64 bits: read as a float below
        if held.null_count() == series.null_count():
            return header, ColumnValues(held.fill_null(0).to_numpy().view(np.uint64), None, missing, "int")
    numbers = series.cast(pl.Float64).fill_null(0.0).to_numpy()
    return header, ColumnValues(numbers, None, missing, "number")


def multiset_digest(frame: pl.DataFrame) -> str:
    """:meth:`Dataset.fingerprint <crowdsafe.data.Dataset.fingerprint>` (unkeyed) of the rows of
    ``frame``, as a multiset."""
    names = sorted(frame.columns, key=nfc_name)
    headers, sums = multiset_sums([frame.get_column(name) for name in names], column_values)
    return finish(FINGERPRINT_VERSION, frame.height, headers, sums)


def finish(version: bytes, rows: int, headers: Sequence[bytes], sums: Sequence[int]) -> str:
    """The digest (hex) of a version, a row count, the column headers and the two sums."""
    digest = hashlib.blake2b(version, digest_size=32)
    digest.update(str(rows).encode())
    for part in headers:
        digest.update(part)
    for total in sums:
        digest.update(total.to_bytes(8, "little"))
    return digest.hexdigest()


def multiset_sums(columns: Sequence[pl.Series], prepare: Any) -> tuple[list[bytes], list[int]]:
    """Headers of every column (``prepare``: a column's header and :class:`ColumnValues`) and two
    sums modulo 2^64 over the rows: of each row's hash h and of a second bijection of it (a
    128-bit multiset digest).

    A row's hash is a polynomial in its columns' mixed values (h = h·P + v, column by column,
    so the same value in another column counts differently), mixed once more so that the sum
    over rows cannot split into per-column sums; summing over rows forgets their order. Columns are put in
    canonical form in parallel threads (NumPy and Polars release the GIL); the rows are then
    hashed in blocks of ``_BLOCK_ROWS`` (sums modulo 2^64 add up block by block), the blocks split
    between threads."""
    workers = min(max(len(columns), 1), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        prepared = list(pool.map(prepare, columns))
        n = len(columns[0]) if columns else 0
        blocks = [(start, min(start + _BLOCK_ROWS, n)) for start in range(0, n, _BLOCK_ROWS)]
        shares = [blocks[i::workers] for i in range(workers)]
        partial = list(pool.map(lambda share: block_sums([values for _, values in prepared], share), shares))
    mask = (1 << 64) - 1
    return [header for header, _ in prepared], [sum(p[0] for p in partial) & mask, sum(p[1] for p in partial) & mask]


def block_sums(columns: Sequence[ColumnValues], blocks: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The two sums of :func:`multiset_sums` over the rows of ``blocks`` (Python integers, not reduced)."""
    first = second = 0
    for start, stop in blocks:
        rows = np.full(stop - start, _START, dtype=np.uint64)
        for column in columns:
            rows *= _STEP
            rows += column.rows(start, stop)
        mix(rows)  # the rows' polynomial hashes made non-linear before summing, so rows stay whole
        first += int(rows.sum(dtype=np.uint64))
        rows ^= _SECOND
        second += int(mix(rows).sum(dtype=np.uint64))
    return first, second
