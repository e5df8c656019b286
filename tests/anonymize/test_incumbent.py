"""selection/incumbent: the node found before the search is scored exactly (its q_int is the one
the full evaluation gives that node), the search returns the same node and scores no more nodes
with it than without it, and an incumbent whose key is overstated changes the choice (the
equality checked here can fail)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from samples import sample_of
from strategies import tables

from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.datasets import adult
from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection import incumbent, search
from crowdsafe.selection.gumbel import random_bits
from crowdsafe.selection.score import make_objective
from crowdsafe.selection.search import gumbel_max_over_lattice, lattice_scores, search_order
from crowdsafe.selection.tables import KeyedTables

COLUMNS = ["age", "colour", "shape"]


@pytest.mark.parametrize("name", ["retained", "loss"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=80, with_shape_hierarchy=True), k=st.integers(2, 6))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_incumbent_score_is_the_nodes_exact_score(name, data, k):
    objective = make_objective(name)
    tables_ = KeyedTables(data, COLUMNS, objective, k)
    levels, q = incumbent.greedy_incumbent(tables_)
    lattice, scores = lattice_scores(data, COLUMNS, k, objective)
    assert q == int(scores[lattice.index(tuple(levels))])
    assert all(0 <= level <= height for level, height in zip(levels, tables_.heights))


def _lattice(data, columns, objective):
    """The lattice the search runs over, without scoring its nodes (lattice_scores would score all
    of them just to give its size: 36,864 nodes on Adult, twice per test)."""
    return Lattice(tuple(columns), objective.candidate_heights(columns, data.hierarchies))


def _choose(data, columns, k, objective, seed, monkeypatch, on):
    monkeypatch.setattr(search, "wants_incumbent", incumbent.wants_incumbent if on else lambda tables: False)
    lattice = _lattice(data, columns, objective)
    cells = gumbel_cells(Randomness(seed).generator, lattice.size)
    _, index, scored = gumbel_max_over_lattice(data, columns, k, 0.3, cells, random_bits(Randomness(seed)), objective)
    return index, scored


@pytest.mark.parametrize("name", ["retained", "loss"])
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=tables(min_rows=1, max_rows=80, with_shape_hierarchy=True), k=st.integers(2, 5),
       seed=st.integers(0, 2**31))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_search_chooses_the_same_node_with_the_incumbent(name, data, k, seed, monkeypatch):
    objective = make_objective(name)
    with_it = _choose(data, COLUMNS, k, objective, seed, monkeypatch, on=True)
    without = _choose(data, COLUMNS, k, objective, seed, monkeypatch, on=False)
    assert with_it[0] == without[0]
    assert with_it[1] <= without[1]


@pytest.mark.slow  # scores all 36,864 nodes of the lattice once (about 5 s)
def test_on_adult_the_incumbent_is_near_the_choice_and_prunes(monkeypatch):
    columns = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country",
               "income"]
    sample = sample_of(adult(), 4, 0.37)
    objective = make_objective("retained")
    heights = objective.candidate_heights(columns, sample.hierarchies)
    ordered = [columns[j] for j in search_order(heights)]
    tables_ = KeyedTables(sample, ordered, objective, 33)
    _, q = incumbent.greedy_incumbent(tables_)
    _, scores = lattice_scores(sample, ordered, 33, objective)
    # within 5% of the best score of the 36,864 nodes (2.3% below it on this sample)
    assert q >= 0.95 * int(np.max(scores))
    with_it = _choose(sample, columns, 33, objective, 8, monkeypatch, on=True)
    without = _choose(sample, columns, 33, objective, 8, monkeypatch, on=False)
    assert with_it[0] == without[0] and with_it[1] <= without[1]


def test_an_overstated_incumbent_changes_the_choice(monkeypatch):
    """The broken variant: the incumbent's score raised above every node's. The search then prunes
    blocks that hold the argmax, and either finds nothing to choose or chooses another node."""
    sample = sample_of(adult(), 6, 0.4)
    columns = ["age", "education", "marital-status", "sex"]
    objective = make_objective("retained")
    honest = _choose(sample, columns, 20, objective, 3, monkeypatch, on=True)[0]
    real = incumbent.greedy_incumbent
    monkeypatch.setattr(search, "greedy_incumbent", lambda tables: (real(tables)[0], real(tables)[1] * 2 + 10**12))
    monkeypatch.setattr(search, "wants_incumbent", incumbent.wants_incumbent)
    lattice = _lattice(sample, columns, objective)
    cells = gumbel_cells(Randomness(3).generator, lattice.size)
    try:
        _, broken, _ = gumbel_max_over_lattice(sample, columns, 20, 0.3, cells, random_bits(Randomness(3)), objective)
    except ValueError:
        return
    assert broken != honest


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=tables(min_rows=1, max_rows=80, with_shape_hierarchy=True), k=st.integers(2, 5),
       seed=st.integers(0, 2**31), keep=st.floats(0.05, 1.0))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_with_a_candidate_mask_the_incumbent_changes_nothing(data, k, seed, keep, monkeypatch):
    """The small-ε candidates (a mask over the nodes) may leave out the incumbent's node: the search
    then starts from −∞ as before, and in every case chooses what it chooses without the incumbent."""
    objective = make_objective("retained")
    lattice = _lattice(data, COLUMNS, objective)
    allowed = np.random.default_rng(seed).random(lattice.size) < keep
    allowed[seed % lattice.size] = True
    chosen = []
    for on in (True, False):
        monkeypatch.setattr(search, "wants_incumbent", incumbent.wants_incumbent if on else lambda tables: False)
        cells = gumbel_cells(Randomness(seed).generator, lattice.size)
        _, index, _ = gumbel_max_over_lattice(data, COLUMNS, k, 0.3, cells, random_bits(Randomness(seed)), objective,
                                              allowed)
        assert allowed[index]
        chosen.append(index)
    assert chosen[0] == chosen[1]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=80, with_shape_hierarchy=True), picks=st.lists(st.integers(0, 9), min_size=6,
                                                                                   max_size=6))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_raising_several_columns_at_once_is_raising_them_one_by_one(data, picks):
    """KeyedTables.raise_columns (the climb's one sort) against raise_level column by column."""
    tables_ = KeyedTables(data, COLUMNS, make_objective("retained"), 3)
    lows = [pick % (height + 1) for pick, height in zip(picks[:3], tables_.heights)]
    highs = [low + pick % (height - low + 1) for low, pick, height in zip(lows, picks[3:], tables_.heights)]
    keys, counts = tables_.base_keys, tables_.base_counts
    for attribute, low in enumerate(lows):
        if low:
            keys, counts = tables_.raise_level(keys, counts, attribute, 0, low)
    at_once = tables_.raise_columns(keys, counts, lows, highs)
    for attribute, (low, high) in enumerate(zip(lows, highs)):
        if high > low:
            keys, counts = tables_.raise_level(keys, counts, attribute, low, high)
    assert at_once[0].tolist() == keys.tolist() and at_once[1].tolist() == counts.tolist()
