"""The α-β algorithm (Rastogi, Suciu, Hong 2007) with its per-row stages on Spark.

The same algorithm as :mod:`crowdsafe.perturb.alpha_beta`, staged for a table that does not fit
one machine:

1. *domain* (driver): the public domain of each attribute, resolved as the Polars engine does
   (:func:`~crowdsafe.perturb.domain.public_values`: declared lists, schema orders, hierarchy
   leaves, the missing value by the missing-value policy); a certified run refuses an attribute
   without one and needs a public bound ``max_rows`` on the rows, checked once the rows are
   counted (every row, as on Polars). Only an exploratory run takes an attribute's distinct
   values (collected from the rows inside the other attributes' public domains: one small list
   per attribute) as its domain;
2. *encoding* (executors): every row becomes its mixed-radix index in D (m < 2^63), or −1 when
   a value lies outside its public domain: such rows are left out of I and only counted
   (custodian-only, as on Polars); then the number of the index *range* it falls in: [0, m) is
   cut into R disjoint ranges [⌊jm/R⌋, ⌊(j+1)m/R⌋); duplicate rows collapse to one tuple
   (``distinct``: the view is a set);
3. *deletion and insertion* (executors, one task per range j, with the range's own random
   stream, :class:`~crowdsafe.engines.spark.streams.PartitionStreams`): keep each tuple of I in
   the range with probability α (:func:`~crowdsafe.perturb.stages.keep_mask`), draw
   K_j ~ Binomial(|range_j \\ I|, β) and K_j distinct indices uniform over range_j \\ I
   (:func:`~crowdsafe.perturb.stages.insert_indices`), put them in the domain's order
   (:func:`~crowdsafe.perturb.stages.in_domain_order`), decode to values. Independent
   Bernoulli(β) insertion of every tuple of D \\ I is the same distribution whether it is
   drawn over D at once or range by range (the binomials of disjoint ranges sum to
   Binomial(m − n, β), and uniform subsets of disjoint ranges make a uniform subset);
4. the view is *written once* (a Parquet directory, atomically renamed into place) and read
   back: a Spark plan with fresh randomness must never be evaluated twice (a second evaluation
   would be a second, different view), so the certificate's row count and every estimate are
   taken from the written files.

The plan (α, β from (d, γ)), the certificate and the estimator are the driver-side code of
:mod:`crowdsafe.perturb`; only the count n_V of rows matching a query is computed on Spark.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.engines.spark.io import literal_reader, spark_path
from crowdsafe.engines.spark.streams import PartitionStreams
from crowdsafe.engines.spark.typed_table import TypedTable, _quoted, spark_type
from crowdsafe.errors import EMPTY_TABLE, InputError, ParameterError
from crowdsafe.files import write_text_atomic
from crowdsafe.perturb import stages
from crowdsafe.perturb.alpha_beta import (
    Perturbation,
    PerturbRequest,
    bound_exceeded,
    certify,
    check_attributes,
    check_max_rows,
    custodian_facts,
    duplicates_error,
    resolve_domain,
    sizes_from_data,
    uncertified_reasons,
)
from crowdsafe.perturb.domain import TupleDomain, public_domain, unreviewed_domains
from crowdsafe.perturb.estimator import DEFAULT_CONFIDENCE, Estimate, estimate_counted, matching_codes
from crowdsafe.perturb.query import CountQuery, parse_count
from crowdsafe.perturb.view import certificate_path
from crowdsafe.privacy.certificate import Certificate
from crowdsafe.privacy.dgamma import (
    SIZES_FROM_DATA,
    AlphaBetaPlan,
    AlphaBetaPlanRequest,
    check_view_size,
    plan_alpha_beta,
)
from crowdsafe.randomness import Randomness, as_randomness

SPARK_INDEX_LIMIT = 2**63  # Spark has no unsigned 64-bit integers
ROWS_PER_RANGE = 1_000_000  # expected view rows per insertion range (one task's memory)
# an estimate's matched values up to this many go into the plan as literals (isin); more are a
# broadcast semi-join (one Py4J literal per value cost 0.6 ms: 296 s for 500k values)
MATCH_LITERALS = 64
_INDEX, _RANGE, _MATCH = "__crowdsafe_index", "__crowdsafe_range", "__crowdsafe_match"


@dataclass(frozen=True)
class SparkInput:
    """The algorithm's input on Spark: I's distinct tuples as (index, range) rows in ``domain``.

    ``n``, ``rows`` and ``outside`` are custodian-only; the plan uses :attr:`n_bound` (see
    :class:`crowdsafe.perturb.alpha_beta.Table`)."""

    domain: TupleDomain
    tuples: Any  # Spark DataFrame: the distinct indices (long) of I, read from ``persisted``
    n: int  # distinct tuples
    rows: int  # rows of the input, before anything was left out or collapsed
    sources: Mapping[str, str]
    max_rows: int | None
    outside: int = 0  # rows left out: a value outside the public domain
    persisted: Any = None  # the persisted counts per index (-1: the rows left out) that ``tuples`` reads
    unreviewed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # as Table's

    @property
    def duplicate_rows(self) -> int:
        return self.rows - self.outside - self.n

    @property
    def n_bound(self) -> int:
        return min(self.max_rows, self.domain.size) if self.max_rows is not None else self.n

    @property
    def uncertified_reasons(self) -> list[str]:
        return uncertified_reasons(self.sources, self.max_rows)

    def release(self) -> None:
        """Drop the persisted tuples from the executors' storage."""
        (self.persisted if self.persisted is not None else self.tuples).unpersist()


