"""A table on Spark as the safe pipeline sees it: rows on the executors, the rest on the driver.

:func:`spark_table` reads the data (a Parquet or CSV path Spark can read, a bundled dataset, a
Polars/pandas frame or a :class:`~crowdsafe.data.Dataset`), applies the missing-value policy on
Spark, and makes one aggregation pass: row count, the table's identity (:mod:`.fingerprint`),
the distinct values of each published column (a column with a declared hierarchy is taken to
hold its leaves instead, :mod:`.declared_values`); a value of each other column comes from the
table's first rows (:func:`first_values`). On the driver those values form a small *domain*
dataset loaded by the data layer itself (schema inference or the declared schema, type checks,
hierarchies from the schema, coverage), then prepared by the Polars engine's own
:func:`crowdsafe.anonymize.publish.prepare_dataset` (published columns, flat hierarchies). A
second aggregation counts the table by leaf-code tuples (:func:`.sampling.count_table`), which
also checks every declared column's values against its leaves: a value outside them sends that
column to be collected, and the table is described and counted again. When every published
column is declared, the count runs beside the pass, from a second thread (the two Spark jobs share
the cores; neither waits for the other's stage boundaries). Everything the driver
knows about the data is what the Polars engine also derives from it, and the frequency table.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import polars as pl

from crowdsafe.anonymize.publish import prepare_dataset
from crowdsafe.data import Dataset, Hierarchy, Schema, load
from crowdsafe.data.missing import DEFAULT_MISSING_TOKENS, MissingPolicy, missing_refusal
from crowdsafe.data.schema import AttributeType
from crowdsafe.engines.spark import fingerprint as fp
from crowdsafe.engines.spark.declared_values import (
    assumed_values,
    declared_hierarchies,
    leaf_nulls,
    leaves_to_check,
    outside_columns,
    possible_values,
)
from crowdsafe.engines.spark.encoding import dictionary, domain_frame, domain_scan
from crowdsafe.engines.spark.io import declared_text, read_frame, reading_schema, usable_frame
from crowdsafe.engines.spark.sampling import TableCounts, count_table
from crowdsafe.engines.spark.session import planned_on_executors
from crowdsafe.engines.spark.typed_table import _quoted
from crowdsafe.errors import EMPTY_TABLE, CrowdsafeError, InputError

_CSV_ENDINGS = (".csv", ".csv.gz", ".tsv", ".txt", ".data")
FIRST_ROWS = 1_000  # rows read for the other columns' first values before a pass over the table


@dataclass(frozen=True)
class SparkTable:
    """``frame``: the rows (Spark). ``domain``: the prepared domain dataset (Polars; one row per
    distinct value, not per person) with schema and hierarchies; ``columns``: the published
    columns; ``dictionaries``: per published column, raw value -> leaf code; ``counted``: the
    table's frequency table by their leaf codes (:func:`~crowdsafe.engines.spark.sampling.count_table`),
    which every release's sample is drawn from (None: a table read for a plan only)."""

    spark: Any
    frame: Any
    domain: Dataset
    columns: list[str]
    dictionaries: dict[str, pl.DataFrame]
    fingerprint: str
    n_rows: int
    label: str
    notes: list[str]
    counted: TableCounts | None
    sensitive: tuple[str, ...] = ()  # the schema's sensitive attributes (public), before prepare_dataset

    def identity(self, ledger: Any) -> str:
        """The table's identity in ``ledger``: its multiset digest keyed with the ledger's secret
        (:meth:`~crowdsafe.privacy.ledger.Ledger.identify`)."""
        return ledger.identify(self.fingerprint)


def _spark_frame(spark: Any, frame: pl.DataFrame) -> Any:
    """A Polars frame on Spark through Arrow (text categories as plain text)."""
    text = [c for c, t in frame.schema.items() if isinstance(t, (pl.Categorical, pl.Enum))]
    return planned_on_executors(spark.createDataFrame(frame.with_columns(pl.col(text).cast(pl.String)).to_arrow()))


