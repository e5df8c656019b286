"""Re-identification risk of a table's records (El Emam 2013, "Guide to the De-Identification of
Personal Health Information"; El Emam and Dankar 2008).

With f_j the size of class j in the table (n rows, J classes) and, when a population table is
given, F_j the number of population records that class j's published values cover:

- **prosecutor** (the attacker knows the target is in the table): a record of class j is
  re-identified with probability 1/f_j. Highest risk 1/min f_j (= 1/k), average risk J/n (the
  expected share of records re-identified when every record is attacked), and the share of
  records whose risk exceeds a threshold τ (1/f_j > τ).
- **journalist** (the attacker does not know whether the target is in the table, and matches
  against the population): risk 1/F_j; highest 1/min F_j, share above τ.
- **marketer** (the attacker matches every record and counts correct matches): expected share
  re-identified, (1/n) Σ_j f_j / F_j with a population, J/n without one (the table is then
  its own population).
- **sample uniques**: records alone in their class (f_j = 1).
- **population uniques**, estimated by Zayatz's method (see :func:`zayatz_population_uniques`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import COUNT, Dataset, code_frequencies, encode, encode_series
from crowdsafe.data.generalized import AttributeDomain
from crowdsafe.defaults import DEFAULT_THRESHOLD  # risk 1/5: records in classes smaller than 5
from crowdsafe.errors import ParameterError, SchemaError
from crowdsafe.models.classes import EquivalenceClasses
from crowdsafe.number_text import quantity


def check_threshold(threshold: float) -> float:
    """``threshold`` as a number in (0, 1] (a text raised a TypeError from the comparison)."""
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0.0 < threshold <= 1.0:
        raise ParameterError(f"the risk threshold must lie in (0, 1], got {threshold!r}", parameter="threshold")
    return float(threshold)


@dataclass(frozen=True)
class AttackerRisk:
    """Risk figures for one attacker model: ``highest`` (largest record risk), ``average``
    (mean record risk = expected share of records re-identified), ``records_at_highest``, and
    ``share_above_threshold`` (records with risk > ``threshold``)."""

    highest: float
    average: float
    records_at_highest: int
    share_above_threshold: float
    threshold: float


def _attacker_risk(record_risk: np.ndarray, weights: np.ndarray, threshold: float) -> AttackerRisk:
    rows = float(weights.sum())
    highest = float(record_risk.max())
    return AttackerRisk(
        highest=highest,
        average=float((record_risk * weights).sum() / rows),
        records_at_highest=int(weights[record_risk == highest].sum()),
        share_above_threshold=float(weights[record_risk > threshold].sum() / rows),
        threshold=threshold,
    )


def prosecutor_risk(sizes: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> AttackerRisk:
    """Prosecutor risk from the class sizes f_j."""
    sizes = np.asarray(sizes, dtype=np.float64)
    return _attacker_risk(1.0 / sizes, sizes, check_threshold(threshold))


def journalist_risk(
    sizes: np.ndarray, population_sizes: np.ndarray, threshold: float = DEFAULT_THRESHOLD
) -> AttackerRisk:
    """Journalist risk: record risk 1/F_j, weighted by the table's class sizes f_j."""
    return _attacker_risk(1.0 / np.asarray(population_sizes, dtype=np.float64),
                          np.asarray(sizes, dtype=np.float64), check_threshold(threshold))


def marketer_risk(sizes: np.ndarray, population_sizes: np.ndarray | None = None) -> float:
    """Expected share of records correctly re-identified when every record is matched."""
    sizes = np.asarray(sizes, dtype=np.float64)
    if population_sizes is None:
        return len(sizes) / float(sizes.sum())
    return float((sizes / np.asarray(population_sizes, dtype=np.float64)).sum() / sizes.sum())


@dataclass(frozen=True)
class PopulationUniques:
    """Zayatz's estimate: ``estimate`` population uniques among the table's sample uniques,
    ``probability`` = P(population unique | sample unique), for a population of
    ``population_size`` and sampling fraction ``sampling_fraction``."""

    estimator: str
    population_size: int
    sampling_fraction: float
    sample_uniques: int
    probability: float
    estimate: float
    population_share: float
    assumptions: str


ZAYATZ_ASSUMPTIONS = (
    "the table is a simple random sample without replacement from a population of the given size; "
    "the population's distribution of equivalence-class sizes equals the sample's (Zayatz 1991)"
)


def _log_choose(a: int, b: int) -> float:
    return math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(a - b + 1)


def _log_one_in_sample(i: int, population: int, n: int) -> float:
    """ln P(f = 1 | F = i): a population class of i records yields exactly one of n sampled
    without replacement from ``population`` (hypergeometric); -inf when impossible."""
    if i > population or n - 1 > population - i:
        return -math.inf
    return math.log(i) + _log_choose(population - i, n - 1) - _log_choose(population, n)


