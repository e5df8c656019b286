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
is identified in it by ``dataset.fingerprint(key=ledger.identity_key)``, a digest keyed with the
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.errors import CrowdsafeError, ParameterError, SchemaError
from crowdsafe.mechanisms import calibration
from crowdsafe.mechanisms.additive import NoisyValue
from crowdsafe.mechanisms.contribution import bound_contributions
from crowdsafe.mechanisms.gaussian import gaussian_mechanism
from crowdsafe.mechanisms.laplace import laplace_mechanism
from crowdsafe.mechanisms.noise import DiscreteLaplaceNoise
from crowdsafe.mechanisms.quantile import quantile_mechanism
from crowdsafe.mechanisms.query_language import (
    Dimension,
    Query,
    check_columns,
    compile_filter,
    equality_value,
    is_text,
    parse,
)
from crowdsafe.mechanisms.sensitivity import (
    Sensitivity,
    check_bounds,
    check_neighbours,
    check_rows_per_person,
    count_sensitivity,
    histogram_sensitivity,
    quantile_sensitivity,
    sum_sensitivity,
)
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness, as_randomness

MECHANISMS = ("laplace", "gaussian")
MAX_CELLS = 5_000_000
_KEY = "__crowdsafe_cell_{}"
_SUM_UNIT_BITS = 30  # a real value is summed on a grid of 2^-30 of its largest bound


@dataclass
class QueryAnswer:
    """A DP answer with its guarantee (see "What an answer reveals" in the module docstring).

    ``custodian_only``: exact facts about the data for the custodian's bookkeeping (rows dropped
    by the contribution bound, values clamped, rows outside the domain). They are NOT
    differentially private, are not part of :meth:`as_dict` unless asked for, and must not be
    published with the answer."""

    query: str
    kind: str
    value: Any
    epsilon: float
    delta: float
    mechanism: str
    noise_scale: float
    error_interval: tuple[float, float]
    error_unit: str
    sensitivity: Sensitivity
    privacy_unit: str
    dataset: dict[str, Any]
    randomness: dict[str, Any]
    ledger: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    custodian_only: dict[str, Any] = field(default_factory=dict)
    components: dict[str, NoisyValue] = field(default_factory=dict)

    @property
    def fit_for_release(self) -> bool:
        return bool(self.randomness.get("fit_for_release", False))

    def as_dict(self, *, custodian: bool = False) -> dict[str, Any]:
        """The public answer: DP outputs and public parameters only. ``custodian=True`` adds
        ``custodian_only_not_dp`` (exact facts about the data, not covered by the guarantee)."""
        value = self.value.to_dicts() if isinstance(self.value, pl.DataFrame) else self.value
        public = {
            "query": self.query,
            "kind": self.kind,
            "value": value,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mechanism": self.mechanism,
            "noise_scale": self.noise_scale,
            "error_interval_95": list(self.error_interval),
            "error_unit": self.error_unit,
            "sensitivity": self.sensitivity.as_dict(),
            "privacy_unit": self.privacy_unit,
            "dataset": self.dataset,
            "randomness": self.randomness,
            "ledger": self.ledger,
            "notes": self.notes,
            "components": {name: c.as_dict() for name, c in self.components.items()},
        }
        if custodian:
            public["custodian_only_not_dp"] = dict(self.custodian_only)
        return public


@dataclass(frozen=True)
class QueryPlan:
    """Everything decided before the data is read."""

    query: Query
    epsilon: float
    delta: float
    mechanism: str
    calibration_name: str
    neighbours: str
    rows_per_person: int
    person: str | None
    sensitivity: Sensitivity
    mechanism_label: str
    partition: tuple[str, str] | None
    mean_split: float
    condition: pl.Expr
    domains: tuple[tuple[list[Any] | None, str], ...] = ()

    @property
    def public_domain(self) -> bool:
        return all(values is not None for values, _ in self.domains)