def spark_table(
    spark: Any,
    data: Any,
    *,
    schema: Schema | str | os.PathLike[str] | None = None,
    qi: Sequence[str] | None = None,
    sensitive: Sequence[str] | str | None = None,
    missing: MissingPolicy | str = MissingPolicy.KEEP,
    name: str | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    count: bool = True,
) -> SparkTable:
    """Read ``data`` onto Spark and describe it for the safe pipeline (see the module docstring).

    ``data``: a Parquet or CSV path Spark can read, a Spark DataFrame, or anything
    :func:`crowdsafe.data.load` takes (loaded in this process, then handed to Spark).
    ``hierarchies`` add to (or replace) those of the schema, as in :func:`crowdsafe.data.load`.
    ``count=False``: the table pass only, for a plan (``publish --plan-only``): the plan reads the
    hierarchies' heights and the schema, which no value changes; such a table has no counts
    (``counted`` None) and cannot be sampled.
    """
    from pyspark.sql import functions as F

    policy = MissingPolicy.parse(missing)
    given_identity: str | None = None  # with missing='drop': the digest of the rows as given
    if isinstance(schema, (str, os.PathLike)):
        schema = Schema.from_toml(cast("str | Path", schema))
    is_path = isinstance(data, (str, os.PathLike)) and not _is_bundled(data)
    schema, reading = reading_schema(schema, from_path=is_path)
    if is_path or _is_spark_frame(data):
        path = str(data) if is_path else ""
        frame = (read_frame(spark, path, missing_tokens=DEFAULT_MISSING_TOKENS) if is_path
                 else planned_on_executors(data))
        label = name or (path.rstrip("/").rsplit("/", 1)[-1] if is_path else "spark-dataframe")
        frame, schema = usable_frame(frame, schema, qi, sensitive, path or label)
        frame = declared_text(frame, schema)  # a declared categorical held as numbers: canonical text
        if policy is MissingPolicy.DROP:  # identified as given: the same people, one budget (one more job)
            given_identity = fp.frame_digest(frame)
            frame = frame.dropna()
    else:  # in memory already: the data layer loads it, Spark gets it through Arrow
        dataset = load(data, schema=schema, qi=qi, sensitive=sensitive, missing=policy, hierarchies=hierarchies,
                       decimal_comma=reading)
        schema, hierarchies, qi, sensitive = dataset.schema, dataset.hierarchies, None, None
        frame = _spark_frame(spark, dataset.frame)
        label = name or dataset.name or "data"
        if policy is MissingPolicy.DROP:  # identified as given, as a file is (one more load and job)
            given = load(data, schema=schema, missing=MissingPolicy.KEEP, decimal_comma=reading).frame
            given_identity = fp.frame_digest(_spark_frame(spark, given))
    empty = cast(pl.DataFrame, pl.from_arrow(frame.limit(0).toArrow()))  # the columns' types, no rows
    roles = _roles(empty, schema, qi, sensitive)
    published = [c for c in frame.columns if c in set(roles.quasi_identifiers) | set(roles.sensitive)]
    others = [c for c in frame.columns if c not in published]
    extra = [F.count(F.lit(1)).alias("__rows"), *fp.hash_sum_aggregates()]
    if policy is MissingPolicy.ERROR:  # the missing values of each column are counted only to refuse them
        extra.extend(F.sum(F.col(_quoted(c)).isNull().cast("long")).alias(f"__missing_{j}")
                     for j, c in enumerate(frame.columns))
        anything = functools.reduce(lambda a, b: a | b, [F.col(_quoted(c)).isNull() for c in frame.columns])
        extra.append(F.sum(anything.cast("long")).alias("__missing_rows"))
    # a column with a declared hierarchy is checked against its leaves, not collected (.declared_values)
    spark_types = dict(zip(frame.columns, fp.frame_types(frame)))
    is_csv = is_path and path.lower().rstrip("/").endswith(_CSV_ENDINGS)
    leaves = {} if is_csv else leaves_to_check(spark_types, empty.schema, published, schema,
                                               declared_hierarchies(schema, hierarchies))
    collected = [c for c in published if c not in leaves]
    firsts = first_values(frame, others)
    describe = functools.partial(_Description.of, names=frame.columns, is_csv=is_csv, schema=schema, qi=qi,
                                 sensitive=sensitive, hierarchies=hierarchies, label=label)
    # every published column declared: the table is counted beside the pass (.declared_values)
    early = (_early(describe, {**possible_values(leaves), **firsts}) if count and leaves and not collected
             else None)
    with ThreadPoolExecutor(max_workers=1) as pool:
        counting = pool.submit(early.count, frame) if early is not None else None
        values, row = domain_scan(frame.select("*", *fp.row_hashes(frame)), collected,
                                  [*extra, *leaf_nulls(leaves)])
        values.update(assumed_values(leaves, row))
        rows = int(row.column("__rows")[0].as_py())
        if rows == 0:
            raise InputError(f"{label} has no rows after missing='drop'" + EMPTY_TABLE if policy is MissingPolicy.DROP
                             else f"{label} has a header but no rows" + EMPTY_TABLE)
        if policy is MissingPolicy.ERROR:
            with_missing = int(row.column("__missing_rows")[0].as_py() or 0)
            if with_missing:
                column = next(c for j, c in enumerate(frame.columns) if row.column(f"__missing_{j}")[0].as_py())
                raise missing_refusal(label, with_missing, column)
        values.update(firsts)
        description = describe(values)
        if not count:
            return SparkTable(spark, frame, description.domain, description.columns, description.dictionaries,
                              given_identity or _identity(frame, rows, row), rows, label, description.notes, None,
                              description.sensitive)
        counted = counting.result() if counting is not None else description.count(frame)
    if counted is not None and early is not None and not description.codes_within(early):
        counted = description.count(frame)  # (not expected: the leaves' codes do not depend on the others)
    if counted is None:  # a value outside its declared leaves: those columns are collected after all
        values.update(domain_scan(frame, outside_columns(frame, leaves, spark_types))[0])
        description = describe(values)
        counted = description.count(frame)
        if counted is None:
            raise InputError(f"{label}: a value could not be given a code after its column was collected "
                             "(report this: the Spark engine's dictionaries disagree with its values)")
    return SparkTable(spark, frame, description.domain, description.columns, description.dictionaries,
                      given_identity or _identity(frame, rows, row), rows, label, description.notes, counted,
                      description.sensitive)


