"""Keyed frequency tables of a sample and their roll-ups through the generalization lattice.

The ε1-safe selection (:mod:`.selection`) scores lattice nodes on the sample's frequency table
at each node. Here a table is one int64 key per distinct tuple, the columns' codes in bit fields
(first column most significant; the bit widths from the hierarchies' leaf counts), sorted by
key, with the tuples' counts. The widths only decide the running time, never the choice: when
they pass 62 bits (many values in observed hierarchies, whose leaf counts are the data's) the keys
are Python integers in object arrays, the same sorts and merges, exact and slower, so no table is
refused for its number of values. Node codes are renumbered in the
order of a depth-first walk of each hierarchy, so raising a column's level keeps runs sorted:
the roll-ups are linear merges or one stable sort. :class:`KeyedTables` also scores a table for
the exact integer objectives (:mod:`.objectives`) and gives the branch and bound's block bounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from crowdsafe.anonymize.counted import CountedSample, counted
from crowdsafe.anonymize.gumbel import SCORE_UNIT
from crowdsafe.anonymize.objectives import (
    DENSE_CELLS_PER_ROW,
    Objective,
    classification_block_bound,
    classification_matrix_bound,
    classification_matrix_score,
    classification_score,
    classification_score_sorted,
    discernibility_score,
    exact_sums,
    level_units,
    weighted_score,
)
from crowdsafe.data import Dataset, Hierarchy, packing
from crowdsafe.errors import ParameterError


def _tree_order(hierarchy: Hierarchy) -> list[np.ndarray]:
    """Per level, a renumbering of the hierarchy's nodes in the order of a depth-first walk of the
    tree (siblings in their code order). In these codes every map from a level to a higher one is
    non-decreasing, so raising the last column of a sorted table leaves it sorted."""
    ranks = [np.arange(hierarchy.size(hierarchy.height), dtype=np.int64)]
    for level in range(hierarchy.height - 1, -1, -1):
        parent_rank = ranks[0][np.asarray(hierarchy.parents[level], dtype=np.int64)]
        rank = np.empty(len(parent_rank), dtype=np.int64)
        rank[np.argsort(parent_rank, kind="stable")] = np.arange(len(parent_rank), dtype=np.int64)
        ranks.insert(0, rank)
    return ranks


def merge_sorted(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum the counts of equal neighbours in sorted ``keys``: the frequency table, in one pass."""
    merged, summed, _ = merge_runs(keys, counts)
    return merged, summed


