"""Keyed frequency tables of a sample and their roll-ups through the generalization lattice.

The ε1-safe selection (:mod:`.mechanism`) scores lattice nodes on the sample's frequency table
at each node. Here a table is one key per distinct tuple, the integer Σ_j c_j · 2^shift[j] of the
columns' codes in bit fields (first column most significant; the bit widths from the
hierarchies' leaf counts), sorted by key, with the tuples' counts. Up to :data:`KEY_BITS` = 62
bits the key is one int64. Past it (many values in observed hierarchies, whose leaf counts are
the data's) the same integer is held in a few int64 words cut at column boundaries
(:class:`.words.WordKeys`), so no table is refused for its number of values. Every operation on
words (a field, a replaced field, a mask, a shift, a comparison of neighbours, the stable sort)
gives the integers, comparisons and stable order the Python integers would give (proof in
:mod:`.words`), so the tables, scores and choice are the same. The reference twin holds wide
keys as Python integers in object arrays (:data:`OBJECT_KEYS`; many times slower), and the tests
compare the two (``tests/anonymize/test_wide_keys.py``, ``tests/fast_paths/test_word_keys.py``).

The widths, whether keys are wide (``wide_keys``, a recorded mechanism input) and the words'
layout come from the hierarchies alone, never from the data; the data decides only the running
time (how many runs a sort meets, :func:`.words.stable_order`). Node codes are renumbered in the
order of a depth-first walk of each hierarchy, so raising a column's level keeps runs sorted:
the roll-ups are linear merges or one stable sort. :class:`KeyedTables` also scores a table for
the exact integer objectives (:mod:`.score`) and gives the branch and bound's block bounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from crowdsafe.anonymize.counted import CountedSample, counted
from crowdsafe.data import Dataset, Hierarchy, packing
from crowdsafe.data.arrays import stable_argsort
from crowdsafe.errors import ParameterError
from crowdsafe.selection.gumbel import SCORE_UNIT
from crowdsafe.selection.score import (
    Objective,
    classification_score,
    classification_score_sorted,
    discernibility_score,
    level_units,
    weighted_score,
)
from crowdsafe.selection.words import (
    Keys,
    WordKeys,
    dense_ranks,
    field_of,
    neighbours_differ,
    sorted_runs,
    stable_order,
    with_field_of,
)


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


#: Below this many rows :func:`merge_runs` sums each run with one ``np.add.reduceat`` (a few
#: microseconds less a call); above it, with a running sum (reduceat's cost per run dominates).
SMALL_TABLE = 2048


def merge_sorted(keys: Keys, counts: np.ndarray) -> tuple[Keys, np.ndarray]:
    """Sum the counts of equal neighbours in sorted ``keys``: the frequency table, in one pass."""
    merged, summed, _ = merge_runs(keys, counts)
    return merged, summed


def merge_runs(keys: Keys, counts: np.ndarray) -> tuple[Keys, np.ndarray, np.ndarray | None]:
    """:func:`merge_sorted` and where each merged run starts in ``keys`` (None when no two
    neighbours are equal: the table is returned as it is). Exact int64 sums."""
    if len(keys) == 0:
        return keys, counts, None
    _, starts = run_flags(keys)
    if len(starts) == len(keys):
        return keys, counts, None
    return keys[starts], run_sums(counts, starts), starts


def run_sums(counts: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The sums of ``counts`` over the runs that begin at ``starts`` (increasing, the first 0), exact
    int64 sums."""
    if len(counts) < SMALL_TABLE:  # one call: on small tables the calls, not the rows, cost
        return np.add.reduceat(counts, starts)
    running = np.cumsum(counts)  # one pass (reduceat is slower when most runs are short)
    before = running[starts[1:] - 1]  # the running total before each group after the first
    sums = np.empty(len(starts), dtype=running.dtype)
    sums[:-1] = before
    sums[-1] = running[-1]
    sums[1:] -= before
    return sums


def _key_bits(hierarchies: Sequence[Hierarchy]) -> list[int]:
    return [max(int(h.size(0) - 1).bit_length(), 1) for h in hierarchies]


