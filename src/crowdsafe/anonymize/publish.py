"""The safe pipeline: sampling + safe k-anonymization = (ε, δ)-differential privacy.

``release = Apply(Am(S), S, k)`` with ``S = Sample_β(D)`` (Li, Qardaji and Su 2012, "Provably
private data anonymization: or, k-anonymity meets differential privacy"):

1. **plan** (:func:`plan_publication`, :mod:`crowdsafe.anonymize.plan`): from the target (ε, δ),
   fill in what the user did not fix: ε1 from the lattice's size when the scheme is chosen from the
   data (:func:`~crowdsafe.anonymize.plan.planned_epsilon1`; 0 for a fixed scheme), β from
   :func:`~crowdsafe.anonymize.plan.best_rate`, the smallest k with d(k, β, ε − ε1) ≤ δ
   (:func:`crowdsafe.privacy.plan`);
2. **sample** (:mod:`crowdsafe.sampling`): keep each row independently with probability β, from
   the secure source;
3. **choose g**: a fixed scheme (strongly safe, Theorem 5) or the exponential mechanism over the
   generalization lattice, on the sample (ε1-safe, Theorem 6; :mod:`.selection`);
4. **apply**: recode the sample with g, suppress every output tuple held by fewer than k rows;
5. **certify** (:func:`crowdsafe.privacy.certify_k_anonymization`): (β, ε, δ)-DPS, hence
   (ε, δ)-DP; several releases on fresh samples compose (:func:`compose_certificates`).

This module holds the steps; the sequence that runs them (plan → ledger charge → run →
certificate → write), the same for every engine, is :func:`crowdsafe.drivers.publish.run_publication`.
The ledger is charged (kind ``dps-release``) after the samples are drawn and before anything
is computed from them. The ledger knows the dataset and each sample by digests keyed with its
secret ``identity_key``; a sample may later be refused as an input. What leaves the run is split
in two (docs/publish.md, "What a publication reveals"): the public part (the release, its
certificate, :meth:`Publication.summary`) holds only the plan, fixed before the data is read,
and DP outputs (the chosen scheme and what is computed from the released rows); the exact facts
(sample sizes, suppression, utility against the sample, input rows, ledger identities) are
custodian-only (:meth:`Publication.custodian_report`, the ledger entry, an optional file). The
samples themselves never leave the run.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast, overload

import numpy as np
import polars as pl

from crowdsafe.anonymize.counted import AppliedCounts, CountedSample, apply_counts, counted
from crowdsafe.anonymize.plan import PlanRequest, PublishPlan, check_candidates, plan_publication
from crowdsafe.anonymize.published import PublishedScheme
from crowdsafe.anonymize.recoding import GeneralizationScheme, with_flat_hierarchies
from crowdsafe.anonymize.release import TABLE_SUFFIXES, Release
from crowdsafe.data import Dataset, unicode_forms
from crowdsafe.data.identifiers import name_warnings
from crowdsafe.errors import EMPTY_TABLE, HierarchyError, InputError, ParameterError
from crowdsafe.mechanisms.contribution import refuse_person_rows
from crowdsafe.privacy import Certificate, RecodingProfile, SamplingProfile, certify_k_anonymization
from crowdsafe.privacy.certificate import ledger_accounting
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness
from crowdsafe.selection.mechanism import SchemeChoice, choose_scheme

DEFAULT_MAX_SUPPRESSION = 0.90


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How a publication is carried out and written once its plan is fixed
    (:func:`crowdsafe.drivers.publish.run_publication`): fixed before the data is read, none
    changes the guarantee. Each is checked before the ledger is charged; none decides whether or
    what is written from the data (a release is written whatever it suppresses).

    - ``name``: the dataset's name in the ledger and the notes (None: its file or bundled name);
    - ``budget``: (ε, δ) registered as the dataset's total budget when the ledger has none
      (None: exactly this publication's cost); a pair of numbers, checked here
      (:func:`~crowdsafe.privacy.ledger_budget.budget_parameter`);
    - ``out``: where the release is written (.csv or .parquet; several releases get ``-1``,
      ``-2``, ... before the suffix); None: nothing is written;
    - ``max_suppression``: the share of its sample a release may suppress before the custodian
      facts carry a warning (custodian-only, :func:`crowdsafe.drivers.publish.suppression_warnings`;
      the release is written either way);
    - ``custodian_report``: a .json file for the custodian-only facts, never in a release's folder;
    - ``escape_formulas``: CSV cells formula-safe (:mod:`crowdsafe.csv_safety`); each certificate
      written says which;
    - ``report``: write ``<stem>.report.html`` beside each table written (:mod:`crowdsafe.report`).
    """

    name: str | None = None
    budget: tuple[float, float] | None = None
    out: str | os.PathLike[str] | None = None
    max_suppression: float = DEFAULT_MAX_SUPPRESSION
    custodian_report: str | os.PathLike[str] | None = None
    escape_formulas: bool = True
    report: bool = True

    def __post_init__(self) -> None:
        if self.budget is not None:  # a pair of numbers, checked before the data is read or a ledger made
            from crowdsafe.privacy.ledger_budget import budget_parameter

            object.__setattr__(self, "budget", budget_parameter(self.budget))
        if not 0.0 <= self.max_suppression <= 1.0:
            raise ParameterError(f"max_suppression is a share of the sample, between 0 and 1; got "
                                 f"{self.max_suppression!r}")


