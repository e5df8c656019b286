"""The selection's objectives: each score's sensitivity and monotonicity, checked on neighbouring
samples (one row removed, including a class crossing the k threshold), and the classification
score against a brute-force count from its definition."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsafe.anonymize.objectives import OBJECTIVES, discernibility_score, make_objective
from crowdsafe.anonymize.selection import choose_scheme, lattice_scores
from crowdsafe.data import Dataset, Schema, flat, intervals
from crowdsafe.errors import ParameterError
from crowdsafe.randomness import Randomness
from strategies import OUTCOMES, tables

COLUMNS = ["age", "colour", "shape", "outcome"]


def _with_outcome_hierarchy(data: Dataset) -> Dataset:
    return data.with_roles(qi=COLUMNS, sensitive=[]).with_hierarchies({"outcome": flat("outcome", OUTCOMES)})


def _without_row(data: Dataset, i: int) -> Dataset:
    return data.with_frame(data.frame.filter(pl.int_range(pl.len()) != i))


def _objective(name: str):
    return make_objective(name, "outcome" if name == "classification" else None)


def _check_neighbours(full: np.ndarray, reduced: np.ndarray, name: str, k: int) -> None:
    objective = _objective(name)
    change = np.asarray(full, dtype=object) - np.asarray(reduced, dtype=object)
    bound = objective.sensitivity_units(k)
    assert max(abs(int(c)) for c in change) <= bound
    if objective.monotone:  # a row removed never raises a score
        assert min(int(c) for c in change) >= 0


@pytest.mark.parametrize("name", list(OBJECTIVES))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=2, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 6),
       drop=st.integers(0, 10**6))
def test_removing_a_row_moves_every_score_by_at_most_the_sensitivity(name, data, k, drop):
    data = _with_outcome_hierarchy(data)
    objective = _objective(name)
    _, full = lattice_scores(data, COLUMNS, k, objective)
    _, reduced = lattice_scores(_without_row(data, drop % data.n_rows), COLUMNS, k, objective)
    _check_neighbours(full, reduced, name, k)


def _crossing_table(k: int) -> Dataset:
    """A class of exactly k rows (age 30, red, circle, yes) beside a larger one: removing one of the
    k rows takes the class under the threshold at level 0 of every column."""
    rows = [(30, "red", "circle", "yes")] * k + [(50, "blue", "square", "no")] * (3 * k)
    frame = pl.DataFrame(rows, schema=COLUMNS, orient="row")
    schema = Schema.of({"age": "numeric", "colour": "categorical", "shape": "categorical", "outcome": "categorical"},
                       qi=COLUMNS)
    hierarchies = {"age": intervals("age", range(18, 61), widths=[10, 20]),
                   "colour": flat("colour", ["red", "blue"]), "shape": flat("shape", ["circle", "square"]),
                   "outcome": flat("outcome", ["yes", "no"])}
    return Dataset(frame, schema, hierarchies)


@pytest.mark.parametrize("name", list(OBJECTIVES))
@pytest.mark.parametrize("k", [2, 5, 40])
def test_a_class_crossing_k_moves_the_score_by_at_most_the_sensitivity(name, k):
    data = _crossing_table(k)
    objective = _objective(name)
    _, full = lattice_scores(data, COLUMNS, k, objective)
    _, reduced = lattice_scores(_without_row(data, 0), COLUMNS, k, objective)
    _check_neighbours(full, reduced, name, k)
    # the step score the ramp replaces (rows in classes of >= k) jumps by k on this very pair:
    # a check against Δ = O(1) would catch it
    sizes = Counter(data.frame.rows())
    smaller = Counter(_without_row(data, 0).frame.rows())
    step = sum(c for c in sizes.values() if c >= k) - sum(c for c in smaller.values() if c >= k)
    assert step == k


def test_the_discernibility_step_stays_within_twice_the_cap():
    """|f(c + 1) − f(c)| ≤ 2C with C = 10k for every class size up to 3C (the proof's claim)."""
    for k in (2, 3, 7, 73, 300):
        costs = [-discernibility_score(np.array([c]), k) for c in range(30 * k)]
        steps = np.diff(np.array(costs, dtype=object))
        assert max(abs(int(s)) for s in steps) <= 2 * 10 * k * k  # k · f in q_int units


def _brute_force_classification(data: Dataset, k: int) -> dict[tuple[int, ...], int]:
    """max_{y0} Σ_G [max_y max(0, c_Gy − (k − 1)) + min(c_Gy0, k − 1)] of every node (outcome at
    level 0), from the definition, row by row, sharing no code with the selection."""
    hierarchies = [data.hierarchies[c] for c in COLUMNS[:-1]]
    rows = data.frame.select(COLUMNS).rows()
    leaf = [{v: i for i, v in enumerate(h.leaves.to_list())} for h in hierarchies]
    scores = {}
    for levels in itertools.product(*[range(h.height + 1) for h in hierarchies]):
        counts: Counter = Counter()
        for row in rows:
            node = tuple(int(h.leaf_map(level)[leaf[j][row[j]]]) for j, (h, level) in enumerate(zip(hierarchies, levels)))
            counts[(node, row[-1])] += 1
        groups = {node for node, _ in counts}
        best = sum(max(max(0, counts[(g, y)] - (k - 1)) for y in OUTCOMES) for g in groups)
        fallback = max(sum(min(counts[(g, y0)], k - 1) for g in groups) for y0 in OUTCOMES)
        scores[levels] = best + fallback
    return scores


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=50, with_shape_hierarchy=True), k=st.integers(2, 5))
def test_the_classification_score_matches_its_definition(data, k):
    data = _with_outcome_hierarchy(data)
    objective = make_objective("classification", "outcome")
    lattice, scores = lattice_scores(data, COLUMNS, k, objective)
    expected = _brute_force_classification(data, k)
    for node, score in zip(lattice.nodes(), scores):
        assert node[-1] == 0  # the target is never generalized
        assert int(score) == expected[tuple(int(x) for x in node[:-1])]


def test_classification_never_generalizes_the_target_and_needs_one():
    data = _crossing_table(5)
    for seed in range(20):
        choice = choose_scheme(data, COLUMNS, 5, 1.0, Randomness(seed), make_objective("classification", "outcome"))
        assert choice.scheme.levels["outcome"] == 0
    with pytest.raises(ParameterError, match="target"):
        make_objective("classification")
    with pytest.raises(ParameterError, match="unknown objective"):
        make_objective("accuracy")
    with pytest.raises(ParameterError, match="not a published column"):
        choose_scheme(data, COLUMNS[:-1], 5, 1.0, Randomness(0), make_objective("classification", "outcome"))
