"""A sample reduced to its frequency table: what the scheme chooser reads.

The ε1-safe chooser (:func:`crowdsafe.anonymize.selection.choose_scheme`) needs only the
distinct tuples of leaf codes of the sample and how many rows hold each, never the rows. So it
takes either a :class:`~crowdsafe.data.Dataset` (the Polars engine: the table is counted here)
or a :class:`CountedSample` made elsewhere (the Spark engine counts on the executors and hands
the driver this small table). Both engines then run the very same selection code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from crowdsafe.anonymize.apply import SuppressionFacts
from crowdsafe.anonymize.cells import cell_table
from crowdsafe.data import Dataset, Hierarchy
from crowdsafe.errors import SchemaError


@dataclass(frozen=True)
class CountedSample:
    """Distinct tuples of leaf codes (``codes[:, j]`` for ``columns[j]``) with their row counts.

    Codes are the data layer's leaf codes of each column's hierarchy (so
    ``hierarchies[c].generalize`` applies); ``counts`` are positive.
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
    cells = cell_table(sample, columns)
    hierarchies = {c: sample.hierarchies[c] for c in columns if c in sample.hierarchies}
    return CountedSample(columns, cells.codes, cells.counts, hierarchies)


def classes_at(sample: CountedSample, levels: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The output classes of the full-domain recoding ``levels``: (node codes (c, d), sizes),
    sorted lexicographically by node codes — Apply's classes, computed from the counts alone."""
    generalized = np.column_stack([
        sample.hierarchies[c].generalize(sample.codes[:, j], int(levels[c])).astype(np.int64)
        for j, c in enumerate(sample.columns)
    ]) if sample.n_cells else np.zeros((0, len(sample.columns)), dtype=np.int64)
    if not len(generalized):
        return generalized, np.zeros(0, dtype=np.int64)
    classes, inverse = np.unique(generalized, axis=0, return_inverse=True)
    sizes = np.bincount(inverse.ravel(), weights=sample.counts, minlength=len(classes))
    return classes, np.rint(sizes).astype(np.int64)


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
    def of(cls, class_codes: np.ndarray, class_sizes: np.ndarray, k: int) -> "AppliedCounts":
        sizes = np.asarray(class_sizes, dtype=np.int64)
        return cls(np.asarray(class_codes, dtype=np.int64), sizes, sizes >= int(k), int(k))

    @property
    def rows_in(self) -> int:  # type: ignore[override]
        return int(self.class_sizes.sum())

    @property
    def rows_published(self) -> int:  # type: ignore[override]
        return int(self.class_sizes[self.class_kept].sum())


def apply_counts(sample: CountedSample, levels: Mapping[str, int], k: int) -> AppliedCounts:
    """Apply ``levels`` to a counted sample at leaf level and suppress classes below ``k``."""
    return AppliedCounts.of(*classes_at(sample, levels), k)