def answer_query(
    dataset: Dataset,
    query: str | Query,
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: str | None = None,
    calibration_name: str = "analytic",
    neighbours: str = "add-remove",
    max_rows_per_person: int | None = None,
    domain: Mapping[str, Sequence[Any]] | None = None,
    mean_split: float = 0.5,
    randomness: Randomness | int | None = None,
    ledger: Ledger | None = None,
    fingerprint: str | None = None,
    partition: str | None = None,
    aggregate: Aggregator | None = None,
) -> QueryAnswer:
    """Answer one query on ``dataset`` with differential privacy; see the module docstring.

    ``mechanism``: "laplace" (ε-DP, the default) or "gaussian" ((ε, δ)-DP, δ > 0); quantiles
    always use the exponential mechanism. ``max_rows_per_person``: required when the schema names
    a person identifier. ``domain``: public values of histogram columns. ``mean_split``: share of
    ε (and δ) spent on the sum of a mean, the rest on its count. ``ledger``: charge the query to
    the dataset's budget (``fingerprint``: the dataset's identity in the ledger, by default
    ``dataset.fingerprint(key=ledger.identity_key)``; it is never put in the answer). ``partition``: a column the
    filter fixes with ``column = value``; the ledger then composes such queries in parallel.
    ``aggregate``: the engine computing the exact aggregate (default: Polars on
    ``dataset.frame``); another engine passes its own, with a schema-only ``dataset`` and the
    keyed ``fingerprint`` of its data; an aggregator with a ``check(plan)`` method refuses what
    it cannot compute there, before the charge. Planning, the ledger and the noise are the same
    code either way.
    """
    plan = _plan(dataset, query, epsilon, delta, mechanism, calibration_name, neighbours,
                 max_rows_per_person, mean_split, partition, domain)
    aggregate = aggregate or polars_aggregate
    engine_check = getattr(aggregate, "check", None)
    if engine_check is not None:
        engine_check(plan)  # public: the engine and the query kind
    randomness = as_randomness(randomness)
    charge_request: dict[str, Any] = {}
    if ledger is not None:
        fingerprint = fingerprint or dataset.fingerprint(key=ledger.identity_key)
        charge_request = {
            "epsilon": plan.epsilon,
            "delta": plan.delta,
            "kind": "query",
            "description": plan.query.describe(),
            "mechanism": plan.mechanism_label,
            "neighbours": plan.neighbours,
            "partition": plan.partition,
            "seeded": randomness.seeded,
        }
        ledger.check(fingerprint, **charge_request)  # refuse before anything is computed
    if ledger is None:
        exact, dropped, answer = _run(dataset, plan, randomness, aggregate, charged=False)
        answer.notes.append("not recorded in a budget ledger")
    else:
        assert fingerprint is not None
        with ledger.charge(fingerprint, **charge_request) as charge:
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
    if plan.person is not None:
        answer.custodian_only["rows_dropped_by_contribution_bound"] = dropped
    if randomness.seeded:
        answer.notes.append("seeded run: reproducible, NOT fit for release")
    return answer


def _run(dataset: Dataset, plan: QueryPlan, randomness: Randomness, aggregate: Aggregator,
         *, charged: bool) -> tuple[ExactAggregate, int, QueryAnswer]:
    """Read the data and answer (after the charge). A failure here may depend on the data, so its
    message says that the query's budget counts as spent."""
    try:
        exact, dropped = aggregate(dataset, plan, randomness)
        return exact, dropped, _perturb(exact, plan, randomness)
    except CrowdsafeError as error:
        spent = (f"the query's (ε = {plan.epsilon:g}, δ = {plan.delta:g}) was charged to the ledger and stays "
                 "spent" if charged else "run with a ledger, this abort would count as spent budget")
        raise type(error)(f"{error} (the query stopped after reading the data: {spent})") from error


# -- planning ----------------------------------------------------------------------------------


def check_query(dataset: Dataset, query: str | Query, **options: Any) -> None:
    """Raise exactly the errors :func:`answer_query` raises for bad input, touching nothing.

    ``options`` are answer_query's keyword arguments (``epsilon`` required); the ledger-related
    ones and ``randomness`` are ignored.
    """
    for ignored in ("ledger", "fingerprint", "randomness"):
        options.pop(ignored, None)
    _plan(
        dataset, query, options.pop("epsilon"), options.pop("delta", 0.0), options.pop("mechanism", None),
        options.pop("calibration_name", "analytic"), options.pop("neighbours", "add-remove"),
        options.pop("max_rows_per_person", None), options.pop("mean_split", 0.5), options.pop("partition", None),
        options.pop("domain", None),
    )
    if options:
        raise ParameterError(f"unknown query option(s): {', '.join(sorted(options))}")


