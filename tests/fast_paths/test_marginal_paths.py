"""The ``marginals`` search's fast paths against their reference twins and the definition:

- every level combination's generalization error and projection Def at once
  (marginal_tables.generalization_table) against one combination at a time
  (generalization_table_by_level), and the Def tables against a count of the projection's classes;
- each level's Def of a table's last column from the rows' run heights (deficits_by_level,
  KeyedTables.run_heights, with and without the split-height square) against raising the column
  level by level (deficits_by_raising);
- each block's lazily made projections (ProjectedTables) against the base table raised and
  projected;
- the 2-column Def floor: never above a node's Def, equal to it where a node has two columns
  or fewer below their roots; a floor raised by one breaks the search's argmax (so the check can fail).

Each comparison is also run on a deliberately broken variant, which it must catch."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import tables
from test_marginal_objective import COLUMNS, _prepared, _random_table, _search_against_every_node
from test_objectives import _raised

import crowdsafe.selection.marginal_score as marginal_score
from crowdsafe.anonymize.counted import counted
from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection import marginal_tables
from crowdsafe.selection import tables as keyed_tables
from crowdsafe.selection.marginal_score import (
    MarginalScorer,
    ProjectedTables,
    deficits_by_level,
    deficits_by_raising,
    marginal_sets,
)
from crowdsafe.selection.marginal_tables import generalization_table, generalization_table_by_level, marginal_cells
from crowdsafe.selection.score import make_objective
from crowdsafe.selection.search import lattice_scores
from crowdsafe.selection.tables import KeyedTables

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def monkeypatch_class():
    """A monkeypatch that hypothesis tests may use (function-scoped fixtures are not reset between examples)."""
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def _classes(data, columns, levels, table=None) -> Counter:
    """Rows per class of the sample with ``columns`` at ``levels`` (the others dropped).
    ``table``: ``counted(data, columns)``, made once by a caller that asks for many levels."""
    table = counted(data, columns) if table is None else table
    maps = [data.hierarchies[c].leaf_map(level).tolist() for c, level in zip(columns, levels)]
    classes: Counter = Counter()
    for codes, count in zip(table.codes.tolist(), table.counts.tolist()):
        classes[tuple(m[v] for m, v in zip(maps, codes))] += count
    return classes


def _deficit(classes: Counter, k: int) -> int:
    return sum(c * (k - c) for c in classes.values() if c < k)


@pytest.mark.slow  # over a second; in the full suite (quick loop: -m 'not slow')
@SETTINGS
@given(data=tables(min_rows=1, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 8))
def test_every_level_combination_at_once_matches_one_at_a_time(data, k):
    data = _prepared(data)
    table = counted(data, COLUMNS)
    hierarchies = [data.hierarchies[c] for c in COLUMNS]
    for marginal in marginal_sets(len(COLUMNS)):
        codes = [table.codes[:, j] for j in marginal]
        chosen = [hierarchies[j] for j in marginal]
        fast, fast_deficits = generalization_table(codes, table.counts, chosen, k)
        twin, twin_deficits = generalization_table_by_level(*marginal_cells(codes, table.counts, chosen), chosen, k)
        assert fast.tolist() == twin.tolist() and fast_deficits.tolist() == twin_deficits.tolist()
        names = [COLUMNS[j] for j in marginal]
        counted_once = counted(data, names)
        for levels in itertools.product(*[range(h.height + 1) for h in chosen]):
            expected = _deficit(_classes(data, names, levels, counted_once), k)
            assert fast_deficits[levels] == expected


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=40, with_shape_hierarchy=True), k=st.integers(2, 6))
def test_the_scores_are_the_same_on_the_one_at_a_time_path(data, k, monkeypatch_class):
    """Every score through generalization_table's fallback (forced) equals the vectorized one's."""
    data = _prepared(data)
    objective = make_objective("marginals")
    _, fast = lattice_scores(data, COLUMNS, k, objective)
    with monkeypatch_class.context() as patch:
        patch.setattr(marginal_tables, "DENSE_GROUPS", -10**9)
        _, twin = lattice_scores(data, COLUMNS, k, objective)
    assert fast.tolist() == twin.tolist()


def _deficits_of_every_block(data, k, heights_of=None) -> list[tuple[list[int], list[int]]]:
    """(deficits_by_level, deficits_by_raising) for every block's projection of the lattice."""
    objective = make_objective("marginals").for_columns(COLUMNS, data.hierarchies)
    tables_ = KeyedTables(data, COLUMNS, objective, k)
    heights_of = heights_of or tables_.run_heights
    pairs = []
    for attribute in range(tables_.d):
        for prefix in itertools.product(*[range(h + 1) for h in tables_.heights[:attribute]]):
            levels = [*prefix] + [0] * (tables_.d - attribute)
            keys, counts = tables_.project(*_raised(tables_, levels), attribute + 1)
            fast = deficits_by_level(heights_of(keys, attribute), counts, k)
            pairs.append((fast, deficits_by_raising(tables_, keys, counts, attribute, k)))
            for last in range(tables_.heights[attribute] + 1):
                assert deficits_by_level(heights_of(keys, attribute), counts, k, last) == fast[:last + 1]
    return pairs


