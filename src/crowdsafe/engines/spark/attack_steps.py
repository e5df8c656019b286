"""The Spark attack's steps 1 and 2 and its metrics on the driver, over the small tables Spark
collected (:mod:`crowdsafe.engines.spark.attacks`).

What reaches the driver is bounded by the classes and distinct tuples, as on the Polars engine:
each release's counts per distinct (quasi-identifiers, sensitive) cell combination, and the
targets' counts per distinct (tuple, true value). The location of every tuple is the Polars
engine's trie walk (:mod:`crowdsafe.attacks.exact_location`: only the (tuple, class) pairs
consistent so far are formed); every other step is a Polars join or group-by over those tables
(without a Spark job each): each release's (tuple, value) candidates, their intersection, the
per-tuple metrics, and their means over the targets (each tuple weighted by its targets: exact
integer sums over the count, as the Polars engine computes them).

A release that does not locate a tuple leaves it every value it publishes. That is never written
out as (tuple, value) pairs (tuples × published values: gigabytes for a sensitive column of 100k
values): each release keeps only its located tuples' pairs, the tuples it locates and the values
it publishes. A value is a tuple's candidate when every release either locates the tuple and
leaves it that value or does not locate it and publishes the value; only the located pairs need
testing, and the tuples no release locates share one candidate set, the values every release
publishes (:class:`Candidates`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.attacks.exact_location import class_trie, target_trie, walk
from crowdsafe.attacks.intersection import as_text
from crowdsafe.attacks.locate import ClassTable, is_microaggregated
from crowdsafe.data.cell_reader import CellCovers
from crowdsafe.data.generalized import AttributeDomain, canonical_cells
from crowdsafe.errors import ParameterError

NULL = "\u0000null"  # stands for a missing cell in join keys (no published cell contains NUL)
SEPARATOR = "\u001f"


@dataclass(frozen=True)
class Located:
    """What one release tells about every tuple: ``stats`` (``__tuple``, ``__matches``,
    ``__partition``, ``__prior``, one row per tuple it locates), ``pairs`` the (tuple, value)
    candidates of the tuples it locates (a tuple it does not locate keeps every value in
    ``values``, never written out as pairs), ``located`` the (tuple, class) pairs, ``keys`` each
    distinct raw cell combination's class, ``rows``, ``classes``, ``published`` (how many values
    it publishes), ``values`` (those values' codes, sorted) and ``constraining`` (``__tuple``: the
    tuples whose candidates ``pairs`` lists: located, in no class showing a cell that covers the
    whole domain, such as '*', which leaves every value as not locating does)."""

    stats: pl.DataFrame
    pairs: pl.DataFrame
    located: pl.DataFrame
    keys: pl.DataFrame
    rows: int
    classes: int
    published: int
    values: np.ndarray
    constraining: pl.DataFrame


@dataclass(frozen=True)
class Candidates:
    """Step 2's candidate sets S_i = ∩_j S_ij. ``pairs``: the (``__tuple``, ``__value``) pairs of
    the tuples some release locates (``located``: those tuples, one ``__tuple`` column); every
    tuple no release locates has the same set, ``common``: the values every release publishes
    (sorted codes)."""

    pairs: pl.DataFrame
    located: pl.DataFrame
    common: np.ndarray


def cells(combos: pl.DataFrame, column: str) -> pl.Series:
    """The distinct cells of one column of a release's collected counts (missing included)."""
    return combos.get_column(column).unique().sort(nulls_last=True)