def _plan(
    dataset: Dataset,
    query: str | Query,
    epsilon: float,
    delta: float,
    mechanism: str | None,
    calibration_name: str,
    neighbours: str,
    max_rows_per_person: int | None,
    mean_split: float,
    partition: str | None,
    domain: Mapping[str, Sequence[Any]] | None,
) -> QueryPlan:
    parsed = parse(query) if isinstance(query, str) else query
    check_columns(parsed, dataset.schema.names)
    condition = compile_filter(parsed.where, dict(dataset.frame.schema))
    epsilon = calibration.check_epsilon(epsilon)
    delta = calibration.check_delta(delta)
    neighbours = check_neighbours(neighbours)
    if calibration_name not in ("analytic", "classic"):
        raise ParameterError(f"unknown Gaussian calibration {calibration_name!r}: use 'analytic' or 'classic'")
    if not 0.0 < mean_split < 1.0:
        raise ParameterError(f"mean_split must lie strictly between 0 and 1, got {mean_split}")
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
                "say how many rows per person a query may use (max_rows_per_person / --max-rows-per-person)"
            )
        rows_per_person = check_rows_per_person(max_rows_per_person)

    kind = parsed.kind
    if kind == "quantile":
        if mechanism not in (None, "exponential"):
            raise ParameterError("quantiles use the exponential mechanism (ε-DP); do not set a mechanism")
        mechanism = "exponential"
    else:
        mechanism = mechanism or "laplace"
        if mechanism not in MECHANISMS:
            raise ParameterError(f"unknown mechanism {mechanism!r}: use 'laplace' or 'gaussian'")
        if mechanism == "gaussian":
            calibration.check_delta(delta, positive=True)
            shares = (mean_split, 1.0 - mean_split) if kind == "mean" else (1.0,)
            if calibration_name == "classic":
                for share in shares:  # refuse ε ≥ 1 now, before anything is charged
                    calibration.classic_gaussian_sigma(epsilon * share, delta * share, 1.0)
    if kind in ("sum", "mean", "quantile"):
        if parsed.bounds is None:
            raise ParameterError(
                f"{kind} needs clamping bounds: add 'clamp LOW..HIGH' after {kind}({parsed.column}), "
                "with bounds from public knowledge, never from the data"
            )
        check_bounds(*parsed.bounds, what=f"{kind}({parsed.column})")
        dtype = dataset.frame.schema[parsed.column or ""]
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
            _cell_key(dataset, dimension)  # checks bins against the column type
        domains = tuple(histogram_domain(dataset, d, domain) for d in parsed.dimensions)
        if all(values is not None for values, _ in domains):
            size = math.prod(len(values) for values, _ in domains)  # type: ignore[arg-type]
            if size > MAX_CELLS:  # public: the domains are
                raise ParameterError(
                    f"the table would have {size:,} cells (limit {MAX_CELLS:,}); bin or drop a column"
                )
        if not all(values is not None for values, _ in domains):
            if mechanism != "laplace":
                raise ParameterError(
                    "a histogram over values taken from the data needs the Laplace mechanism; give public "
                    "values or bins for every column to use the Gaussian"
                )
            if delta <= 0:
                private = next(d.column for d, (values, _) in zip(parsed.dimensions, domains) if values is None)
                example = (f"bins ({private}[0..100 by 10])" if dataset.frame.schema[private].is_numeric()
                           else f"its values ({private} in ('a', 'b'))")
                raise ParameterError(
                    f"the values of '{private}' are not public, so the set of cells would leak which values "
                    f"occur: give {example}, or allow δ > 0 to release only the cells above a noisy threshold"
                )
            charged_delta = delta

    part = None
    if partition is not None:
        if partition not in dataset.schema.names:
            raise SchemaError(f"the partition column '{partition}' is not a column of the data")
        value = equality_value(parsed.where, partition)
        if value is None:
            raise ParameterError(
                f"a query on a part of the partition by '{partition}' must filter on {partition} = VALUE"
            )
        part = (partition, str(value))
    label = {"laplace": "discrete Laplace", "gaussian": "discrete Gaussian", "exponential": "exponential"}[mechanism]
    return QueryPlan(parsed, epsilon, charged_delta, mechanism, calibration_name, neighbours, rows_per_person, person,
                 sensitivity, label, part, mean_split, condition, domains)