@SETTINGS
@given(data=tables(min_rows=1, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 8))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_each_levels_deficit_from_run_heights_matches_raising_level_by_level(data, k, monkeypatch_class):
    data = _prepared(data)
    for fast, twin in _deficits_of_every_block(data, k):
        assert fast == twin
    with monkeypatch_class.context() as patch:  # no square: the heights level by level
        patch.setattr(keyed_tables, "SPLIT_TABLE_LEAVES", 0)
        for fast, twin in _deficits_of_every_block(data, k):
            assert fast == twin


def test_run_heights_that_forget_the_earlier_columns_are_caught():
    """Broken variant: rows whose earlier columns differ but whose leaves share an ancestor are
    merged (the prefix check left out). The comparison above then fails."""
    from test_marginal_objective import _random_table

    data = _random_table(np.random.default_rng(3), 150)
    objective = make_objective("marginals").for_columns(COLUMNS, data.hierarchies)
    tables_ = KeyedTables(data, COLUMNS, objective, 4)

    def forgetful(keys, attribute):
        height = tables_.run_heights(keys, attribute)
        code = tables_.code(keys, attribute)
        square = tables_.split_heights(attribute)
        height[1:] = square[code[:-1] * tables_.hierarchies[attribute].size(0) + code[1:]]
        return height

    assert any(fast != twin for fast, twin in _deficits_of_every_block(data, 4, forgetful))


@SETTINGS
@given(data=tables(min_rows=1, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 6))
def test_each_blocks_projections_are_the_base_table_raised_and_projected(data, k):
    data = _prepared(data)
    objective = make_objective("marginals").for_columns(COLUMNS, data.hierarchies)
    tables_ = KeyedTables(data, COLUMNS, objective, k)

    def check(block: ProjectedTables, levels: list[int]) -> None:
        for last in range(len(levels), tables_.d):
            raised = _raised(tables_, levels + [0] * (tables_.d - len(levels)))
            keys, counts = tables_.project(*raised, last + 1)
            made_keys, made_counts = block.on(last)
            assert made_keys.tolist() == keys.tolist() and made_counts.tolist() == counts.tolist()
        if len(levels) < tables_.d - 1:
            attribute = len(levels)
            for level in range(tables_.heights[attribute] + 1):
                check(block.raised(attribute, level), levels + [level])

    check(ProjectedTables(tables_), [])


@pytest.mark.slow  # over a second; in the full suite (quick loop: -m 'not slow')
@SETTINGS
@given(data=tables(min_rows=1, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 8))
def test_the_pairs_floor_is_a_lower_bound_and_exact_on_two_columns(data, k):
    data = _prepared(data)
    scorer = MarginalScorer(data, COLUMNS, k, make_objective("marginals"))
    counted_once = counted(data, COLUMNS)
    for index, node in enumerate(scorer.lattice.nodes()):
        levels = [int(x) for x in node]
        deficit = _deficit(_classes(data, COLUMNS, levels, counted_once), k)
        floor = int(scorer.deficit_floor[index])
        assert floor <= deficit
        below_root = [j for j, (level, h) in enumerate(zip(levels, scorer.lattice.heights)) if level < h]
        if len(below_root) <= 2:
            assert floor == deficit


def test_a_floor_above_the_deficit_is_caught(monkeypatch):
    """Broken variant: every node's floor one unit too high (above its Def where a node has two
    columns below their roots). The search then misses the argmax on some seed."""
    real = marginal_score.MarginalScorer

    class Raised(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.deficit_floor = self.deficit_floor + 1

    monkeypatch.setattr(marginal_score, "MarginalScorer", Raised)
    pairs = [pair for seed in range(6) for pair in _search_against_every_node(seed, (30.0, 3000.0))]
    assert any(got != expected for got, expected in pairs)


def _broadcast_each(shape, parts, combine):
    """over_the_lattice's twin: each part broadcast to the whole lattice in turn."""
    combined = np.zeros(shape, dtype=np.int64)
    for marginal, part in parts.items():
        view = [1] * len(shape)
        for j in marginal:
            view[j] = shape[j]
        combined = combine(combined, part.reshape(view))
    return combined


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=5), seed=st.integers(0, 2**31))
def test_parts_combined_one_axis_at_a_time_match_broadcasting_each(shape, seed):
    """B(g) (a sum) and the pairs' floor (a maximum) over the lattice, accumulated axis by axis,
    equal broadcasting each marginal's table to every node; one part added twice is caught."""
    rng = np.random.default_rng(seed)
    parts = {m: rng.integers(1, 1000, [shape[j] for j in m]) for m in marginal_sets(len(shape))}
    for combine in (np.add, np.maximum):
        assert np.array_equal(marginal_score.over_the_lattice(shape, parts, combine, np.int64),
                              _broadcast_each(shape, parts, combine))
    doubled = {**parts, (0,): parts[(0,)] * 2}
    assert not np.array_equal(marginal_score.over_the_lattice(shape, doubled, np.add, np.int64),
                              _broadcast_each(shape, parts, np.add))