def spark_domain(table: TypedTable, names: Sequence[str], public: Mapping[str, Any]) -> TupleDomain:
    """The domain of the published attributes: the public value lists, and for the others
    (exploratory runs only) the active domain of the rows inside the public lists (a row left out
    shows nowhere), ordered as the Polars engine orders it. Only the active attributes are read."""
    shape = table.dataset.frame
    declared = public_domain(shape.select(list(public)).clear(), public) if public else None
    values: dict[str, pl.Series] = dict(declared.values) if declared is not None else {}
    rest = [a for a in names if a not in public]
    rows = table.frame.select([_quoted(a) for a in names])
    if rest and declared is not None:
        rows = rows.mapInArrow(_rows_inside(declared), rows.schema)
    for name in rest:
        distinct = pl.from_arrow(rows.select(_quoted(name)).distinct().toArrow())
        assert isinstance(distinct, pl.DataFrame)
        distinct = distinct.cast(shape.schema[name]) if distinct.schema[name] != shape.schema[name] else distinct
        values[name] = TupleDomain.active_of(distinct, [name])[0].values[name]
    return TupleDomain({a: values[a] for a in names}, active=bool(rest))


def _rows_inside(declared: TupleDomain) -> Any:
    """A ``mapInArrow`` function keeping the rows whose every value lies in ``declared``."""

    def keep(batches: Any) -> Any:
        for batch in batches:
            frame = pl.from_arrow(batch)
            assert isinstance(frame, pl.DataFrame)
            _, inside = declared.encode_within(frame)
            yield batch.filter(inside)

    return keep


def prepare_spark(table: TypedTable, request: PerturbRequest) -> SparkInput:
    """Encode the table's tuples in the public domain of ``request`` on Spark and collapse
    duplicate rows; the distinct indices stay persisted on the executors until
    :meth:`SparkInput.release`. Refusals as :func:`crowdsafe.perturb.alpha_beta.prepare`."""
    import pyarrow as pa
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType

    duplicates = request.duplicates
    names = check_attributes(table.dataset, request.attributes, duplicates)
    bound = check_max_rows(request.max_rows, request.exploratory)
    public, sources = resolve_domain(table.dataset, names, request.domains, request.exploratory)
    domain = spark_domain(table, names, public)
    m = domain.size
    if m >= SPARK_INDEX_LIMIT:
        raise ParameterError(
            f"the domain has m = {m:.3e} >= 2^63 tuples, beyond the spark engine's 64-bit signed indices; "
            "use engine='polars' or coarser domains" + (SIZES_FROM_DATA if domain.active else ""), parameter="engine",
        )

    def encode(batches: Any) -> Any:
        for batch in batches:
            frame = pl.from_arrow(batch)
            assert isinstance(frame, pl.DataFrame)
            codes, inside = domain.encode_within(frame)
            index = domain.index(codes).astype(np.int64)
            index[~inside] = -1  # a value outside the public domain: left out of I, counted
            yield pa.RecordBatch.from_arrays([pa.array(index)], names=[_INDEX])

    schema = StructType([StructField(_INDEX, LongType(), False)])
    encoded = table.frame.select([_quoted(a) for a in names]).mapInArrow(encode, schema)
    counted = encoded.groupBy(_INDEX).count().persist(StorageLevel.MEMORY_AND_DISK)
    left_out = F.col(_INDEX) < 0
    totals = counted.agg(F.count(F.when(~left_out, 1)), F.sum("count"),
                         F.sum(F.when(left_out, F.col("count")))).first()
    n, rows, outside = int(totals[0]), int(totals[1] or 0), int(totals[2] or 0)
    if rows == 0 or (duplicates == "error" and rows - outside != n) or (bound is not None and rows > bound):
        counted.unpersist()
        if rows == 0:
            raise InputError(f"{table.source} has no rows" + EMPTY_TABLE)
        raise bound_exceeded(bound) if bound is not None and rows > bound else duplicates_error()
    return SparkInput(domain, counted.where(~left_out), n, rows, sources, bound, outside, counted,
                      unreviewed_domains(table.dataset, sources))


