"""``crowdsafe publish --engine spark``: the safe pipeline with its per-row stages on Spark.

The same pipeline as :func:`crowdsafe.anonymize.publish.publish_dataset`, stage for stage:

| stage | where | code |
|---|---|---|
| read, missing values, identity, distinct values | Spark, one aggregation | :mod:`.table` |
| plan checks, ledger check | driver | ``anonymize.publish.ledger_request`` |
| sample (a stream per partition), encode (broadcast dictionaries), recode (broadcast arrays), count | Spark, one job per release | :mod:`.encoding`, :mod:`.sampling` |
| charge (keyed table and sample identities) | driver | the ledger |
| choose the scheme (exponential mechanism) from the counts | driver | ``anonymize.selection.choose_scheme`` |
| Apply: classes and suppression below k | driver, on the counts | ``anonymize.counted.apply_counts`` |
| certify | driver | ``anonymize.publish.certify_release`` |
| write the rows of the kept classes, atomically | Spark | :mod:`.write` |

No row reaches the driver: only frequency tables (distinct code tuples with counts) do. With a
fixed scheme the executors count the classes at the scheme's levels directly; for the
exponential mechanism they count leaf-code tuples, which the chooser reads exactly as it reads
the Polars engine's sample.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.anonymize.counted import AppliedCounts, CountedSample, apply_counts, class_frame, published_only
from crowdsafe.anonymize.publish import (
    DEFAULT_MAX_SUPPRESSION,
    Publication,
    PublishPlan,
    candidate_count,
    certify_release,
    check_custodian_path,
    check_lattice,
    checked_certificate,
    choose_recoding,
    custodian_facts,
    ledger_request,
    ledger_summary,
    new_release_id,
    public_choice,
    release_facts,
    release_paths,
    write_custodian_report,
)
from crowdsafe.anonymize.recoding import GeneralizationScheme
from crowdsafe.anonymize.release import Release
from crowdsafe.anonymize.selection import SchemeChoice, fixed_scheme
from crowdsafe.csv_safety import format_note
from crowdsafe.errors import ParameterError
from crowdsafe.engines.spark import fingerprint as fp
from crowdsafe.engines.spark.sampling import count_sample
from crowdsafe.engines.spark.streams import PartitionStreams
from crowdsafe.engines.spark.table import SparkTable
from crowdsafe.engines.spark.write import class_rows, write_releases
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

    def write(self, path: str, *, escape_formulas: bool = True) -> tuple[str, str]:  # type: ignore[override]
        """Write the rows (a directory of part files) and the certificate beside it, atomically;
        CSV cells formula-safe unless ``escape_formulas`` is False (the certificate says which)."""
        note = format_note(path, escape_formulas=escape_formulas)
        written = write_releases(self.frame.sparkSession, [self.frame], [self.certificate.with_format_notes(note).to_json()],
                                 [str(path)], escape_formulas=escape_formulas)
        return written["tables"][0], written["certificates"][0]


@dataclass(frozen=True)
class SampleCounts:
    """One release's sample as counted on Spark: the table, its size and its identity (the
    unkeyed multiset digest: keyed with ``Ledger.identify`` before it goes to a ledger; it never goes
    anywhere else)."""

    table: CountedSample
    rows: int
    identity: str


def count_release_sample(table: SparkTable, beta: float, stream: Randomness,
                         levels: dict[str, int] | None) -> SampleCounts:
    """Draw one sample on Spark and count it: leaf-code tuples (``levels`` None, for the chooser)
    or classes at ``levels`` (a fixed scheme). Consumes one child of ``stream``'s seed when seeded."""
    hierarchies = table.domain.hierarchies
    maps = tuple(None if not levels or not levels[c] else hierarchies[c].leaf_map(levels[c]).astype(np.int64)
                 for c in table.columns)
    streams = PartitionStreams.from_randomness(stream)
    dictionaries = tuple(table.dictionaries[c] for c in table.columns)
    codes, counts, sums = count_sample(table.hashed(), streams, beta, dictionaries, maps)
    rows = int(counts.sum())
    identity = fp.digest(table.frame.columns, fp.frame_types(table.frame), rows, sums)
    counted = CountedSample(tuple(table.columns), codes, counts, {c: hierarchies[c] for c in table.columns})
    return SampleCounts(counted, rows, identity)