def locate(combos: pl.DataFrame, name: str, qi: Sequence[str], domains: Mapping[str, AttributeDomain],
           value_domain: AttributeDomain, tuples: pl.DataFrame, location: str) -> Located:
    """Release ``name``'s classes, the located (tuple, class) pairs and its (tuple, value)
    candidates. ``combos``: its rows counted per distinct cell combination (text: the
    quasi-identifiers ``qi`` as ``__q0`` ..., the sensitive cell ``__sv``; ``count``);
    ``tuples``: the targets' distinct tuples (``__tuple`` and the codes ``__k0`` ...)."""
    frame = combos
    covers: dict[str, CellCovers] = {}
    canonical_distinct: dict[str, pl.Series] = {}
    for i, c in enumerate(qi):
        raw = as_text(cells(combos, f"__q{i}"))
        canonical = canonical_cells(raw)
        mapping = pl.DataFrame({f"__raw{i}": raw.fill_null(NULL), f"__c{i}": canonical.fill_null(NULL)})
        frame = frame.with_columns(pl.col(f"__q{i}").cast(pl.String).fill_null(NULL).alias(f"__raw{i}")).join(
            mapping, on=f"__raw{i}", how="left")
        distinct = canonical.unique(maintain_order=True)
        canonical_distinct[c] = distinct.alias(c)
        cover = domains[c].cover(distinct, strict=False)
        covers[c] = CellCovers(distinct, np.array(cover.kind, dtype=object), cover.indptr.astype(np.int64),
                               cover.indices.astype(np.int64), domains[c].size)
    if location == "auto":
        # the driver reads only the distinct canonical cells of each column: all the test reads
        known = ClassTable(pl.DataFrame(), np.zeros(0, np.int64), (), canonical_distinct, {}, np.zeros(0, np.int64))
        if is_microaggregated(known, domains):
            raise ParameterError(f"release {name} publishes centroids (microaggregation): locating "
                                 "targets by the nearest centroid needs engine='polars'", parameter="engine")
    canonical_columns = [f"__c{i}" for i in range(len(qi))]
    frame = frame.with_columns(pl.concat_str(canonical_columns, separator=SEPARATOR).alias("__class"),
                               pl.col("__sv").cast(pl.String).fill_null(NULL).alias("__s"))
    classes = frame.group_by("__class", *canonical_columns).agg(pl.col("count").sum().alias("__size"))

    # (class, value): a generalized sensitive cell stands for every value it covers
    sensitive_cells = as_text(cells(combos, "__sv")).unique(maintain_order=True)
    value_cells, value_codes = value_domain.cover(sensitive_cells, strict=False).membership
    published = np.unique(np.asarray(value_codes, dtype=np.int64))
    # a cell covering the whole domain ('*') is never listed value by value: a tuple in a class
    # holding one may hold any value the release publishes, as a tuple it does not locate
    whole = pl.Series(np.bincount(value_cells, minlength=len(sensitive_cells)) == value_domain.size)
    whole_cells = sensitive_cells.fill_null(NULL).filter(whole).implode()
    cover_s = pl.DataFrame({"__s": sensitive_cells.fill_null(NULL).gather(value_cells),
                            "__value": np.asarray(value_codes, dtype=np.int64)})
    cover_s = cover_s.filter(~pl.col("__s").is_in(whole_cells))
    class_values = frame.select("__class", "__s").unique().join(cover_s, on="__s").select("__class", "__value").unique()
    whole_classes = frame.filter(pl.col("__s").is_in(whole_cells)).select("__class").unique()

    located = _located(classes, tuples, qi, canonical_distinct, covers)
    stats = located.group_by("__tuple").agg(pl.len().cast(pl.Int64).alias("__matches"),
                                            pl.col("__size").sum().cast(pl.Float64).alias("__partition"))
    open_tuples = located.join(whole_classes, on="__class", how="semi").select("__tuple").unique()
    listed = located.join(open_tuples, on="__tuple", how="anti")
    constraining = listed.select("__tuple").unique()
    candidates = listed.join(class_values, on="__class").select("__tuple", "__value").unique()
    prior = candidates.group_by("__tuple").agg(pl.len().cast(pl.Int64).alias("__prior"))
    stats = stats.join(prior, on="__tuple", how="full", coalesce=True)
    keys = frame.select(*[f"__raw{i}" for i in range(len(qi))], "__class").unique()
    return Located(stats, candidates, located, keys, int(combos.get_column("count").sum()),
                   frame.get_column("__class").n_unique(), len(published), published, constraining)


def _located(classes: pl.DataFrame, tuples: pl.DataFrame, qi: Sequence[str],
             distinct: Mapping[str, pl.Series], covers: Mapping[str, CellCovers]) -> pl.DataFrame:
    """The (``__tuple``, ``__class``, ``__size``) pairs whose class cells all cover the tuple:
    the Polars engine's trie walk (:mod:`crowdsafe.attacks.exact_location`), which forms only
    the pairs consistent on the columns walked so far. (Joining the tuples with every class
    that shares one column's covering cell, then filtering by the other columns, formed about
    tuples × classes / cells of that column first: billions of rows at a million targets.)
    ``classes``: one row per class with its canonical cells ``__c0`` ...; ``distinct[c]``:
    column c's distinct canonical cells, which ``covers[c]`` reads."""
    cell_of_class = {}
    for i, c in enumerate(qi):
        index = pl.DataFrame({f"__c{i}": distinct[c].fill_null(NULL), "__cell": np.arange(len(distinct[c]))})
        cell_of_class[c] = (classes.select(f"__c{i}").join(index, on=f"__c{i}", how="left", maintain_order="left")
                            .get_column("__cell").to_numpy().astype(np.int64))
    sizes = classes.get_column("__size").to_numpy()
    table = ClassTable(pl.DataFrame(), np.zeros(0, np.int64), tuple(qi), dict(distinct), cell_of_class, sizes)
    order = sorted(qi, key=lambda c: len(distinct[c]))  # the fewest distinct cells first, as on Polars
    trie = target_trie({c: tuples.get_column(f"__k{i}").to_numpy().astype(np.int64) for i, c in enumerate(qi)},
                       {c: covers[c].domain_size for c in qi}, order)
    pair_tuple, pair_class = walk(class_trie([table], [covers], order), trie)[0]
    return pl.DataFrame({"__tuple": tuples.get_column("__tuple").gather(pair_tuple),
                         "__class": classes.get_column("__class").gather(pair_class),
                         "__size": classes.get_column("__size").gather(pair_class)})


