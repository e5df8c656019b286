"""A DP query's plan, its exact aggregate and its answer: the types the query pipeline passes on.

:class:`QueryPlan` holds everything decided before the data is read; :class:`ExactAggregate` is
what the data gives (never shown); :class:`QueryAnswer` is the noisy answer with its guarantee
(see "What an answer reveals" in :mod:`crowdsafe.mechanisms.queries`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.mechanisms.additive import NoisyValue
from crowdsafe.mechanisms.gaussian import Calibration
from crowdsafe.mechanisms.query_language import Query
from crowdsafe.mechanisms.sensitivity import Sensitivity
from crowdsafe.number_text import rounded_up
from crowdsafe.privacy.certificate import unreviewed_reasons
from crowdsafe.randomness import Randomness


@dataclass(frozen=True, slots=True)
class QueryRequest:
    """One DP query and how it is answered: everything the plan depends on, all public (fixed
    before the data is read). :func:`crowdsafe.api.query` builds it once; the driver, the
    engines and :func:`~crowdsafe.mechanisms.queries.answer_query` take it as it is.

    Fields are checked where they always were, in the plan
    (:func:`~crowdsafe.mechanisms.queries.check_query`), before the ledger is touched.

    - ``query``: the query text (:mod:`crowdsafe.mechanisms.query_language`) or a parsed
      :class:`~crowdsafe.mechanisms.query_language.Query`.
    - ``epsilon``, ``delta``: the query's privacy loss (δ > 0 only for the Gaussian mechanism or a
      histogram over values taken from the data).
    - ``mechanism``: "laplace" (ε-DP, the default) or "gaussian" ((ε, δ)-DP); quantiles always use
      the exponential mechanism (leave it None).
    - ``calibration_name``: the Gaussian's calibration, "analytic" or "classic" (None: analytic;
      given with another mechanism, refused: it would not be read).
    - ``neighbours``: the neighbour notion, "add-remove" or "change".
    - ``max_rows_per_person``: the contribution bound, required when the schema names a person
      identifier.
    - ``domain``: public values of histogram columns.
    - ``mean_split``: the share of ε (and δ) a mean spends on its sum, the rest on its count.
    - ``partition``: a column the filter fixes with ``column = value``; the ledger then composes
      such queries in parallel.
    """

    query: str | Query
    epsilon: float
    delta: float = 0.0
    mechanism: str | None = None
    calibration_name: str | None = None
    neighbours: str = "add-remove"
    max_rows_per_person: int | None = None
    domain: Mapping[str, Sequence[Any]] | None = None
    mean_split: float = 0.5
    partition: str | None = None


@dataclass
class QueryAnswer:
    """A DP answer with its guarantee (see "What an answer reveals" in the module docstring).

    ``custodian_only``: exact facts about the data for the custodian's bookkeeping (rows dropped
    by the contribution bound, values clamped, rows outside the domain). They are NOT
    differentially private, are not part of :meth:`as_dict` unless asked for, and must not be
    published with the answer. ``unreviewed_schema``: the schema orders the answer's public
    domain came from that a schema draft read from the data, unreviewed (``from_data``); any
    makes it not fit for release (:attr:`unreviewed_reasons`)."""

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
    unreviewed_schema: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def fit_for_release(self) -> bool:
        """Secure randomness, and no schema choice read from the data left unreviewed."""
        return bool(self.randomness.get("fit_for_release", False)) and not self.unreviewed_schema

    @property
    def unreviewed_reasons(self) -> list[str]:
        """One reason per column of :attr:`unreviewed_schema` (as a certificate states it)."""
        return unreviewed_reasons(self.unreviewed_schema)

    def __repr__(self) -> str:
        # concise and public: the answer and its guarantee (the custodian-only facts are not shown)
        value = f"{self.value.height}-row table" if isinstance(self.value, pl.DataFrame) else repr(self.value)
        return (f"QueryAnswer({self.query!r}: {value}, epsilon={rounded_up(self.epsilon)}, "
                f"delta={rounded_up(self.delta, 3)}, "
                f"{self.mechanism}, fit_for_release={self.fit_for_release})")

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
        if self.unreviewed_schema:
            public["unreviewed_schema"] = {c: list(m) for c, m in self.unreviewed_schema.items()}
            public["unfit_reasons"] = self.unreviewed_reasons
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
    calibration_name: Calibration
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


@dataclass
class ExactAggregate:
    kind: str
    values: dict[str, Any]
    diagnostics: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# (dataset, plan, randomness) -> (exact aggregate, rows dropped by the contribution bound)
Aggregator = Callable[[Dataset, QueryPlan, Randomness], tuple[ExactAggregate, int]]
