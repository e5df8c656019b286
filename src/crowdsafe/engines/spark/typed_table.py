"""A table on Spark with its crowdsafe schema: what the Spark paths of queries, α-β and attacks read.

:func:`load_table` reads a Parquet or CSV path into a Spark DataFrame and gives it the types and
roles the Polars engine's :func:`crowdsafe.data.load` would give: the schema is inferred or
completed from the first rows (a small head collected to the driver; never the table), and the
Spark columns are then cast to those types, checking on Spark that no value fails the cast. The
driver-side code (query planning, domains, certificates) sees a *schema-only*
:class:`~crowdsafe.data.Dataset` (zero rows, the same column types), so it runs unchanged.

:meth:`TypedTable.fingerprint` identifies the table's content for the budget ledger by the
Spark engine's order-independent digest (:mod:`crowdsafe.engines.spark.fingerprint`): the Polars
fingerprint hashes the rows in file order, which a distributed table does not have.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import polars as pl

from crowdsafe.data import Dataset, Schema, load
from crowdsafe.data.coerce import NOT_AS_DECLARED
from crowdsafe.data.missing import (
    DEFAULT_MISSING_TOKENS,
    MissingPolicy,
    MissingReport,
    emptied_by_drop,
    missing_refusal,
)
from crowdsafe.engines.spark import dates
from crowdsafe.errors import EMPTY_TABLE, InputError, SchemaError

HEAD_ROWS = 10_000  # rows read to the driver to infer types, as the Polars CSV reader does

_SPARK_TYPES = {
    pl.Int8: "tinyint", pl.Int16: "smallint", pl.Int32: "int", pl.Int64: "bigint",
    pl.UInt8: "smallint", pl.UInt16: "int", pl.UInt32: "bigint", pl.UInt64: "decimal(20,0)",
    pl.Float32: "float", pl.Float64: "double", pl.Boolean: "boolean", pl.Date: "date",
    pl.Datetime: "timestamp", pl.String: "string", pl.Categorical: "string", pl.Enum: "string",
}


def spark_type(dtype: pl.DataType) -> str:
    """The Spark SQL type holding a Polars type's values (text for anything without one)."""
    return _SPARK_TYPES.get(dtype.base_type(), "string")