def candidates_of(readings: Sequence[Located]) -> Candidates:
    """Step 2: the (tuple, value) pairs in every release's candidate set. A tuple some release
    constrains (``Located.constraining``) has its candidates among that release's pairs: the union
    of the releases' pairs is tested, each pair kept when every release j either constrains the
    tuple and has the pair or does not and publishes the value. Every frame is bounded by the
    listed pairs."""
    union = pl.concat([r.pairs.select("__tuple", "__value") for r in readings]).unique()
    located = pl.concat([r.constraining for r in readings]).unique()
    kept = pl.lit(True)
    for j, r in enumerate(readings):
        union = (union.join(r.pairs.select("__tuple", "__value").unique().with_columns(pl.lit(True).alias(f"__p{j}")),
                            on=["__tuple", "__value"], how="left")
                 .join(r.constraining.with_columns(pl.lit(True).alias(f"__l{j}")), on="__tuple", how="left")
                 .with_columns(pl.col("__value").is_in(pl.Series(r.values, dtype=pl.Int64).implode()).alias(f"__v{j}")))
        here = pl.col(f"__p{j}").fill_null(False)
        elsewhere = pl.col(f"__l{j}").is_null() & pl.col(f"__v{j}")
        kept = kept & (here | elsewhere)
    common = readings[0].values if readings else np.zeros(0, np.int64)
    for r in readings[1:]:
        common = np.intersect1d(common, r.values)
    return Candidates(union.filter(kept).select("__tuple", "__value"), located,
                      np.asarray(common, dtype=np.int64))


def per_tuple(tuples: pl.DataFrame, readings: Sequence[Located], candidate: Candidates,
              dictionary: pl.Series) -> pl.DataFrame:
    """The per-tuple metrics: one row per tuple (``__tuple``, per release j ``__matches<j>``,
    ``__partition<j>``, ``__prior<j>``, then the metrics, ``inferred_value`` and ``__only``).
    A tuple no release locates gets the size and least value of ``candidate.common``."""
    posterior = candidate.pairs.group_by("__tuple").agg(pl.len().cast(pl.Int64).alias("__n"),
                                                        pl.col("__value").min().alias("__only"))
    common = candidate.common
    nowhere = pl.col("__somewhere").is_null() & pl.lit(len(common) > 0)
    table = (tuples.select("__tuple").unique().join(posterior, on="__tuple", how="left")
             .join(candidate.located.select("__tuple", pl.lit(True).alias("__somewhere")), on="__tuple", how="left")
             .with_columns(pl.when(nowhere).then(pl.lit(len(common), pl.Int64)).otherwise(pl.col("__n")).alias("__n"),
                           pl.when(nowhere).then(pl.lit(int(common.min()) if len(common) else None, pl.Int64))
                           .otherwise(pl.col("__only")).alias("__only"))
             .drop("__somewhere"))
    for j, reading in enumerate(readings):
        table = table.join(reading.stats, on="__tuple", how="left").select(
            pl.exclude("__matches", "__partition", "__prior"), pl.col("__matches").alias(f"__matches{j}"),
            pl.col("__partition").alias(f"__partition{j}"),
            pl.col("__prior").fill_null(reading.published).alias(f"__prior{j}"))
    best = pl.min_horizontal([f"__prior{j}" for j in range(len(readings))])
    contradiction = pl.col("__n").is_null()
    table = table.with_columns(best.alias("prior_anonymity"), contradiction.alias("contradiction"))
    table = table.with_columns(pl.when(contradiction).then(pl.col("prior_anonymity")).otherwise(pl.col("__n"))
                               .alias("posterior_anonymity"))
    table = table.with_columns((pl.col("prior_anonymity") - pl.col("posterior_anonymity")).alias("drop"))
    perfect = (pl.col("__n") == 1).fill_null(False) & ~contradiction
    table = table.with_columns(
        (pl.col("drop") > 0).alias("vulnerable"),
        pl.when(contradiction).then(0.0).otherwise(1.0 / pl.col("__n")).alias("confidence"),
        perfect.alias("perfect_breach"))
    inferred = pl.DataFrame({"__only": np.arange(len(dictionary), dtype=np.int64), "__text": as_text(dictionary)})
    table = (table.join(inferred, on="__only", how="left")
             .with_columns(pl.when(pl.col("perfect_breach")).then(pl.col("__text")).alias("inferred_value"))
             .drop("__text", "__n"))
    return table.sort("__tuple")


