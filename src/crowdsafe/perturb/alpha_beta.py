"""The α-β algorithm (Rastogi, Suciu, Hong 2007): random deletion and insertion of tuples.

Input: a table I over attributes with domains D_1..D_a (by default the active domains: the
distinct values present), D = D_1 × ... × D_a with m = Π |D_i| tuples. Output: a view V that

1. keeps each tuple of I independently with probability α;
2. contains each tuple of D \\ I independently with probability β — drawn as
   K ~ Binomial(m − |I|, β) distinct tuples uniform over D \\ I (mixed-radix indices with
   rejection; per-attribute draws when m ≥ 2^64), never materializing D;
3. is shuffled, so kept and inserted tuples cannot be told apart;

published with the domains, α and β (in its certificate). For d ≤ γ the view is
(d, γ)-private when α ≤ 1 − d/γ and β ≥ (d/γ)((1 − γ)/(1 − d))α; see
:mod:`crowdsafe.privacy.dgamma` for the conditions, posteriors and the equivalent ε.

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
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError, SchemaError
from crowdsafe.perturb import stages
from crowdsafe.perturb.domain import Domain
from crowdsafe.perturb.view import View
from crowdsafe.privacy.certificate import Certificate
from crowdsafe.privacy.dgamma import (
    ASSUME_ONE_VIEW,
    ASSUME_PUBLIC_DOMAIN,
    ASSUME_SECRET_COINS,
    ASSUME_SET,
    ASSUME_TUPLE_INDEPENDENT,
    THEOREM_DGAMMA,
    AlphaBetaPlan,
    correlation_assumption,
    plan_alpha_beta,
)
from crowdsafe.randomness import Randomness, as_randomness

Duplicates = Literal["collapse", "error"]

ESTIMATOR = "EST(Q, V) = (|Q(V)| - beta |Q(D)|) / (alpha - beta), |Q(D)| = product of matching domain sizes"
ASSUME_PUBLIC_N = (
    "the number n of distinct tuples is public (it is published, and beta depends on it when "
    "d = c n/m)"
)


@dataclass(frozen=True)
class Table:
    """The input of the algorithm: I's distinct tuples as codes in a domain."""

    domain: Domain
    index: np.ndarray | None  # sorted distinct uint64 indices (m < 2^64), else None
    codes: pl.DataFrame | None  # distinct code tuples c0, c1, ... (m >= 2^64), else None
    rows: int  # rows of the input, before duplicates collapsed
    fingerprint: str | None

    @property
    def n(self) -> int:
        return len(self.index) if self.index is not None else self.codes.height  # type: ignore[union-attr]

    @property
    def duplicate_rows(self) -> int:
        return self.rows - self.n


def default_attributes(dataset: Dataset) -> list[str]:
    """Every attribute except identifiers (which must never be published)."""
    identifiers = set(dataset.schema.identifiers)
    return [name for name in dataset.columns if name not in identifiers]


def prepare(
    dataset: Dataset,
    attributes: Sequence[str] | None = None,
    *,
    domains: Mapping[str, Iterable[Any]] | None = None,
    duplicates: Duplicates = "collapse",
) -> Table:
    """Encode the data's tuples in their domain and collapse duplicate rows (see module docs)."""
    names = check_attributes(dataset, attributes, duplicates)
    frame = dataset.frame.select(names)
    domain, codes = build_domain(frame, names, domains)
    if domain.indexable:
        index = np.asarray(pl.Series(domain.index(codes)).unique().sort().to_numpy(), dtype=np.uint64)
        table = Table(domain, index, None, frame.height, dataset.fingerprint())
    else:
        distinct = pl.DataFrame({f"c{i}": codes[a] for i, a in enumerate(names)}).unique()
        table = Table(domain, None, distinct, frame.height, dataset.fingerprint())
    if duplicates == "error" and table.duplicate_rows:
        raise duplicates_error(table.duplicate_rows)
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


def duplicates_error(rows: int) -> ParameterError:
    return ParameterError(
        f"{rows} rows repeat another row's tuple over the published attributes; "
        "the alpha-beta algorithm publishes a set: use duplicates='collapse' (--duplicates collapse) "
        "or publish an attribute that tells the rows apart"
    )


def build_domain(
    frame: pl.DataFrame, names: list[str], domains: Mapping[str, Iterable[Any]] | None
) -> tuple[Domain, dict[str, np.ndarray]]:
    """The domain (declared value lists where given, else the active domain) and the codes."""
    domains = dict(domains or {})
    stray = [a for a in domains if a not in names]
    if stray:
        raise ParameterError(f"a domain is given for '{stray[0]}', which is not among the attributes published")
    active, codes = Domain.active_of(frame, [a for a in names if a not in domains]) if len(domains) < len(names) else (None, {})
    if not domains:
        return active, codes  # type: ignore[return-value]
    declared = Domain.declared(domains, frame)
    codes.update(declared.encode(frame, what="the data"))
    values = {a: declared.values[a] if a in domains else active.values[a] for a in names}  # type: ignore[union-attr]
    return Domain(values, active=active is not None), {a: codes[a] for a in names}


def plan_for(table: Table, **target: Any) -> AlphaBetaPlan:
    """:func:`~crowdsafe.privacy.dgamma.plan_alpha_beta` for this table's n and m."""
    return plan_alpha_beta(table.n, table.domain.size, **target)


