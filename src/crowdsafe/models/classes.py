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

from crowdsafe.data import COUNT, Dataset, EncodedColumn, Encoding, code_frequencies, encode_series, load, packing
from crowdsafe.data.generalized import AttributeDomain, canonical_cells, is_generalized
from crowdsafe.data.schema import AttributeType
from crowdsafe.errors import ParameterError, SchemaError
from crowdsafe.number_text import quantity

FREQUENCY_TABLE_ROWS = 1 << 16  # from this many rows, classes come from the distinct tuples
_ROWS, _KEY, _INDEX = "__crowdsafe_rows", "__crowdsafe_key", "__crowdsafe_index"


def _packable(dtype: pl.DataType) -> bool:
    """Whether a column's physical values are integers that fit an Int64 (dictionary ids included)."""
    return (dtype.is_integer() and dtype != pl.UInt64) or isinstance(dtype, (pl.Categorical, pl.Enum)) \
        or dtype in (pl.Date, pl.Boolean)


def tuple_key(frame: pl.DataFrame, columns: Sequence[str]) -> pl.Expr | None:
    """One UInt64 per row that is a one-to-one function of the row's ``columns`` (mixed radix over
    each column's physical span, a missing value one more digit), or None where a column's
    physical values are not integers or the spans multiply to 2^63 or more."""
    if not all(_packable(frame.schema[c]) for c in columns):
        return None
    physical = [pl.col(c).to_physical().cast(pl.Int64) for c in columns]
    stats = frame.select(
        *(p.min().alias(f"lo{i}") for i, p in enumerate(physical)),
        *(p.max().alias(f"hi{i}") for i, p in enumerate(physical)),
        *(pl.col(c).null_count().alias(f"nulls{i}") for i, c in enumerate(columns)),
    ).row(0)
    width = len(columns)
    key: pl.Expr | None = None
    multiplier = 1
    for i in reversed(range(width)):
        low, high, nulls = stats[i], stats[width + i], stats[2 * width + i]
        if low is None:  # every value missing
            continue
        span = high - low + 1 + (1 if nulls else 0)
        digit = (physical[i] - low).fill_null(span - 1) if nulls else physical[i] - low
        term = digit.cast(pl.UInt64) * pl.lit(multiplier, dtype=pl.UInt64)
        key = term if key is None else key + term
        multiplier *= span
        if multiplier >= 2**63:
            return None
    return key if key is not None else pl.lit(0, dtype=pl.UInt64)


def by_frequency_table(dataset: Dataset) -> bool:
    """The switch between :meth:`EquivalenceClasses._classes_by_frequency_table` (the fast
    path: encode the distinct tuples, not the rows) and its reference twin
    :meth:`EquivalenceClasses._classes_by_rows`: tables of ``FREQUENCY_TABLE_ROWS`` rows or more."""
    return dataset.n_rows >= FREQUENCY_TABLE_ROWS


def column_counts(frame: pl.DataFrame, columns: Sequence[str]) -> dict[str, tuple[int, int]]:
    """(distinct values, missing values) of each of ``columns``, counted over every row of
    ``frame`` (a missing value counts as one distinct value): the reference twin of
    :meth:`EquivalenceClasses.column_counts`."""
    if not columns:
        return {}
    part = frame.select(columns)
    distinct, missing = part.select(pl.all().n_unique()).row(0), part.null_count().row(0)
    return {c: (int(d), int(m)) for c, d, m in zip(columns, distinct, missing)}


def as_dataset(data: Any) -> Dataset:
    """Anything :func:`crowdsafe.data.load` accepts, as a Dataset."""
    return data if isinstance(data, Dataset) else load(data)


