"""A sample reduced to its frequency table: what the scheme chooser reads.

The ε1-safe chooser (:func:`crowdsafe.selection.mechanism.choose_scheme`) needs only the
distinct tuples of leaf codes of the sample and how many rows hold each, never the rows. So it
takes either a :class:`~crowdsafe.data.Dataset` (the Polars engine: the table is counted here)
or a :class:`CountedSample` made elsewhere (the Spark engine counts on the executors and hands
the driver this small table). Both engines then run the very same selection code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np
import polars as pl

from crowdsafe.anonymize.apply import SuppressionFacts
from crowdsafe.anonymize.cells import cell_table, dense_ids, first_of_each
from crowdsafe.data import Dataset, Hierarchy, packing
from crowdsafe.data.arrays import stable_argsort, unique_counts
from crowdsafe.errors import ParameterError, SchemaError


class Dictionaries(Protocol):
    """A full-domain scheme as the class tables read it: the values each column publishes, by
    node (or class) code (:class:`GeneralizationScheme`, :class:`~crowdsafe.anonymize.published.PublishedScheme`)."""

    def dictionary(self, column: str) -> pl.Series: ...


@dataclass(frozen=True)
class CountedSample:
    """Distinct tuples of leaf codes (``codes[:, j]`` for ``columns[j]``) with their row counts.

    Codes are the data layer's leaf codes of each column's hierarchy (so
    ``hierarchies[c].generalize`` applies); ``counts`` are positive. A sample counted here has
    its tuples in lexicographic order.
    """

    columns: tuple[str, ...]
    codes: np.ndarray  # (m, d) int64
    counts: np.ndarray  # (m,) int64
    hierarchies: Mapping[str, Hierarchy]

    @property
    def n_rows(self) -> int:
        return int(self.counts.sum())

    @property
    def n_cells(self) -> int:
        return len(self.counts)


def counted(sample: Dataset | CountedSample, columns: Sequence[str]) -> CountedSample:
    """``sample`` as a :class:`CountedSample` over ``columns`` (counted when it is a Dataset)."""
    columns = tuple(columns)
    if isinstance(sample, CountedSample):
        if sample.columns == columns:
            return sample
        if sorted(sample.columns) != sorted(columns):
            raise SchemaError(f"the counted sample is over {list(sample.columns)}, not {list(columns)}")
        order = [sample.columns.index(c) for c in columns]  # the same table, columns reordered
        return CountedSample(columns, sample.codes[:, order], sample.counts, sample.hierarchies)
    hierarchies = {c: sample.hierarchies[c] for c in columns if c in sample.hierarchies}
    if sample.n_rows == 0 and columns and len(hierarchies) == len(columns):
        return CountedSample(columns, np.zeros((0, len(columns)), dtype=np.int64), np.zeros(0, dtype=np.int64),
                             hierarchies)
    fast = None
    if len(hierarchies) == len(columns):
        fast = _count_by_leaf_expressions(sample, columns)
        if fast is None:
            fast = _count_physical(sample, columns)
    if fast is not None:
        return CountedSample(columns, *fast, hierarchies)
    cells = cell_table(sample, columns)
    return CountedSample(columns, cells.codes, cells.counts, hierarchies)


_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)


@dataclass(frozen=True)
class _ColumnCodes:
    """A column's rows as integer codes in ``[0, span)``, read from its physical representation
    (a Categorical's or Enum's category codes, an integer minus the smallest), never from its
    values one by one. ``physical[code]`` is the physical code a code stands for (None: the code
    is the physical code); the physical code ``missing`` stands for a missing value."""

    codes: np.ndarray
    span: int
    physical: np.ndarray | None
    missing: int
    low: int
    series: pl.Series

    @classmethod
    def of(cls, series: pl.Series) -> _ColumnCodes | None:
        """None for types without integer physical codes, or integers spread too widely."""
        if series.dtype == pl.String:
            series = series.cast(pl.Categorical)
        categorical = isinstance(series.dtype, (pl.Categorical, pl.Enum))
        if not (categorical or series.dtype in _INTEGERS):
            return None
        physical = series.to_physical()
        # an integer (physical) column: its extremes are integers, or None when every value is missing
        high = cast("int | None", physical.max())
        low = 0 if categorical else cast(int, physical.min())
        if high is None:  # every value missing
            return cls(np.zeros(len(series), dtype=np.uint8), 1, None, 0, 0, series)
        missing = int(high) - int(low) + 1
        if missing >= 4 * len(series) + (1 << 16):
            return None
        if physical.null_count():
            physical = physical.fill_null(int(high) + 1)
        codes = physical.to_numpy()
        if low:
            codes = codes.astype(np.int64) - int(low)
        return cls(codes, missing + 1, None, missing, int(low), series)

    def densified(self) -> _ColumnCodes:
        """The same column with one code per distinct physical code (categories are shared by
        every Categorical column, so their codes may be sparse)."""
        seen = np.zeros(self.span, dtype=bool)
        seen[self.codes] = True
        present = np.flatnonzero(seen)
        dense = np.cumsum(seen, dtype=np.int64) - 1
        return _ColumnCodes(dense[self.codes], len(present), present, self.missing, self.low, self.series)

    def values(self, codes: np.ndarray) -> pl.Series:
        """The value each of ``codes`` stands for."""
        physical = codes if self.physical is None else self.physical[codes]
        missing = physical == self.missing
        if self.series.dtype.is_integer():
            values = pl.Series(self.series.name, physical.astype(np.int64) + self.low).cast(self.series.dtype)
        elif missing.all():
            values = self.series.clear().extend_constant(None, len(missing))
        else:  # physical codes read back as the column's categories (0 stands in for missing)
            values = pl.Series(self.series.name, np.where(missing, 0, physical), dtype=pl.UInt32)
            values = values.cat.to(self.series.dtype)
        return values.scatter(np.flatnonzero(missing), None) if missing.any() else values


def _fits(columns: Sequence[_ColumnCodes]) -> bool:
    return packing.fits([c.span for c in columns])


def _count_by_leaf_expressions(sample: Dataset, columns: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """The cells of ``columns`` and their counts when every hierarchy absorbs the values it does
    not list (the safe pipeline's, :func:`~crowdsafe.anonymize.publish.prepare_dataset`): the
    rows' leaf codes from one Polars select (:meth:`~crowdsafe.data.Hierarchy.leaf_code_expression`,
    the columns side by side), packed into one key and counted. The keys are the leaf codes
    first column most significant, so their sorted order is the cells' lexicographic order.
    None when a hierarchy has no such expression or the keys would not fit in 64 bits."""
    schema = sample.frame.schema
    expressions = []
    for column in columns:
        expression = sample.hierarchies[column].leaf_code_expression(column, schema[column])
        if expression is None:
            return None
        expressions.append(expression)
    sizes = [sample.hierarchies[c].size(0) for c in columns]
    if not packing.fits(sizes):
        return None
    leaves = sample.frame.select(expressions)
    key = packing.pack([leaves.get_column(c).to_numpy() for c in columns], sizes)
    keys, counts = unique_counts(key, int(packing.span(sizes)))
    cell_codes = np.empty((len(keys), len(columns)), dtype=np.int64)
    for j in range(len(columns) - 1, -1, -1):
        keys, cell_codes[:, j] = np.divmod(keys, sizes[j])
    return cell_codes, counts.astype(np.int64)


def _count_physical(sample: Dataset, columns: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """The cells of ``columns`` and their counts, found without encoding the rows: the rows'
    physical codes packed into one 64-bit key, keys counted by one sort, and only the distinct
    values mapped to the hierarchies' leaf codes. None when a column is not text, Categorical,
    Enum or integer, or the keys would not fit in 64 bits (the caller then encodes the rows)."""
    per_column = []
    for column in columns:
        codes = _ColumnCodes.of(sample.frame.get_column(column))
        if codes is None:
            return None
        per_column.append(codes)
    if not _fits(per_column):
        per_column = [c.densified() for c in per_column]
        if not _fits(per_column):
            return None
    spans = [c.span for c in per_column]
    key = packing.pack([c.codes for c in per_column], spans)
    keys, counts = unique_counts(key, int(packing.span(spans)))
    cell_codes = np.empty((len(keys), len(columns)), dtype=np.int64)
    for j in range(len(columns) - 1, -1, -1):
        keys, code = np.divmod(keys, per_column[j].span)
        present, position = _distinct(code, per_column[j].span)
        values = per_column[j].values(present)
        leaf = sample.hierarchies[columns[j]].leaf_codes(values, column=columns[j]).astype(np.int64)
        cell_codes[:, j] = leaf[position]
    order = _lexicographic_order(cell_codes, [sample.hierarchies[c].size(0) for c in columns])
    return cell_codes[order], counts[order].astype(np.int64)


def _lexicographic_order(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """The order that sorts distinct rows of ``codes`` (column j in ``[0, sizes[j])``)
    lexicographically, as :func:`~crowdsafe.anonymize.cells.cell_table` sorts its cells."""
    if packing.fits(sizes):  # distinct keys: any sort gives the one order
        return stable_argsort(packing.pack([codes[:, j] for j in range(len(sizes))], sizes), int(packing.span(sizes)))
    return np.lexsort(codes.T[::-1])


def _distinct(codes: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct ``codes`` (all in ``[0, span)``) and where each code is among them."""
    if span > 4 * len(codes) + (1 << 16):
        present, position = np.unique(codes, return_inverse=True)
        return present, position.ravel()
    seen = np.zeros(span, dtype=bool)
    seen[codes] = True
    return np.flatnonzero(seen), (np.cumsum(seen, dtype=np.int64) - 1)[codes]


