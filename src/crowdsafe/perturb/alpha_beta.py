"""The α-β algorithm (Rastogi, Suciu, Hong 2007): random deletion and insertion of tuples.

Input: a table I over attributes with *public* domains D_1..D_a, D = D_1 × ... × D_a with
m = Π |D_i| tuples, and a public bound N on its number of rows. Output: a view V that

1. keeps each tuple of I independently with probability α;
2. contains each tuple of D \\ I independently with probability β — drawn as
   K ~ Binomial(m − |I|, β) distinct tuples uniform over D \\ I (mixed-radix indices with
   rejection; per-attribute draws when m ≥ 2^64), never materializing D;
3. is written in the domain's order (a function of the published set alone), so kept and
   inserted tuples cannot be told apart by position;

published with the domains, α and β (in its certificate). For d ≤ γ the view is
(d, γ)-private when α ≤ 1 − d/γ and β ≥ (d/γ)((1 − γ)/(1 − d))α; see
:mod:`crowdsafe.privacy.dgamma` for the conditions, posteriors and the equivalent ε.

**What must be public.** The theorem (Rastogi, Suciu, Hong 2007) is about a domain D fixed before
the data is read, and every parameter the view is published with must be too. So a certified
run needs

- a public domain for every published attribute (:func:`~crowdsafe.perturb.domain.public_values`:
  declared lists, a schema's ``order``, the leaves of a declared hierarchy; the missing value
  in it exactly when the missing-value policy keeps missing values); the active domain would
  disclose which values occur, which nothing covers. A row whose value lies outside the
  public domain is left out of I before the mechanism (a per-row filter: the view of a table
  and of it plus or minus such a row have the same distribution, and the guarantee covers
  everyone whose tuple lies in D); how many rows were left out is custodian-only;
- a public bound N ≥ |I| on the rows (``max_rows``, ``--max-rows``): wherever the exact n would
  enter (d = c·n/m, hence β; the utility bound; the estimator's error bars) N is used instead.
  With d = c·N/m ≥ c·n/m the printed (d, γ) covers every prior the exact n would have (a
  (d', γ) guarantee implies (d, γ) for d ≤ d'), and the error bars stay valid (they grow with
  n). The data is checked against N after it is read (every row, rows outside the domain
  included: N is the declared bound on the table as given); if it holds more rows the run stops
  before any coin is drawn, with a message that reveals only that the bound was exceeded.

Without them the run is refused, unless ``exploratory=True`` (``--exploratory``): the missing
domains are then the active ones, a missing N is the data's n, and the certificate is
"no formal guarantee" with the reason. No exact count of the data (rows, n, duplicates) is in
the certificate or in :meth:`Perturbation.as_dict`; they (and the rows left out as outside the
domain) are in the custodian-only :meth:`Perturbation.custodian_report`.

**Duplicate rows.** The theory treats I as a *set* of tuples: a tuple is in V or not. Keeping
each duplicate row independently would show a tuple held by k rows with probability
1 − (1 − α)^k > α, and a tuple seen twice in V would certainly be real (insertions never repeat
a tuple), breaking the guarantee. So duplicate rows are collapsed to one tuple before
perturbing (``duplicates="collapse"``, the default; n counts distinct tuples and the estimator
estimates distinct tuples), or refused (``duplicates="error"``). To count rows rather than
distinct tuples, publish an attribute that tells the rows apart.

Every per-row step lives in :mod:`crowdsafe.perturb.stages` so another engine can run it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError, SchemaError
from crowdsafe.number_text import rounded_down, rounded_up
from crowdsafe.perturb import stages
from crowdsafe.perturb.domain import (
    DATA,
    TupleDomain,
    domain_missing_error,
    public_domain,
    public_values,
    uncharged_error,
    unreviewed_domains,
)
from crowdsafe.perturb.view import View
from crowdsafe.privacy.certificate import Certificate, ledger_accounting
from crowdsafe.privacy.dgamma import (
    ASSUME_DATA_DOMAIN,
    ASSUME_DATA_N,
    ASSUME_ONE_VIEW,
    ASSUME_SECRET_COINS,
    ASSUME_SET,
    ASSUME_TUPLE_INDEPENDENT,
    THEOREM_DGAMMA,
    AlphaBetaPlan,
    AlphaBetaPlanRequest,
    check_view_size,
    correlation_assumption,
    plan_alpha_beta,
    sizes_read,
)
from crowdsafe.privacy.ledger import ChargeRequest
from crowdsafe.randomness import Randomness, as_randomness

Duplicates = Literal["collapse", "error"]

ESTIMATOR = "EST(Q, V) = (|Q(V)| - beta |Q(D)|) / (alpha - beta), |Q(D)| = product of matching domain sizes"
ASSUME_MAX_ROWS = (
    "max_rows is a public bound on the rows of the data, fixed before it was read (the run checks it); "
    "every parameter that depends on the number n of distinct tuples (d = c n/m, hence beta; the "
    "utility bound; the estimator's error bars) uses max_rows in place of n, so the exact n is not "
    "published (the view's own size is a noisy estimate of it)"
)
#: The certificate's ``max_rows_source`` and ``m_source``: the same words on every table of a kind.
MAX_ROWS_DECLARED = "declared"
MAX_ROWS_FROM_DATA = "the data's n (exploratory): read from the data, custodian-only"
MAX_ROWS_CAPPED_BY_DATA = ("the declared max_rows or the domain size m read from the data, the smaller "
                           "(exploratory): custodian-only")
M_DECLARED = "the declared domain"
M_FROM_DATA = "a domain read from the data (exploratory): custodian-only"
ASSUME_DECLARED_DOMAIN = (
    "the domain D (the per-attribute value lists published with the view) is public: it was fixed "
    "before the data was read (declared lists, schema orders, hierarchy leaves); the epsilon-DP "
    "equivalence holds for neighbours within this fixed domain"
)
CUSTODIAN_ONLY = (
    "CUSTODIAN ONLY: exact facts about the data, covered by no guarantee; never publish this "
    "beside the view"
)


@dataclass(frozen=True, slots=True)
class PerturbRequest:
    """What an α-β plan depends on: the (d, γ) target and the table's public description, all
    fixed before the data is read. :func:`crowdsafe.api.perturb` and
    :func:`crowdsafe.api.plan_perturbation` build it once; the driver, the engines,
    :func:`perturb`, :func:`plan_public` and :func:`~crowdsafe.engines.spark.alpha_beta.perturb_spark`
    take it as it is.

    - ``target``: the (d, γ) target and the planner's options
      (:class:`~crowdsafe.privacy.dgamma.AlphaBetaPlanRequest`).
    - ``attributes``: the published attributes (None: every non-identifier column).
    - ``domains``: declared public value lists per attribute (else the schema's ``order`` or a
      hierarchy's leaves, :func:`~crowdsafe.perturb.domain.public_values`).
    - ``max_rows``: the public bound N on the rows, used in place of n.
    - ``exploratory``: allow the data's own domains and n (certified "no formal guarantee").
    - ``duplicates``: "collapse" duplicate rows to one tuple (the view is a set) or "error".

    Every field is checked where it always was (:func:`prepare` / :func:`plan_public`: the
    attributes, the bound, the domains; then the plan), before any ledger charge or coin.
    """

    target: AlphaBetaPlanRequest
    attributes: Sequence[str] | None = None
    domains: Mapping[str, Iterable[Any]] | None = None
    max_rows: int | None = None
    exploratory: bool = False
    duplicates: Duplicates = "collapse"


@dataclass(frozen=True)
class Table:
    """The input of the algorithm: I's distinct tuples as codes in a domain.

    ``sources`` tells, per attribute, where its domain came from
    (:mod:`crowdsafe.perturb.domain`); ``max_rows`` is the public bound on the rows (None:
    none was declared, an exploratory run); ``outside`` counts the rows left out of I because
    a value lies outside the public domain (custodian-only); ``unreviewed``: the schema choices the
    domains were taken from that a schema draft read from the data, unreviewed
    (:func:`~crowdsafe.perturb.domain.unreviewed_domains`; the view is then not fit for release).
    """

    domain: TupleDomain
    index: np.ndarray | None  # sorted distinct uint64 indices (m < 2^64), else None
    codes: pl.DataFrame | None  # distinct code tuples c0, c1, ... (m >= 2^64), else None
    rows: int  # rows of the input, before anything was left out or collapsed (custodian-only)
    sources: Mapping[str, str]
    max_rows: int | None
    outside: int = 0  # rows left out: a value outside the public domain (custodian-only)
    unreviewed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """The exact number of distinct tuples (custodian-only: never published)."""
        if self.index is not None:
            return len(self.index)
        assert self.codes is not None  # a table holds its index or, past 2^64 tuples, its codes
        return self.codes.height

    @property
    def duplicate_rows(self) -> int:
        return self.rows - self.outside - self.n

    @property
    def n_bound(self) -> int:
        """What the plan uses for n: the public bound min(max_rows, m) (there are at most m
        distinct tuples), or in an exploratory run without max_rows the exact n."""
        return min(self.max_rows, self.domain.size) if self.max_rows is not None else self.n

    @property
    def uncertified_reasons(self) -> list[str]:
        """Why this run carries no formal guarantee (empty: it does)."""
        return uncertified_reasons(self.sources, self.max_rows)


def uncertified_reasons(sources: Mapping[str, str], max_rows: int | None) -> list[str]:
    """Why a run with these domain sources and bound carries no formal guarantee (empty: it does)."""
    reasons = []
    derived = [a for a, source in sources.items() if source == DATA]
    if derived:
        listed = ", ".join(f"'{a}'" for a in derived)
        reasons.append(f"the domain of {listed} was taken from the data (it discloses which values occur)")
    if max_rows is None:
        reasons.append("n was taken from the data (no public max_rows): d, beta and the error bars depend on it")
    return reasons


def default_attributes(dataset: Dataset) -> list[str]:
    """Every attribute except identifiers (which must never be published)."""
    identifiers = set(dataset.schema.identifiers)
    return [name for name in dataset.columns if name not in identifiers]


def check_max_rows(max_rows: int | None, exploratory: bool) -> int | None:
    """A public bound on the rows: a whole number >= 1, required unless the run is exploratory."""
    if max_rows is None:
        if not exploratory:
            raise ParameterError(
                "declare a public bound on the number of rows with max_rows=N, fixed "
                "without looking at the data: d = c n/m, beta and the error bars use it in place of the "
                "exact n; or pass exploratory=True for an uncertified run",
                parameter=("max_rows", "exploratory"),
            )
        return None
    if isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)) or max_rows < 1:
        raise ParameterError(f"max_rows must be a whole number >= 1, got {max_rows!r}")
    return int(max_rows)


def bound_exceeded(max_rows: int) -> ParameterError:
    """The refusal when the data holds more rows than its declared public bound.

    It says only that the bound was exceeded (not by how much): no coin was drawn, nothing was
    written and no guarantee was spent, but the refusal itself is one bit about the data.
    """
    return ParameterError(
        f"the data holds more than max_rows={max_rows:,} rows: nothing was perturbed or written; "
        "this refusal tells whoever reads it that the bound is exceeded (keep it to the custodian); "
        "choose a larger bound from public knowledge, not from this data",
        parameter="max_rows",
    )


def resolve_domain(
    dataset: Dataset, names: list[str], domains: Mapping[str, Iterable[Any]] | None, exploratory: bool
) -> tuple[dict[str, Any], dict[str, str]]:
    """The public value lists and their sources; refuses missing ones unless exploratory."""
    values, sources = public_values(dataset, names, domains)
    missing = [a for a in names if a not in values]
    if missing and not exploratory:
        raise domain_missing_error(missing)
    return values, {a: sources.get(a, DATA) for a in names}


def prepare(
    dataset: Dataset,
    attributes: Sequence[str] | None = None,
    *,
    domains: Mapping[str, Iterable[Any]] | None = None,
    duplicates: Duplicates = "collapse",
    max_rows: int | None = None,
    exploratory: bool = False,
) -> Table:
    """Encode the data's tuples in their public domain, leave out the rows outside it and
    collapse duplicate rows.

    Refused before the data's values are read when an attribute has no public domain or no
    ``max_rows`` is given (unless ``exploratory``); refused after when the data holds more than
    ``max_rows`` rows (every row counts) or, with ``duplicates="error"``, repeats a tuple. A
    row with a value outside its public domain is not refused: it is left out of I
    (:attr:`Table.outside`, custodian-only). See the module docs.
    """
    names = check_attributes(dataset, attributes, duplicates)
    max_rows = check_max_rows(max_rows, exploratory)
    public, sources = resolve_domain(dataset, names, domains, exploratory)
    frame = dataset.frame.select(names)
    if max_rows is not None and frame.height > max_rows:
        raise bound_exceeded(max_rows)
    domain, codes, outside = build_domain(frame, names, public)
    unreviewed = unreviewed_domains(dataset, sources)
    if domain.indexable:
        index = np.asarray(pl.Series(domain.index(codes)).unique().sort().to_numpy(), dtype=np.uint64)
        table = Table(domain, index, None, frame.height, sources, max_rows, outside, unreviewed)
    else:
        distinct = pl.DataFrame({f"c{i}": codes[a] for i, a in enumerate(names)}).unique()
        table = Table(domain, None, distinct, frame.height, sources, max_rows, outside, unreviewed)
    if duplicates == "error" and table.duplicate_rows:
        raise duplicates_error()
    return table


def check_attributes(dataset: Dataset, attributes: Sequence[str] | None, duplicates: str) -> list[str]:
    """The attributes to publish (default: every non-identifier), checked against the data."""
    names = list(attributes) if attributes is not None else default_attributes(dataset)
    if not names:
        raise ParameterError("choose at least one attribute to publish")
    absent = [a for a in names if a not in dataset.columns]
    if absent:
        raise SchemaError(f"no column named '{absent[0]}'; the columns are: {', '.join(dataset.columns)}")
    if len(set(names)) != len(names):
        raise ParameterError("an attribute is named twice")
    identifiers = [a for a in names if a in dataset.schema.identifiers]
    if identifiers:
        raise ParameterError(f"'{identifiers[0]}' is an identifier: it must not be published")
    if duplicates not in ("collapse", "error"):
        raise ParameterError(f"duplicates must be 'collapse' or 'error', got {duplicates!r}")
    return names


def duplicates_error() -> ParameterError:
    """The refusal of duplicate rows; it does not say how many there are (a fact about the data)."""
    return ParameterError(
        "some rows repeat another row's tuple over the published attributes; "
        "the alpha-beta algorithm publishes a set: use duplicates='collapse' "
        "or publish an attribute that tells the rows apart (a custodian-only fact about the data: "
        "duplicates='error' checks the data itself; nothing was charged)", parameter="duplicates",
    )


def _active(domain: TupleDomain | None) -> TupleDomain:
    assert domain is not None  # asked only for an attribute without a public domain
    return domain


def build_domain(
    frame: pl.DataFrame, names: list[str], public: Mapping[str, Any]
) -> tuple[TupleDomain, dict[str, np.ndarray], int]:
    """The domain (public value lists where given, else the active domain), the codes of the
    rows inside it, and how many rows were left out because a value lies outside a public list
    (custodian-only). An active domain is taken from the rows kept, so a row left out shows
    nowhere."""
    outside = 0
    codes: dict[str, np.ndarray] = {}
    declared = public_domain(frame, public) if public else None
    if declared is not None:
        codes, inside = declared.encode_within(frame)
        outside = int(inside.size - np.count_nonzero(inside))
        if outside:
            frame = frame.filter(pl.Series(inside))
            codes = {a: c[inside] for a, c in codes.items()}
    rest = [a for a in names if a not in public]
    active, active_codes = TupleDomain.active_of(frame, rest) if rest else (None, {})
    codes.update(active_codes)
    if declared is None:
        assert active is not None  # no public domain: every attribute (at least one) is active
        return active, codes, outside
    values = {a: declared.values[a] if a in public else _active(active).values[a] for a in names}
    return TupleDomain(values, active=active is not None), {a: codes[a] for a in names}, outside


def plan_for(table: Table, target: AlphaBetaPlanRequest) -> AlphaBetaPlan:
    """:func:`~crowdsafe.privacy.dgamma.plan_alpha_beta` for this table's public bound N (in
    place of n) and its domain size m."""
    return plan_alpha_beta(table.n_bound, table.domain.size, target,
                           from_data=sizes_from_data(table.max_rows, table.domain.active))


def sizes_from_data(max_rows: int | None, active: bool) -> tuple[str, ...]:
    """Which of N and m were read from the data (both engines), for the plan's marks and its
    refusals' labels (:func:`~crowdsafe.privacy.dgamma.plan_alpha_beta`): m when a domain is the
    data's active one; N without a declared ``max_rows``, or when it is capped by such an m.
    Decided from the request and the domains' sources, never from the values."""
    return sizes_read(n=max_rows is None or active, m=active)