# -- reading the rows ----------------------------------------------------------------------------

# (dataset, plan, randomness) -> (exact aggregate, rows dropped by the contribution bound)
Aggregator = Callable[[Dataset, "QueryPlan", Randomness], tuple["ExactAggregate", int]]


def polars_aggregate(dataset: Dataset, plan: QueryPlan, randomness: Randomness) -> tuple[ExactAggregate, int]:
    """The exact aggregate on the Polars engine (in this process)."""
    rows, dropped = _rows(dataset, plan, randomness)
    return _EXACT[plan.query.kind](rows, plan, dataset), dropped



def _rows(dataset: Dataset, plan: QueryPlan, randomness: Randomness) -> tuple[pl.LazyFrame, int]:
    """The rows the query reads: filtered, then bounded to c rows per person.

    Without a person identifier the result stays lazy, so the aggregate runs in one Polars pass.
    """
    columns = list(plan.query.columns) or dataset.schema.names[:1]  # a count without a filter
    if plan.person is not None and plan.person not in columns:
        columns.append(plan.person)
    lazy = dataset.frame.lazy().select(columns).filter(plan.condition)
    if plan.person is None:
        return lazy, 0
    bounded = bound_contributions(lazy.collect(), plan.person, plan.rows_per_person, randomness)
    return bounded.frame.lazy(), bounded.dropped


# -- exact aggregates (never shown) ------------------------------------------------------------


@dataclass
class ExactAggregate:
    kind: str
    values: dict[str, Any]
    diagnostics: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _count(rows: pl.LazyFrame, plan: QueryPlan, dataset: Dataset) -> ExactAggregate:
    return ExactAggregate("count", {"count": int(rows.select(pl.len()).collect().item())})


def _integer_sum(
    rows: pl.LazyFrame, dtype: pl.DataType, column: str, low: float, high: float
) -> tuple[int, float, int, dict[str, int]]:
    """The exact clamped sum as an integer number of ``unit`` (1 for integer data and bounds,
    else a power of two 2^30 times smaller than the largest bound), with the count of values.

    Each real value is rounded toward zero to the unit before summing, so the sum is exact integer
    arithmetic: its sensitivity is exactly that of the rounded values (no floating-point drift
    of the kind Casacuberta et al. 2022 found in DP libraries). |value| < 2^31 units and the sum is
    taken in Int128, so it cannot overflow for any realistic number of rows.
    """
    integer, unit = sum_grid(dtype, low, high)
    value = pl.col(column).fill_nan(None) if dtype.is_float() else pl.col(column)
    if integer:
        low, high = int(low), int(high)  # integer literals: comparing with a float would cast the column
        clamped = pl.when(value < low).then(low).when(value > high).then(high).otherwise(value)
        scaled = clamped.cast(pl.Int64)
    else:
        value = value.cast(pl.Float64)
        clamped = pl.when(value < low).then(low).when(value > high).then(high).otherwise(value)
        # x/unit is exact (a power of two) and below 2^31 in magnitude after clamping, so the cast
        # truncates toward zero without any overflow.
        scaled = (clamped * (1.0 / unit)).cast(pl.Int64, wrap_numerical=True)
    stats = rows.select(
        total=scaled.cast(pl.Int128).sum(),  # |value| < 2^31 units: no overflow below 2^96 values
        values=value.count(),
        below=(value < low).sum(),
        above=(value > high).sum(),
    ).collect().row(0, named=True)
    return sum_stats(stats, unit)


def sum_grid(dtype: pl.DataType, low: float, high: float) -> tuple[bool, float]:
    """Whether a clamped sum is summed as integers, and its unit (1, or the power of two 2^30
    times smaller than the largest bound); see :func:`_integer_sum`."""
    integer = dtype.is_integer() and float(low).is_integer() and float(high).is_integer()
    if integer:
        return True, 1.0
    return False, math.ldexp(1.0, math.floor(math.log2(max(abs(low), abs(high)))) - _SUM_UNIT_BITS)


