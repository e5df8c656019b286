"""Equivalence classes and the sensitive values inside them, from frequency tables.

An equivalence class is the set of rows sharing one quasi-identifier tuple (Samarati and
Sweeney 1998). Every syntactic model in this package is a function of two tables, both built
by one group-by over encoded columns (never a loop over rows):

- the class sizes (the frequency table of the quasi-identifiers), and
- per sensitive attribute, the (class, sensitive value, count) triples.

A missing value is a value of its own (it is not dropped: dropping it would overstate k).
Generalized cells are understood as what they cover: with the ``original`` Dataset given, two
cells covering the same original values are one published value; without it, cells are
compared in canonical syntax (``[25,34]`` = ``[25, 34]``, ``{b, a}`` = ``{a, b}``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import COUNT, Dataset, EncodedColumn, Encoding, code_frequencies, encode_series, load
from crowdsafe.data.generalized import Domain, canonical_cells, is_generalized
from crowdsafe.data.schema import AttributeType
from crowdsafe.errors import ParameterError, SchemaError


def as_dataset(data: Any) -> Dataset:
    """Anything :func:`crowdsafe.data.load` accepts, as a Dataset."""
    return data if isinstance(data, Dataset) else load(data)


def _published_column(dataset: Dataset, column: str, original: Dataset | None) -> EncodedColumn:
    """The column's codes, with generalized cells that cover the same values merged."""
    encoded = dataset.encoded(column)
    if original is not None:
        cover = Domain.of(original, column).cover(encoded.dictionary)
        labels = pl.Series(column, cover.labels).gather(
            np.unique(cover.canonical, return_index=True)[1]
        )
        return EncodedColumn(column, cover.canonical[encoded.codes].astype(np.uint32), labels)
    if encoded.dictionary.dtype in (pl.String, pl.Categorical) and is_generalized(encoded.dictionary):
        codes, dictionary = encode_series(canonical_cells(encoded.dictionary))
        return EncodedColumn(column, codes[encoded.codes], dictionary)
    return encoded


@dataclass(frozen=True)
class SensitiveCounts:
    """The sensitive values of each class: parallel arrays ``cls``, ``code``, ``count`` (one
    entry per class and value present in it, sorted by class), the value dictionary
    ``values`` (``values[code]``), and ``overall`` (rows per code in the whole table)."""

    attribute: str
    values: pl.Series
    cls: np.ndarray
    code: np.ndarray
    count: np.ndarray
    class_sizes: np.ndarray
    overall: np.ndarray
    attribute_type: AttributeType

    @property
    def rows(self) -> int:
        return int(self.class_sizes.sum())

    @property
    def n_classes(self) -> int:
        return len(self.class_sizes)

    @cached_property
    def share_in_class(self) -> np.ndarray:
        """q: share of each (class, value) entry within its class."""
        return self.count / self.class_sizes[self.cls]

    @cached_property
    def share_overall(self) -> np.ndarray:
        """p: share of each entry's value in the whole table."""
        return self.overall[self.code] / self.rows

    @cached_property
    def observed(self) -> np.ndarray:
        """Codes of the values present in the table."""
        return np.nonzero(self.overall)[0]

    @cached_property
    def distinct_per_class(self) -> np.ndarray:
        return np.bincount(self.cls, minlength=self.n_classes)


class EquivalenceClasses:
    """The equivalence classes of a table under a quasi-identifier set.

    ``EquivalenceClasses(dataset, qi=None, original=None)``: ``qi`` defaults to the dataset's
    quasi-identifiers; ``original`` is the table the release was made from, when known (its
    domains and hierarchies say what generalized cells cover).
    """

    def __init__(self, dataset: Dataset, qi: Sequence[str] | None = None, *, original: Dataset | None = None) -> None:
        self.dataset = dataset
        self.quasi_identifiers = list(qi) if qi is not None else dataset.quasi_identifiers
        if not self.quasi_identifiers:
            raise ParameterError("no quasi-identifiers: name them with --qi a,b,c (qi=[...])")
        for column in self.quasi_identifiers:
            dataset.schema[column]  # raises a SchemaError naming the attributes
        self.original = original
        self._encoding = Encoding({c: _published_column(dataset, c, original) for c in self.quasi_identifiers})
        self.table = code_frequencies(self._encoding)  # sorted by the quasi-identifier codes
        self.sizes = self.table.get_column(COUNT).to_numpy().astype(np.int64)
        self.rows = int(self.sizes.sum())
        self._sensitive: dict[str, SensitiveCounts] = {}

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    @property
    def k(self) -> int:
        """The table's k: the size of its smallest class (Sweeney 2002)."""
        return int(self.sizes.min()) if len(self.sizes) else 0

    def published(self, class_index: np.ndarray | None = None) -> pl.DataFrame:
        """The quasi-identifier values of the classes (all, or those indexed), with their size."""
        table = self.table if class_index is None else self.table[np.asarray(class_index)]
        return table.with_columns(
            self._encoding[c].dictionary.gather(table.get_column(c)).alias(c) for c in self.quasi_identifiers
        )

    def below(self, k: int) -> pl.DataFrame:
        """The classes with fewer than ``k`` rows (quasi-identifier values and ``count``)."""
        return self.published(np.nonzero(self.sizes < k)[0])

    def sensitive(self, attribute: str) -> SensitiveCounts:
        """The (class, value, count) triples of ``attribute`` (computed once, then cached)."""
        cached = self._sensitive.get(attribute)
        if cached is not None:
            return cached
        if attribute in self.quasi_identifiers:
            raise SchemaError(f"'{attribute}' is a quasi-identifier; a sensitive attribute must not be one")
        encoded = self.dataset.encoded(attribute)
        columns = [*self.quasi_identifiers, attribute]
        pairs = code_frequencies(Encoding({**self._encoding.columns, attribute: encoded}), columns)
        # pairs are sorted by the quasi-identifier codes first, so a class is a run of rows
        qi_codes = pairs.select(self.quasi_identifiers).to_numpy()
        new_class = np.ones(pairs.height, dtype=bool)
        new_class[1:] = (qi_codes[1:] != qi_codes[:-1]).any(axis=1)
        cls = np.cumsum(new_class) - 1
        if cls[-1] + 1 != self.n_classes:
            raise AssertionError("class numbering of the sensitive pairs disagrees with the class table")
        code = pairs.get_column(attribute).to_numpy().astype(np.int64)
        count = pairs.get_column(COUNT).to_numpy().astype(np.int64)
        overall = np.bincount(code, weights=count, minlength=encoded.cardinality).astype(np.int64)
        result = SensitiveCounts(
            attribute, encoded.dictionary, cls.astype(np.int64), code, count, self.sizes, overall,
            self.dataset.schema[attribute].type,
        )
        self._sensitive[attribute] = result
        return result

    def __repr__(self) -> str:
        return f"EquivalenceClasses({self.n_classes:,} classes over {self.rows:,} rows, k={self.k})"


def classes_of(
    data: Any,
    qi: Sequence[str] | None = None,
    *,
    original: Dataset | None = None,
) -> EquivalenceClasses:
    """:class:`EquivalenceClasses` of ``data`` (an EquivalenceClasses is returned as it is)."""
    if isinstance(data, EquivalenceClasses):
        if qi is not None and list(qi) != data.quasi_identifiers:
            raise ParameterError("these classes were built on other quasi-identifiers")
        return data
    return EquivalenceClasses(as_dataset(data), qi, original=original)