@dataclass
class TypedTable:
    """A Spark DataFrame (``frame``) typed as ``dataset`` says; ``dataset`` has no rows."""

    frame: Any
    dataset: Dataset
    source: str
    #: the frame before ``missing='drop'`` removed rows (None: none removed), whose rows the
    #: table's identity digests: the same people, one budget
    given: Any = field(default=None, repr=False)
    _fingerprint: str | None = field(default=None, repr=False)

    @property
    def columns(self) -> list[str]:
        return self.dataset.columns

    @property
    def name(self) -> str | None:
        return self.dataset.name

    def fingerprint(self) -> str:
        """The table's ledger identity: the Spark engine's multiset digest of its rows
        (:mod:`crowdsafe.engines.spark.fingerprint`, the same digest ``publish --engine spark``
        uses), independent of row order and partitioning; of the table as given, before
        ``missing='drop'`` removed rows."""
        if self._fingerprint is None:
            from crowdsafe.engines.spark import fingerprint as fp

            self._fingerprint = fp.frame_digest(self.frame if self.given is None else self.given)
        return self._fingerprint


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def load_table(
    spark: Any,
    path: str | os.PathLike[str],
    *,
    schema: Schema | str | os.PathLike[str] | None = None,
    qi: Sequence[str] | None = None,
    sensitive: Sequence[str] | str | None = None,
    missing: MissingPolicy | str = "keep",
    name: str | None = None,
    columns: Sequence[str] | None = None,
) -> TypedTable:
    """Read ``path`` on Spark, typed and with roles as :func:`crowdsafe.data.load` would.

    ``columns`` (optional) restricts the table to those columns before anything is inferred.
    Missing values: ``keep`` (a value of its own), ``drop`` (rows with any missing value are
    removed, on Spark) or ``error``. Hierarchies built from the data are not built on Spark:
    give public domains explicitly where a query or a perturbation needs them.
    """
    from pyspark.sql import functions as F

    from crowdsafe.data.io import tidy_text
    from crowdsafe.engines.spark.io import declared_text, read_frame, reading_schema, usable_frame

    text = str(path)
    policy = MissingPolicy.parse(missing)
    if isinstance(schema, (str, os.PathLike)):
        schema = Schema.from_toml(cast("str | Path", schema))
    is_csv = not text.rstrip("/").lower().endswith((".parquet", ".pq")) and text.rstrip("/").lower().endswith(
        (".csv", ".csv.gz", ".tsv", ".txt", ".data"))
    schema = reading_schema(schema, from_path=True)[0]
    frame = read_frame(spark, text, missing_tokens=DEFAULT_MISSING_TOKENS if is_csv else ())
    frame, schema = usable_frame(frame, schema, qi, sensitive, text)
    if is_csv:
        stripped = [c.strip() for c in frame.columns]
        frame = frame.toDF(*stripped) if len(set(stripped)) == len(stripped) else frame
        frame = frame.select([F.trim(F.col(_quoted(c))).alias(c) for c in frame.columns])
    if columns is not None:
        absent = [c for c in columns if c not in frame.columns]
        if absent:
            raise InputError(f"{text} has no column '{absent[0]}' (it has {', '.join(frame.columns)})")
        frame = frame.select([_quoted(c) for c in columns])
    if not frame.columns:
        raise InputError(f"{text} has no columns")
    head = pl.from_arrow(frame.limit(HEAD_ROWS).toArrow())
    assert isinstance(head, pl.DataFrame)
    if head.height == 0:
        raise InputError(f"{text} has a header but no rows" + EMPTY_TABLE)
    if is_csv:
        declared = {a.name for a in schema or () if a.type.value in ("categorical", "ordinal")}
        head = tidy_text(head, declared)
    label = name or os.path.basename(text.rstrip("/")) or text
    typed = load(head, schema=schema, missing="keep", name=label)
    frame = declared_text(frame, typed.schema)  # categorical numbers: as text
    # a value past the first rows that the type inferred from them cannot hold widens the column, as the Polars
    # reader infers from every row then: integers to reals, else text (a declared type is checked by _cast)
    widened = _widened(frame, typed.frame.schema, [c for c in typed.frame.columns if schema is None
                                                    or c not in schema.names or schema.was_inferred(c)])
    if widened:
        typed = load(head.with_columns(pl.col(c).cast(t) for c, t in widened.items()), schema=schema,
                     missing="keep", name=label)
    frame = _cast(frame, typed.frame.schema, text, dates.patterns(head, typed.frame))
    given = frame
    frame, report = _apply_missing(frame, policy, text)
    shape = pl.DataFrame(schema=typed.frame.schema)
    dataset = Dataset(shape, typed.schema, {}, label, report)
    if qi is not None or sensitive is not None:
        dataset = dataset.with_roles(qi=qi, sensitive=sensitive)
    return TypedTable(frame, dataset, text, given if report.rows_dropped else None)


def _widened(frame: Any, dtypes: pl.Schema, inferred: Sequence[str]) -> dict[str, Any]:
    """The inferred columns (``inferred``, typed ``dtypes`` from the first rows) holding a value
    their type cannot hold, with the type that holds every value: Float64 for an integer column
    whose values are all numbers, else String. One Spark pass."""
    from pyspark.sql import functions as F

    current = dict(frame.dtypes)
    tests: dict[str, tuple[Any, Any]] = {}
    for column in inferred:
        target = spark_type(dtypes[column])
        if target != "string" and current[column] == "string":
            value = F.col(_quoted(column))
            tests[column] = (value.isNotNull() & value.try_cast(target).isNull(),
                             value.isNotNull() & value.try_cast("double").isNull())
    if not tests:
        return {}
    row = frame.select([F.max(t.cast("int")).alias(f"{c}\x00{i}") for c, pair in tests.items()
                        for i, t in enumerate(pair)]).first()
    return {c: (pl.Float64 if dtypes[c].is_integer() and not row[f"{c}\x001"] else pl.String)
            for c in tests if row[f"{c}\x000"]}