def sum_stats(stats: Mapping[str, Any], unit: float) -> tuple[int, float, int, dict[str, int]]:
    """(total in units, unit, count of values, clamping counts for the custodian) from an
    engine's one-pass statistics ``total``, ``values``, ``below``, ``above``. The total is summed
    in 128-bit (Polars) or 38-digit decimal (Spark) integers, so no row count makes it overflow
    and nothing here aborts on the data."""
    clamped = {"values_clamped_up": int(stats["below"] or 0), "values_clamped_down": int(stats["above"] or 0)}
    return int(stats["total"] or 0), unit, int(stats["values"] or 0), clamped


def _sum_units_sensitivity(plan: QueryPlan, unit: float) -> int:
    """The sum's sensitivity in units: c·max(|L|, |U|) (add/remove) or c·(U − L) (change),
    with the bounds rounded toward zero to the unit like the values (a monotone map, so every
    rounded value lies between the rounded bounds)."""
    assert plan.query.bounds is not None
    low, high = (math.trunc(b / unit) for b in plan.query.bounds)
    per_row = max(abs(low), abs(high)) if plan.neighbours == "add-remove" else high - low
    return plan.rows_per_person * max(1, int(per_row))


def _sum(rows: pl.LazyFrame, plan: QueryPlan, dataset: Dataset) -> ExactAggregate:
    assert plan.query.column is not None and plan.query.bounds is not None
    dtype = dataset.frame.schema[plan.query.column]
    return sum_exact(plan, _integer_sum(rows, dtype, plan.query.column, *plan.query.bounds))


def sum_exact(plan: QueryPlan, summed: tuple[int, float, int, dict[str, int]]) -> ExactAggregate:
    """The exact aggregate of a sum or mean from (total, unit, count, clamping diagnostics)."""
    total, unit, count, clamped = summed
    values = {"total": total, "unit": unit, "units_sensitivity": _sum_units_sensitivity(plan, unit), "count": count}
    return ExactAggregate(plan.query.kind, values, diagnostics=clamped)


def _quantile(rows: pl.LazyFrame, plan: QueryPlan, dataset: Dataset) -> ExactAggregate:
    assert plan.query.column is not None and plan.query.bounds is not None
    column = rows.select(pl.col(plan.query.column)).collect().to_series()
    if column.dtype.is_float():
        column = column.fill_nan(None)  # NaN is missing, as in sums: no data-dependent abort
    column = column.drop_nulls()
    low, high = plan.query.bounds
    integer = column.dtype.is_integer() and float(low).is_integer() and float(high).is_integer()
    values = column.cast(pl.Float64).to_numpy()
    clamped = {
        "values_clamped_up": int(np.count_nonzero(values < low)),
        "values_clamped_down": int(np.count_nonzero(values > high)),
    }
    return ExactAggregate("quantile", {"values": values, "integer": integer}, diagnostics=clamped)


# -- histograms ----------------------------------------------------------------------------------


def histogram_domain(
    dataset: Dataset, dimension: Dimension, domain: Mapping[str, Sequence[Any]] | None = None
) -> tuple[list[Any] | None, str]:
    """The public values of one histogram column, and where they come from.

    In order: bins or a value list written in the query; ``domain`` given by the caller; the
    declared order of an ordinal attribute; the categories of an Enum column; the leaves of a
    bundled dataset's hierarchy (written from the dataset's documentation, not from its rows).
    None when there is no public domain: the values present in the data are themselves private.
    """
    column = dimension.column
    if dimension.bins is not None:
        return dimension.bins.labels(), "bins in the query"
    if dimension.values is not None:
        return list(dimension.values), "values in the query"
    if domain and column in domain:
        return list(domain[column]), "domain given by the caller"
    attribute = dataset.schema[column]
    if attribute.order is not None:
        return [str(v) for v in attribute.order], "declared order in the schema"
    dtype = dataset.frame.schema[column]
    if isinstance(dtype, pl.Enum):
        return dtype.categories.to_list(), "categories of the Enum column"
    hierarchy = dataset.hierarchies.get(column)
    if hierarchy is not None and dataset.schema.source.endswith("(bundled)"):
        return hierarchy.leaves.to_list(), "hierarchy of the bundled dataset (data-independent)"
    return None, "values present in the data (private)"


