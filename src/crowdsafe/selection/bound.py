"""The branch and bound's upper bounds: for a block of lattice nodes (the levels of the first
columns of the search order fixed, the others free), an integer at least the score q_int of every
node in it, from the sample's keyed tables (:mod:`.tables`) alone.

Why each is an upper bound (PROOF.md, "The bounds"):

- weighted objectives (``retained``, ``loss``): the score of the projection on the fixed columns,
  the free columns' penalties taken as 0. Each class E of a node in the block lies in one class F
  of the projection, its weight is at most F's, and c · min(c, k) is superadditive
  (:func:`level_bounds`);
- ``classification`` with the target last: :func:`~.score.classification_block_bound` of the
  projection (:func:`block_bound`, and carried through the roll-ups in :func:`bounds_rolled_up`).

With every column fixed a bound is the node's own score, and :func:`children` says so. Each fast
path has a reference twin here (``level_bounds_by_score``, ``bounds_of_child_tables``) that the
tests hold it to.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from crowdsafe.selection.score import (
    DENSE_CELLS_PER_ROW,
    classification_block_bound,
    classification_matrix_bound,
    classification_matrix_score,
    classification_score_sorted,
    exact_sums,
    weighted_score,
)
from crowdsafe.selection.tables import KeyedTables, merge_runs, run_starts
from crowdsafe.selection.words import Keys, WordKeys, field_of, with_field_of


def level_bounds(tables: KeyedTables, keys: Keys, counts: np.ndarray, attribute: int, levels: Sequence[int],
                 k: int) -> np.ndarray:
    """:meth:`.tables.KeyedTables.score` (with ``prefix = attribute + 1``) of a projection on columns 0..attribute,
    with ``attribute`` (at level 0 in the table) raised to each of its levels. Each level's
    table is rolled up from the one below it (``attribute`` is the last column of the
    projection, so every roll-up is a linear merge), and the tables shrink as they rise.

    Weighted objectives carry the earlier columns' penalty units through the roll-ups
    (:func:`level_bounds_carried`); the reference twin scores each table afresh
    (:func:`level_bounds_by_score`). Both are the same exact integers."""
    if tables.objective.weighted:
        return level_bounds_carried(tables, keys, counts, attribute, levels, k)
    return level_bounds_by_score(tables, keys, counts, attribute, levels, k)


def level_bounds_by_score(tables: KeyedTables, keys: Keys, counts: np.ndarray, attribute: int,
                           levels: Sequence[int], k: int) -> np.ndarray:
    """:func:`level_bounds`, each rolled-up table scored by :meth:`.tables.KeyedTables.score` (the reference twin)."""
    height = tables.heights[attribute]
    bounds = np.empty(height + 1, dtype=object if tables.wide else np.int64)
    at = [*levels[:attribute], 0]
    for level in range(height + 1):
        if level:
            keys, counts = tables.raise_last(keys, counts, attribute, level - 1, level)
        at[attribute] = level
        bounds[level] = tables.score(keys, counts, at, k, prefix=attribute + 1)
    return bounds


def level_bounds_carried(tables: KeyedTables, keys: Keys, counts: np.ndarray, attribute: int,
                          levels: Sequence[int], k: int) -> np.ndarray:
    """:func:`level_bounds` for weighted objectives: the units of columns 0..attribute − 1 are
    summed once and carried through the roll-ups (the rows merged by raising ``attribute``
    share those columns' codes, so a merged row takes the units of the first row of its run);
    each level adds ``attribute``'s own units. The same integer sums as :meth:`.tables.KeyedTables.score`."""
    height = tables.heights[attribute]
    bounds = np.empty(height + 1, dtype=object if tables.wide else np.int64)
    carried = tables.units(keys, levels, attribute)
    bounds[0] = weighted_score(carried, counts, k, tables.wide)
    if height == 0:
        return bounds
    # ``attribute`` is the projection's last column: a key is its other fields | code << shift.
    # The code and those fields are kept apart and rolled up together (gathered at each merge)
    shift = tables.shifts[attribute]
    code = tables.code(keys, attribute)
    others = keys & ~(tables.masks[attribute] << shift)
    for level in range(1, height + 1):
        code = tables.steps[attribute][level - 1][code]
        if isinstance(others, WordKeys):
            raised: Keys = others.with_field(shift, tables.bits[attribute], code)
        else:
            placed = (code.astype(object) if others.dtype == object else code) << shift
            placed |= others
            raised = placed
        _, counts, starts = merge_runs(raised, counts)
        if starts is not None:
            code, others = code[starts], others[starts]
            if carried is not None:
                carried = carried[starts]
        own = tables.penalties[attribute][level][code]
        bounds[level] = weighted_score(own if carried is None else own + carried, counts, k, tables.wide)
    return bounds


def block_bound(tables: KeyedTables, keys: Keys, counts: np.ndarray, fixed: int, k: int) -> int:
    """``classification`` with the target as the last column: an upper bound on q_int of every
    node that agrees with this table on its first ``fixed`` columns and has the others at any
    level (the table has them at level 0), :func:`~.score.classification_block_bound`;
    with every quasi-identifier fixed (``fixed`` ≥ d − 1), the node's q_int ittables. One pass
    over the sorted table: the rows of a class are contiguous, and so are those of a projection
    on leading columns."""
    target = tables.d - 1
    assert tables.target == target
    if len(keys) == 0:
        return 0
    target_codes = tables.code(keys, target)
    fine_starts = run_starts(keys >> tables.bits[target])
    if fixed >= target:
        return classification_score_sorted(counts, target_codes, fine_starts, k)
    if fixed == 0:
        coarse_of_row = np.zeros(len(keys), dtype=np.int64)
    else:
        first = np.zeros(len(keys), dtype=bool)
        first[run_starts(keys >> tables.shifts[fixed - 1])] = True
        coarse_of_row = np.cumsum(first) - 1
    return classification_block_bound(counts, target_codes, fine_starts, coarse_of_row,
                                      int(coarse_of_row[-1]) + 1, tables.hierarchies[target].size(0), k)


def children(tables: KeyedTables, keys: Keys, counts: np.ndarray, attribute: int, levels: Sequence[int],
             k: int) -> tuple[np.ndarray, bool, dict[int, tuple[Keys, np.ndarray]]]:
    """The branch and bound's step at ``attribute`` (a table with the earlier columns at
    ``levels`` and the others at level 0): for each level of ``attribute``, an upper bound on
    q_int of the nodes below it; whether those bounds are the nodes' own q_int (each child is
    a single node, scored); and the child tables made on the way, by level (the others are
    made only for the children visited).

    Both kinds of bound come from the projection on columns 0..attribute, rolled up through
    the levels of ``attribute`` (its last column, so each roll-up is a linear merge, and the
    projections are small): weighted objectives score it (:func:`level_bounds`);
    ``classification`` (target last) carries c_G'y and R_G' of
    :func:`~.score.classification_block_bound` through the roll-ups, both sums over the
    classes merged. A target with many values falls back to the bound of each child's own
    table (:func:`block_bound`)."""
    if tables.objective.name != "classification":
        bounds = level_bounds(tables, *tables.project(keys, counts, attribute + 1), attribute, levels, k)
        return bounds, attribute + 1 == tables.d, {0: (keys, counts)}
    target = tables.d - 1
    exact = attribute + 1 >= target
    made = {0: (keys, counts)}
    values = tables.hierarchies[target].size(0)
    coarse_keys = keys >> tables.shifts[attribute]  # columns 0..attribute, ``attribute`` lowest
    coarse_starts = run_starts(coarse_keys)
    if len(coarse_starts) * values > DENSE_CELLS_PER_ROW * len(keys):
        return bounds_of_child_tables(tables, made, attribute, k), exact, made
    return bounds_rolled_up(tables, keys, counts, attribute, k, coarse_keys, coarse_starts, exact), exact, made


def bounds_of_child_tables(tables: KeyedTables, made: dict[int, tuple[Keys, np.ndarray]], attribute: int, k: int
                            ) -> np.ndarray:
    """:func:`children`'s classification bounds from each child's own table
    (:func:`block_bound`), the tables made into ``made`` by level: for targets with many
    values (the reference twin of :func:`bounds_rolled_up`; both are upper bounds on every
    node of the block, not always equal, so the search returns the same node)."""
    for level in range(1, tables.heights[attribute] + 1):
        made[level] = tables.raise_level(*made[level - 1], attribute, level - 1, level)
    return np.array([block_bound(tables, *made[level], attribute + 1, k) for level in sorted(made)],
                    dtype=np.int64)


def bounds_rolled_up(tables: KeyedTables, keys: Keys, counts: np.ndarray, attribute: int, k: int,
                      coarse_keys: Keys, coarse_starts: np.ndarray, exact: bool) -> np.ndarray:
    """:func:`children`'s classification bounds from the dense (G', y) array of the projection
    on columns 0..attribute, rolled up through the levels of ``attribute`` (``exact``: the
    children are single nodes, scored)."""
    target = tables.d - 1
    values = tables.hierarchies[target].size(0)
    first = np.zeros(len(keys), dtype=bool)
    first[coarse_starts] = True
    coarse_of_row = np.cumsum(first) - 1
    fine_starts = run_starts(keys >> tables.bits[target])
    majority = exact_sums(coarse_of_row[fine_starts], np.maximum.reduceat(counts, fine_starts),
                          len(coarse_starts))
    by_target = exact_sums(coarse_of_row * values + tables.code(keys, target), counts,
                           len(coarse_starts) * values).reshape(-1, values)
    group_keys = coarse_keys[coarse_starts]
    bounds = np.empty(tables.heights[attribute] + 1, dtype=np.int64)
    for level in range(tables.heights[attribute] + 1):
        if level:  # tree-ordered codes: the raised keys stay sorted
            own = field_of(group_keys, 0, tables.bits[attribute])
            group_keys = with_field_of(group_keys, 0, tables.bits[attribute],
                                       tables.ancestor_map(attribute, level - 1, level)[own], fresh=True)
            starts = run_starts(group_keys)
            group_keys = group_keys[starts]
            by_target = np.add.reduceat(by_target, starts, axis=0)
            majority = np.add.reduceat(majority, starts)
        bounds[level] = classification_matrix_score(by_target, k) if exact else \
            classification_matrix_bound(by_target, majority, k)
    return bounds