def _identity(frame: Any, rows: int, row: Any) -> str:
    """The table's multiset digest from the pass's Arrow ``row`` (:mod:`.fingerprint`)."""
    sums = fp.combine_sums([row.column(c)[0].as_py() for c in fp.SUM_COLUMNS])
    return fp.digest(frame.columns, fp.frame_types(frame), rows, sums)


@dataclass(frozen=True)
class _Description:
    """What the driver makes of the distinct values: the prepared domain, the published columns,
    their dictionaries and the preparation's notes."""

    domain: Dataset
    columns: list[str]
    dictionaries: dict[str, pl.DataFrame]
    notes: list[str]
    sensitive: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Mapping[str, pl.Series], *, names: Sequence[str], is_csv: bool, schema: Schema | None,
           qi: Sequence[str] | None, sensitive: Sequence[str] | str | None,
           hierarchies: Mapping[str, Hierarchy] | None, label: str) -> _Description:
        raw = domain_frame({c: values[c] for c in names})
        tidy = raw
        if is_csv:
            from crowdsafe.data.io import tidy_text  # the Polars engine's CSV clean-up, on the distinct values

            declared = {a.name for a in (schema or ()) if a.type in (AttributeType.CATEGORICAL, AttributeType.ORDINAL)}
            tidy = tidy_text(raw, declared)
        domain = load(tidy, schema=schema, qi=qi, sensitive=sensitive, missing="keep", hierarchies=hierarchies,
                      name=f"{label} (its distinct values)")
        roles_sensitive = tuple(domain.sensitive)  # (prepare_dataset makes every published column a QI)
        domain, columns, notes = prepare_dataset(domain)
        dictionaries = {c: dictionary(raw.get_column(c), domain.encoded(c).codes) for c in columns}
        return cls(domain, columns, dictionaries, notes, roles_sensitive)

    def count(self, frame: Any) -> TableCounts | None:
        """The table's counts by leaf codes (None: a value has no code in its dictionary)."""
        return count_table(frame, self.columns, [self.dictionaries[c] for c in self.columns])

    def codes_within(self, other: _Description) -> bool:
        """Whether ``other`` has the same published columns and every (value, code) pair of these
        dictionaries is one of ``other``'s: a table counted with ``other``'s codes has these."""
        if self.columns != other.columns:
            return False
        for c in self.columns:
            mine, theirs = self.dictionaries[c], other.dictionaries[c]
            if mine.schema["value"] != theirs.schema["value"]:
                return False
            found = mine.join(theirs, on="value", how="left", nulls_equal=True, suffix="_other")
            if not found.get_column("code").equals(found.get_column("code_other")):
                return False
        return True