def _cell_key(dataset: Dataset, dimension: Dimension) -> pl.Expr:
    column = dimension.column
    name = _KEY.format(column)
    dtype = dataset.frame.schema[column]
    if dimension.bins is not None:
        if not dtype.is_numeric():
            raise SchemaError(f"bins need a numeric column; '{column}' holds {dtype}")
        bins = dimension.bins
        index = ((pl.col(column).cast(pl.Float64).clip(bins.low, bins.high) - bins.low) / bins.width).floor()
        labels = pl.Series(bins.labels(), dtype=pl.String)
        return index.cast(pl.Int64).clip(0, bins.count - 1).replace_strict(
            list(range(bins.count)), labels, return_dtype=pl.String
        ).alias(name)
    return pl.col(column).alias(name)  # text keys become String after the group-by


def _histogram(rows: pl.LazyFrame, plan: QueryPlan, dataset: Dataset) -> ExactAggregate:
    dims = plan.query.dimensions
    keys = [_cell_key(dataset, d) for d in dims]
    names = [_KEY.format(d.column) for d in dims]
    text = [pl.col(n).cast(pl.String) for d, n in zip(dims, names) if d.bins is None
            and is_text(dataset.frame.schema[d.column])]
    counts = rows.select(keys).group_by(names).len(name="count").with_columns(text).collect()
    return histogram_exact(counts, plan)


def cell_column(column: str) -> str:
    """The name of a histogram's cell-key column for ``column`` in an engine's count table."""
    return _KEY.format(column)


def histogram_exact(counts: pl.DataFrame, plan: QueryPlan) -> ExactAggregate:
    """The exact histogram from an engine's counts of the cells present (one column per
    dimension, named :func:`cell_column`, binned columns as their bin labels, text as String;
    and ``count``): every cell of a public domain, empty ones included."""
    dims = plan.query.dimensions
    names = [_KEY.format(d.column) for d in dims]
    domains = plan.domains
    notes = [f"cells of '{d.column}': {source}" for d, (_, source) in zip(dims, domains)]
    if plan.public_domain:
        grid: pl.DataFrame | None = None
        for name, (values, _) in zip(names, domains):
            dtype = counts.schema[name]
            series = pl.Series(name, values, dtype=dtype if values else None, strict=False)
            part = series.unique(maintain_order=True).to_frame()
            grid = part if grid is None else grid.join(part, how="cross")
        assert grid is not None
        table = grid.join(counts, on=names, how="left", nulls_equal=True, maintain_order="left").with_columns(
            pl.col("count").fill_null(0).cast(pl.Int64)
        )
        outside = int(counts.get_column("count").sum()) - int(table.get_column("count").sum())
        return ExactAggregate("histogram", {"table": table, "names": names, "public": True},
                              diagnostics={"rows_outside_the_domain": outside}, notes=notes)
    table = counts.with_columns(pl.col("count").cast(pl.Int64))
    return ExactAggregate("histogram", {"table": table, "names": names, "public": False}, notes=notes)


_EXACT = {"count": _count, "sum": _sum, "mean": _sum, "histogram": _histogram, "quantile": _quantile}


# -- noise ---------------------------------------------------------------------------------------


def _integer_noise(value: Any, plan: QueryPlan, epsilon: float, delta: float, sensitivity: int,
                   randomness: Randomness, *, one_coordinate: bool = True, l2: float | None = None) -> NoisyValue:
    if plan.mechanism == "gaussian":
        return gaussian_mechanism(
            value, epsilon=epsilon, delta=delta, sensitivity=l2 if l2 is not None else sensitivity,
            randomness=randomness, calibration_name=plan.calibration_name, integer=True,  # type: ignore[arg-type]
            one_coordinate=one_coordinate,
        )
    return laplace_mechanism(value, epsilon=epsilon, sensitivity=sensitivity, randomness=randomness, integer=True)