def truth_hits(truths: pl.DataFrame, candidate: Candidates, table: pl.DataFrame,
               dictionary: pl.Series) -> pl.DataFrame:
    """Per distinct (tuple, true value as a text key ``__s``): whether the value is among the
    tuple's candidates (for a tuple no release locates: among ``candidate.common``) and whether
    the perfect breach inferred it."""
    codes = pl.DataFrame({"__s": as_text(dictionary), "__truth": np.arange(len(dictionary), dtype=np.int64)})
    hit = candidate.pairs.select("__tuple", pl.col("__value").alias("__truth"), pl.lit(True).alias("__hit"))
    somewhere = candidate.located.select("__tuple", pl.lit(True).alias("__somewhere"))
    common = pl.Series(candidate.common, dtype=pl.Int64).implode()
    in_common = pl.col("__somewhere").is_null() & pl.col("__truth").is_in(common)
    return (truths.select("__tuple", "__s").unique()
            .join(codes.drop_nulls("__s"), on="__s", how="left")
            .join(hit, on=["__tuple", "__truth"], how="left")
            .join(somewhere, on="__tuple", how="left")
            .join(table.select("__tuple", "perfect_breach", "__only"), on="__tuple", how="left")
            .select("__tuple", "__s",
                    (pl.col("__hit").fill_null(False) | in_common.fill_null(False)).alias("true_value_in_candidates"),
                    (pl.col("perfect_breach") & (pl.col("__only") == pl.col("__truth")).fill_null(False))
                    .alias("perfect_breach_true")))


def aggregates(weights: pl.DataFrame, table: pl.DataFrame, readings: Sequence[Located],
               levels: Sequence[float], truth: pl.DataFrame | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The means over the targets (``weights``: ``__tuple``, ``__w`` targets per tuple) and per
    release; with ``truth`` (``__tuple``, ``__s``, ``__w`` and the two truth columns) the truth's."""
    t = table.join(weights, on="__tuple", how="inner")
    w = t.get_column("__w").to_numpy().astype(np.int64)
    n = int(w.sum())

    def mean(column: Any) -> float:
        values = t.select(column).to_series().to_numpy()
        return int((w * values.astype(np.int64)).sum(dtype=np.int64)) / n

    totals: dict[str, Any] = {
        "targets": n,
        "average_prior_anonymity": mean(pl.col("prior_anonymity")),
        "average_posterior_anonymity": mean(pl.col("posterior_anonymity")),
        "average_drop": mean(pl.col("drop")),
        "vulnerable": mean(pl.col("vulnerable")),
        "perfect_breach": mean(pl.col("perfect_breach")),
        "partial_breach": [mean(pl.col("confidence") >= c - 1e-12) for c in levels],
        "contradictions": int(w[t.get_column("contradiction").to_numpy()].sum()),
    }
    if truth is not None:
        tw = truth.get_column("__w").to_numpy().astype(np.int64)
        for column in ("perfect_breach_true", "true_value_in_candidates"):
            totals[column] = int((tw * truth.get_column(column).to_numpy()).sum()) / int(tw.sum())
    releases = []
    for j, reading in enumerate(readings):
        matches = t.get_column(f"__matches{j}").fill_null(0).to_numpy()
        located = matches > 0
        on_located = int(w[located].sum())
        partition = t.get_column(f"__partition{j}").fill_null(0).to_numpy()
        releases.append({
            "rows": reading.rows, "classes": reading.classes, "location": "exact",
            "located": on_located / n, "ambiguous": int(w[matches > 1].sum()) / n,
            "average_partition_size": (int((w[located] * partition[located].astype(np.int64)).sum()) / on_located
                                       if on_located else None),
            "average_prior_anonymity": mean(pl.col(f"__prior{j}")),
            "correct_location": None,
        })
    return totals, releases