def release_of(table: SparkTable, scheme: GeneralizationScheme, applied: AppliedCounts) -> tuple[pl.DataFrame, Any]:
    """The published classes as values (the Polars engine's dictionaries: leaves at level 0, node
    labels above) with their sizes, and the Spark DataFrame of the published rows."""
    classes = class_frame(applied, scheme, table.columns)
    sizes = applied.class_sizes[applied.class_kept]
    frame = class_rows(table.spark, classes, sizes)
    return classes.with_columns(pl.Series("count", sizes, dtype=pl.Int64)), frame


def spark_paths(out: str, releases: int) -> list[str]:
    """Like :func:`~crowdsafe.anonymize.publish.release_paths`, for any URI (``hdfs://...``)."""
    release_paths(out, releases)  # validates the format
    if releases == 1:
        return [str(out)]
    head, _, name = str(out).rstrip("/").rpartition("/")
    stem, _, suffix = name.rpartition(".")
    prefix = f"{head}/" if head else ""
    return [f"{prefix}{stem}-{i + 1}.{suffix}" for i in range(releases)]


def table_identity(table: SparkTable, ledger: Ledger) -> str:
    """The table's identity in ``ledger``: its multiset digest keyed with the ledger's secret
    (:meth:`~crowdsafe.privacy.ledger.Ledger.identify`)."""
    return ledger.identify(table.fingerprint)


