"""Differentially private queries on a Dataset: count, sum, mean, histograms, quantiles.

Every answer is a :class:`QueryAnswer` carrying its (ε, δ), the mechanism, the noise scale and a
95% interval for the error, all derived from public parameters. The order of work is fixed, and
it is what makes a refusal cost nothing and an abort honest:

1. parse the query and check every parameter and column against the schema, the engine and the
   public domains (bad input: nothing computed, ledger untouched). Every refusal here is decided
   from public things only (schema, options, query text);
2. ask the ledger whether the charge fits (refused: nothing computed);
3. charge the ledger (atomic; refused if a concurrent process took the budget meanwhile);
4. compute the exact aggregate (never shown) and draw the noise. Anything that fails from here on
   may depend on the data, so it fails *after* the charge: the entry is marked failed, still
   counts, and the error says the budget is spent.

**What an answer reveals** (the privacy boundary): :meth:`QueryAnswer.as_dict` holds the noisy
value, which is the output of the charged mechanism, and fields fixed before the data is read
(query, (ε, δ), mechanism, noise scale and error interval from the public calibration,
sensitivity, privacy unit, dataset name, randomness kind, the ledger's budget arithmetic). No
fingerprint or other digest of the data, and no exact fact about the data: clamp counts, rows
dropped by the contribution bound and rows outside a histogram's domain are kept apart in
:attr:`QueryAnswer.custodian_only`, shown only on request (``as_dict(custodian=True)``,
``crowdsafe query --custodian``) and never covered by the guarantee. With a ledger, the dataset
is identified in it by ``ledger.identity_of(dataset)``, its fingerprint keyed with the
ledger's secret, which stays in the ledger.

Sensitivity is derived here from the query, the neighbour notion and the privacy unit
(:mod:`crowdsafe.mechanisms.sensitivity`, :mod:`crowdsafe.mechanisms.contribution`), never taken
from the caller. Queries never amplify by sampling: amplification would apply to the whole
computation on one sample, not to each query (composing separately amplified queries on one
sample is unsound).

Histograms and contingency tables are one query with one ε (parallel composition over cells:
each row falls in one cell). Their cells must come from a *public* domain, or the set of cells
itself leaks which values occur; see :func:`histogram_domain`.
"""

from __future__ import annotations

import math
from typing import Any, cast

import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.data.domain_lists import domain_lists
from crowdsafe.errors import CrowdsafeError, ParameterError, SchemaError
from crowdsafe.mechanisms import calibration
from crowdsafe.mechanisms.gaussian import Calibration
from crowdsafe.mechanisms.noise import DiscreteLaplaceNoise
from crowdsafe.mechanisms.query_aggregates import (
    SCHEMA_ORDER,
    cell_key,
    cells_fit,
    histogram_domain,
    polars_aggregate,
)
from crowdsafe.mechanisms.query_language import (
    Query,
    check_columns,
    compile_filter,
    parse,
)
from crowdsafe.mechanisms.query_noise import MAX_UNITS_SENSITIVITY, perturb
from crowdsafe.mechanisms.query_partition import partition_part
from crowdsafe.mechanisms.query_plan import Aggregator, ExactAggregate, QueryAnswer, QueryPlan, QueryRequest
from crowdsafe.mechanisms.sensitivity import (
    Neighbours,
    check_bounds,
    check_rows_per_person,
    count_sensitivity,
    histogram_sensitivity,
    neighbour_notion,
    quantile_sensitivity,
    sum_sensitivity,
)
from crowdsafe.privacy.ledger import ChargeRequest, Ledger
from crowdsafe.randomness import Randomness, as_randomness

MECHANISMS = ("laplace", "gaussian")
#: Other names of the mechanisms crowdsafe runs, each exact: its Laplace is the discrete Laplace
#: (the geometric mechanism), its Gaussian the discrete Gaussian (docs/mechanisms.md).
MECHANISM_NAMES = {"discrete-laplace": "laplace", "geometric": "laplace", "discrete-gaussian": "gaussian"}


def mechanism_name(name: str | None) -> str | None:
    """``name`` as crowdsafe names the mechanism (case, blanks and ``_`` aside; :data:`MECHANISM_NAMES`)."""
    if not isinstance(name, str):
        return name
    text = "-".join(name.strip().lower().replace("_", "-").split())
    return MECHANISM_NAMES.get(text, text)
