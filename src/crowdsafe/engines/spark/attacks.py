"""The intersection (composition) attack with its joins on Spark.

The attack of Ganta, Kasiviswanathan and Smith (2008), with the metrics and conventions of
:mod:`crowdsafe.attacks.intersection` (same summary, same per-release rows), for targets and
releases too large for one machine. What runs where:

- *Spark*: the targets' quasi-identifier codes (a join per column with a small broadcast table)
  and tuple keys; the counts collected (below); the rate of correct location with a truth id
  (one job for every release); the per-target rows of the result (the targets joined with their
  tuple's metrics, lazy);
- *collected* (bounded by the classes and distinct tuples, as on the Polars engine): the distinct
  values of every quasi-identifier among the targets, the targets' counts per distinct (tuple,
  true value), and every release's row counts per distinct cell combination (one job for all
  releases);
- *driver*: the domains and codes (:func:`crowdsafe.attacks.locate.target_codes`), the cells
  parsed and resolved into the values they cover (the Polars engine's parser), the sensitive
  domain, and the location, candidate sets, intersection and metrics as Polars joins over the
  counts (:mod:`crowdsafe.engines.spark.attack_steps`). Each Spark job has a fixed cost, most of
  the time on small inputs: a step of its own on Spark each, these took 134 jobs where 15 do now
  (docs/spark.md).

Only exact location (generalization, suppression, sampling) runs on Spark; microaggregated
releases (nearest-centroid location) need the polars engine.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.attacks.intersection import DEFAULT_LEVELS, Location, Scores, as_text, run_intersection
from crowdsafe.attacks.intersection_tables import require_target_columns
from crowdsafe.attacks.locate import encode_targets
from crowdsafe.data import Hierarchy
from crowdsafe.data.generalized import AttributeDomain
from crowdsafe.engines.spark import attack_steps as steps
from crowdsafe.engines.spark import packing
from crowdsafe.engines.spark.session import planned_on_executors
from crowdsafe.engines.spark.typed_table import _quoted
from crowdsafe.errors import InputError, ParameterError

_NULL = steps.NULL  # stands for a missing cell in join keys (no published cell contains NUL)


@dataclass(frozen=True)
class SparkTextRelease:
    """A release on Spark (every column read as text), its name and presumed k."""

    frame: Any
    name: str
    presumed_k: int | None = None


@dataclass(frozen=True)
class SparkIntersectionResult:
    """``targets``: a Spark DataFrame, one row per target with its metrics (lazy: write or
    aggregate it on Spark); ``releases`` and ``summary`` as in
    :class:`~crowdsafe.attacks.intersection.IntersectionResult`."""

    targets: Any
    releases: pl.DataFrame
    summary: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "releases": self.releases.to_dicts()}


def mark_suppressed_spark(release: SparkTextRelease, qi: Sequence[str], tokens: Sequence[str]) -> SparkTextRelease:
    """:func:`crowdsafe.attacks.releases.mark_suppressed` on Spark: quasi-identifier cells equal
    to one of ``tokens`` (``""``: an empty cell) read as ``*``."""
    from pyspark.sql import functions as F

    values = list(tokens)  # ("": an empty cell, missing or the empty text)
    frame = release.frame
    for c in (c for c in qi if c in frame.columns):
        column = F.col(_quoted(c))
        hit = column.isin(values)
        if "" in tokens:
            hit = hit | column.isNull()
        frame = frame.withColumn(c, F.when(hit, F.lit("*")).otherwise(column))
    return SparkTextRelease(frame, release.name, release.presumed_k)


def read_spark_release(spark: Any, path: str | os.PathLike[str], name: str | None = None) -> SparkTextRelease:
    """A release file or directory (CSV or Parquet) on Spark, every column as text, as
    :func:`crowdsafe.attacks.releases.read_release` reads it (an empty CSV field is missing)."""
    from pyspark.sql import functions as F

    from crowdsafe.attacks.releases import certificate_k
    from crowdsafe.engines.spark.io import read_frame

    text = str(path)
    if "://" not in text and not text.startswith("file:") and not os.path.exists(text):
        raise InputError(f"no such release file: {text}")  # the Polars engine's words
    frame = read_frame(spark, text, missing_tokens=())
    frame = frame.select([F.col(_quoted(c)).cast("string").alias(c) for c in frame.columns])
    stem = os.path.basename(text.rstrip("/"))
    for suffix in (".csv", ".parquet", ".pq"):
        stem = stem[: -len(suffix)] if stem.lower().endswith(suffix) else stem
    k = certificate_k(Path(text.rstrip("/"))) if "://" not in text else None
    return SparkTextRelease(frame, name or stem, k)


def _text_key(column: Any) -> Any:
    from pyspark.sql import functions as F

    return F.coalesce(column.cast("string"), F.lit(_NULL))


def _distinct_values(frame: Any, columns: Sequence[str]) -> dict[str, pl.Series]:
    """The distinct values of several columns (missing included), in one Spark job."""
    from pyspark.sql import functions as F

    row = frame.agg(*[F.collect_set(_quoted(c)).alias(f"__set{i}") for i, c in enumerate(columns)],
                    *[F.max(F.col(_quoted(c)).isNull().cast("int")).alias(f"__null{i}")
                      for i, c in enumerate(columns)]).first()
    dtypes = dict(frame.dtypes)
    out = {}
    for i, c in enumerate(columns):
        values = list(row[f"__set{i}"]) + ([None] if row[f"__null{i}"] else [])
        out[c] = pl.Series(c, values, dtype=_POLARS_TYPES.get(dtypes[c], pl.String))
    return out


_POLARS_TYPES = {"tinyint": pl.Int8, "smallint": pl.Int16, "int": pl.Int32, "bigint": pl.Int64, "float": pl.Float32,
                 "double": pl.Float64, "boolean": pl.Boolean, "date": pl.Date, "string": pl.String}


_SPARK_TYPES = {"Int64": "long", "Float64": "double", "Boolean": "boolean", "String": "string"}


def _to_spark(spark: Any, frame: pl.DataFrame) -> Any:
    """A driver-side table (bounded by the classes or distinct tuples) as a Spark DataFrame."""
    schema = ", ".join(f"`{name}` {_SPARK_TYPES[str(dtype)]}" for name, dtype in frame.schema.items())
    return planned_on_executors(spark.createDataFrame(frame.to_arrow(), schema=schema))


def _to_polars(frame: Any) -> pl.DataFrame:
    """A Spark DataFrame bounded by the classes or distinct tuples, collected (one Spark job)."""
    return cast(pl.DataFrame, pl.from_arrow(frame.toArrow()))


def _small(spark: Any, data: dict[str, Any], schema: str) -> Any:
    """A small driver-side table as a broadcast Spark DataFrame (through Arrow)."""
    from pyspark.sql import functions as F

    frame = pl.DataFrame(data)
    return F.broadcast(spark.createDataFrame(frame.to_arrow(), schema=schema))


def intersection_attack_spark(
    releases: Sequence[SparkTextRelease],
    targets: Any,
    qi: Sequence[str],
    sensitive: str,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    location: str = "auto",
    levels: Sequence[float] = DEFAULT_LEVELS,
    truth_id: str | None = None,
) -> SparkIntersectionResult:
    """The intersection attack of ``targets`` (a Spark DataFrame holding ``qi`` and optionally
    the true ``sensitive`` value) over ``releases``: the algorithm of
    :func:`crowdsafe.attacks.intersection.run_intersection` over :class:`SparkAttackTables` (see
    the module docstring and :func:`crowdsafe.attacks.intersection.intersection_attack` for the
    metrics)."""
    hierarchies = dict(hierarchies or {})
    tables = SparkAttackTables(list(releases), targets, hierarchies)
    result = run_intersection(tables, qi, sensitive, hierarchy=hierarchies.get(sensitive),
                              location=cast(Location, location), levels=levels, truth_id=truth_id)
    return cast(SparkIntersectionResult, result)


class SparkAttackTables:
    """The attack's tables (:class:`~crowdsafe.attacks.intersection.AttackTables`): the targets
    coded on Spark by joins with small broadcast tables, their distinct tuples and each release's
    distinct cell combinations counted on Spark and collected, the steps over those counts on the
    driver (:mod:`~crowdsafe.engines.spark.attack_steps`)."""

    def __init__(self, releases: list[SparkTextRelease], targets: Any, hierarchies: dict[str, Hierarchy]) -> None:
        self.releases = releases
        self.targets = targets
        self.hierarchies = hierarchies
        self.names = [r.name for r in releases]
        self.presumed_k = [r.presumed_k for r in releases]

    def locations(self, location: Any) -> list[str]:
        if location not in ("auto", "exact"):
            raise ParameterError("the spark engine locates targets exactly (location 'auto' or 'exact'); "
                                 "nearest-centroid location needs engine='polars'", parameter="engine")
        return [location] * len(self.releases)

    def check(self, qi: list[str], sensitive: str) -> None:
        require_target_columns(self.targets.columns, qi)
        for release in self.releases:
            absent = [c for c in [*qi, sensitive] if c not in release.frame.columns]
            if absent:
                what = "sensitive column" if absent[0] == sensitive else "column"
                raise InputError(f"release {release.name} has no {what} {absent[0]!r}")

    def sensitive_cells(self, qi: list[str], sensitive: str) -> tuple[list[pl.Series], pl.DataFrame]:
        """The targets' codes (driver: distinct values; Spark: one join per column), then two
        collections: the targets' distinct tuples (with their true values) counted, and every
        release's rows counted per distinct cell combination (one Spark job for all releases)."""
        from pyspark.sql import functions as F

        targets, hierarchies = self.targets, self.hierarchies
        spark = self.spark = targets.sparkSession
        self.has_truth = has_truth = sensitive in targets.columns
        domains: dict[str, AttributeDomain] = {}
        coded = targets
        target_values = _distinct_values(targets, [*qi, *([sensitive] if has_truth else [])])
        for i, c in enumerate(qi):
            values = target_values[c]
            column_domains, column_codes = encode_targets(values.to_frame(c), [c], hierarchies)
            domains[c], codes = column_domains[c], column_codes[c]
            table = _small(spark, {f"__v{i}": as_text(values), f"__k{i}": codes.astype(np.int64)},
                           f"`__v{i}` string, `__k{i}` long")
            coded = coded.join(table, _text_key(F.col(_quoted(c))) == _text_key(F.col(f"__v{i}")),
                               "left").drop(f"__v{i}")
        sizes = [domains[c].size for c in qi]
        if math.prod(sizes) >= 2**63:
            raise ParameterError("the targets' quasi-identifier domains have 2^63 or more combinations; "
                                 "use engine='polars'", parameter="engine")
        self.domains = domains
        tuple_key = packing.pack([F.col(f"__k{i}") for i in range(len(qi))], sizes)
        coded = coded.withColumn("__tuple", tuple_key)
        if has_truth:
            coded = coded.withColumn("__s", _text_key(F.col(_quoted(sensitive))))
        self.coded = coded = coded.persist()  # read by the tuples' count, the correct location, the output
        keys = ["__tuple", *[f"__k{i}" for i in range(len(qi))], *(["__s"] if has_truth else [])]
        self.counted = _to_polars(coded.groupBy(*keys).count())
        if self.counted.height == 0:
            raise InputError("the targets table is empty")

        def counts(j: int, release: SparkTextRelease) -> Any:
            return release.frame.select(F.lit(j).alias("__release"),
                                        *[F.col(_quoted(c)).cast("string").alias(f"__q{i}") for i, c in enumerate(qi)],
                                        F.col(_quoted(sensitive)).cast("string").alias("__sv"))

        rows = functools.reduce(lambda a, b: a.unionByName(b), [counts(j, r) for j, r in enumerate(self.releases)])
        combos = _to_polars(rows.groupBy(*rows.columns).count())
        self.combos = [combos.filter(pl.col("__release") == j).drop("__release") for j in range(len(self.releases))]
        small_targets = target_values[sensitive].to_frame(sensitive) if has_truth else pl.DataFrame({"__none": []})
        return [as_text(steps.cells(c, "__sv")) for c in self.combos], small_targets

    def score(self, qi: list[str], sensitive: str, value_domain: AttributeDomain, locations: list[str],
              levels: tuple[float, ...], truth_id: str | None) -> Scores:
        from pyspark.sql import functions as F

        spark, releases, coded, has_truth = self.spark, self.releases, self.coded, self.has_truth
        dictionary = as_text(value_domain.values)
        codes = [f"__k{i}" for i in range(len(qi))]
        tuples = self.counted.group_by("__tuple", *codes).agg(pl.col("count").sum().alias("__w"))
        readings = [steps.locate(self.combos[j], release.name, qi, self.domains, value_domain, tuples, locations[j])
                    for j, release in enumerate(releases)]
        candidate = steps.candidates_of(readings)
        table = steps.per_tuple(tuples, readings, candidate, dictionary)
        truth = hits = None
        if has_truth:
            hits = steps.truth_hits(self.counted, candidate, table, dictionary)
            truth = (self.counted.group_by("__tuple", "__s").agg(pl.col("count").sum().alias("__w"))
                     .join(hits, on=["__tuple", "__s"]))
        totals, release_stats = steps.aggregates(tuples.select("__tuple", "__w"), table, readings, levels, truth)

        # how often a target's true class is among those located, for every release in one Spark
        # job: each row's class from its cells (a broadcast table of the release's distinct cell
        # combinations), its target's tuple by the id, then the located (tuple, class) pairs
        with_ids = [j for j, r in enumerate(releases) if truth_id is not None and truth_id in r.frame.columns]
        if truth_id is not None and truth_id in coded.columns and with_ids:
            raw = ["__release", *[f"__raw{i}" for i in range(len(qi))]]
            rows = functools.reduce(lambda a, b: a.unionByName(b), [
                releases[j].frame.select(F.lit(j).alias("__release"),
                                         _text_key(F.col(_quoted(truth_id))).alias("__id"),
                                         *[_text_key(F.col(_quoted(c))).alias(f"__raw{i}") for i, c in enumerate(qi)])
                for j in with_ids])
            keys = pl.concat([readings[j].keys.select(pl.lit(j, pl.Int64).alias("__release"), pl.all())
                              for j in with_ids])
            located = pl.concat([readings[j].located.select(pl.lit(j, pl.Int64).alias("__release"), "__tuple",
                                                            "__class", __hit=pl.lit(1.0)) for j in with_ids])
            ids = coded.select(_text_key(F.col(_quoted(truth_id))).alias("__id"), "__tuple")
            shares = (rows.join(F.broadcast(_to_spark(spark, keys)), raw).join(ids, "__id")
                      .join(F.broadcast(_to_spark(spark, located)), ["__release", "__tuple", "__class"], "left")
                      .groupBy("__release").agg(F.avg(F.coalesce(F.col("__hit"), F.lit(0.0))).alias("__correct")))
            for row in shares.collect():
                release_stats[row["__release"]]["correct_location"] = float(row["__correct"])

        # the per-target metrics: the targets joined with their tuple's row (lazy: written by --out)
        per_target = coded.join(_to_spark(spark, table), "__tuple", "left")
        if hits is not None:
            per_target = per_target.join(_to_spark(spark, hits), ["__tuple", "__s"], "left")
        for j, release in enumerate(releases):
            per_target = (per_target.withColumnRenamed(f"__prior{j}", f"prior_{release.name}")
                          .withColumnRenamed(f"__partition{j}", f"partition_{release.name}"))
        hidden = [c for c in per_target.columns if c.startswith("__") and c != "__tuple"]
        return Scores(per_target.drop(*hidden).withColumnRenamed("__tuple", "tuple"), totals, release_stats)

    def result(self, targets: Any, releases: pl.DataFrame, summary: dict[str, Any]) -> SparkIntersectionResult:
        return SparkIntersectionResult(targets, releases, summary)


__all__ = ["SparkAttackTables", "SparkIntersectionResult", "SparkTextRelease", "intersection_attack_spark",
           "read_spark_release"]
