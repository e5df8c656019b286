"""The load pipeline: ``data`` becomes a :class:`~crowdsafe.data.Dataset` in five steps, each once
and in this order.

1. **read** (:mod:`crowdsafe.data.sources`, :mod:`crowdsafe.data.io`): a file, frame, named
   table or Dataset becomes a :class:`~crowdsafe.data.sources.Source`;
2. **schema**: the declared schema is applied (:func:`~crowdsafe.data.schema.complete_schema`),
   or the table's own is kept, or one is inferred (:meth:`~crowdsafe.data.Schema.infer`);
3. **coerce** (:mod:`crowdsafe.data.coerce`): text read from a file gets the declared types;
4. **missing values** (:mod:`crowdsafe.data.missing`): the policy is applied and reported;
5. **hierarchies**: those the schema specifies are built (:func:`~crowdsafe.data.builders.from_spec`)
   or those that came with the table are kept; then the Dataset is made (which checks that each
   hierarchy covers its column), and the caller's roles and hierarchies are applied.

The data layer knows nothing of privacy: nothing here is released.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from crowdsafe import arguments
from crowdsafe.data.builders import from_spec
from crowdsafe.data.coerce import coerce, declared_numbers, declared_text
from crowdsafe.data.column_types import settle
from crowdsafe.data.dataset import Dataset
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.data.missing import (
    DEFAULT_MISSING,
    DEFAULT_MISSING_TOKENS,
    MissingPolicy,
    MissingReport,
    apply_missing_policy,
    emptied_by_drop,
    nan_as_missing,
)
from crowdsafe.data.schema import Schema, complete_schema, declared_and_reading
from crowdsafe.data.sources import Source, read_source
from crowdsafe.errors import ParameterError

__all__ = ["load", "load_release", "load_source"]


def load(
    data: Any,
    *,
    schema: Schema | str | os.PathLike[str] | None = None,
    qi: Sequence[str] | str | None = None,
    sensitive: Sequence[str] | str | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    separator: str | None = None,
    missing_tokens: Sequence[str] | str = DEFAULT_MISSING_TOKENS,
    name: str | None = None,
    decimal_comma: bool | None = None,
    empty: bool = False,
) -> Dataset:
    """Load a table as a :class:`Dataset`.

    ``data`` is a path (CSV or Parquet), the name of a bundled dataset (``"adult"``), a Polars
    or pandas DataFrame, or a Dataset. ``schema`` is a :class:`Schema` or a TOML file; without
    one it is inferred (every attribute a quasi-identifier; see :meth:`Schema.infer`).
    ``qi``/``sensitive`` then set the roles (:meth:`Schema.with_roles`). ``missing`` is the
    missing-value policy (default ``keep``: a missing value is a value of its own; see
    :mod:`crowdsafe.data.missing`); in CSV files an empty field and ``missing_tokens`` are
    missing. ``decimal_comma``: how a CSV file writes its numbers (None: as the schema's
    ``[csv]`` table says, else found in a ``;``-separated file; :mod:`crowdsafe.data.decimal_comma`).
    A column of a type crowdsafe cannot use is refused, or dropped with a note when the run does
    not use it (:mod:`crowdsafe.data.column_types`). Raises :class:`~crowdsafe.errors.InputError` /
    :class:`~crowdsafe.errors.SchemaError` with a one-line message naming the problem. A table
    with a header but no rows is refused unless ``empty`` (``check`` and ``compare``, which charge
    nothing, read it: a release whose every row was suppressed). ``qi``, ``sensitive`` and
    ``missing_tokens`` may each be one string (the list of that one), and ``hierarchies`` maps
    column names to hierarchies; these are checked before anything is read
    (:mod:`crowdsafe.arguments`).
    """
    qi, sensitive = arguments.names(qi, "qi"), arguments.names(sensitive, "sensitive")
    missing_tokens = arguments.strings(missing_tokens, "missing_tokens", "a missing-value token")
    if hierarchies is not None and not isinstance(hierarchies, Mapping):
        raise ParameterError("hierarchies must map column names to hierarchies, e.g. {'age': intervals('age', "
                             f"range(0, 120), widths=[10])}}; got {arguments.kind(hierarchies)}",
                             parameter="hierarchies")
    policy = MissingPolicy.parse(missing)
    given = Schema.from_toml(Path(schema)) if isinstance(schema, (str, os.PathLike)) else arguments.schema(schema)
    declared, reading = declared_and_reading(given, decimal_comma)
    source = read_source(data, declared=declared, separator=separator, missing_tokens=missing_tokens, name=name,
                         decimal_comma=reading, empty=empty)
    return load_source(source, schema=declared, missing=policy, qi=qi, sensitive=sensitive, hierarchies=hierarchies)


def load_release(release: Any, *, missing: MissingPolicy | str = DEFAULT_MISSING) -> Dataset:
    """:func:`load` for a release read against its original (``check --original``, ``compare``):
    a formula-safe CSV release crowdsafe wrote has its escape undone (``'=1+1`` -> ``=1+1``,
    :func:`crowdsafe.csv_safety.escaped_release`), so its cells read as the values they publish.
    A release without rows (every row suppressed) is read, not refused."""
    from dataclasses import replace

    from crowdsafe.csv_safety import escaped_release, unescape_frame

    if not escaped_release(release):
        return load(release, missing=missing, empty=True)
    # undone before the schema is inferred, so that the column names are the ones published ('=x', not "'=x")
    source = read_source(release, empty=True)
    return load_source(replace(source, frame=unescape_frame(source.frame)), missing=missing)


def load_source(
    source: Source,
    *,
    schema: Schema | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    qi: Sequence[str] | None = None,
    sensitive: Sequence[str] | str | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> Dataset:
    """Steps 2 to 5 of the pipeline on a table already read (see the module's docstring)."""
    policy = MissingPolicy.parse(missing)
    schema = settle(source.unusable, schema, qi, sensitive, source.label)
    table_schema = _apply_schema(source, schema)
    if schema is None:
        frame = source.frame
    elif source.typed:  # typed columns keep their types, but a declared integer or real is held as declared
        frame = declared_text(declared_numbers(source.frame, table_schema, source.label), table_schema)
    else:
        frame = coerce(source.frame.select(table_schema.names), table_schema, source.label)
    given = frame
    frame, report = _apply_missing(source, frame, policy)
    attached = _hierarchies(source, table_schema, frame)
    loaded = source.loaded
    if loaded is not None and schema is None and frame is loaded.frame and report is loaded.missing:
        dataset = loaded  # nothing changed: the same Dataset, its caches kept
    else:
        dataset = Dataset(frame, table_schema, attached, source.name, report)
        if frame.height < given.height:  # rows dropped: identified as given (the same people, one budget)
            dataset.identify_as(nan_as_missing(given))
    if qi is not None or sensitive is not None:
        dataset = dataset.with_roles(qi=qi, sensitive=sensitive)
    if hierarchies:
        dataset = dataset.with_hierarchies(hierarchies)
    return dataset


def _apply_schema(source: Source, declared: Schema | None) -> Schema:
    """The declared schema completed by the data's other columns, else the table's own, else inferred."""
    if declared is not None:
        schema = complete_schema(declared, source.frame)
    else:
        schema = source.schema if source.schema is not None else Schema.infer(source.frame)
    return schema.marked_read(source.read_by_data)


def _apply_missing(source: Source, frame: pl.DataFrame, policy: MissingPolicy) -> tuple[pl.DataFrame, MissingReport]:
    """The missing-value policy applied. A Dataset already had one: ``keep`` leaves it as it is,
    and another policy that removes nothing and names the same policy changes nothing."""
    loaded = source.loaded
    if loaded is not None:
        if policy is MissingPolicy.KEEP:
            return frame, loaded.missing
        kept, report = apply_missing_policy(frame, policy, source=source.label)
        if kept.height == frame.height and policy is loaded.missing.policy:
            return frame, loaded.missing
        return kept, report
    kept, report = apply_missing_policy(frame, policy, source=source.label)
    if kept.height == 0 and frame.height and not source.typed:  # (a table without rows has none to drop)
        raise emptied_by_drop(source.label)
    return kept, report


def _hierarchies(source: Source, schema: Schema, frame: pl.DataFrame) -> dict[str, Hierarchy]:
    """Those the schema specifies, built over the column's values after the missing-value policy,
    and, for a typed table, its own hierarchies of the other columns; each with a missing-value
    leaf where the column keeps missing values (a typed table's only where it asks for them). A
    schema given for a typed table (a bundled one) is honoured: its hierarchies are the ones used,
    never silently replaced by the table's own."""
    built = {
        a.name: from_spec(a.hierarchy, frame.get_column(a.name), attribute=a.name)
        for a in schema if a.hierarchy is not None
    }
    counts = frame.null_count().row(0, named=True)
    # a kept missing value is a value of its own: it gets a leaf, as in a typed table's hierarchies
    built = {c: h.with_missing_leaf() if counts[c] else h for c, h in built.items()}
    if not source.typed:
        return built
    own = {c: h for c, h in source.hierarchies.items() if c not in built}
    if source.missing_leaves:
        own = {c: h.with_missing_leaf() if counts.get(c) else h for c, h in own.items()}
    return {**own, **built}