MAX_CELLS = 5_000_000
_KEY = "__crowdsafe_cell_{}"
_SUM_UNIT_BITS = 30  # a real value is summed on a grid of 2^-30 of its largest bound


def answer_query(
    dataset: Dataset,
    request: QueryRequest,
    *,
    randomness: Randomness | int | None = None,
    ledger: Ledger | None = None,
    fingerprint: str | None = None,
    aggregate: Aggregator | None = None,
) -> QueryAnswer:
    """Answer ``request`` (:class:`~crowdsafe.mechanisms.query_plan.QueryRequest`: the query and
    its public parameters) on ``dataset`` with differential privacy; see the module docstring.

    ``ledger``: charge the query to the dataset's budget (``fingerprint``: the dataset's identity
    in the ledger, by default ``ledger.identity_of(dataset)``; it is never put in
    the answer). ``aggregate``: the engine computing the exact aggregate (default: Polars on
    ``dataset.frame``); another engine passes its own, with a schema-only ``dataset`` and the
    keyed ``fingerprint`` of its data; an aggregator with a ``check(plan)`` method refuses what
    it cannot compute there, before the charge. Planning, the ledger and the noise are the same
    code either way.
    """
    plan = _plan(dataset, request)
    aggregate = aggregate or polars_aggregate
    engine_check = getattr(aggregate, "check", None)
    if engine_check is not None:
        engine_check(plan)  # public: the engine and the query kind
    randomness = as_randomness(randomness)
    charge_request = ChargeRequest(
        epsilon=plan.epsilon,
        delta=plan.delta,
        kind="query",
        description=plan.query.describe(),
        mechanism=plan.mechanism_label,
        neighbours=plan.neighbours,
        partition=plan.partition,
        seeded=randomness.seeded,
    )
    if ledger is not None:
        fingerprint = fingerprint or ledger.identity_of(dataset)
        ledger.check(fingerprint, charge_request)  # refuse before anything is computed
    if ledger is None:
        exact, dropped, answer = _run(dataset, plan, randomness, aggregate, charged=False)
        answer.notes.append("not recorded in a budget ledger")
    else:
        assert fingerprint is not None
        with ledger.charge(fingerprint, charge_request) as charge:
            exact, dropped, answer = _run(dataset, plan, randomness, aggregate, charged=True)
            charge.record(value=_summary(answer.value), noise_scale=answer.noise_scale)
        budget = ledger.budget(fingerprint)
        assert budget is not None
        answer.ledger = {
            "path": str(ledger.path),
            "dataset": budget.name,
            "entry": charge.entry_id,
            "spent": budget.spent.as_dict(),
            "budget": budget.budget.as_dict(),
            "remaining": budget.remaining.as_dict(),
        }
    answer.dataset = {"name": dataset.name}
    answer.unreviewed_schema = unreviewed_orders(dataset, plan)
    if plan.person is not None:
        answer.custodian_only["rows_dropped_by_contribution_bound"] = dropped
    if randomness.seeded:
        answer.notes.append("seeded run: reproducible, NOT fit for release")
    return answer


def unreviewed_orders(dataset: Dataset, plan: QueryPlan) -> dict[str, tuple[str, ...]]:
    """The ``from_data`` markers of the schema orders a histogram took its public cells from, and of
    every column the query reads whose type or reading the data decided: a type nobody declared
    (inferred from the values: one row of text or with a fraction changes the grid, the
    sensitivity and the candidates the mechanism uses), a decimal comma found in an undeclared
    file, numbers read as integers or reals by their values
    (:meth:`crowdsafe.data.schema.Schema.unreviewed`). From the schema and the plan alone
    (public); any makes the answer not fit for release."""
    used = [d.column for d, (_, source) in zip(plan.query.dimensions, plan.domains) if source == SCHEMA_ORDER]
    found = dataset.schema.unreviewed(used, ["order"])
    for column, read in dataset.schema.unreviewed(plan.query.columns, ["type", "reading"]).items():
        found[column] = (*found.get(column, ()), *read)
    return found