def max_rows_source(max_rows: int | None, active: bool) -> str:
    """Where the certificate's ``max_rows`` (the plan's N) came from."""
    if max_rows is None:
        return MAX_ROWS_FROM_DATA
    return MAX_ROWS_CAPPED_BY_DATA if active else MAX_ROWS_DECLARED


def prepare_request(dataset: Dataset, request: PerturbRequest) -> Table:
    """:func:`prepare` with the table's description in ``request``."""
    return prepare(dataset, request.attributes, domains=request.domains, duplicates=request.duplicates,
                   max_rows=request.max_rows, exploratory=request.exploratory)


def plan_public(dataset: Dataset, request: PerturbRequest) -> AlphaBetaPlan:
    """The plan for ``request`` without perturbing. With public domains and ``max_rows`` it is
    made from public things only (the data's values are not read); otherwise (``exploratory``)
    from the data."""
    names = check_attributes(dataset, request.attributes, request.duplicates)
    bound = check_max_rows(request.max_rows, request.exploratory)
    public, _ = resolve_domain(dataset, names, request.domains, request.exploratory)
    if bound is None or len(public) < len(names):
        return plan_for(prepare(dataset, names, domains=request.domains, duplicates=request.duplicates,
                                max_rows=request.max_rows, exploratory=request.exploratory), request.target)
    domain = public_domain(dataset.frame.select(names).clear(), public)
    return plan_alpha_beta(min(bound, domain.size), domain.size, request.target)


