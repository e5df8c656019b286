"""A :class:`Dataset` is a Polars frame plus its :class:`~crowdsafe.data.schema.Schema`,
the generalization hierarchies of its attributes, and the missing-value policy applied to it."""

from __future__ import annotations

import copy
import hashlib
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.encoding import EncodedColumn, encode_series, encode_with_hierarchy
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.data.missing import MissingReport
from crowdsafe.data.schema import AttributeType, Schema
from crowdsafe.errors import HierarchyError, SchemaError
from crowdsafe.identity import keyed_identity

_FINGERPRINT_VERSION = b"crowdsafe-dataset-multiset-v3"


def _is_text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))


def _text_codes(series: pl.Series) -> tuple[pl.Series, np.ndarray, np.ndarray]:
    """Canonical form of a text column: its sorted distinct values, a table of ranks (UInt32) and,
    per row, an index into the table: the rank of the row's value among the distinct values is
    ``table[index]``. A missing value's entry is arbitrary (the fingerprint replaces it).

    Hashing 4-byte ranks instead of the strings themselves keeps the fingerprint cheap on large
    tables, and makes String, Categorical and Enum columns with the same values agree. A
    Categorical or Enum column is indexed by its physical codes (the table is over the codes);
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


def _string_bytes(strings: pl.Series) -> list[bytes]:
    """The strings' UTF-8 lengths (little-endian int64) and their bytes end to end (no nulls)."""
    lengths = strings.str.len_bytes().cast(pl.Int64).to_numpy().astype("<i8")
    joined = strings.str.join("").item() if len(strings) else ""
    return [lengths.tobytes(), joined.encode("utf-8")]


_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_START = np.uint64(0x9E3779B97F4A7C15)
_SECOND = np.uint64(0xD1B54A32D192ED03)
_STEP = np.uint64(0x100000001B3)
_NULL = np.uint64(0x5851F42D4C957F2D)


