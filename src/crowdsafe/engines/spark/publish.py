"""``crowdsafe publish --engine spark``: the safe pipeline with its per-row stages on Spark.

The same pipeline as :func:`crowdsafe.anonymize.publish.publish_dataset`, stage for stage, run by
the same sequence (:func:`crowdsafe.drivers.publish.run_publication`, with the stages of
:class:`crowdsafe.engines.spark.engine.SparkEngine`):

| stage | where | code |
|---|---|---|
| read, missing values, identity, distinct values | Spark, one aggregation | :mod:`.table` |
| count the table by leaf-code tuples (looked up on the JVM) | Spark, one aggregation | :mod:`.sampling` |
| plan checks, ledger check | driver | ``drivers.publish.ledger_request`` |
| sample: Bernoulli(β) rows, as binomial thinning of the counts | driver, per release | :mod:`.sampling` |
| charge (keyed table and sample identities) | driver | the ledger |
| choose the scheme (exponential mechanism) from the counts | driver | ``selection.choose_scheme`` |
| Apply: classes and suppression below k | driver, on the counts | ``anonymize.counted.apply_counts`` |
| certify | driver | ``anonymize.publish.certify_release`` |
| write the rows of the kept classes, atomically | the driver (a local Parquet release), else Spark | :mod:`.write` |

No row reaches the driver: only frequency tables (distinct code tuples with counts) do (the
rows of a local Parquet release are generated on the driver from its published classes). With a
fixed scheme the sample is counted by its classes at the scheme's levels; for the exponential
mechanism by leaf-code tuples, which the chooser reads exactly as it reads the Polars engine's
sample. The table is counted once, whatever the number of releases; each release thins those
counts with its own stream.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.anonymize.counted import AppliedCounts, CountedSample, class_frame
from crowdsafe.anonymize.publish import DEFAULT_RUN_OPTIONS, Publication, PublishPlan, RunOptions, release_paths
from crowdsafe.anonymize.published import PublishedScheme
from crowdsafe.anonymize.release import Release, check_release_paths
from crowdsafe.csv_safety import format_note
from crowdsafe.engines.spark import fingerprint as fp
from crowdsafe.engines.spark.sampling import TableCounts, sample_counts
from crowdsafe.engines.spark.table import SparkTable
from crowdsafe.engines.spark.write import class_rows, write_releases
from crowdsafe.errors import ParameterError
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness


@dataclass(frozen=True)
class SparkRelease(Release):
    """A release made on Spark. ``frame`` is a Spark DataFrame that generates the published rows
    from ``class_table`` (Polars: each published tuple with its ``count``); ``applied`` holds
    only the published classes (:func:`~crowdsafe.anonymize.counted.published_only`);
    ``source`` is None: neither the sample nor the table's domain is kept. Its utility against
    the sample is in the publication's custodian report."""

    class_table: pl.DataFrame | None = None

    def write(self, path: str | os.PathLike[str], *, escape_formulas: bool = True,
              report: bool = True, force: bool = False) -> tuple[str, str]:
        """Write the rows (a directory of part files) and the certificate beside it, atomically;
        CSV cells formula-safe unless ``escape_formulas`` is False (the certificate says which);
        then the HTML report where the path is local (:func:`crowdsafe.report.write_reports`).
        A local path is checked first as :meth:`Release.write` checks it (``force``)."""
        check_release_paths(path, report=report, force=force)
        note = format_note(path, escape_formulas=escape_formulas)
        certificate = self.certificate.with_format_notes(note).to_json()
        spark = cast(Any, self.frame).sparkSession  # pyspark's stub omits DataFrame.sparkSession
        written = write_releases(spark, [self.frame], [certificate],
                                 [str(path)], escape_formulas=escape_formulas, classes=[release_classes(self)])
        if report:
            from crowdsafe.report import write_reports

            write_reports(written["tables"])
        return written["tables"][0], written["certificates"][0]


@dataclass(frozen=True)
class SampleCounts:
    """One release's sample as counted on Spark: the table, its size and its identity
    (:func:`~crowdsafe.engines.spark.fingerprint.sample_digest`, unkeyed: keyed with
    ``Ledger.identify`` before it goes to a ledger; it never goes anywhere else)."""

    table: CountedSample
    rows: int
    identity: str