def _run(dataset: Dataset, plan: QueryPlan, randomness: Randomness, aggregate: Aggregator,
         *, charged: bool) -> tuple[ExactAggregate, int, QueryAnswer]:
    """Read the data and answer (after the charge). A failure here may depend on the data, so its
    message says that the query's budget counts as spent."""
    try:
        exact, dropped = aggregate(dataset, plan, randomness)
        return exact, dropped, perturb(exact, plan, randomness)
    except CrowdsafeError as error:
        spent = (f"the query's (ε = {plan.epsilon:g}, δ = {plan.delta:g}) was charged to the ledger and stays "
                 "spent" if charged else "run with a ledger, this abort would count as spent budget")
        raise type(error)(f"{error} (the query stopped after reading the data: {spent})") from error


# -- planning ----------------------------------------------------------------------------------


def check_query(dataset: Dataset, request: QueryRequest) -> None:
    """Raise exactly the errors :func:`answer_query` raises for bad input, touching nothing."""
    _plan(dataset, request)


def _plan(dataset: Dataset, request: QueryRequest) -> QueryPlan:
    """The query's plan from public things only (the schema, the request, the query text); every
    refusal of bad input happens here, before the ledger is touched."""
    calibration_name, mean_split = request.calibration_name or "analytic", request.mean_split
    max_rows_per_person, partition = request.max_rows_per_person, request.partition
    parsed, epsilon, delta, neighbours, mechanism, domain = check_parameters(request)
    check_columns(parsed, dataset.schema.names)
    dtypes = dataset.frame.schema  # read once: each read builds a new Schema
    condition = compile_filter(parsed.where, dtypes)
    person = dataset.schema.person_id
    if person is None:
        if max_rows_per_person not in (None, 1):
            raise ParameterError(
                "max_rows_per_person needs a person identifier in the schema (person_id); without one, "
                "every row is a different person"
            )
        rows_per_person = 1
    else:
        if max_rows_per_person is None:
            raise ParameterError(
                f"the schema names the person identifier '{person}': a person may own several rows, so "
                "say how many rows per person a query may use (max_rows_per_person=N)", parameter="max_rows_per_person",
            )
        rows_per_person = check_rows_per_person(max_rows_per_person)

    kind = parsed.kind
    if kind in ("sum", "mean", "quantile"):
        dtype = dtypes[parsed.column or ""]
        if not dtype.is_numeric():
            raise SchemaError(f"{kind}({parsed.column}) needs a numeric column; '{parsed.column}' holds {dtype}")

    if kind == "count":
        sensitivity = count_sensitivity(neighbours, rows_per_person)
    elif kind in ("sum", "mean"):
        assert parsed.bounds is not None
        sensitivity = sum_sensitivity(*parsed.bounds, neighbours=neighbours, rows_per_person=rows_per_person)
    elif kind == "histogram":
        sensitivity = histogram_sensitivity(neighbours, rows_per_person)
    else:
        assert parsed.q is not None
        sensitivity = quantile_sensitivity(parsed.q, neighbours, rows_per_person)

    domains: tuple[tuple[list[Any] | None, str], ...] = ()
    charged_delta = delta if mechanism == "gaussian" else 0.0
    if kind == "histogram":
        for dimension in parsed.dimensions:
            if dimension.bins is not None:
                cell_key(dataset, dimension, dtypes[dimension.column])  # checks bins against the column type
        domains = tuple(histogram_domain(dataset, d, domain, dtype=dtypes[d.column]) for d in parsed.dimensions)
        for dimension, (values, _) in zip(parsed.dimensions, domains):
            if dimension.bins is None:
                cells_fit(dimension.column, values, dtypes[dimension.column])
        if all(values is not None for values, _ in domains):
            size = math.prod([len(values or ()) for values, _ in domains])
            if size > MAX_CELLS:  # public: the domains are
                raise ParameterError(
                    f"the table would have {size:,} cells (limit {MAX_CELLS:,}); bin or drop a column"
                )
        if not all(values is not None for values, _ in domains):
            private = next(d.column for d, (values, _) in zip(parsed.dimensions, domains) if values is None)
            example = (f"bins ({private}[0..100 by 10])" if dtypes[private].is_numeric()
                       else f"its values ({private} in ('a', 'b'))")
            if mechanism != "laplace":  # refused, never replaced by the Laplace: nothing runs or is charged
                raise ParameterError(gaussian_refusal(private, example), parameter="mechanism")
            if delta <= 0:
                raise ParameterError(
                    f"the values of '{private}' are not public, so the set of cells would leak which values "
                    f"occur: give {example}, or allow δ > 0 to release only the cells above a noisy threshold"
                )
            charged_delta = delta
    if delta > 0 and charged_delta == 0:  # from the query and the schema: before any charge
        raise ParameterError(unused_delta(kind, mechanism), parameter="delta")

    part = None
    if partition is not None:  # refused with a person_id (one person, several parts); the key canonical
        part = partition_part(parsed, partition, dataset.schema.names, dtypes.get(partition), person)
    if mechanism == "laplace":  # noise too fine to sample exactly: refused now, not after the charge
        sensitivities = {"count": [int(rows_per_person)], "histogram": [int(sensitivity.l1)],
                         "sum": [MAX_UNITS_SENSITIVITY], "mean": [MAX_UNITS_SENSITIVITY, int(rows_per_person)]}[kind]
        try:
            for share, units in zip([mean_split, 1.0 - mean_split] if kind == "mean" else [1.0], sensitivities):
                DiscreteLaplaceNoise.for_privacy(epsilon * share, units)
        except ParameterError:
            raise ParameterError(f"epsilon {epsilon:g} is too small for this query's noise to be sampled exactly "
                                 "(nothing was charged)", parameter="epsilon") from None
    label = {"laplace": "discrete Laplace", "gaussian": "discrete Gaussian", "exponential": "exponential"}[mechanism]
    gaussian_calibration = cast(Calibration, calibration_name)  # one of the two, checked above
    return QueryPlan(parsed, epsilon, charged_delta, mechanism, gaussian_calibration, neighbours, rows_per_person,
                     person, sensitivity, label, part, mean_split, condition, domains)