def _mix(values: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser, in place on a uint64 array (wrapping arithmetic): a fixed
    bijection that spreads every input bit over the output. Stable across versions and
    machines, unlike Polars' row hashes."""
    values ^= values >> np.uint64(30)
    values *= _MIX_1
    values ^= values >> np.uint64(27)
    values *= _MIX_2
    values ^= values >> np.uint64(31)
    return values


#: Rows hashed at a time by the fingerprint: every pass over a block stays in the CPU's caches.
_BLOCK_ROWS = 1 << 16


@dataclass(frozen=True)
class _ColumnValues:
    """A column's mixed uint64 value of each row, made a block of rows at a time: with ``table``
    (text), ``table[index[row]]``; otherwise ``_mix(index[row] + 1)`` (``index``: the physical bits);
    ``missing`` rows (a bool mask, or None) take a constant."""

    index: np.ndarray
    table: np.ndarray | None
    missing: np.ndarray | None

    def rows(self, start: int, stop: int) -> np.ndarray:
        """The values of rows start..stop − 1 (a fresh array: the column's own memory is not touched)."""
        if self.table is not None:
            values = self.table[self.index[start:stop]]
        else:
            values = _mix(self.index[start:stop] + np.uint64(1))
        if self.missing is not None:
            values[self.missing[start:stop]] = _NULL
        return values


def _column_values(series: pl.Series) -> tuple[bytes, _ColumnValues]:
    """A column in canonical form: (header bytes, one uint64 per row, :class:`_ColumnValues`).

    The header holds the name, the kind and, for text, the sorted distinct values; each row's
    uint64 is its value's rank in that dictionary (text) or its physical bits (numbers, dates,
    booleans), mixed, with missing values mapped to a constant. Both depend only on the multiset
    of values, not on their order. Text ranks are mixed once per table entry, then gathered.
    """
    dtype = series.dtype
    header = hashlib.blake2b(digest_size=32)

    def put(part: bytes | np.ndarray) -> None:
        view = (part.data if isinstance(part, np.ndarray) else memoryview(part)).cast("B")
        header.update(view.nbytes.to_bytes(8, "little"))
        header.update(view)

    put(series.name.encode())
    put(b"text" if _is_text(dtype) else str(dtype.base_type()).encode())
    table: np.ndarray | None = None
    if _is_text(dtype) or not (dtype.is_numeric() or dtype.is_temporal() or dtype == pl.Boolean):
        dictionary, ranks, index = _text_codes(series if _is_text(dtype) else series.cast(pl.String))
        for part in _string_bytes(dictionary):
            put(part)
        table = _mix(ranks.astype(np.uint64) + np.uint64(1))
    else:
        physical = series.to_physical() if dtype != pl.Boolean else series.cast(pl.UInt8)
        raw = physical.fill_null(0).to_numpy()
        if raw.dtype.kind == "f":
            index = raw.astype(np.float64).view(np.uint64)
        else:
            index = raw.astype(np.int64, copy=False).view(np.uint64)
    missing = series.is_null().to_numpy() if series.null_count() else None
    return header.digest(), _ColumnValues(index, table, missing)


def _multiset_digest(frame: pl.DataFrame) -> str:
    """:meth:`Dataset.fingerprint` (unkeyed) of the rows of ``frame``, as a multiset."""
    headers, sums = _multiset_sums([frame.get_column(name) for name in frame.columns])
    digest = hashlib.blake2b(_FINGERPRINT_VERSION, digest_size=32)
    digest.update(str(frame.height).encode())
    for part in headers:
        digest.update(part)
    for total in sums:
        digest.update(total.to_bytes(8, "little"))
    return digest.hexdigest()


def _multiset_sums(columns: Sequence[pl.Series]) -> tuple[list[bytes], list[int]]:
    """Headers of every column and two sums modulo 2^64 over the rows: of each row's hash h and
    of a second bijection of it (a 128-bit multiset digest).

    A row's hash is a polynomial in its columns' mixed values (h = h·P + v, column by column,
    so the same value in another column counts differently), mixed once more so that the sum
    over rows cannot split into per-column sums; summing over rows forgets their order. Columns are put in
    canonical form in parallel threads (NumPy and Polars release the GIL); the rows are then
    hashed in blocks of ``_BLOCK_ROWS`` (sums modulo 2^64 add up block by block), the blocks split
    between threads."""
    workers = min(max(len(columns), 1), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        prepared = list(pool.map(_column_values, columns))
        n = len(columns[0]) if columns else 0
        blocks = [(start, min(start + _BLOCK_ROWS, n)) for start in range(0, n, _BLOCK_ROWS)]
        shares = [blocks[i::workers] for i in range(workers)]
        partial = list(pool.map(lambda share: _block_sums([values for _, values in prepared], share), shares))
    mask = (1 << 64) - 1
    return [header for header, _ in prepared], [sum(p[0] for p in partial) & mask, sum(p[1] for p in partial) & mask]


def _block_sums(columns: Sequence[_ColumnValues], blocks: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The two sums of :func:`_multiset_sums` over the rows of ``blocks`` (Python integers, not reduced)."""
    first = second = 0
    for start, stop in blocks:
        rows = np.full(stop - start, _START, dtype=np.uint64)
        for column in columns:
            rows *= _STEP
            rows += column.rows(start, stop)
        _mix(rows)  # the rows' polynomial hashes made non-linear before summing, so rows stay whole
        first += int(rows.sum(dtype=np.uint64))
        rows ^= _SECOND
        second += int(_mix(rows).sum(dtype=np.uint64))
    return first, second


@dataclass
class Dataset:
    """A table (``frame``, a Polars DataFrame) with its ``schema`` and ``hierarchies``.

    Treat a Dataset as immutable: derive new ones with :meth:`with_roles`,
    :meth:`with_hierarchies` or :meth:`with_frame`. Encodings are computed once per column and
    cached. ``missing`` reports the missing-value policy that was applied when it was loaded.
    """

    frame: pl.DataFrame
    schema: Schema
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    name: str | None = None
    missing: MissingReport = field(default_factory=MissingReport)
    _encoded: dict[str, EncodedColumn] = field(default_factory=dict, init=False, repr=False, compare=False)
    _fingerprint: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check()

    def _check(self) -> None:
        """The schema and the frame agree and every hierarchy names a column.

        Whether a hierarchy covers its column's values is checked where the column is encoded
        through it (:meth:`encoded`, :meth:`validate_domains`), not here: a command that
        never reads a column is not affected by its values, and the safe pipeline publishes a
        value outside a declared hierarchy as missing (:meth:`Hierarchy.absorbing`) instead of
        refusing the table because of one row."""
        columns = self.frame.columns
        absent = [n for n in self.schema.names if n not in columns]
        if absent:
            raise SchemaError(
                f"column '{absent[0]}' is named in the schema but not in the data "
                f"(the data has: {', '.join(columns)})"
            )
        undeclared = [c for c in columns if c not in self.schema]
        if undeclared:
            raise SchemaError(f"column '{undeclared[0]}' of the data is not in the schema")
        if columns != self.schema.names:
            self.frame = self.frame.select(self.schema.names)
        self.hierarchies = dict(self.hierarchies)
        for column, hierarchy in self.hierarchies.items():
            if column not in self.schema:
                raise HierarchyError(f"a hierarchy is given for '{column}', which is not a column")
            if not isinstance(hierarchy, Hierarchy):
                raise HierarchyError(f"the hierarchy of '{column}' is a {type(hierarchy).__name__}, not a Hierarchy")

    def validate_domains(self, columns: Sequence[str] | None = None) -> None:
        """Raise naming the first value of ``columns`` (default: every column) outside its
        declared domain: a value an ordinal attribute's declared order does not list
        (:class:`SchemaError`), a value its hierarchy does not cover (:class:`HierarchyError`).
        Reads the data: for the custodian's own commands (``check``, ``anonymize``), never before
        a charge (the DP commands handle such a value without letting it stop them)."""
        for attribute in self.schema:
            if columns is not None and attribute.name not in columns:
                continue
            if attribute.type is AttributeType.ORDINAL and attribute.order is not None:
                text = self.frame.get_column(attribute.name).cast(pl.String)
                outside = text.filter(~text.is_in(pl.Series([str(v) for v in attribute.order])) & text.is_not_null())
                if len(outside):
                    raise SchemaError(f"column '{attribute.name}' holds {outside[0]!r}, which is not in its "
                                      "declared order")
            hierarchy = self.hierarchies.get(attribute.name)
            if hierarchy is not None:
                hierarchy.validate(self.frame.get_column(attribute.name), column=attribute.name)

    # -- facts --------------------------------------------------------------------------

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.schema.quasi_identifiers

    @property
    def sensitive(self) -> list[str]:
        return self.schema.sensitive

    @property
    def n_rows(self) -> int:
        return self.frame.height

    @property
    def columns(self) -> list[str]:
        return self.schema.names

    def __len__(self) -> int:
        return self.frame.height

    def fingerprint(self, key: bytes | None = None) -> str:
        """BLAKE2b-256 (hex) of the table's content as a multiset of rows: column names, types
        and the rows in any order.

        Reordering rows does not change it; changing, adding or removing a row does (up to the
        128-bit collisions of sums of row hashes: an identity for honest bookkeeping, not a
        commitment against a forger). Stable across runs, processes, machines and library
        versions; independent of roles, hierarchies, the file name and the format (a CSV and the
        Parquet file with the same content agree when the column types agree; String,
        Categorical and Enum count as one type, text).

        A table loaded with ``missing='drop'`` is identified as given, before the policy removed
        rows (:meth:`identify_as`): the same people, so the same identity and budget as with
        ``missing='keep'``.

        With ``key`` (the ledger's secret :attr:`~crowdsafe.privacy.ledger.Ledger.identity_key`)
        the digest is keyed: without the key nobody can test a guess of the data against it.
        No fingerprint belongs in a public output, keyed or not.
        """
        if self._fingerprint is None:
            self._fingerprint = _multiset_digest(self.frame)
        if key is None:
            return self._fingerprint
        return keyed_identity(self._fingerprint, key)

    def identify_as(self, given: pl.DataFrame) -> None:
        """Take the fingerprint of ``given`` (this table before rows were removed by the
        missing-value policy, with the same columns) as this table's (:meth:`fingerprint`)."""
        self._fingerprint = _multiset_digest(given)

    # -- encoding -----------------------------------------------------------------------

    def encoded(self, column: str) -> EncodedColumn:
        """The cached encoding of ``column`` (leaf codes of its hierarchy when it has one)."""
        cached = self._encoded.get(column)
        if cached is not None:
            return cached
        if column not in self.schema:
            self.schema[column]  # raises a SchemaError naming the attributes
        series = self.frame.get_column(column)
        hierarchy = self.hierarchies.get(column)
        attribute = self.schema[column]
        if hierarchy is not None:
            result = encode_with_hierarchy(series, hierarchy)
        elif attribute.type is AttributeType.ORDINAL and attribute.order is not None:
            # codes follow the declared order, so code distance is rank distance
            order = pl.Enum([str(v) for v in attribute.order])
            codes, dictionary = encode_series(series.cast(pl.String).cast(order))
            result = EncodedColumn(column, codes, dictionary.cast(pl.String).cast(series.dtype))
        else:
            codes, dictionary = encode_series(series)
            result = EncodedColumn(column, codes, dictionary)
        self._encoded[column] = result
        return result

    # -- derivation ---------------------------------------------------------------------

    def _derive(self, **changes: Any) -> Dataset:
        if "frame" in changes:
            return replace(self, **changes)
        # the same table: only hierarchies that are new or replaced are checked against it
        derived = copy.copy(self)
        for name, value in changes.items():
            setattr(derived, name, value)
        derived._encoded = {}
        derived._check()
        kept = {c: e for c, e in self._encoded.items() if c not in changes.get("hierarchies", {})}
        derived._encoded.update(kept)
        derived._fingerprint = self._fingerprint
        return derived

    def with_roles(self, qi: Sequence[str] | None = None, sensitive: Sequence[str] | str | None = None) -> Dataset:
        """The same table with other quasi-identifiers / sensitive attributes (see Schema.with_roles)."""
        return self._derive(schema=self.schema.with_roles(qi=qi, sensitive=sensitive))

    def with_hierarchies(self, hierarchies: Mapping[str, Hierarchy]) -> Dataset:
        """The same table with these hierarchies added (or replaced); coverage is checked when a
        column is encoded (:meth:`validate_domains`)."""
        return self._derive(hierarchies={**self.hierarchies, **hierarchies})

    def with_frame(self, frame: pl.DataFrame) -> Dataset:
        """A dataset over another frame with the same columns (e.g. a sample), same schema and hierarchies."""
        return replace(self, frame=frame)

    def _checked_part(self, **changes: Any) -> Dataset:
        """A dataset over part of this one's (already validated) table, without validating again:
        a subset of values a hierarchy covers is covered. Caches start empty."""
        derived = copy.copy(self)
        for name, value in changes.items():
            setattr(derived, name, value)
        derived._encoded = {}
        derived._fingerprint = None
        return derived

    def filter_rows(self, mask: np.ndarray | pl.Series) -> Dataset:
        """The rows where the boolean ``mask`` is true (a sample, say), same schema and hierarchies."""
        if not isinstance(mask, pl.Series):
            mask = pl.Series("mask", mask, dtype=pl.Boolean)
        if len(mask) != self.n_rows:
            raise SchemaError(f"a row mask of length {len(mask):,} for a table of {self.n_rows:,} rows")
        return self._checked_part(frame=self.frame.filter(mask))

    def select(self, names: Sequence[str]) -> Dataset:
        """The dataset restricted to the columns ``names`` (in that order), with their roles,
        hierarchies and cached encodings. It is another table: its fingerprint is its own."""
        names = list(names)
        derived = self._checked_part(frame=self.frame.select(names), schema=self.schema.select(names),
                                     hierarchies={c: h for c, h in self.hierarchies.items() if c in names})
        derived._encoded.update({c: e for c, e in self._encoded.items() if c in names})
        return derived

    def recode(self, levels: Mapping[str, int]) -> pl.DataFrame:
        """The frame with each column in ``levels`` replaced by its hierarchy label at that level.

        Level 0 keeps the original values. Generalized columns are Categorical text.
        """
        replacements = []
        for column, level in levels.items():
            if level == 0:
                continue
            hierarchy = self.hierarchies.get(column)
            if hierarchy is None:
                raise HierarchyError(f"column '{column}' has no hierarchy; give one to generalize it")
            codes = hierarchy.generalize(self.encoded(column).codes, level)
            labels = pl.Series(column, hierarchy.labels[level], dtype=pl.Categorical)
            replacements.append(labels.gather(codes))
        return self.frame.with_columns(replacements) if replacements else self.frame

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rows": self.n_rows,
            "schema": self.schema.to_dict(),
            "missing": self.missing.to_dict(),
            "hierarchies": {name: h.describe() for name, h in self.hierarchies.items()},
        }

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return (
            f"Dataset({label}{self.n_rows:,} rows, {len(self.schema)} attributes, "
            f"qi={self.quasi_identifiers}, sensitive={self.sensitive})"
        )