def _search_floors(data, k, scale):
    """(each node's floor after a whole search, its pairs' floor before, its exact Def), in the
    searched lattice's order."""
    columns = [COLUMNS[j] for j in marginal_score.marginal_search_order([data.hierarchies[c] for c in COLUMNS])]
    scorer = MarginalScorer(data, columns, k, make_objective("marginals"))
    pairs = scorer.deficit_floor.tolist()
    search = marginal_score.MarginalSearch(scorer, scale, gumbel_cells(Randomness(1).generator, scorer.lattice.size))
    search.run()
    counted_once = counted(data, columns)
    deficits = [_deficit(_classes(data, columns, [int(x) for x in node], counted_once), k)
                for node in scorer.lattice.nodes()]
    return search.floor.tolist(), pairs, deficits


@pytest.mark.slow  # over a second; in the full suite (quick loop: -m 'not slow')
@SETTINGS
@given(data=tables(min_rows=1, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 8),
       scale=st.sampled_from([1.0, 30.0, 3000.0]))
def test_the_floors_the_search_raises_stay_below_each_nodes_deficit(data, k, scale):
    """The search raises F(g) from every projection it tabulates (PROOF.md §7): after a whole
    search F is still at most Def(g) on every node, and never below the pairs' floor."""
    floors, pairs, deficits = _search_floors(_prepared(data), k, scale)
    assert all(p <= f <= d for f, p, d in zip(floors, pairs, deficits))


def test_the_search_raises_the_floors():
    """On random tables of a few hundred rows the search's tables raise floors above the pairs'
    (the raise is exercised, not only harmless)."""
    raised = 0
    for seed in range(3):
        data = _random_table(np.random.default_rng(seed), 300)
        floors, pairs, deficits = _search_floors(data, 5, 30.0)
        raised += sum(f > p for f, p in zip(floors, pairs))
    assert raised > 0


def test_floors_raised_towards_finer_nodes_are_caught(monkeypatch):
    """Broken variant: each projection's Def given to the *coarser* nodes (levels at least the
    block's), of which it is no lower bound. The floors then pass some node's Def, and the
    search misses the argmax on some seed."""
    def towards_coarser(self, attribute, found):
        if not any(found):
            return
        box = tuple(slice(level, None) for level in self._levels[:attribute]) + (slice(0, len(found)),)
        view = self._grid[box]
        after = len(self.heights) - attribute - 1
        np.maximum(view, np.asarray(found, dtype=np.int64).reshape((-1,) + (1,) * after), out=view)

    monkeypatch.setattr(marginal_score.MarginalSearch, "_raise_floor", towards_coarser)
    pairs = [pair for seed in range(8) for pair in _search_against_every_node(seed, (30.0, 3000.0))]
    assert any(got != expected for got, expected in pairs)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_without_the_square_returns_the_argmax(seed, monkeypatch):
    monkeypatch.setattr(keyed_tables, "SPLIT_TABLE_LEAVES", 0)
    for got, expected in _search_against_every_node(seed):
        assert got == expected


@pytest.mark.parametrize("k", [5, 2**31])
def test_each_levels_deficit_by_its_definition_also_past_int64(k):
    """deficits_by_level against Σ c·(k − c)⁺ over each level's runs, in Python integers: with a
    small k (int64 dot products) and one so large that rows · k² passes 2^62 (Python integers)."""
    rng = np.random.default_rng(7)
    heights = rng.integers(1, 5, 40)  # every row starts a class at level 0 (the rows are distinct)
    heights[0] = 4
    counts = rng.integers(1, 9, 40)
    expected = []
    for level in range(4):
        starts = [i for i in range(40) if heights[i] > level] + [40]
        sizes = [int(counts[a:b].sum()) for a, b in zip(starts, starts[1:])]
        expected.append(sum(c * (k - c) for c in sizes if c < k))
    assert deficits_by_level(heights, counts, k) == expected