#: The options of a run given none: nothing written, the heavy-suppression warning above 90%.
DEFAULT_RUN_OPTIONS = RunOptions()


@dataclass(frozen=True)
class Publication:
    """What :func:`publish_dataset` made: one :class:`Release` per fresh sample, the certificate of
    them all, the plan, and where the files went.

    Every public field holds only what was fixed before the data was read and outputs of the
    charged DP mechanism (the releases' rows and schemes, and what is computed from them); no
    field holds a sample, its frame or its size (a release keeps only its published classes).
    The exact facts the custodian needs (sample sizes, suppression, utility against the sample,
    input rows, ledger identities) are in :meth:`custodian_report`, apart.
    """

    plan: PublishPlan
    releases: tuple[Release, ...]
    certificate: Certificate
    choices: tuple[SchemeChoice | None, ...]
    notes: tuple[str, ...] = ()
    written: dict[str, Any] = field(default_factory=dict)
    _custodian: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def release(self) -> Release:
        return self.releases[0]

    def summary(self) -> dict[str, Any]:
        """The public account, JSON-ready: the plan (fixed before the data was read), the guarantee
        and whether the run is fit for release, and per release its ``dp_output`` (the scheme the
        mechanism chose, and rows and classes counted on the release itself)."""
        return {
            "plan": self.plan.as_dict(),
            "guarantee": self.certificate.summary(),
            "fit_for_release": self.certificate.fit_for_release,
            "unfit_reasons": list(self.certificate.unfit_reasons),
            "accounting": {"ledger": bool(self.release.certificate.accounting
                                          and self.release.certificate.accounting.get("ledger"))},
            "releases": [
                {
                    "dp_output": {
                        "scheme": dict(cast(PublishedScheme, r.recoding).levels),
                        "rows_published": r.rows_published,
                        "classes": r.classes,
                    },
                    "chooser": c.describe() if c is not None else "fixed scheme",
                    "certificate": r.certificate.summary(),
                }
                for r, c in zip(self.releases, self.choices)
            ],
            "written": self.written,
            "notes": list(self.notes),
        }

    def __repr__(self) -> str:
        # concise and public: the plan and the guarantee (a field-by-field repr would print every class)
        from crowdsafe.number_text import rounded_down  # the plan's beta, as its own repr states it

        plural = "s" if len(self.releases) != 1 else ""
        return (f"Publication({len(self.releases)} release{plural}, {self.certificate.headline()}, k={self.plan.k}, "
                f"beta={rounded_down(self.plan.beta, 4)}, fit_for_release={self.certificate.fit_for_release})")

    def _repr_html_(self) -> str:
        """The notebook view (:mod:`crowdsafe.report.views`): the plan, the certificate and the released
        classes; the custodian-only facts are not shown."""
        from crowdsafe.report.views import publication_html

        return publication_html(self)

    as_dict = summary  # the name every result's public dict has (crowdsafe.api)

    def custodian_report(self) -> dict[str, Any]:
        """Exact facts for the custodian's bookkeeping, NOT covered by the guarantee (every one is
        a count on the data or its samples, or a ledger identity): input rows, per release the
        sample's size, suppressed rows, suppression rate, nodes the selection scored and utility
        against the sample; the ledger entry. Never written beside a release."""
        return copy.deepcopy(self._custodian)