def run(table: Table, plan: AlphaBetaPlan, randomness: Randomness | int | None = None, *,
        recorded: bool = False) -> View:
    """Perturb ``table`` with the planned (α, β) and certify the view (``recorded``: a ledger charged it)."""
    if plan.n != table.n_bound or plan.m != table.domain.size:
        raise ParameterError("the plan was made for another table (its bound on n or m differ)")
    rng = as_randomness(randomness)
    domain = table.domain
    if table.index is not None:
        kept = table.index[stages.keep_mask(table.n, plan.alpha, rng)]
        count = stages.binomial(domain.size - table.n, plan.beta, rng)
        inserted = stages.insert_indices(count, 0, domain.size, table.index, rng)
        codes = domain.codes_of(stages.in_domain_order(kept, inserted))
    else:
        assert table.codes is not None
        kept_codes = table.codes.filter(pl.Series(stages.keep_mask(table.n, plan.alpha, rng)))
        count = stages.binomial(domain.size - table.n, plan.beta, rng)
        inserted_codes = stages.insert_tuples(count, domain.sizes, table.codes, rng)
        both = stages.codes_in_domain_order(pl.concat([kept_codes.cast(pl.UInt32), inserted_codes]))
        codes = {a: both.get_column(f"c{i}").to_numpy() for i, a in enumerate(domain.attributes)}
    frame = domain.decode(codes)
    certificate = certify(table, plan, rng, view_rows=frame.height, recorded=recorded)
    view = View(frame, domain, plan.alpha, plan.beta, plan.n, certificate)
    view.__dict__["codes"] = codes  # the cached encoding: no need to encode the view again
    return view


