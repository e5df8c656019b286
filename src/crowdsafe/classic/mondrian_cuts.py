"""Mondrian's cuts of one recursion level (:mod:`.mondrian`, :mod:`.mondrian_partition`).

The pieces of a level are sorted by partition, so each partition is a segment of them; the
helpers here find segments, expand them and group pieces by (segment, child). :class:`_LevelGrid`
counts every segment's rows at each rank of each attribute in one flat array, from which the
strict median cuts and the hierarchy cuts of all partitions follow at once (used when there is
no ℓ / t constraint). Part of the classic, uncertified Mondrian: **no formal guarantee**.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from crowdsafe.classic.mondrian_partition import _Partitioner

@dataclass(frozen=True)
class Partitioning:
    """Mondrian's result on cells: piece i holds ``count[i]`` rows of cell ``cell[i]`` and
    lies in partition ``part[i]`` (partitions numbered 0..n_parts-1). A cell is cut into
    several pieces only by relaxed cuts."""

    cell: np.ndarray
    count: np.ndarray
    part: np.ndarray
    n_parts: int
    ranks: np.ndarray | None = None  # (cell x attribute) ranks, when the partitioner has them


def _segments(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and length of each run of equal values in sorted ``keys``."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    change = np.empty(len(keys), dtype=bool)
    change[0] = True
    np.not_equal(keys[1:], keys[:-1], out=change[1:])
    starts = change.nonzero()[0]
    lengths = np.empty_like(starts)
    lengths[:-1] = starts[1:] - starts[:-1]
    lengths[-1] = len(keys) - starts[-1]
    return starts, lengths


def _smallest_unsigned(n: int) -> type:
    """The smallest unsigned integer type holding 0..n-1 (narrow arrays gather and reduce faster)."""
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if n <= np.iinfo(t).max + 1)


def _expand(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions covered by the segments (in order) and the segment index of each."""
    total = int(lengths.sum())
    offsets = (starts - (lengths.cumsum() - lengths)).repeat(lengths)
    return offsets + np.arange(total), np.arange(len(starts)).repeat(lengths)


GROUP_GRID = (4, 1 << 16)  # (segment x node) grid cells per piece, grid cells always allowed