def check_columns(dataset: Dataset, columns: Sequence[str]) -> list[str]:
    """The columns to publish (``--columns``), refused before any charge when one is unknown,
    repeated or an identifier. From the schema alone."""
    chosen = [str(c).strip() for c in columns if str(c).strip()]
    if not chosen:
        raise ParameterError("the columns parameter names no column", parameter="columns")
    for column in chosen:
        if column not in dataset.columns:
            raise ParameterError(f"the columns parameter names '{column}', which the data does not have "
                                 f"(columns: {', '.join(dataset.columns)})", parameter="columns")
        if column in dataset.schema.identifiers:
            raise ParameterError(f"'{column}' is an identifier: it is never published")
    repeated = sorted({c for c in chosen if chosen.count(c) > 1})
    if repeated:
        raise ParameterError(f"the columns parameter names '{repeated[0]}' twice", parameter="columns")
    return [c for c in dataset.columns if c in set(chosen)]


def candidate_count(dataset: Dataset, columns: Sequence[str], objective: str | None = None,
                    target: str | None = None) -> int:
    """The number of lattice nodes the selection chooses among: Π (height + 1) over the published
    columns, with the columns the objective fixes (the target) at one level. From the
    hierarchies' heights alone (public). A number the exact selection cannot search is refused
    (:func:`~.plan.check_candidates`): every engine sizes the lattice here before the charge."""
    from crowdsafe.selection.score import check_objective_columns, make_objective

    chosen = make_objective(objective, target)
    check_objective_columns(chosen, columns)
    count = math.prod(h + 1 for h in chosen.candidate_heights(columns, dataset.hierarchies))
    check_candidates(count)
    return count


def check_public_domains(given: Dataset, columns: Sequence[str], objective: str | None) -> None:
    """Refuse, before any charge, the ``entropy`` and ``marginals`` objectives on a column without
    a declared hierarchy (``marginals`` spreads a generalized value over its leaves, so its score
    would change with the data's number of values): entropy's sensitivity caps each column at log2
    of the hierarchy's leaves, and a flat
    hierarchy made for a column without one, or a schema builder over the column's values (an
    :class:`~crowdsafe.data.hierarchy.ObservedHierarchy`), takes its leaves from the data, so Δq
    (printed in the certificate and scaling the mechanism) would depend on the data. The other
    objectives use the hierarchies' heights and :func:`~.objectives.node_penalties`, which for
    an observed hierarchy are by level (the same for every table). From the schema alone."""
    name = str(objective).strip().lower() if objective is not None else None
    if name not in ("entropy", "marginals"):
        return
    missing = [c for c in columns if c not in given.hierarchies or given.hierarchies[c].observed]
    if missing:
        raise ParameterError(
            f"the {name} objective needs a declared hierarchy (a public domain) for every published column; "
            f"'{missing[0]}' has none, or one built over the data's values: declare one in the schema, or choose "
            "another value of the objective parameter (nothing was charged)", parameter="objective",
        )


#: Whether :func:`plan_for_dataset`'s plans may choose the scheme on the whole table (anonymize.plan.TABLE_RULE):
#: both engines hold the table's counts (Spark's counted when it is read), so yes; the tests of the
#: noisy count step turn it off.
TABLE_COUNTS = True


