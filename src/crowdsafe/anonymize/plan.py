"""The plan of a publication: everything the safe pipeline fixes before the data is read.

From the per-release target (ε, δ) the planner fills in what the user did not fix: ε1 (the
exponential mechanism's share, from the lattice's size: :func:`planned_epsilon1`), the sampling
rate β (:func:`best_rate`) and the smallest k with d(k, β, ε − ε1) ≤ δ
(:func:`crowdsafe.privacy.plan`), and the cost of several releases on fresh samples
(:func:`crowdsafe.privacy.compose_homogeneous`). The plan reads no data: it is public, and the
certificate of every release repeats it (Li, Qardaji and Su 2012, Theorems 5 and 6). What the
plan depends on is one :class:`PlanRequest`, built once by :func:`crowdsafe.api.publish` (or
:func:`crowdsafe.api.plan_publish`, the CLI) and passed down unchanged.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from crowdsafe.anonymize.objective_rules import COUNT_RULE as COUNT_RULE  # re-exported: the plan's rules
from crowdsafe.anonymize.objective_rules import (
    DEFAULT_BLUNT_RULE,
    DEFAULT_CAPPED_RULE,
    DEFAULT_MARGINALS_RULE,
    DEFAULT_TABLE_RULE,
    DEFAULT_UNDECLARED_RULE,
    DEFAULT_UNPLANNED_RULE,
    marginals_resolution,
)
from crowdsafe.anonymize.objective_rules import TABLE_RULE as TABLE_RULE
from crowdsafe.anonymize.objective_rules import TABLE_RULE_GIVEN as TABLE_RULE_GIVEN
from crowdsafe.anonymize.rate import BETA_RULE, _rate_range, check_beta_leaves_epsilon1, solve_plan
from crowdsafe.anonymize.rate import best_rate as best_rate  # re-exported: the planner's rate
from crowdsafe.defaults import (
    COUNT_SHARE,
    EPSILON1_LOSS_CLASSES,
    EPSILON1_SHARE_RANGE,
    EPSILON1_SHARE_UNSIZED,
    MARGINALS_RESOLUTION_ROWS,
    MAX_CANDIDATES,
)
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import large_count, rounded_down, rounded_up
from crowdsafe.privacy import compose_homogeneous
from crowdsafe.privacy.amplification import largest_rate_for_epsilon
from crowdsafe.privacy.planning import MAX_K, check_rate_above_delta, check_sampled_epsilon, least_k

#: ε1's share of ε when the lattice's size is unknown (:data:`crowdsafe.defaults.EPSILON1_SHARE_UNSIZED`).
DEFAULT_EPSILON1_SHARE = EPSILON1_SHARE_UNSIZED
#: The most releases one publication makes (a larger number is refused before any planning).
MAX_RELEASES = 1000


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """What the plan of a publication depends on: the parameters the user gives, fixed before the
    data is read (part (a) of the privacy boundary), checked by :func:`plan_publication`.

    - ``epsilon``, ``delta``: the target guarantee of one release (ε includes ε1);
    - ``k``: the least class size, at least 2 (None: the smallest k whose d(k, β, ε − ε1) ≤ δ);
    - ``beta``: the sampling rate, strictly between δ and 1 (None: the planner's, :func:`best_rate`);
    - ``epsilon1``: the exponential mechanism's share of ε (None: the planner's, or 10% of ε
      without ``candidates``; must be None or 0 with a fixed scheme);
    - ``scheme``: a fixed scheme (preset and/or ``col=level`` text, or levels per column): the
      recoding is then strongly safe; None: the exponential mechanism chooses one on the sample;
    - ``releases``: the number of releases, each on a fresh independent sample (1 to
      :data:`MAX_RELEASES`);
    - ``objective``, ``target``: what the selection optimises
      (:mod:`crowdsafe.selection.score`; ``target`` for ``classification``);
    - ``columns``: exactly the published columns, when the user chose them (None: the
      quasi-identifiers and sensitive attributes);
    - ``candidates``: the number of lattice nodes the selection chooses among (public: from the
      hierarchies' heights), for the planner's ε1; None when not known;
    - ``declared_domains``: whether every published column has a declared hierarchy (public: from
      the schema), which the default objective needs for ``marginals`` (:func:`default_objective`);
      None when not known;
    - ``table_counts``: whether the engine holds the whole table's frequency table for the selection
      (the Polars engine on a table in memory): where the planner holds ε1 at the top of its range
      the selection then reads the table instead of the sample (:data:`TABLE_RULE`).
    """

    epsilon: float
    delta: float
    k: int | None = None
    beta: float | None = None
    epsilon1: float | None = None
    scheme: str | Mapping[str, int] | None = None
    releases: int = 1
    objective: str | None = None
    target: str | None = None
    columns: Sequence[str] | None = None
    candidates: int | None = None
    declared_domains: bool | None = None
    table_counts: bool = False


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
    k_rule: str = "smallest"  # "given", or "smallest" (the least k with d(k, beta, epsilon - epsilon1) <= delta)
    count_share: float = 0.0
    objective_rule: str = "given"
    #: what the exponential mechanism scores: the sample (Theorem 6), or the whole table (:data:`TABLE_RULE`)
    selection_source: str = "sample"

    @property
    def epsilon_anon(self) -> float:
        return self.epsilon - self.epsilon1

    @property
    def strongly_safe(self) -> bool:
        return self.scheme is not None

    def __repr__(self) -> str:
        chooser = f"scheme={self.scheme!r}" if self.scheme is not None else \
            f"epsilon1={rounded_up(self.epsilon1, 4)}, objective={self.objective!r}"  # a loss: up
        return (f"PublishPlan(epsilon={rounded_up(self.epsilon)}, delta={rounded_up(self.delta, 3)}, k={self.k}, "
                f"beta={rounded_down(self.beta, 4)}, {chooser}, releases={self.releases})")  # a rate typed back: down

    def _repr_html_(self) -> str:
        """The notebook view (:mod:`crowdsafe.report.views`): public, fixed before the data is read."""
        from crowdsafe.report.views import plan_html

        return plan_html(self)

    def expected_sample_rows(self, rows: int) -> float:
        """Rows expected in each sample of a table of ``rows`` rows (n·β), before suppression.
        ``rows`` is an exact fact about the data: the result is custodian-only."""
        from crowdsafe.anonymize.plan_inputs import check_rows

        return check_rows(rows) * self.beta

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
            "objective_rule": None if self.strongly_safe else self.objective_rule,
            "target": self.target,
            "columns": list(self.columns) if self.columns is not None else None,
            "candidates": self.candidates,
            "epsilon1_rule": self.epsilon1_rule,
            "beta_rule": self.beta_rule, "k_rule": self.k_rule,
            "count_share": self.count_share,
            "count_rule": COUNT_RULE if self.count_share else None,
            "selection_source": None if self.strongly_safe else self.selection_source,
            "selection_rule": None if self.strongly_safe or self.selection_source != "table"
            else TABLE_RULE_GIVEN if self.epsilon1_rule == "given" else TABLE_RULE,
            "releases": self.releases,
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "composition": self.composition,
            "explanation": self.explanation,
        }


def plan_publication(request: PlanRequest) -> PublishPlan:
    """The plan of a publication for the per-release target (ε, δ); reads no data.

    A fixed ``scheme`` makes the recoding strongly safe (ε1 = 0, and giving ε1 is an error).
    Otherwise the exponential mechanism chooses the scheme under ``objective``
    (:mod:`crowdsafe.selection.score`; ``target`` for classification) among ``candidates``
    lattice nodes (a public number, from the hierarchies' heights); ε1 is then, unless given,
    the planner's choice (:func:`planned_epsilon1`), or 10% of ε when ``candidates`` is unknown.
    ``columns``: the published columns, when the user chose them. ``k`` must be at least 2.
    Raises ParameterError for anything the theorems do not allow (ε below −ln(1 − β) + ε1,
    β ≤ δ, ...): the checks of ``request`` are all here, before anything is read or charged.
    """
    return _solved(_checked(request))


def check_candidates(candidates: int) -> None:
    """Refuse a selection among more than :data:`~crowdsafe.defaults.MAX_CANDIDATES` candidate
    schemes: the exact search holds about 300 bytes per candidate (the limit's comment has the
    measurements), so a larger lattice would run out of memory after the ledger's charge. The
    number is public (the hierarchies' heights and the objective), so the refusal is the plan's,
    before anything is read or charged."""
    if int(candidates) > MAX_CANDIDATES:
        raise ParameterError(
            f"the exponential mechanism would choose among {large_count(candidates)} candidate schemes, more than the "
            f"{MAX_CANDIDATES:,} its exact search holds in memory; make fewer columns quasi-identifiers (declare "
            "the others' roles in a schema), publish fewer columns with the columns parameter, give shorter "
            "hierarchies, or fix the scheme with the scheme parameter (nothing was charged)",
            parameter=("columns", "scheme"))


def check_publication(request: PlanRequest, *, lattice_later: bool = False) -> None:
    """Refuse exactly the requests :func:`plan_publication` refuses, with the same message, and
    return nothing: the check a command makes before anything is read, when the plan it runs is
    made later (with the lattice's size, at the planner's ε1).

    ``lattice_later``: the plan that runs will know the lattice's size, so the planner's ε1 then
    lies anywhere in its range (1%–50% of ε), not at the 10% a plan without the size takes. With
    β or k given (and neither ε1 nor a scheme) only the parameters' checks run then, among them
    that β leaves the least ε1 of the range: the solve at 10% would refuse a β or k the plan that
    runs accepts (β = 0.09 at ε = 0.1, which leaves ε1 up to 5.7% of ε).

    The checks of the parameters are :func:`plan_publication`'s own. The solve (about 25 ms at
    ε = 1, all of it :func:`best_rate`) is skipped only where it provably succeeds: one release,
    neither β nor k given, the largest admitted rate below 1 − 1e-9 (so the planner's rate range
    ends at it), and a k at the lowest rate of that range (:func:`least_k`). Then
    :func:`best_rate` finds a rate, since that rate is the first of its grid; the rate it returns
    was found feasible for some k ≤ MAX_K (a grid rate, or a β that
    :func:`~crowdsafe.privacy.planning.largest_beta` verified), lies in (δ, 1 − 1e-9] and above
    the sampling floor, so the planning module's plan at that rate finds its k, by the
    invariants its search rests on (d falls as k grows; d is evaluated at every k up to MAX_K);
    and one release composes to itself. Anywhere else the plan is solved, as before
    (tests/anonymize/test_plan_check.py compares the two on random parameters)."""
    checked = _checked(request)
    if (lattice_later and request.candidates is None and request.scheme is None and checked.given_epsilon1 is None
            and (request.beta is not None or request.k is not None)):
        return
    if not _solves(checked):
        _solved(checked)


@dataclass(frozen=True, slots=True)
class _Checked:
    """A :class:`PlanRequest` whose parameters passed :func:`plan_publication`'s checks, with what
    the checks fixed: ε1 (0 with a scheme, 10% of ε when not given), the scheme's text, the
    objective, and the ε1 rule in words."""

    request: PlanRequest
    epsilon1: float
    given_epsilon1: float | None
    scheme_text: str | None
    objective: Any
    rule: str


def _checked(request: PlanRequest) -> _Checked:
    """The checks of :func:`plan_publication`, in its order; raises its ParameterErrors."""
    from crowdsafe.anonymize.plan_inputs import check_plan_inputs
    from crowdsafe.selection.score import make_objective

    epsilon, delta, k, beta, epsilon1 = request.epsilon, request.delta, request.k, request.beta, request.epsilon1
    scheme, releases, objective, target = request.scheme, request.releases, request.objective, request.target

    if isinstance(releases, bool) or not isinstance(releases, (int, np.integer)) or releases < 1:
        raise ParameterError(f"the number of releases must be a whole number >= 1, got {releases!r}")
    if releases > MAX_RELEASES:  # first: composing (and drawing) that many is slow
        raise ParameterError(f"the number of releases must be at most {MAX_RELEASES:,} (each is a table, a "
                             f"certificate and a report written), got {releases!r}", parameter="releases")
    chosen_objective = make_objective(objective, target)
    check_plan_inputs(request)  # candidates, the scheme's levels
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2):
        whole = isinstance(k, (int, np.integer)) and not isinstance(k, bool)
        why = ("with k = 1 nothing is suppressed and no guarantee holds" if whole and k == 1
               else f"k is the fewest rows a published group may have, and {k!r} rows is no group" if whole
               else "k is a number of rows")
        raise ParameterError(f"k must be a whole number >= 2, got {k!r}: {why}; leave k out to get the smallest k "
                             "that reaches delta")
    if k is not None and k > MAX_K:
        raise ParameterError(f"k must be at most {MAX_K:,} (the largest k the planner searches), got {k!r}")
    if not isinstance(epsilon, (int, float)) or isinstance(epsilon, bool) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ParameterError(f"epsilon must be a finite number > 0, got {epsilon!r}", parameter="epsilon")
    if not isinstance(delta, (int, float)) or isinstance(delta, bool) or not 0 < delta < 1:
        raise ParameterError(f"delta must satisfy 0 < delta < 1 (sampling and k-anonymity give (epsilon, delta)-DP "
                             f"with delta > 0), got {delta!r}", parameter="delta")
    scheme_text: str | None = None
    given_epsilon1 = epsilon1
    if scheme is not None:
        if epsilon1 not in (None, 0, 0.0):
            raise ParameterError(
                "a fixed scheme is chosen without looking at the data, so it spends no epsilon1; "
                "drop the epsilon1 parameter, or drop the scheme parameter to let the exponential mechanism choose",
                parameter=("epsilon1", "scheme"),
            )
        epsilon1 = 0.0
        scheme_text = scheme if isinstance(scheme, str) else ",".join(f"{c}={v}" for c, v in scheme.items())
    elif epsilon1 is None:
        epsilon1 = DEFAULT_EPSILON1_SHARE * float(epsilon)
    elif isinstance(epsilon1, bool) or not isinstance(epsilon1, (int, float)) or not epsilon1 > 0:  # ('0.1': TypeError)
        raise ParameterError(
            f"epsilon1 must be > 0 when the scheme is chosen from the data, got {epsilon1!r}; "
            "give a fixed scheme with the scheme parameter for a strongly safe release",
            parameter=("epsilon1", "scheme"),
        )
    if not epsilon1 < epsilon:
        raise ParameterError(f"epsilon1 = {epsilon1:g} must be below epsilon = {epsilon:g}")
    if scheme is None and request.candidates is not None:
        check_candidates(request.candidates)
    if beta is not None and not (isinstance(beta, (int, float)) and 0 < beta < 1):
        raise ParameterError(f"beta must lie strictly between 0 and 1, got {beta!r}")
    if beta is not None and not beta > delta:
        raise ParameterError(
            f"(beta, epsilon, delta)-DPS needs beta > delta, got beta = {beta:g}, delta = {delta:g}; "
            "lower delta or raise beta"
        )
    if beta is not None and scheme is None and given_epsilon1 is None:  # no ε1 the planner gives fits
        check_beta_leaves_epsilon1(float(epsilon), float(beta))
    if beta is None:  # beta = 1 - e^-(epsilon - epsilon1) must stay below 1 (a double) and above delta
        share = DEFAULT_EPSILON1_SHARE if scheme is None and given_epsilon1 is None else None
        check_sampled_epsilon(float(epsilon), float(epsilon1), share)
        check_rate_above_delta(float(epsilon), delta, float(epsilon1), share)
    # planned_epsilon1 gives its own rule
    rule = ("none (fixed scheme)" if scheme is not None else "given" if given_epsilon1 is not None
            else f"{DEFAULT_EPSILON1_SHARE:.0%} of epsilon (the lattice size was not known to the planner)")
    return _Checked(request, float(epsilon1), given_epsilon1, scheme_text, chosen_objective, rule)


def _solves(checked: _Checked) -> bool:
    """Whether the plan of ``checked`` provably solves without solving it (:func:`check_publication`)."""
    request = checked.request
    if request.beta is not None or request.k is not None or request.releases != 1:
        return False
    if request.scheme is None and checked.given_epsilon1 is None and request.candidates is not None:
        return False  # the planner's ε1 (planned_epsilon1): solved
    epsilon, delta, epsilon1 = float(request.epsilon), float(request.delta), checked.epsilon1
    low, top = _rate_range(epsilon, delta, epsilon1)
    if top != largest_rate_for_epsilon(epsilon, epsilon1):
        return False
    try:
        least_k(epsilon, delta, low, epsilon1)
    except ParameterError:
        return False
    return True


def _solved(checked: _Checked) -> PublishPlan:
    """The plan of a checked request (:func:`plan_publication`)."""
    request, epsilon1, given_epsilon1 = checked.request, checked.epsilon1, checked.given_epsilon1
    epsilon, delta, k, beta = request.epsilon, request.delta, request.k, request.beta
    scheme, releases, candidates, columns = request.scheme, request.releases, request.candidates, request.columns
    chosen_objective, rule = checked.objective, checked.rule
    objective_rule = "given" if request.objective is not None else default_objective_rule(checked)
    if scheme is None and candidates is not None:
        if request.objective is None:
            chosen_objective, objective_rule = default_objective(
                float(epsilon), float(delta), beta, k, int(candidates), request.declared_domains, float(epsilon1),
                request.table_counts, given_epsilon1)
        # ε1 held at the top of its range on the sample (the cheap split, cached): the sample is too
        # small to choose on. The whole table when the engine holds it (TABLE_RULE, with ε1 planned for
        # its classes of k/β rows), else a noisy count of the sample sizes the candidates. A given ε1 is
        # spent as given, on the data the planner's own rule picks (sample_too_small)
        capped = sample_too_small(float(epsilon), float(delta), beta, k, int(candidates), chosen_objective.monotone,
                                  float(epsilon1), given_epsilon1)
        source = "table" if capped and request.table_counts else "sample"
        if given_epsilon1 is None:
            try:
                solved, rule, _ = planned_epsilon1(float(epsilon), float(delta), beta, k, int(candidates),
                                                   chosen_objective.monotone, float(epsilon1), source == "table")
            except ParameterError as error:  # the β or k given, at the cap on the sample (epsilon1_split)
                if source == "table" or not capped or (beta is None and k is None):
                    raise
                raise ParameterError(
                    f"{error} (epsilon1 = {EPSILON1_SHARE_RANGE[1] * epsilon:g}, {EPSILON1_SHARE_RANGE[1]:.0%} of "
                    "epsilon, is the planner's for a choice on the sample at this epsilon, where the sample is too "
                    "small to choose on and the engine does not hold the table's counts; or give a smaller "
                    "epsilon1)", parameter=error.parameters) from error
        else:
            solved = solve_plan(float(epsilon), float(delta), beta, k, float(epsilon1))
        count_share = COUNT_SHARE if capped and source == "sample" else 0.0
    else:
        count_share, source = 0.0, "sample"
        solved = solve_plan(float(epsilon), float(delta), beta, k, float(epsilon1))
    composed = compose_homogeneous(solved.epsilon, solved.delta, int(releases), 0.0)
    return PublishPlan(
        epsilon=solved.epsilon,
        delta=solved.delta,
        k=solved.k,
        beta=solved.beta,
        epsilon1=solved.epsilon1,
        scheme=checked.scheme_text,
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
        k_rule="given" if k is not None else "smallest", count_share=count_share,
        objective_rule=objective_rule,
        selection_source=source,
    )


# The planner's ε1 (crowdsafe.defaults, where the command line's help reads them): the exponential
# mechanism's 95% utility bound is held to EPSILON1_LOSS_CLASSES classes at the threshold k (in
# score units, each row worth Δq), within EPSILON1_SHARE_RANGE of ε. One class: on Adult at ε = 1
# the default objective then keeps age as intervals in 20 of 20 seeds (18 of 20 with two classes;
# docs/objectives.md).


def planned_epsilon1(epsilon: float, delta: float, beta: float | None, k: int | None, candidates: int,
                     monotone: bool, start: float, on_table: bool = False) -> tuple[Any, str, bool]:
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
    Plan), the rule in words, and whether ε1 is held at the top of its range (``capped``: the
    bound wants more than half of ε).

    Small ε. When ε1 is capped, the selection is known, from public quantities alone, to be too
    blunt to find the few good nodes among all L: its 95% bound exceeds one class of k rows. The
    plan then gives Am a noisy count of the sample (``count_share`` = :data:`COUNT_SHARE` of ε1;
    :mod:`crowdsafe.selection.candidates`), which keeps only the nodes with at most ρ · n̂ / k
    possible tuples: those a sample of about n̂ rows can fill with classes of k, so the expected
    release is not mostly suppressed, whatever the table's size (which the plan does not know).
    When the engine holds the table, the selection reads it instead (:data:`TABLE_RULE`), and
    ``on_table`` plans ε1 for that choice: its classes have k/β rows, so the same bound asks for β
    times less, ε1 = m (ln L + ln 20) · β / k, and the rest of ε buys a larger sample.
    """
    epsilon1, capped = epsilon1_split(epsilon, delta, beta, k, candidates, monotone, start, on_table)
    solved = solve_plan(epsilon, delta, beta, k, epsilon1)
    m = 1.0 if monotone else 2.0
    held = "k/beta dq, one class of the whole table," if on_table else "k dq"
    rule = (f"planned: the selection's 95% utility bound (m dq / epsilon1)(ln L + ln 20) held to "
            f"{EPSILON1_LOSS_CLASSES:g} {held} at the largest admitted rate (L = {candidates:,} candidate nodes, "
            f"m = {m:g}), within {EPSILON1_SHARE_RANGE[0]:.0%}-{EPSILON1_SHARE_RANGE[1]:.0%} of epsilon")
    return solved, rule, capped


@functools.lru_cache(maxsize=256)
def epsilon1_split(epsilon: float, delta: float, beta: float | None, k: int | None, candidates: int,
                   monotone: bool, start: float, on_table: bool = False) -> tuple[float, bool]:
    """:func:`planned_epsilon1`'s ε1 and whether it is held at the top of its range (``capped``),
    before the rate is chosen: the fixed-point iteration alone (a few evaluations of d)."""
    low, high = EPSILON1_SHARE_RANGE[0] * epsilon, EPSILON1_SHARE_RANGE[1] * epsilon
    m = 1.0 if monotone else 2.0
    epsilon1 = start

    def sizing(epsilon1: float, near: int | None) -> tuple[int, float]:
        """(k, β) at the largest admitted rate (or the β or k given), or the planner's where no k
        fits that rate; ``near``: the previous iteration's k, a guess that saves evaluations of d."""
        try:
            if k is None:
                rate = beta if beta is not None else largest_rate_for_epsilon(epsilon, epsilon1)
                return max(least_k(epsilon, delta, rate, epsilon1, near=near), 2), rate
            solved = solve_plan(epsilon, delta, beta, k, epsilon1, largest_rate=True)
        except ParameterError:
            solved = solve_plan(epsilon, delta, beta, k, epsilon1)
        return solved.k, solved.beta

    def needed(sized: tuple[int, float]) -> float:  # the ε1 the bound asks for at (k, β), before the range
        classes = sized[0] / sized[1] if on_table else sized[0]  # a class of the sample, or of the table
        return m * (math.log(candidates) + math.log(20.0)) / (EPSILON1_LOSS_CLASSES * classes)

    def bounded(epsilon1: float) -> float:  # the ε1 the bound asks for at ε1's (k, β), within the range
        return min(high, max(low, needed(sizing(epsilon1, None))))

    # The β or k given may admit no plan at some ε1 (below the sampling floor, or no k): feasibility
    # holds below a bound, and there the wanted ε1 falls as ε1 grows (k grows towards the floor), so
    # the fixed point lies below the first infeasible ε1, found by bisection; unless the choice on the
    # sample wants the cap: then it is too blunt at any ε1 the parameters allow, as when the cap holds
    # ε1 (capped: the table rule follows where it applies, else _solved refuses at the cap)
    def bisected(feasible: float, infeasible: float) -> tuple[float, bool]:
        found, floored = _bisected(feasible, infeasible, bounded, 1e-4 * epsilon)
        return (high, True) if floored and not on_table else (found, False)

    try:
        sized = sizing(epsilon1, None)
    except ParameterError:
        sizing(low, None)  # no plan even at the least ε1: the refusal is the planning module's
        return bisected(low, epsilon1)
    for _ in range(20):
        wanted = min(high, max(low, needed(sized)))
        if abs(wanted - epsilon1) <= 1e-4 * epsilon:
            break
        try:
            sized = sizing(wanted, sized[0])
        except ParameterError:
            return (high, True) if not on_table and wanted >= high else bisected(epsilon1, wanted)
        epsilon1 = wanted
    return epsilon1, epsilon1 >= high and needed(sized) >= high


def _bisected(feasible: float, infeasible: float, wanted: Any, tolerance: float) -> tuple[float, bool]:
    """The fixed point ε1 = wanted(ε1) between ``feasible`` (where wanted(ε1) ≥ ε1) and
    ``infeasible`` (where ``wanted`` raises ParameterError), by bisection: wanted falls as ε1
    grows, since k grows as ε − ε1 nears the sampling floor. Returns a feasible ε1 and whether it
    is the edge of the feasible ε1 (``floored``: wanted exceeds every feasible ε1) rather than the
    fixed point."""
    floored = True
    while infeasible - feasible > tolerance:
        middle = 0.5 * (feasible + infeasible)
        try:
            above, feasible_middle = wanted(middle) > middle, True
        except ParameterError:
            above, feasible_middle = False, False
        if above:
            feasible = middle
        else:
            infeasible, floored = middle, not feasible_middle
    return feasible, floored


def sample_too_small(epsilon: float, delta: float, beta: float | None, k: int | None, candidates: int,
                     monotone: bool, start: float, given_epsilon1: float | None) -> bool:
    """Whether the choice of the scheme is too blunt on the sample (:func:`epsilon1_split`'s
    ``capped``): the planner's rule for where the choice reads (the whole table when the engine
    holds its counts, :data:`TABLE_RULE`; else the sample, with a noisy count), from public
    quantities only. With ε1 planned, the split at the β and k given. With ε1 given, the planner's
    own split at this ε and δ (neither β nor k given): the rule then does not depend on ε1, β or k,
    so the plan the planner printed (its k, β, ε1 and objective) given back reads the same data,
    through the same mechanism."""
    if given_epsilon1 is None:
        return epsilon1_split(epsilon, delta, beta, k, candidates, monotone, start)[1]
    return epsilon1_split(epsilon, delta, None, None, candidates, monotone, DEFAULT_EPSILON1_SHARE * epsilon)[1]


def default_objective(epsilon: float, delta: float, beta: float | None, k: int | None, candidates: int,
                      declared_domains: bool | None, start: float, table_counts: bool = False,
                      given_epsilon1: float | None = None) -> tuple[Any, str]:
    """The objective a publication gets when none is given, and the rule in words, from public
    quantities only (the parameters, the number of candidate nodes L, whether every published
    column has a declared hierarchy and whether the engine chooses on the whole table, all fixed
    before the data is read):

    - ``marginals`` (every 1- and 2-way marginal, spread over the leaves) when every published
      column has a declared hierarchy, either the planner's ε1 for it is not held at the top of
      its range (:func:`epsilon1_split`) or it is and the engine holds the table, so the choice
      reads the whole table (:data:`TABLE_RULE`), and at that ε1 the choice resolves scores to at
      most :data:`~crowdsafe.defaults.MARGINALS_RESOLUTION_ROWS` rows per marginal
      (:func:`~crowdsafe.anonymize.objective_rules.marginals_resolution`): a release then serves
      the analyses nobody planned;
    - ``retained`` otherwise: on the sample at small ε (on Adult below ε ≈ 1) ``marginals``, not
      monotone, would need twice the ε1 and its choice is too blunt; on the table at tiny ε (on
      Adult below ε ≈ 0.05) its choice is so blunt that it puts much of its mass on nodes that
      suppress everything, which ``retained`` (monotone, a suppressed row scores nothing) does
      not (docs/publish.md, "The default objective", has the measurements).

    A ``given_epsilon1`` gets the same rule, with :func:`sample_too_small`'s test for a given ε1
    and the resolution at that ε1.
    """
    from crowdsafe.selection.score import make_objective

    if declared_domains is None:
        return make_objective("retained"), DEFAULT_UNPLANNED_RULE.format(
            why="whether every published column has a declared hierarchy was not known to the planner")
    if not declared_domains:
        return make_objective("retained"), DEFAULT_UNDECLARED_RULE
    marginals = make_objective("marginals")
    capped = sample_too_small(epsilon, delta, beta, k, candidates, marginals.monotone, start, given_epsilon1)
    if capped and not table_counts:
        return make_objective("retained"), DEFAULT_CAPPED_RULE
    if given_epsilon1 is not None:
        epsilon1 = given_epsilon1
    else:
        epsilon1, _ = epsilon1_split(epsilon, delta, beta, k, candidates, marginals.monotone, start, on_table=capped)
    rows = marginals_resolution(epsilon1, candidates)
    if rows > MARGINALS_RESOLUTION_ROWS:
        return make_objective("retained"), DEFAULT_BLUNT_RULE.format(rows=rows, epsilon1=epsilon1)
    return marginals, DEFAULT_TABLE_RULE if capped else DEFAULT_MARGINALS_RULE


def default_objective_rule(checked: _Checked) -> str:
    """The rule of a default objective that :func:`default_objective` does not choose: a fixed
    scheme (no objective), or a lattice of unknown size."""
    if checked.request.scheme is not None:
        return "none (fixed scheme)"
    return DEFAULT_UNPLANNED_RULE.format(why="the lattice's size was not known to the planner")
