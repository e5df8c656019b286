"""Recodings: the function g from an input row to its published quasi-identifier values.

Every publishing algorithm has the two-step form ``release = Apply(g, D, k)`` (see
docs/architecture.md): a *chooser* picks g, and :func:`crowdsafe.anonymize.apply.apply` maps
the rows through g and suppresses rare output tuples. Two kinds of g:

- :class:`GeneralizationScheme` — *global* full-domain recoding: one hierarchy level per
  attribute, the same for every row. It is defined on the whole domain of the hierarchies, so
  it can recode any table (for instance a fresh sample) the hierarchies cover. Whether a
  release made with it carries a guarantee depends only on how the levels were chosen.
- :class:`LocalRecoding` — *local* recoding: each row is put in a class and gets its class's
  published values (Mondrian's ranges, microaggregation's centroids). It is fitted to the rows
  of one table and recodes only those rows.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import Dataset, Hierarchy, encode_series
from crowdsafe.data.builders import observed_flat
from crowdsafe.data.encoding import encode_with_hierarchy
from crowdsafe.errors import HierarchyError, ParameterError, SchemaError


@dataclass(frozen=True)
class RecodedColumns:
    """Every row's published quasi-identifier values, dictionary-encoded per column.

    ``dictionaries[c][codes[c][i]]`` is the value published for row i in column c. A column
    whose values are all kept as they were keeps its dictionary's type; a generalized column
    is text in the release representation of docs/architecture.md.
    """

    codes: dict[str, np.ndarray]
    dictionaries: dict[str, pl.Series]
    # optional factorization: row i publishes group group_of_row[i], whose codes are
    # group_codes[c][group]; lets output classes be found over groups instead of rows
    group_of_row: np.ndarray | None = None
    group_codes: dict[str, np.ndarray] | None = None

    @property
    def columns(self) -> list[str]:
        return list(self.codes)


class Recoding(ABC):
    """A recoding g of some quasi-identifier columns."""

    name: str

    @property
    @abstractmethod
    def columns(self) -> tuple[str, ...]:
        """The recoded quasi-identifier columns."""

    @property
    @abstractmethod
    def kind(self) -> str:
        """``"global"`` (one scheme for every row) or ``"local"`` (per class)."""

    @abstractmethod
    def recode(self, dataset: Dataset) -> RecodedColumns:
        """The published values of every row of ``dataset``."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """A JSON-ready account of the recoding (for reports and certificates)."""


class FullDomain(Recoding):
    """A global recoding given by one hierarchy level per column (``levels``): what
    :class:`GeneralizationScheme` applies and what a release keeps of it
    (:class:`~crowdsafe.anonymize.published.PublishedScheme`)."""

    levels: Mapping[str, int]

    @property
    def kind(self) -> str:
        return "global"

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.levels)


@dataclass(frozen=True)
class GeneralizationScheme(FullDomain):
    """Full-domain generalization: column c is replaced by its hierarchy node at ``levels[c]``.

    Level 0 keeps the original value; a column without a hierarchy can only stay at level 0.
    The scheme is data-independent in form: it maps every value its hierarchies cover.
    """

    levels: Mapping[str, int]
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    name: str = "full-domain generalization"

    def __post_init__(self) -> None:
        levels = {str(c): int(level) for c, level in self.levels.items()}
        if not levels:
            raise ParameterError("a generalization scheme needs at least one column")
        for column, level in levels.items():
            hierarchy = self.hierarchies.get(column)
            if level < 0:
                raise ParameterError(f"level {level} of '{column}' is negative")
            if hierarchy is None:
                if level > 0:
                    raise HierarchyError(
                        f"column '{column}' has no hierarchy, so it cannot be generalized to level {level}"
                    )
            elif level > hierarchy.height:
                raise HierarchyError(
                    f"hierarchy '{column}' has levels 0..{hierarchy.height}, not level {level}"
                )
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "hierarchies", dict(self.hierarchies))

    @classmethod
    def of(cls, dataset: Dataset, levels: Mapping[str, int] | Sequence[int],
           columns: Sequence[str] | None = None) -> GeneralizationScheme:
        """The scheme with ``levels`` (a mapping, or a sequence aligned with ``columns``,
        default the quasi-identifiers) over the dataset's hierarchies."""
        if not isinstance(levels, Mapping):
            names = list(columns) if columns is not None else dataset.quasi_identifiers
            if len(names) != len(levels):
                raise ParameterError(f"{len(levels)} levels for {len(names)} columns")
            levels = dict(zip(names, levels))
        hierarchies = {c: dataset.hierarchies[c] for c in levels if c in dataset.hierarchies}
        return cls(levels, hierarchies)

    def recode(self, dataset: Dataset) -> RecodedColumns:
        codes: dict[str, np.ndarray] = {}
        dictionaries: dict[str, pl.Series] = {}
        for column, level in self.levels.items():
            if column not in dataset.schema:
                dataset.schema[column]  # raises a SchemaError naming the attributes
            hierarchy = self.hierarchies.get(column)
            if hierarchy is None:
                encoded = dataset.encoded(column)
                codes[column], dictionaries[column] = encoded.codes, encoded.dictionary
                continue
            if dataset.hierarchies.get(column) is hierarchy:
                leaves = dataset.encoded(column).codes
            else:
                leaves = encode_with_hierarchy(dataset.frame.get_column(column), hierarchy).codes
            codes[column] = leaves if level == 0 else hierarchy.generalize(leaves, level)
            dictionaries[column] = self.dictionary(column)
        return RecodedColumns(codes, dictionaries)

    def dictionary(self, column: str) -> pl.Series:
        """The values column ``column`` publishes, by node code at its level: the hierarchy's
        leaves (their own type) at level 0, the node labels (text) above."""
        hierarchy, level = self.hierarchies[column], self.levels[column]
        if level == 0:
            return hierarchy.leaves.alias(column)
        return pl.Series(column, hierarchy.labels[level], dtype=pl.String)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "global",
            "name": self.name,
            "levels": dict(self.levels),
            "level_names": {
                c: self.hierarchies[c].level_names[level] for c, level in self.levels.items()
                if c in self.hierarchies
            },
            "level_descriptions": {
                c: self.hierarchies[c].describe_level(level) for c, level in self.levels.items()
                if c in self.hierarchies
            },
        }


