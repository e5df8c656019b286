"""The safe pipeline: sampling + safe k-anonymization = (ε, δ)-differential privacy.

``release = Apply(Am(S), S, k)`` with ``S = Sample_β(D)`` (Li, Qardaji and Su 2012, "Provably
private data anonymization: or, k-anonymity meets differential privacy"):

1. **plan** (:func:`plan_publication`): from the target (ε, δ), fill in what the user did not
   fix: ε1 = 10% of ε when the scheme is chosen from the data (0 for a fixed scheme), β = 1 −
   e^−(ε − ε1), the smallest k with d(k, β, ε − ε1) ≤ δ (:func:`crowdsafe.privacy.plan`);
2. **sample**: keep each row independently with probability β, from the secure source;
3. **choose g**: a fixed scheme (strongly safe, Theorem 5) or the exponential mechanism over the
   generalization lattice, on the sample (ε1-safe, Theorem 6; :mod:`.selection`);
4. **apply**: recode the sample with g, suppress every output tuple held by fewer than k rows;
5. **certify** (:func:`crowdsafe.privacy.certify_k_anonymization`): (β, ε, δ)-DPS, hence
   (ε, δ)-DP; several releases on fresh samples compose (:func:`compose_certificates`).

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

import contextlib
import copy
import functools
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from crowdsafe.anonymize.classic import _with_flat_hierarchies
from crowdsafe.anonymize.counted import (
    AppliedCounts,
    CountedSample,
    apply_counts,
    class_frame,
    counted,
    published_frame,
    published_only,
)
from crowdsafe.anonymize.recoding import GeneralizationScheme
from crowdsafe.anonymize.release import (
    TABLE_SUFFIXES,
    Release,
    certificate_path,
    write_classes_csv,
)
from crowdsafe.anonymize.selection import SchemeChoice, choose_scheme, fixed_scheme
from crowdsafe.csv_safety import format_note, write_csv
from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError, SampleReuseError
from crowdsafe.files import atomic_path, check_output_path
from crowdsafe.privacy import (
    Certificate,
    RecodingProfile,
    SamplingProfile,
    certify_k_anonymization,
    compose_certificates,
    compose_homogeneous,
    plan,
)
from crowdsafe.privacy.amplification import largest_rate_for_epsilon
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.privacy.planning import MAX_K, check_sampled_epsilon, smallest_k
from crowdsafe.randomness import Randomness

DEFAULT_EPSILON1_SHARE = 0.10
DEFAULT_MAX_SUPPRESSION = 0.90


@dataclass(frozen=True)
class PublishPlan:
    """Everything fixed before the data is read: the parameters of each release and their cost.

    ``epsilon``/``delta``: the guarantee of one release; ``total_epsilon``/``total_delta``: of
    all ``releases`` together (fresh samples, composed by the tightest of summation, DRV and
    KOV). ``scheme``: the fixed scheme text, or None when the exponential mechanism chooses one.
    The plan holds nothing read from the data (not even the row count): it is public.
    """

    epsilon: float
    delta: float
    k: int
    beta: float
    epsilon1: float
    scheme: str | None
    releases: int
    delta_target: float
    total_epsilon: float
    total_delta: float
    composition: str
    explanation: str
    objective: str = "retained"
    target: str | None = None
    columns: tuple[str, ...] | None = None
    candidates: int | None = None
    epsilon1_rule: str = "given"
    beta_rule: str = "given"

    @property
    def epsilon_anon(self) -> float:
        return self.epsilon - self.epsilon1

    @property
    def strongly_safe(self) -> bool:
        return self.scheme is not None

    def expected_sample_rows(self, rows: int) -> float:
        """Rows expected in each sample of a table of ``rows`` rows (n·β), before suppression.
        ``rows`` is an exact fact about the data: the result is custodian-only."""
        return rows * self.beta

    def as_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "delta_target": self.delta_target,
            "k": self.k,
            "beta": self.beta,
            "epsilon1": self.epsilon1,
            "epsilon_anon": self.epsilon_anon,
            "recoding": "strongly safe (fixed scheme)" if self.strongly_safe
            else "epsilon1-safe (exponential mechanism over the lattice)",
            "scheme": self.scheme,
            "objective": None if self.strongly_safe else self.objective,
            "target": self.target,
            "columns": list(self.columns) if self.columns is not None else None,
            "candidates": self.candidates,
            "epsilon1_rule": self.epsilon1_rule,
            "beta_rule": self.beta_rule,
            "releases": self.releases,
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "composition": self.composition,
            "explanation": self.explanation,
        }


def plan_publication(
    epsilon: float,
    delta: float,
    *,
    k: int | None = None,
    beta: float | None = None,
    epsilon1: float | None = None,
    scheme: str | Mapping[str, int] | None = None,
    releases: int = 1,
    objective: str | None = None,
    target: str | None = None,
    columns: Sequence[str] | None = None,
    candidates: int | None = None,
) -> PublishPlan:
    """The plan of a publication for the per-release target (ε, δ); reads no data.

    A fixed ``scheme`` makes the recoding strongly safe (ε1 = 0, and giving ε1 is an error).
    Otherwise the exponential mechanism chooses the scheme under ``objective``
    (:mod:`crowdsafe.anonymize.objectives`; ``target`` for classification) among ``candidates``
    lattice nodes (a public number, from the hierarchies' heights); ε1 is then, unless given,
    the planner's choice (:func:`planned_epsilon1`), or 10% of ε when ``candidates`` is unknown.
    ``columns``: the published columns, when the user chose them. ``k`` must be at least 2.
    Raises ParameterError for anything the theorems do not allow (ε below −ln(1 − β) + ε1,
    β ≤ δ, ...).
    """
    from crowdsafe.anonymize.objectives import make_objective

    chosen_objective = make_objective(objective, target)
    if isinstance(releases, bool) or not isinstance(releases, (int, np.integer)) or releases < 1:
        raise ParameterError(f"the number of releases must be a whole number >= 1, got {releases!r}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2):
        raise ParameterError(
            f"k must be a whole number >= 2, got {k!r}: with k = 1 nothing is suppressed and no "
            "guarantee holds; leave k out to get the smallest k that reaches delta"
        )
    if k is not None and k > MAX_K:
        raise ParameterError(f"k must be at most {MAX_K:,} (the largest k the planner searches), got {k!r}")
    if not isinstance(epsilon, (int, float)) or isinstance(epsilon, bool) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ParameterError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    scheme_text: str | None = None
    given_epsilon1 = epsilon1
    if scheme is not None:
        if epsilon1 not in (None, 0, 0.0):
            raise ParameterError(
                "a fixed scheme is chosen without looking at the data, so it spends no epsilon1; "
                "drop --epsilon1, or drop --scheme to let the exponential mechanism choose"
            )
        epsilon1 = 0.0
        scheme_text = scheme if isinstance(scheme, str) else ",".join(f"{c}={v}" for c, v in scheme.items())
    elif epsilon1 is None:
        epsilon1 = DEFAULT_EPSILON1_SHARE * float(epsilon)
        rule = "10% of epsilon (the lattice size was not known to the planner)"
    elif not epsilon1 > 0:
        raise ParameterError(
            f"epsilon1 must be > 0 when the scheme is chosen from the data, got {epsilon1!r}; "
            "give a fixed --scheme for a strongly safe release"
        )
    if not epsilon1 < epsilon:
        raise ParameterError(f"epsilon1 = {epsilon1:g} must be below epsilon = {epsilon:g}")
    if beta is not None and not (isinstance(beta, (int, float)) and 0 < beta < 1):
        raise ParameterError(f"beta must lie strictly between 0 and 1, got {beta!r}")
    if beta is not None and not beta > delta:
        raise ParameterError(
            f"(beta, epsilon, delta)-DPS needs beta > delta, got beta = {beta:g}, delta = {delta:g}; "
            "lower delta or raise beta"
        )
    if beta is None:  # beta = 1 - e^-(epsilon - epsilon1) must stay below 1 (a double)
        check_sampled_epsilon(float(epsilon), float(epsilon1),
                              DEFAULT_EPSILON1_SHARE if scheme is None and given_epsilon1 is None else None)
    if scheme is None and given_epsilon1 is None and candidates is not None:
        solved, rule = planned_epsilon1(float(epsilon), float(delta), beta, k, int(candidates),
                                        chosen_objective.monotone, float(epsilon1))
    else:
        solved = solve_plan(float(epsilon), float(delta), beta, k, float(epsilon1))
        if scheme is not None:
            rule = "none (fixed scheme)"
        elif given_epsilon1 is not None:
            rule = "given"
    composed = compose_homogeneous(solved.epsilon, solved.delta, int(releases), 0.0)
    return PublishPlan(
        epsilon=solved.epsilon,
        delta=solved.delta,
        k=solved.k,
        beta=solved.beta,
        epsilon1=solved.epsilon1,
        scheme=scheme_text,
        releases=int(releases),
        delta_target=float(delta),
        total_epsilon=composed.epsilon,
        total_delta=composed.delta,
        composition=composed.theorem if releases > 1 else "single release",
        explanation=solved.explanation,
        objective=chosen_objective.name,
        target=chosen_objective.target,
        columns=tuple(columns) if columns is not None else None,
        candidates=None if candidates is None else int(candidates),
        epsilon1_rule=rule,
        beta_rule="given" if beta is not None else "largest for k" if k is not None else BETA_RULE,
    )


BETA_RULE = ("the largest beta whose beta/k is within 10% of the best: about the most classes of k rows "
             "the sample can fill, with as many rows as that allows (k grows with beta)")
#: A rate is as good as the best when its β/k is within this share of the best β/k.
RATE_TOLERANCE = 0.10
#: Rates tried first by :func:`best_rate` (a geometric grid, to find where the best k lies).
_RATE_GRID = 64


@functools.lru_cache(maxsize=256)
def best_rate(epsilon: float, delta: float, epsilon1: float) -> float:
    """The planner's sampling rate, from (ε, δ, ε1) alone: the expected sample n·β fills about
    n·β/k classes of k rows (the finest resolution a release can reach), where k is the least k
    with d(k, β, ε − ε1) ≤ δ. For each k, β(k) is the largest rate k covers (≤ 1 − e^−(ε − ε1)),
    and β(k)/k is the best ratio with that k; the rate returned is β(k) for the largest k whose
    ratio is within 10% of the best: near the resolution optimum, more rows mean smaller
    sampling error. (At small ε this is the largest admitted rate; at large ε, where that rate is
    near 1 and k explodes, far smaller.) A geometric grid of rates gives each k it meets a rate
    it covers; the three best ks and the chosen one are solved exactly (β(k))."""
    top = min(largest_rate_for_epsilon(epsilon, epsilon1), 1.0 - 1e-9)
    low = min(max(2.0 * delta, 1e-4), top / 2)
    seen: dict[int, float] = {}  # k -> the largest grid rate it covers (a lower bound on β(k))
    near = None  # the last rate's k: the next rate's is close
    for r in np.geomspace(low, top, _RATE_GRID):
        try:
            near = smallest_k(epsilon, delta, float(r), epsilon1, near=near).k
        except ParameterError:  # no k up to the planner's limit at this rate
            continue
        k = max(near, 2)
        seen[k] = max(seen.get(k, 0.0), float(r))
    if not seen:
        raise ParameterError(f"no sampling rate reaches delta = {delta:g} at epsilon = {epsilon:g} with k up to "
                             f"{MAX_K:,}; raise epsilon or delta")
    def peak(k: int) -> float:  # the largest rate k covers: the top of k's tooth of the sawtooth
        try:
            return min(plan(epsilon, delta, k=k, epsilon1=epsilon1).beta, top)
        except ParameterError:
            return seen[k]

    # the few best ks by their grid ratio, solved exactly, set the best ratio
    leaders = sorted(seen, key=lambda k: seen[k] / k, reverse=True)[:3]
    exact = {k: max(peak(k), seen[k]) for k in leaders}
    best = max(max(r / k for k, r in exact.items()), max(r / k for k, r in seen.items()))
    threshold = (1.0 - RATE_TOLERANCE) * best
    chosen = max([k for k, r in seen.items() if r / k >= threshold] + [k for k, r in exact.items() if r / k >= threshold])
    return exact[chosen] if chosen in exact else max(peak(chosen), seen[chosen])


def solve_plan(epsilon: float, delta: float, beta: float | None, k: int | None, epsilon1: float,
               largest_rate: bool = False) -> Any:
    """The planning module's Plan for these parameters: β and k as given; when neither is, β
    from :func:`best_rate` (or the largest admitted rate with ``largest_rate``); k at least 2."""
    if beta is None and k is None and not largest_rate:
        beta = best_rate(epsilon, delta, epsilon1)
    solved = plan(epsilon, delta, beta=beta, k=None if k is None else int(k), epsilon1=epsilon1)
    if solved.k < 2:
        solved = plan(epsilon, delta, beta=solved.beta, k=2, epsilon1=epsilon1)
    return solved


#: The planner's ε1: the exponential mechanism's 95% utility bound is held to this many classes
#: at the threshold k (in score units, each row worth Δq). One class: on Adult at ε = 1 the
#: default objective then keeps age as intervals in 20 of 20 seeds (18 of 20 with two classes;
#: docs/objectives.md).
EPSILON1_LOSS_CLASSES = 1
#: ε1 stays within these shares of ε.
EPSILON1_SHARE_RANGE = (0.01, 0.5)


def planned_epsilon1(epsilon: float, delta: float, beta: float | None, k: int | None, candidates: int,
                     monotone: bool, start: float) -> tuple[Any, str]:
    """The planner's split of ε between the selection (ε1) and the k-anonymization, from public
    quantities only: the number of candidate nodes L and the objective's monotonicity m.

    The exponential mechanism picks, with probability ≥ 0.95, a node whose score is within
    (m Δq / ε1)(ln L + ln 20) of the best (Dwork and Roth 2014, Theorem 3.11; m = 1 for a monotone
    score, 2 otherwise). The planner spends just enough ε1 for this to be at most
    ``EPSILON1_LOSS_CLASSES`` · k · Δq, i.e. one class at the threshold: ε1 = m (ln L + ln 20) / k,
    solved jointly with k = k(ε − ε1) at the largest admitted rate (or the β and k given) by
    fixed-point iteration, within [1%, 50%] of ε. More ε1 would raise k and lower β for a choice
    that is already that sharp. The rate is then chosen at that ε1 (:func:`best_rate`, unless
    given; ``start``: the iteration's first ε1). Returns the solved plan (the planning module's
    Plan) and the rule in words.
    """
    low, high = EPSILON1_SHARE_RANGE[0] * epsilon, EPSILON1_SHARE_RANGE[1] * epsilon
    m = 1.0 if monotone else 2.0
    epsilon1 = start

    def sizing(epsilon1: float, near: int | None) -> int:
        """k at the largest admitted rate (or the β or k given), or the planner's where no k fits
        that rate; ``near``: the previous iteration's k, a guess that saves evaluations of d."""
        try:
            if k is None:
                rate = beta if beta is not None else largest_rate_for_epsilon(epsilon, epsilon1)
                return max(smallest_k(epsilon, delta, rate, epsilon1, near=near).k, 2)
            return solve_plan(epsilon, delta, beta, k, epsilon1, largest_rate=True).k
        except ParameterError:
            return solve_plan(epsilon, delta, beta, k, epsilon1).k

    sized = sizing(epsilon1, None)
    for _ in range(20):
        wanted = min(high, max(low, m * (math.log(candidates) + math.log(20.0)) /
                               (EPSILON1_LOSS_CLASSES * sized)))
        if abs(wanted - epsilon1) <= 1e-4 * epsilon:
            break
        epsilon1 = wanted
        sized = sizing(epsilon1, sized)
    solved = solve_plan(epsilon, delta, beta, k, epsilon1)
    rule = (f"planned: the selection's 95% utility bound (m dq / epsilon1)(ln L + ln 20) held to "
            f"{EPSILON1_LOSS_CLASSES:g} k dq at the largest admitted rate (L = {candidates:,} candidate nodes, "
            f"m = {m:g}), within {EPSILON1_SHARE_RANGE[0]:.0%}-{EPSILON1_SHARE_RANGE[1]:.0%} of epsilon")
    return solved, rule


CUSTODIAN_NOTICE = (
    "CUSTODIAN ONLY: exact facts about the data and its samples, NOT covered by the privacy "
    "guarantee; do not publish them, and do not store them beside the release"
)


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
                        "scheme": dict(r.recoding.levels),  # type: ignore[attr-defined]
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
        raise ParameterError("--columns names no column")
    for column in chosen:
        if column not in dataset.columns:
            raise ParameterError(f"--columns names '{column}', which the data does not have "
                                 f"(columns: {', '.join(dataset.columns)})")
        if column in dataset.schema.identifiers:
            raise ParameterError(f"'{column}' is an identifier: it is never published")
    repeated = sorted({c for c in chosen if chosen.count(c) > 1})
    if repeated:
        raise ParameterError(f"--columns names '{repeated[0]}' twice")
    return [c for c in dataset.columns if c in set(chosen)]


def candidate_count(dataset: Dataset, columns: Sequence[str], objective: str | None = None,
                    target: str | None = None) -> int:
    """The number of lattice nodes the selection chooses among: Π (height + 1) over the published
    columns, with the columns the objective fixes (the target) at one level. From the
    hierarchies' heights alone (public)."""
    from crowdsafe.anonymize.objectives import check_objective_columns, make_objective

    chosen = make_objective(objective, target)
    check_objective_columns(chosen, columns)
    return int(np.prod([h + 1 for h in chosen.candidate_heights(columns, dataset.hierarchies)], dtype=object))


def check_public_domains(given: Dataset, columns: Sequence[str], objective: str | None) -> None:
    """Refuse, before any charge, the ``entropy`` objective on a column without a hierarchy: its
    sensitivity caps each column at log2 of the hierarchy's leaves, and the flat hierarchy made
    for such a column takes its leaves from the data's distinct values, so Δq (printed in the
    certificate and scaling the mechanism) would depend on the data. The other objectives use
    only the hierarchies' heights and node penalties, the same for any flat hierarchy."""
    if objective is None or str(objective).strip().lower() != "entropy":
        return
    missing = [c for c in columns if c not in given.hierarchies]
    if missing:
        raise ParameterError(
            f"the entropy objective needs a hierarchy (a public domain) for every published column; "
            f"'{missing[0]}' has none: give one in the schema, or choose another --objective (nothing was charged)"
        )


def plan_for_dataset(dataset: Dataset, epsilon: float, delta: float, **options: Any) -> PublishPlan:
    """:func:`plan_publication` with the number of candidate nodes taken from ``dataset``'s
    hierarchies (public: heights only), so the planner chooses ε1; ``options`` as there."""
    if options.get("scheme") is not None:
        return plan_publication(epsilon, delta, **options)
    prepared, columns, _ = prepare_dataset(dataset, options.get("columns"))
    check_public_domains(dataset, columns, options.get("objective"))
    candidates = candidate_count(prepared, columns, options.get("objective"), options.get("target"))
    return plan_publication(epsilon, delta, candidates=candidates, **options)


def resolution_outlook(dataset: Dataset, columns: Sequence[str], publish_plan: PublishPlan, rows: int) -> dict[str, Any]:
    """What resolution a table of ``rows`` rows could reach under ``publish_plan``, from its size and
    the hierarchies only (never from the values): the expected sample n·β fills about n·β/k
    classes of k rows; the finest preset (none, fine, medium, coarse) whose number of possible
    generalized tuples (the product of the columns' node counts; a target the objective keeps at
    level 0) is at most that many. A rough upper limit (real data is not spread evenly over
    the tuples), and custodian-only (it uses the row count)."""
    from crowdsafe.anonymize.selection import PRESETS, _preset_level

    fillable = publish_plan.expected_sample_rows(rows) / publish_plan.k
    fixed = {publish_plan.target: 0} if publish_plan.target else {}
    outlook: dict[str, Any] = {}
    for preset in PRESETS:
        levels = {c: fixed.get(c, _preset_level(preset, dataset.hierarchies[c].height)) for c in columns}
        possible = int(np.prod([dataset.hierarchies[c].size(levels[c]) for c in columns], dtype=object))
        outlook = {"classes_fillable": fillable, "preset": preset, "levels": levels, "possible_tuples": possible}
        if possible <= fillable:
            break
    return outlook


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
    a unique value reveals its row). Identifiers are never published.
    """
    if dataset.n_rows == 0:
        raise ParameterError("the data has no rows (nothing was charged)")
    if columns is not None:
        published = check_columns(dataset, columns)
    else:
        published = [c for c in dataset.columns if c in set(dataset.quasi_identifiers) | set(dataset.sensitive)]
    if not published:
        raise ParameterError("the data has no quasi-identifiers; name them with --qi a,b,c (qi=[...])")
    notes = []
    dropped = [c for c in dataset.columns if c not in published and c not in dataset.schema.identifiers]
    if dropped:
        notes.append(
            f"not published: {', '.join(dropped)} (insensitive attributes; the guarantee covers only columns "
            "the recoding generalizes: declare them quasi-identifiers to publish them)"
        )
    dataset = dataset.with_roles(qi=published, sensitive=[])
    dataset, added = _with_flat_hierarchies(dataset, published)
    if added:
        notes.append(f"no hierarchy for {', '.join(added)}: each can only be kept or fully generalized (*)")
    return dataset, published, notes


def publish_dataset(
    dataset: Dataset,
    publish_plan: PublishPlan,
    *,
    randomness: Randomness,
    ledger: Ledger | None = None,
    name: str | None = None,
    budget: tuple[float, float] | None = None,
    out: str | os.PathLike[str] | None = None,
    force: bool = False,
    max_suppression: float = DEFAULT_MAX_SUPPRESSION,
    custodian_report: str | os.PathLike[str] | None = None,
    escape_formulas: bool = True,
) -> Publication:
    """Run the safe pipeline on ``dataset`` under ``publish_plan`` (see the module docstring).

    Everything that can be decided from the schema, the hierarchies and the options is refused
    before the ledger is charged and before any file is touched: bad parameters, unknown scheme
    levels, a lattice too large to score, an output path of unknown format or that cannot be
    written (a folder, an unwritable folder, :func:`crowdsafe.files.check_output_path`), a custodian report
    beside the release, a dataset that is itself a sample consumed by a DPS release, an
    exhausted budget. With a ``ledger``, a dataset without a budget gets ``budget`` or, without
    one, exactly the cost of this publication. Without a ledger the certificate is not fit for
    release (nothing records the sample's use). If a release would suppress more than
    ``max_suppression`` of its sample, the run stops after the charge (nothing written; the
    budget is spent) unless ``force``: that decision reads the sample, so the message gives no
    number and calls it a custodian-only fact. The custodian's exact facts go to the ledger
    entry and, when ``custodian_report`` names a file (never in the release's folder), there.
    CSV tables are formula-safe unless ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`;
    Parquet keeps raw values), and each certificate written says which in its ``format_notes``
    (fixed by the option and the file names before the data is read; the returned certificates
    carry the same notes).
    """
    given = dataset
    dataset, columns, notes = prepare_dataset(dataset, publish_plan.columns)
    fixed = fixed_scheme(dataset, columns, publish_plan.scheme) if publish_plan.scheme is not None else None
    if fixed is None:
        check_lattice(dataset.hierarchies, columns)
        candidate_count(dataset, columns, publish_plan.objective, publish_plan.target)  # a target it lacks
        check_public_domains(given, columns, publish_plan.objective)
    paths = release_paths(out, publish_plan.releases) if out is not None else []
    for path in paths:
        check_output_path(path, TABLE_SUFFIXES)
    report_path = check_custodian_path(custodian_report, paths)
    notes_of_files = [format_note(p, escape_formulas=escape_formulas) for p in paths]
    label = name or dataset.name or "data"
    charge_request: dict[str, Any] = {}
    identity = None
    if ledger is not None:  # the table as given: the identity `crowdsafe query` and `ledger init` see
        identity = given.fingerprint(key=ledger.identity_key)
        charge_request = ledger_request(ledger, identity, label, publish_plan, fixed is not None, budget,
                                        randomness, notes)

    streams = randomness.spawn(publish_plan.releases) if publish_plan.releases > 1 else [randomness]
    release_ids = [new_release_id(s) for s in streams]  # before any data-dependent draw
    samples = [sample_of(dataset, publish_plan.beta, s) for s in streams]

    with contextlib.ExitStack() as stack:
        charge = None
        if ledger is not None:
            # independent samples compose whatever they contain: two that came out identical are
            # no reason to stop (the ledger records a repeated identity once)
            sample_ids = [s.fingerprint(key=ledger.identity_key) for s in samples]
            charge = stack.enter_context(ledger.charge(identity, **charge_request,  # type: ignore[arg-type]
                                                       sample_ids=sample_ids))
        releases, choices, facts = [], [], []
        for sample, release_id, stream in zip(samples, release_ids, streams):
            release, choice, fact = _release_one(dataset, sample, release_id, stream, publish_plan, fixed,
                                                 ledger is not None)
            releases.append(release)
            choices.append(choice)
            facts.append(fact)
        samples.clear()  # the samples leave with this frame
        custodian = custodian_facts(dataset.n_rows, publish_plan, facts)
        if charge is not None:
            custodian["ledger"] = ledger_summary(ledger, charge, label, identity)  # type: ignore[arg-type]
            charge.record(custodian_report=custodian)
        if report_path is not None:
            write_custodian_report(report_path, custodian)
        certificate = checked_certificate(releases, facts, max_suppression, force)
        written: dict[str, Any] = {}
        if paths:  # the certificates say how the files hold their cells (fixed by the options)
            releases = [replace(r, certificate=r.certificate.with_format_notes(n))
                        for r, n in zip(releases, notes_of_files)]
            certificate = certificate.with_format_notes(notes_of_files[0])
            written = _write_all(releases, certificate, paths, escape_formulas=escape_formulas)
        if charge is not None:
            charge.record(written=written.get("tables", []), rows_published=[r.rows_published for r in releases])
    if ledger is None:
        notes.append("no ledger: nothing records that these samples are used, nor limits further releases; "
                     "NOT fit for release")
    if randomness.seeded:
        notes.append("seeded run: reproducible, NOT fit for release (an attacker who knows the seed knows the sample)")
    return Publication(publish_plan, tuple(releases), certificate, tuple(choices), tuple(notes), written, custodian)


def new_release_id(stream: Randomness) -> str:
    """128 random bits (hex) naming one release in its certificate, drawn from a child stream of
    ``stream`` before any data-dependent draw: fresh OS randomness in release mode; on a seeded
    run the same on neighbouring tables. Never derived from the data."""
    return stream.spawn(1)[0].generator.bytes(16).hex()


def check_lattice(hierarchies: Mapping[str, Any], columns: Sequence[str]) -> None:
    """Refuse, before the ledger is charged, a lattice the selection cannot score (decided from
    the hierarchies alone, :func:`crowdsafe.anonymize.selection.lattice_fits`)."""
    from crowdsafe.anonymize.selection import lattice_fits

    if not lattice_fits([hierarchies[c] for c in columns]):
        raise ParameterError("too many quasi-identifier values to score the lattice; use fewer quasi-identifiers "
                             "(nothing was charged)")


def check_custodian_path(path: str | os.PathLike[str] | None, release_paths: Sequence[str | os.PathLike[str]]
                         ) -> Path | None:
    """The custodian report's path, refused (before anything is charged) when it lies in a
    release's own folder, inside a release (a Spark directory), or has no .json name."""
    if path is None:
        return None
    target = Path(path).expanduser().resolve()
    if target.suffix.lower() != ".json":
        raise ParameterError(f"the custodian report is JSON: give a .json file name, not {path}")
    for release in release_paths:
        table = Path(str(release)).expanduser().resolve()
        if target.parent == table.parent or table in target.parents:
            raise ParameterError(
                f"the custodian report {path} would lie beside the release in {table.parent}: it holds exact "
                "facts about the data that the guarantee does not cover; write it to another folder"
            )
    return target


def write_custodian_report(path: Path, report: Mapping[str, Any]) -> Path:
    """Write the custodian-only report (JSON) atomically."""
    from crowdsafe.files import write_text_atomic

    return write_text_atomic(path, json.dumps(report, indent=2, sort_keys=True, default=str) + "\n")


def custodian_facts(input_rows: int, publish_plan: PublishPlan, releases: Sequence[Mapping[str, Any]]
                    ) -> dict[str, Any]:
    """The custodian-only report of a publication (see :meth:`Publication.custodian_report`)."""
    return {
        "notice": CUSTODIAN_NOTICE,
        "input_rows": int(input_rows),
        "expected_sample_rows": publish_plan.expected_sample_rows(int(input_rows)),
        "releases": [dict(r) for r in releases],
        "ledger": None,
    }


def sample_of(dataset: Dataset, beta: float, randomness: Randomness) -> Dataset:
    """Sample_β(D): each row kept independently with probability β (one vectorised draw)."""
    return dataset.filter_rows(randomness.bernoulli(dataset.n_rows, beta))


def choose_recoding(
    sample: Dataset | CountedSample, columns: Sequence[str], publish_plan: PublishPlan, fixed: GeneralizationScheme | None,
    randomness: Randomness,
) -> tuple[GeneralizationScheme, RecodingProfile, SchemeChoice | None]:
    """Am: the fixed scheme (strongly safe), or the exponential mechanism's choice on the sample
    (ε1-safe); with the recoding profile the certificate is derived from."""
    if fixed is not None:
        return fixed, RecodingProfile.strongly_safe(fixed.name), None
    from crowdsafe.anonymize.objectives import make_objective

    objective = make_objective(publish_plan.objective, publish_plan.target)
    choice = choose_scheme(sample, columns, publish_plan.k, publish_plan.epsilon1, randomness, objective)
    profile = RecodingProfile.epsilon_safe(publish_plan.epsilon1, "exponential mechanism over the generalization lattice")
    return choice.scheme, profile, choice


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
    from crowdsafe.anonymize.selection import node_penalties

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


def _release_one(
    dataset: Dataset, sample: Dataset, release_id: str, stream: Randomness, publish_plan: PublishPlan,
    fixed: GeneralizationScheme | None, recorded: bool,
) -> tuple[Release, SchemeChoice | None, dict[str, Any]]:
    columns = dataset.quasi_identifiers
    table = count_sample(sample, columns)
    scheme, profile, choice = choose_recoding(table, columns, publish_plan, fixed, stream)
    applied = apply_recoding(table, scheme, publish_plan.k)
    facts = release_facts(applied, scheme, columns, choice)
    certificate, parameters = certify_release(publish_plan, columns, scheme, profile, choice, release_id, stream,
                                              recorded)
    published = published_only(applied)
    release = Release(
        rows=functools.partial(published_frame, published, scheme, table.columns), certificate=certificate,
        algorithm="safe k-anonymization with sampling",
        k=publish_plan.k, quasi_identifiers=tuple(columns), sensitive=None, recoding=scheme,
        applied=published, source=None, parameters=parameters,
    )
    return release, public_choice(choice), facts


def public_choice(choice: SchemeChoice | None) -> SchemeChoice | None:
    """The selection's outcome without its data-dependent diagnostic (the nodes scored)."""
    return None if choice is None else replace(choice, scored=None)


# -- steps shared by the engines (the Spark engine, crowdsafe.engines.spark.publish, calls them) --


def ledger_request(
    ledger: Ledger, identity: str, label: str, publish_plan: PublishPlan, strongly_safe: bool,
    budget: tuple[float, float] | None, randomness: Randomness, notes: list[str],
) -> dict[str, Any]:
    """Refuse a consumed sample or an exhausted budget (nothing is charged yet); register a budget
    for a dataset without one; return the keyword arguments of the ``dps-release`` charge.
    ``identity``: the dataset's digest keyed with ``ledger.identity_key``."""
    consumed = ledger.consumed_by(identity)
    if consumed is not None:
        raise SampleReuseError(
            f"this data is a sample already used by the DPS release #{consumed} in {ledger.path}: "
            "a sample may be used only once; publish from the full dataset instead"
        )
    if ledger.budget(identity) is None:
        if budget is None:
            budget = (publish_plan.total_epsilon, publish_plan.total_delta)
            notes.append(
                f"no budget was set for '{label}': registered this publication's cost "
                f"(epsilon = {budget[0]:.6g}, delta = {budget[1]:.3g}) as its total budget, so any further "
                "query or release on it is refused; set a larger budget with `crowdsafe ledger init`"
            )
        ledger.set_budget(identity, label, *budget)
    kind = "strongly safe" if strongly_safe else "epsilon1-safe"
    charge_request: dict[str, Any] = dict(
        epsilon=publish_plan.epsilon, delta=publish_plan.delta, kind="dps-release",
        description=f"publish {label}: {publish_plan.releases} x sampling (beta = {publish_plan.beta:.4g}) + "
        f"{kind} k-anonymization (k = {publish_plan.k})",
        mechanism="sampling + safe k-anonymization (Li, Qardaji, Su 2012)",
        repetitions=publish_plan.releases, delta_slack=0.0, sample_rate=publish_plan.beta,
        seeded=randomness.seeded, details={"plan": publish_plan.as_dict()},
    )
    placeholder = [f"pending-{i}" for i in range(publish_plan.releases)]
    ledger.check(identity, **charge_request, sample_ids=placeholder)
    return charge_request


def ledger_summary(ledger: Ledger, charge: Any, label: str, identity: str) -> dict[str, Any]:
    """The publication's ledger entry (custodian-only: it holds the keyed identity)."""
    budget_now = ledger.budget(identity)
    assert budget_now is not None
    return {
        "path": str(ledger.path),
        "dataset": label,
        "dataset_identity": identity,
        "entry": charge.entry_id,
        "charged": charge.loss.as_dict(),
        "budget": budget_now.as_dict(),
    }


def stop_if_heavy(suppression_rates: Sequence[float], max_suppression: float, force: bool) -> None:
    """Stop (nothing written; the budget is spent) when a release suppresses more than
    ``max_suppression`` of its sample. The rates are exact counts on the samples, not DP
    outputs, so the message states only the public threshold: whether the stop fired is itself
    a custodian-only fact (the rates are in the custodian report and the ledger entry)."""
    if not force and max(suppression_rates) > max_suppression:
        raise ParameterError(
            f"stopped after the charge (the budget is spent; nothing was written): a release would suppress "
            f"more than {max_suppression:.0%} of its sampled rows. This is a custodian-only fact, not covered "
            "by the guarantee: do not publish it (the exact rates are in the custodian report and the ledger "
            "entry). Use a coarser scheme (--scheme coarse or higher levels), a larger epsilon or delta "
            "(smaller k), a larger beta, or fewer quasi-identifiers; --force writes it anyway"
        )


def checked_certificate(releases: Sequence[Release], facts: Sequence[Mapping[str, Any]], max_suppression: float,
                        force: bool) -> Certificate:
    """The certificate of the whole publication (one release's, or the composition of several),
    after :func:`stop_if_heavy` has let it through (``facts``: each release's custodian facts)."""
    stop_if_heavy([f["suppression_rate"] for f in facts], max_suppression, force)
    if len(releases) == 1:
        return releases[0].certificate
    return compose_certificates([r.certificate for r in releases], delta_slack=0.0)


def certify_release(
    publish_plan: PublishPlan, columns: Sequence[str], scheme: GeneralizationScheme, profile: RecodingProfile,
    choice: SchemeChoice | None, release_id: str, stream: Randomness, recorded: bool,
) -> tuple[Certificate, dict[str, Any]]:
    """The certificate of one release (Theorem 5 for a fixed scheme, Theorem 6 for the exponential
    mechanism's choice; ``profile`` from :func:`choose_recoding`), derived from what ran; and the
    parameters it records. ``release_id``: from :func:`new_release_id`; ``recorded``: whether a
    ledger recorded the run (without one the certificate is not fit for release). Only
    parameters and the chosen scheme (the DP output) enter it."""
    parameters: dict[str, Any] = {
        "quasi_identifiers": list(columns),
        "scheme": dict(scheme.levels),
        "scheme_level_names": scheme.describe().get("level_names", {}),
        "delta_target": publish_plan.delta_target,
    }
    if choice is not None:
        parameters["selection"] = public_choice(choice).describe()  # type: ignore[union-attr]
    accounting = {"ledger": bool(recorded)}
    if not recorded:
        accounting["note"] = "no ledger: nothing records the sample's use or limits further releases"
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
    return certificate, parameters


def _write_all(releases: Sequence[Release], certificate: Certificate, paths: Sequence[Path], *,
               escape_formulas: bool = True) -> dict[str, Any]:
    """Write every table with its certificate (and, for several, the composed certificate at
    ``<stem>.certificate.json`` of the first name without its number), all or nothing. CSV cells
    are formula-safe unless ``escape_formulas`` is False; every certificate written carries the
    format note of its file (:func:`crowdsafe.csv_safety.format_note`)."""
    tables = [str(p) for p in paths]
    certificates = [str(certificate_path(p)) for p in paths]
    with contextlib.ExitStack() as stack:
        for release, path in zip(releases, paths):
            table_tmp = stack.enter_context(atomic_path(path))
            certificate_tmp = stack.enter_context(atomic_path(certificate_path(path)))
            if path.suffix.lower() == ".csv" and isinstance(release.applied, AppliedCounts):
                applied, scheme = release.applied, release.recoding
                write_classes_csv(class_frame(applied, scheme, release.quasi_identifiers),  # type: ignore[arg-type]
                                  applied.published_class_sizes, table_tmp, escape_formulas=escape_formulas)
            elif path.suffix.lower() == ".csv":
                write_csv(release.frame, table_tmp, escape_formulas=escape_formulas)
            else:
                release.frame.write_parquet(table_tmp)
            note = format_note(path, escape_formulas=escape_formulas)
            certificate_tmp.write_text(release.certificate.with_format_notes(note).to_json(), encoding="utf-8")
        combined = None
        if len(releases) > 1:
            first = paths[0]
            combined = first.with_name(first.stem.rsplit("-", 1)[0] + ".certificate.json")
            note = format_note(first, escape_formulas=escape_formulas)
            stack.enter_context(atomic_path(combined)).write_text(certificate.with_format_notes(note).to_json(),
                                                                  encoding="utf-8")
    return {"tables": tables, "certificates": certificates, "combined_certificate": str(combined) if combined else None}
