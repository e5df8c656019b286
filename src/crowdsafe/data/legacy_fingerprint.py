"""The fingerprint of crowdsafe before the canonical one (``crowdsafe-dataset-multiset-v3``), kept
only to find, in a ledger written by that version, a table registered under it.

It hashed each column's declared type (its Polars type's name) in the column's header and each
value's raw bits (a number's int64 or float64 bits, a text's rank among the column's distinct
values), so the same rows read under a schema that typed a column otherwise (``age`` ``real``
rather than ``integer``) had another identity, and so another budget. The ledger computes it only
when a table's canonical identity (:mod:`crowdsafe.data.fingerprint`) is unknown to a ledger that
may hold identities of that version, and then moves what it finds to the canonical identity
(:meth:`crowdsafe.privacy.ledger.Ledger.identity_of`). Never used to name a new table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

import numpy as np
import polars as pl

from crowdsafe.data.fingerprint import (
    ColumnValues,
    block_sums,
    finish,
    is_text,
    mix,
    multiset_sums,
    string_bytes,
    text_codes,
)

__all__ = ["legacy_digest", "legacy_stream_digest"]

LEGACY_VERSION = b"crowdsafe-dataset-multiset-v3"
_MASK = (1 << 64) - 1


def _legacy_text(dtype: pl.DataType) -> bool:
    return is_text(dtype) or not (dtype.is_numeric() or dtype.is_temporal() or dtype == pl.Boolean)


def legacy_column_values(series: pl.Series) -> tuple[bytes, ColumnValues]:
    """A column as the v3 fingerprint hashed it: a header of its name, its type (text, or the
    Polars type's name) and for text its sorted distinct values; each row's rank (text) or bits."""
    dtype = series.dtype
    header = hashlib.blake2b(digest_size=32)

    def put(part: bytes | np.ndarray) -> None:
        view = (part.data if isinstance(part, np.ndarray) else memoryview(part)).cast("B")
        header.update(view.nbytes.to_bytes(8, "little"))
        header.update(view)

    put(series.name.encode())
    put(b"text" if is_text(dtype) else str(dtype.base_type()).encode())
    table: np.ndarray | None = None
    if _legacy_text(dtype):
        dictionary, ranks, index = text_codes(series if is_text(dtype) else series.cast(pl.String))
        for part in string_bytes(dictionary):
            put(part)
        table = mix(ranks.astype(np.uint64) + np.uint64(1))
    else:
        physical = series.to_physical() if dtype != pl.Boolean else series.cast(pl.UInt8)
        raw = physical.fill_null(0).to_numpy()
        if raw.dtype.kind == "f":
            index = raw.astype(np.float64).view(np.uint64)
        else:
            index = raw.astype(np.int64, copy=False).view(np.uint64)
    missing = series.is_null().to_numpy() if series.null_count() else None
    return header.digest(), ColumnValues(index, table, missing)


def legacy_digest(frame: pl.DataFrame) -> str:
    """The v3 fingerprint (unkeyed, hex) of the rows of ``frame``."""
    headers, sums = multiset_sums([frame.get_column(name) for name in frame.columns], legacy_column_values)
    return finish(LEGACY_VERSION, frame.height, headers, sums)


def legacy_stream_digest(schema: Mapping[str, pl.DataType], values: pl.DataFrame,
                         batches: Iterable[pl.DataFrame]) -> str:
    """The v3 fingerprint of a table given batch by batch: ``schema`` its columns' types,
    ``values`` a frame holding every distinct value of each column (the text columns' sorted
    distinct values make their headers and ranks)."""
    names = list(schema)
    dictionaries = {c: values.get_column(c).drop_nulls().cast(pl.String).unique().sort()
                    for c in names if _legacy_text(schema[c])}
    headers, tables = [], {}
    for name in names:
        if name in dictionaries:
            dictionary = dictionaries[name]
            if is_text(schema[name]):
                typed = dictionary.cast(schema[name])
            else:  # a column of another type read through its text: only an empty one (a Null column)
                typed = dictionary if len(dictionary) else pl.Series(name, [], dtype=schema[name])
            headers.append(legacy_column_values(typed.alias(name))[0])
            tables[name] = mix(np.arange(1, max(len(dictionary), 1) + 1, dtype=np.uint64))
        else:
            headers.append(legacy_column_values(pl.Series(name, [], dtype=schema[name]))[0])
    rows, sums = 0, [0, 0]
    for batch in batches:
        if not batch.height:
            continue
        columns = []
        for name in names:
            series = batch.get_column(name)
            if name not in dictionaries:
                columns.append(legacy_column_values(series)[1])
                continue
            missing = series.is_null().to_numpy() if series.null_count() else None
            text = series.cast(pl.String).fill_null("")
            ranks = dictionaries[name].search_sorted(text).to_numpy().astype(np.int64)
            np.minimum(ranks, max(len(dictionaries[name]) - 1, 0), out=ranks)
            columns.append(ColumnValues(ranks, tables[name], missing))
        first, second = block_sums(columns, [(0, batch.height)])
        sums = [(sums[0] + first) & _MASK, (sums[1] + second) & _MASK]
        rows += batch.height
    return finish(LEGACY_VERSION, rows, headers, sums)