#: Up to this many leaves a column's split heights are one (leaves × leaves) int8 table (1 MiB).
SPLIT_TABLE_LEAVES = 1024

#: Key bits held in an int64; wider keys are a few int64 words (:class:`.words.WordKeys`).
KEY_BITS = 62

#: The reference twin of wide keys: True holds them as Python integers in object arrays (exact,
#: many times slower; the tests compare the two). Read when a :class:`KeyedTables` is made.
OBJECT_KEYS = False


class KeyedTables:
    """Frequency tables of a sample as one key per distinct tuple (the columns' codes in bit
    fields, first column most significant: one int64, or int64 words past :data:`KEY_BITS`,
    module docstring), sorted by key; level-0 sizes bound the codes at every level.

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
        #: keys wider than KEY_BITS are int64 words: exact, never refused (module docstring)
        self.wide_keys = sum(self.bits) > KEY_BITS
        #: how wide keys are held: int64 words, or Python integers (the reference twin, :data:`OBJECT_KEYS`)
        self.word_keys = self.wide_keys and not OBJECT_KEYS
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
        self._splits: dict[int, np.ndarray | None] = {}
        cells = counted(sample, columns)  # a Dataset is counted here; the Spark engine passes its counts
        # |q_int| ≤ 2^20 · k · rows (the weighted objectives; 10k² · rows for discernibility): past
        # 2^63 the sums are taken in Python integers (exact, slow; never refused, so the sample's
        # size cannot show in an error)
        self.wide = SCORE_UNIT * 10 * self.k * self.k * max(cells.n_rows, 1) >= 2**63
        # classification: the target's key field, lowest bits when the target is the last column
        self.target = columns.index(self.objective.target) if self.objective.target is not None else None
        # leaf_of_rank[j][tree code at level 0]: the column's leaf code
        self.leaf_of_rank = [np.argsort(rank) for rank in leaf_ranks]
        keys = self.pack((leaf_ranks[j][cells.codes[:, j]] for j in range(self.d)), cells.n_cells)
        # the keys are distinct (one per cell): every sort gives the one order; int64 keys by radix passes
        if isinstance(keys, WordKeys):
            order = stable_order(keys)
        else:
            order = np.argsort(keys) if self.wide_keys else stable_argsort(keys, 1 << sum(self.bits))
        self.base_keys = keys[order]
        self.base_counts = cells.counts[order].astype(np.int64)
        # a count is at most the sample's size: when it fits beside the key bits, raise_level
        # sorts (key, count) packed in one int64 (equal keys' counts are summed, so their order
        # among themselves does not matter)
        count_bits = max(int(cells.n_rows).bit_length(), 1)
        self.count_bits = count_bits if not self.wide_keys and sum(self.bits) + count_bits <= 63 else 0

    def pack(self, columns: Iterable[np.ndarray], n: int) -> Keys:
        """The keys of ``n`` tuples whose codes per column are ``columns`` (int64; when the fields
        pass :data:`KEY_BITS`, int64 words, or Python integers in the reference twin)."""
        if not self.wide_keys:
            return packing.pack_bits(columns, self.shifts, n)
        if self.word_keys:
            return WordKeys.pack(columns, self.shifts, self.bits, n)
        keys = np.zeros(n, dtype=object)
        for values, shift in zip(columns, self.shifts):
            keys |= np.asarray(values).astype(object) << shift
        return keys

    def ancestor_map(self, attribute: int, low: int, high: int) -> np.ndarray:
        """Tree codes at level ``low`` of ``attribute`` -> their ancestors' at ``high`` (cached)."""
        cached = self._maps.get((attribute, low, high))
        if cached is None:
            cached = np.arange(self.hierarchies[attribute].size(low), dtype=np.int64)
            for level in range(low, high):
                cached = self.steps[attribute][level][cached]
            self._maps[(attribute, low, high)] = cached
        return cached

    def code(self, keys: Keys, attribute: int) -> np.ndarray:
        """The code of ``attribute`` in each key (int64)."""
        return field_of(keys, self.shifts[attribute], self.bits[attribute])

    def with_code(self, keys: Keys, attribute: int, codes: np.ndarray, fresh: bool = False) -> Keys:
        """The keys with ``attribute``'s code replaced by ``codes`` (int64): new keys
        (``fresh``: ``codes`` is a new array the int64 keys may be made in, :func:`.words.with_field_of`)."""
        return with_field_of(keys, self.shifts[attribute], self.bits[attribute], codes, fresh)

    def leaf_codes(self, keys: Keys, attribute: int) -> np.ndarray:
        """The leaf code (in the hierarchy's own numbering) of ``attribute`` in each key of a table
        whose ``attribute`` is at level 0."""
        return self.leaf_of_rank[attribute][self.code(keys, attribute)]

    def raised_keys(self, keys: Keys, attribute: int, low: int, high: int) -> Keys:
        """The keys with ``attribute`` raised from level ``low`` to ``high`` (new keys, not sorted)."""
        raised = self.ancestor_map(attribute, low, high)[self.code(keys, attribute)]
        return self.with_code(keys, attribute, raised, fresh=True)

    def raise_level(self, keys: Keys, counts: np.ndarray, attribute: int, low: int,
                    high: int) -> tuple[Keys, np.ndarray]:
        """The table with ``attribute`` raised from level ``low`` to level ``high``."""
        # the raised keys are sorted runs (one per old code): the stable sort merges them
        return self._merged(self.raised_keys(keys, attribute, low, high), counts)

    def raise_columns(self, keys: Keys, counts: np.ndarray, lows: Sequence[int],
                      highs: Sequence[int]) -> tuple[Keys, np.ndarray]:
        """The table with each column j raised from level ``lows[j]`` to ``highs[j]`` (at least
        ``lows[j]``), in one sort."""
        raised = keys
        for attribute, (low, high) in enumerate(zip(lows, highs)):
            if high > low:
                raised = self.raised_keys(raised, attribute, low, high)
        return (keys, counts) if raised is keys else self._merged(raised, counts)

    def _merged(self, raised: Keys, counts: np.ndarray) -> tuple[Keys, np.ndarray]:
        """The frequency table of new keys ``raised`` (a fresh array, reordered here) with ``counts``."""
        if self.count_bits and isinstance(raised, np.ndarray):  # the counts in the low bits: one sort, no gathers
            raised <<= self.count_bits
            raised |= counts
            # a merging sort takes a fraction of a quicksort's time on sorted runs; the sorted
            # values are the same either way
            raised.sort(kind="stable")
            counts = raised & np.int64((1 << self.count_bits) - 1)
            raised >>= self.count_bits
            return merge_sorted(raised, counts)
        if isinstance(raised, WordKeys):  # the runs come with the order: gather the words at the runs only
            order, differ = sorted_runs(raised)
            if not differ.all():
                starts = np.flatnonzero(np.concatenate(([True], differ)))
                return raised[order[starts]], run_sums(counts[order], starts)
            return raised[order], counts[order]
        order = stable_order(raised)  # np.argsort(raised, kind="stable")
        return merge_sorted(raised[order], counts[order])

    def raise_last(self, keys: Keys, counts: np.ndarray, attribute: int, low: int,
                   high: int) -> tuple[Keys, np.ndarray]:
        """:meth:`raise_level` for a table whose columns after ``attribute`` are all code 0 (a
        projection on columns 0..attribute): the raised keys are still sorted."""
        return merge_sorted(self.raised_keys(keys, attribute, low, high), counts)

    def split_heights(self, attribute: int) -> np.ndarray | None:
        """For tree codes a and b of ``attribute``'s leaves, the number of candidate levels 0..h at
        which their ancestors differ, at a · leaves + b of a flat array (cached); None when
        the leaves are too many for the square (then :meth:`run_heights` compares level by level)."""
        if attribute not in self._splits:
            leaves = self.hierarchies[attribute].size(0)
            square: np.ndarray | None = None
            if leaves <= SPLIT_TABLE_LEAVES:
                ancestors = [self.ancestor_map(attribute, 0, level) for level in range(self.heights[attribute] + 1)]
                counted_in = np.int8 if len(ancestors) < 127 else np.int32
                grid = np.zeros((leaves, leaves), dtype=counted_in)
                for ancestor in ancestors:
                    grid += ancestor[:, None] != ancestor[None, :]
                square = grid.ravel()  # (a, b) at a · leaves + b
            self._splits[attribute] = square
        return self._splits[attribute]

    def run_heights(self, keys: Keys, attribute: int) -> np.ndarray:
        """For a sorted, merged table whose columns after ``attribute`` are all code 0 and
        ``attribute`` at level 0 (a projection on columns 0..attribute): for each row, the number
        of candidate levels 0..h of ``attribute`` at which it starts a new class.

        In tree codes raising the last column merges neighbours only, so the classes at level l
        are the runs that begin at the rows whose height is above l: the same classes, in the same
        order, as :meth:`raise_last` level by level. A row's height is h + 1 when its earlier
        columns differ from the row before's (the first row too), else the number of levels at
        which the two leaves' ancestors differ (a prefix of 0..h: once equal, equal above)."""
        top = self.heights[attribute] + 1
        square = self.split_heights(attribute)
        # small integers (at most h + 1): the square's own type, int8 below 127 levels
        height = np.empty(len(keys), dtype=square.dtype if square is not None else np.int64)
        if len(keys) == 0:
            return height
        height[0] = top
        code = self.code(keys, attribute)
        if square is not None:
            pair = code[:-1] * self.hierarchies[attribute].size(0)
            pair += code[1:]
            np.take(square, pair, out=height[1:])
        else:
            height[1:] = 0
            for level in range(top):
                ancestor = self.ancestor_map(attribute, 0, level)
                height[1:] += ancestor[code[1:]] != ancestor[code[:-1]]
        above = self.shifts[attribute] + self.bits[attribute]  # the earlier columns' bits
        if isinstance(keys, np.ndarray) and keys.dtype == np.int64:  # they differ where the keys' xor reaches them
            earlier = keys[1:] ^ keys[:-1]
            np.putmask(height[1:], earlier >= (1 << above), top)
        else:
            height[1:][neighbours_differ(keys >> above)] = top
        return height

    def units(self, keys: Keys, levels: Sequence[int], columns: int) -> np.ndarray | None:
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

    def project(self, keys: Keys, counts: np.ndarray, prefix: int) -> tuple[Keys, np.ndarray]:
        """The table projected on its first ``prefix`` columns (the others set to code 0)."""
        if prefix == self.d:
            return keys, counts
        return merge_sorted(keys & ~((1 << self.shifts[prefix - 1]) - 1), counts)

    def score(self, keys: Keys, counts: np.ndarray, levels: Sequence[int], k: int | None = None,
              prefix: int | None = None) -> int:
        """q_int (exact, :mod:`.score`) of the table at ``levels``.

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
            assert prefix is None  # its bounds are bound.block_bound's
            if target == self.d - 1:  # classes G contiguous: one pass
                if len(keys) == 0:
                    return 0
                return classification_score_sorted(counts, self.code(keys, target),
                                                   run_starts(keys >> self.bits[target]), k)
            qi_keys = keys & ~(self.masks[target] << self.shifts[target])
            if isinstance(qi_keys, WordKeys):  # ranks group and order as the keys do
                qi_keys = dense_ranks(qi_keys)
            return classification_score(qi_keys, self.code(keys, target), counts, k)
        if name not in ("retained", "loss"):
            raise ParameterError(f"the selection cannot score the objective {name!r}")
        return weighted_score(self.units(keys, levels, self.d if prefix is None else prefix), counts, k, self.wide)


def run_flags(values: Keys) -> tuple[np.ndarray, np.ndarray]:
    """(whether each element of ``values`` starts a run of equal neighbours, where the runs
    start), for non-empty ``values``."""
    first = np.empty(len(values), dtype=bool)
    first[0] = True
    if isinstance(values, WordKeys):
        first[1:] = neighbours_differ(values)
    else:
        np.not_equal(values[1:], values[:-1], out=first[1:])
    return first, first.nonzero()[0]


def run_starts(values: Keys) -> np.ndarray:
    """Where each run of equal neighbours starts in ``values`` (non-empty)."""
    return run_flags(values)[1]
