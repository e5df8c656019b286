"""``Apply``: map every row through a recoding g and suppress the rare output tuples.

This is the second step of the two-step form ``release = Apply(Am(D), Sample_β(D), k)`` (Li,
Qardaji and Su 2012, Section 4; docs/architecture.md). Whatever chose g — a fixed scheme, an
ε-DP selection, Mondrian, microaggregation, a lattice search — the release is made here, the
same way:

1. every row gets its published quasi-identifier tuple ``g(row)``;
2. every output tuple held by fewer than ``k`` rows is suppressed (its rows are removed), as
   is, when ℓ-diversity or t-closeness is asked, every class that fails it;
3. the kept rows are published: the quasi-identifiers recoded, the other attributes as they
   were, identifiers dropped, rows ordered by class (then by a hash of their other values) so
   that the input's row order — which may carry information — does not show.

A suppression limit makes Apply refuse, with nothing produced, when more rows would be
suppressed than allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.anonymize.cells import dense_ids, first_of_each
from crowdsafe.anonymize.constraints import NO_CONSTRAINTS, SensitiveConstraints, classes_satisfying
from crowdsafe.anonymize.recoding import RecodedColumns, Recoding
from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import quantity


def check_k(k: Any) -> int:
    """``k`` as a whole number >= 1 (ParameterError otherwise)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be a whole number >= 1, got {k!r}")
    return int(k)


def check_suppression_limit(limit: Any) -> float:
    """A suppression limit: a share of the rows in [0, 1]."""
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0.0 <= float(limit) <= 1.0:
        raise ParameterError(f"the suppression limit is a share of the rows in [0, 1], got {limit!r}")
    return float(limit)


class SuppressionFacts:
    """What Apply did, from ``rows_in``, ``rows_published``, ``class_sizes`` and ``class_kept``
    (shared by :class:`Applied` and :class:`crowdsafe.anonymize.counted.AppliedCounts`)."""

    class_sizes: np.ndarray
    class_kept: np.ndarray

    @property
    def rows_in(self) -> int:
        raise NotImplementedError

    @property
    def rows_published(self) -> int:
        raise NotImplementedError

    @property
    def rows_suppressed(self) -> int:
        return self.rows_in - self.rows_published

    @property
    def suppression_rate(self) -> float:
        return self.rows_suppressed / self.rows_in if self.rows_in else 0.0

    @property
    def classes(self) -> int:
        """Number of published equivalence classes."""
        return int(self.class_kept.sum())

    @property
    def published_class_sizes(self) -> np.ndarray:
        return self.class_sizes[self.class_kept]


@dataclass(frozen=True)
class Applied(SuppressionFacts):
    """The outcome of :func:`apply`.

    ``frame`` holds the published rows. ``class_of_row`` gives each input row's output class
    (an index into ``class_sizes``), ``kept`` whether the row was published.
    """

    frame: pl.DataFrame
    recoded: RecodedColumns
    class_of_row: np.ndarray
    class_sizes: np.ndarray
    class_kept: np.ndarray
    kept: np.ndarray
    k: int

    @property
    def rows_in(self) -> int:
        return len(self.kept)

    @property
    def rows_published(self) -> int:
        return self.frame.height



def output_classes(recoded: RecodedColumns) -> tuple[np.ndarray, int]:
    """The output class of every row: rows with equal published tuples share a class id."""
    columns = recoded.columns
    sizes = [len(recoded.dictionaries[c]) for c in columns]
    if recoded.group_of_row is not None and recoded.group_codes is not None:
        group_class, n_classes = dense_ids([recoded.group_codes[c] for c in columns], sizes)
        return group_class[recoded.group_of_row], n_classes
    return dense_ids([recoded.codes[c] for c in columns], sizes)


@dataclass(frozen=True)
class Classified:
    """Every row's output class and which classes survive suppression (no table built yet)."""

    recoded: RecodedColumns
    class_of_row: np.ndarray
    class_sizes: np.ndarray
    class_kept: np.ndarray
    kept: np.ndarray

    @property
    def rows_suppressed(self) -> int:
        return len(self.kept) - int(self.kept.sum())

    @property
    def suppression_rate(self) -> float:
        return self.rows_suppressed / len(self.kept) if len(self.kept) else 0.0