def certify(table: Table, plan: AlphaBetaPlan, randomness: Randomness, *, view_rows: int,
            recorded: bool = False) -> Certificate:
    """The certificate of an α-β view: (d, γ)-privacy, its equivalent ε, and every parameter.

    Every field is a parameter, the public domain (and its size m), or computed from the view
    (``view_rows``): nothing else about the data. A run with a data-derived domain or n
    (exploratory) is certified "no formal guarantee", with the reason. A domain taken from a
    schema choice a schema draft read from the data, unreviewed (``table.unreviewed``), makes the
    view not fit for release (:attr:`~crowdsafe.privacy.certificate.Certificate.unreviewed_schema`).
    ``recorded``: a ledger charged the view, so ``accounting`` says so as publish's does; else null.
    """
    reasons = table.uncertified_reasons
    parameters: dict[str, Any] = {
        "d": plan.d,
        "gamma": plan.gamma,
        "c": plan.c,
        "alpha": plan.alpha,
        "beta": plan.beta,
        "max_rows": plan.n,
        "max_rows_source": max_rows_source(table.max_rows, table.domain.active),
        "m": plan.m,
        "m_source": M_FROM_DATA if table.domain.active else M_DECLARED,
        "attributes": table.domain.attributes,
        "domain_kind": "active" if table.domain.active else "declared",
        "domain_sources": dict(table.sources),
        "domain": table.domain.to_json(),
        "duplicates": "collapsed to one tuple (the view is a set)",
        "view_rows": view_rows,
        "expected_view_rows_at_most": plan.expected_view,
        "posterior_present_max": plan.posterior_present_max,
        "posterior_absent_ratio_min": plan.posterior_absent_ratio_min,
        "exclusive_correlations": plan.exclusive_correlations,
        "estimator": ESTIMATOR,
        "utility": plan.utility.as_dict(),
    }
    chain = (
        {"step": "delete", "name": "keep each tuple with probability alpha", "parameters": {"alpha": plan.alpha}},
        {"step": "insert", "name": "insert each tuple of D \\ I with probability beta",
         "parameters": {"beta": plan.beta, "method": "Binomial count, distinct uniform draws"}},
        {"step": "order", "name": "rows in the domain's order", "parameters": {}},
    )
    assumptions = [
        ASSUME_TUPLE_INDEPENDENT,
        correlation_assumption(plan.alpha, plan.beta, plan.d, plan.gamma),
        ASSUME_DATA_DOMAIN if table.domain.active else ASSUME_DECLARED_DOMAIN,
        ASSUME_DATA_N if table.max_rows is None or table.domain.active else ASSUME_MAX_ROWS,
        ASSUME_SET,
        ASSUME_ONE_VIEW,
        ASSUME_SECRET_COINS,
    ]
    if reasons:
        return Certificate(
            guarantee="none", epsilon=None, delta=None, theorem=None, mechanisms=chain,
            parameters=parameters, assumptions=tuple(assumptions), neighbours="add-remove",
            reason="exploratory run: " + "; ".join(reasons), randomness=randomness.describe(),
            unreviewed_schema=dict(table.unreviewed),
        )
    return Certificate(
        guarantee="d-gamma",
        epsilon=plan.epsilon,
        delta=0.0,
        theorem=THEOREM_DGAMMA + "; as unbounded DP: epsilon = max(ln(alpha/beta), ln((1-beta)/(1-alpha)))",
        mechanisms=chain,
        parameters=parameters,
        assumptions=tuple(assumptions),
        neighbours="add-remove",
        randomness=randomness.describe(), accounting=ledger_accounting(True) if recorded else None,
        unreviewed_schema=dict(table.unreviewed),
    )


