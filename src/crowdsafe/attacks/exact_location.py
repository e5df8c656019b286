"""Exact location: every (target tuple, class) pair whose class cells all cover the tuple.

Targets and classes are both walked as tries of code prefixes, one column at a time
(:func:`locate_exact`; the classes' trie, :func:`class_trie`, is made before the targets are
known and may hold several releases, walked at once by :func:`walk`). A step down a column
either looks every target child up among the class children by key (:func:`_join_children`: a
fast path on a direct table of keys, a reference twin by binary search), or, when every cell of
the column covers a run of codes (a range, a hierarchy node), counts each class child's run
among the target children (:func:`_by_ranges`, fast path; the key step is its reference twin).
All give the same pairs (tests/fast_paths/test_attack_lookups.py). Attack code: it reads
releases and the attacker's targets, never the private table, and carries no guarantee of its
own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from crowdsafe.data.arrays import stable_argsort, unique_inverse
from crowdsafe.data.cell_reader import CellCovers, segments

if TYPE_CHECKING:
    from crowdsafe.attacks.locate import ClassTable

DENSE_KEYS = 1 << 24  # (prefix, code) keys looked up in a direct table up to this many, else by binary search
RANGE_KEYS = 1 << 22  # a target level's (prefix, code) keys counted in a table up to this many, for _by_ranges
RANGES = True  # a column whose cells all cover runs of codes may be walked by ranges (_by_ranges), else by keys


@dataclass(frozen=True)
class TargetTrie:
    """The distinct target tuples as a trie of code prefixes, one level per column of ``order``:
    at level d, the children of prefix p are ``starts[d][p]:starts[d][p + 1]`` and
    ``codes[d]`` is each child's code; ``tuple_of_leaf``: the tuple each last-level prefix is.
    It depends on the targets only, so one trie serves every release. ``sizes[d]``: the radix of
    level d's keys ``prefix * size + code`` (sorted, in the order of the children); ``below[d]``:
    for every key x up to ``prefixes * size``, how many of level d's keys are below x (the runs
    :func:`_by_ranges` counts), or None past :data:`RANGE_KEYS` keys."""

    order: tuple[str, ...]
    starts: tuple[np.ndarray, ...]
    codes: tuple[np.ndarray, ...]
    tuple_of_leaf: np.ndarray
    sizes: tuple[int, ...]
    below: tuple[np.ndarray | None, ...]


def target_trie(tuple_codes: Mapping[str, np.ndarray], sizes: Mapping[str, int], order: Sequence[str]) -> TargetTrie:
    """The :class:`TargetTrie` of distinct tuples ``tuple_codes`` (codes of column c below
    ``sizes[c]``), walked in ``order``."""
    n_tuples = len(next(iter(tuple_codes.values())))
    prefix = np.zeros(n_tuples, dtype=np.int64)  # each tuple's prefix at the current depth
    n_prefixes = 1
    starts, codes, radices, below = [], [], [], []
    for c in order:
        size = max(int(sizes[c]), 1)
        n_keys = n_prefixes * size
        edges, prefix = unique_inverse(prefix * size + tuple_codes[c], n_keys)
        parent, code = np.divmod(edges, size)
        starts.append(np.searchsorted(parent, np.arange(n_prefixes + 1)))
        codes.append(code)
        radices.append(size)
        below.append(_keys_below(edges, n_keys) if n_keys <= RANGE_KEYS else None)
        n_prefixes = len(edges)
    tuple_of_leaf = np.empty(n_prefixes, dtype=np.int64)
    tuple_of_leaf[prefix] = np.arange(n_tuples, dtype=np.int64)
    return TargetTrie(tuple(order), tuple(starts), tuple(codes), tuple_of_leaf, tuple(radices), tuple(below))


def _keys_below(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """For every x in ``[0, n_keys]``, how many of the distinct ``keys`` (below ``n_keys``) are
    below x: the keys in ``[low, high]`` are then the ``below[low]``-th to the
    ``below[high + 1] - 1``-th, two look-ups."""
    present = np.zeros(n_keys + 1, dtype=bool)
    present[keys + 1] = True
    return np.cumsum(present)  # (int64, as every index of the walk)


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
    """One column of a :class:`ClassTrie` in key form (:attr:`_ClassLevel.by_key`): which child
    prefix each (parent prefix, covered code) key below ``n_keys`` leads to, as
    :func:`_join_children` looks it up: ``child_of_key`` when every key has at most one child
    (a strict partition), else the children sorted by key with each key's ``first`` and
    ``count`` among them, or beyond :data:`DENSE_KEYS` keys the sorted ``keys`` themselves
    (binary search)."""

    n_keys: int
    child_of_key: np.ndarray | None = None
    child: np.ndarray | None = None
    first: np.ndarray | None = None
    count: np.ndarray | None = None
    keys: np.ndarray | None = None


@dataclass(frozen=True)
class _ClassLevel:
    """One column of a :class:`ClassTrie`: the class prefixes one column down (the children),
    sorted by parent prefix then cell. Parent p's children are ``first[p]:first[p + 1]``; child
    i's cell is ``cell[i]``, which covers the codes ``indices[cell_first[j]:][:cell_size[j]]``
    (j = ``cell[i]``) of a domain of ``size``. ``low``/``high``: the run of codes each child's
    cell covers, when every cell of the column covers a run (an empty cell: 0, -1), else None.
    :attr:`by_key`: the look-up of the key step, made when a walk first needs it."""

    first: np.ndarray
    cell: np.ndarray
    cell_size: np.ndarray
    cell_first: np.ndarray
    indices: np.ndarray
    size: int
    low: np.ndarray | None
    high: np.ndarray | None

    @cached_property
    def by_key(self) -> _Children:
        """(parent prefix, covered code) -> child, as :func:`_join` looks it up."""
        n_parents = len(self.first) - 1
        parent = np.repeat(np.arange(n_parents, dtype=np.int64), np.diff(self.first))
        fan = self.cell_size[self.cell]
        child = np.repeat(np.arange(len(self.cell), dtype=np.int64), fan)
        key = parent[child] * self.size + self.indices[segments(self.cell_first[self.cell], fan)]
        return _children(key, child, n_parents * self.size)


@dataclass(frozen=True)
class ClassTrie:
    """The classes of some tables as one trie of cell prefixes, one level per column of
    ``order`` below a first level that is the table; ``class_of_leaf``: the class (numbered
    across the tables, table j's from ``class_start[j]``) each last-level prefix is. It depends
    on the tables only: made before the targets are known."""

    order: tuple[str, ...]
    levels: tuple[_ClassLevel, ...]
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
        # one column down: each class prefix's child, the children of each parent, their cells' runs
        edges, class_prefix = unique_inverse(class_prefix * width + cell_of_class, n_prefixes * width)
        parent, cell = np.divmod(edges, width)
        low, high = _runs(cell_size, cell_first, indices)
        levels.append(_ClassLevel(np.searchsorted(parent, np.arange(n_prefixes + 1)), cell, cell_size, cell_first,
                                  indices, size, low[cell] if low is not None else None,
                                  high[cell] if high is not None else None))
        n_prefixes = len(edges)
    class_of_leaf = np.empty(n_prefixes, dtype=np.int64)
    class_of_leaf[class_prefix] = np.arange(len(class_prefix), dtype=np.int64)
    return ClassTrie(tuple(order), tuple(levels), class_of_leaf, class_start)


def _runs(cell_size: np.ndarray, cell_first: np.ndarray, indices: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """The first and last code each cell covers when every cell covers a run of consecutive
    codes (an empty cell: 0, -1), else (None, None). A cell's codes are sorted and distinct, so
    it covers a run when its last code minus its first is its count minus one."""
    filled = cell_size > 0
    low = np.zeros(len(cell_size), dtype=np.int64)
    low[filled] = indices[cell_first[filled]]
    high = low + cell_size - 1
    if not (indices[(cell_first + cell_size - 1)[filled]] == high[filled]).all():
        return None, None
    return low, high


def walk(classes: ClassTrie, trie: TargetTrie) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`locate_exact` of every table of ``classes`` (a trie walked in the order of the
    targets' ``trie``), in one walk: each column is one set of array passes for all tables (the
    same pairs as one walk per table, tests/fast_paths/test_attack_lookups.py).

    Each column extends every (target prefix, class prefix) pair to the pairs of their children
    that agree on it: by ranges (:func:`_by_ranges`) when the column's cells cover runs of codes
    and that forms fewer items (:func:`_ranges_cheaper`), else by key (every target child
    looked up among the class children). Both give the same pairs."""
    assert classes.order == trie.order
    n_tables = len(classes.class_start) - 1
    pair_target = np.zeros(n_tables, dtype=np.int64)  # the consistent (target prefix, class prefix) pairs
    pair_class = np.arange(n_tables, dtype=np.int64)
    for level, target_start, target_code, counted, radix in zip(classes.levels, trie.starts, trie.codes, trie.below,
                                                                trie.sizes):
        target_fan = np.diff(target_start)[pair_target]
        if RANGES and level.low is not None and counted is not None and radix == level.size:
            class_fan = level.first[pair_class + 1] - level.first[pair_class]
            if _ranges_cheaper(class_fan, target_fan, level):
                pair_target, pair_class = _by_ranges(pair_target, pair_class, class_fan, level, counted)
                continue
        # every pair extended to its target prefix's children, then joined on (class prefix, code)
        pair_target = segments(target_start[pair_target], target_fan)
        wanted = np.repeat(pair_class, target_fan) * level.size + target_code[pair_target]
        pair_target, pair_class = _join(pair_target, wanted, level.by_key)
    # every column walked: the prefixes are the classes and the distinct target tuples
    n_tuples = len(trie.tuple_of_leaf)
    tuples, found = trie.tuple_of_leaf[pair_target], classes.class_of_leaf[pair_class]
    table_of = (np.repeat(np.arange(n_tables), np.diff(classes.class_start))[found]  # (each class's table)
                if n_tables > 1 else None)
    out = []
    for j in range(n_tables):
        here = np.flatnonzero(table_of == j) if table_of is not None else slice(None)
        tuples_j, classes_j = tuples[here], found[here] - classes.class_start[j]
        by_pair = _pair_order(tuples_j, classes_j, n_tuples, int(classes.class_start[j + 1] - classes.class_start[j]))
        out.append((tuples_j[by_pair], classes_j[by_pair]))
    return out


def _ranges_cheaper(class_fan: np.ndarray, target_fan: np.ndarray, level: _ClassLevel) -> bool:
    """Whether a column is walked by ranges: the by-ranges step forms one item per (pair, class
    child), the key step one per (pair, target child), plus, the first time, one per key of its
    table (each child's covered codes, :attr:`_ClassLevel.by_key`); the fewer wins (ties: ranges)."""
    table = 0 if "by_key" in level.__dict__ else int(level.cell_size[level.cell].sum())  # (made once)
    return bool(class_fan.sum() <= target_fan.sum() + table)


def _by_ranges(pair_target: np.ndarray, pair_class: np.ndarray, class_fan: np.ndarray, level: _ClassLevel,
               below: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One column of :func:`walk` when every class child's cell covers a run of codes
    ``[low, high]``: each pair extended to its class prefix's children (``class_fan`` each),
    then each (target prefix p, class child) to the target children of p whose codes lie in the
    child's run: the keys ``p * size + low`` to ``p * size + high`` of the targets' level, sorted,
    found by counting (``below``, :func:`_keys_below`), never looked up one by one. The same
    pairs as the key step: a code lies in the run exactly when the cell covers it."""
    assert level.low is not None and level.high is not None
    child = segments(level.first[pair_class], class_fan)
    base = np.repeat(pair_target * level.size, class_fan)
    start = below[base + level.low[child]]
    count = below[base + level.high[child] + 1] - start
    if count.max(initial=0) <= 1:  # at most one target child each: a filter
        kept = np.flatnonzero(count)
        return start[kept], child[kept]
    return segments(start, count), np.repeat(child, count)


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
    return _join(pair_target, wanted, _children(key, child, n_keys))


def _children(key: np.ndarray, child: np.ndarray, n_keys: int) -> _Children:
    """The look-up table of the keys' side of :func:`_join_children`."""
    if n_keys > DENSE_KEYS:
        return _children_by_search(key, child, n_keys)
    count_of_key = np.bincount(key, minlength=n_keys)
    if count_of_key.max(initial=0) <= 1:
        return _children_by_partition(key, child, n_keys)
    return _children_by_runs(key, child, count_of_key)


def _children_by_partition(key: np.ndarray, child: np.ndarray, n_keys: int) -> _Children:
    """The keys are distinct (a strict partition): one child per key, a direct table, no sort."""
    child_of_key = np.full(n_keys, -1, dtype=np.int64)
    child_of_key[key] = child
    return _Children(n_keys, child_of_key=child_of_key)


def _children_by_runs(key: np.ndarray, child: np.ndarray, count_of_key: np.ndarray) -> _Children:
    """A direct table of where each key's run starts among the children sorted by key
    (``count_of_key``: each key's count, ``np.bincount(key, minlength=n_keys)``)."""
    return _Children(len(count_of_key), child=child[stable_argsort(key, len(count_of_key))],
                     first=np.cumsum(count_of_key) - count_of_key, count=count_of_key)


def _children_by_search(key: np.ndarray, child: np.ndarray, n_keys: int) -> _Children:
    """The keys sorted, for binary search: memory bounded by the keys, whatever ``n_keys``."""
    by_key = stable_argsort(key, n_keys)
    return _Children(n_keys, child=child[by_key], keys=key[by_key])


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
    return _join(pair_target, wanted, _children_by_partition(key, child, n_keys))


def _join_by_runs(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                  count_of_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` by a direct table of each key's run among the sorted keys."""
    return _join(pair_target, wanted, _children_by_runs(key, child, count_of_key))


def _join_by_search(pair_target: np.ndarray, wanted: np.ndarray, key: np.ndarray, child: np.ndarray,
                    n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_join_children` by binary search of each wanted key among the sorted keys."""
    return _join(pair_target, wanted, _children_by_search(key, child, n_keys))


def _expand(pair_target: np.ndarray, child: np.ndarray, start: np.ndarray, count: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Each pair repeated once per child in ``child[start : start + count]``."""
    if count.max(initial=0) <= 1:  # at most one child each: a filter
        kept = np.flatnonzero(count)
        return pair_target[kept], child[start[kept]]
    return np.repeat(pair_target, count), child[segments(start, count)]
