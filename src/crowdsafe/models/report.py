"""The privacy assessment of one table: k, ℓ, t, δ, β, effective anonymity, risk, class sizes.

:func:`run_assessment` builds the equivalence classes once and derives every model from them for
an :class:`AssessRequest`; :func:`assess` is its keyword form. The ``check`` command and
:func:`crowdsafe.api.check` print it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from crowdsafe.arguments import names, whole
from crowdsafe.data import Dataset, class_sizes
from crowdsafe.errors import ParameterError
from crowdsafe.models import closeness, disclosure, diversity
from crowdsafe.models.classes import EquivalenceClasses
from crowdsafe.models.risk import DEFAULT_THRESHOLD, RiskReport, assess_risk, check_threshold


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded value is reported as None with a flag beside it."""
    return None if math.isinf(value) else float(value)


@dataclass(frozen=True)
class SensitiveReport:
    """The models over one sensitive attribute (table-level values; see each module)."""

    attribute: str
    distinct_values: int
    l_distinct: int
    l_entropy: float
    recursive_l: int
    recursive_c: float  # satisfied for every c above this; inf: some class has < ℓ values
    ground_distance: str
    t: float
    delta: float  # inf when a class lacks a value of the table
    delta_present: float
    classes_missing_a_value: int
    beta: float
    beta_enhanced: float  # inf when no β holds
    enhanced_beta_violations: int
    effective_anonymity_min: int
    effective_anonymity_mean_class: float
    effective_anonymity_mean_record: float

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for name in ("recursive_c", "delta", "beta_enhanced"):
            out[name] = _finite(getattr(self, name))
            out[f"{name}_unbounded"] = math.isinf(getattr(self, name))
        return out


def assess_sensitive(
    classes: EquivalenceClasses, attribute: str, *, l: int = 2, ground: str = "auto"
) -> SensitiveReport:
    """Every sensitive-attribute model for ``attribute`` on ``classes``."""
    counts = classes.sensitive(attribute)
    hierarchy = classes.dataset.hierarchies.get(attribute)
    chosen = closeness.choose_ground(counts, ground, hierarchy)
    distinct = diversity.distinct_values(counts)
    sizes = counts.class_sizes
    return SensitiveReport(
        attribute=attribute,
        distinct_values=len(counts.observed),
        l_distinct=int(distinct.min()),
        l_entropy=float(diversity.entropy_values(counts).min()),
        recursive_l=l,
        recursive_c=float(diversity.recursive_c_bounds(counts, l).max()),
        ground_distance=chosen,
        t=float(closeness.emd_per_class(counts, chosen, hierarchy).max()),
        delta=float(disclosure.delta_values(counts).max()),
        delta_present=float(disclosure.delta_present_values(counts).max()),
        classes_missing_a_value=int((distinct < len(counts.observed)).sum()),
        beta=float(disclosure.beta_values(counts).max()),
        beta_enhanced=float(disclosure.enhanced_beta_values(counts).max()),
        enhanced_beta_violations=int(disclosure.enhanced_beta_violations(counts).sum()),
        effective_anonymity_min=int(distinct.min()),
        effective_anonymity_mean_class=float(distinct.mean()),
        effective_anonymity_mean_record=float((distinct * sizes).sum() / sizes.sum()),
    )


@dataclass(frozen=True)
class PrivacyReport:
    """k, class sizes, the sensitive-attribute models and the re-identification risk of a table."""

    quasi_identifiers: list[str]
    rows: int
    k: int
    classes: dict[str, Any]
    below_k: int | None
    rows_below_k: int | None
    target_k: int | None
    sensitive: list[SensitiveReport]
    risk: RiskReport
    notes: list[str] = field(default_factory=list)
    #: (distinct, missing) of the columns the classes were counted from, when they were counted
    #: from the distinct tuples (:meth:`EquivalenceClasses.column_counts`); not part of the report
    column_counts: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "quasi_identifiers": self.quasi_identifiers,
            "rows": self.rows,
            "k": self.k,
            "classes": self.classes,
            "target_k": self.target_k,
            "classes_below_target_k": self.below_k,
            "rows_below_target_k": self.rows_below_k,
            "sensitive": [s.to_dict() for s in self.sensitive],
            "risk": self.risk.to_dict(),
            "notes": self.notes,
        }

    def __repr__(self) -> str:
        # concise and labelled, as CheckReport's (the field-by-field repr printed every class-size
        # bucket, sample uniques and risk figure, with no word that they are exact facts about the data)
        qis = ", ".join(self.quasi_identifiers[:8]) + (", …" if len(self.quasi_identifiers) > 8 else "")
        return (f"PrivacyReport(rows={self.rows:,}, k={self.k}, quasi_identifiers=[{qis[:400]}], "
                f"sensitive={len(self.sensitive)}; CUSTODIAN ONLY: do not publish)")


