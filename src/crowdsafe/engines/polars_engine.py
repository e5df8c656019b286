"""The Polars engine: every stage in this process, on Polars frames and NumPy arrays.

It implements :class:`~crowdsafe.engines.protocol.Engine` with the library's in-process code
paths: :func:`crowdsafe.data.load` reads, :func:`crowdsafe.sampling.sample_of` samples,
:mod:`crowdsafe.anonymize.counted` counts and applies, :mod:`crowdsafe.anonymize.release` writes,
:func:`crowdsafe.mechanisms.queries.answer_query` aggregates, :mod:`crowdsafe.perturb` runs α-β
and :mod:`crowdsafe.attacks` attacks.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from crowdsafe.data import Dataset, load
from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.anonymize.counted import AppliedCounts, CountedSample
    from crowdsafe.anonymize.plan import PlanRequest
    from crowdsafe.anonymize.publish import PublishPlan
    from crowdsafe.anonymize.published import PublishedScheme
    from crowdsafe.anonymize.recoding import GeneralizationScheme
    from crowdsafe.anonymize.release import Release
    from crowdsafe.attacks.intersection import IntersectionResult
    from crowdsafe.attacks.linkage import LinkageResult
    from crowdsafe.attacks.request import AttackRequest
    from crowdsafe.data.streamed_table import StreamedTable
    from crowdsafe.engines.streamed_publish import StreamedPublicationTable, StreamedSample
    from crowdsafe.engines.streamed_query import StreamedAggregate
    from crowdsafe.perturb.alpha_beta import Perturbation, PerturbRequest
    from crowdsafe.perturb.view import ViewOutput
    from crowdsafe.privacy import Certificate
    from crowdsafe.privacy.dgamma import AlphaBetaPlan
    from crowdsafe.privacy.ledger import Ledger
    from crowdsafe.randomness import Randomness


@dataclass(frozen=True)
class PolarsPublicationTable:
    """A Dataset prepared for the safe pipeline (:func:`~crowdsafe.anonymize.publish.prepare_dataset`):
    ``dataset`` with every published column a recoded quasi-identifier; ``given``: the table as
    read, whose fingerprint the ledger knows."""

    given: Dataset
    dataset: Dataset
    columns: list[str]
    notes: list[str]
    label: str

    @property
    def n_rows(self) -> int:
        return self.dataset.n_rows

    @property
    def domain(self) -> Dataset:
        """The prepared dataset holding every distinct value of the published columns."""
        return self.dataset

    @property
    def hierarchies(self) -> Mapping[str, Any]:
        return self.dataset.hierarchies

    def identity(self, ledger: Ledger) -> str:
        return ledger.identity_of(self.given)


class PolarsEngine:
    """The in-process engine (module docstring). ``master`` must be None: there is no cluster."""

    name = "polars"
    in_memory = True
    polars_identity = True
    folder_tables = False
    certificate_tags: Mapping[str, Any] = {}
    ledger_tags: Mapping[str, Any] = {}

    def __init__(self, master: str | None = None) -> None:
        self.master = master

    # -- read ------------------------------------------------------------------------------
    def read_table(self, data: Any, *, schema: Any = None, qi: Sequence[str] | None = None,
                   sensitive: Sequence[str] | str | None = None, missing: Any = "keep",
                   name: str | None = None) -> Dataset | StreamedTable:
        if self.master is not None:
            raise ParameterError("the spark_master parameter needs engine='spark'",
                                 parameter=("spark_master", "engine"))
        from crowdsafe.data.streamed_table import load_or_stream

        return load_or_stream(data, schema=schema, qi=qi, sensitive=sensitive, missing=missing)

    def read_plan_table(self, data: Any, *, schema: Any = None, qi: Sequence[str] | None = None,
                        sensitive: Sequence[str] | str | None = None, missing: Any = "keep") -> Dataset | StreamedTable:
        return self.read_table(data, schema=schema, qi=qi, sensitive=sensitive, missing=missing)

    def read_source(self, data: Any, *, schema: Any = None, missing: Any = "keep", name: str | None = None) -> Dataset:
        return load(data, schema=schema, missing=missing)

    def read_query_source(self, data: Any, *, schema: Any = None, missing: Any = "keep",
                          name: str | None = None) -> Dataset | StreamedTable:
        """:meth:`read_source`, or a file larger than EAGER_BYTES read batch by batch when it can be
        (:mod:`crowdsafe.engines.streamed_query`: the same answer)."""
        from crowdsafe.data.streamed_table import load_or_stream

        return load_or_stream(data, schema=schema, missing=missing)

    def frequency_table(self, data: Any, columns: Sequence[str]) -> Any:
        """The distinct tuples of ``columns`` with their counts (``count``), sorted. A CSV or
        Parquet file (or a folder of Parquet parts) is scanned lazily and reduced by Polars'
        streaming engine when it is larger than ``crowdsafe.data.streaming.EAGER_BYTES``, so a
        table larger than memory can be counted (:func:`crowdsafe.data.streaming.frequency_table`);
        anything else is loaded and counted in memory."""
        import polars as pl

        if isinstance(data, (str, os.PathLike)) and Path(data).exists():
            from crowdsafe.data.streaming import frequency_table

            return frequency_table(data, columns)
        frame = load(data).frame
        counted = frame.group_by(list(columns)).agg(pl.len().cast(pl.Int64).alias("count"))
        return counted.sort(list(columns), nulls_last=False)

    def source_dataset(self, source: Dataset | StreamedTable) -> Dataset:
        return _domain_of(source)

    def source_identity(self, source: Dataset | StreamedTable, ledger: Ledger) -> str:
        if not isinstance(source, Dataset):
            from crowdsafe.engines.streamed_publish import table_identity

            return table_identity(source, ledger)
        return ledger.identity_of(source)

    # -- publish -----------------------------------------------------------------------------
    def plan_publication(self, table: Dataset | StreamedTable, request: PlanRequest) -> PublishPlan:
        from crowdsafe.anonymize.publish import plan_for_dataset

        return plan_for_dataset(_domain_of(table), request)

    def prepare(self, table: Dataset | StreamedTable, publish_plan: PublishPlan, name: str | None
                ) -> tuple[PolarsPublicationTable | StreamedPublicationTable, GeneralizationScheme | None]:
        from crowdsafe.anonymize.publish import (
            candidate_count,
            check_public_domains,
            prepare_dataset,
        )
        from crowdsafe.selection.mechanism import fixed_scheme

        given, table = table, _domain_of(table)
        dataset, columns, notes = prepare_dataset(table, publish_plan.columns)
        fixed = fixed_scheme(dataset, columns, publish_plan.scheme) if publish_plan.scheme is not None else None
        if fixed is None:
            candidate_count(dataset, columns, publish_plan.objective, publish_plan.target)  # a target it lacks
            check_public_domains(table, columns, publish_plan.objective)
        label = name or dataset.name or "data"
        if not isinstance(given, Dataset):
            from crowdsafe.engines.streamed_publish import StreamedPublicationTable

            return StreamedPublicationTable(given, dataset, columns, notes, label), fixed
        return PolarsPublicationTable(table, dataset, columns, notes, label), fixed

    def release_paths(self, out: str | os.PathLike[str] | None, releases: int) -> list[Path]:
        from crowdsafe.anonymize.publish import release_paths
        from crowdsafe.anonymize.release import TABLE_SUFFIXES
        from crowdsafe.files import check_output_path

        if out is None:
            return []
        paths = release_paths(out, releases)
        for path in paths:
            check_output_path(path, TABLE_SUFFIXES)
        return paths

    def sample(self, table: PolarsPublicationTable | StreamedPublicationTable, beta: float, stream: Randomness,
               levels: Mapping[str, int] | None) -> Dataset | StreamedSample:
        from crowdsafe.sampling import sample_of

        if not isinstance(table, PolarsPublicationTable):  # streamed: the mask, drawn as sample_of draws it
            from crowdsafe.engines.streamed_publish import StreamedSample, draw_mask

            return StreamedSample(table, draw_mask(table.n_rows, beta, stream))
        return sample_of(table.dataset, beta, stream)

    def sample_identity(self, sample: Dataset | StreamedSample, ledger: Ledger) -> str:
        if not isinstance(sample, Dataset):
            return sample.identity(ledger)
        return sample.fingerprint(key=ledger.identity_key)

    def count(self, table: PolarsPublicationTable | StreamedPublicationTable, sample: Dataset | StreamedSample
              ) -> CountedSample:
        from crowdsafe.anonymize.publish import count_sample

        if not isinstance(sample, Dataset):
            from crowdsafe.engines.streamed_publish import count_streamed

            return count_streamed(sample, table.columns)
        return count_sample(sample, table.columns)

    def count_table(self, table: PolarsPublicationTable | StreamedPublicationTable) -> CountedSample:
        from crowdsafe.anonymize.publish import count_sample

        if not isinstance(table, PolarsPublicationTable):  # streamed: every row, one pass
            from crowdsafe.engines.streamed_publish import StreamedSample, count_streamed

            return count_streamed(StreamedSample(table, None), table.columns, label="counting the table")
        return count_sample(table.dataset, table.columns)

    def apply(self, counts: CountedSample, scheme: GeneralizationScheme, k: int, fixed: bool) -> AppliedCounts:
        from crowdsafe.anonymize.publish import apply_recoding

        return apply_recoding(counts, scheme, k)

    def materialise(self, table: PolarsPublicationTable, scheme: PublishedScheme, published: AppliedCounts,
                    certificate: Certificate, parameters: dict[str, Any], k: int) -> Release:
        from crowdsafe.anonymize.counted import published_frame
        from crowdsafe.anonymize.release import Release

        return Release(
            rows=functools.partial(published_frame, published, scheme, tuple(table.columns)),
            certificate=certificate, algorithm="safe k-anonymization with sampling",
            k=k, quasi_identifiers=tuple(table.columns), sensitive=None, recoding=scheme,
            applied=published, source=None, parameters=parameters,
        )

    def write(self, table: PolarsPublicationTable, releases: Sequence[Release], certificate: Certificate,
              paths: Sequence[Path], *, escape_formulas: bool) -> dict[str, Any]:
        return write_releases(releases, certificate, paths, escape_formulas=escape_formulas)

    def publication_notes(self, seeded: bool) -> list[str]:
        return (["seeded run: reproducible, NOT fit for release (an attacker who knows the seed knows the sample)"]
                if seeded else [])

    # -- DP queries ----------------------------------------------------------------------------
    def aggregate(self, source: Dataset | StreamedTable) -> StreamedAggregate | None:
        if not isinstance(source, Dataset):
            from crowdsafe.engines.streamed_query import StreamedAggregate

            return StreamedAggregate(source)
        return None  # answer_query aggregates the Dataset in process

    # -- α-β perturbation ----------------------------------------------------------------------
    def check_perturbation(self, out: Any, ledger: Any) -> None:
        from crowdsafe.perturb import check_view_path

        if out is not None:
            check_view_path(out)

    def plan_perturbation(self, source: Dataset, request: PerturbRequest) -> AlphaBetaPlan:
        from crowdsafe.perturb.alpha_beta import plan_public

        return plan_public(source, request)

    def perturb(self, source: Dataset, request: PerturbRequest, *, randomness: Randomness | int | None,
                ledger: Ledger | None, output: ViewOutput) -> Perturbation:
        from crowdsafe.perturb import perturb as perturb_dataset

        return perturb_dataset(source, request, randomness=randomness, ledger=ledger)

    def write_view(self, result: Perturbation, output: ViewOutput) -> None:
        if output.out is not None:
            # force: perturb's guard checked these paths, with the caller's force, before the charge
            result.view.write(output.out, output.certificate, escape_formulas=output.escape_formulas, force=True)

    # -- attacks -------------------------------------------------------------------------------
    def check_attack(self, kind: str, sensitive: str | None) -> None:
        return None  # both attacks run here

    def check_attack_out(self, out: Any) -> None:
        return None  # a .csv or .parquet file: the writer's own checks

    def attack_targets(self, targets: Any, *, schema: Any = None) -> Dataset:
        return load(targets, schema=schema).outside_as_missing()  # a value no hierarchy lists: as publish shows it

    def attack_releases(self, releases: Sequence[Any], targets: Dataset) -> list[Any]:
        from crowdsafe.attacks.releases import as_attacked

        return [as_attacked(r, f"R{j + 1}") for j, r in enumerate(releases)]

    def mark_suppressed(self, releases: Sequence[Any], qi: Sequence[str], tokens: Sequence[str]) -> list[Any]:
        from crowdsafe.attacks.releases import mark_suppressed

        return [mark_suppressed(r, qi, tokens) for r in releases]

    def intersection_attack(self, releases: Sequence[Any], targets: Dataset, request: AttackRequest
                            ) -> IntersectionResult:
        from crowdsafe.attacks import intersection_attack

        return intersection_attack(releases, targets.frame, request.qi, cast(str, request.sensitive),
                                   hierarchies=targets.hierarchies, location=request.location, levels=request.levels,
                                   truth_id=request.truth_id)

    def linkage_attack(self, release: Any, targets: Dataset, request: AttackRequest) -> LinkageResult:
        from crowdsafe.attacks import linkage_attack

        return linkage_attack(release.frame, targets.frame, request.qi, hierarchies=targets.hierarchies,
                              truth_id=request.truth_id)

    def write_attack_targets(self, targets: Any, out: Path, *, escape_formulas: bool) -> str:
        from crowdsafe.csv_safety import write_csv
        from crowdsafe.files import PRIVATE, atomic_paths
        from crowdsafe.output_guard import replaced_first

        if out.suffix.lower() not in (".csv", ".parquet"):
            raise ParameterError(f"cannot tell the output format of {out}: use a .csv or .parquet file name")
        # custodian-only (each target's true value scored): the owner's alone, created 0600 as the ledger;
        # a release replaced: its sidecars removed first
        with atomic_paths([out], remove_first=replaced_first(out), mode=PRIVATE) as (tmp,):
            if out.suffix.lower() == ".csv":
                write_csv(targets, tmp, escape_formulas=escape_formulas)
            else:
                targets.write_parquet(tmp)
        return str(out)


def write_releases(releases: Sequence[Release], certificate: Certificate, paths: Sequence[Path], *,
                   escape_formulas: bool = True) -> dict[str, Any]:
    """Write every table with its certificate (and, for several, the composed certificate at
    ``<stem>.certificate.json`` of the first name without its number), all or nothing. CSV cells
    are formula-safe unless ``escape_formulas`` is False; every certificate written carries the
    format note of its file (:func:`crowdsafe.csv_safety.format_note`)."""
    from crowdsafe.anonymize.counted import AppliedCounts
    from crowdsafe.anonymize.release import certificate_path, replaced_first, write_classes_csv
    from crowdsafe.csv_safety import format_note, write_csv
    from crowdsafe.files import atomic_paths

    tables = [str(p) for p in paths]
    certificates = [str(certificate_path(p)) for p in paths]
    targets: list[Path] = [place for p in paths for place in (p, certificate_path(p))]
    combined = None
    if len(releases) > 1:
        first = paths[0]
        combined = first.with_name(first.stem.rsplit("-", 1)[0] + ".certificate.json")
        targets.append(combined)
    removed = replaced_first(paths) + ([combined] if combined is not None else [])
    # every file complete and on disk first, then all renamed into place at once (files.atomic_paths)
    with atomic_paths(targets, remove_first=removed) as staged:
        for number, (release, path) in enumerate(zip(releases, paths)):
            table_tmp, certificate_tmp = staged[2 * number], staged[2 * number + 1]
            if path.suffix.lower() == ".csv" and isinstance(release.applied, AppliedCounts):
                # counts come from a full-domain recoding: one line per class, repeated
                write_classes_csv(release.published_classes, release.applied.published_class_sizes, table_tmp,
                                  escape_formulas=escape_formulas, lines=release.class_lines(escape_formulas))
            elif path.suffix.lower() == ".csv":
                write_csv(release.frame, table_tmp, escape_formulas=escape_formulas)
            else:
                release.frame.write_parquet(table_tmp)
            note = format_note(path, escape_formulas=escape_formulas)
            certificate_tmp.write_text(release.certificate.with_format_notes(note).to_json(), encoding="utf-8")
        if combined is not None:
            note = format_note(paths[0], escape_formulas=escape_formulas)
            staged[-1].write_text(certificate.with_format_notes(note).to_json(), encoding="utf-8")
    return {"tables": tables, "certificates": certificates, "combined_certificate": str(combined) if combined else None}


def _domain_of(table: Any) -> Dataset:
    """The Dataset whose schema and hierarchies a table read for publishing has: itself, or a
    streamed table's domain (:mod:`crowdsafe.data.streamed_table`)."""
    return table if isinstance(table, Dataset) else table.domain


__all__ = ["PolarsEngine", "PolarsPublicationTable", "write_releases"]
