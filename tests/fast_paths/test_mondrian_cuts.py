"""Mondrian's ways to cut against each other.

A level is cut attempt by attempt (:meth:`_Partitioner._cut_by_attempts`, the reference) or
decided at once from one count grid (:meth:`_Partitioner._cut_first_allowed`, switch
:meth:`_Partitioner._decides_at_once`, compared in tests/classic/test_mondrian.py); a strict
median cut is read off a count grid (:meth:`_Partitioner._strict_by_counts`) or found by sorting
(:meth:`_Partitioner._strict_by_sort`, switch :meth:`_Partitioner._strict_by_grid`); hierarchy
cuts group pieces by a grid (:func:`mondrian_cuts._groups_by_grid`) or by a sort
(:func:`mondrian_cuts._groups_by_sort`). Every combination gives the same partitioning.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import COLOURS, OUTCOMES, SHAPES, colour_hierarchy, tables

from crowdsafe.anonymize import cell_table
from crowdsafe.anonymize.constraints import NO_CONSTRAINTS
from crowdsafe.classic import mondrian_cuts
from crowdsafe.classic.attributes import describe_attributes
from crowdsafe.classic.mondrian_partition import _Partitioner
from crowdsafe.data import Dataset, Schema, flat, intervals

ALWAYS, NEVER = (1 << 40, 1 << 40), (0, 0)


def run(cells, attributes, k, mode, *, at_once=None, count_grid=None, group_grid=None, monkeypatch=None):
    partitioner = _Partitioner(cells, attributes, k, mode, NO_CONSTRAINTS)
    if at_once is not None:
        partitioner.AT_ONCE_FROM = 0 if at_once else 1 << 62
        partitioner.AT_ONCE_PIECES = (0, 1 << 62)
        partitioner.AT_ONCE_AFTER = 0
    if count_grid is not None:
        partitioner.COUNT_GRID = count_grid
    if group_grid is not None:
        monkeypatch.setattr(mondrian_cuts, "GROUP_GRID", group_grid)
    return partitioner.run()


def same(one, other):
    assert one.n_parts == other.n_parts
    for field in ("cell", "count", "part"):
        assert np.array_equal(getattr(one, field), getattr(other, field)), field


def inputs(data):
    cells = cell_table(data, ["age", "colour", "shape"])
    return cells, describe_attributes(data, cells)


@pytest.mark.slow  # over a second; in the full suite (quick loop: -m 'not slow')
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.booleans().flatmap(lambda flat: tables(max_rows=120, with_shape_hierarchy=flat)),
       k=st.integers(1, 5), mode=st.sampled_from(["strict", "relaxed"]), at_once=st.booleans(),
       count_grid=st.sampled_from([ALWAYS, NEVER, (0, 8), (0, 30), (2, 0)]),
       group_grid=st.sampled_from([ALWAYS, NEVER, (0, 10), (1, 0)]))
def test_every_way_to_cut_gives_the_same_partitions(monkeypatch, data, k, mode, at_once, count_grid, group_grid):
    assume(data.n_rows >= k)
    cells, attributes = inputs(data)
    expected = run(cells, attributes, k, mode, at_once=False, count_grid=NEVER, group_grid=NEVER,
                   monkeypatch=monkeypatch)  # every reference twin
    same(run(cells, attributes, k, mode, at_once=at_once, count_grid=count_grid, group_grid=group_grid,
             monkeypatch=monkeypatch), expected)


def sizes_seen(monkeypatch, cells, attributes, k, mode):
    """The grid sizes the switches were asked about in one run, cut attempt by attempt."""
    monkeypatch.undo()  # the default thresholds
    counts, groups = [], []
    rule = _Partitioner._strict_by_grid
    monkeypatch.setattr(_Partitioner, "_strict_by_grid",
                        lambda self, n, pieces: counts.append(n) or rule(self, n, pieces))
    grouped = mondrian_cuts._groups_by_grid
    monkeypatch.setattr(mondrian_cuts, "_groups_by_grid",
                        lambda key, count, n_segs, n_nodes: groups.append(n_segs * n_nodes)
                        or grouped(key, count, n_segs, n_nodes))
    run(cells, attributes, k, mode, at_once=False)
    monkeypatch.undo()
    return counts, groups


@pytest.mark.parametrize("k, mode", [(2, "strict"), (3, "strict"), (2, "relaxed")])
def test_partitions_at_the_switch_sizes(monkeypatch, k, mode):
    # a fixed table of the strategy's columns, drawn by a seeded generator
    rng = np.random.default_rng(3)
    n = 150
    frame = pl.DataFrame({"id": list(range(n)), "age": rng.integers(18, 61, n).tolist(),
                          "colour": rng.choice(COLOURS, n).tolist(), "shape": rng.choice(SHAPES, n).tolist(),
                          "outcome": rng.choice(OUTCOMES, n).tolist()})
    schema = Schema.of({"id": "numeric", "age": "numeric", "colour": "categorical", "shape": "categorical",
                        "outcome": "categorical"}, qi=["age", "colour", "shape"], sensitive=["outcome"])
    data = Dataset(frame, schema, {"age": intervals("age", range(18, 61), widths=[5, 10, 20]),
                                   "colour": colour_hierarchy(), "shape": flat("shape", SHAPES)})
    cells, attributes = inputs(data)
    expected = run(cells, attributes, k, mode, count_grid=NEVER, group_grid=NEVER, monkeypatch=monkeypatch)
    counts, groups = sizes_seen(monkeypatch, cells, attributes, k, mode)
    assert groups and (counts or mode == "relaxed")
    for size in sorted(set(counts))[:4] + sorted(set(counts))[-2:]:
        for floor in (size - 1, size, size + 1):  # this level by the grid or by sorting
            same(run(cells, attributes, k, mode, at_once=False, count_grid=(0, floor), monkeypatch=monkeypatch),
                 expected)
    for size in sorted(set(groups))[:4] + sorted(set(groups))[-2:]:
        for floor in (size - 1, size, size + 1):
            same(run(cells, attributes, k, mode, at_once=False, group_grid=(0, floor), monkeypatch=monkeypatch),
                 expected)