def noisy_total(total: int, units_sensitivity: int, unit: float, plan: QueryPlan, epsilon: float, delta: float,
                randomness: Randomness) -> NoisyValue:
    """Integer noise for an integer total of ``unit``s with integer sensitivity.

    A sensitivity above 2^13 units is first coarsened: the total is rounded to multiples of 2^j
    (exact integer arithmetic) so that the sensitivity spans 4096 to 8191 coarse steps, plus one
    step for the rounding (see :mod:`crowdsafe.mechanisms.discretization`).
    """
    shift = max(0, units_sensitivity.bit_length() - 13)
    if shift:
        coarse = (2 * total + (1 << shift)) >> (shift + 1)  # round(total / 2^shift), exactly
        sensitivity = (units_sensitivity >> shift) + 1
    else:
        coarse, sensitivity = total, units_sensitivity
    result = _integer_noise(np.int64(coarse), plan, epsilon, delta, sensitivity, randomness)
    scale = unit * (1 << shift)
    return result if scale == 1.0 else result.rescaled(scale, f"on a grid of {scale:g}")


def _perturb(exact: ExactAggregate, plan: QueryPlan, randomness: Randomness) -> QueryAnswer:
    kind = plan.query.kind
    eps, delta = plan.epsilon, plan.delta
    components: dict[str, NoisyValue] = {}
    notes = list(exact.notes)
    if kind == "count":
        noisy = _integer_noise(np.int64(exact.values["count"]), plan, eps, delta, plan.rows_per_person, randomness)
        value: Any = noisy.value
        interval = noisy.error_interval
        components["count"] = noisy
    elif kind == "sum":
        v = exact.values
        noisy = noisy_total(v["total"], v["units_sensitivity"], v["unit"], plan, eps, delta, randomness)
        value, interval = noisy.value, noisy.error_interval
        components["sum"] = noisy
    elif kind == "mean":
        value, interval, components = _noisy_mean(exact, plan, randomness)
        budget = "ε and δ" if plan.mechanism == "gaussian" else "ε"
        notes.append(f"mean = noisy sum / noisy count; {budget} split {plan.mean_split:.0%} / "
                     f"{1 - plan.mean_split:.0%} between them (sequential composition)")
        noisy = components["sum"]
    elif kind == "histogram":
        return _noisy_histogram(exact, plan, randomness)
    else:
        assert plan.query.q is not None and plan.query.bounds is not None
        noisy = quantile_mechanism(
            exact.values["values"], plan.query.q, lower=plan.query.bounds[0], upper=plan.query.bounds[1],
            epsilon=eps, sensitivity=plan.sensitivity, randomness=randomness, integer=exact.values["integer"],
        )
        value, interval = noisy.value, noisy.error_interval
        components["quantile"] = noisy
        notes.append("the error interval bounds the rank of the answer, in rows")
    return QueryAnswer(
        query=plan.query.describe(), kind=kind, value=value, epsilon=eps, delta=delta,
        mechanism=noisy.mechanism if kind != "mean" else "noisy sum / noisy count",
        noise_scale=noisy.noise_scale, error_interval=interval, error_unit=noisy.error_unit,
        sensitivity=plan.sensitivity, privacy_unit=_unit_text(plan), dataset={}, randomness=randomness.describe(),
        notes=notes, custodian_only=dict(exact.diagnostics), components=components,
    )


def _noisy_mean(exact: ExactAggregate, plan: QueryPlan,
                randomness: Randomness) -> tuple[float, tuple[float, float], dict[str, NoisyValue]]:
    """Noisy sum / noisy count, each with its share of (ε, δ) (sequential composition).

    The 95% interval: with probability ≥ 95% both noises lie in their 97.5% intervals (union
    bound), and then the exact mean lies between the extremes of (S ± a)/(C ± b); it is also
    within [L, U]. Everything here is computed from the noisy values and public scales.
    """
    assert plan.query.bounds is not None
    low, high = plan.query.bounds
    v = exact.values
    share = plan.mean_split
    noisy_sum = noisy_total(v["total"], v["units_sensitivity"], v["unit"], plan, plan.epsilon * share,
                            plan.delta * share, randomness)
    count_sensitivity_ = plan.rows_per_person
    noisy_count = _integer_noise(np.int64(v["count"]), plan, plan.epsilon * (1 - share), plan.delta * (1 - share),
                                 count_sensitivity_, randomness)
    s, c = float(noisy_sum.value), float(noisy_count.value)
    mean = min(high, max(low, s / c)) if c >= 1 else (low + high) / 2.0
    a = noisy_sum.half_width_at(0.975)
    b = noisy_count.half_width_at(0.975)
    if c - b >= 1:
        corners = [(s + da) / (c + db) for da in (-a, a) for db in (-b, b)]
        lo, hi = max(low, min(corners)), min(high, max(corners))
    else:
        lo, hi = low, high
    return mean, (lo - mean, hi - mean), {"sum": noisy_sum, "count": noisy_count}


