"""DP counts, sums, means and histograms with the aggregation on Spark.

The query is planned, charged and answered by :func:`crowdsafe.mechanisms.queries.answer_query`
exactly as on the Polars engine; only the exact aggregate is computed here, on Spark: the
filter, the person-level contribution bound, the clamping and the group-by run on the
executors, and what reaches the driver is one number (count), four (sum, mean) or one count per
cell present (histogram; the driver then lays it on the public domain, empty cells included,
with the same code as the Polars engine). The noise is drawn on the driver from the caller's
:class:`~crowdsafe.randomness.Randomness` and the ledger is charged there.

Quantiles are not computed on Spark: the exponential mechanism over the sorted values needs
every value on the driver; use the polars engine for them.

The contribution bound (Wilson et al. 2020's per-person bounding; see
:mod:`crowdsafe.mechanisms.contribution`) keeps at most c rows per person chosen uniformly at
random: every row gets a random key from its partition's own stream
(:class:`~crowdsafe.engines.spark.streams.PartitionStreams`: fresh OS entropy per partition in
release mode), and the c smallest keys of each person are kept (a window over the person).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import Dataset, unicode_forms
from crowdsafe.engines.spark.streams import PartitionStreams
from crowdsafe.engines.spark.typed_table import TypedTable, _quoted, load_table
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.mechanisms.queries import answer_query
from crowdsafe.mechanisms.query_aggregates import cell_column, histogram_exact, sum_exact, sum_grid, sum_stats
from crowdsafe.mechanisms.query_language import (
    And,
    Between,
    Comparison,
    Filter,
    InList,
    IsNull,
    Not,
    Or,
    is_text,
    reconciled_operand,
)
from crowdsafe.mechanisms.query_plan import ExactAggregate, QueryAnswer, QueryPlan, QueryRequest
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness

_RANDOM_KEY = "__crowdsafe_random_key"
_RANK = "__crowdsafe_rank"


def spark_filter(node: Filter | None, dtypes: Mapping[str, pl.DataType]) -> Any:
    """The query filter as a Spark boolean Column, with the Polars engine's semantics.

    Both engines use SQL's three-valued logic (a comparison with a missing value is null, and a
    null filter drops the row); values are reconciled with the column types by the same checks
    as :func:`crowdsafe.mechanisms.query_language.compile_filter` (already run when planning).
    """
    from pyspark.sql import functions as F

    if node is None:
        return F.lit(True)
    if isinstance(node, (And, Or)):
        parts = [spark_filter(o, dtypes) for o in node.operands]
        combined = parts[0]
        for part in parts[1:]:
            combined = (combined & part) if isinstance(node, And) else (combined | part)
        return combined
    if isinstance(node, Not):
        return ~spark_filter(node.operand, dtypes)
    dtype = dtypes[node.column]
    column = F.col(_quoted(node.column))
    if isinstance(node, IsNull):
        return column.isNotNull() if node.negated else column.isNull()

    def operand(value: Any, ordering: bool = False) -> tuple[Any, Any]:
        _, reconciled = reconciled_operand(node.column, dtype, value, ordering=ordering)
        as_text = dtype.is_temporal() and isinstance(reconciled, str)
        return (column.cast("string") if as_text else column), reconciled

    if isinstance(node, Comparison):
        left, value = operand(node.value, ordering=node.op not in ("==", "!="))
        if is_text(dtype) and node.op in ("==", "!="):  # either Unicode form, as the Polars engine
            same = left.isin(unicode_forms.forms(value))
            return same if node.op == "==" else ~same
        if is_text(dtype):  # an ordering: both sides in NFC, as the Polars engine
            left, value = nfc(left), unicode_forms.normal(value)
        return {
            "==": left == value, "!=": left != value, "<": left < value,
            "<=": left <= value, ">": left > value, ">=": left >= value,
        }[node.op]
    if isinstance(node, InList):
        reconciled = [operand(v) for v in node.values]
        left = reconciled[0][0]
        values = [v for _, v in reconciled]
        if dtype.is_numeric() and any(isinstance(v, float) for v in values):
            left, values = left.cast("double"), [float(v) for v in values]
        if is_text(dtype):
            values = list(dict.fromkeys(f for v in values for f in unicode_forms.forms(v)))
        matched = left.isin(values)
        return ~matched if node.negated else matched
    if isinstance(node, Between):
        left, low = operand(node.low, ordering=True)
        _, high = operand(node.high, ordering=True)
        if is_text(dtype):
            left, low, high = nfc(left), unicode_forms.normal(low), unicode_forms.normal(high)
        inside = (left >= low) & (left <= high)
        return ~inside if node.negated else inside
    raise TypeError(f"unknown filter node {node!r}")  # pragma: no cover - exhaustive above


def nfc(column: Any) -> Any:
    """The Spark text ``column`` in Unicode NFC (:data:`crowdsafe.data.unicode_forms.FORM`).
    Spark SQL has no normalisation function; ICU4J, which Spark 4 ships for its collations, has
    one, called by Spark's ``reflect`` in the JVM (no Python UDF: about 1.5 µs a value). A missing
    value stays missing (ICU would fail on it)."""
    from pyspark.sql import functions as F

    composed = F.reflect(F.lit("com.ibm.icu.text.Normalizer"), F.lit("compose"), column, F.lit(False))
    return F.when(column.isNotNull(), composed)


class SparkAggregate:
    """The exact aggregate of a planned query over a Spark table (an ``Aggregator`` for
    :func:`~crowdsafe.mechanisms.queries.answer_query`)."""

    def __init__(self, table: TypedTable) -> None:
        self.table = table

    def check(self, plan: QueryPlan) -> None:
        """Refuse, before any charge, what this engine does not compute (decided from the query
        kind alone: public)."""
        if plan.query.kind == "quantile":
            raise ParameterError(
                "quantiles are not computed on the spark engine (the exponential mechanism needs every "
                "value on the driver); use engine='polars'", parameter="engine",
            )

    def __call__(self, dataset: Dataset, plan: QueryPlan, randomness: Randomness) -> tuple[ExactAggregate, int]:
        kind = plan.query.kind
        self.check(plan)
        rows, dropped = self.rows(plan, randomness)
        if kind == "count":
            return ExactAggregate("count", {"count": int(rows.count())}), dropped
        if kind in ("sum", "mean"):
            return sum_exact(plan, self._sum(rows, plan)), dropped
        return self._histogram(rows, plan), dropped

    def rows(self, plan: QueryPlan, randomness: Randomness) -> tuple[Any, int]:
        """The rows the query reads: filtered, then bounded to c rows per person (on Spark)."""
        dtypes = dict(self.table.dataset.frame.schema)
        columns = list(plan.query.columns) or self.table.columns[:1]
        if plan.person is not None and plan.person not in columns:
            columns.append(plan.person)
        rows = self.table.frame.select([_quoted(c) for c in columns]).filter(spark_filter(plan.query.where, dtypes))
        if plan.person is None:
            return rows, 0
        return bound_contributions(rows, plan.person, plan.rows_per_person, randomness)

    def _sum(self, rows: Any, plan: QueryPlan) -> tuple[int, float, int, dict[str, int]]:
        from pyspark.sql import functions as F

        assert plan.query.column is not None and plan.query.bounds is not None
        dtype = self.table.dataset.frame.schema[plan.query.column]
        low, high = plan.query.bounds
        integer, unit = sum_grid(dtype, low, high)
        value = F.col(_quoted(plan.query.column))
        if dtype.is_float():
            value = F.when(F.isnan(value), None).otherwise(value)
        if integer:
            low, high = int(low), int(high)
            scaled = F.when(value < low, low).when(value > high, high).otherwise(value).cast("bigint")
        else:
            value = value.cast("double")
            clamped = F.when(value < low, low).when(value > high, high).otherwise(value)
            # exact: x / unit is a power-of-two scaling below 2^31 after clamping; the cast
            # truncates toward zero, as the Polars engine does
            scaled = (clamped * (1.0 / unit)).cast("bigint")
        stats = rows.select(
            F.sum(scaled.cast("decimal(38,0)")).alias("total"),  # exact: no overflow whatever the rows
            F.count(value).alias("values"),
            F.sum(F.when(value < low, 1).otherwise(0)).alias("below"),
            F.sum(F.when(value > high, 1).otherwise(0)).alias("above"),
        ).first().asDict()
        return sum_stats(stats, unit)

    def _histogram(self, rows: Any, plan: QueryPlan) -> ExactAggregate:
        from pyspark.sql import functions as F

        dtypes = self.table.dataset.frame.schema
        keys = []
        binned: dict[str, list[str]] = {}
        for dimension in plan.query.dimensions:
            column = F.col(_quoted(dimension.column))
            name = cell_column(dimension.column)
            if dimension.bins is not None:
                bins = dimension.bins
                clipped = F.least(F.greatest(column.cast("double"), F.lit(float(bins.low))), F.lit(float(bins.high)))
                index = F.floor((clipped - F.lit(float(bins.low))) / F.lit(float(bins.width))).cast("int")
                index = F.least(F.greatest(index, F.lit(0)), F.lit(bins.count - 1))
                # greatest/least skip nulls: a missing value must stay missing (outside every bin).
                # Spark groups by the bin index; the driver names the cells present (a literal
                # per bin in the plan cost 0.3 ms of Py4J each: 320 s for 1M bins)
                keys.append(F.when(column.isNull(), F.lit(None)).otherwise(index).alias(name))
                binned[name] = bins.labels()
            elif is_text(dtypes[dimension.column]):
                keys.append(column.cast("string").alias(name))
            else:
                keys.append(column.alias(name))
        names = [cell_column(d.column) for d in plan.query.dimensions]
        counted = rows.select(keys).groupBy(*[_quoted(n) for n in names]).count()
        counts = pl.from_arrow(counted.toArrow())
        assert isinstance(counts, pl.DataFrame)
        counts = counts.with_columns(
            pl.col("count").cast(pl.Int64),
            *[pl.Series(labels, dtype=pl.String).gather(counts.get_column(name)).alias(name)
              for name, labels in binned.items()],
        )
        return histogram_exact(counts, plan)


def bound_contributions(rows: Any, person: str, max_rows: int, randomness: Randomness) -> tuple[Any, int]:
    """Keep at most ``max_rows`` rows per person, uniformly at random (rows without a person
    identifier are each their own person); and the number of rows dropped (exact, not DP).

    The number dropped is Σ over persons of max(0, rows − c): it does not depend on which rows
    are kept, so it is counted by its own group-by, without the random keys.
    """
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType
    from pyspark.sql.window import Window

    streams = PartitionStreams.from_randomness(randomness)

    def with_keys(batches: Any) -> Any:
        from pyspark import TaskContext

        context = TaskContext.get()
        generator = streams.for_partition(context.partitionId() if context else 0).generator
        for batch in batches:
            keys = generator.integers(0, np.iinfo(np.int64).max, size=batch.num_rows, dtype=np.int64)
            yield pa.RecordBatch.from_arrays([*batch.columns, pa.array(keys)], names=[*batch.schema.names, _RANDOM_KEY])

    schema = StructType([*rows.schema.fields, StructField(_RANDOM_KEY, LongType(), False)])
    keyed = rows.mapInArrow(with_keys, schema)
    owner = F.col(_quoted(person))
    rank = F.row_number().over(Window.partitionBy(owner).orderBy(_RANDOM_KEY))
    kept = (keyed.withColumn(_RANK, rank)
            .filter(owner.isNull() | (F.col(_RANK) <= max_rows))
            .drop(_RANK, _RANDOM_KEY))
    excess = (rows.filter(owner.isNotNull()).groupBy(owner).count()
              .select(F.sum(F.greatest(F.col("count") - max_rows, F.lit(0)))).first()[0])
    return kept, int(excess or 0)


def spark_source(data: Any, *, schema: Any = None, missing: Any = "keep", master: str | None = None,
                 name: str | None = None) -> TypedTable:
    """A :class:`TypedTable` for ``data``: a TypedTable, or a path Spark can read."""
    if isinstance(data, TypedTable):
        return data
    if not isinstance(data, (str, os.PathLike)):
        raise InputError(
            f"the spark engine reads tables from files: give a Parquet or CSV path, not a {type(data).__name__}"
        )
    from crowdsafe.engines.spark.session import spark_session

    return load_table(spark_session(master), data, schema=schema, missing=missing, name=name)


def answer_query_spark(table: TypedTable, request: QueryRequest, *, randomness: Randomness | int | None = None,
                       ledger: Ledger | None = None, fingerprint: str | None = None) -> QueryAnswer:
    """:func:`~crowdsafe.mechanisms.queries.answer_query` with the aggregation on Spark.

    With a ``ledger``, the table is named in it by ``ledger.identify(table.fingerprint())`` (its
    order-independent digest keyed with the ledger's secret), unless a ``fingerprint`` is given;
    the answer carries no fingerprint.
    """
    if ledger is not None and fingerprint is None:
        fingerprint = ledger.identify(table.fingerprint())
    return answer_query(table.dataset, request, randomness=randomness, ledger=ledger, fingerprint=fingerprint,
                        aggregate=SparkAggregate(table))


__all__: Sequence[str] = ["SparkAggregate", "answer_query_spark", "bound_contributions", "spark_filter",
                          "spark_source"]