def zayatz_population_uniques(sizes: np.ndarray, population_size: int) -> PopulationUniques:
    """Zayatz (1991) estimate of the population uniques among a sample's uniques.

    With m_i the number of sample classes of size i, m = Σ m_i, n the sample size and N the
    population size, the probability that a class of population size i yields exactly one
    sample record is hypergeometric: P(f = 1 | F = i) = i · C(N − i, n − 1) / C(N, n). Taking
    the population's class-size distribution equal to the sample's (m_i / m), Bayes gives

        P(F = 1 | f = 1) = (m_1/m) · P(f=1 | F=1) / Σ_i (m_i/m) · P(f=1 | F=i),

    and the estimated number of population uniques is m_1 · P(F = 1 | f = 1) (as described by
    Dankar, El Emam, Neisa and Roffey 2012, BMC Medical Informatics and Decision Making 12:66).
    Assumptions: :data:`ZAYATZ_ASSUMPTIONS`. With N = n (the table is the population) every
    sample unique is a population unique.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    if n == 0:
        raise ParameterError("an empty table has no uniques to estimate")
    population_size = int(population_size)
    if population_size < n:
        raise ParameterError(f"the population ({population_size:,}) cannot be smaller than the table ({n:,} rows)")
    class_sizes, m_i = np.unique(sizes, return_counts=True)
    m1 = int(m_i[class_sizes == 1].sum())
    if m1 == 0:
        probability = 0.0
    else:
        p_unique = np.exp([_log_one_in_sample(int(i), population_size, n) for i in class_sizes])
        denominator = float((m_i * p_unique).sum())
        probability = float(m_i[class_sizes == 1][0] * p_unique[class_sizes == 1][0] / denominator)
    estimate = m1 * probability
    return PopulationUniques(
        estimator="zayatz", population_size=population_size, sampling_fraction=n / population_size,
        sample_uniques=m1, probability=probability, estimate=estimate,
        population_share=estimate / population_size, assumptions=ZAYATZ_ASSUMPTIONS,
    )


def population_class_sizes(classes: EquivalenceClasses, population: Dataset) -> np.ndarray:
    """F_j: the number of population records that class j's published values cover.

    Population values are read against each quasi-identifier's domain (with the hierarchy of
    the release or its original, so node labels and ranges resolve); a record is counted for
    every class whose cells all cover it. One join per quasi-identifier over frequency tables.
    """
    columns = classes.quasi_identifiers
    absent = [c for c in columns if c not in population.columns]
    if absent:
        raise SchemaError(f"the population table has no column '{absent[0]}'")
    source = classes.original or classes.dataset
    hierarchies = {c: source.hierarchies[c] for c in columns if c in source.hierarchies}
    population = population.with_hierarchies(hierarchies) if hierarchies else population
    tuples = code_frequencies(encode(population, columns))
    published = classes.published()
    candidates: pl.DataFrame | None = None
    for column in columns:
        domain = AttributeDomain.of(population, column)
        cell_of_class, distinct = encode_series(published.get_column(column))
        cells, codes = domain.cover(distinct, strict=False).membership
        membership = pl.DataFrame({"cell": cells, column: codes.astype(np.uint32)})
        matched = (
            pl.DataFrame({"class": np.arange(classes.n_classes), "cell": cell_of_class.astype(np.int64)})
            .join(membership, on="cell").drop("cell")
        )
        if candidates is None:
            candidates = tuples.join(matched, on=column)
        else:
            candidates = candidates.join(matched, on=["class", column], how="semi")
    assert candidates is not None
    counted = candidates.group_by("class").agg(pl.col(COUNT).sum())
    sizes = np.zeros(classes.n_classes, dtype=np.int64)
    sizes[counted.get_column("class").to_numpy()] = counted.get_column(COUNT).to_numpy()
    return sizes


@dataclass(frozen=True)
class RiskReport:
    """Re-identification risk of a table (see the module docstring)."""

    rows: int
    classes: int
    threshold: float
    prosecutor: AttackerRisk
    journalist: AttackerRisk | None
    marketer: float
    sample_uniques: int
    sample_unique_share: float
    population_uniques: PopulationUniques | None
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def assess_risk(
    classes: EquivalenceClasses,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    population: Dataset | None = None,
    population_size: int | None = None,
) -> RiskReport:
    """Prosecutor, journalist (with ``population``), marketer risk, sample uniques, and the
    Zayatz population-uniques estimate (with ``population_size``, or the population table's size)."""
    sizes = classes.sizes
    notes: list[str] = []
    journalist = None
    population_sizes = None
    if population is not None:
        population_sizes = population_class_sizes(classes, population)
        short = population_sizes < sizes
        if short.any():
            one = int(short.sum()) == 1
            notes.append(
                f"{quantity(int(short.sum()), 'class', 'classes')} {'matches' if one else 'match'} fewer population "
                f"records than {'it holds' if one else 'they hold'} (the population table does not contain the "
                f"table); {'its' if one else 'their'} F was raised to {'its' if one else 'their'} size"
            )
            population_sizes = np.maximum(population_sizes, sizes)
        journalist = journalist_risk(sizes, population_sizes, threshold)
        population_size = population_size or population.n_rows
    uniques = int((sizes == 1).sum())
    estimate = None
    if population_size is not None:
        estimate = zayatz_population_uniques(sizes, population_size)
    return RiskReport(
        rows=classes.rows,
        classes=classes.n_classes,
        threshold=check_threshold(threshold),
        prosecutor=prosecutor_risk(sizes, threshold),
        journalist=journalist,
        marketer=marketer_risk(sizes, population_sizes),
        sample_uniques=uniques,
        sample_unique_share=uniques / classes.rows,
        population_uniques=estimate,
        notes=notes,
    )