def _groups(local: np.ndarray, child: np.ndarray, count: np.ndarray, n_segs: int, n_nodes: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Group pieces by (segment, child node), numbering groups segment by segment.

    Returns each piece's group, the rows per group, each segment's first group and its number
    of groups. Fast path :func:`_groups_by_grid` (a dense segments x nodes grid of counts) while
    the grid has at most ``GROUP_GRID[0]`` cells per piece or ``GROUP_GRID[1]`` cells in all,
    else its reference twin :func:`_groups_by_sort`: the same groups.
    """
    key = local * n_nodes + child
    per_piece, floor = GROUP_GRID
    if n_segs * n_nodes <= max(per_piece * len(key), floor):
        group, sizes, per_seg = _groups_by_grid(key, count, n_segs, n_nodes)
    else:
        group, sizes, per_seg = _groups_by_sort(key, count, n_segs, n_nodes)
    first = per_seg.cumsum() - per_seg
    return group, sizes, first, per_seg


def _groups_by_grid(key: np.ndarray, count: np.ndarray, n_segs: int, n_nodes: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each piece's group, the rows per group and the groups per segment, from a grid of the
    (segment x node) ``key`` counts (every piece counts at least one row)."""
    grid = np.bincount(key, weights=count, minlength=n_segs * n_nodes)
    present = grid > 0
    group_of_key = present.cumsum() - 1
    return group_of_key[key], grid[present], present.reshape(n_segs, n_nodes).sum(axis=1)


def _groups_by_sort(key: np.ndarray, count: np.ndarray, n_segs: int, n_nodes: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_groups_by_grid` by sorting the keys: memory bounded by the pieces."""
    keys, group = np.unique(key, return_inverse=True)
    group = group.ravel()
    sizes = np.bincount(group, weights=count, minlength=len(keys))
    return group, sizes, np.bincount(keys // n_nodes, minlength=n_segs)


@dataclass
class _Level:
    """One recursion level: the pieces to cut (sorted by partition), each partition's segment
    of them, and what the cuts need (filled in by :meth:`_Partitioner._level`)."""

    pieces: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    sizes: np.ndarray
    rank: np.ndarray  # (attribute x piece)
    # set by _Partitioner._level once the level exists (not constructor arguments)
    widths: np.ndarray = field(init=False)
    levels: np.ndarray = field(init=False)
    low: np.ndarray = field(init=False)  # lowest rank per (partition, attribute)
    high: np.ndarray = field(init=False)
    preference: np.ndarray = field(init=False)
    undecided: np.ndarray = field(init=False)


class _Cuts(NamedTuple):
    """Cuts tried on segments ``segs`` of a level (``allowed`` or not, per segment): each of
    their ``pieces`` (of segment ``segs[local]``) goes to child ``side`` of its segment's
    ``n_children``."""

    segs: np.ndarray
    allowed: np.ndarray
    pieces: np.ndarray
    local: np.ndarray
    side: np.ndarray
    n_children: int | np.ndarray


class _LevelGrid:
    """How many rows every segment of a level holds at each rank of each attribute, and what
    follows without ℓ / t constraints: whether each (segment x attribute) cut is allowed
    (``allowed``), and the cuts themselves (:meth:`cuts`).

    The counts are one flat array of blocks, one block per (attribute, segment) spanning the
    segment's ranks from its lowest to its highest (so no larger than the level's values), and
    their running sums ``cum``: any run of ranks is counted by two look-ups. A median is found
    by a binary search of the running sums; a hierarchy cut's children are the runs of ranks
    of the common node's children, listed per block."""

    def __init__(self, partitioner: _Partitioner, level: _Level) -> None:
        self.partitioner, self.level = partitioner, level
        k, d, n_segs = partitioner.k, len(partitioner.attributes), len(level.starts)
        low, high, sizes = level.low, level.high, level.sizes  # (segment x attribute)
        spans = (high - low + 1).T  # blocks attribute by attribute, each segment by segment
        block = (spans.cumsum() - spans.reshape(-1)).reshape(d, n_segs)  # where each block starts
        # attributes with one value in every segment allow no cut: their blocks stay empty
        varied = np.asarray(level.widths.any(axis=0))
        rows = slice(None) if varied.all() else np.flatnonzero(varied)
        key = np.repeat((block - low.T)[rows], level.lengths, axis=1)
        key += level.rank[rows]
        counts = partitioner.piece_count[level.pieces].astype(float)
        grid = np.bincount(key.reshape(-1), weights=np.broadcast_to(counts, key.shape).reshape(-1),
                           minlength=int(spans.sum()))
        cum = np.zeros(len(grid) + 1)
        np.cumsum(grid, out=cum[1:])
        self.block, self.cum = block.T, cum  # (segment x attribute)
        self.allowed = level.widths > 0
        # hierarchy cuts: every child of the common node holds >= k rows
        hierarchical = self.allowed & ~partitioner.is_ordered & (level.levels > 0)
        self.hierarchy_blocks = np.flatnonzero(hierarchical)  # (segment x attribute), flat
        if len(self.hierarchy_blocks):
            at = self.hierarchy_blocks
            children = level.levels.reshape(-1)[at] - 1  # the level of the common node's children
            runs = self.runs = partitioner.run_offsets[at % d] + children * partitioner.rank_span
            first_run = partitioner.run_index[runs + low.reshape(-1)[at]]
            n_runs = partitioner.run_index[runs + high.reshape(-1)[at]] - first_run + 1
            run_at, owner = _expand(first_run, n_runs)
            block_low = low.reshape(-1)[at][owner]
            start = self.block.reshape(-1)[at][owner] - block_low
            run_low = np.maximum(partitioner.run_first[run_at], block_low)
            run_high = np.minimum(partitioner.run_last[run_at], high.reshape(-1)[at][owner])
            rows = cum[start + run_high + 1] - cum[start + run_low]
            present = rows > 0
            first_child = n_runs.cumsum() - n_runs
            smallest = np.minimum.reduceat(np.where(present, rows, np.inf), first_child)
            self.allowed.reshape(-1)[at] = smallest >= k
            # the number of each run among its block's non-empty children, and their number
            before = present.cumsum() - present
            self.child_number = before - before[first_child][owner]
            self.first_run, self.first_child = first_run, first_child
            self.n_children = np.add.reduceat(present, first_child)
        # strict median cuts
        self.split = np.zeros((n_segs, d), dtype=np.int64)
        if partitioner.mode == "strict":  # (relaxed: ⌊N/2⌋ >= k holds for every cuttable partition)
            for j, _ in partitioner.ordered_attributes:
                if not varied[j]:
                    continue
                start = self.block[:, j]
                before = cum[start]
                at_median = np.searchsorted(cum, before + (sizes + 1) // 2)  # the ceil(N/2)-th smallest
                median = low[:, j] + at_median - 1 - start
                left = cum[at_median] - before
                at_top = median == high[:, j]  # the median is the largest value: cut below it
                last = start + high[:, j] - low[:, j]
                left = np.where(at_top, sizes - (cum[last + 1] - cum[last]), left)
                self.allowed[:, j] &= (left >= k) & (sizes - left >= k)
                self.split[:, j] = np.where(at_top, high[:, j] - 1, median)

    def cuts(self, segs: np.ndarray, attribute: np.ndarray) -> _Cuts:
        """The allowed strict median or hierarchy cut of each segment in ``segs`` on ``attribute``."""
        partitioner, level = self.partitioner, self.level
        d, n_pieces = len(partitioner.attributes), len(level.pieces)
        if len(segs) == len(level.starts):  # every partition: all the level's pieces
            positions, local = np.arange(n_pieces), np.arange(len(segs)).repeat(level.lengths)
        else:
            positions, local = _expand(level.starts[segs], level.lengths[segs])
        rank = level.rank.reshape(-1)[attribute[local] * n_pieces + positions]
        at = segs * d + attribute
        side = (rank > self.split.reshape(-1)[at][local]).astype(np.int64)
        n_children = np.full(len(segs), 2, dtype=np.int64)
        hierarchical = ~partitioner.is_ordered[attribute]
        if hierarchical.any():
            pieces = np.flatnonzero(hierarchical[local])
            block = np.searchsorted(self.hierarchy_blocks, at[hierarchical])  # each cut's hierarchy block
            n_children[hierarchical] = self.n_children[block]
            block = np.repeat(block, level.lengths[segs[hierarchical]])
            run = partitioner.run_index[self.runs[block] + rank[pieces]]
            side[pieces] = self.child_number[self.first_child[block] + run - self.first_run[block]]
        return _Cuts(segs, np.ones(len(segs), dtype=bool), level.pieces[positions], local, side, n_children)

