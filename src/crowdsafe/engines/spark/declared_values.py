"""The distinct values of a published column with a declared hierarchy, without collecting them.

The table pass (:mod:`.table`) needs each published column's distinct values: the domain
dataset is loaded from them (types, hierarchies, coverage) and the dictionaries map them to leaf
codes. Collecting them (``collect_set``, :func:`.encoding.domain_scan`) is the costliest part of
that pass. For a column whose hierarchy is *declared* (its leaves fixed before the data is read)
the pass instead only notes whether the column holds a missing value (:func:`leaf_nulls`), and
takes the column's values to be its leaves, with the missing value when it holds one
(:func:`assumed_values`). The table's count by leaf codes, which follows
(:func:`crowdsafe.engines.spark.sampling.count_table`), checks that assumption on every row for
free: a value that is not a leaf has no code there. When one has none, :func:`outside_columns`
finds which columns hold such values (one more aggregation), those columns are collected after
all, and the table is described and counted again. Only then does anything else read the table's
description: the plan checks, the ledger and the sample all come after.

When every published column is declared, the count does not wait for the pass: it runs beside
it, with dictionaries made from :func:`possible_values` (the leaves and the missing value: a
published hierarchy has its missing-value leaf whatever the data holds). It is kept when every
(value, code) pair of the final dictionaries (missing value only where the pass found one) is one
of those: the codes counted are then the final ones; otherwise the table is counted again.

Why the outcome is the same as collecting. The values present are a subset of the leaves, so
every value present is in the dictionary, with the code the hierarchy gives it (a leaf's code
does not depend on which other leaves are present), and the missing value is there exactly when
it is present. Nothing else the pipeline reads from the domain changes: the column's type and
role come from the declared schema (the fast path needs one), the hierarchy is the declared one,
and no declared value lies outside it, as collecting would have found. The dictionary may list
leaves no row holds; it is only looked up. ``tests/engines/spark/test_spark_declared_values.py``
runs both ways on the same tables and compares the tables, samples and publications.

Eligible (:func:`leaves_to_check`): a declared, not observed, hierarchy (:func:`declared_hierarchies`:
a schema file's hierarchy file, ``groups`` or ordered ``fanout``, or a hierarchy given as an object,
the ``hierarchies`` argument or those of a dataset loaded in this process); a column the schema
declares; a text, integral or boolean column whose leaves (at most ``JVM_DICTIONARY_LIMIT``)
convert to its type and back unchanged; not a CSV file (its values are tidied after collecting,
which the leaves cannot stand for). A schema file's builders over the values read (``widths``,
``cuts``, ``mask``, ``dates``, ``flat``, ``fanout`` without an order) make observed hierarchies:
those columns are collected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from crowdsafe.data import Hierarchy, Schema
from crowdsafe.engines.spark.sampling import JVM_DICTIONARY_LIMIT
from crowdsafe.engines.spark.typed_table import _quoted

_CHECKED_TYPES = ("string", "tinyint", "smallint", "int", "bigint", "boolean")
#: False: every published column is collected (the reference twin; tests switch it off).
CHECK_DECLARED_LEAVES = True


def declared_hierarchies(schema: Schema | None, given: Mapping[str, Hierarchy] | None) -> dict[str, Hierarchy]:
    """The hierarchies fixed before the data is read: the schema file's declared ones (a hierarchy
    file, ``groups``, an ordered ``fanout``: :func:`~crowdsafe.data.builders.is_declared_spec`),
    built as the data layer builds them, then those ``given`` as objects (which add to or replace
    the schema's, as in :func:`crowdsafe.data.load`). One the schema cannot build is left out: the
    data layer reports it when it loads the domain."""
    from crowdsafe.data.builders import from_spec, is_declared_spec
    from crowdsafe.errors import CrowdsafeError

    out: dict[str, Hierarchy] = {}
    for attribute in schema or ():
        spec = attribute.hierarchy
        if spec is not None and is_declared_spec(spec):
            try:
                out[attribute.name] = from_spec(spec, pl.Series([], dtype=pl.String), attribute=attribute.name)
            except (CrowdsafeError, OSError, ValueError):
                continue
    out.update(given or {})
    return out


def leaves_to_check(frame_schema: Mapping[str, str], types: Mapping[str, pl.DataType], columns: Sequence[str],
                    schema: Schema | None, hierarchies: Mapping[str, Hierarchy] | None) -> dict[str, pl.Series]:
    """Per eligible column of ``columns`` (module docstring), its declared leaves (not the missing
    one) in the Polars type its collected values would have (``types``: the frame's columns as
    Polars reads them; ``frame_schema``: their Spark types)."""
    if not CHECK_DECLARED_LEAVES or schema is None or not hierarchies:
        return {}
    declared = set(schema.names)
    out: dict[str, pl.Series] = {}
    for c in columns:
        hierarchy = hierarchies.get(c)
        if hierarchy is None or hierarchy.observed or c not in declared or frame_schema[c] not in _CHECKED_TYPES:
            continue
        leaves = hierarchy.leaves.drop_nulls()
        try:
            typed = leaves.cast(types[c], strict=True)
            unchanged = typed.cast(leaves.dtype, strict=True).equals(leaves)
        except (pl.exceptions.PolarsError, OverflowError):
            continue
        # (at most JVM_DICTIONARY_LIMIT leaves: the sampling job's fast path takes the dictionary as
        # it would have taken the values present)
        if unchanged and typed.n_unique() == len(typed) and 0 < len(typed) <= JVM_DICTIONARY_LIMIT:
            out[c] = typed.alias(c)
    return out


def leaf_nulls(leaves: Mapping[str, pl.Series]) -> list[Any]:
    """The aggregates the table pass adds for the columns of ``leaves``: ``__leaf_null_<j>``, 1
    when the column holds a missing value."""
    from pyspark.sql import functions as F

    return [F.max(F.col(_quoted(c)).isNull().cast("int")).alias(f"__leaf_null_{j}") for j, c in enumerate(leaves)]


def assumed_values(leaves: Mapping[str, pl.Series], row: Any) -> dict[str, pl.Series]:
    """From the table pass's Arrow ``row`` (:func:`leaf_nulls`): each column's values as its
    leaves, then the missing value when the column holds one. The table's count checks the
    assumption (:func:`crowdsafe.engines.spark.sampling.count_table`)."""
    values: dict[str, pl.Series] = {}
    for j, (c, listed) in enumerate(leaves.items()):
        missing = bool(row.column(f"__leaf_null_{j}")[0].as_py())
        values[c] = listed.sort().extend(pl.Series(c, [None], dtype=listed.dtype)) if missing else listed.sort()
    return values


def possible_values(leaves: Mapping[str, pl.Series]) -> dict[str, pl.Series]:
    """Each column's leaves and the missing value: every value the column may hold without a
    value outside its leaves (what the table is counted with while the pass runs beside it)."""
    return {c: listed.sort().extend(pl.Series(c, [None], dtype=listed.dtype)) for c, listed in leaves.items()}


def outside_columns(frame: Any, leaves: Mapping[str, pl.Series], frame_schema: Mapping[str, str]) -> list[str]:
    """The columns of ``leaves`` holding a value that is not missing and not one of their leaves:
    one aggregation over ``frame`` (a hash-set look-up per row and column, on the JVM), run when
    the table's count found a value without a code."""
    from pyspark.sql import functions as F

    if not leaves:
        return []
    checks = []
    for j, (c, values) in enumerate(leaves.items()):
        column = F.col(_quoted(c))
        listed = column.isin(*[F.lit(v).cast(frame_schema[c]) for v in values.to_list()])
        checks.append(F.max((column.isNotNull() & ~listed).cast("int")).alias(f"__leaf_outside_{j}"))
    row = frame.agg(*checks).toArrow()
    return [c for j, c in enumerate(leaves) if int(row.column(f"__leaf_outside_{j}")[0].as_py() or 0)]
