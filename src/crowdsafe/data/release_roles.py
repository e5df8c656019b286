"""A release as a :class:`~crowdsafe.data.dataset.Dataset` that carries its original's roles,
types and hierarchies (the models and the app read releases through it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from crowdsafe.data.dataset import Dataset


def release_dataset(release: pl.DataFrame | Dataset, original: Dataset) -> Dataset:
    """A release as a Dataset that carries its original's roles, types and hierarchies.

    Columns are those of the release (in its order); roles and types come from the original
    (a column the original lacks is inferred). A hierarchy is kept for a column only when the
    release still holds original values there (not generalized cells), so ungeneralized
    sensitive attributes keep theirs, e.g. for the hierarchical t-closeness distance. A
    Dataset's missing-value report is kept (a frame's is computed under the ``keep`` policy).
    """
    from dataclasses import replace

    from crowdsafe.data.dataset import Dataset
    from crowdsafe.data.schema import AttributeType, Schema
    from crowdsafe.errors import HierarchyError

    frame = release.frame if isinstance(release, Dataset) else release
    known = [c for c in frame.columns if c in original.schema]
    extra = [c for c in frame.columns if c not in original.schema]
    schema = original.schema.select(known)
    if extra:
        schema = replace(schema, attributes=schema.attributes + Schema.infer(frame.select(extra)).attributes,
                         undeclared=schema.undeclared | frozenset(extra))
        schema = schema.select(frame.columns)
    hierarchies = {}
    generalized = []
    for column in known:
        hierarchy = original.hierarchies.get(column)
        if hierarchy is not None:
            try:
                hierarchy.validate(frame.get_column(column), column=column)
                hierarchies[column] = hierarchy
                continue
            except HierarchyError:
                pass  # generalized cells: read through the original's domain instead
        order = original.schema[column].order
        if order is not None:
            allowed = {str(v) for v in order}
            if not set(frame.get_column(column).drop_nulls().cast(pl.String).unique().to_list()) <= allowed:
                generalized.append(column)
        elif hierarchy is not None:
            generalized.append(column)
    if generalized:  # a declared order does not rank generalized cells
        schema = replace(schema, attributes=tuple(
            replace(a, order=None, type=AttributeType.CATEGORICAL) if a.name in generalized and a.order
            else a for a in schema.attributes))
    if isinstance(release, Dataset):  # its missing values as read (the summary says what the table shows)
        return Dataset(frame, schema, hierarchies, release.name or "release", release.missing)
    from crowdsafe.data.missing import MissingPolicy, apply_missing_policy

    return Dataset(frame, schema, hierarchies, "release", apply_missing_policy(frame, MissingPolicy.KEEP)[1])
