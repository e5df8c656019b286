""":meth:`Dataset.fingerprint <crowdsafe.data.Dataset.fingerprint>` of a table that is never held
whole: the same digest, accumulated batch by batch.

The fingerprint is a multiset digest: per column a header (its name and the sorted distinct values
that stay text in canonical form, :mod:`crowdsafe.data.fingerprint`) and two sums modulo 2^64 over
the rows of a hash of each row, in which a text value counts by its canonical hash (a number's,
a date's, a boolean's, or its rank among the values that stay text). So once the distinct values are
known (the domain of :mod:`crowdsafe.data.streamed_table`), each batch adds its rows' hashes to
the sums, in any order; the digest is made from the headers, the row count and the sums exactly
as :meth:`~crowdsafe.data.Dataset.fingerprint` makes it (the hashing is that module's own code).

A subset of the rows (a Bernoulli sample: a boolean mask over the rows in file order) has its own
fingerprint, whose text ranks are among the values the subset holds: :class:`SubsetValues` finds
those values in one pass, then a second pass hashes the subset's rows.

What it computes is an identity for the ledger, never an output (see the fingerprint's docstring).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import polars as pl

from crowdsafe.data.fingerprint import (
    _BLOCK_ROWS,
    FINGERPRINT_VERSION,
    ColumnValues,
    block_sums,
    canonical_values,
    column_values,
    finish,
    is_text_column,
    nfc_dictionary,
    nfc_name,
    text_header,
)
from crowdsafe.identity import keyed_identity

__all__ = ["MultisetDigest", "SubsetValues", "is_text_column"]

_MASK = (1 << 64) - 1


def dictionary_of(values: pl.Series) -> pl.Series:
    """A text column's sorted distinct values (no missing), as the fingerprint orders them."""
    return values.drop_nulls().cast(pl.String).unique().sort()


class MultisetDigest:
    """The fingerprint of rows added batch by batch (:meth:`add`), for columns ``schema`` (name ->
    type, in the table's order) whose text columns have the sorted distinct values
    ``dictionaries`` (:func:`dictionary_of`) over the rows that will be added."""

    def __init__(self, schema: Mapping[str, pl.DataType], dictionaries: Mapping[str, pl.Series]) -> None:
        self.names = sorted(schema, key=nfc_name)  # in the order of their names, as the fingerprint hashes them
        self.dictionaries = {c: dictionaries[c] for c in self.names if is_text_column(schema[c])}
        self.headers = []
        self.tables: dict[str, np.ndarray] = {}
        for name in self.names:
            if name in self.dictionaries:
                normal, merged = nfc_dictionary(self.dictionaries[name])  # Unicode NFC (the fingerprint's)
                kept, hashes = canonical_values(normal)
                self.headers.append(text_header(name, kept))
                table = hashes if len(hashes) else np.zeros(1, dtype=np.uint64)
                self.tables[name] = table if merged is None else table[merged]  # by the rank of the value read
            else:
                self.headers.append(column_values(pl.Series(name, [], dtype=schema[name]))[0])
        self.rows = 0
        self.sums = [0, 0]

    def _values(self, series: pl.Series) -> ColumnValues:
        dictionary = self.dictionaries.get(series.name)
        if dictionary is None:
            return column_values(series)[1]
        missing = series.is_null().to_numpy() if series.null_count() else None
        text = series.cast(pl.String)
        if missing is not None:
            text = text.fill_null("")
        ranks = dictionary.search_sorted(text).to_numpy().astype(np.int64)
        np.minimum(ranks, max(len(dictionary) - 1, 0), out=ranks)  # only a missing value's lies past the end
        return ColumnValues(ranks, self.tables[series.name], missing)

    def add(self, batch: pl.DataFrame) -> None:
        """Add the rows of ``batch`` (the columns by name)."""
        n = batch.height
        if not n:
            return
        columns = [self._values(batch.get_column(c)) for c in self.names]
        blocks = [(start, min(start + _BLOCK_ROWS, n)) for start in range(0, n, _BLOCK_ROWS)]
        first, second = block_sums(columns, blocks)
        self.sums = [(self.sums[0] + first) & _MASK, (self.sums[1] + second) & _MASK]
        self.rows += n

    def hexdigest(self, key: bytes | None = None) -> str:
        """:meth:`Dataset.fingerprint <crowdsafe.data.Dataset.fingerprint>` of the rows added (keyed
        with ``key`` as it keys)."""
        plain = finish(FINGERPRINT_VERSION, self.rows, self.headers, self.sums)
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