def publish_table(
    table: SparkTable,
    publish_plan: PublishPlan,
    *,
    randomness: Randomness,
    ledger: Ledger | None = None,
    budget: tuple[float, float] | None = None,
    out: str | None = None,
    force: bool = False,
    max_suppression: float = DEFAULT_MAX_SUPPRESSION,
    custodian_report: str | None = None,
    escape_formulas: bool = True,
) -> Publication:
    """Run the safe pipeline on a :class:`SparkTable` (module docstring). Refusals, charge,
    certificate and the public/custodian split are those of the Polars engine, by the same
    functions; CSV cells are formula-safe unless ``escape_formulas`` is False."""
    notes = list(table.notes)
    columns = table.columns
    if publish_plan.scheme is None and publish_plan.objective == "entropy":
        raise ParameterError("the entropy objective is not available with --engine spark yet (its sensitivity "
                             "needs every column's public domain); choose another --objective (nothing was charged)")
    if publish_plan.columns is not None:
        raise ParameterError("--columns is not available with --engine spark yet; choose the published columns "
                             "with --qi and --sensitive (nothing was charged)")
    fixed = fixed_scheme(table.domain, columns, publish_plan.scheme) if publish_plan.scheme is not None else None
    if fixed is None:
        check_lattice(table.domain.hierarchies, columns)
        candidate_count(table.domain, columns, publish_plan.objective, publish_plan.target)  # the target is published
    paths = spark_paths(str(out), publish_plan.releases) if out is not None else []
    report_path = check_custodian_path(custodian_report, paths)
    charge_request: dict[str, Any] = {}
    identity = None
    if ledger is not None:
        identity = table_identity(table, ledger)
        charge_request = ledger_request(ledger, identity, table.label, publish_plan, fixed is not None,
                                        budget, randomness, notes)
    streams = randomness.spawn(publish_plan.releases) if publish_plan.releases > 1 else [randomness]
    release_ids = [new_release_id(s) for s in streams]  # before any data-dependent draw
    levels = dict(fixed.levels) if fixed is not None else None
    samples = [count_release_sample(table, publish_plan.beta, s, levels) for s in streams]

    with contextlib.ExitStack() as stack:
        charge = None
        if ledger is not None:
            sample_ids = [ledger.identify(s.identity) for s in samples]  # repeats are fine
            charge = stack.enter_context(ledger.charge(identity, **charge_request,  # type: ignore[arg-type]
                                                       sample_ids=sample_ids))
        releases: list[SparkRelease] = []
        choices: list[SchemeChoice | None] = []
        facts: list[dict[str, Any]] = []
        for sample, release_id, stream in zip(samples, release_ids, streams):
            scheme, profile, choice = choose_recoding(sample.table, columns, publish_plan, fixed, stream)
            if fixed is None:
                applied = apply_counts(sample.table, scheme.levels, publish_plan.k)
            else:  # the executors already counted the classes of the fixed scheme
                applied = AppliedCounts.of(sample.table.codes, sample.table.counts, publish_plan.k)
            facts.append(release_facts(applied, scheme, columns, choice))
            certificate, parameters = certify_release(publish_plan, columns, scheme, profile, choice, release_id,
                                                      stream, ledger is not None)
            parameters["engine"] = "spark"
            published = published_only(applied)
            class_table, frame = release_of(table, scheme, published)
            releases.append(SparkRelease(
                rows=frame, certificate=certificate, algorithm="safe k-anonymization with sampling (Spark engine)",
                k=publish_plan.k, quasi_identifiers=tuple(columns), sensitive=None, recoding=scheme,
                applied=published, source=None, parameters=parameters, class_table=class_table))  # type: ignore[arg-type]
            choices.append(public_choice(choice))
        samples.clear()  # the samples' counts leave with this frame
        custodian = custodian_facts(table.n_rows, publish_plan, facts)
        if charge is not None:
            custodian["ledger"] = ledger_summary(ledger, charge, table.label, identity)  # type: ignore[arg-type]
            charge.record(custodian_report=custodian)
        if report_path is not None:
            write_custodian_report(report_path, custodian)
        certificate = checked_certificate(releases, facts, max_suppression, force)
        written: dict[str, Any] = {}
        if paths:  # the certificates say how the files hold their cells (fixed by the options)
            notes_of_files = [format_note(p, escape_formulas=escape_formulas) for p in paths]
            releases = [replace(r, certificate=r.certificate.with_format_notes(n))
                        for r, n in zip(releases, notes_of_files)]
            certificate = certificate.with_format_notes(notes_of_files[0])
            combined = None
            if len(paths) > 1:
                head, _, name = paths[0].rpartition("/")
                combined_name = name.rsplit(".", 1)[0].rsplit("-", 1)[0] + ".certificate.json"
                combined = (f"{head}/{combined_name}" if head else combined_name, certificate.to_json())
            written = write_releases(table.spark, [r.frame for r in releases],
                                     [r.certificate.to_json() for r in releases], paths, combined,
                                     escape_formulas=escape_formulas)
        if charge is not None:
            charge.record(written=written.get("tables", []), rows_published=[r.rows_published for r in releases],
                          engine="spark")
    if ledger is None:
        notes.append("no ledger: nothing records that these samples are used, nor limits further releases; "
                     "NOT fit for release")
    if randomness.seeded:
        notes.append("seeded run: reproducible for a fixed partitioning of the input, NOT fit for release "
                     "(an attacker who knows the seed knows the sample)")
    notes.append("Spark engine: the data's identity in the ledger is its multiset digest keyed with the "
                 "ledger's secret (crowdsafe.engines.spark.fingerprint), not the Polars engine's")
    return Publication(publish_plan, tuple(releases), certificate, tuple(choices), tuple(notes), written, custodian)


def publish_spark(data: Any, publish_plan: PublishPlan, *, master: str | None = None,
                  schema: Any = None, qi: Sequence[str] | None = None, sensitive: Any = None,
                  missing: Any = "keep", name: str | None = None, **options: Any) -> Publication:
    """Read ``data`` on the Spark session (the active one, else one on ``master`` /
    ``$CROWDSAFE_SPARK_MASTER``) and publish it (:func:`publish_table`)."""
    from crowdsafe.engines.spark.session import spark_session
    from crowdsafe.engines.spark.table import spark_table

    spark = spark_session(master)
    table = spark_table(spark, data, schema=schema, qi=qi, sensitive=sensitive, missing=missing, name=name)
    return publish_table(table, publish_plan, **options)