@dataclass(frozen=True)
class Perturbation:
    """What :func:`perturb` did: the view, the plan it followed, and the custodian-only facts.

    The public part (:meth:`as_dict`) holds parameters, the public domain's size and what is
    computed from the view: a same-seed run on a table and on it minus one row gives the same
    fields apart from the view's rows. The exact rows, rows left out as outside the domain,
    distinct tuples and collapsed duplicates are in :meth:`custodian_report` only; the numbers
    of kept and inserted tuples are reported nowhere (telling how many rows of the view are real
    would help an attacker).
    """

    view: View
    plan: AlphaBetaPlan
    custodian: Mapping[str, Any]
    ledger: Mapping[str, Any] | None = None  # the charge: sums of epsilons, no fact about the data

    def __repr__(self) -> str:
        # concise and public: the view's size and its guarantee (the custodian-only facts are not shown)
        certificate = self.view.certificate  # alpha down, beta up: as the plan prints them
        return (f"Perturbation({self.view.rows:,}-row view, {certificate.headline()}, "
                f"alpha={rounded_down(self.plan.alpha, 4)}, beta={rounded_up(self.plan.beta, 4)}, "
                f"fit_for_release={self.as_dict()['fit_for_release']})")

    def as_dict(self) -> dict[str, Any]:
        """The public summary: parameters, the plan (made with the bound N) and the view's size."""
        out = {
            "max_rows": self.plan.n,
            "view_rows": self.view.rows,
            "plan": self.plan.as_dict(),
            "certificate": self.view.certificate.summary(),
            "guarantee": self.view.certificate.guarantee,
            # an exploratory view (no formal guarantee) is never fit for release, seeded or not
            "fit_for_release": self.view.certificate.fit_for_release and self.view.certificate.has_guarantee,
            "unfit_reasons": list(self.view.certificate.unfit_reasons),
        }
        if self.ledger is not None:
            out["ledger"] = dict(self.ledger)
        return out

    def custodian_report(self) -> dict[str, Any]:
        """Exact facts about the data, labelled custodian-only: not covered by any guarantee."""
        return {"custodian_only": CUSTODIAN_ONLY, **self.custodian}


