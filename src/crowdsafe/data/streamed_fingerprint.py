""":meth:`Dataset.fingerprint <crowdsafe.data.Dataset.fingerprint>` of a table that is never held
whole: the same digest, accumulated batch by batch.

The fingerprint is a multiset digest: per column a header (its name, its kind and, for text, its
sorted distinct values) and two sums modulo 2^64 over the rows of a hash of each row, in which a
text value counts by its rank among the column's distinct values. So once the distinct values are
known (the domain of :mod:`crowdsafe.data.streamed_table`), each batch adds its rows' hashes to
the sums, in any order; the digest is made from the headers, the row count and the sums exactly
as :meth:`~crowdsafe.data.Dataset.fingerprint` makes it (the hashing is that module's own code).

A subset of the rows (a Bernoulli sample: a boolean mask over the rows in file order) has its own
fingerprint, whose text ranks are among the values the subset holds: :class:`SubsetValues` finds
those values in one pass, then a second pass hashes the subset's rows.

What it computes is an identity for the ledger, never an output (see the fingerprint's docstring).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import polars as pl

from crowdsafe.data.dataset import (
    _BLOCK_ROWS,
    _FINGERPRINT_VERSION,
    _block_sums,
    _column_values,
    _ColumnValues,
    _is_text,
    _mix,
)
from crowdsafe.identity import keyed_identity

__all__ = ["MultisetDigest", "SubsetValues", "is_text_column"]

_MASK = (1 << 64) - 1


def is_text_column(dtype: pl.DataType) -> bool:
    """Whether the fingerprint counts a column of ``dtype`` by ranks of text (as it does for text,
    Categorical, Enum and any type that is not a number, a date or a boolean)."""
    return _is_text(dtype) or not (dtype.is_numeric() or dtype.is_temporal() or dtype == pl.Boolean)


def dictionary_of(values: pl.Series) -> pl.Series:
    """A text column's sorted distinct values (no missing), as the fingerprint orders them."""
    return values.drop_nulls().cast(pl.String).unique().sort()


def _as_typed(dictionary: pl.Series, dtype: pl.DataType) -> pl.Series:
    """A text column's dictionary in the column's own type (the header names the type)."""
    if _is_text(dtype):
        return dictionary.cast(dtype)
    if dtype == pl.Null and not len(dictionary):
        return pl.Series(dictionary.name, [], dtype=pl.Null)
    raise ValueError(f"column '{dictionary.name}' of type {dtype} is not fingerprinted by batches")


class MultisetDigest:
    """The fingerprint of rows added batch by batch (:meth:`add`), for columns ``schema`` (name ->
    type, in the table's order) whose text columns have the sorted distinct values
    ``dictionaries`` (:func:`dictionary_of`) over the rows that will be added."""

    def __init__(self, schema: Mapping[str, pl.DataType], dictionaries: Mapping[str, pl.Series]) -> None:
        self.names = list(schema)
        self.dictionaries = {c: dictionaries[c] for c in self.names if is_text_column(schema[c])}
        self.headers = []
        for name in self.names:
            if name in self.dictionaries:
                header, _ = _column_values(_as_typed(self.dictionaries[name].alias(name), schema[name]))
            else:
                header, _ = _column_values(pl.Series(name, [], dtype=schema[name]))
            self.headers.append(header)
        self.tables = {c: _mix(np.arange(1, max(len(d), 1) + 1, dtype=np.uint64)) for c, d in self.dictionaries.items()}
        self.rows = 0
        self.sums = [0, 0]

    def _values(self, series: pl.Series) -> _ColumnValues:
        dictionary = self.dictionaries.get(series.name)
        if dictionary is None:
            return _column_values(series)[1]
        missing = series.is_null().to_numpy() if series.null_count() else None
        text = series.cast(pl.String)
        if missing is not None:
            text = text.fill_null("")
        ranks = dictionary.search_sorted(text).to_numpy().astype(np.int64)
        np.minimum(ranks, max(len(dictionary) - 1, 0), out=ranks)  # only a missing value's lies past the end
        return _ColumnValues(ranks, self.tables[series.name], missing)

    def add(self, batch: pl.DataFrame) -> None:
        """Add the rows of ``batch`` (the columns by name)."""
        n = batch.height
        if not n:
            return
        columns = [self._values(batch.get_column(c)) for c in self.names]
        blocks = [(start, min(start + _BLOCK_ROWS, n)) for start in range(0, n, _BLOCK_ROWS)]
        first, second = _block_sums(columns, blocks)
        self.sums = [(self.sums[0] + first) & _MASK, (self.sums[1] + second) & _MASK]
        self.rows += n

    def hexdigest(self, key: bytes | None = None) -> str:
        """:meth:`Dataset.fingerprint <crowdsafe.data.Dataset.fingerprint>` of the rows added (keyed
        with ``key`` as it keys)."""
        digest = hashlib.blake2b(_FINGERPRINT_VERSION, digest_size=32)
        digest.update(str(self.rows).encode())
        for part in self.headers:
            digest.update(part)
        for total in self.sums:
            digest.update(total.to_bytes(8, "little"))
        plain = digest.hexdigest()
        return plain if key is None else keyed_identity(plain, key)


class SubsetValues:
    """Which of each text column's values the rows of a subset hold, found batch by batch
    (:meth:`add` the subset's rows): their dictionaries then give the subset's
    :class:`MultisetDigest`."""

    def __init__(self, dictionaries: Mapping[str, pl.Series]) -> None:
        self.dictionaries = dict(dictionaries)
        self.present = {c: np.zeros(len(d), dtype=np.bool_) for c, d in self.dictionaries.items()}

    def add(self, batch: pl.DataFrame) -> None:
        for column, dictionary in self.dictionaries.items():
            values = batch.get_column(column).drop_nulls().cast(pl.String).unique()
            if len(values):
                self.present[column][dictionary.search_sorted(values).to_numpy()] = True

    def subset_dictionaries(self) -> dict[str, pl.Series]:
        return {c: d.filter(pl.Series(self.present[c])) for c, d in self.dictionaries.items()}


def digest_of(schema: Mapping[str, pl.DataType], dictionaries: Mapping[str, pl.Series],
              batches: Iterable[pl.DataFrame], key: bytes | None = None) -> str:
    """The fingerprint of the rows of ``batches`` (:class:`MultisetDigest`)."""
    digest = MultisetDigest(schema, dictionaries)
    for batch in batches:
        digest.add(batch)
    return digest.hexdigest(key)


def text_dictionaries(domain: pl.DataFrame, names: Sequence[str] | None = None) -> dict[str, pl.Series]:
    """The sorted distinct values of the text columns of ``domain`` (a frame holding every
    distinct value of each column)."""
    return {c: dictionary_of(domain.get_column(c)) for c in (names or domain.columns)
            if is_text_column(domain.schema[c])}