def unused_delta(kind: str, mechanism: str) -> str:
    """Why a δ > 0 is refused where it would not be used: the Laplace (or, for a quantile, the
    exponential) mechanism is ε-DP, and only a histogram without a public domain spends δ (on its
    threshold). Accepted, it was silently dropped (the answer said δ = 0) and its user believed
    it spent. From the query and the schema alone, before any charge."""
    what = "histogram over public values" if kind == "histogram" else f"{kind} query"
    return (f"the delta parameter applies to the Gaussian mechanism and to histograms without a public domain: this "
            f"{what} with the {mechanism} mechanism is ε-DP and would not use it (its δ is 0); leave the delta "
            "parameter out (nothing was charged)")


def gaussian_refusal(column: str, example: str) -> str:
    """Why a Gaussian histogram over the values present in the data is refused, and how to get the
    Gaussian. Without a public domain only the cells whose noisy count reaches a threshold are
    released (the stability-based histogram, :func:`~crowdsafe.mechanisms.query_noise.stability_threshold`):
    its threshold and δ bound the chance that a cell present on one side of neighbouring tables
    is released, from the discrete Laplace's tail; crowdsafe has no such bound for Gaussian noise.
    Running the Laplace in its place would charge and release a mechanism nobody asked for, so the
    request is refused before the ledger is touched. From the query and the schema alone."""
    return (f"the values of '{column}' are not public, so only cells above a noisy threshold could be released, and "
            "that threshold and its δ are proven for discrete Laplace noise only (crowdsafe has no such bound for "
            f"Gaussian noise): to use the Gaussian give {example} or the column's order in the schema, or use "
            "the Laplace mechanism (nothing was charged)")


