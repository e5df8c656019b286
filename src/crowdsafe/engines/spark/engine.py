"""The Spark engine: the per-row stages on Apache Spark, everything after the reduction to
frequency tables on the driver (:mod:`crowdsafe.engines`).

It implements :class:`~crowdsafe.engines.protocol.Engine` with the modules of this package:
:mod:`.table` and :mod:`.typed_table` read (and count the table), :mod:`.sampling` counts and samples,
:mod:`.write` materialises and writes the published classes, :mod:`.queries` aggregates,
:mod:`.alpha_beta` runs α-β and :mod:`.attacks` builds the attack's tables. Creating the engine
imports no PySpark; its first operation starts (or joins) the session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.anonymize.counted import AppliedCounts, CountedSample
    from crowdsafe.anonymize.plan import PlanRequest
    from crowdsafe.anonymize.publish import PublishPlan
    from crowdsafe.anonymize.published import PublishedScheme
    from crowdsafe.anonymize.recoding import GeneralizationScheme
    from crowdsafe.anonymize.release import Release
    from crowdsafe.attacks.linkage import LinkageResult
    from crowdsafe.attacks.request import AttackRequest
    from crowdsafe.data import Dataset
    from crowdsafe.engines.spark.attacks import SparkIntersectionResult
    from crowdsafe.engines.spark.publish import SampleCounts
    from crowdsafe.engines.spark.table import SparkTable
    from crowdsafe.engines.spark.typed_table import TypedTable
    from crowdsafe.perturb.alpha_beta import Perturbation, PerturbRequest
    from crowdsafe.perturb.view import ViewOutput
    from crowdsafe.privacy import Certificate
    from crowdsafe.privacy.dgamma import AlphaBetaPlan
    from crowdsafe.privacy.ledger import Ledger
    from crowdsafe.randomness import Randomness


class SparkEngine:
    """The Spark engine (module docstring), on the active session, else one on ``master`` /
    ``$CROWDSAFE_SPARK_MASTER``."""

    name = "spark"
    in_memory = False
    polars_identity = False  # its own multiset digest (docs/spark.md, "Identity and the ledger")
    folder_tables = True
    certificate_tags: Mapping[str, Any] = {"engine": "spark"}
    ledger_tags: Mapping[str, Any] = {"engine": "spark"}

    def __init__(self, master: str | None = None) -> None:
        self.master = master

    def session(self) -> Any:
        from crowdsafe.engines.spark.session import spark_session

        return spark_session(self.master)

    # -- read ------------------------------------------------------------------------------
    def read_table(self, data: Any, *, schema: Any = None, qi: Sequence[str] | None = None,
                   sensitive: Sequence[str] | str | None = None, missing: Any = "keep",
                   name: str | None = None) -> SparkTable:
        from crowdsafe.engines.spark.table import spark_table

        return spark_table(self.session(), data, schema=schema, qi=qi, sensitive=sensitive, missing=missing, name=name)

    def read_plan_table(self, data: Any, *, schema: Any = None, qi: Sequence[str] | None = None,
                        sensitive: Sequence[str] | str | None = None, missing: Any = "keep") -> SparkTable:
        from crowdsafe.engines.spark.table import spark_table

        return spark_table(self.session(), data, schema=schema, qi=qi, sensitive=sensitive, missing=missing,
                           count=False)

    def read_source(self, data: Any, *, schema: Any = None, missing: Any = "keep",
                    name: str | None = None) -> TypedTable:
        from crowdsafe.engines.spark.queries import spark_source

        return spark_source(data, schema=schema, missing=missing, master=self.master, name=name)

    read_query_source = read_source  # a DP query reads its table as any other job does on Spark

    def source_dataset(self, source: TypedTable) -> Dataset:
        return source.dataset

    def source_identity(self, source: TypedTable, ledger: Ledger) -> str:
        return ledger.identify(source.fingerprint())

    # -- publish -----------------------------------------------------------------------------
    def plan_publication(self, table: SparkTable, request: PlanRequest) -> PublishPlan:
        """The Polars engine's plan for the same table (:func:`~crowdsafe.anonymize.publish.plan_for_dataset`
        on the table's domain: the lattice sized from its hierarchies' heights, the default
        objective from its declared hierarchies, and the whole table's counts for the selection
        where the planner caps ε1). A request ``prepare`` refuses on Spark (``columns``, the
        entropy objective) gets the plan that reads no hierarchy, so the refusal is the engine's."""
        from crowdsafe.anonymize.publish import plan_for_dataset, plan_publication

        if request.columns is not None or (request.scheme is None and request.objective == "entropy"):
            return plan_publication(request)
        return plan_for_dataset(table.domain, request)

    def prepare(self, table: SparkTable, publish_plan: PublishPlan, name: str | None
                ) -> tuple[SparkTable, GeneralizationScheme | None]:
        from crowdsafe.anonymize.publish import candidate_count, check_public_domains
        from crowdsafe.selection.mechanism import fixed_scheme

        if publish_plan.scheme is None and publish_plan.objective == "entropy":
            raise ParameterError("the entropy objective is not available with engine='spark' yet (its sensitivity "
                                 "needs every column's public domain); choose another value of the objective "
                                 "parameter (nothing was charged)", parameter=("engine", "objective"))
        if publish_plan.columns is not None:
            raise ParameterError("the columns parameter is not available with engine='spark' yet; choose the published "
                                 "columns with the qi parameter and the sensitive parameter (nothing was charged)",
                                 parameter=("columns", "engine", "qi", "sensitive"))
        columns = table.columns
        fixed = fixed_scheme(table.domain, columns, publish_plan.scheme) if publish_plan.scheme is not None else None
        if fixed is None:
            # the target is published; marginals has a declared hierarchy for every column (both
            # from the schema, refused before anything is charged, as on the Polars engine)
            candidate_count(table.domain, columns, publish_plan.objective, publish_plan.target)
            check_public_domains(table.domain, columns, publish_plan.objective)
        return (replace(table, label=name) if name else table), fixed

    def release_paths(self, out: str | os.PathLike[str] | None, releases: int) -> list[str]:
        from crowdsafe.engines.spark.publish import spark_paths

        return spark_paths(str(out), releases) if out is not None else []

    def sample(self, table: SparkTable, beta: float, stream: Randomness,
               levels: Mapping[str, int] | None) -> SampleCounts:
        from crowdsafe.engines.spark.publish import count_release_sample

        return count_release_sample(table, beta, stream, None if levels is None else dict(levels))

    def sample_identity(self, sample: SampleCounts, ledger: Ledger) -> str:
        return ledger.identify(sample.identity)

    def count(self, table: SparkTable, sample: SampleCounts) -> CountedSample:
        return sample.table  # the sample is drawn as counts

    def count_table(self, table: SparkTable) -> CountedSample:
        import numpy as np

        from crowdsafe.anonymize.counted import CountedSample
        from crowdsafe.engines.spark.publish import counted_table

        counted = counted_table(table)  # counted on Spark when the table was read (sampling.count_table)
        hierarchies = table.domain.hierarchies
        return CountedSample(tuple(table.columns), counted.tuples(np.arange(counted.n_cells)), counted.counts,
                             {c: hierarchies[c] for c in table.columns})

    def apply(self, counts: CountedSample, scheme: GeneralizationScheme, k: int, fixed: bool) -> AppliedCounts:
        from crowdsafe.anonymize.counted import AppliedCounts, apply_counts

        if fixed:  # the sample was counted by the classes of the fixed scheme
            return AppliedCounts.of(counts.codes, counts.counts, k)
        return apply_counts(counts, scheme.levels, k)

    def materialise(self, table: SparkTable, scheme: PublishedScheme, published: AppliedCounts,
                    certificate: Certificate, parameters: dict[str, Any], k: int) -> Release:
        from crowdsafe.engines.spark.publish import SparkRelease, release_of

        class_table, frame = release_of(table, scheme, published)
        return SparkRelease(
            rows=frame, certificate=certificate, algorithm="safe k-anonymization with sampling (Spark engine)",
            k=k, quasi_identifiers=tuple(table.columns), sensitive=None, recoding=scheme,
            applied=published, source=None, parameters=parameters, class_table=class_table)

    def write(self, table: SparkTable, releases: Sequence[Release], certificate: Certificate,
              paths: Sequence[str], *, escape_formulas: bool) -> dict[str, Any]:
        from crowdsafe.csv_safety import format_note
        from crowdsafe.engines.spark.publish import release_classes
        from crowdsafe.engines.spark.write import write_releases

        notes = [format_note(p, escape_formulas=escape_formulas) for p in paths]  # each file's, as the driver set
        combined = None
        if len(paths) > 1:
            head, _, name = paths[0].rpartition("/")
            combined_name = name.rsplit(".", 1)[0].rsplit("-", 1)[0] + ".certificate.json"
            combined = (f"{head}/{combined_name}" if head else combined_name,
                        certificate.with_format_notes(notes[0]).to_json())
        return write_releases(table.spark, [r.frame for r in releases],
                              [r.certificate.with_format_notes(n).to_json() for r, n in zip(releases, notes)],
                              list(paths), combined, escape_formulas=escape_formulas,
                              classes=[release_classes(r) for r in releases])

    def publication_notes(self, seeded: bool) -> list[str]:
        notes = []
        if seeded:
            notes.append("seeded run: reproducible, NOT fit for release "
                         "(an attacker who knows the seed knows the sample)")
        notes.append("Spark engine: the data's identity in the ledger is its multiset digest keyed with the "
                     "ledger's secret (crowdsafe.engines.spark.fingerprint), not the Polars engine's")
        return notes

    # -- DP queries ----------------------------------------------------------------------------
    def aggregate(self, source: TypedTable) -> Any:
        from crowdsafe.engines.spark.queries import SparkAggregate

        return SparkAggregate(source)

    # -- α-β perturbation ----------------------------------------------------------------------
    def check_perturbation(self, out: Any, ledger: Any) -> None:
        if out is None:
            raise ParameterError("the spark engine writes the view as it draws it: give out=VIEW.parquet",
                                 parameter="out")
        if ledger is not None:
            raise ParameterError(
                "the spark engine does not charge a budget ledger yet: use engine='polars' with a ledger, or run "
                "it without one (ledger=None; nothing then records the view)", parameter=("engine", "ledger"))

    def plan_perturbation(self, source: TypedTable, request: PerturbRequest) -> AlphaBetaPlan:
        from crowdsafe.engines.spark.alpha_beta import plan_for_spark, prepare_spark

        prepared = prepare_spark(source, request)
        try:
            return plan_for_spark(prepared, request.target)
        finally:
            prepared.release()

    def perturb(self, source: TypedTable, request: PerturbRequest, *, randomness: Randomness | int | None,
                ledger: Ledger | None, output: ViewOutput) -> Perturbation:
        from crowdsafe.engines.spark.alpha_beta import perturb_spark

        assert output.out is not None  # check_perturbation refused a run without one
        return perturb_spark(source, request, out=output.out, certificate=output.certificate, randomness=randomness)

    def write_view(self, result: Perturbation, output: ViewOutput) -> None:
        return None  # perturb_spark wrote the view and its certificate as it drew it

    # -- attacks -------------------------------------------------------------------------------
    def check_attack(self, kind: str, sensitive: str | None) -> None:
        if kind != "intersection" or sensitive is None:
            raise ParameterError("the spark engine runs the intersection attack (with the sensitive parameter); "
                                 "run the linkage attack with engine='polars'", parameter=("sensitive", "engine"))

    def attack_targets(self, targets: Any, *, schema: Any = None) -> TypedTable:
        return self.read_source(targets, schema=schema)

    def attack_releases(self, releases: Sequence[Any], targets: TypedTable) -> list[Any]:
        from crowdsafe.engines.spark.attacks import read_spark_release

        spark = targets.frame.sparkSession
        return [read_spark_release(spark, r) for r in releases]

    def mark_suppressed(self, releases: Sequence[Any], qi: Sequence[str], tokens: Sequence[str]) -> list[Any]:
        from crowdsafe.engines.spark.attacks import mark_suppressed_spark

        return [mark_suppressed_spark(r, qi, tokens) for r in releases]

    def intersection_attack(self, releases: Sequence[Any], targets: TypedTable, request: AttackRequest
                            ) -> SparkIntersectionResult:
        from crowdsafe.engines.spark.attacks import intersection_attack_spark

        return intersection_attack_spark(releases, targets.frame, request.qi, cast(str, request.sensitive),
                                         location=cast(str, request.location), levels=request.levels,
                                         truth_id=request.truth_id)

    def linkage_attack(self, release: Any, targets: TypedTable, request: AttackRequest) -> LinkageResult:
        raise ParameterError("the spark engine runs the intersection attack (with the sensitive parameter); "
                             "run the linkage attack with engine='polars'", parameter=("sensitive", "engine"))

    def check_attack_out(self, out: Any) -> None:
        if Path(out).suffix.lower() != ".parquet":
            raise ParameterError(
                f"with engine='spark' the per-target metrics are written as Parquet: name {out} *.parquet",
                parameter="engine")

    def write_attack_targets(self, targets: Any, out: Any, *, escape_formulas: bool) -> str:
        from crowdsafe.engines.spark.alpha_beta import write_parquet_once

        self.check_attack_out(out)
        write_parquet_once(targets, str(out), private=True)  # custodian-only: 0700 folder, 0600 files
        return str(out)


__all__ = ["SparkEngine"]
