"""Exact location: every (target tuple, class) pair whose class cells all cover the tuple.

Targets and classes are both walked as tries of code prefixes, one column at a time
(:func:`locate_exact`); the join at each step has a fast path on a direct table of keys and a
reference twin by binary search (:func:`_join_children`, tested in
tests/fast_paths/test_attack_lookups.py). Attack code: it reads releases and the attacker's
targets, never the private table, and carries no guarantee of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from crowdsafe.data.arrays import stable_argsort, unique_inverse
from crowdsafe.data.cell_reader import CellCovers, segments

if TYPE_CHECKING:
    from crowdsafe.attacks.locate import ClassTable

DENSE_KEYS = 1 << 24  # (prefix, code) keys looked up in a direct table up to this many, else by binary search


@dataclass(frozen=True)
class TargetTrie:
    """The distinct target tuples as a trie of code prefixes, one level per column of ``order``:
    at level d, the children of prefix p are ``starts[d][p]:starts[d][p + 1]`` and
    ``codes[d]`` is each child's code; ``tuple_of_leaf``: the tuple each last-level prefix is.
    It depends on the targets only, so one trie serves every release."""

    order: tuple[str, ...]
    starts: tuple[np.ndarray, ...]
    codes: tuple[np.ndarray, ...]
    tuple_of_leaf: np.ndarray


def target_trie(tuple_codes: Mapping[str, np.ndarray], sizes: Mapping[str, int], order: Sequence[str]) -> TargetTrie:
    """The :class:`TargetTrie` of distinct tuples ``tuple_codes`` (codes of column c below
    ``sizes[c]``), walked in ``order``."""
    n_tuples = len(next(iter(tuple_codes.values())))
    prefix = np.zeros(n_tuples, dtype=np.int64)  # each tuple's prefix at the current depth
    n_prefixes = 1
    starts, codes = [], []
    for c in order:
        size = max(int(sizes[c]), 1)
        edges, prefix = unique_inverse(prefix * size + tuple_codes[c], n_prefixes * size)
        parent, code = np.divmod(edges, size)
        starts.append(np.searchsorted(parent, np.arange(n_prefixes + 1)))
        codes.append(code)
        n_prefixes = len(edges)
    tuple_of_leaf = np.empty(n_prefixes, dtype=np.int64)
    tuple_of_leaf[prefix] = np.arange(n_tuples, dtype=np.int64)
    return TargetTrie(tuple(order), tuple(starts), tuple(codes), tuple_of_leaf)


def locate_exact(table: ClassTable, covers: Mapping[str, CellCovers],
                 tuple_codes: Mapping[str, np.ndarray], trie: TargetTrie | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Every (target tuple, class) pair whose class cells all cover the tuple's values.

    ``covers[c]``: what each of ``table.distinct_cells[c]`` covers (:func:`read_classes`);
    ``tuple_codes[c][t]``: the code of tuple t in column c (the tuples are distinct). Returns
    two aligned int64 arrays, sorted by tuple then class. ``trie``: the tuples' trie, when
    already built (by default, walked with the columns with the fewest distinct cells first).

    Classes and target tuples both form tries of prefixes, walked one column at a time.
    Going down a column extends every (target prefix, class prefix) pair still consistent to
    the target prefix's children, then joins them with the table (class prefix, covered code)
    → child class prefix on (class prefix, the child's code): only consistent pairs are formed,
    and targets that agree on the columns walked so far are one prefix (on Adult, 29,000 pairs
    where tuples would give 358,000).
    """
    n_tuples = len(next(iter(tuple_codes.values())))
    n_classes = table.n_classes
    if n_tuples == 0 or n_classes == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if trie is None:
        trie = target_trie(tuple_codes, {c: cover.domain_size for c, cover in covers.items()},
                           sorted(covers, key=lambda c: len(covers[c].labels)))
    class_prefix = np.zeros(n_classes, dtype=np.int64)  # each class's prefix at the current depth
    pair_target = np.zeros(1, dtype=np.int64)  # the consistent (target prefix, class prefix) pairs
    pair_class = np.zeros(1, dtype=np.int64)
    n_class_prefixes = 1
    for c, target_start, target_code in zip(trie.order, trie.starts, trie.codes):
        cover = covers[c]
        width, size = len(cover.labels), max(cover.domain_size, 1)
        # the classes' trie one column down: (parent prefix, covered code) -> child prefix, by key
        edges, class_prefix = unique_inverse(class_prefix * width + table.cell_of_class[c], n_class_prefixes * width)
        parent, cell = np.divmod(edges, width)
        fan = cover.size[cell]
        child = np.repeat(np.arange(len(edges), dtype=np.int64), fan)
        key = parent[child] * size + cover.indices[segments(cover.indptr[cell], fan)]
        # every pair extended to its target prefix's children, then joined on (class prefix, code)
        target_fan = np.diff(target_start)[pair_target]
        pair_target = segments(target_start[pair_target], target_fan)
        wanted = np.repeat(pair_class, target_fan) * size + target_code[pair_target]
        pair_target, pair_class = _join_children(pair_target, wanted, key, child, n_class_prefixes * size)
        n_class_prefixes = len(edges)
    # every column walked: the prefixes are the classes and the distinct target tuples
    class_of_prefix = np.empty(n_class_prefixes, dtype=np.int64)
    class_of_prefix[class_prefix] = np.arange(n_classes, dtype=np.int64)
    tuples, classes = trie.tuple_of_leaf[pair_target], class_of_prefix[pair_class]
    by_pair = _pair_order(tuples, classes, n_tuples, n_classes)
    return tuples[by_pair], classes[by_pair]