def classify(
    dataset: Dataset,
    recoding: Recoding,
    k: int,
    *,
    constraints: SensitiveConstraints = NO_CONSTRAINTS,
) -> Classified:
    """The first half of Apply: recode, find the output classes, decide which are suppressed.

    Cheap next to building the release, so a caller can look at the suppression first (for
    instance to stop before publishing a table that lost most of its rows).
    """
    k = check_k(k)
    recoded = recoding.recode(dataset)
    class_of_row, n_classes = output_classes(recoded)
    sizes = np.bincount(class_of_row, minlength=n_classes).astype(np.int64)
    class_kept = sizes >= k
    if constraints.active:
        sensitive = dataset.encoded(constraints.attribute).codes.astype(np.int64)
        class_kept &= classes_satisfying(constraints, class_of_row, sensitive, n_classes)
    return Classified(recoded, class_of_row, sizes, class_kept, class_kept[class_of_row])


def apply(
    dataset: Dataset,
    recoding: Recoding | Classified,
    k: int,
    *,
    constraints: SensitiveConstraints = NO_CONSTRAINTS,
    suppression_limit: float | None = None,
) -> Applied:
    """Recode every row of ``dataset`` with ``recoding`` and suppress classes below ``k``.

    With ``constraints`` (ℓ-diversity / t-closeness on a sensitive attribute), classes that
    fail them are suppressed too. ``suppression_limit`` (a share of the rows) makes the call
    raise :class:`~crowdsafe.errors.ParameterError` instead of suppressing more. ``recoding``
    may be the result of :func:`classify` on the same dataset, k and constraints.
    """
    k = check_k(k)
    done = recoding if isinstance(recoding, Classified) else classify(dataset, recoding, k, constraints=constraints)
    suppressed = done.rows_suppressed
    if suppression_limit is not None:
        limit = check_suppression_limit(suppression_limit)
        if suppressed > limit * len(done.kept):
            name = recoding.name if isinstance(recoding, Recoding) else "this recoding"
            raise ParameterError(
                f"{name} would suppress {suppressed:,} of {quantity(len(done.kept), 'row')} "
                f"({done.suppression_rate:.1%}), above the suppression limit of {limit:.1%}; "
                "generalize more, lower k, or allow more suppression"
            )
    frame = _published_frame(dataset, done.recoded, done.class_of_row, done.kept)
    return Applied(frame, done.recoded, done.class_of_row, done.class_sizes, done.class_kept, done.kept, k)


def _published_frame(
    dataset: Dataset, recoded: RecodedColumns, class_of_row: np.ndarray, kept: np.ndarray
) -> pl.DataFrame:
    """The kept rows, recoded, ordered by class and then by a hash of their other values.

    The order depends on the rows' content only, never on their position in the input.
    """
    identifiers = set(dataset.schema.identifiers)
    columns = [c for c in dataset.columns if c not in identifiers]
    others = [c for c in columns if c not in recoded.codes]
    rows = np.flatnonzero(kept)
    if not others and len(rows):
        return _classes_repeated(recoded, columns, class_of_row, rows)
    key = class_of_row[rows].astype(np.uint64) << np.uint64(32)
    if others and len(rows):
        content = dataset.frame.select(others)
        if len(rows) < len(kept):
            content = content.gather(rows)
        digest = content.select(pl.struct(others).hash(seed=0)).to_series().to_numpy()
        key |= digest >> np.uint64(32)
    rows = rows[pl.Series(key).arg_sort().to_numpy()]
    if len(rows) == 0:
        return dataset.frame.select(columns).clear().with_columns(
            recoded.dictionaries[c].clear().alias(c) for c in recoded.columns)
    code_columns = {f"__code_{i}": recoded.codes[c][rows] for i, c in enumerate(recoded.columns)}
    published = pl.DataFrame(code_columns).lazy().select(
        pl.lit(recoded.dictionaries[c]).gather(pl.col(f"__code_{i}")).alias(c)
        for i, c in enumerate(recoded.columns)
    ).collect()
    frame = dataset.frame.select(columns).gather(rows)
    return frame.with_columns(published.get_column(c) for c in recoded.columns)


def _classes_repeated(
    recoded: RecodedColumns, columns: list[str], class_of_row: np.ndarray, rows: np.ndarray
) -> pl.DataFrame:
    """:func:`_published_frame` when every published column is recoded: the rows of a class are
    identical, so the table is each kept class's tuple repeated by its size, classes in order
    (the same table, built from one row per class instead of every row)."""
    sizes = np.bincount(class_of_row[rows], minlength=int(class_of_row.max()) + 1)
    classes = np.flatnonzero(sizes)
    one_row = first_of_each(class_of_row, len(sizes))[classes]
    per_class = pl.DataFrame({f"__code_{i}": recoded.codes[c][one_row] for i, c in enumerate(columns)}).lazy().select(
        pl.lit(recoded.dictionaries[c]).gather(pl.col(f"__code_{i}")).alias(c) for i, c in enumerate(columns)
    ).collect()
    return per_class.gather(np.repeat(np.arange(len(classes)), sizes[classes]))