@dataclass(frozen=True, slots=True)
class AssessRequest:
    """What :func:`assess` measures; the tables it reads (the dataset, its original, the
    population) are passed beside it.

    - ``qi`` / ``sensitive``: the quasi-identifiers and the sensitive attributes assessed
      (None: the dataset's roles);
    - ``target_k``: count the classes (and their rows) smaller than this k (None: no count);
    - ``l``: the ℓ of recursive (c, ℓ)-diversity (a whole number ≥ 1; None: 2);
    - ``ground``: the t-closeness ground distance (:data:`~crowdsafe.models.GROUND_DISTANCES`;
      None: auto); ``l`` or ``ground`` given where there is no sensitive attribute is refused
      (they measure sensitive attributes only: accepted, they were not read);
    - ``threshold``: the record-risk threshold of the re-identification risk;
    - ``population_size``: the population the table was drawn from, for the Zayatz estimate of
      population uniques (None: no estimate).

    The figures assessed are exact facts about the data, for the custodian only (no guarantee).
    """

    qi: tuple[str, ...] | None = None
    sensitive: tuple[str, ...] | None = None
    target_k: int | None = None
    l: int | None = None
    ground: str | None = None
    threshold: float = DEFAULT_THRESHOLD
    population_size: int | None = None


def assess(
    dataset: Dataset,
    *,
    qi: Sequence[str] | str | None = None,
    sensitive: Sequence[str] | str | None = None,
    original: Dataset | None = None,
    target_k: int | None = None,
    l: int | None = None,
    ground: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    population: Dataset | None = None,
    population_size: int | None = None,
) -> PrivacyReport:
    """Assess ``dataset`` (an original table or a release, with ``original`` when known).

    ``qi``/``sensitive`` default to the dataset's roles; ``target_k`` counts the classes below
    it; ``l`` is the ℓ of recursive (c, ℓ)-diversity; ``ground`` the t-closeness ground
    distance; ``threshold`` the record-risk threshold; ``population``/``population_size`` enable
    journalist risk and the population-uniques estimate. The keyword form of
    :func:`run_assessment` (it builds the :class:`AssessRequest`).
    """
    request = AssessRequest(  # one name is the list of that name (it was split into characters)
        qi=names(qi, "qi"), sensitive=names(sensitive, "sensitive"),
        target_k=target_k, l=l, ground=ground, threshold=threshold, population_size=population_size,
    )
    return run_assessment(dataset, request, original=original, population=population)


def run_assessment(
    dataset: Dataset,
    request: AssessRequest,
    *,
    original: Dataset | None = None,
    population: Dataset | None = None,
) -> PrivacyReport:
    """The :class:`PrivacyReport` of ``dataset`` for ``request`` (see :func:`assess`);
    ``original``: the table a release was made from; ``population``: a table of the population,
    for journalist risk. Exact facts about the data, for the custodian only."""
    check_request(request)
    attributes = list(request.sensitive) if request.sensitive is not None else dataset.sensitive
    classes = EquivalenceClasses(dataset, request.qi, original=original, sensitive=attributes)
    return assess_classes(classes, request, attributes, population=population)


def check_request(request: AssessRequest) -> None:
    """Refuse a ``target_k`` or a ``population_size`` that is not a whole number ≥ 1, an ℓ that is
    not a whole number ≥ 1 and a threshold that is no number in (0, 1] (before any row is read)."""
    if request.target_k is not None:
        whole(request.target_k, "k", 1)
    if request.population_size is not None:
        whole(request.population_size, "population_size", 1)
    if request.l is not None and (not isinstance(request.l, numbers.Real) or isinstance(request.l, bool)
                                  or int(request.l) != request.l or request.l < 1):
        raise ParameterError(f"l must be a whole number >= 1, got {request.l!r}")
    check_threshold(request.threshold)


def assess_classes(
    classes: EquivalenceClasses, request: AssessRequest, attributes: Sequence[str], *, population: Dataset | None = None
) -> PrivacyReport:
    """The :class:`PrivacyReport` of classes already counted (:func:`run_assessment`'s second
    half; the classes may come from a streamed frequency table), over the sensitive ``attributes``."""
    target_k, l = request.target_k, 2 if request.l is None else request.l
    if not attributes:  # ℓ and the ground distance measure sensitive attributes: given here, they would not be read
        given = next((p for p in ("l", "ground") if getattr(request, p) is not None), None)
        if given is not None:
            raise ParameterError(f"the {given} parameter applies to the sensitive attributes (the sensitive parameter, "
                                 "or the schema's), and none is assessed", parameter=(given, "sensitive"))
    below = rows_below = None
    if target_k is not None:
        small = classes.sizes < target_k
        below, rows_below = int(small.sum()), int(classes.sizes[small].sum())
    notes = []
    if not attributes:
        notes.append("no sensitive attribute: ℓ, t, δ and β need one (--sensitive NAME)")
    return PrivacyReport(
        quasi_identifiers=classes.quasi_identifiers,
        rows=classes.rows,
        k=classes.k,
        classes=class_sizes(classes.sizes),
        below_k=below,
        rows_below_k=rows_below,
        target_k=target_k,
        sensitive=[assess_sensitive(classes, a, l=l, ground=request.ground or "auto") for a in attributes],
        risk=assess_risk(classes, threshold=request.threshold, population=population,
                         population_size=request.population_size),
        notes=notes,
        column_counts=classes.column_counts(),
    )
