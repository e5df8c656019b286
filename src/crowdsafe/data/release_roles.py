"""A release as a :class:`~crowdsafe.data.dataset.Dataset` that carries its original's roles,
types and hierarchies (the models and the app read releases through it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from crowdsafe.data.dataset import Dataset
    from crowdsafe.errors import InputError


def centroid_error(column: str, cell: object) -> InputError:
    """The one-line refusal of a release cell that is a number no value of the original equals:
    a microaggregated release's centroid (``anonymize --algorithm mdav``), which the cell readers
    of compare and check --original (a cell is the set of original values it covers) do not read."""
    from crowdsafe.errors import InputError

    return InputError(
        f"column '{column}' of the release holds {str(cell)!r}, a number that no value of the original equals: "
        "compare and check --original do not measure a microaggregated release (anonymize --algorithm mdav "
        "publishes centroids); check the release alone, or give the table it was made from"
    )


def refuse_centroids(release: pl.DataFrame, original: Dataset) -> None:
    """Refuse (:func:`centroid_error`) a release whose numeric, date or timestamp column holds a
    value its original's column never takes, before anything is measured (vectorised; a column of
    text cells, ranges or sets, is left to the cell reader, which refuses a stray number alike)."""
    for name in release.columns:
        if name not in original.columns:
            continue
        published = release.get_column(name)
        values = original.encoded(name).dictionary
        if published.dtype.is_numeric() and values.dtype.is_numeric():
            published, values = published.cast(pl.Float64), values.cast(pl.Float64)
        elif not (published.dtype.is_temporal() and published.dtype == values.dtype):
            continue
        stray = published.drop_nulls().filter(~published.drop_nulls().is_in(values.drop_nulls().implode()))
        if len(stray):
            raise centroid_error(name, stray[0])


def release_dataset(release: pl.DataFrame | Dataset, original: Dataset) -> Dataset:
    """A release as a Dataset that carries its original's roles, types and hierarchies.

    Columns are those of the release (in its order); roles and types come from the original
    (a column the original lacks is inferred). A hierarchy is kept for a column only when the
    release still holds original values there (not generalized cells), so ungeneralized
    sensitive attributes keep theirs, e.g. for the hierarchical t-closeness distance. A
    Dataset's missing-value report is kept (a frame's is computed under the ``keep`` policy).
    A microaggregated release (centroids no original value equals) is refused
    (:func:`refuse_centroids`).
    """
    from dataclasses import replace

    from crowdsafe.data.dataset import Dataset
    from crowdsafe.data.schema import AttributeType, Schema
    from crowdsafe.errors import HierarchyError

    frame = release.frame if isinstance(release, Dataset) else release
    refuse_centroids(frame, original)
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