def custodian_facts(table: Any) -> dict[str, Any]:
    """The custodian-only facts of a prepared input (Polars or Spark): the rows read, those left
    out because a value lies outside the public domain, the distinct tuples of I and the
    duplicate rows collapsed into them."""
    return {"rows": table.rows, "rows_outside_domain": table.outside, "distinct_tuples": table.n,
            "duplicate_rows_collapsed": table.duplicate_rows, "max_rows": table.max_rows}


def perturb(
    dataset: Dataset,
    request: PerturbRequest,
    *,
    randomness: Randomness | int | None = None,
    ledger: Any = None,
) -> Perturbation:
    """Plan (α, β) for the (d, γ) target of ``request`` (d given, or d = c·N/m), perturb, and certify.

    ``request.attributes`` default to every non-identifier column. Each needs a public domain
    (``request.domains`` declares value lists; else the schema's order or a hierarchy's leaves, see
    :func:`~crowdsafe.perturb.domain.public_values`) and ``request.max_rows`` is the public bound N
    on the rows. ``exploratory=True`` allows the data's own values and n instead, and the
    certificate then says "no formal guarantee" with the reason. With ``ledger`` (an open
    :class:`~crowdsafe.privacy.ledger.Ledger` holding a budget for the dataset) the equivalent ε
    is charged before any coin is drawn (:func:`charged_run`). A plan expecting a view larger than
    ``request.target.max_view_rows`` is refused first (:func:`~crowdsafe.privacy.dgamma.check_view_size`).
    """
    table = prepare_request(dataset, request)
    plan = plan_for(table, request.target)
    check_view_size(plan, request.target.max_view_rows)  # made in memory: refused before any charge
    if ledger is None:
        return Perturbation(run(table, plan, randomness), plan, custodian_facts(table))
    return charged_run(dataset, table, plan, ledger, as_randomness(randomness))