def check_parameters(request: QueryRequest) -> tuple[Query, float, float, Neighbours, str, dict[str, list[Any]]]:
    """The checks of ``request`` that read neither the table nor its schema (the query's syntax,
    ε, δ, the neighbours, the mechanism and its calibration, the clamping bounds, the ``domain``'s
    shape and columns): made first, and by the driver before the table is read, so a parameter
    mistake is refused alike on every table. Returns the parsed query, ε, δ, the neighbour notion,
    the mechanism and the domain (column -> list of values, :func:`checked_domain`)."""
    query, delta, mechanism = request.query, request.delta, mechanism_name(request.mechanism)
    calibration_name, mean_split = request.calibration_name, request.mean_split
    parsed = parse(query) if isinstance(query, str) else query
    epsilon = calibration.check_epsilon(request.epsilon)
    delta = calibration.check_delta(delta)
    neighbours = neighbour_notion(request.neighbours)  # 'bounded', 'unbounded'... taken too
    if calibration_name not in (None, "analytic", "classic"):
        raise ParameterError(f"unknown Gaussian calibration {calibration_name!r}: use 'analytic' or 'classic'")
    if not 0.0 < mean_split < 1.0:
        raise ParameterError(f"mean_split must lie strictly between 0 and 1, got {mean_split}")
    kind = parsed.kind
    if kind == "histogram" and "count" in [d.column for d in parsed.dimensions]:  # (charged, then a Polars error)
        raise ParameterError("a histogram's answer counts in a column named 'count', so it cannot count by a "
                             "column of that name: rename the column in the data (e.g. to 'n')", parameter="query")
    if kind == "quantile":
        if mechanism not in (None, "exponential"):
            raise ParameterError("quantiles use the exponential mechanism (ε-DP); do not set a mechanism")
        mechanism = "exponential"
    else:
        mechanism = mechanism or "laplace"
        if mechanism not in MECHANISMS:
            raise ParameterError(f"unknown mechanism {mechanism!r}: use 'laplace' or 'gaussian'")
        if mechanism == "gaussian":
            if delta == 0:  # the default δ: say what to give rather than which range δ lies in
                raise ParameterError("the Gaussian mechanism is (ε, δ)-DP and needs δ > 0: give one (--delta 1e-7, "
                                     "delta=1e-7), or use the Laplace mechanism for ε-DP", parameter="delta")
            calibration.check_delta(delta, positive=True)
            shares = (mean_split, 1.0 - mean_split) if kind == "mean" else (1.0,)
            if calibration_name == "classic":
                for share in shares:  # refuse ε ≥ 1 now, before anything is charged
                    calibration.classic_gaussian_sigma(epsilon * share, delta * share, 1.0)
    if calibration_name is not None and mechanism != "gaussian":  # accepted, it was not read
        raise ParameterError(f"the calibration parameter applies to mechanism='gaussian' only (the {mechanism} "
                             "mechanism has no calibration to choose)", parameter=("calibration", "mechanism"))
    if delta > 0 and mechanism != "gaussian" and kind != "histogram":  # before the table is read
        raise ParameterError(unused_delta(kind, mechanism), parameter="delta")
    if kind in ("sum", "mean", "quantile"):
        if parsed.bounds is None:
            raise ParameterError(
                f"{kind} needs clamping bounds: add 'clamp LOW..HIGH' after {kind}({parsed.column}), "
                "with bounds from public knowledge, never from the data"
            )
        check_bounds(*parsed.bounds, what=f"{kind}({parsed.column})")
    return parsed, epsilon, delta, neighbours, mechanism, checked_domain(parsed, request.domain)


def checked_domain(parsed: Query, domain: object) -> dict[str, list[Any]]:
    """The caller's ``domain`` as lists of values (:func:`~crowdsafe.data.domain_lists.domain_lists`:
    a mapping from a column to a non-empty list, never a text), each key a column the histogram
    counts by: a key the query does not use (misspelled, or a query that is no histogram) would
    be ignored without a word."""
    lists = domain_lists(domain, "domain")
    columns = [d.column for d in parsed.dimensions] if parsed.kind == "histogram" else []
    for column in lists:
        if column not in columns:
            counted = f"the histogram counts by {', '.join(map(repr, columns))}" if columns else \
                f"a {parsed.kind} query has no histogram column"
            raise ParameterError(f"domain[{column!r}]: '{column}' is not a column the query counts by ({counted}); "
                                 "a domain lists the public values of a histogram's columns", parameter="domain")
    return lists


def _summary(value: Any) -> Any:
    if isinstance(value, pl.DataFrame):
        return {"cells": value.height}
    return value


__all__ = [
    "MECHANISMS",
    "QueryAnswer",
    "QueryRequest",
    "answer_query",
    "check_parameters",
    "check_query",
    "histogram_domain",
]