def plan_for_dataset(dataset: Dataset, request: PlanRequest) -> PublishPlan:
    """:func:`plan_publication` with the number of candidate nodes taken from ``dataset``'s
    hierarchies (public: heights only), so the planner chooses ε1; both engines' plan, which may
    choose the scheme on the whole table (``table_counts``). A schema naming a ``person_id`` is
    refused here already (the theorem is per row: ``--plan-only`` and the app's plan say so too)."""
    refuse_person_rows(dataset.schema.person_id, "publish")
    if request.scheme is not None:
        return plan_publication(request)
    prepared, columns, _ = prepare_dataset(dataset, request.columns)
    check_public_domains(dataset, columns, request.objective)
    candidates = candidate_count(prepared, columns, request.objective, request.target)
    return plan_publication(replace(request, candidates=candidates,
                                    declared_domains=declared_domains(dataset, columns), table_counts=TABLE_COUNTS))


def declared_domains(given: Dataset, columns: Sequence[str]) -> bool:
    """Whether every published column has a declared hierarchy (a public domain, from the schema),
    as ``marginals`` needs (:func:`check_public_domains`; the default objective asks it too)."""
    return all(c in given.hierarchies and not given.hierarchies[c].observed for c in columns)


def resolution_outlook(
    dataset: Dataset, columns: Sequence[str], publish_plan: PublishPlan, rows: int,
) -> dict[str, Any]:
    """What resolution a table of ``rows`` rows could reach under ``publish_plan``, from its size and
    the hierarchies' node counts (never from how the rows spread over them): the expected sample
    n·β fills about n·β/k classes of k rows; the finest preset (none, fine, medium, coarse) whose
    number of possible generalized tuples (the product of the columns' node counts; a target the
    objective keeps at level 0) is at most that many, or, when none is, the preset with the fewest
    (the coarsest: the presets are ordered per column). A rough upper limit (real data is not
    spread evenly over the tuples), and custodian-only: it uses the row count, and an observed
    hierarchy's node counts are the values its column holds."""
    from crowdsafe.selection.mechanism import PRESETS, _preset_level

    fillable = publish_plan.expected_sample_rows(rows) / publish_plan.k
    fixed = {publish_plan.target: 0} if publish_plan.target else {}
    outlooks: list[dict[str, Any]] = []
    for preset in PRESETS:
        levels = {c: fixed.get(c, _preset_level(preset, dataset.hierarchies[c].height)) for c in columns}
        possible = int(np.prod([dataset.hierarchies[c].size(levels[c]) for c in columns], dtype=object))
        outlooks.append({"classes_fillable": fillable, "preset": preset, "levels": levels, "possible_tuples": possible})
        if possible <= fillable:
            return outlooks[-1]
    return min(reversed(outlooks), key=lambda o: o["possible_tuples"])  # the fewest (coarse, by their order)