def _noisy_histogram(exact: ExactAggregate, plan: QueryPlan, randomness: Randomness) -> QueryAnswer:
    table: pl.DataFrame = exact.values["table"]
    names: list[str] = exact.values["names"]
    counts = table.get_column("count").to_numpy().astype(np.int64)
    sensitivity = plan.sensitivity
    notes = list(exact.notes)
    if exact.values["public"]:
        noisy = _integer_noise(counts, plan, plan.epsilon, plan.delta, int(sensitivity.l1), randomness,
                               one_coordinate=sensitivity.one_coordinate, l2=sensitivity.l2)
        released = table.with_columns(pl.Series("count", np.asarray(noisy.value, dtype=np.int64)))
        notes.append(f"{released.height:,} cells, every cell of the public domain, one ε for the table "
                     "(parallel composition over cells)")
    else:
        threshold, needed = stability_threshold(plan)
        noisy = _integer_noise(counts, plan, plan.epsilon, 0.0, int(sensitivity.l1), randomness)
        noisy_counts = np.asarray(noisy.value, dtype=np.int64)
        released = table.with_columns(pl.Series("count", noisy_counts)).filter(pl.Series(noisy_counts >= threshold))
        notes.append(
            f"no public domain: only cells whose noisy count reaches {threshold} are released (stability-based "
            f"histogram, Korolova et al. 2009; Bun, Nissim & Stemmer 2016), which needs δ ≥ {needed:.3g}"
        )
    renamed = released.rename({n: n.removeprefix(_KEY.format("")) for n in names})
    return QueryAnswer(
        query=plan.query.describe(), kind="histogram", value=renamed, epsilon=plan.epsilon, delta=plan.delta,
        mechanism=noisy.mechanism, noise_scale=noisy.noise_scale, error_interval=noisy.error_interval,
        error_unit="value (per cell)", sensitivity=sensitivity, privacy_unit=_unit_text(plan), dataset={},
        randomness=randomness.describe(), notes=notes, custodian_only=dict(exact.diagnostics),
        components={"cells": noisy},
    )


def stability_threshold(plan: QueryPlan) -> tuple[int, float]:
    """The smallest release threshold τ for a histogram over the cells present in the data.

    Neighbours differ by at most c cells that exist on one side only, each with count ≤ c. With
    discrete Laplace noise (ratio α per step) such a cell passes τ = c + m with probability at
    most α^m/(1+α); the union over c cells gives δ_S, and the histogram is (ε, δ)-DP with
    δ = e^ε·δ_S/(1 − δ_S) (the cells on both sides are ε-DP by the usual argument).
    """
    c = plan.rows_per_person
    noise = DiscreteLaplaceNoise.for_privacy(plan.epsilon, int(plan.sensitivity.l1))
    log_alpha = -noise.s / noise.t
    m = 1
    while True:
        delta_s = c * math.exp(m * log_alpha) / (1 + math.exp(log_alpha))
        delta = math.exp(plan.epsilon) * delta_s / (1 - delta_s) if delta_s < 1 else 1.0
        if delta <= plan.delta:
            return c + m, delta
        m = max(m + 1, int(m * 1.05))


def _unit_text(plan: QueryPlan) -> str:
    who = "one row is one person" if plan.person is None else (
        f"a person ('{plan.person}') contributes at most {plan.rows_per_person} row(s)"
    )
    how = "added or removed" if plan.neighbours == "add-remove" else "changed"
    return f"{who}; neighbouring datasets: one person {how}"


def _summary(value: Any) -> Any:
    if isinstance(value, pl.DataFrame):
        return {"cells": value.height}
    return value


__all__ = ["MECHANISMS", "QueryAnswer", "answer_query", "check_query", "histogram_domain", "noisy_total"]
