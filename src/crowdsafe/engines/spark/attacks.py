"""The intersection (composition) attack with its joins on Spark.

The attack of Ganta, Kasiviswanathan and Smith (2008), with the metrics and conventions of
:mod:`crowdsafe.attacks.intersection` (same summary, same per-release rows), for targets and
releases too large for one machine. What runs where:

- *driver* (small): the distinct values of every quasi-identifier among the targets, their
  domains and codes (:func:`crowdsafe.attacks.locate.target_codes`); the distinct cells of
  every release column, parsed and resolved into the values they cover
  (:meth:`crowdsafe.data.generalized.AttributeDomain.cover`, the same parser as the Polars engine); the
  sensitive domain. Each becomes a small table broadcast to the executors;
- *Spark*: the targets' tuples, each release's classes (one group-by over its rows), the
  location of every target tuple in every release (a join of the tuples with the cells covering
  their values, then with the classes, then one join per remaining column with its cover
  table), the candidate values, their intersection across releases (a group-by over
  (tuple, value)), and the per-target metrics, aggregated on Spark; only the summary and one
  row per release are collected.

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
from crowdsafe.attacks.locate import ClassTable, encode_targets, is_microaggregated
from crowdsafe.data import Hierarchy
from crowdsafe.data.generalized import AttributeDomain, canonical_cells
from crowdsafe.engines.spark import packing
from crowdsafe.engines.spark.typed_table import _quoted
from crowdsafe.errors import InputError, ParameterError

_NULL = "\u0000null"  # stands for a missing cell in join keys (no published cell contains NUL)
_SEPARATOR = "\u001f"


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
    """The attack's tables on Spark (:class:`~crowdsafe.attacks.intersection.AttackTables`): the
    targets coded by joins with small broadcast tables, each release's classes, the located
    (tuple, class) pairs and (tuple, value) candidates as Spark DataFrames, the metrics
    aggregated in one Spark job."""

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
        """The targets' codes (driver: distinct values; Spark: one join per column), their
        distinct tuples, and the distinct cells of every release column (one Spark job each)."""
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
        self.coded = coded = coded.withColumn("__tuple", tuple_key).persist()
        self.tuples = coded.select("__tuple", *[f"__k{i}" for i in range(len(qi))]).distinct().persist()

        self.release_cells = [_distinct_values(r.frame, [*qi, sensitive]) for r in self.releases]
        cells_s = [cells[sensitive] for cells in self.release_cells]
        small_targets = target_values[sensitive].to_frame(sensitive) if has_truth else pl.DataFrame({"__none": []})
        return [as_text(cells) for cells in cells_s], small_targets

    def score(self, qi: list[str], sensitive: str, value_domain: AttributeDomain, locations: list[str],
              levels: tuple[float, ...], truth_id: str | None) -> Scores:
        from pyspark.sql import functions as F

        spark, releases, coded, tuples, has_truth = self.spark, self.releases, self.coded, self.tuples, self.has_truth
        dictionary = as_text(value_domain.values)
        per_release: list[dict[str, Any]] = []
        pairs = []
        for j, release in enumerate(releases):
            truth_column = truth_id if truth_id is not None and truth_id in coded.columns else None
            per_release.append(_release_tables(spark, release, qi, sensitive, self.domains, value_domain,
                                               self.release_cells[j], tuples, locations[j], j, coded, truth_column))
            pairs.append(per_release[-1]["pairs"])

        all_pairs = functools.reduce(lambda a, b: a.unionByName(b), pairs)
        candidate = (all_pairs.groupBy("__tuple", "__value").agg(F.countDistinct("__release").alias("__in"))
                     .filter(F.col("__in") == len(releases)).select("__tuple", "__value")
                     .localCheckpoint())  # materialized once: read by the posterior and by the truth
        posterior = candidate.groupBy("__tuple").agg(F.count(F.lit(1)).alias("__n"), F.min("__value").alias("__only"))

        per_tuple = tuples.select("__tuple").join(posterior, "__tuple", "left")
        for j, tables in enumerate(per_release):
            per_tuple = per_tuple.join(tables["stats"], "__tuple", "left").withColumn(
                f"__prior{j}", F.coalesce(F.col(f"__prior{j}"), F.lit(tables["published"])))
        best = (F.least(*[F.col(f"__prior{j}") for j in range(len(releases))]) if len(releases) > 1
                else F.col("__prior0"))
        contradiction = F.col("__n").isNull()
        per_tuple = (per_tuple
                     .withColumn("prior_anonymity", best)
                     .withColumn("contradiction", contradiction)
                     .withColumn("posterior_anonymity", F.when(contradiction, best).otherwise(F.col("__n")))
                     .withColumn("drop", F.col("prior_anonymity") - F.col("posterior_anonymity"))
                     .withColumn("vulnerable", F.col("drop") > 0)
                     .withColumn("confidence", F.when(contradiction, F.lit(0.0)).otherwise(1.0 / F.col("__n")))
                     .withColumn("perfect_breach", (F.col("__n") == 1) & ~contradiction))
        values_table = _small(spark, {"__value": np.arange(len(dictionary), dtype=np.int64), "__text": dictionary},
                              "`__value` long, `__text` string")
        per_tuple = (per_tuple.join(values_table, F.col("__only") == F.col("__value"), "left")
                     .withColumn("inferred_value", F.when(F.col("perfect_breach"), F.col("__text")))
                     .drop("__value", "__text")
                     .localCheckpoint())  # one row per distinct tuple: small, and it cuts a long plan
        per_target = coded.join(per_tuple, "__tuple", "left")
        if has_truth:
            truth = (per_target.join(values_table.withColumnRenamed("__value", "__truth"),
                                     _text_key(F.col(_quoted(sensitive))) == F.col("__text"), "left")
                     .drop("__text").fillna({"__truth": -1}))
            hit = candidate.select(F.col("__tuple").alias("__t"), F.col("__value").alias("__v"),
                                   F.lit(True).alias("__hit"))
            per_target = (truth.join(hit, (F.col("__tuple") == F.col("__t")) & (F.col("__truth") == F.col("__v")),
                                     "left")
                          .withColumn("true_value_in_candidates", F.coalesce(F.col("__hit"), F.lit(False)))
                          .withColumn("perfect_breach_true",
                                      F.col("perfect_breach") & (F.col("__only") == F.col("__truth")))
                          .drop("__t", "__v", "__hit", "__truth"))
        for j, release in enumerate(releases):
            per_target = (per_target.withColumnRenamed(f"__prior{j}", f"prior_{release.name}")
                          .withColumnRenamed(f"__partition{j}", f"partition_{release.name}"))

        # -- the aggregates, in one Spark job --------------------------------------------------
        def mean_of(condition: Any) -> Any:
            return F.avg(condition.cast("double"))

        aggregates = [
            F.count(F.lit(1)).alias("targets"),
            F.avg("prior_anonymity").alias("average_prior_anonymity"),
            F.avg("posterior_anonymity").alias("average_posterior_anonymity"),
            F.avg("drop").alias("average_drop"),
            mean_of(F.col("vulnerable")).alias("vulnerable"),
            mean_of(F.col("perfect_breach")).alias("perfect_breach"),
            F.sum(F.col("contradiction").cast("long")).alias("contradictions"),
            *[mean_of(F.col("confidence") >= c - 1e-12).alias(f"__level{i}") for i, c in enumerate(levels)],
        ]
        if has_truth:
            aggregates += [mean_of(F.col("perfect_breach_true")).alias("perfect_breach_true"),
                           mean_of(F.col("true_value_in_candidates")).alias("true_value_in_candidates")]
        for j, release in enumerate(releases):
            matches = F.coalesce(F.col(f"__matches{j}"), F.lit(0))
            aggregates += [mean_of(matches > 0).alias(f"__located{j}"), mean_of(matches > 1).alias(f"__ambiguous{j}"),
                           F.avg(f"partition_{release.name}").alias(f"__partition{j}"),
                           F.avg(f"prior_{release.name}").alias(f"__prior{j}")]
        summary = per_target.agg(*aggregates)
        for tables in per_release:  # one-row frames: every figure comes out of this one job
            summary = summary.crossJoin(tables["totals"])
        row = summary.first().asDict()
        for frame in [tuples, *(f for tables in per_release for f in tables["persisted"])]:
            frame.unpersist()  # the returned per-target frame recomputes from the inputs if it is used

        release_stats = [
            {
                "rows": int(row[f"__rows{j}"] or 0), "classes": int(row[f"__classes{j}"]), "location": "exact",
                "located": float(row[f"__located{j}"]), "ambiguous": float(row[f"__ambiguous{j}"]),
                "average_partition_size": None if row[f"__partition{j}"] is None else float(row[f"__partition{j}"]),
                "average_prior_anonymity": float(row[f"__prior{j}"]),
                "correct_location": (float(row[f"__correct{j}"]) if row.get(f"__truths{j}") else None),
            }
            for j, tables in enumerate(per_release)
        ]
        totals: dict[str, Any] = {
            "targets": int(row["targets"]),
            "average_prior_anonymity": float(row["average_prior_anonymity"]),
            "average_posterior_anonymity": float(row["average_posterior_anonymity"]),
            "average_drop": float(row["average_drop"]),
            "vulnerable": float(row["vulnerable"]),
            "perfect_breach": float(row["perfect_breach"]),
            "partial_breach": [float(row[f"__level{i}"]) for i in range(len(levels))],
            "contradictions": int(row["contradictions"] or 0),
        }
        if has_truth:
            totals["perfect_breach_true"] = float(row["perfect_breach_true"])
            totals["true_value_in_candidates"] = float(row["true_value_in_candidates"])
        hidden = [c for c in per_target.columns if c.startswith("__") and c != "__tuple"]
        return Scores(per_target.drop(*hidden).withColumnRenamed("__tuple", "tuple"), totals, release_stats)

    def result(self, targets: Any, releases: pl.DataFrame, summary: dict[str, Any]) -> SparkIntersectionResult:
        return SparkIntersectionResult(targets, releases, summary)


def _release_tables(spark: Any, release: SparkTextRelease, qi: list[str], sensitive: str,
                    domains: Mapping[str, AttributeDomain],
                    value_domain: AttributeDomain, cells: Mapping[str, pl.Series], tuples: Any, location: str, j: int,
                    coded: Any, truth_id: str | None) -> dict[str, Any]:
    """Release j's classes, the located (tuple, class) pairs, its (tuple, value) candidates, and
    (with ``truth_id``) how often a target's true class is among those located."""
    from pyspark.sql import functions as F

    combos = release.frame.groupBy(*[_quoted(c) for c in [*qi, sensitive]]).count()
    mappings = []
    canonical_columns = []
    covers = {}
    distinct_cells = {}
    canonical_distinct: dict[str, pl.Series] = {}
    sensitive_cells = cells[sensitive]
    for i, c in enumerate(qi):
        raw = as_text(cells[c])
        distinct_cells[c] = raw
        canonical = canonical_cells(raw)
        mapping = _small(spark, {f"__raw{i}": raw.fill_null(_NULL), f"__c{i}": canonical.fill_null(_NULL)},
                         f"`__raw{i}` string, `__c{i}` string")
        mappings.append((c, i, mapping))
        combos = combos.join(mapping, _text_key(F.col(_quoted(c))) == F.col(f"__raw{i}"), "left").drop(f"__raw{i}")
        canonical_columns.append(f"__c{i}")
        distinct = canonical.unique(maintain_order=True)
        canonical_distinct[c] = distinct.alias(c)
        cover_cells, cover_codes = domains[c].cover(distinct, strict=False).membership
        covers[c] = _small(spark, {f"__cell{i}": distinct.fill_null(_NULL).gather(cover_cells),
                                   f"__code{i}": cover_codes}, f"`__cell{i}` string, `__code{i}` long")
    if location == "auto":
        # the driver knows only the distinct canonical cells of each column: all the test reads
        known = ClassTable(pl.DataFrame(), np.zeros(0, np.int64), (), canonical_distinct, {}, np.zeros(0, np.int64))
        if is_microaggregated(known, domains):
            raise ParameterError(f"release {release.name} publishes centroids (microaggregation): locating "
                                 "targets by the nearest centroid needs engine='polars'", parameter="engine")
    class_key = F.concat_ws(_SEPARATOR, *[F.col(n) for n in canonical_columns])
    combos = combos.withColumn("__class", class_key).persist()
    # one row, read in the attack's last job with the metrics (each action is a Spark job: on
    # small inputs their fixed cost is most of the attack's time)
    totals = combos.agg(F.sum("count").alias(f"__rows{j}"), F.countDistinct("__class").alias(f"__classes{j}"))
    classes = combos.groupBy("__class", *canonical_columns).agg(F.sum("count").alias("__size"))

    # (class, value): a generalized sensitive cell stands for every value it covers
    value_cells, value_codes = value_domain.cover(sensitive_cells.unique(maintain_order=True), strict=False).membership
    # every distinct sensitive cell of the release is some class's: the values the release
    # publishes are the ones its cells cover (what the classes' values hold, without a job)
    published = np.unique(np.asarray(value_codes, dtype=np.int64))
    distinct_values = as_text(sensitive_cells.unique(maintain_order=True)).fill_null(_NULL)
    cover_s = _small(spark, {"__s": distinct_values.gather(value_cells), "__value": value_codes},
                     "`__s` string, `__value` long")
    class_values = (combos.select("__class", _text_key(F.col(_quoted(sensitive))).alias("__s")).distinct()
                    .join(cover_s, "__s").select("__class", "__value").distinct().persist())

    # locate: the tuples' covering cells of the most selective column, its classes, then the rest
    order = sorted(range(len(qi)), key=lambda i: -len(distinct_cells[qi[i]]))
    first = order[0]
    located = (tuples.join(covers[qi[first]], F.col(f"__k{first}") == F.col(f"__code{first}"))
               .join(classes, F.col(f"__cell{first}") == F.col(f"__c{first}"))
               .drop(f"__cell{first}", f"__code{first}"))
    for i in order[1:]:
        cover = covers[qi[i]]
        same = (F.col(f"__c{i}") == F.col(f"__cell{i}")) & (F.col(f"__k{i}") == F.col(f"__code{i}"))
        located = (located.join(cover, same)
                   .drop(f"__cell{i}", f"__code{i}"))
    located = located.select("__tuple", "__class", "__size").persist()
    stats = located.groupBy("__tuple").agg(F.count(F.lit(1)).alias(f"__matches{j}"),
                                           F.sum("__size").cast("double").alias(f"__partition{j}"))
    candidates = located.join(class_values, "__class").select("__tuple", "__value").distinct()
    prior = candidates.groupBy("__tuple").agg(F.count(F.lit(1)).alias(f"__prior{j}"))
    stats = stats.join(prior, "__tuple", "full")
    everything = _small(spark, {"__value": published}, "`__value` long")
    unlocated = tuples.select("__tuple").join(located.select("__tuple").distinct(), "__tuple", "left_anti")
    pairs = (candidates.unionByName(unlocated.crossJoin(everything))
             .withColumn("__release", F.lit(j)))
    if truth_id is not None and truth_id in release.frame.columns:
        ids = release.frame.select(_text_key(F.col(_quoted(truth_id))).alias("__id"), *[_quoted(c) for c in qi])
        for c, i, mapping in mappings:
            ids = ids.join(mapping, _text_key(F.col(_quoted(c))) == F.col(f"__raw{i}"), "left")
        ids = ids.select("__id", class_key.alias("__class"))
        truth = coded.select(_text_key(F.col(_quoted(truth_id))).alias("__id"), "__tuple").join(ids, "__id")
        hits = located.select("__tuple", "__class", F.lit(1.0).alias("__hit"))
        share = truth.join(hits, ["__tuple", "__class"], "left").agg(
            F.count(F.lit(1)).alias(f"__truths{j}"),
            F.avg(F.coalesce(F.col("__hit"), F.lit(0.0))).alias(f"__correct{j}"))
        totals = totals.crossJoin(share)
    return {"pairs": pairs, "stats": stats, "published": len(published), "totals": totals,
            "persisted": [combos, class_values, located]}


__all__ = ["SparkAttackTables", "SparkIntersectionResult", "SparkTextRelease", "intersection_attack_spark",
           "read_spark_release"]
