"""Exact location: every (target tuple, class) pair whose class cells all cover the tuple.

Targets and classes are both walked as tries of code prefixes, one column at a time
(:func:`locate_exact`; the classes' trie, :func:`class_trie`, is made before the targets are
known and may hold several releases, walked at once by :func:`walk`); the join at each step has
a fast path on a direct table of keys and a reference twin by binary search
(:func:`_join_children`, tested in tests/fast_paths/test_attack_lookups.py). Attack code: it
reads releases and the attacker's targets, never the private table, and carries no guarantee of
its own.
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

    Classes and target tuples both form tries of prefixes, walked one column at a time
    (:func:`class_trie`, :func:`walk`). Going down a column extends every (target prefix,
    class prefix) pair still consistent to the pairs of their children that agree on the
    column: only consistent pairs are formed, and targets that agree on the columns walked so
    far are one prefix (on Adult, 29,000 pairs where tuples would give 358,000).
    """
    n_tuples = len(next(iter(tuple_codes.values())))
    if n_tuples == 0 or table.n_classes == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if trie is None:
        trie = target_trie(tuple_codes, {c: cover.domain_size for c, cover in covers.items()},
                           sorted(covers, key=lambda c: len(covers[c].labels)))
    return walk(class_trie([table], [covers], trie.order), trie)[0]


@dataclass(frozen=True)
class _Children:
    """One column of a :class:`ClassTrie`: which child prefix each (parent prefix, covered
    code) key below ``n_keys`` leads to, in the form :func:`_join_children` looks it up:
    ``child_of_key`` when every key has at most one child (a strict partition), else the
    children sorted by key with each key's ``first`` and ``count`` among them, or beyond
    :data:`DENSE_KEYS` keys the sorted ``keys`` themselves (binary search)."""

    n_keys: int
    size: int
    child_of_key: np.ndarray | None = None
    child: np.ndarray | None = None
    first: np.ndarray | None = None
    count: np.ndarray | None = None
    keys: np.ndarray | None = None


@dataclass(frozen=True)
class ClassTrie:
    """The classes of some tables as one trie of cell prefixes, one level per column of
    ``order`` below a first level that is the table; ``class_of_leaf``: the class (numbered
    across the tables, table j's from ``class_start[j]``) each last-level prefix is. It depends
    on the tables only: made before the targets are known."""

    order: tuple[str, ...]
    levels: tuple[_Children, ...]
    class_of_leaf: np.ndarray
    class_start: np.ndarray


def class_trie(tables: Sequence[ClassTable], covers: Sequence[Mapping[str, CellCovers]], order: Sequence[str]
               ) -> ClassTrie:
    """The :class:`ClassTrie` of ``tables`` (``covers[j]``: what ``tables[j]``'s cells cover,
    over the same domains), walked in ``order``."""
    counts = np.array([t.n_classes for t in tables], dtype=np.int64)
    class_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    class_prefix = np.repeat(np.arange(len(tables), dtype=np.int64), counts)  # level 0: the table
    n_prefixes = len(tables)
    levels = []
    for c in order:
        cell_of_class, cell_size, cell_first, indices, width, size = _joint_cells(tables, covers, c)
        # one column down: (parent prefix, covered code) -> child prefix, by key
        edges, class_prefix = unique_inverse(class_prefix * width + cell_of_class, n_prefixes * width)
        parent, cell = np.divmod(edges, width)
        fan = cell_size[cell]
        child = np.repeat(np.arange(len(edges), dtype=np.int64), fan)
        key = parent[child] * size + indices[segments(cell_first[cell], fan)]
        levels.append(_children(key, child, n_prefixes * size, size))
        n_prefixes = len(edges)
    class_of_leaf = np.empty(n_prefixes, dtype=np.int64)
    class_of_leaf[class_prefix] = np.arange(len(class_prefix), dtype=np.int64)
    return ClassTrie(tuple(order), tuple(levels), class_of_leaf, class_start)