def insertion_ranges(m: int, expected_view: float, parallelism: int) -> np.ndarray:
    """The bounds b_0 = 0 < ... < b_R = m of the R disjoint index ranges [b_j, b_{j+1}):
    enough ranges for about :data:`ROWS_PER_RANGE` expected view rows each, and at least
    ``parallelism`` (never more than m)."""
    ranges = int(min(m, max(1, parallelism, math.ceil(expected_view / ROWS_PER_RANGE))))
    return np.array([(j * m) // ranges for j in range(ranges + 1)], dtype=np.int64)


def plan_for_spark(prepared: SparkInput, target: AlphaBetaPlanRequest) -> AlphaBetaPlan:
    """:func:`~crowdsafe.privacy.dgamma.plan_alpha_beta` for this input's public bound on n and m
    (marked where an exploratory run read them from the data, as the Polars engine marks them)."""
    return plan_alpha_beta(prepared.n_bound, prepared.domain.size, target,
                           from_data=sizes_from_data(prepared.max_rows, prepared.domain.active))


@dataclass(frozen=True)
class SparkView:
    """A written α-β view on Spark: ``frame`` reads the written files (never the random plan)."""

    frame: Any
    path: str
    domain: TupleDomain
    alpha: float
    beta: float
    n_bound: int
    rows: int
    certificate: Certificate
    certificate_file: Path

    @property
    def attributes(self) -> list[str]:
        return self.domain.attributes

    def estimate(self, query: str | CountQuery, *, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
        """EST(Q, V) with n_V counted on Spark and the rest on the driver (the estimator of
        :mod:`crowdsafe.perturb.estimator`)."""
        from pyspark.sql import functions as F

        parsed = parse_count(query) if isinstance(query, str) else query
        if not isinstance(parsed, CountQuery):
            raise ParameterError("a query is a string such as \"count where age >= 30\" or a CountQuery")
        matching = matching_codes(self, parsed)
        condition, rows = F.lit(True), self.frame
        for attribute, matches in matching.items():
            chosen = self.domain.values[attribute].filter(pl.Series(matches))
            column = F.col(_quoted(attribute))
            if len(chosen) > MATCH_LITERALS:
                rows = rows.join(_matched_values(rows.sparkSession, chosen), column.eqNullSafe(F.col(_MATCH)),
                                 how="left_semi")
                continue
            present = [v for v in chosen.to_list() if v is not None]
            test = column.isin(present) if present else F.lit(False)
            if chosen.null_count():
                test = test | column.isNull()
            condition = condition & F.coalesce(test, F.lit(False))
        n_view = int(rows.filter(condition).count())
        return estimate_counted(self, parsed, matching, n_view, confidence=confidence)

    def describe(self) -> dict[str, Any]:
        return {"rows": self.rows, "attributes": self.attributes, "alpha": self.alpha, "beta": self.beta,
                "max_rows": self.n_bound, "m": self.domain.size, "path": self.path,
                "certificate": self.certificate.summary()}


def run_spark(prepared: SparkInput, plan: AlphaBetaPlan, out: str | os.PathLike[str], *,
              randomness: Randomness | int | None = None,
              certificate: str | os.PathLike[str] | None = None, ranges: int | None = None) -> SparkView:
    """Perturb on Spark with the planned (α, β), write the view to ``out`` (a Parquet
    directory) and its certificate (default: ``<stem>.certificate.json`` beside it).

    ``ranges``: the number R of insertion ranges (default :func:`insertion_ranges`). A seeded
    run is reproducible for a fixed R: range j draws from child j of the seed, whatever the
    Spark partitioning.
    """
    import pyarrow as pa
    from pyspark.sql.types import IntegerType, LongType, StructField, StructType

    if plan.n != prepared.n_bound or plan.m != prepared.domain.size:
        raise ParameterError("the plan was made for another table (its bound on n or m differ)")
    target = str(out)
    if not target.rstrip("/").lower().endswith((".parquet", ".pq")):
        raise ParameterError(
            f"the spark engine writes the view as a Parquet directory: name it *.parquet, got {target}")
    cert_target = Path(certificate) if certificate is not None else certificate_path(target)
    rng = as_randomness(randomness)
    streams = PartitionStreams.from_randomness(rng)
    domain, alpha, beta = prepared.domain, plan.alpha, plan.beta
    spark = prepared.tuples.sparkSession
    m = domain.size
    if ranges is None:
        bounds = insertion_ranges(m, plan.expected_view, spark.sparkContext.defaultParallelism)
    else:
        bounds = np.array([(j * m) // ranges for j in range(int(min(m, max(1, ranges))) + 1)], dtype=np.int64)
    ranges = len(bounds) - 1
    shape = StructType([StructField(a, _spark_field_type(domain.values[a].dtype), True) for a in domain.attributes])
    arrow_schema = pa.schema([pa.field(a, _arrow_type(domain.values[a].dtype)) for a in domain.attributes])

    def perturb_range(key: tuple[Any, ...], table: Any) -> Any:
        j = int(key[0].as_py())
        low, high = int(bounds[j]), int(bounds[j + 1])
        stream = streams.for_partition(j)
        index = table.column(_INDEX).to_numpy()
        existing = np.sort(index[index >= 0]).astype(np.uint64)
        kept = existing[stages.keep_mask(len(existing), alpha, stream)]
        count = stages.binomial((high - low) - len(existing), beta, stream)
        inserted = stages.insert_indices(count, low, high, existing, stream)
        frame = domain.decode(domain.codes_of(stages.in_domain_order(kept, inserted)))
        return frame.to_arrow().cast(arrow_schema)

    def with_range(batches: Any) -> Any:
        for batch in batches:
            index = batch.column(0).to_numpy()
            where = (np.searchsorted(bounds, index, side="right") - 1).astype(np.int32)
            yield pa.RecordBatch.from_arrays([batch.column(0), pa.array(where)], names=[_INDEX, _RANGE])

    keyed_schema = StructType([StructField(_INDEX, LongType(), False), StructField(_RANGE, IntegerType(), False)])
    keyed = prepared.tuples.select(_INDEX).mapInArrow(with_range, keyed_schema)
    # one sentinel row per range, so that ranges holding no tuple of I still get their insertions
    sentinels = spark.createDataFrame([(-1, j) for j in range(ranges)], keyed_schema)
    view = keyed.unionByName(sentinels).groupBy(_RANGE).applyInArrow(perturb_range, shape)
    from crowdsafe.output_guard import replaced_first

    # the certificate (and crowdsafe's report) of a view replaced go just before the new view is
    # renamed into place: the view stands without one until its certificate is written
    write_parquet_once(view, target, remove_first=replaced_first(target, cert_target) if "://" not in target
                       else [cert_target])
    written = literal_reader(spark).parquet(spark_path(target))
    rows = int(written.count())
    cert = certify(cast(Any, prepared), plan, rng, view_rows=rows)  # SparkInput stands in for Table
    cert = _with_engine(cert, ranges)
    write_text_atomic(cert_target, cert.to_json())
    return SparkView(written, target, domain, alpha, beta, plan.n, rows, cert, cert_target)


def _with_engine(cert: Certificate, ranges: int) -> Certificate:
    from dataclasses import replace

    parameters = {**cert.parameters, "engine": "spark", "insertion_ranges": ranges}
    return replace(cert, parameters=parameters)


def _matched_values(spark: Any, chosen: pl.Series) -> Any:
    """The domain values a query matches (a null included) as a one-column broadcast Spark
    DataFrame of the view's column type, made through Arrow (no literal per value)."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType

    values = chosen.to_arrow().cast(_arrow_type(chosen.dtype))
    schema = StructType([StructField(_MATCH, _spark_field_type(chosen.dtype), True)])
    return F.broadcast(spark.createDataFrame(pa.table({_MATCH: values}), schema=schema))


def _spark_field_type(dtype: pl.DataType) -> Any:
    from pyspark.sql.types import _parse_datatype_string

    return _parse_datatype_string(spark_type(dtype))


def _arrow_type(dtype: pl.DataType) -> Any:
    import pyarrow as pa

    kind = spark_type(dtype)
    return {"tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(), "bigint": pa.int64(),
            "float": pa.float32(), "double": pa.float64(), "boolean": pa.bool_(), "date": pa.date32(),
            "timestamp": pa.timestamp("us", tz="UTC"), "decimal(20,0)": pa.decimal128(20, 0)}.get(kind, pa.string())


def write_parquet_once(frame: Any, target: str, remove_first: Sequence[Path] = (), *, private: bool = False) -> None:
    """Write ``frame`` as Parquet (evaluating it exactly once) to a hidden sibling directory, then
    rename it onto ``target`` (an existing target is replaced only after the new view is complete;
    the local files ``remove_first`` are removed just before).

    ``private`` (a custodian-only table): Spark writes into a folder made first, readable by its
    owner only (``0700``), so nobody else can read a part file while it is written; every file is
    then made ``0600`` and the table's folder ``0700`` before it is renamed into place. That is as
    far as Spark allows: a file system without permissions (an object store such as S3) keeps its
    own access rules, which the custodian must set."""
    spark = frame.sparkSession
    jvm = spark._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path
    destination = hadoop_path(spark_path(target))
    fs = destination.getFileSystem(spark._jsc.hadoopConfiguration())
    parent = destination.getParent()
    name = destination.getName()
    temporary = hadoop_path(parent, f".{name}.{uuid.uuid4().hex}.tmp")
    backup = hadoop_path(parent, f".{name}.{uuid.uuid4().hex}.old")
    written = hadoop_path(temporary, name) if private else temporary
    permission = jvm.org.apache.hadoop.fs.permission.FsPermission
    try:
        if private:
            fs.mkdirs(temporary, permission("700"))
            fs.setPermission(temporary, permission("700"))  # (mkdirs applies the umask)
        frame.write.mode("errorifexists").parquet(written.toString())
        if private:
            for status in fs.listStatus(written):
                fs.setPermission(status.getPath(), permission("700" if status.isDirectory() else "600"))
            fs.setPermission(written, permission("700"))
        for stale in remove_first:
            stale.unlink(missing_ok=True)
        if fs.exists(destination):
            if not fs.rename(destination, backup):
                raise InputError(f"cannot replace {target}")
        if not fs.rename(written, destination):
            raise InputError(f"cannot move the view into {target}")
        fs.delete(backup, True)
    finally:
        if fs.exists(temporary):
            fs.delete(temporary, True)


def perturb_spark(
    table: TypedTable,
    request: PerturbRequest,
    *,
    out: str | os.PathLike[str],
    certificate: str | os.PathLike[str] | None = None,
    randomness: Randomness | int | None = None,
    ranges: int | None = None,
) -> Perturbation:
    """Plan (α, β) for ``request``, perturb on Spark, write the view to ``out`` and its certificate
    (see the module docs and :func:`run_spark`).

    Returns a :class:`~crowdsafe.perturb.Perturbation` whose ``view`` is a :class:`SparkView`.
    """
    prepared = prepare_spark(table, request)
    try:
        plan = plan_for_spark(prepared, request.target)
        check_view_size(plan, request.target.max_view_rows, in_memory=False)  # a limit given: before any draw
        view = run_spark(prepared, plan, out, randomness=randomness, certificate=certificate, ranges=ranges)
    finally:
        prepared.release()
    return Perturbation(cast(Any, view), plan, custodian_facts(prepared))  # SparkView stands in for View


__all__ = ["SparkInput", "SparkView", "spark_domain", "perturb_spark", "plan_for_spark", "prepare_spark",
           "run_spark"]
