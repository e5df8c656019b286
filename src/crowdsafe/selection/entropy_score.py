"""The ``entropy`` objective scored on every lattice node: float scores with a rigorous error
bound, and an exact interval enclosure of any one node's score (:mod:`.score`).

Its scores involve logarithms, so they cannot be exact integers: the selection
(:func:`.search.gumbel_max_full`) widens every key by :attr:`EntropyScorer.error`
and compares the nodes still in contention with :meth:`EntropyScorer.interval`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from crowdsafe.anonymize.counted import CountedSample
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.data import Dataset
from crowdsafe.selection.score import (
    Objective,
    entropy_bit_tables,
    entropy_error_bound,
    entropy_float_score,
    entropy_interval_score,
    node_counts,
)
from crowdsafe.selection.tables import KeyedTables, run_flags
from crowdsafe.selection.words import Keys, dense_ranks, stable_order


def merge_sorted_sums(keys: Keys, counts: np.ndarray, lost: np.ndarray,
                       float_counts: bool) -> tuple[Keys, np.ndarray, np.ndarray]:
    """:func:`.tables.merge_sorted` carrying a float column ``lost`` summed with the counts (bincount
    over the group numbers: sums of non-negative terms in order). ``float_counts``: the counts
    are summed in float64 too, exact because every sum is below 2^53."""
    if len(keys) == 0:
        return keys, counts, lost
    first, starts = run_flags(keys)
    if len(starts) == len(keys):
        return keys, counts, lost
    group = np.cumsum(first) - 1
    lost = np.bincount(group, weights=lost, minlength=len(starts))
    if float_counts:
        counts = np.bincount(group, weights=counts, minlength=len(starts)).astype(np.int64)
    else:
        counts = np.add.reduceat(counts, starts)
    return keys[starts], counts, lost


class EntropyScorer:
    """The ``entropy`` objective (:mod:`.score`) on every node of the lattice of ``columns``:
    float64 scores q_D with a rigorous error bound (:attr:`error`), and an interval enclosure of
    any one node's exact q_D (:meth:`interval`).

    Float path: depth-first over the columns as :func:`.search.lattice_scores`, each table carrying per
    tuple its bits lost so far, L = Σ over its rows of h_j for the columns already raised. A
    column's h_j depends on each row's leaf, so at depth j (column j still at level 0 in the
    table) every level l of j adds counts · h_j(leaf, l) and rolls the table up from level 0 (one
    stable sort, counts and L summed). At a node, L per class gives q_D
    (:func:`~.score.entropy_float_score`). NumPy throughout; no loop over rows or tuples.
    """

    def __init__(self, sample: Dataset | CountedSample, columns: Sequence[str], k: int, objective: Objective) -> None:
        self.objective = objective.for_columns(columns, sample.hierarchies)
        self.k = int(k)
        self.columns = tuple(columns)
        heights = self.objective.candidate_heights(columns, sample.hierarchies)
        self.lattice = Lattice(self.columns, heights)
        self.tables = tables = KeyedTables(sample, columns, self.objective, k)
        self.leaves = [h.size(0) for h in tables.hierarchies]
        self.rows = int(tables.base_counts.sum())
        # per column: c_j(v) for every leaf (tree codes), and each leaf's node at every level
        self.leaf_codes = [tables.code(tables.base_keys, j) for j in range(tables.d)]
        self.marginals = []
        for j in range(tables.d):
            marginal = np.zeros(self.leaves[j], dtype=np.int64)
            np.add.at(marginal, self.leaf_codes[j], tables.base_counts)
            self.marginals.append(marginal)
        self.ancestors = [[tables.ancestor_map(j, 0, level) for level in range(h.height + 1)]
                          for j, h in enumerate(tables.hierarchies)]
        self.bits, caps = entropy_bit_tables(self.marginals, self.ancestors, self.leaves, self.rows)
        self.cap = float(sum(caps))
        self.error = entropy_error_bound(len(tables.base_keys), tables.d, self.rows, self.k, self.cap)
        self._weights: dict[tuple[int, ...], tuple[int, list]] = {}

    def _raise(self, keys: Keys, counts: np.ndarray, lost: np.ndarray, attribute: int,
               level: int) -> tuple[Keys, np.ndarray, np.ndarray]:
        """The table with ``attribute`` (at level 0) raised to ``level``, its h added to ``lost``.
        The last column is in the keys' lowest bits and tree codes keep order, so raising it
        leaves a sorted table sorted (a linear merge); any other column needs one stable sort."""
        tables = self.tables
        lost = lost + counts * self.bits[attribute][level][tables.code(keys, attribute)]
        raised = tables.raised_keys(keys, attribute, 0, level)
        small = self.rows < 2**53
        if attribute == tables.d - 1:
            return merge_sorted_sums(raised, counts, lost, small)
        order = stable_order(raised)  # np.argsort(raised, kind="stable"), for word keys too
        return merge_sorted_sums(raised[order], counts[order], lost[order], small)

    def scores(self) -> np.ndarray:
        """Float q_D of every node, in the lattice's order (within :attr:`error` of the exact)."""
        tables, k, cap = self.tables, self.k, self.cap
        heights = self.lattice.heights
        strides = self.lattice.strides
        scores = np.zeros(self.lattice.size, dtype=np.float64)

        def visit(attribute: int, keys: Keys, counts: np.ndarray, lost: np.ndarray, index: int) -> None:
            if attribute == tables.d:
                scores[index] = entropy_float_score(counts, lost, k, cap)
                return
            for level in range(heights[attribute] + 1):
                child = (keys, counts, lost) if level == 0 else self._raise(keys, counts, lost, attribute, level)
                visit(attribute + 1, *child, index + level * int(strides[attribute]))

        visit(0, tables.base_keys, tables.base_counts, np.zeros(len(tables.base_keys)), 0)
        return scores

    def _integer_weights(self, levels: tuple[int, ...]) -> tuple[int, list]:
        """S0 and W_j(v) = Σ of min(|E|, k) over the rows with leaf v in column j (None for a
        column at level 0) of the node ``levels``: exact integers, from the distinct tuples."""
        cached = self._weights.get(levels)
        if cached is not None:
            return cached
        tables, k = self.tables, self.k
        keys = tables.pack((self.ancestors[j][level][self.leaf_codes[j]] for j, level in enumerate(levels)),
                           len(tables.base_keys))
        classes = dense_ranks(keys)  # np.unique's inverse, for word keys too
        # every sum below is at most k · rows: int64 when that fits, else Python integers
        exact_type = np.int64 if self.k * max(self.rows, 1) < 2**62 else object
        counts = tables.base_counts.astype(exact_type)
        sizes = np.zeros(int(classes.max(initial=-1)) + 1, dtype=exact_type)
        np.add.at(sizes, classes, counts)
        kept = np.minimum(sizes, k)
        suppressed = int((sizes * (k - kept)).sum())
        per_row = kept[classes] * counts  # min(|E|, k) times the tuple's count
        weights: list[np.ndarray | None] = []
        for j, level in enumerate(levels):
            if level == 0:
                weights.append(None)
                continue
            weight = np.zeros(self.leaves[j], dtype=exact_type)
            np.add.at(weight, self.leaf_codes[j], per_row)
            weights.append(weight)
        self._weights[levels] = (suppressed, weights)
        return suppressed, weights

    def interval(self, levels: Sequence[int], iv) -> Any:
        """An enclosure of the exact q_D of the node ``levels`` in ``iv`` (at its precision)."""
        levels = tuple(int(x) for x in levels)
        suppressed, weights = self._integer_weights(levels)
        nodes = [None if level == 0 else node_counts(self.marginals[j], self.ancestors[j][level])
                 for j, level in enumerate(levels)]
        return entropy_interval_score(iv, suppressed, weights, nodes, self.marginals, self.leaves)