def _early(describe: Callable[[dict[str, pl.Series]], _Description], values: dict[str, pl.Series]
           ) -> _Description | None:
    """The description the table is counted with beside the pass, or None when the data layer
    refuses these values (then the pass comes first, and its values are described)."""
    try:
        return describe(values)
    except CrowdsafeError:
        return None


def first_values(frame: Any, columns: Sequence[str]) -> dict[str, pl.Series]:
    """A non-null value of each of ``columns`` of ``frame`` (a one-value Series, the null value
    when the column has none), for the domain dataset's types: the first one among the first
    ``FIRST_ROWS`` rows (a read of the table's first row group, not a pass over it); a column null
    in all of those gets Spark's first non-null value over the whole table (one aggregation over
    those columns only). Either way it is one of the column's values, as a ``first`` aggregate
    over every row would give one (which value is not fixed there either: it depends on the
    partitioning)."""
    from pyspark.sql import functions as F

    if not columns:
        return {}
    head = cast(pl.DataFrame, pl.from_arrow(frame.select(*[_quoted(c) for c in columns]).limit(FIRST_ROWS).toArrow()))
    found = {c: head.get_column(c).drop_nulls().head(1) for c in columns}
    rest = [c for c in columns if len(found[c]) == 0]
    if rest:
        row = frame.agg(*[F.first(F.col(_quoted(c)), ignorenulls=True).alias(f"__first_{j}")
                          for j, c in enumerate(rest)]).toArrow()
        found.update({c: cast(pl.Series, pl.from_arrow(row.column(f"__first_{j}"))) for j, c in enumerate(rest)})
    return {c: found[c].alias(c) for c in columns}


def _is_spark_frame(data: Any) -> bool:
    return type(data).__module__.startswith("pyspark.sql") and hasattr(data, "mapInArrow")


def _is_bundled(data: Any) -> bool:
    from crowdsafe import datasets

    return isinstance(data, str) and not os.path.exists(data) and "://" not in data and data in datasets.names()


def _roles(empty: pl.DataFrame, schema: Schema | None, qi: Sequence[str] | None,
           sensitive: Sequence[str] | str | None) -> Schema:
    """The roles of the columns (types aside), from the declared or inferred schema (``empty``:
    the frame's columns without rows)."""
    from crowdsafe.data.io import complete_schema

    roles = Schema.infer(empty) if schema is None else complete_schema(schema, empty)
    return roles.with_roles(qi=qi, sensitive=sensitive) if (qi is not None or sensitive is not None) else roles