def classes_at(sample: CountedSample, levels: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The output classes of the full-domain recoding ``levels``: (node codes (c, d), sizes),
    sorted lexicographically by node codes — Apply's classes, computed from the counts alone."""
    if not sample.n_cells:
        return np.zeros((0, len(sample.columns)), dtype=np.int64), np.zeros(0, dtype=np.int64)
    generalized, sizes = [], []
    for j, column in enumerate(sample.columns):
        hierarchy, level = sample.hierarchies[column], int(levels[column])
        generalized.append(hierarchy.generalize(sample.codes[:, j], level).astype(np.int64))
        sizes.append(hierarchy.size(level))
    ids, n_classes = dense_ids(generalized, sizes)  # ids in lexicographic order of the node codes
    classes = np.column_stack([codes[first_of_each(ids, n_classes)] for codes in generalized])
    class_sizes = np.bincount(ids, weights=sample.counts, minlength=n_classes)
    return classes, np.rint(class_sizes).astype(np.int64)


@dataclass(frozen=True)
class AppliedCounts(SuppressionFacts):
    """Apply on a frequency table: the output classes of a full-domain recoding and which survive.

    ``class_codes[i]``: node codes of class i (one per column, at the scheme's levels),
    ``class_sizes[i]``: its rows, ``class_kept[i]``: size >= k (Apply's rule,
    :func:`crowdsafe.anonymize.apply.classify`). Mirrors :class:`~crowdsafe.anonymize.apply.Applied`'s
    summary attributes for engines that never hold the rows.
    """

    class_codes: np.ndarray  # (c, d) int64
    class_sizes: np.ndarray  # (c,) int64
    class_kept: np.ndarray  # (c,) bool
    k: int

    @classmethod
    def of(cls, class_codes: np.ndarray, class_sizes: np.ndarray, k: int) -> AppliedCounts:
        sizes = np.asarray(class_sizes, dtype=np.int64)
        return cls(np.asarray(class_codes, dtype=np.int64), sizes, sizes >= int(k), int(k))

    @property
    def rows_in(self) -> int:
        return int(self.class_sizes.sum())

    @property
    def rows_published(self) -> int:
        return int(self.class_sizes[self.class_kept].sum())


def apply_counts(sample: CountedSample, levels: Mapping[str, int], k: int) -> AppliedCounts:
    """Apply ``levels`` to a counted sample at leaf level and suppress classes below ``k``."""
    return AppliedCounts.of(*classes_at(sample, levels), k)


def class_frame(applied: AppliedCounts, scheme: Dictionaries, columns: Sequence[str]) -> pl.DataFrame:
    """The published classes, one row each (kept classes only, in class order), as the values
    the release shows (:meth:`GeneralizationScheme.dictionary`: leaves at level 0, node labels
    above)."""
    kept = applied.class_codes[applied.class_kept]
    return pl.DataFrame([scheme.dictionary(c)[kept[:, j]].alias(c) for j, c in enumerate(columns)])


def published_frame(applied: AppliedCounts, scheme: Dictionaries, columns: Sequence[str]) -> pl.DataFrame:
    """Apply's table when every published column is recoded: each kept class's tuple repeated by
    its size, classes in order (the rows of a class are identical, so nothing about the order of
    the sample's rows shows)."""
    sizes = applied.published_class_sizes
    return class_frame(applied, scheme, columns).gather(np.repeat(np.arange(len(sizes), dtype=np.int64), sizes))


SAMPLE_WITHHELD = (
    "this release was made from a secret Bernoulli sample, which does not leave the run: its input "
    "size, suppression and utility against the sample are custodian-only facts, in "
    "Publication.custodian_report()"
)


@dataclass(frozen=True)
class PublishedCounts(AppliedCounts):
    """The published classes of a release made from a secret sample (:func:`published_only`).

    Its classes are all kept, so the sample's size and what suppression removed are not in it:
    ``rows_in``, ``rows_suppressed`` and ``suppression_rate`` are refused (they read 0 suppressed
    of the published rows, a false "nothing was suppressed"); the exact facts are in
    ``Publication.custodian_report()``. ``rows_published``, ``classes`` and the class sizes are
    the release's own."""

    @property
    def rows_in(self) -> int:
        raise ParameterError(SAMPLE_WITHHELD)


def published_only(applied: AppliedCounts) -> PublishedCounts:
    """Only the published classes of ``applied`` (its suppressed classes, which are counts on the
    sample and not part of the release, dropped): what a release made from a secret sample keeps."""
    kept = applied.class_kept
    return PublishedCounts(applied.class_codes[kept], applied.class_sizes[kept], kept[kept], applied.k)