def walk(classes: ClassTrie, trie: TargetTrie) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`locate_exact` of every table of ``classes`` (a trie walked in the order of the
    targets' ``trie``), in one walk: each column is one set of array passes for all tables (the
    same pairs as one walk per table, tests/fast_paths/test_attack_lookups.py)."""
    assert classes.order == trie.order
    n_tables = len(classes.class_start) - 1
    pair_target = np.zeros(n_tables, dtype=np.int64)  # the consistent (target prefix, class prefix) pairs
    pair_class = np.arange(n_tables, dtype=np.int64)
    for children, target_start, target_code in zip(classes.levels, trie.starts, trie.codes):
        # every pair extended to its target prefix's children, then joined on (class prefix, code)
        target_fan = np.diff(target_start)[pair_target]
        pair_target = segments(target_start[pair_target], target_fan)
        wanted = np.repeat(pair_class, target_fan) * children.size + target_code[pair_target]
        pair_target, pair_class = _join(pair_target, wanted, children)
    # every column walked: the prefixes are the classes and the distinct target tuples
    n_tuples = len(trie.tuple_of_leaf)
    tuples, found = trie.tuple_of_leaf[pair_target], classes.class_of_leaf[pair_class]
    table_of = np.searchsorted(classes.class_start, found, side="right") - 1 if n_tables > 1 else None
    out = []
    for j in range(n_tables):
        here = np.flatnonzero(table_of == j) if table_of is not None else slice(None)
        tuples_j, classes_j = tuples[here], found[here] - classes.class_start[j]
        by_pair = _pair_order(tuples_j, classes_j, n_tuples, int(classes.class_start[j + 1] - classes.class_start[j]))
        out.append((tuples_j[by_pair], classes_j[by_pair]))
    return out


def _joint_cells(tables: Sequence[ClassTable], covers: Sequence[Mapping[str, CellCovers]], c: str
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Column ``c`` of every table as one: each class's cell (numbered across the tables), each
    cell's count of covered codes and first among them, the covered codes, the number of
    cells and the domain's size."""
    if len(tables) == 1:
        cover = covers[0][c]
        return (tables[0].cell_of_class[c], cover.size, cover.indptr[:-1], cover.indices, len(cover.labels),
                max(cover.domain_size, 1))
    column = [cover[c] for cover in covers]
    cell_start = np.cumsum([0] + [len(cover.labels) for cover in column])
    code_start = np.cumsum([0] + [len(cover.indices) for cover in column])
    return (np.concatenate([t.cell_of_class[c] + start for t, start in zip(tables, cell_start)]),
            np.concatenate([cover.size for cover in column]),
            np.concatenate([cover.indptr[:-1] + start for cover, start in zip(column, code_start)]),
            np.concatenate([cover.indices for cover in column]), int(cell_start[-1]),
            max(max(cover.domain_size for cover in column), 1))


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

    The keys' side is made first (:func:`_children`, before the targets are known), then
    looked up (:func:`_join`). Up to :data:`DENSE_KEYS` keys, a direct table of the keys: by
    partition when every key has at most one child (disjoint cells), else by runs; beyond, the
    reference twin by binary search. All three give the same pairs."""
    return _join(pair_target, wanted, _children(key, child, n_keys, 1))


def _children(key: np.ndarray, child: np.ndarray, n_keys: int, size: int) -> _Children:
    """The look-up table of the keys' side of :func:`_join_children` (``size``: the codes' span, kept with it)."""
    if n_keys > DENSE_KEYS:
        return _children_by_search(key, child, n_keys, size)
    count_of_key = np.bincount(key, minlength=n_keys)
    if count_of_key.max(initial=0) <= 1:
        return _children_by_partition(key, child, n_keys, size)
    return _children_by_runs(key, child, count_of_key, size)


def _children_by_partition(key: np.ndarray, child: np.ndarray, n_keys: int, size: int) -> _Children:
    """The keys are distinct (a strict partition): one child per key, a direct table, no sort."""
    child_of_key = np.full(n_keys, -1, dtype=np.int64)
    child_of_key[key] = child
    return _Children(n_keys, size, child_of_key=child_of_key)


def _children_by_runs(key: np.ndarray, child: np.ndarray, count_of_key: np.ndarray, size: int) -> _Children:
    """A direct table of where each key's run starts among the children sorted by key
    (``count_of_key``: each key's count, ``np.bincount(key, minlength=n_keys)``)."""
    return _Children(len(count_of_key), size, child=child[stable_argsort(key, len(count_of_key))],
                     first=np.cumsum(count_of_key) - count_of_key, count=count_of_key)


def _children_by_search(key: np.ndarray, child: np.ndarray, n_keys: int, size: int) -> _Children:
    """The keys sorted, for binary search: memory bounded by the keys, whatever ``n_keys``."""
    by_key = stable_argsort(key, n_keys)
    return _Children(n_keys, size, child=child[by_key], keys=key[by_key])


def _join(pair_target: np.ndarray, wanted: np.ndarray, children: _Children) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` with the keys' side made (:func:`_children`)."""
    if children.child_of_key is not None:
        found = children.child_of_key[wanted]
        kept = np.flatnonzero(found >= 0)  # (indices: cheaper than a boolean mask for two takes)
        return pair_target[kept], found[kept]
    assert children.child is not None
    if children.first is not None and children.count is not None:
        return _expand(pair_target, children.child, children.first[wanted], children.count[wanted])
    assert children.keys is not None
    start = np.searchsorted(children.keys, wanted, side="left")
    count = np.searchsorted(children.keys, wanted, side="right") - start
    return _expand(pair_target, children.child, start, count)


def _join_by_partition(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                       n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` when the ``key`` values are distinct (a strict partition)."""
    return _join(pair_target, wanted, _children_by_partition(key, child, n_keys, 1))


def _join_by_runs(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                  count_of_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` by a direct table of each key's run among the sorted keys."""
    return _join(pair_target, wanted, _children_by_runs(key, child, count_of_key, 1))


def _join_by_search(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                    n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` by binary search of each wanted key among the sorted keys."""
    return _join(pair_target, wanted, _children_by_search(key, child, n_keys, 1))


def _expand(pair_target: np.ndarray, child: np.ndarray, start: np.ndarray, count: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Each pair repeated once per child in ``child[start : start + count]``."""
    if count.max(initial=0) <= 1:  # at most one child each: a filter
        kept = np.flatnonzero(count)
        return pair_target[kept], child[start[kept]]
    return np.repeat(pair_target, count), child[segments(start, count)]