def merge_runs(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`merge_sorted` and where each merged run starts in ``keys`` (None when no two
    neighbours are equal: the table is returned as it is). Exact int64 sums."""
    if len(keys) == 0:
        return keys, counts, None
    first = np.empty(len(keys), dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if len(starts) == len(keys):
        return keys, counts, None
    running = np.cumsum(counts)  # one pass (reduceat is slower when most runs are short)
    before = running[starts[1:] - 1]  # the running total before each group after the first
    sums = np.empty(len(starts), dtype=running.dtype)
    sums[:-1] = before
    sums[-1] = running[-1]
    sums[1:] -= before
    return keys[starts], sums, starts


def _key_bits(hierarchies: Sequence[Hierarchy]) -> list[int]:
    return [max(int(h.size(0) - 1).bit_length(), 1) for h in hierarchies]


#: Key bits held in an int64; wider keys are Python integers (object arrays).
KEY_BITS = 62


class KeyedTables:
    """Frequency tables of a sample as one int64 key per distinct tuple (the columns' codes in bit
    fields, first column most significant), sorted by key; level-0 sizes bound the codes at every
    level.

    Node codes are renumbered in tree order (:func:`_tree_order`), so a table stays sorted when its
    last column is raised (a linear merge of neighbours, :meth:`raise_last`) and a projection on
    the first columns is also a linear merge (:meth:`project`); raising an inner column
    (:meth:`raise_level`) needs one stable sort, which merges already sorted runs.
    """

    def __init__(self, sample: Dataset | CountedSample, columns: Sequence[str], objective: Objective | None = None,
                 k: int = 2) -> None:
        self.objective = objective or Objective("retained")
        self.k = int(k)
        self.hierarchies = [sample.hierarchies[c] for c in columns]
        self.d = len(columns)
        #: candidate heights: a column the objective fixes (the target) has height 0
        self.heights = self.objective.candidate_heights(columns, sample.hierarchies)
        # bit fields: column j's code is (key >> shift[j]) & mask[j], the first column highest
        self.bits = _key_bits(self.hierarchies)
        #: keys wider than KEY_BITS are Python integers: exact and slower, never refused (module docstring)
        self.wide_keys = sum(self.bits) > KEY_BITS
        self.shifts = [int(x) for x in packing.bit_shifts(self.bits)]
        self.masks = [(1 << b) - 1 for b in self.bits]
        self.steps: list[list[np.ndarray]] = []  # steps[j][l]: tree code at level l -> its parent's at l + 1
        self.penalties: list[list[np.ndarray]] = []  # penalties[j][l][tree code]: the node's units
        leaf_ranks = []
        for hierarchy in self.hierarchies:
            ranks = _tree_order(hierarchy)
            leaf_ranks.append(ranks[0])
            steps = []
            for level in range(hierarchy.height):
                step = np.empty(hierarchy.size(level), dtype=np.int64)
                step[ranks[level]] = ranks[level + 1][np.asarray(hierarchy.parents[level], dtype=np.int64)]
                steps.append(step)
            self.steps.append(steps)
            penalties = []
            units = level_units(self.objective, hierarchy, self.d) if self.objective.weighted else \
                [np.zeros(hierarchy.size(level), dtype=np.int64) for level in range(hierarchy.height + 1)]
            for rank, penalty in zip(ranks, units):
                in_tree_order = np.empty(len(penalty), dtype=np.int64)
                in_tree_order[rank] = penalty
                penalties.append(in_tree_order)
            self.penalties.append(penalties)
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        cells = counted(sample, columns)  # a Dataset is counted here; the Spark engine passes its counts
        # |q_int| ≤ 2^20 · k · rows (the weighted objectives; 10k² · rows for discernibility): past
        # 2^63 the sums are taken in Python integers (exact, slow; never refused, so the sample's
        # size cannot show in an error)
        self.wide = SCORE_UNIT * 10 * self.k * self.k * max(cells.n_rows, 1) >= 2**63
        # classification: the target's key field, lowest bits when the target is the last column
        self.target = columns.index(self.objective.target) if self.objective.target is not None else None
        keys = self.pack((leaf_ranks[j][cells.codes[:, j]] for j in range(self.d)), cells.n_cells)
        order = np.argsort(keys)
        self.base_keys = keys[order]
        self.base_counts = cells.counts[order].astype(np.int64)
        # a count is at most the sample's size: when it fits beside the key bits, raise_level
        # sorts (key, count) packed in one int64 (equal keys' counts are summed, so their order
        # among themselves does not matter)
        count_bits = max(int(cells.n_rows).bit_length(), 1)
        self.count_bits = count_bits if not self.wide_keys and sum(self.bits) + count_bits <= 63 else 0

    def pack(self, columns: Iterable[np.ndarray], n: int) -> np.ndarray:
        """The keys of ``n`` tuples whose codes per column are ``columns`` (int64, or Python
        integers when the fields pass :data:`KEY_BITS`)."""
        if not self.wide_keys:
            return packing.pack_bits(columns, self.shifts, n)
        keys = np.zeros(n, dtype=object)
        for values, shift in zip(columns, self.shifts):
            keys |= np.asarray(values).astype(object) << shift
        return keys

    def _map(self, attribute: int, low: int, high: int) -> np.ndarray:
        """Tree codes at level ``low`` of ``attribute`` -> their ancestors' at ``high`` (cached)."""
        cached = self._maps.get((attribute, low, high))
        if cached is None:
            cached = np.arange(self.hierarchies[attribute].size(low), dtype=np.int64)
            for level in range(low, high):
                cached = self.steps[attribute][level][cached]
            self._maps[(attribute, low, high)] = cached
        return cached

    def code(self, keys: np.ndarray, attribute: int) -> np.ndarray:
        """The code of ``attribute`` in each key (int64)."""
        code = keys >> self.shifts[attribute]
        code &= self.masks[attribute]
        return code.astype(np.int64) if code.dtype == object else code

    def _raised_keys(self, keys: np.ndarray, attribute: int, low: int, high: int) -> np.ndarray:
        shift = self.shifts[attribute]
        raised = self._map(attribute, low, high)[self.code(keys, attribute)]
        if keys.dtype == object:
            raised = raised.astype(object)
        raised <<= shift
        raised |= keys & ~(self.masks[attribute] << shift)
        return raised

    def raise_level(self, keys: np.ndarray, counts: np.ndarray, attribute: int, low: int,
                    high: int) -> tuple[np.ndarray, np.ndarray]:
        """The table with ``attribute`` raised from level ``low`` to level ``high``."""
        raised = self._raised_keys(keys, attribute, low, high)
        if self.count_bits:  # the counts ride in the low bits: one plain sort, no gathers
            raised <<= self.count_bits
            raised |= counts
            # the raised keys are sorted runs (one per old code): a merging sort takes a
            # fraction of a quicksort's time; the sorted values are the same either way
            raised.sort(kind="stable")
            counts = raised & np.int64((1 << self.count_bits) - 1)
            raised >>= self.count_bits
            return merge_sorted(raised, counts)
        order = np.argsort(raised, kind="stable")  # sorted runs, one per old code: a merge
        return merge_sorted(raised[order], counts[order])

    def raise_last(self, keys: np.ndarray, counts: np.ndarray, attribute: int, low: int,
                   high: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`raise_level` for a table whose columns after ``attribute`` are all code 0 (a
        projection on columns 0..attribute): the raised keys are still sorted."""
        return merge_sorted(self._raised_keys(keys, attribute, low, high), counts)

    def level_bounds(self, keys: np.ndarray, counts: np.ndarray, attribute: int, levels: Sequence[int],
                     k: int) -> np.ndarray:
        """:meth:`score` (with ``prefix = attribute + 1``) of a projection on columns 0..attribute,
        with ``attribute`` (at level 0 in the table) raised to each of its levels. Each level's
        table is rolled up from the one below it (``attribute`` is the last column of the
        projection, so every roll-up is a linear merge), and the tables shrink as they rise.

        Weighted objectives carry the earlier columns' penalty units through the roll-ups
        (:meth:`_level_bounds_carried`); the reference twin scores each table afresh
        (:meth:`_level_bounds_by_score`). Both are the same exact integers."""
        if self.objective.weighted:
            return self._level_bounds_carried(keys, counts, attribute, levels, k)
        return self._level_bounds_by_score(keys, counts, attribute, levels, k)

    def _level_bounds_by_score(self, keys: np.ndarray, counts: np.ndarray, attribute: int,
                               levels: Sequence[int], k: int) -> np.ndarray:
        """:meth:`level_bounds`, each rolled-up table scored by :meth:`score` (the reference twin)."""
        height = self.heights[attribute]
        bounds = np.empty(height + 1, dtype=object if self.wide else np.int64)
        at = [*levels[:attribute], 0]
        for level in range(height + 1):
            if level:
                keys, counts = self.raise_last(keys, counts, attribute, level - 1, level)
            at[attribute] = level
            bounds[level] = self.score(keys, counts, at, k, prefix=attribute + 1)
        return bounds

    def _level_bounds_carried(self, keys: np.ndarray, counts: np.ndarray, attribute: int,
                              levels: Sequence[int], k: int) -> np.ndarray:
        """:meth:`level_bounds` for weighted objectives: the units of columns 0..attribute − 1 are
        summed once and carried through the roll-ups (the rows merged by raising ``attribute``
        share those columns' codes, so a merged row takes the units of the first row of its run);
        each level adds ``attribute``'s own units. The same integer sums as :meth:`score`."""
        height = self.heights[attribute]
        bounds = np.empty(height + 1, dtype=object if self.wide else np.int64)
        carried = self.units(keys, levels, attribute)
        for level in range(height + 1):
            if level:
                keys, counts, starts = merge_runs(self._raised_keys(keys, attribute, level - 1, level), counts)
                if carried is not None and starts is not None:
                    carried = carried[starts]
                own = self.penalties[attribute][level][self.code(keys, attribute)]
                units = own if carried is None else own + carried
            else:
                units = carried
            bounds[level] = weighted_score(units, counts, k, self.wide)
        return bounds

    def units(self, keys: np.ndarray, levels: Sequence[int], columns: int) -> np.ndarray | None:
        """Each row's penalty units summed over columns 0..columns − 1 at ``levels`` (None when
        every one is at level 0): one gather per column above level 0."""
        units: np.ndarray | None = None
        for j in range(columns):
            if levels[j]:
                penalty = self.penalties[j][levels[j]][self.code(keys, j)]
                if units is None:
                    units = penalty
                else:
                    units += penalty
        return units

    def project(self, keys: np.ndarray, counts: np.ndarray, prefix: int) -> tuple[np.ndarray, np.ndarray]:
        """The table projected on its first ``prefix`` columns (the others set to code 0)."""
        if prefix == self.d:
            return keys, counts
        return merge_sorted(keys & ~((1 << self.shifts[prefix - 1]) - 1), counts)

    def score(self, keys: np.ndarray, counts: np.ndarray, levels: Sequence[int], k: int | None = None,
              prefix: int | None = None) -> int:
        """q_int (exact, :mod:`.objectives`) of the table at ``levels``.

        With ``prefix`` (weighted objectives only), of a table projected on its first ``prefix``
        columns, the other columns' penalty units taken as 0: an upper bound on q_int of every
        node that agrees with ``levels`` on those columns (each class of such a node lies in one
        class F of the projection, its weight is at most F's, and c · min(c, k) is superadditive).
        Integer arithmetic only: the classes' units summed over the columns first (one gather per
        column), then one dot product.
        """
        k = self.k if k is None else int(k)
        name = self.objective.name
        if name == "discernibility":
            return discernibility_score(counts, k, self.wide)
        if name == "classification":
            target = self.target
            assert target is not None
            assert prefix is None  # its bounds are block_bound's
            if target == self.d - 1:  # classes G contiguous: one pass
                return self.block_bound(keys, counts, self.d - 1, k)
            qi_keys = keys & ~(self.masks[target] << self.shifts[target])
            return classification_score(qi_keys, self.code(keys, target), counts, k)
        if name not in ("retained", "loss"):
            raise ParameterError(f"the selection cannot score the objective {name!r}")
        return weighted_score(self.units(keys, levels, self.d if prefix is None else prefix), counts, k, self.wide)

    def block_bound(self, keys: np.ndarray, counts: np.ndarray, fixed: int, k: int) -> int:
        """``classification`` with the target as the last column: an upper bound on q_int of every
        node that agrees with this table on its first ``fixed`` columns and has the others at any
        level (the table has them at level 0), :func:`~.objectives.classification_block_bound`;
        with every quasi-identifier fixed (``fixed`` ≥ d − 1), the node's q_int itself. One pass
        over the sorted table: the rows of a class are contiguous, and so are those of a projection
        on leading columns."""
        target = self.d - 1
        assert self.target == target
        if len(keys) == 0:
            return 0
        target_codes = self.code(keys, target)
        fine_starts = run_starts(keys >> self.bits[target])
        if fixed >= target:
            return classification_score_sorted(counts, target_codes, fine_starts, k)
        if fixed == 0:
            coarse_of_row = np.zeros(len(keys), dtype=np.int64)
        else:
            first = np.zeros(len(keys), dtype=bool)
            first[run_starts(keys >> self.shifts[fixed - 1])] = True
            coarse_of_row = np.cumsum(first) - 1
        return classification_block_bound(counts, target_codes, fine_starts, coarse_of_row,
                                          int(coarse_of_row[-1]) + 1, self.hierarchies[target].size(0), k)

    def children(self, keys: np.ndarray, counts: np.ndarray, attribute: int, levels: Sequence[int],
                 k: int) -> tuple[np.ndarray, bool, dict[int, tuple[np.ndarray, np.ndarray]]]:
        """The branch and bound's step at ``attribute`` (a table with the earlier columns at
        ``levels`` and the others at level 0): for each level of ``attribute``, an upper bound on
        q_int of the nodes below it; whether those bounds are the nodes' own q_int (each child is
        a single node, scored); and the child tables made on the way, by level (the others are
        made only for the children visited).

        Both kinds of bound come from the projection on columns 0..attribute, rolled up through
        the levels of ``attribute`` (its last column, so each roll-up is a linear merge, and the
        projections are small): weighted objectives score it (:meth:`level_bounds`);
        ``classification`` (target last) carries c_G'y and R_G' of
        :func:`~.objectives.classification_block_bound` through the roll-ups, both sums over the
        classes merged. A target with many values falls back to the bound of each child's own
        table (:meth:`block_bound`)."""
        if self.objective.name != "classification":
            bounds = self.level_bounds(*self.project(keys, counts, attribute + 1), attribute, levels, k)
            return bounds, attribute + 1 == self.d, {0: (keys, counts)}
        target = self.d - 1
        exact = attribute + 1 >= target
        made = {0: (keys, counts)}
        values = self.hierarchies[target].size(0)
        coarse_keys = keys >> self.shifts[attribute]  # columns 0..attribute, ``attribute`` lowest
        coarse_starts = run_starts(coarse_keys)
        if len(coarse_starts) * values > DENSE_CELLS_PER_ROW * len(keys):
            return self._bounds_of_child_tables(made, attribute, k), exact, made
        return self._bounds_rolled_up(keys, counts, attribute, k, coarse_keys, coarse_starts, exact), exact, made

    def _bounds_of_child_tables(self, made: dict[int, tuple[np.ndarray, np.ndarray]], attribute: int, k: int
                                ) -> np.ndarray:
        """:meth:`children`'s classification bounds from each child's own table
        (:meth:`block_bound`), the tables made into ``made`` by level: for targets with many
        values (the reference twin of :meth:`_bounds_rolled_up`; both are upper bounds on every
        node of the block, not always equal, so the search returns the same node)."""
        for level in range(1, self.heights[attribute] + 1):
            made[level] = self.raise_level(*made[level - 1], attribute, level - 1, level)
        return np.array([self.block_bound(*made[level], attribute + 1, k) for level in sorted(made)],
                        dtype=np.int64)

    def _bounds_rolled_up(self, keys: np.ndarray, counts: np.ndarray, attribute: int, k: int,
                          coarse_keys: np.ndarray, coarse_starts: np.ndarray, exact: bool) -> np.ndarray:
        """:meth:`children`'s classification bounds from the dense (G', y) array of the projection
        on columns 0..attribute, rolled up through the levels of ``attribute`` (``exact``: the
        children are single nodes, scored)."""
        target = self.d - 1
        values = self.hierarchies[target].size(0)
        first = np.zeros(len(keys), dtype=bool)
        first[coarse_starts] = True
        coarse_of_row = np.cumsum(first) - 1
        fine_starts = run_starts(keys >> self.bits[target])
        majority = exact_sums(coarse_of_row[fine_starts], np.maximum.reduceat(counts, fine_starts),
                              len(coarse_starts))
        by_target = exact_sums(coarse_of_row * values + self.code(keys, target), counts,
                               len(coarse_starts) * values).reshape(-1, values)
        group_keys = coarse_keys[coarse_starts]
        mask = self.masks[attribute]
        bounds = np.empty(self.heights[attribute] + 1, dtype=np.int64)
        for level in range(self.heights[attribute] + 1):
            if level:  # tree-ordered codes: the raised keys stay sorted
                own = group_keys & mask
                group_keys = (group_keys & ~mask) | self._map(attribute, level - 1, level)[
                    own.astype(np.int64) if own.dtype == object else own]
                starts = run_starts(group_keys)
                group_keys = group_keys[starts]
                by_target = np.add.reduceat(by_target, starts, axis=0)
                majority = np.add.reduceat(majority, starts)
            bounds[level] = classification_matrix_score(by_target, k) if exact else \
                classification_matrix_bound(by_target, majority, k)
        return bounds


def run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal neighbours starts in ``values`` (non-empty)."""
    first = np.empty(len(values), dtype=bool)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return np.flatnonzero(first)
