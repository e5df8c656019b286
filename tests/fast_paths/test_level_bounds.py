"""selection/bound.level_bounds for the weighted objectives (retained, loss):
the earlier columns' penalty units summed once and carried through the roll-ups
(level_bounds_carried) against each rolled-up table scored afresh by KeyedTables.score
(level_bounds_by_score, the reference twin). Deterministic twins: the same exact integers for
every block of every lattice, and the branch and bound returns the same node, with the same number
of nodes scored, whichever twin it runs. merge_runs against a sort-free reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import tables
from test_objectives import COLUMNS, _raised, _with_outcome_hierarchy

from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection import bound
from crowdsafe.selection import tables as keyed_tables
from crowdsafe.selection.gumbel import random_bits
from crowdsafe.selection.score import make_objective
from crowdsafe.selection.search import gumbel_max_over_lattice
from crowdsafe.selection.tables import KeyedTables, merge_runs


@pytest.mark.parametrize("name", ["retained", "loss"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 6))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_carried_units_give_the_scores_of_every_rolled_up_table(name, data, k):
    data = _with_outcome_hierarchy(data)
    tables_ = KeyedTables(data, COLUMNS, make_objective(name), k)
    heights = [data.hierarchies[c].height for c in COLUMNS]
    for attribute in range(len(COLUMNS)):
        for prefix in itertools.product(*[range(h + 1) for h in heights[:attribute]]):
            levels = [*prefix] + [0] * (len(COLUMNS) - attribute)
            projected = tables_.project(*_raised(tables_, levels), attribute + 1)
            carried = bound.level_bounds_carried(tables_, *projected, attribute, levels, k)
            scored = bound.level_bounds_by_score(tables_, *projected, attribute, levels, k)
            assert carried.tolist() == scored.tolist()
            assert bound.level_bounds(tables_, *projected, attribute, levels, k).tolist() == scored.tolist()


@pytest.mark.parametrize("name", ["retained", "loss"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 5),
       seed=st.integers(0, 2**31))
def test_the_search_returns_the_same_node_with_either_twin(name, data, k, seed, monkeypatch_class):
    data = _with_outcome_hierarchy(data)
    outcomes = set()
    for twin in ("level_bounds_carried", "level_bounds_by_score"):
        with monkeypatch_class.context() as patch:
            patch.setattr(bound, "level_bounds", getattr(bound, twin))
            cells = gumbel_cells(Randomness(seed).generator, 1 << 12)
            _, index, scored = gumbel_max_over_lattice(data, COLUMNS, k, 0.3, cells, random_bits(Randomness(seed)),
                                                       make_objective(name))
            outcomes.add((index, scored))
    assert len(outcomes) == 1


@pytest.fixture(scope="module")
def monkeypatch_class():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.parametrize("small_table", [keyed_tables.SMALL_TABLE, 0])  # reduceat, and the running sum
@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.integers(0, 6), max_size=40), seed=st.integers(0, 2**31))
def test_merge_runs_sums_each_run_and_names_its_start(small_table, keys, seed, monkeypatch_class):
    with monkeypatch_class.context() as patch:
        patch.setattr(keyed_tables, "SMALL_TABLE", small_table)
        keys = np.sort(np.asarray(keys, dtype=np.int64))
        counts = np.random.default_rng(seed).integers(1, 1000, len(keys)).astype(np.int64)
        merged, summed, starts = merge_runs(keys, counts)
        distinct = np.unique(keys)
        assert merged.tolist() == distinct.tolist()
        assert summed.tolist() == [int(counts[keys == key].sum()) for key in distinct]
        assert summed.dtype == np.int64
        if starts is None:
            assert len(distinct) == len(keys)
        else:
            assert keys[starts].tolist() == distinct.tolist()
            assert starts.tolist() == [int(np.flatnonzero(keys == key)[0]) for key in distinct]
        assert keyed_tables.merge_sorted(keys, counts)[1].tolist() == summed.tolist()