@dataclass(frozen=True)
class LocalRecoding(Recoding):
    """Per-class recoding fitted to the rows of one table.

    Row i belongs to class ``class_of_row[i]``; class j publishes ``values[c][j]`` in column c.
    It recodes only the table it was fitted on (same number of rows, same order).
    ``extents`` (optional, e.g. for microaggregation, whose ``values`` are centroids) gives
    per class the generalized cell covering its rows' original values, in the release
    representation: what utility measures that need coverage (NCP) are computed on.
    """

    name: str
    class_of_row: np.ndarray
    values: Mapping[str, pl.Series]
    details: Mapping[str, Any] = field(default_factory=dict)
    extents: Mapping[str, pl.Series] | None = None

    def __post_init__(self) -> None:
        sizes = {len(v) for v in self.values.values()}
        if len(sizes) != 1:
            raise ParameterError("every column of a local recoding needs one value per class")
        if len(self.class_of_row) and int(self.class_of_row.max()) >= sizes.pop():
            raise ParameterError("a row is put in a class the local recoding does not describe")

    @property
    def kind(self) -> str:
        return "local"

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.values)

    @property
    def n_classes(self) -> int:
        return len(next(iter(self.values.values())))

    def recode(self, dataset: Dataset) -> RecodedColumns:
        if dataset.n_rows != len(self.class_of_row):
            raise SchemaError(
                f"this {self.name} recoding was fitted to a table of {len(self.class_of_row):,} rows "
                f"and cannot recode one of {dataset.n_rows:,}: a local recoding only recodes its own rows"
            )
        codes: dict[str, np.ndarray] = {}
        dictionaries: dict[str, pl.Series] = {}
        class_codes: dict[str, np.ndarray] = {}
        for column, per_class in self.values.items():
            class_codes[column], dictionaries[column] = encode_series(per_class.alias(column))
            codes[column] = class_codes[column][self.class_of_row]
        return RecodedColumns(codes, dictionaries, self.class_of_row, class_codes)

    def describe(self) -> dict[str, Any]:
        return {"kind": "local", "name": self.name, "classes": self.n_classes, **dict(self.details)}


def with_flat_hierarchies(dataset: Dataset, columns: Sequence[str]) -> tuple[Dataset, list[str]]:
    """The dataset with the flat hierarchy (value -> *) for the ``columns`` that have none, and
    the names of those columns (a full-domain scheme needs a hierarchy per column). Each is an
    :class:`~crowdsafe.data.hierarchy.ObservedHierarchy` (:func:`~crowdsafe.data.builders.observed_flat`):
    its leaves are the values the data holds, so nothing public is computed from them."""
    added = [c for c in columns if c not in dataset.hierarchies]
    if not added:
        return dataset, []
    hierarchies = {c: observed_flat(dataset.frame.get_column(c)) for c in added}
    return dataset.with_hierarchies(hierarchies), added