def _published_column(dataset: Dataset, column: str, original: Dataset | None) -> EncodedColumn:
    """The column's codes, with generalized cells that cover the same values merged."""
    encoded = dataset.encoded(column)
    if original is not None:
        cover = AttributeDomain.of(original, column).cover(encoded.dictionary)
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

    @classmethod
    def from_counts(
        cls,
        attribute: str,
        values: pl.Series,
        class_id: np.ndarray,
        code: np.ndarray,
        count: np.ndarray,
        attribute_type: AttributeType = AttributeType.CATEGORICAL,
    ) -> SensitiveCounts:
        """Build from any (class id, value code, count) rows, e.g. a frequency table whose rows a
        lattice search has mapped to classes; repeated (class, value) rows are added up and
        class ids must be 0..C-1, each used."""
        class_id = np.asarray(class_id, dtype=np.int64)
        code = np.asarray(code, dtype=np.int64)
        width = max(len(values), int(code.max(initial=-1)) + 1, 1)
        key, inverse = np.unique(class_id * width + code, return_inverse=True)
        total = np.bincount(inverse.ravel(), weights=np.asarray(count, dtype=np.float64)).astype(np.int64)
        pair_class, pair_code = key // width, key % width
        sizes = np.bincount(pair_class, weights=total).astype(np.int64)
        if (sizes == 0).any():
            raise ParameterError("class ids must run 0..C-1 with every class holding rows")
        overall = np.bincount(pair_code, weights=total, minlength=len(values)).astype(np.int64)
        return cls(attribute, values, pair_class, pair_code, total, sizes, overall, attribute_type)

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

    @cached_property
    def class_starts(self) -> np.ndarray:
        """Index of each class's first entry (entries are sorted by class; no class is empty)."""
        return np.searchsorted(self.cls, np.arange(self.n_classes))

    def per_class_max(self, values: np.ndarray) -> np.ndarray:
        """The largest of ``values`` (one per entry) within each class."""
        if self.n_classes == 0:
            return np.zeros(0)
        return np.maximum.reduceat(values, self.class_starts)


