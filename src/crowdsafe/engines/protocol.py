"""The engine interface: what the drivers (:mod:`crowdsafe.drivers`) ask of an engine.

An engine holds the per-row stages: it reads a table, draws the Bernoulli sample, counts the
sample's classes and materialises the published ones, writes the files, computes the exact
aggregates a DP query adds noise to, runs the α-β stages and builds the attack's tables.
Everything that decides what may leave a run (the plan, the ledger charge, the choice of the
recoding, the certificate, the public/custodian split) lives in the drivers and is the same
code for every engine, so a guarantee proved once holds on every engine.

The operations take and return engine-specific handles (a Polars :class:`~crowdsafe.data.Dataset`,
a Spark table); the driver never looks inside them, except through :class:`PublicationTable`.
A new engine is one module implementing :class:`Engine` and one line in
:mod:`crowdsafe.engines.registry`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

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
    from crowdsafe.data import Dataset
    from crowdsafe.engines.spark.attacks import SparkIntersectionResult
    from crowdsafe.perturb.alpha_beta import Perturbation, PerturbRequest
    from crowdsafe.perturb.view import ViewOutput
    from crowdsafe.privacy import Certificate
    from crowdsafe.privacy.dgamma import AlphaBetaPlan
    from crowdsafe.privacy.ledger import Ledger
    from crowdsafe.randomness import Randomness


@runtime_checkable
class PublicationTable(Protocol):
    """A table prepared for the safe pipeline: the published ``columns`` (all recoded), their
    ``hierarchies``, the ``label`` the ledger knows it by, the schema ``notes`` and its size
    (custodian-only). ``identity(ledger)``: the table's digest keyed with the ledger's secret.
    ``domain``: a Dataset holding every distinct value of the published columns, with their
    prepared hierarchies (the table itself, or one row per distinct value)."""

    @property
    def columns(self) -> list[str]: ...

    @property
    def domain(self) -> Dataset: ...

    @property
    def label(self) -> str: ...

    @property
    def notes(self) -> list[str]: ...

    @property
    def n_rows(self) -> int: ...

    def identity(self, ledger: Ledger) -> str: ...


@runtime_checkable
class Engine(Protocol):
    """The operations of one engine (module docstring). ``name`` is its registry name;
    ``in_memory``: the engine reads a table into this process as a :class:`~crowdsafe.data.Dataset`
    (its hierarchies and columns are at hand before any plan, as the plan preview per column set
    needs), rather than leaving it where a cluster reads it. ``polars_identity``: the engine names a
    table in the ledger by the Polars engine's identity, the one ``set_budget`` (``crowdsafe ledger
    init``) registers. ``folder_tables``: it writes a table as a folder of part files."""

    name: str
    in_memory: bool
    polars_identity: bool
    folder_tables: bool

    # -- read ------------------------------------------------------------------------------
    def read_table(self, data: Any, *, schema: Any = None, qi: Sequence[str] | None = None,
                   sensitive: Sequence[str] | str | None = None, missing: Any = "keep",
                   name: str | None = None) -> Any:
        """The table the safe pipeline publishes (the roles applied), before preparation."""
        ...

    def read_plan_table(self, data: Any, *, schema: Any = None, qi: Sequence[str] | None = None,
                        sensitive: Sequence[str] | str | None = None, missing: Any = "keep") -> Any:
        """The table as :meth:`read_table` reads it, as far as :meth:`plan_publication` needs it
        (``publish --plan-only``): its schema, hierarchies and row count; it need not be publishable."""
        ...

    def read_source(self, data: Any, *, schema: Any = None, missing: Any = "keep", name: str | None = None) -> Any:
        """A typed table for queries, perturbation and attacks."""
        ...

    def read_query_source(self, data: Any, *, schema: Any = None, missing: Any = "keep",
                          name: str | None = None) -> Any:
        """The typed table a DP query reads (:meth:`read_source`, or a handle the engine's
        :meth:`source_dataset`, :meth:`source_identity` and :meth:`aggregate` take, such as a
        file read batch by batch)."""
        ...

    def source_dataset(self, source: Any) -> Dataset:
        """The Dataset (schema, hierarchies; on Spark its frame is empty) of a source."""
        ...

    def source_identity(self, source: Any, ledger: Ledger) -> str:
        """A source's identity in ``ledger`` (its digest keyed with the ledger's secret)."""
        ...

    # -- publish: the per-row stages of the safe pipeline -----------------------------------
    def plan_publication(self, table: Any, request: PlanRequest) -> PublishPlan:
        """The plan ``request`` asks for, for ``table`` (public: from its hierarchies' heights at
        most, :func:`~crowdsafe.anonymize.plan.plan_publication`)."""
        ...

    def prepare(self, table: Any, publish_plan: PublishPlan, name: str | None
                ) -> tuple[PublicationTable, GeneralizationScheme | None]:
        """The published columns and the fixed scheme (or None), refusing before any charge what
        the schema, the hierarchies and the plan do not allow."""
        ...

    def release_paths(self, out: str | os.PathLike[str] | None, releases: int) -> list[Any]:
        """The table paths of ``releases`` releases written at ``out`` (checked writable)."""
        ...

    def sample(self, table: Any, beta: float, stream: Randomness,
               levels: Mapping[str, int] | None) -> Any:
        """Sample_β: each row kept independently with probability β, drawn from ``stream``.
        ``levels``: a fixed scheme's levels (an engine may count the classes at them)."""
        ...

    def sample_identity(self, sample: Any, ledger: Ledger) -> str:
        """The sample's identity in ``ledger`` (keyed digest)."""
        ...

    def count(self, table: Any, sample: Any) -> CountedSample:
        """The sample's frequency table over the published columns."""
        ...

    def count_table(self, table: Any) -> CountedSample:
        """The whole table's frequency table over the published columns, for a plan that chooses
        the scheme on the table (``PublishPlan.selection_source``); an engine whose plans never do
        refuses it."""
        ...

    def apply(self, counts: CountedSample, scheme: GeneralizationScheme, k: int, fixed: bool) -> AppliedCounts:
        """Apply(g, S, k): the classes at ``scheme`` and suppression below k."""
        ...

    def materialise(self, table: Any, scheme: PublishedScheme, published: AppliedCounts,
                    certificate: Certificate, parameters: dict[str, Any], k: int) -> Release:
        """The release of the published classes (its rows built lazily)."""
        ...

    def write(self, table: Any, releases: Sequence[Release], certificate: Certificate,
              paths: Sequence[Any], *, escape_formulas: bool) -> dict[str, Any]:
        """Write every table with its certificate (and the composed one for several), atomically;
        each certificate written carries its file's format note."""
        ...

    #: engine-specific entries of a release's certificate parameters and of the ledger record
    certificate_tags: Mapping[str, Any]
    ledger_tags: Mapping[str, Any]

    def publication_notes(self, seeded: bool) -> list[str]:
        """The engine's notes closing a publication (seeded runs, identities)."""
        ...

    # -- DP queries ----------------------------------------------------------------------------
    def aggregate(self, source: Any) -> Any:
        """The exact aggregation a query adds noise to, or None for the in-process one
        (:func:`crowdsafe.mechanisms.queries.answer_query`'s ``aggregate``)."""
        ...

    # -- α-β perturbation ----------------------------------------------------------------------
    def check_perturbation(self, out: Any, ledger: Any) -> None:
        """Refuse, before the data is read, a view path or ledger the engine cannot honour."""
        ...

    def plan_perturbation(self, source: Any, request: PerturbRequest) -> AlphaBetaPlan:
        """The α-β plan for ``source`` (:func:`crowdsafe.api.plan_perturbation`)."""
        ...

    def perturb(self, source: Any, request: PerturbRequest, *, randomness: Randomness | int | None,
                ledger: Ledger | None, output: ViewOutput) -> Perturbation:
        """Run the α-β algorithm for ``request`` (an engine that writes while drawing writes to
        ``output``)."""
        ...

    def write_view(self, result: Perturbation, output: ViewOutput) -> None:
        """Write the view and its certificate (an engine that wrote while drawing does nothing)."""
        ...

    # -- attacks -------------------------------------------------------------------------------
    def check_attack(self, kind: str, sensitive: str | None) -> None:
        """Refuse, before anything is read, an attack the engine does not run."""
        ...

    def check_attack_out(self, out: Any) -> None:
        """Refuse, before anything is read, a path for the per-target table the engine cannot write."""
        ...

    def attack_targets(self, targets: Any, *, schema: Any = None) -> Any:
        """The attacker's targets table."""
        ...

    def attack_releases(self, releases: Sequence[Any], targets: Any) -> list[Any]:
        """The attacked releases, every column as published."""
        ...

    def mark_suppressed(self, releases: Sequence[Any], qi: Sequence[str], tokens: Sequence[str]) -> list[Any]:
        """The attacked releases with quasi-identifier cells equal to one of ``tokens`` read as
        ``*`` (:func:`crowdsafe.attacks.releases.mark_suppressed`)."""
        ...

    def intersection_attack(self, releases: Sequence[Any], targets: Any, request: AttackRequest
                            ) -> IntersectionResult | SparkIntersectionResult:
        """The composition attack (:mod:`crowdsafe.attacks.intersection`); ``request.sensitive``
        is set (the driver refuses None)."""
        ...

    def linkage_attack(self, release: Any, targets: Any, request: AttackRequest) -> LinkageResult:
        """Sweeney's linkage attack of one release (:mod:`crowdsafe.attacks.linkage`)."""
        ...

    def write_attack_targets(self, targets: Any, out: Path, *, escape_formulas: bool) -> str:
        """Write an attack's per-target metrics (the engine's frame) to ``out``, atomically and
        readable by its owner only: a custodian-only file (``0600``; a Spark folder ``0700``)."""
        ...


__all__ = ["Engine", "PublicationTable"]