def count_release_sample(table: SparkTable, beta: float, stream: Randomness,
                         levels: dict[str, int] | None) -> SampleCounts:
    """Draw one sample from the table's counts and count it: leaf-code tuples (``levels`` None,
    for the chooser) or classes at ``levels`` (a fixed scheme). On the driver, from ``stream``
    (:func:`~crowdsafe.engines.spark.sampling.sample_counts`: binomial thinning, the law of a
    row-level Bernoulli(β) sample); no Spark job."""
    hierarchies = table.domain.hierarchies
    maps = tuple(None if not levels or not levels[c] else hierarchies[c].leaf_map(levels[c]).astype(np.int64)
                 for c in table.columns)
    codes, counts = sample_counts(counted_table(table), beta, stream, maps)
    rows = int(counts.sum())
    identity = fp.sample_digest(table.fingerprint, table.columns,
                                [levels.get(c, 0) if levels else 0 for c in table.columns], codes, counts)
    counted = CountedSample(tuple(table.columns), codes, counts, {c: hierarchies[c] for c in table.columns})
    return SampleCounts(counted, rows, identity)


def counted_table(table: SparkTable) -> TableCounts:
    """The table's counts; a table read for a plan only (``spark_table(count=False)``) has none."""
    if table.counted is None:
        raise ParameterError("this Spark table was read for a plan only: read it with spark_table(...) to publish")
    return table.counted


def release_of(table: SparkTable, scheme: PublishedScheme, applied: AppliedCounts) -> tuple[pl.DataFrame, Any]:
    """The published classes as values (the Polars engine's dictionaries: leaves at level 0, node
    labels above) with their sizes, and the Spark DataFrame of the published rows."""
    classes = class_frame(applied, scheme, table.columns)
    sizes = applied.class_sizes[applied.class_kept]
    frame = class_rows(table.spark, classes, sizes)
    return classes.with_columns(pl.Series("count", sizes, dtype=pl.Int64)), frame


def release_classes(release: Release) -> tuple[pl.DataFrame, np.ndarray] | None:
    """The published classes of a release made from counts and their sizes (what its rows
    repeat), for the writer; None for another kind of release."""
    applied, scheme = release.applied, release.recoding
    if not isinstance(applied, AppliedCounts) or not isinstance(scheme, PublishedScheme):
        return None
    if not bool(np.all(applied.class_kept)):  # a release holds its published classes only
        return None
    return class_frame(applied, scheme, release.quasi_identifiers), applied.class_sizes[applied.class_kept]


def spark_paths(out: str, releases: int) -> list[str]:
    """Like :func:`~crowdsafe.anonymize.publish.release_paths`, for any URI (``hdfs://...``)."""
    release_paths(out, releases)  # validates the format
    if releases == 1:
        return [str(out)]
    head, _, name = str(out).rstrip("/").rpartition("/")
    stem, _, suffix = name.rpartition(".")
    prefix = f"{head}/" if head else ""
    return [f"{prefix}{stem}-{i + 1}.{suffix}" for i in range(releases)]


def publish_table(
    table: SparkTable,
    publish_plan: PublishPlan,
    options: RunOptions = DEFAULT_RUN_OPTIONS,
    *,
    randomness: Randomness,
    ledger: Ledger | None = None,
) -> Publication:
    """Run the safe pipeline on a :class:`SparkTable` (module docstring): the publish driver's one
    sequence (:func:`crowdsafe.drivers.publish.run_publication`) with the Spark engine's stages,
    carried out and written as ``options`` says. Refusals, charge, certificate and the
    public/custodian split are those of the Polars engine, by the same code; CSV cells are
    formula-safe unless ``options.escape_formulas`` is False."""
    from crowdsafe.drivers.publish import run_publication
    from crowdsafe.engines.spark.engine import SparkEngine

    return run_publication(SparkEngine(), table, publish_plan, options, randomness=randomness, ledger=ledger)


def publish_spark(data: Any, publish_plan: PublishPlan, options: RunOptions = DEFAULT_RUN_OPTIONS, *,
                  randomness: Randomness, ledger: Ledger | None = None, master: str | None = None,
                  schema: Any = None, qi: Sequence[str] | None = None, sensitive: Any = None,
                  missing: Any = "keep") -> Publication:
    """Read ``data`` on the Spark session (the active one, else one on ``master`` /
    ``$CROWDSAFE_SPARK_MASTER``; named ``options.name``) and publish it (:func:`publish_table`)."""
    from crowdsafe.engines.spark.engine import SparkEngine

    table = SparkEngine(master).read_table(data, schema=schema, qi=qi, sensitive=sensitive, missing=missing,
                                           name=options.name)
    return publish_table(table, publish_plan, options, randomness=randomness, ledger=ledger)