def plan_fact_lines(facts: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The custodian-only facts of a plan (``expected_sample_rows``, ``input_rows`` and, when
    known, ``resolution``: :func:`resolution_outlook`) as (label, text) lines: what
    ``publish --plan-only`` prints under its custodian heading and the app's plan page shows in
    its custodian panel, including the warning that not even the coarse preset fits."""
    lines = [("expected", f"about {facts['expected_sample_rows']:,.0f} sampled rows of {facts['input_rows']:,} per "
                          "release, before suppression of classes smaller than k")]
    resolution = facts.get("resolution")
    if resolution:
        levels = ", ".join(f"{c}={v}" for c, v in resolution["levels"].items())
        fits = resolution["possible_tuples"] <= resolution["classes_fillable"]
        what = ("finest preset that fits" if fits else
                "not even the coarse preset fits (classes will merge only where the data concentrates; for a "
                "finer release, publish fewer columns, give them coarser hierarchies or raise epsilon)")
        lines.append(("resolution", f"about {resolution['classes_fillable']:,.0f} classes of k rows; {what}: "
                                    f"{resolution['preset']} ({levels}), {resolution['possible_tuples']:,} possible "
                                    "tuples"))
    return lines


def release_paths(out: str | os.PathLike[str], releases: int) -> list[Path]:
    """Table paths: ``out`` itself for one release, ``<stem>-1<suffix>`` ... for several."""
    path = Path(out)
    if path.suffix.lower() not in TABLE_SUFFIXES:
        raise ParameterError(f"cannot tell the output format of {path}: use a .csv or .parquet file name")
    if releases == 1:
        return [path]
    return [path.with_name(f"{path.stem}-{i + 1}{path.suffix}") for i in range(releases)]


def prepare_dataset(dataset: Dataset, columns: Sequence[str] | None = None) -> tuple[Dataset, list[str], list[str]]:
    """The dataset as the safe pipeline sees it: (dataset, published columns, notes).

    The theorems cover the whole published tuple: every published column must be recoded by g
    and counted when suppressing. So the published columns are the quasi-identifiers and the
    sensitive attributes (or exactly ``columns`` when given: ``--columns``), all made
    quasi-identifiers of the recoding (those without a hierarchy get the flat one: kept or
    ``*``); other columns are not published (publishing one as it is would void the guarantee:
    a unique value reveals its row). Identifiers are never published. With a schema inferred from
    the data, a published column whose name looks like a direct identifier gets a warning in the
    notes (:func:`crowdsafe.data.identifiers.name_warnings`: names only, so public) and is still
    published as the roles say.
    """
    if dataset.n_rows == 0:
        raise InputError("the data has no rows" + EMPTY_TABLE)
    if columns is not None:
        published = check_columns(dataset, columns)
    else:
        published = [c for c in dataset.columns if c in set(dataset.quasi_identifiers) | set(dataset.sensitive)]
    if not published:
        raise ParameterError("the data has no quasi-identifiers; name them with qi=[...]", parameter="qi")
    notes = name_warnings(dataset.schema, published)  # inferred schema: names that look like identifiers
    dropped = [c for c in dataset.columns if c not in published and c not in dataset.schema.identifiers]
    if dropped:
        notes.append(
            f"not published: {', '.join(dropped)} (neither quasi-identifiers nor sensitive: role insensitive, "
            "'other' in the app; the guarantee covers only columns the recoding generalizes: make them "
            "quasi-identifiers to publish them)"
        )
    dependent = [c for c in published if c in dataset.hierarchies and not dataset.hierarchies[c].value_local]
    if dependent:
        raise ParameterError(
            f"the hierarchy of '{dependent[0]}' groups neighbours among the values the data holds (fanout without an "
            "order), so the recoding itself would depend on the data: list the values with order = [...] in the "
            "schema (nothing was charged)",
        )
    dataset = dataset.with_roles(qi=published, sensitive=[])
    dataset, added = with_flat_hierarchies(dataset, published)
    if added:
        notes.append(f"no hierarchy for {', '.join(added)}: each can only be kept or fully generalized (*)")
    # every published hierarchy gets its missing-value leaf whatever the data holds, and takes a value it
    # does not list there: no row can stop the run or change a declared hierarchy's shape
    dataset = dataset.with_hierarchies({c: dataset.hierarchies[c].absorbing() for c in published})
    schema = dataset.frame.schema
    for c in published:  # leaves the column cannot hold: refused here, not while the sample is counted
        try:
            dataset.hierarchies[c].aligned_leaves(schema[c])
        except HierarchyError as exc:
            raise HierarchyError(f"{exc} (nothing was charged)") from None
    return dataset, published, notes


def outside_hierarchies(dataset: Dataset, columns: Sequence[str], *, side_by_side: bool = True
                        ) -> dict[str, dict[str, Any]]:
    """Per published column, how many distinct values its hierarchy does not list (published as
    missing by :meth:`~crowdsafe.data.hierarchy.Hierarchy.absorbing`), and how many of them a
    leaf holds in another Unicode normalisation form (:mod:`crowdsafe.data.unicode_forms`). Read
    from the data: a custodian-only fact, never in a public output. The values themselves are
    not kept (a publication holds no value it did not publish); ``crowdsafe check`` names them.
    ``side_by_side``: every column in one select (Polars counts them in parallel); False, one
    column at a time, each column's distinct values first (in a background thread beside a large
    publication, which needs the cores)."""
    schema = dataset.frame.schema
    hierarchies = dataset.hierarchies
    declared = [c for c in columns if c in hierarchies and not hierarchies[c].observed]

    def outside(c: str) -> pl.Series:
        return hierarchies[c].outside(dataset.frame.get_column(c))

    listed: dict[str, pl.Series] = {}  # the values outside, where they were listed to count them
    if side_by_side and declared:
        found = dataset.frame.select(hierarchies[c].outside_count(c, schema[c]).alias(c) for c in declared)
        counts = {c: int(n) for c, n in found.row(0, named=True).items()}
    else:
        listed = {c: outside(c) for c in declared}
        counts = {c: len(values) for c, values in listed.items()}
    found_outside = {}
    for c, n in counts.items():
        if not n:
            continue
        facts: dict[str, Any] = {"distinct_values": n, "published_as": "missing (?, or empty where not generalized)",
                                 "named_by": "crowdsafe check"}
        values = listed[c] if c in listed else outside(c)
        twins = len(unicode_forms.twins(values, hierarchies[c].leaves))
        if twins:  # values a leaf holds in another normalisation form (NFD beside NFC)
            facts["unicode_form_differs"] = twins
        found_outside[c] = facts
    return found_outside


def publish_dataset(
    dataset: Dataset,
    publish_plan: PublishPlan,
    options: RunOptions = DEFAULT_RUN_OPTIONS,
    *,
    randomness: Randomness,
    ledger: Ledger | None = None,
) -> Publication:
    """Run the safe pipeline on ``dataset`` under ``publish_plan`` (see the module docstring).

    Everything that can be decided from the schema, the hierarchies and the options is refused
    before the ledger is charged and before any file is touched: bad parameters, unknown scheme
    levels, a lattice too large to score, an output path of unknown format or that cannot be
    written (a folder, an unwritable folder, :func:`crowdsafe.files.check_output_path`), a custodian report
    beside the release, a dataset that is itself a sample consumed by a DPS release, an
    exhausted budget. ``options`` (:class:`RunOptions`): how the run is carried out and
    written. With a ``ledger``, a dataset without a budget gets ``options.budget`` or, without
    one, exactly the cost of this publication. Without a ledger the certificate is not fit for
    release (nothing records the sample's use). A release is written whatever it suppresses;
    one that suppresses more than ``max_suppression`` of its sample gets a warning in the
    custodian facts only (docs/publish.md, "Heavy suppression"). The custodian's exact facts go
    to the ledger entry and, when ``custodian_report`` names a file (never in the release's
    folder), there.
    CSV tables are formula-safe unless ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`;
    Parquet keeps raw values), and each certificate written says which in its ``format_notes``
    (fixed by the option and the file names before the data is read; the returned certificates
    carry the same notes).
    """
    from crowdsafe.drivers.publish import run_publication
    from crowdsafe.engines.polars_engine import PolarsEngine

    return run_publication(PolarsEngine(), dataset, publish_plan, options, randomness=randomness, ledger=ledger)


def table_threshold(k: int, beta: float) -> int:
    """⌈k/β⌉: the class size on the whole table whose sample keeps k rows on average, the
    suppression threshold of a selection that scores the table (public: from the plan)."""
    return max(math.ceil(k / beta), k)


def choose_recoding(
    sample: Dataset | CountedSample, columns: Sequence[str], publish_plan: PublishPlan,
    fixed: GeneralizationScheme | None,
    randomness: Randomness,
    table: Dataset | CountedSample | None = None,
) -> tuple[GeneralizationScheme, RecodingProfile, SchemeChoice | None]:
    """Am: the fixed scheme (strongly safe), or the exponential mechanism's choice (ε1-DP); with
    the recoding profile the certificate is derived from. The choice reads the sample (ε1-safe,
    Theorem 6), or, when the plan says so (``selection_source == "table"``), the whole ``table``
    with classes of :func:`table_threshold` rows (the choice composed with a strongly safe
    release, selection/PROOF.md §8)."""
    if fixed is not None:
        return fixed, RecodingProfile.strongly_safe(fixed.name), None
    from crowdsafe.selection.score import make_objective

    objective = make_objective(publish_plan.objective, publish_plan.target)
    if publish_plan.selection_source == "table":
        if table is None:
            raise ParameterError("this plan chooses the scheme on the whole table, which the engine did not count")
        threshold = table_threshold(publish_plan.k, publish_plan.beta)
        choice = choose_scheme(table, columns, threshold, publish_plan.epsilon1, randomness, objective)
        mechanism = (f"exponential mechanism over the generalization lattice, scored on the whole table with "
                     f"classes of at least ceil(k/beta) = {threshold} rows")
        return cast(GeneralizationScheme, choice.scheme), \
            RecodingProfile.chosen_on_table(publish_plan.epsilon1, mechanism), choice
    choice = choose_scheme(sample, columns, publish_plan.k, publish_plan.epsilon1, randomness, objective,
                           publish_plan.count_share)
    mechanism = "exponential mechanism over the generalization lattice"
    if choice.count_epsilon:
        mechanism = (f"a noisy count of the sample (exact discrete Laplace, epsilon_c = {choice.count_epsilon:.6g}) "
                     f"sizing the candidates, then the {mechanism} (epsilon = {choice.selection_epsilon:.6g}); "
                     "epsilon1-DP by sequential composition")
    profile = RecodingProfile.epsilon_safe(publish_plan.epsilon1, mechanism)
    return cast(GeneralizationScheme, choice.scheme), profile, choice


def count_sample(sample: Dataset, columns: Sequence[str]) -> CountedSample:
    """The sample's frequency table over the published columns: counted once, read by both the
    chooser and Apply (neither needs the rows themselves)."""
    return counted(sample, columns)


def apply_recoding(sample: CountedSample, scheme: GeneralizationScheme, k: int) -> AppliedCounts:
    """Apply(g, S, k) on the published columns, all recoded: the classes and their sizes from the
    frequency table. The table is each kept class's tuple repeated by its size (the rows of a
    class are identical, so this is exactly Apply on the rows); the release builds it on first
    use (:func:`~crowdsafe.anonymize.counted.published_frame`), and a CSV is written from the
    classes without it."""
    return apply_counts(sample, scheme.levels, k)


def release_facts(applied: AppliedCounts, scheme: GeneralizationScheme, columns: Sequence[str],
                  choice: SchemeChoice | None) -> dict[str, Any]:
    """One release's custodian-only facts: the sample's size, what suppression removed, the
    nodes the selection scored, and utility against the sample (:func:`class_utility`)."""
    return {
        "sample_rows": applied.rows_in,
        "suppressed_rows": applied.rows_suppressed,
        "suppression_rate": applied.suppression_rate,
        "nodes_scored": choice.scored if choice is not None else None,
        "utility": class_utility(applied, scheme, columns),
    }


def class_utility(applied: AppliedCounts, scheme: GeneralizationScheme, columns: Sequence[str]) -> dict[str, Any]:
    """Exact utility of a release against its sample, from the classes (custodian-only): NCP per
    column from the hierarchies' node penalties with a suppressed row counting 1, GCP (their
    mean), the average published class size and discernibility (|E|² per class, n per
    suppressed row)."""
    from crowdsafe.selection.mechanism import node_penalties

    kept = applied.class_kept
    sizes = applied.class_sizes[kept].astype(np.float64)
    rows = max(applied.rows_in, 1)
    ncp = {}
    for j, column in enumerate(columns):
        penalty = node_penalties(scheme.hierarchies[column])[scheme.levels[column]][applied.class_codes[kept, j]]
        ncp[column] = (float(penalty @ sizes) + applied.rows_suppressed) / rows
    return {
        "ncp": float(np.mean(list(ncp.values()))) if ncp else 0.0,
        "ncp_per_column": ncp,
        "average_class_size": applied.rows_published / applied.classes if applied.classes else 0.0,
        "discernibility": float((sizes**2).sum() + applied.rows_in * applied.rows_suppressed),
    }


@overload
def public_choice(choice: SchemeChoice, scheme: PublishedScheme | None = None) -> SchemeChoice: ...


@overload
def public_choice(choice: None, scheme: PublishedScheme | None = None) -> None: ...


def public_choice(choice: SchemeChoice | None, scheme: PublishedScheme | None = None) -> SchemeChoice | None:
    """The selection's outcome without its data-dependent diagnostic (the nodes scored) and, given
    the release's :class:`~crowdsafe.anonymize.published.PublishedScheme`, with it in place of the
    scheme that ran (whose hierarchies may list every value of the input)."""
    if choice is None:
        return None
    return replace(choice, scored=None, scheme=choice.scheme if scheme is None else scheme)


def certify_release(
    publish_plan: PublishPlan, columns: Sequence[str], scheme: GeneralizationScheme, profile: RecodingProfile,
    choice: SchemeChoice | None, release_id: str, stream: Randomness, recorded: bool,
    unreviewed: Mapping[str, Sequence[str]] | None = None, sensitive: Sequence[str] = (),
) -> tuple[Certificate, dict[str, Any]]:
    """The certificate of one release (Theorem 5 for a fixed scheme, Theorem 6 for the exponential
    mechanism's choice; ``profile`` from :func:`choose_recoding`), derived from what ran; and the
    parameters it records. ``release_id``: from :func:`crowdsafe.drivers.publish.new_release_id`;
    ``recorded``: whether a ledger recorded the run (without one the certificate is not fit for release);
    ``unreviewed``: the published columns' schema choices a schema draft read from the data, not yet
    reviewed (:meth:`crowdsafe.data.schema.Schema.unreviewed`; any makes it not fit for release);
    ``sensitive``: the schema's sensitive attributes, of which those published are recorded (grouped as
    quasi-identifiers all the same, so that a report can say how many were declared which). Only
    parameters, the schema and the chosen scheme (the DP output) enter it. One of several releases
    (``--releases N``) records ``published_together``: N and the plan's composed (ε, δ) of the N
    with its theorem, so that the release's certificate and report, read alone, say that its own
    guarantee does not cover what the N reveal together."""
    described = scheme.describe()
    parameters: dict[str, Any] = {
        "quasi_identifiers": list(columns), "sensitive": [c for c in columns if c in set(sensitive)],
        "scheme": dict(scheme.levels),
        "scheme_level_names": described.get("level_names", {}),
        "scheme_level_descriptions": described.get("level_descriptions", {}),
        "delta_target": publish_plan.delta_target,
    }
    if publish_plan.releases > 1:  # one of several releases from one table: what they reveal together
        parameters["published_together"] = {
            "releases": publish_plan.releases, "epsilon": publish_plan.total_epsilon,
            "delta": publish_plan.total_delta, "composition": publish_plan.composition,
        }
    if choice is not None:
        parameters["selection"] = public_choice(choice).describe()
        # why this objective (given, or the plan's default: public facts only, anonymize.plan)
        parameters["selection"]["objective_rule"] = publish_plan.objective_rule
    accounting = ledger_accounting(bool(recorded))
    certificate = certify_k_anonymization(
        sampling=SamplingProfile(publish_plan.beta, release_id),
        recoding=profile,
        k=publish_plan.k,
        epsilon=publish_plan.epsilon,
        delta=publish_plan.delta_target,
        randomness=stream,
        accounting=accounting,
        parameters=parameters,
    )
    if unreviewed:
        certificate = certificate.with_unreviewed_schema(unreviewed)
    return certificate, parameters
