"""What a release made by the safe pipeline keeps of its recoding: the levels and the values it
published, nothing else.

The scheme that ran (:class:`~crowdsafe.anonymize.recoding.GeneralizationScheme`) holds the
hierarchies of the published columns, and a hierarchy built over the data
(:class:`~crowdsafe.data.hierarchy.ObservedHierarchy`: the flat hierarchy of a column given none,
intervals over the values present) lists every value of the input, published or not. So the
:class:`~crowdsafe.anonymize.release.Release`, the :class:`~crowdsafe.selection.mechanism.SchemeChoice`
and the :class:`~crowdsafe.anonymize.publish.Publication` a run returns keep a
:class:`PublishedScheme` instead: per column its level, its level's name (fixed by the schema) and
the values of the published classes (a DP output: the release shows them). A pickle or repr of a
publication then holds no value of a row that was not published (``tests/privacy_boundary``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.anonymize.counted import AppliedCounts
from crowdsafe.anonymize.recoding import FullDomain, GeneralizationScheme, RecodedColumns
from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError


@dataclass(frozen=True)
class PublishedScheme(FullDomain):
    """A full-domain scheme as a release keeps it: ``levels`` per column, ``level_names`` (the
    schema's name of each chosen level), ``values[c]``, the values column ``c`` publishes, by
    the class codes of the release's :class:`~crowdsafe.anonymize.counted.AppliedCounts`, and
    ``level_descriptions`` (each level in words, from public information:
    :meth:`~crowdsafe.data.hierarchy.Hierarchy.describe_level`). It
    describes the recoding; it cannot recode another table (it has no hierarchy): for that,
    ``GeneralizationScheme.of(dataset, scheme.levels)``."""

    levels: Mapping[str, int]
    level_names: Mapping[str, str]
    values: Mapping[str, pl.Series] = field(repr=False)
    name: str = "full-domain generalization"
    level_descriptions: Mapping[str, str] = field(default_factory=dict, repr=False)

    def recode(self, dataset: Dataset) -> RecodedColumns:
        raise ParameterError("a published scheme keeps only the values it published, not its hierarchies: recode "
                             "another table with GeneralizationScheme.of(dataset, scheme.levels)")

    def dictionary(self, column: str) -> pl.Series:
        """The values column ``column`` publishes, by class code."""
        return self.values[column]

    def describe(self) -> dict[str, Any]:
        return {"kind": "global", "name": self.name, "levels": dict(self.levels), "level_names": dict(self.level_names),
                "level_descriptions": dict(self.level_descriptions)}

    def __repr__(self) -> str:
        return f"PublishedScheme({self.name!r}, levels={dict(self.levels)})"


def published_scheme(applied: AppliedCounts, scheme: GeneralizationScheme, columns: Sequence[str]
                     ) -> tuple[AppliedCounts, PublishedScheme]:
    """The release's classes with each column's codes renumbered over the values its published
    classes hold (order kept, so the classes stay sorted), and the :class:`PublishedScheme` that
    maps them to those values. ``applied`` holds the published classes only
    (:func:`~crowdsafe.anonymize.counted.published_only`)."""
    if not bool(np.all(applied.class_kept)):
        raise ParameterError("a published scheme is made from the published classes only")
    codes = np.empty_like(applied.class_codes)
    values: dict[str, pl.Series] = {}
    for j, column in enumerate(columns):
        present, position = np.unique(applied.class_codes[:, j], return_inverse=True)
        codes[:, j] = position.ravel()
        values[column] = scheme.dictionary(column)[present]  # (indexing: a third of gather's cost)
    described = scheme.describe()
    public = PublishedScheme(dict(scheme.levels), dict(described.get("level_names", {})), values, scheme.name,
                             dict(described.get("level_descriptions", {})))
    return replace(applied, class_codes=codes), public  # (a PublishedCounts stays one: no sample facts)

