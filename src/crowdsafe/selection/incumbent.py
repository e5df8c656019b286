"""A good node found cheaply before the branch and bound, whose exact key it starts pruning with.

The search (:func:`.search.gumbel_max_over_lattice`) skips a block when the block's upper key is
below the best lower key of a node scored so far. Its first dive follows the best bounds, and the
bounds favour fine levels (the columns not yet fixed neither split a class nor cost a penalty), so
on large tables the first node it scores can lie tens of thousands of nats below the best, and
the blocks it opens before it finds better hold the largest tables (docs/performance.md, "Where
the choice's time goes"). This module finds a node the search would otherwise reach late:

1. *greedy*: the columns in the search's order, each at the level whose node scores best with
   the columns before it at their chosen levels and the columns after it at their roots (``*``).
   That node's table is the projection on the columns so far, rolled up the column's levels, so
   each step costs one pass over the table, no sort;
2. *climb*: from the greedy node, move one column by one level at a time while a move raises the
   score: up, on the node's own table (which shrinks as it rises), or, for the last
   :data:`REFINED_COLUMNS` columns of the search order, down, from the greedy's table before those
   columns were set (the greedy leaves them too coarse when the columns after them, counted at
   their roots, made their classes look small).

Why the choice is unchanged: the node's score is its exact q_int (:meth:`.tables.KeyedTables.score`
of its own table, the integer the search computes for it), so its lower key is a true lower key
of a node of the lattice. A block skipped against it holds no node whose key exceeds that node's,
so none that could be the argmax; the node itself lies in a block whose upper key reaches its own
key, which the search therefore opens and scores (PROOF.md §4). Only the time and the order of
discovery change, never the argmax. It reads the sample only to find a node; nothing of it leaves
the selection but through the mechanism's choice.
"""

from __future__ import annotations

import numpy as np

from crowdsafe.selection.score import weighted_score
from crowdsafe.selection.tables import KeyedTables


def wants_incumbent(tables: KeyedTables) -> bool:
    """Whether :func:`greedy_incumbent` runs before the search: a weighted objective (its score is
    what the greedy rolls up) with int64 scores, whatever the keys (one int64, int64 words or the
    reference twin's Python integers, :mod:`.tables`: every kind scores the same nodes). Measured
    on the default plan at ε = 1 (docs/performance.md): the choice takes 5% less time on Adult,
    20% less on 300k synthetic rows, 40% less on 2M–10M, and 4% more on 1M, where the first dive
    was already as good."""
    return tables.objective.weighted and not tables.wide


#: The climb may also lower one of this many last columns of the search order by a level (from
#: the greedy's table before those columns were set), besides raising any column.
REFINED_COLUMNS = 3


def greedy_incumbent(tables: KeyedTables) -> tuple[list[int], int]:
    """A node (its levels, in the tables' column order) and its exact q_int: the greedy node,
    then the climb (module docstring). Weighted objectives, int64 tables."""
    d, heights, k = tables.d, tables.heights, tables.k
    root_units = [int(tables.penalties[j][heights[j]][0]) for j in range(d)]  # a root's code is 0
    levels = [0] * d
    keys, counts = tables.base_keys, tables.base_counts
    refined_from = max(d - REFINED_COLUMNS, 0)
    checkpoint = (keys, counts)
    for attribute in range(d):
        if attribute == refined_from:
            checkpoint = (keys, counts)  # the columns before at their greedy levels, the rest at 0
        projected_keys, projected_counts = tables.project(keys, counts, attribute + 1)
        at_roots = sum(root_units[attribute + 1:])
        best_score, best_level = None, 0
        for level in range(heights[attribute] + 1):
            if level:
                projected_keys, projected_counts = tables.raise_last(projected_keys, projected_counts, attribute,
                                                                     level - 1, level)
            levels[attribute] = level
            units = tables.units(projected_keys, levels, attribute + 1)
            units = np.full(len(projected_keys), at_roots, dtype=np.int64) if units is None else units + at_roots
            score = weighted_score(units, projected_counts, k, False)
            if best_score is None or score > best_score:
                best_score, best_level = score, level
        levels[attribute] = best_level
        if best_level:
            keys, counts = tables.raise_level(keys, counts, attribute, 0, best_level)
    checkpoint_levels = [*levels[:refined_from], *[0] * (d - refined_from)]
    score = tables.score(keys, counts, levels)
    while True:
        # the nodes a step down reaches are all coarser than one: the current node with the last
        # columns one level lower (the columns before them are at or above their greedy levels,
        # the checkpoint's: the climb only raises those)
        floor_levels = [*levels[:refined_from], *(max(level - 1, 0) for level in levels[refined_from:])]
        floor = tables.raise_columns(*checkpoint, checkpoint_levels, floor_levels)
        best = None
        for attribute in range(d):
            for step in (1, -1):
                candidate = [*levels]
                candidate[attribute] += step
                if step == 1 and candidate[attribute] <= heights[attribute]:
                    table = tables.raise_level(keys, counts, attribute, levels[attribute], candidate[attribute])
                elif step == -1 and attribute >= refined_from and candidate[attribute] >= 0:
                    table = tables.raise_columns(*floor, floor_levels, candidate)
                else:
                    continue
                candidate_score = tables.score(*table, candidate)
                if best is None or candidate_score > best[0]:
                    best = (candidate_score, candidate, table)
        if best is None or best[0] <= score:
            return levels, score
        score, levels, (keys, counts) = best