def _cast(frame: Any, dtypes: pl.Schema, source: str, patterns: Mapping[str, str]) -> Any:
    """Cast every column whose Spark type differs from the inferred or declared one; a value
    that does not fit (a declared type's: an inferred one was widened first) is a SchemaError
    naming the column and the value, labelled custodian-only (checked in one pass on Spark).
    Text declared a date is read in the form ``patterns`` names (the Polars engine's, from the
    first rows), and a date in a year before 100 is refused too
    (:mod:`crowdsafe.engines.spark.dates`)."""
    from pyspark.sql import functions as F

    current = dict(frame.dtypes)
    casts: list[Any] = []
    failed: list[tuple[str, Any, Any]] = []  # (column, condition, the refusal of a value)
    for column, dtype in dtypes.items():
        target = spark_type(dtype)
        if current[column] == target or (target == "string" and current[column] == "string"):
            casts.append(F.col(_quoted(column)))
            continue
        written = F.col(_quoted(column))
        if target == "date" and current[column] == "string":
            cast = dates.parsed(written, patterns.get(column))
            failed.append((column, written.isNotNull() & cast.isNull(),
                           functools.partial(dates.not_a_date, column, source)))
            failed.append((column, dates.two_digit(cast), functools.partial(_short_year, frame, column, cast, source)))
        else:
            cast = written.try_cast(target)
            failed.append((column, written.isNotNull() & cast.isNull(),
                           lambda value, column=column, kind=target: f"column '{column}' is declared {kind} but "
                                                                      f"{source} holds {value!r}"))
        casts.append(cast.alias(column))
    if not failed:
        return frame
    bad = frame.select([F.max(condition.cast("int")).alias(f"__failed_{j}")
                        for j, (_, condition, _) in enumerate(failed)]).first()
    for j, (column, condition, refusal) in enumerate(failed):
        if bad[f"__failed_{j}"]:
            value = frame.filter(condition).select(_quoted(column)).first()[0]
            raise SchemaError(f"{refusal(value)}{NOT_AS_DECLARED}")
    return frame.select(casts)


def _short_year(frame: Any, column: str, cast: Any, source: str, value: object) -> str:
    """The refusal of ``value`` of the text column ``column``, read by ``cast`` as a year before 100."""
    from pyspark.sql import functions as F

    year = frame.filter(F.col(_quoted(column)) == value).select(F.year(cast)).first()[0]
    return dates.short_year(column, source, value, int(year))


def _apply_missing(frame: Any, policy: MissingPolicy, source: str) -> tuple[Any, MissingReport]:
    from pyspark.sql import functions as F

    if policy is MissingPolicy.KEEP:
        return frame, MissingReport(policy)
    anything = F.lit(False)
    for c in frame.columns:
        anything = anything | F.col(_quoted(c)).isNull()
    firsts = ([F.max(F.col(_quoted(c)).isNull().cast("int")).alias(f"__missing_{j}")
               for j, c in enumerate(frame.columns)] if policy is MissingPolicy.ERROR else [])
    counts = frame.agg(F.count(F.lit(1)).alias("__rows"), F.sum(anything.cast("long")).alias("__missing_rows"),
                       *firsts).first()
    with_missing = int(counts["__missing_rows"] or 0)
    if policy is MissingPolicy.ERROR and with_missing:
        column = next(c for j, c in enumerate(frame.columns) if counts[f"__missing_{j}"])
        raise missing_refusal(source, with_missing, column)
    if policy is MissingPolicy.DROP:
        if with_missing and with_missing == counts["__rows"]:  # as the Polars engine: no rows left is refused
            raise emptied_by_drop(source)
        return frame.filter(~anything), MissingReport(policy, rows_with_missing=with_missing, rows_dropped=with_missing)
    return frame, MissingReport(policy)
