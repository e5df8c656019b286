"""The selection's noisy count (selection/candidates.py, PROOF.md §6): the ε split never exceeds ε1,
the count is the discrete Laplace, the candidates are the nodes with at most ρ·n̂/k possible
tuples, the search restricted to them is the argmax of the exact keys over them, and the planner
adds the count exactly when ε1 is at the top of its range."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from samples import sample_of

from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.anonymize.plan import PlanRequest, plan_publication
from crowdsafe.datasets import adult
from crowdsafe.defaults import CELLS_PER_CLASS, COUNT_SHARE, EPSILON1_SHARE_RANGE
from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection import choose_scheme
from crowdsafe.selection.candidates import (
    candidate_mask,
    count_epsilon,
    noisy_count,
    possible_cells,
    selection_epsilon,
)
from crowdsafe.selection.score import make_objective
from crowdsafe.selection.search import gumbel_max_over_lattice, lattice_scores


@pytest.fixture(scope="module")
def adult_data():
    return adult()


def _oracle_bits(seed):
    """Refinement bits that are a fixed function of (node, round) (as in test_selection.py)."""
    def more_bits(indices, round_):
        return np.array([np.random.SeedSequence((seed, int(i), round_)).generate_state(1, np.uint64)[0]
                         for i in indices], dtype=np.uint64)
    return more_bits


def _midpoint_keys(scale, scores, cells, denominator):
    """scale · q_int / D + G, G at the middle of each 53-bit cell, in float64 (independent of the
    selection's exact comparison; only near-ties could differ)."""
    u = (cells.astype(np.float64) + 0.5) * 2.0**-53
    return scale * (np.asarray(scores, dtype=np.float64) / denominator) + -np.log(-np.log(u))


def test_the_split_never_spends_more_than_epsilon1():
    """ε_c ≤ share · ε1 and ε_m + ε_c ≤ ε1, as exact rationals, over many ε1 (with an ε_c that is
    not a float, an ε_m rounded to nearest would exceed it in about half of them)."""
    generator = np.random.default_rng(5)
    for epsilon1 in np.concatenate([generator.uniform(1e-4, 5.0, 2000), [0.05, 0.1, 1 / 3, 0.125]]):
        counted = count_epsilon(float(epsilon1))
        assert 0 < counted <= Fraction(float(epsilon1)) * Fraction(COUNT_SHARE)
        assert counted > Fraction(float(epsilon1)) * Fraction(COUNT_SHARE) * Fraction(999_999, 1_000_000)
        chosen = selection_epsilon(float(epsilon1), counted)
        assert Fraction(chosen) + counted <= Fraction(float(epsilon1))
        assert chosen > 0.89 * epsilon1
        # any ε_c (here a third of the share, not a float): ε_m is rounded down, never to nearest
        odd = Fraction(float(epsilon1)) * Fraction(COUNT_SHARE) / 3
        assert Fraction(selection_epsilon(float(epsilon1), odd)) + odd <= Fraction(float(epsilon1))


def test_the_noisy_count_is_the_discrete_laplace():
    """n̂ − n has Pr[z] = (1 − a)/(1 + a) · a^|z|, a = e^−ε_c: a chi-square over |z| ≤ 4 and the
    tail, and the symmetry of the signs."""
    from scipy import stats

    counted = Fraction(7, 10)
    randomness = Randomness(21)
    draws = np.array([noisy_count(1000, counted, randomness) - 1000 for _ in range(6000)])
    a = math.exp(-float(counted))
    p = [(1 - a) / (1 + a) * a ** abs(z) for z in range(-4, 5)]
    observed = [int((draws == z).sum()) for z in range(-4, 5)] + [int((np.abs(draws) > 4).sum())]
    expected = [q * len(draws) for q in p] + [(1 - sum(p)) * len(draws)]
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    assert abs(int((draws > 0).sum()) - int((draws < 0).sum())) < 4 * math.sqrt(len(draws))


def test_possible_cells_multiply_the_level_sizes(adult_data):
    columns = ["age", "education", "sex", "income"]
    objective = make_objective("classification", "income")
    heights = objective.candidate_heights(columns, adult_data.hierarchies)
    cells = possible_cells(columns, heights, adult_data.hierarchies)
    lattice = Lattice(tuple(columns), heights)
    for node, value in zip(lattice.nodes(), cells):
        assert value == math.prod(adult_data.hierarchies[c].size(int(level)) for c, level in zip(columns, node))
    assert heights[-1] == 0 and cells.min() == 2  # income stays at its two values


def test_an_observed_hierarchy_never_narrows_the_candidates(adult_data):
    """Its node counts come from the data, so it counts as one tuple at every level."""
    import polars as pl

    from crowdsafe.data.builders import observed_flat

    town = observed_flat(pl.Series("town", ["a", "b", "c", "a"]))
    hierarchies = {"town": town, "sex": adult_data.hierarchies["sex"]}
    assert town.observed and town.size(0) == 3
    cells = possible_cells(["town", "sex"], [town.height, 1], hierarchies).reshape(town.height + 1, 2)
    assert (cells == cells[:1, :]).all() and cells[0].tolist() == [2.0, 1.0]


def test_the_candidates_fill_classes_of_k_at_the_noisy_count():
    cells = np.array([2.0, 6.0, 24.0, 120.0, 720.0, 2.0])
    assert candidate_mask(cells, 60, 10, 4).tolist() == [True, True, True, False, False, True]  # 24 * 10 <= 4 * 60
    assert candidate_mask(cells, 59, 10, 4).tolist() == [True, True, False, False, False, True]
    assert candidate_mask(cells, -500, 10, 4).tolist() == [True, False, False, False, False, True]  # the coarsest


@pytest.mark.parametrize(("objective", "columns"), [
    ("retained", ["age", "education", "marital-status", "sex"]),
    ("classification", ["age", "education", "marital-status", "sex", "income"]),
    ("discernibility", ["age", "education", "sex"]),
    ("marginals", ["age", "education", "marital-status", "sex"]),  # its own search, or every node scored
])
def test_the_restricted_search_is_the_argmax_over_the_allowed_nodes(adult_data, objective, columns):
    """For random masks and fixed random bits, the branch and bound (or the full evaluation)
    returns an allowed node whose key is the largest among the allowed nodes' exact keys."""
    chosen = make_objective(objective, "income" if objective == "classification" else None).for_columns(
        columns, adult_data.hierarchies)
    sample = sample_of(adult_data, 3, 0.05)
    k = 20
    lattice, scores = lattice_scores(sample, columns, k, chosen)
    denominator = chosen.key_denominator(k)
    generator, masks = Randomness(4).generator, np.random.default_rng(8)
    heights = chosen.candidate_heights(columns, adult_data.hierarchies)
    by_cells = possible_cells(columns, heights, adult_data.hierarchies)
    for draw in range(8):
        cells = gumbel_cells(generator, lattice.size)
        allowed = masks.random(lattice.size) < 0.3 if draw % 2 else candidate_mask(by_cells, 40 * draw, k)
        allowed[masks.integers(lattice.size)] = True
        for scale in (0.05, 1.0):
            _, index, _ = gumbel_max_over_lattice(sample, columns, k, scale, cells, _oracle_bits(draw), chosen,
                                                  allowed)
            keys = np.where(allowed, _midpoint_keys(scale, scores, cells, denominator), -np.inf)
            assert allowed[index] and index == int(np.argmax(keys))


@pytest.mark.parametrize("name", ["classification", "marginals"])
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_choice_with_the_count_is_among_the_candidates_of_its_count(adult_data, name):
    """choose_scheme draws n̂ first (the same seed gives the same n̂ here), then chooses a node
    with at most ρ·n̂/k possible tuples (or the coarsest); its description states the split."""
    columns = ["age", "workclass", "education", "marital-status", "occupation", "sex", "income"]
    objective = make_objective(name, "income" if name == "classification" else None)
    sample = sample_of(adult_data, 9, 0.04)
    heights = objective.candidate_heights(columns, adult_data.hierarchies)
    by_cells = possible_cells(columns, heights, adult_data.hierarchies)
    lattice = Lattice(tuple(columns), heights)
    k, epsilon1 = 50, 0.05
    for seed in range(6):
        estimate = noisy_count(sample.n_rows, count_epsilon(epsilon1), Randomness(seed))
        choice = choose_scheme(sample, columns, k, epsilon1, Randomness(seed), objective, COUNT_SHARE)
        index = lattice.index([choice.scheme.levels[c] for c in columns])
        assert candidate_mask(by_cells, estimate, k)[index]
        described = choice.describe()
        assert Fraction(described["count_epsilon"]) + Fraction(described["selection_epsilon"]) <= Fraction(epsilon1)
        assert described["cells_per_class"] == CELLS_PER_CLASS
    assert "count_epsilon" not in choose_scheme(sample, columns, k, epsilon1, Randomness(0), objective).describe()


@pytest.mark.parametrize("objective", ["retained", "classification"])
def test_the_planner_adds_the_count_exactly_when_epsilon1_is_capped(objective):
    target = "income" if objective == "classification" else None
    for epsilon in (0.05, 0.1, 0.25, 0.5, 1.0, 2.0):
        plan = plan_publication(PlanRequest(epsilon, 1e-6, objective=objective, target=target, candidates=36_864))
        capped = plan.epsilon1 >= EPSILON1_SHARE_RANGE[1] * epsilon * (1 - 1e-9)
        assert (plan.count_share == COUNT_SHARE) == capped, epsilon
        assert (plan.as_dict()["count_rule"] is not None) == capped
        assert capped == (epsilon <= 0.25)  # Adult's lattice: the small-epsilon plans
    # a given epsilon1 is spent as given, by the same rule: with the count where the planner's own
    # epsilon1 is capped (0.1), without it where it is not (1.0)
    given = plan_publication(PlanRequest(0.1, 1e-6, epsilon1=0.05, candidates=36_864))
    assert given.count_share == COUNT_SHARE and given.epsilon1 == 0.05
    assert plan_publication(PlanRequest(1.0, 1e-6, epsilon1=0.5, candidates=36_864)).count_share == 0.0


def test_the_certificate_says_when_the_count_ran(monkeypatch):
    """The recoding profile and the selection's description state the count where it ran (a
    capped plan that chooses on the sample, as the Spark engine's do) and only there."""
    import json

    from crowdsafe import api
    from crowdsafe.anonymize import publish

    monkeypatch.setattr(publish, "TABLE_COUNTS", False)

    for epsilon, ran in ((0.1, True), (1.0, False)):
        publication = api.publish("adult", epsilon=epsilon, delta=1e-6, seed=3, ledger=None, report=False)
        recode = [m for m in publication.certificate.to_dict()["mechanisms"] if m["step"] == "recode"]
        assert len(recode) == 1 and ("noisy count of the sample" in recode[0]["name"]) == ran
        assert ("count_epsilon" in json.dumps(publication.summary(), default=str)) == ran