def _pair_order(tuples: np.ndarray, classes: np.ndarray, n_tuples: int, n_classes: int) -> np.ndarray:
    """The order that sorts distinct (tuple, class) pairs by tuple, then class.

    Fast path: when no tuple has two pairs (every tuple in at most one class, as in a strict
    partition), each pair is placed at its tuple by one scatter. Else the reference twin
    :func:`_pair_order_by_sort`. Both give the same order (tests/fast_paths/test_attack_lookups.py)."""
    slot = np.full(n_tuples, -1, dtype=np.int64)
    slot[tuples] = np.arange(len(tuples), dtype=np.int64)
    placed = slot[slot >= 0]
    if len(placed) == len(tuples):  # (a repeated tuple keeps one slot: fewer placed than pairs)
        return placed
    return _pair_order_by_sort(tuples, classes, n_tuples, n_classes)


def _pair_order_by_sort(tuples: np.ndarray, classes: np.ndarray, n_tuples: int, n_classes: int) -> np.ndarray:
    """:func:`_pair_order` by a stable sort of the keys ``tuple * n_classes + class``."""
    return stable_argsort(tuples * n_classes + classes, n_tuples * n_classes)


def _join_children(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                   n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """One step of :func:`locate_exact`'s join: each pair (``pair_target[i]``, key
    ``wanted[i]``) extended to every ``child`` whose ``key`` (below ``n_keys``) is ``wanted[i]``;
    the pairs in the order of ``wanted``, a key's children in their order in ``child``.

    Up to :data:`DENSE_KEYS` keys, a direct table of the keys: :func:`_join_by_partition` when
    every key has at most one child (disjoint cells), else :func:`_join_by_runs`; beyond, the
    reference twin :func:`_join_by_search`. All three give the same pairs."""
    if n_keys > DENSE_KEYS:
        return _join_by_search(pair_target, wanted, key, child, n_keys)
    count_of_key = np.bincount(key, minlength=n_keys)
    if count_of_key.max(initial=0) <= 1:
        return _join_by_partition(pair_target, wanted, key, child, n_keys)
    return _join_by_runs(pair_target, wanted, key, child, count_of_key)


def _join_by_partition(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                       n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` when the ``key`` values are distinct (a strict partition): one
    child per key, a direct table, no sort."""
    child_of_key = np.full(n_keys, -1, dtype=np.int64)
    child_of_key[key] = child
    found = child_of_key[wanted]
    kept = np.flatnonzero(found >= 0)  # (indices: cheaper than a boolean mask for two takes)
    return pair_target[kept], found[kept]


def _join_by_runs(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                  count_of_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` by a direct table of where each key's run starts among the sorted
    keys (``count_of_key``: each key's count, ``np.bincount(key, minlength=n_keys)``)."""
    child = child[stable_argsort(key, len(count_of_key))]
    count = count_of_key[wanted]
    start = (np.cumsum(count_of_key) - count_of_key)[wanted]
    return _expand(pair_target, child, start, count)


def _join_by_search(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                    n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` by binary search of each wanted key among the sorted keys: memory
    bounded by the keys, whatever ``n_keys``."""
    by_key = stable_argsort(key, n_keys)
    key, child = key[by_key], child[by_key]
    start = np.searchsorted(key, wanted, side="left")
    count = np.searchsorted(key, wanted, side="right") - start
    return _expand(pair_target, child, start, count)


def _expand(pair_target: np.ndarray, child: np.ndarray, start: np.ndarray, count: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Each pair repeated once per child in ``child[start : start + count]``."""
    if count.max(initial=0) <= 1:  # at most one child each: a filter
        kept = np.flatnonzero(count)
        return pair_target[kept], child[start[kept]]
    return np.repeat(pair_target, count), child[segments(start, count)]