class EquivalenceClasses:
    """The equivalence classes of a table under a quasi-identifier set.

    ``EquivalenceClasses(dataset, qi=None, original=None, sensitive=())``: ``qi`` defaults to
    the dataset's quasi-identifiers; ``original`` is the table the release was made from, when
    known (its domains and hierarchies say what generalized cells cover); the class x value
    counts of the first ``sensitive`` attribute are counted in the same pass as the classes.
    """

    def __init__(
        self,
        dataset: Dataset,
        qi: Sequence[str] | None = None,
        *,
        original: Dataset | None = None,
        sensitive: Sequence[str] = (),
    ) -> None:
        self._setup(dataset, qi, original)
        self._by_tuples = by_frequency_table(dataset)
        if not (self._by_tuples and self._classes_by_frequency_table(sensitive)):
            self._by_tuples = False
            self._classes_by_rows(sensitive)
        self.rows = int(self.sizes.sum())

    def _setup(self, dataset: Dataset, qi: Sequence[str] | None, original: Dataset | None) -> None:
        self.dataset = dataset
        self.quasi_identifiers = list(qi) if qi is not None else dataset.quasi_identifiers
        if not self.quasi_identifiers:
            raise ParameterError("no quasi-identifiers: name them with qi=[...]", parameter="qi")
        for column in self.quasi_identifiers:
            dataset.schema[column]  # raises a SchemaError naming the attributes
        self.original = original
        self._row_key: np.ndarray | None = None
        self._table: pl.DataFrame | None = None
        self._sensitive: dict[str, SensitiveCounts] = {}
        self._frequency: tuple[pl.DataFrame, np.ndarray] | None = None
        self._given: tuple[Dataset, np.ndarray] | None = None

    @classmethod
    def of_frequency_table(
        cls, tuples: Dataset, weights: np.ndarray, qi: Sequence[str] | None = None, *, sensitive: Sequence[str] = ()
    ) -> EquivalenceClasses | None:
        """The classes of a table given as its frequency table (a table larger than memory, counted
        by a streaming pass: :meth:`crowdsafe.data.streamed_table.StreamedTable.frequency`):
        ``tuples``, the distinct tuples of the quasi-identifiers and ``sensitive`` attributes
        (the table's schema and hierarchies) and ``weights``, the rows holding each. The fast
        path's computation (:meth:`_classes_by_frequency_table`) on that table, so the classes,
        counts and models equal those of the table's rows; None where the classes' packed key
        would not fit 64 bits (the caller then reads the rows)."""
        classes = cls.__new__(cls)
        classes._setup(tuples, qi, None)
        classes._given = (tuples, np.asarray(weights, dtype=np.int64))
        classes._by_tuples = True
        if not classes._classes_by_frequency_table(sensitive):
            return None
        classes.rows = int(classes.sizes.sum())
        return classes

    def _tuples(self, columns: list[str], *, packed_only: bool = False) -> tuple[Dataset, np.ndarray] | None:
        """The frequency table of ``columns``: a Dataset of their distinct tuples (same schema
        and hierarchies) and the number of rows of each. Where every column has integer
        physical values (text: its dictionary ids) whose spans multiply below 2^63, the rows are
        grouped on one packed 64-bit key and each tuple is read from its first row; otherwise (None if
        ``packed_only``) by a group-by on the columns themselves. Classes made from a frequency
        table (:meth:`of_frequency_table`) group its tuples, adding their weights."""
        if self._given is not None:
            given, given_weights = self._given
            if columns == given.columns:
                return given, given_weights
            summed = (given.frame.select(columns).with_columns(pl.Series(_ROWS, given_weights))
                      .group_by(columns).agg(pl.col(_ROWS).sum()))
            return (given.select(columns).with_frame(summed.drop(_ROWS)),
                    summed.get_column(_ROWS).to_numpy().astype(np.int64))
        frame = self.dataset.frame
        text = [c for c in columns if frame.schema[c] == pl.String]
        # text gets dictionary ids once (in this frame only), so every column has integer values
        keyed = frame.select(columns).with_columns(pl.col(text).cast(pl.Categorical)) if text else frame
        key = tuple_key(keyed, columns)
        if key is None:
            if packed_only:
                return None
            counted = frame.group_by(columns).agg(pl.len().alias(_ROWS))
            tuples = self.dataset.select(columns).with_frame(counted.drop(_ROWS))
        else:
            counted = (
                keyed.lazy().select(key.alias(_KEY)).with_row_index(_INDEX)
                .group_by(_KEY).agg(pl.len().alias(_ROWS), pl.col(_INDEX).first())
                .sort(_INDEX).collect()
            )
            # the first rows, in row order (the indices are sorted and distinct): a filter keeps
            # exactly those rows, and a part of the dataset's rows needs no new hierarchy check
            first = np.zeros(frame.height, dtype=bool)
            first[counted.get_column(_INDEX).to_numpy()] = True
            tuples = self.dataset.select(columns).filter_rows(first)
        return tuples, counted.get_column(_ROWS).to_numpy().astype(np.int64)

    def _classes_by_frequency_table(self, sensitive: Sequence[str]) -> bool:
        """Classes (and the class x value counts of every ``sensitive`` attribute) from the
        frequency table of the distinct (quasi-identifier, sensitive) tuples: the rows are
        grouped once and every column is encoded over the distinct tuples only. Codes are a
        function of the value and dictionaries list the values present, so the classes, their
        order and every count equal those of :meth:`_classes_by_rows`. False (nothing set)
        where the rows' tuples or the classes' packed key would not fit 64 bits."""
        attributes = list(dict.fromkeys(sensitive))
        for attribute in attributes:
            self._validate_sensitive(attribute)
        found = self._tuples([*self.quasi_identifiers, *attributes], packed_only=True)
        if found is None:
            return False
        tuples, weights = found
        encoding = Encoding({c: _published_column(tuples, c, self.original) for c in self.quasi_identifiers})
        radices = [max(encoding[c].cardinality, 1) for c in self.quasi_identifiers]
        if not packing.fits(radices):
            return False
        self._encoding, self._radices = encoding, radices
        self._frequency = (tuples.frame, weights)
        key = packing.pack([encoding[c].codes for c in self.quasi_identifiers], radices, np.uint64)
        self._class_keys, inverse = np.unique(key, return_inverse=True)
        cls = inverse.ravel().astype(np.int64)
        self.sizes = np.bincount(cls, weights=weights, minlength=len(self._class_keys)).astype(np.int64)
        for attribute in attributes:
            self._store_tuple_pairs(attribute, tuples.encoded(attribute), cls, weights)
        return True

    def column_counts(self) -> dict[str, tuple[int, int]]:
        """(distinct values, missing values) of each column of the frequency table the classes
        were counted from (the quasi-identifiers and the sensitive attributes), read from its
        distinct tuples and their row counts (fast path; twin :func:`column_counts`, every row):
        every value in the rows is in some tuple, a missing value counting as one distinct value,
        as Polars' ``n_unique`` counts it. Empty when the classes were counted row by row."""
        if self._frequency is None:
            return {}
        frame, weights = self._frequency
        distinct = frame.select(pl.all().n_unique()).row(0)
        missing = [int(weights[frame.get_column(c).is_null().to_numpy()].sum()) if frame.get_column(c).null_count()
                   else 0 for c in frame.columns]
        return {c: (int(d), m) for c, d, m in zip(frame.columns, distinct, missing)}

    def _store_tuple_pairs(self, attribute: str, encoded: EncodedColumn, cls: np.ndarray,
                           weights: np.ndarray) -> SensitiveCounts:
        """Store the (class, value, count) triples of ``attribute`` from frequency-table rows
        (class ``cls``, value ``encoded.codes``, ``weights`` rows each); rows sharing a (class,
        value) pair are added up."""
        width = max(encoded.cardinality, 1)
        pair, inverse = np.unique(cls * width + encoded.codes.astype(np.int64), return_inverse=True)
        count = np.bincount(inverse.ravel(), weights=weights, minlength=len(pair)).astype(np.int64)
        return self._store_sensitive(attribute, encoded, pair // width, pair % width, count)

    def _classes_by_rows(self, sensitive: Sequence[str]) -> None:
        """The reference twin of :meth:`_classes_by_frequency_table`: every quasi-identifier
        encoded row by row (cached on the dataset), classes from one packed key per row."""
        self._encoding = Encoding({c: _published_column(self.dataset, c, self.original)
                                   for c in self.quasi_identifiers})
        self._radices = [max(self._encoding[c].cardinality, 1) for c in self.quasi_identifiers]
        span = packing.span(self._radices)
        if span < 2.0**63:
            # one 64-bit key per row (mixed radix), so each group-by is over a single column
            key = packing.pack([self._encoding[c].codes for c in self.quasi_identifiers], self._radices, np.uint64)
            self._row_key = key
            first = self._check_sensitive(sensitive[0]) if sensitive else None
            if first is not None and span * max(first.cardinality, 1) < 2.0**63:
                # classes and the first sensitive attribute's counts from one group-by
                class_key, code, count = self._packed_pairs(first)
                self._class_keys, cls = np.unique(class_key, return_inverse=True)
                self.sizes = np.bincount(cls, weights=count, minlength=len(self._class_keys)).astype(np.int64)
                self._store_sensitive(sensitive[0], first, cls.ravel().astype(np.int64), code, count)
            else:
                counted = pl.DataFrame({"key": key}).group_by("key").agg(pl.len()).sort("key")
                self._class_keys = counted.get_column("key").to_numpy()
                self.sizes = counted.get_column("len").to_numpy().astype(np.int64)
        else:
            self._table = code_frequencies(self._encoding)  # sorted by the quasi-identifier codes
            self.sizes = self._table.get_column(COUNT).to_numpy().astype(np.int64)

    @property
    def table(self) -> pl.DataFrame:
        """The classes as quasi-identifier codes (UInt32 columns) with their ``count``."""
        if self._table is None:
            decoded = packing.unpack(self._class_keys, self._radices)
            self._table = pl.DataFrame(
                {c: codes.astype(np.uint32) for c, codes in zip(self.quasi_identifiers, decoded)}
            ).with_columns(
                pl.Series(COUNT, self.sizes)
            )
        return self._table

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

    def _validate_sensitive(self, attribute: str) -> None:
        if attribute in self.quasi_identifiers:
            raise SchemaError(f"'{attribute}' is a quasi-identifier; a sensitive attribute must not be one")
        self.dataset.schema[attribute]  # raises a SchemaError naming the attributes

    def _check_sensitive(self, attribute: str) -> EncodedColumn:
        self._validate_sensitive(attribute)
        return self.dataset.encoded(attribute)

    def _packed_pairs(self, encoded: EncodedColumn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class key, value code, count) of every class x value present, from one group-by."""
        assert self._row_key is not None
        width = np.uint64(max(encoded.cardinality, 1))
        pairs = pl.DataFrame({"key": self._row_key * width + encoded.codes}).group_by("key").agg(pl.len())
        keys = pairs.get_column("key").to_numpy()
        return keys // width, (keys % width).astype(np.int64), pairs.get_column("len").to_numpy().astype(np.int64)

    def _store_sensitive(self, attribute: str, encoded: EncodedColumn, cls: np.ndarray, code: np.ndarray,
                         count: np.ndarray) -> SensitiveCounts:
        order = np.lexsort((code, cls))  # by class, then value: deterministic whatever the group-by order
        cls, code, count = cls[order], code[order], count[order]
        if len(cls) and cls[-1] + 1 != self.n_classes:
            raise AssertionError("class numbering of the sensitive pairs disagrees with the class table")
        overall = np.bincount(code, weights=count, minlength=encoded.cardinality).astype(np.int64)
        result = SensitiveCounts(attribute, encoded.dictionary, cls, code, count, self.sizes, overall,
                                 self.dataset.schema[attribute].type)
        self._sensitive[attribute] = result
        return result

    def sensitive(self, attribute: str) -> SensitiveCounts:
        """The (class, value, count) triples of ``attribute`` (computed once, then cached)."""
        cached = self._sensitive.get(attribute)
        if cached is not None:
            return cached
        if self._by_tuples:
            self._validate_sensitive(attribute)
            found = self._tuples([*self.quasi_identifiers, attribute])
            assert found is not None
            tuples, weights = found
            key = packing.pack([_published_column(tuples, c, self.original).codes for c in self.quasi_identifiers],
                               self._radices, np.uint64)
            cls = np.searchsorted(self._class_keys, key).astype(np.int64)
            return self._store_tuple_pairs(attribute, tuples.encoded(attribute), cls, weights)
        encoded = self._check_sensitive(attribute)
        width = max(encoded.cardinality, 1)
        if self._row_key is not None and float(self._class_keys.max(initial=0)) * width < 2.0**63:
            class_key, code, count = self._packed_pairs(encoded)
            return self._store_sensitive(attribute, encoded,
                                         np.searchsorted(self._class_keys, class_key).astype(np.int64),
                                         code, count)
        columns = [*self.quasi_identifiers, attribute]
        pairs = code_frequencies(Encoding({**self._encoding.columns, attribute: encoded}), columns)
        # pairs are sorted by the quasi-identifier codes first, so a class is a run of rows
        qi_codes = pairs.select(self.quasi_identifiers).to_numpy()
        new_class = np.ones(pairs.height, dtype=bool)
        new_class[1:] = (qi_codes[1:] != qi_codes[:-1]).any(axis=1)
        return self._store_sensitive(
            attribute, encoded, (np.cumsum(new_class) - 1).astype(np.int64),
            pairs.get_column(attribute).to_numpy().astype(np.int64),
            pairs.get_column(COUNT).to_numpy().astype(np.int64),
        )

    def __repr__(self) -> str:
        return (f"EquivalenceClasses({quantity(self.n_classes, 'class', 'classes')} over {quantity(self.rows, 'row')}, "
                f"k={self.k})")

