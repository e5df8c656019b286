"""Public model functions, releases with generalized cells, re-identification risk and the
Zayatz estimator (against exact combinatorics written here)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from crowdsafe import models
from crowdsafe.data import Dataset, Schema
from crowdsafe.datasets import adult
from crowdsafe.errors import HierarchyError, ParameterError, SchemaError
from crowdsafe.models.risk import journalist_risk, marketer_risk, population_class_sizes, prosecutor_risk

FRAME = pl.DataFrame({
    "age": [30, 30, 30, 40, 40, 50, None, None],
    "sex": ["F", "F", "F", "M", "M", "M", "F", "F"],
    "disease": ["flu", "flu", "cold", "flu", "hiv", "hiv", "cold", "flu"],
})


def test_table_functions_on_a_frame():
    # classes (age, sex): (30,F) x3, (40,M) x2, (50,M) x1, (missing,F) x2: the missing age is a value
    assert models.k_anonymity(FRAME, ["age", "sex"]) == 1
    assert models.k_anonymity(FRAME.filter(pl.col("age") != 50), ["age", "sex"]) == 2
    below = models.classes_below(FRAME, 3, ["age", "sex"])
    assert sorted(below.get_column("count").to_list()) == [1, 2, 2]
    assert models.l_diversity(FRAME, "disease", ["age", "sex"]) == 1
    assert models.l_diversity(FRAME.filter(pl.col("age") != 50), "disease") == 2  # qi: the other columns
    entropy = models.entropy_l_diversity(FRAME.filter(pl.col("age") != 50), "disease")
    assert entropy == pytest.approx(math.exp(-(2 / 3) * math.log(2 / 3) - (1 / 3) * math.log(1 / 3)))
    effective = models.effective_anonymity(FRAME, "disease", ["age", "sex"])
    assert dict(zip(effective.get_column("age").to_list(), effective.get_column("effective_anonymity").to_list())) == {
        30: 2, 40: 2, 50: 1, None: 2}


def test_release_cells_that_cover_the_same_values_are_one_class():
    original = adult()
    release = pl.DataFrame({
        "age": ["[25, 30)", "[25, 29]", "[25,29]", "*"],
        "marital-status": ["Married", "{Married-AF-spouse, Married-civ-spouse}",
                           "{Married-civ-spouse, Married-AF-spouse}", "*"],
        "occupation": ["Sales", "Sales", "Sales", "Sales"],
    })
    dataset = Dataset(release, Schema.of({"age": "categorical", "marital-status": "categorical",
                                          "occupation": "categorical"}, qi=["age", "marital-status"]))
    with_original = models.EquivalenceClasses(dataset, original=original)
    assert sorted(with_original.sizes.tolist()) == [1, 3]
    syntax_only = models.EquivalenceClasses(dataset)  # without the original only the syntax is compared
    assert sorted(syntax_only.sizes.tolist()) == [1, 1, 2]


def test_errors():
    with pytest.raises(SchemaError, match="quasi-identifier"):
        models.l_diversity(FRAME, "disease", ["age", "disease"])
    with pytest.raises(ParameterError, match="unknown ground distance"):
        models.t_closeness(FRAME, "disease", ground="manhattan")
    with pytest.raises(HierarchyError, match="needs a hierarchy"):
        models.t_closeness(FRAME, "disease", ground="hierarchical")
    with pytest.raises(ParameterError, match="whole number"):
        models.recursive_cl_diversity(FRAME, "disease", 0)
    with pytest.raises(SchemaError, match="no attribute named 'zip'"):
        models.k_anonymity(FRAME, ["zip"])


def test_prosecutor_journalist_marketer_by_hand():
    sizes = np.array([1, 2, 5, 12])  # 20 rows, 4 classes
    pros = prosecutor_risk(sizes, threshold=0.2)
    assert pros.highest == 1.0 and pros.records_at_highest == 1
    assert pros.average == pytest.approx(4 / 20)
    assert pros.share_above_threshold == pytest.approx(3 / 20)  # 1/5 is not above 0.2
    population = np.array([3, 2, 50, 100])
    jour = journalist_risk(sizes, population, threshold=0.2)
    assert jour.highest == pytest.approx(1 / 2) and jour.records_at_highest == 2
    assert jour.share_above_threshold == pytest.approx(3 / 20)
    assert jour.average == pytest.approx((1 / 3 + 2 / 2 + 5 / 50 + 12 / 100) / 20)
    assert marketer_risk(sizes, population) == pytest.approx((1 / 3 + 1 + 0.1 + 0.12) / 20)
    assert marketer_risk(sizes) == pytest.approx(4 / 20)
    with pytest.raises(ParameterError, match="threshold"):
        prosecutor_risk(sizes, threshold=0)


def _zayatz_exact(sizes: list[int], population: int) -> float:
    """The Zayatz formula with exact integer combinatorics."""
    n = sum(sizes)
    m = {}
    for s in sizes:
        m[s] = m.get(s, 0) + 1

    def p_one(i: int) -> Fraction:
        return Fraction(i * math.comb(population - i, n - 1), math.comb(population, n))

    if 1 not in m:
        return 0.0
    numerator = m[1] * p_one(1)
    denominator = sum(count * p_one(i) for i, count in m.items())
    return float(m[1] * numerator / denominator)


@pytest.mark.parametrize("population", [45, 100, 1000, 10_000])
def test_zayatz_matches_exact_combinatorics(population):
    sizes = [1] * 9 + [2] * 5 + [3] * 3 + [7, 10]  # 45 rows
    result = models.zayatz_population_uniques(np.array(sizes), population)
    assert result.estimate == pytest.approx(_zayatz_exact(sizes, population), rel=1e-9)
    assert result.sample_uniques == 9
    assert 0 <= result.estimate <= 9
    assert result.sampling_fraction == pytest.approx(45 / population)


def test_zayatz_edge_cases():
    whole = models.zayatz_population_uniques(np.array([1, 1, 2]), 4)  # the table is the population
    assert whole.probability == pytest.approx(1.0) and whole.estimate == pytest.approx(2.0)
    none = models.zayatz_population_uniques(np.array([2, 3]), 100)
    assert none.estimate == 0.0
    with pytest.raises(ParameterError, match="cannot be smaller"):
        models.zayatz_population_uniques(np.array([2, 3]), 4)
    # a larger population makes a sample unique less likely to be a population unique
    small = models.zayatz_population_uniques(np.array([1] * 10 + [2] * 10), 100).probability
    large = models.zayatz_population_uniques(np.array([1] * 10 + [2] * 10), 10_000).probability
    assert large < small


def test_journalist_risk_against_a_population_table_with_generalized_cells():
    population = adult(drop_missing=True)
    frame = population.frame
    release = Dataset(
        pl.DataFrame({"age": ["[20, 29]", "[20, 29]", "*"], "sex": ["Female", "Female", "Male"],
                      "income": ["<=50K", ">50K", "<=50K"]}),
        Schema.of({"age": "categorical", "sex": "categorical", "income": "categorical"}, qi=["age", "sex"]),
    )
    classes = models.EquivalenceClasses(release)
    sizes = population_class_sizes(classes, population)
    published = classes.published()
    expected = []
    for age, sex in zip(published.get_column("age").to_list(), published.get_column("sex").to_list()):
        chosen = frame.filter(pl.col("sex") == sex)
        if age != "*":
            chosen = chosen.filter(pl.col("age").is_between(20, 29))
        expected.append(chosen.height)
    assert sizes.tolist() == expected
    report = models.assess_risk(classes, population=population)
    assert report.journalist is not None
    assert report.journalist.highest == pytest.approx(1 / min(expected))
    assert report.population_uniques is not None
    assert report.population_uniques.population_size == population.n_rows


def test_assess_report_on_adult():
    data = adult()
    report = models.assess(data, qi=["age", "sex", "race"], sensitive=["income", "occupation"], target_k=10,
                           population_size=100_000)
    frame = data.frame
    counts = frame.group_by(["age", "sex", "race"]).len().get_column("len").to_numpy()
    assert report.k == counts.min()
    assert report.below_k == int((counts < 10).sum())
    assert report.risk.sample_uniques == int((counts == 1).sum())
    income, occupation = report.sensitive
    assert income.ground_distance == "ordered"  # income is ordinal (<=50K < >50K)
    assert occupation.ground_distance == "hierarchical"  # Adult ships an occupation hierarchy
    assert occupation.l_distinct == models.l_diversity(data, "occupation", ["age", "sex", "race"])
    d = report.to_dict()
    assert d["sensitive"][1]["delta_unbounded"] is True and d["sensitive"][1]["delta"] is None