def run(table: Table, plan: AlphaBetaPlan, randomness: Randomness | int | None = None) -> View:
    """Perturb ``table`` with the planned (α, β) and certify the view."""
    if plan.n != table.n or plan.m != table.domain.size:
        raise ParameterError("the plan was made for another table (n or m differ)")
    rng = as_randomness(randomness)
    domain = table.domain
    if table.index is not None:
        kept = table.index[stages.keep_mask(table.n, plan.alpha, rng)]
        count = stages.binomial(domain.size - table.n, plan.beta, rng)
        inserted = stages.insert_indices(count, 0, domain.size, table.index, rng)
        published = np.concatenate([kept, inserted])
        published = published[stages.shuffle_order(len(published), rng)]
        codes = domain.codes_of(published)
    else:
        assert table.codes is not None
        kept_codes = table.codes.filter(pl.Series(stages.keep_mask(table.n, plan.alpha, rng)))
        count = stages.binomial(domain.size - table.n, plan.beta, rng)
        inserted_codes = stages.insert_tuples(count, domain.sizes, table.codes, rng)
        both = pl.concat([kept_codes.cast(pl.UInt32), inserted_codes])
        both = both[stages.shuffle_order(both.height, rng)]
        codes = {a: both.get_column(f"c{i}").to_numpy() for i, a in enumerate(domain.attributes)}
    frame = domain.decode(codes)
    certificate = certify(table, plan, rng, view_rows=frame.height)
    view = View(frame, domain, plan.alpha, plan.beta, table.n, certificate)
    view.__dict__["codes"] = codes  # the cached encoding: no need to encode the view again
    return view


def certify(table: Table, plan: AlphaBetaPlan, randomness: Randomness, *, view_rows: int) -> Certificate:
    """The certificate of an α-β view: (d, γ)-privacy, its equivalent ε, and every parameter."""
    parameters: dict[str, Any] = {
        "d": plan.d,
        "gamma": plan.gamma,
        "c": plan.c,
        "alpha": plan.alpha,
        "beta": plan.beta,
        "n": plan.n,
        "m": plan.m,
        "attributes": table.domain.attributes,
        "domain_kind": "active" if table.domain.active else "declared",
        "domain": table.domain.to_json(),
        "duplicates": "collapsed to one tuple (the view is a set)",
        "view_rows": view_rows,
        "expected_view_rows": plan.expected_view,
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
        {"step": "shuffle", "name": "uniform random order", "parameters": {}},
    )
    assumptions = [
        ASSUME_TUPLE_INDEPENDENT,
        correlation_assumption(plan.alpha, plan.beta, plan.d, plan.gamma),
        ASSUME_PUBLIC_DOMAIN if table.domain.active else (
            "the domain D was declared by the custodian and is public; the epsilon-DP equivalence "
            "holds for neighbours within it"),
        ASSUME_PUBLIC_N,
        ASSUME_SET,
        ASSUME_ONE_VIEW,
        ASSUME_SECRET_COINS,
    ]
    return Certificate(
        guarantee="d-gamma",
        epsilon=plan.epsilon,
        delta=0.0,
        theorem=THEOREM_DGAMMA + "; as unbounded DP: epsilon = max(ln(alpha/beta), ln((1-beta)/(1-alpha)))",
        mechanisms=chain,
        parameters=parameters,
        assumptions=tuple(assumptions),
        neighbours="add-remove",
        randomness=randomness.describe(),
        input_fingerprint=table.fingerprint,
    )


@dataclass(frozen=True)
class Perturbation:
    """What :func:`perturb` did: the view, the plan it followed, and the input's row counts.

    The numbers of kept and inserted tuples are deliberately not reported: telling how many
    rows of the view are real would help an attacker.
    """

    view: View
    plan: AlphaBetaPlan
    rows: int
    duplicate_rows: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "distinct_tuples": self.plan.n,
            "duplicate_rows_collapsed": self.duplicate_rows,
            "view_rows": self.view.rows,
            "plan": self.plan.as_dict(),
            "certificate": self.view.certificate.summary(),
            "fit_for_release": self.view.certificate.fit_for_release,
        }


def perturb(
    dataset: Dataset,
    *,
    gamma: float,
    d: float | None = None,
    c: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    attributes: Sequence[str] | None = None,
    domains: Mapping[str, Iterable[Any]] | None = None,
    duplicates: Duplicates = "collapse",
    exclusive_correlations: bool = False,
    failure: float = 0.05,
    randomness: Randomness | int | None = None,
) -> Perturbation:
    """Plan (α, β) for the (d, γ) target (d given, or d = c·n/m), perturb, and certify.

    ``attributes`` default to every non-identifier column; ``domains`` optionally declares a
    public value list for some attributes (otherwise their active domain is published).
    """
    table = prepare(dataset, attributes, domains=domains, duplicates=duplicates)
    plan = plan_for(table, gamma=gamma, d=d, c=c, alpha=alpha, beta=beta, failure=failure,
                    exclusive_correlations=exclusive_correlations)
    view = run(table, plan, randomness)
    return Perturbation(view, plan, table.rows, table.duplicate_rows)