def charged_run(dataset: Dataset, table: Table, plan: AlphaBetaPlan, ledger: Any, randomness: Randomness
                ) -> Perturbation:
    """Charge the view's equivalent ε (δ = 0, unbounded DP) to the dataset's budget, then perturb.

    The dataset is identified by ``ledger.identity_of(dataset)`` (its keyed,
    row-order-invariant digest that only the ledger's holder can test guesses against). Every
    data-dependent refusal (more rows than ``max_rows``, duplicates refused) happened in
    :func:`prepare`, before the charge; the charge is committed before any
    coin is drawn. A second view of the same data is a second charge: the views' ε add up.
    """
    if table.uncertified_reasons:
        raise uncharged_error()
    fingerprint = ledger.identity_of(dataset)
    details = {"d": plan.d, "gamma": plan.gamma, "alpha": plan.alpha, "beta": plan.beta, "max_rows": plan.n,
               "m": plan.m, "attributes": table.domain.attributes}
    request = ChargeRequest(epsilon=plan.epsilon, delta=0.0, kind="release",
                            description=f"alpha-beta view ({rounded_down(plan.d, 3)}, {rounded_up(plan.gamma, 3)})"
                                        "-private of "
                                        f"{', '.join(table.domain.attributes)}",
                            mechanism="alpha-beta (Rastogi, Suciu, Hong 2007)", neighbours="add-remove",
                            seeded=randomness.seeded, details=details)
    with ledger.charge(fingerprint, request) as charge:
        view = run(table, plan, randomness, recorded=True)
        charge.record(view_rows=view.rows, **custodian_facts(table))
    budget = ledger.budget(fingerprint)
    assert budget is not None
    booked = {"path": str(ledger.path), "dataset": budget.name, "entry": charge.entry_id,
              "charged": charge.loss.as_dict(), "spent": budget.spent.as_dict(), "budget": budget.budget.as_dict(),
              "remaining": budget.remaining.as_dict()}
    return Perturbation(view, plan, custodian_facts(table), booked)
