"""Mondrian's recursive partitioning (LeFevre, DeWitt and Ramakrishnan, ICDE 2006) on cells.

The cutting rules (widest normalized range first; strict or relaxed median cuts for ordered
attributes; the children of the lowest common node for hierarchical ones; ℓ / t checked at every
cut) are stated in :mod:`crowdsafe.classic.mondrian`. :func:`partition` runs them one recursion
level at a time for all partitions together (:class:`_Partitioner`), with the level's cuts from
:mod:`.mondrian_cuts`. Fitted to the data: **no formal guarantee**.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Literal

import numpy as np

from crowdsafe.anonymize.cells import EncodedCells
from crowdsafe.anonymize.constraints import NO_CONSTRAINTS, SensitiveConstraints, classes_satisfying
from crowdsafe.classic.attributes import HierarchicalAttribute, LocalAttribute, OrderedAttribute
from crowdsafe.classic.mondrian_cuts import (
    Partitioning,
    _Cuts,
    _expand,
    _groups,
    _Level,
    _LevelGrid,
    _smallest_unsigned,
)
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import quantity

Mode = Literal["strict", "relaxed"]


class _Partitioner:
    """The state of one Mondrian run: pieces of cells and the partitions they lie in.

    Per-attribute arrays are stacked (attribute x cell), so one pass handles every partition
    of a recursion level, whichever attribute each is cut on.
    """

    def __init__(self, cells: EncodedCells, attributes: Sequence[LocalAttribute], k: int, mode: Mode,
                 constraints: SensitiveConstraints) -> None:
        self.attributes = list(attributes)
        self.k = k
        self.mode = mode
        self.constraints = constraints
        self.sensitive = cells.sensitive
        m = cells.n_cells
        self.m = m
        d = len(attributes)
        self.n_ranks = max(len(attr.rank_of_code) for attr in attributes)
        # rank of each cell's value in each attribute's order (depth-first for hierarchies),
        # cell-major and in the smallest unsigned type that holds them: gathering the rows of a
        # level's cells, then transposing them, is several times faster than with 64-bit values
        # or attribute-major
        rank_type = _smallest_unsigned(self.n_ranks)
        self.ranks_by_cell: np.ndarray = np.empty((m, d), dtype=rank_type)
        for j, attr in enumerate(attributes):
            self.ranks_by_cell[:, j] = attr.rank_of_code.astype(rank_type)[cells.codes[:, j]]
        self.is_ordered = np.asarray([isinstance(a, OrderedAttribute) for a in attributes])
        hierarchical = [a for a in attributes if isinstance(a, HierarchicalAttribute)]
        height = max((a.height for a in hierarchical), default=0)
        leaves = max((a.total_leaves for a in hierarchical), default=1)
        # for the widths of all attributes at once: node of each leaf *rank* per level, padded
        # above an attribute's top with one node (so the common level never exceeds its height)
        self.maps_by_rank = np.zeros((d, height + 1, max(leaves, self.n_ranks)), dtype=np.int64)
        node_offsets = np.zeros((d, height + 1), dtype=np.int64)
        node_widths = [np.zeros(1)]
        base = 1
        for j, attr in enumerate(attributes):
            if isinstance(attr, HierarchicalAttribute):
                self.maps_by_rank[j, : attr.height + 1, : attr.total_leaves] = attr.maps_by_rank
                node_offsets[j, : attr.height + 1] = base + attr.node_offsets
                node_widths.append(attr.node_widths)
                base += len(attr.node_widths)
        self.n_nodes = int(self.maps_by_rank.max()) + 1
        self.node_offsets = node_offsets  # (attribute, level) -> start of the level's nodes in node_widths
        # per level, the nodes of every attribute's leaf ranks (index attribute * leaves + rank)
        self.maps_by_level = [np.ascontiguousarray(self.maps_by_rank[:, h]).reshape(-1) for h in range(height + 1)]
        self.attribute_starts = np.arange(d)[:, None] * self.maps_by_rank.shape[2]
        self.level_starts = np.arange(d)[:, None] * (height + 1)
        self.node_widths = np.concatenate(node_widths)
        self.hierarchy_height = height
        self.ordered_attributes = [(j, a) for j, a in enumerate(attributes) if isinstance(a, OrderedAttribute)]
        # runs of ranks per (attribute, level): the nodes of a hierarchy level (depth-first
        # ranks make each a run), single ranks for ordered attributes; run_index numbers all
        # runs, run_first and run_last are each run's first and last rank
        self.rank_span = self.maps_by_rank.shape[2]
        run_begins = np.ones(self.maps_by_rank.shape, dtype=bool)
        run_begins[:, :, 1:] = self.maps_by_rank[:, :, 1:] != self.maps_by_rank[:, :, :-1]
        run_begins[self.is_ordered] = True
        self.run_index = run_begins.reshape(-1).cumsum() - 1
        begins = np.flatnonzero(run_begins.reshape(-1))
        self.run_first = begins % self.rank_span
        self.run_last = (np.r_[begins[1:], run_begins.size] - 1) % self.rank_span
        self.run_offsets = np.arange(d) * (height + 1) * self.rank_span  # where (attribute, level 0) runs start
        self.piece_cell = np.arange(m, dtype=np.int64)
        self.piece_count = cells.counts.astype(np.int64).copy()
        self.piece_part = np.zeros(m, dtype=np.int64)
        self.n_parts = 1
        self.attempts = 0  # attempts the last level needed
        self.varied = np.ones(d, dtype=bool)  # attributes with several values in a partition of the last level

    @cached_property
    def ranks(self) -> np.ndarray:
        """(attribute x cell) ranks (only the sorting cuts need them)."""
        return np.ascontiguousarray(self.ranks_by_cell.T).astype(np.int64)

    @cached_property
    def orders(self) -> np.ndarray:
        """Position of each cell in the order (rank, cell index), per attribute: unique keys
        for sorting (only the sorting cuts need them)."""
        d, m = self.ranks.shape
        ranks = self.ranks.astype(np.uint16) if self.n_ranks <= 1 << 16 else self.ranks  # radix sorts
        orders = np.empty((d, m), dtype=np.int64)
        for j in range(d):
            orders[j, np.argsort(ranks[j], kind="stable")] = np.arange(m)
        return orders

    def run(self) -> Partitioning:
        pieces = np.arange(self.m, dtype=np.int64)  # the pieces of partitions still to cut, by partition
        lengths = np.array([self.m])  # pieces per partition
        while len(pieces):
            pieces, lengths = self._level(pieces, lengths)
        # number the final partitions 0, 1, ... in the order of their ids
        final = np.zeros(self.n_parts, dtype=bool)
        final[self.piece_part] = True
        number = final.cumsum() - 1
        return Partitioning(self.piece_cell, self.piece_count, number[self.piece_part], int(number[-1]) + 1,
                            self.ranks_by_cell)

    # -- one recursion level ---------------------------------------------------------------

    def _level(self, pieces: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cut every partition holding ``pieces`` (sorted by partition, ``lengths`` pieces in
        each) once if possible; return the pieces of the new partitions, sorted by partition,
        and their numbers per partition.

        A partition tries its attributes from the widest down (attempt 0, 1, ...) and is cut
        on the first that allows it. Partitions are numbered attempt by attempt and, within an
        attempt, ordered cuts before hierarchy cuts, each in partition order.
        """
        starts = lengths.cumsum() - lengths
        sizes = np.add.reduceat(self.piece_count[pieces], starts)
        cuttable = sizes >= 2 * self.k  # smaller partitions cannot be cut in two parts >= k
        if not cuttable.all():  # leave them out now
            pieces = pieces[cuttable.repeat(lengths)]
            lengths, sizes = lengths[cuttable], sizes[cuttable]
            starts = lengths.cumsum() - lengths
        if len(pieces) == 0:
            return pieces, lengths
        rank = np.ascontiguousarray(self.ranks_by_cell.take(self.piece_cell[pieces], axis=0).T)
        level = _Level(pieces, starts, lengths, sizes, rank)
        level.widths, level.levels, level.low, level.high = self._widths(rank, level.starts)
        level.preference = (-level.widths).argsort(axis=1, kind="stable")
        first_new_part = self.n_parts
        if self._decides_at_once(level):
            moved = self._cut_first_allowed(level)
        else:
            moved = self._cut_by_attempts(level)
        if not moved:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        # partitions are numbered in the order they are made: one stable sort orders the pieces
        offset = np.concatenate([new_part for _, new_part in moved]) - first_new_part
        if len(offset) and self.n_parts - first_new_part <= 1 << 16:
            order = np.argsort(offset.astype(np.uint16), kind="stable")  # a radix sort
        else:
            order = np.argsort(offset, kind="stable")
        lengths = np.bincount(offset, minlength=self.n_parts - first_new_part)  # every new partition has pieces
        return np.concatenate([pieces for pieces, _ in moved])[order], lengths

    def _cut_by_attempts(self, level: _Level) -> list[tuple[np.ndarray, np.ndarray]]:
        """Attempt by attempt, try each undecided partition's next widest attribute."""
        level.undecided = np.ones(len(level.starts), dtype=bool)
        moved: list[tuple[np.ndarray, np.ndarray]] = []
        for attempt in range(len(self.attributes)):
            if not level.undecided.any():
                break
            moved.extend(self._attempt(level, attempt))
            self.attempts = attempt + 1
        return moved

    def _attempt(self, level: _Level, attempt: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Try every undecided partition's ``attempt``-th widest attribute: ordered cuts first,
        then hierarchy cuts."""
        segs = np.flatnonzero(level.undecided)
        if len(segs) == 0:
            return []
        d = len(self.attributes)
        chosen = level.preference[:, attempt][segs]
        roomy = level.widths.reshape(-1)[segs * d + chosen] > 0
        level.undecided[segs[~roomy]] = False  # no attribute left with room to cut
        segs, chosen = segs[roomy], chosen[roomy]
        ordered = self.is_ordered[chosen]
        tried = [self._cut(level, segs[subset], chosen[subset], is_ordered)
                 for subset, is_ordered in ((ordered, True), (~ordered, False)) if subset.any()]
        for cuts in tried:
            level.undecided[cuts.segs[cuts.allowed]] = False
        return self._number(tried)

    # Deciding all attributes at once counts every attribute's values, where attempts count
    # only the tried attribute's but cost a fixed number of array operations each. It pays
    # (measured on Adult and synthetic Adult) when the previous level needed several attempts
    # and this one holds many partitions of several pieces each, while the level's pieces are
    # few enough that the attempts' fixed costs outweigh the extra counting.
    AT_ONCE_FROM = 16  # partitions
    AT_ONCE_AFTER = 3  # attempts at the previous level
    AT_ONCE_PIECES = (4, 1 << 15)  # pieces per partition (at least), pieces (at most)

    def _decides_at_once(self, level: _Level) -> bool:
        """Whether :meth:`_cut_first_allowed` cuts this level: without ℓ / t constraints (they
        need the sensitive values of every candidate part), on levels where it is faster."""
        n_segs, n_pieces = len(level.starts), len(level.pieces)
        per_partition, most = self.AT_ONCE_PIECES
        return (not self.constraints.active and n_segs >= self.AT_ONCE_FROM
                and self.attempts >= self.AT_ONCE_AFTER and per_partition * n_segs <= n_pieces <= most)

    def _cut_first_allowed(self, level: _Level) -> list[tuple[np.ndarray, np.ndarray]]:
        """The attempts of :meth:`_cut_by_attempts` in one pass: which attributes allow a cut is
        decided for all (partition x attribute) pairs at once from one count grid, and every
        partition is cut on the widest of them: the same cuts, numbered in the same order.
        Strict median cuts and hierarchy cuts are read off the grid; relaxed median cuts are
        made by :meth:`_cut_ordered`."""
        grid = _LevelGrid(self, level)
        allowed = np.take_along_axis(grid.allowed, level.preference, axis=1)
        segs = np.flatnonzero(allowed.any(axis=1))
        if len(segs) == 0:
            return []
        attempt = allowed[segs].argmax(axis=1)
        attribute = level.preference[segs, attempt]
        self.attempts = int(attempt.max()) + 1
        ordered = self.is_ordered[attribute]
        by_grid = ~ordered if self.mode == "relaxed" else np.ones(len(segs), dtype=bool)
        tried, numbering = [], []
        if not by_grid.all():
            tried.append(self._cut(level, segs[~by_grid], attribute[~by_grid], True, attempt[~by_grid]))
            numbering.append(2 * attempt[~by_grid])
        if by_grid.any():
            tried.append(grid.cuts(segs[by_grid], attribute[by_grid]))
            numbering.append(2 * attempt[by_grid] + ~ordered[by_grid])
        assert all(cuts.allowed.all() for cuts in tried)
        return self._number(tried, np.concatenate(numbering))

    def _cut(self, level: _Level, segs: np.ndarray, attribute: np.ndarray, ordered: bool,
             attempt: np.ndarray | None = None) -> _Cuts:
        """Cut segments ``segs`` on ``attribute`` (all ordered, or all hierarchical)."""
        at = segs * len(self.attributes) + attribute
        positions, local = _expand(level.starts[segs], level.lengths[segs])
        args = (segs, attribute, level.pieces[positions], local, level.sizes[segs])
        if ordered:
            return self._cut_ordered(*args, level.low.reshape(-1)[at], level.high.reshape(-1)[at], attempt)
        return self._cut_hierarchy(*args, level.levels.reshape(-1)[at])

    def _number(self, tried: list[_Cuts], numbering: np.ndarray | None = None
                ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Give the pieces of the allowed segments their new partitions' ids, segment after
        segment as listed (or in the stable order of ``numbering``, one key per segment listed);
        return the moved pieces and their new partitions."""
        if not tried:
            return []
        made = np.concatenate([np.where(cuts.allowed, cuts.n_children, 0) for cuts in tried])
        if numbering is None:
            first_id = self.n_parts + made.cumsum() - made
        else:
            order = np.argsort(numbering, kind="stable")
            first_id = np.empty_like(made)
            first_id[order] = self.n_parts + made[order].cumsum() - made[order]
        self.n_parts += int(made.sum())
        moved = []
        listed = 0
        for cuts in tried:
            if cuts.allowed.all():
                pieces, new_part = cuts.pieces, first_id[listed + cuts.local] + cuts.side
            else:
                moving = cuts.allowed[cuts.local]
                pieces = cuts.pieces[moving]
                new_part = first_id[listed + cuts.local[moving]] + cuts.side[moving]
            self.piece_part[pieces] = new_part
            moved.append((pieces, new_part))
            listed += len(cuts.segs)
        return moved

    def _widths(self, rank: np.ndarray, starts: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Normalized width of every attribute in every segment, hierarchy LCA levels (0 for
        ordered attributes), lowest and highest ranks: all attributes at once, each
        (segment x attribute), from the (attribute x piece) ``rank``."""
        if self.varied.all():
            low = np.minimum.reduceat(rank, starts, axis=1).astype(np.int64)
            high = np.maximum.reduceat(rank, starts, axis=1).astype(np.int64)
        else:  # an attribute with one value in every partition keeps it in their parts
            low = rank[:, starts].astype(np.int64)
            high = low.copy()
            low[self.varied] = np.minimum.reduceat(rank[self.varied], starts, axis=1)
            high[self.varied] = np.maximum.reduceat(rank[self.varied], starts, axis=1)
        d, n_segs = low.shape
        _, height, leaves = self.maps_by_rank.shape
        at_low, at_high = self.attribute_starts + low, self.attribute_starts + high
        levels = np.full((d, n_segs), self.hierarchy_height, dtype=np.int64)
        for h in range(self.hierarchy_height - 1, -1, -1):
            nodes = self.maps_by_level[h]
            levels[nodes[at_low] == nodes[at_high]] = h
        node = self.maps_by_rank.reshape(-1)[(self.level_starts + levels) * leaves + low]
        widths = self.node_widths[self.node_offsets.reshape(-1)[self.level_starts + levels] + node]
        for j, attr in self.ordered_attributes:
            widths[j] = attr.width(low[j], high[j])
            levels[j] = 0
        self.varied = (widths > 0).any(axis=1)
        return tuple(np.ascontiguousarray(a.T) for a in (widths, levels, low, high))  # type: ignore[return-value]  # four arrays; a generator gives tuple[...]

    # -- cutting -------------------------------------------------------------------------

    # A strict median cut is read off a (segment x rank) count grid (:meth:`_strict_by_counts`)
    # while the grid has at most COUNT_GRID[0] cells per piece or COUNT_GRID[1] cells in all,
    # else found by sorting the pieces (:meth:`_strict_by_sort`, the reference twin): the same cut.
    COUNT_GRID = (8, 1 << 16)  # grid cells per piece, grid cells always allowed

    def _strict_by_grid(self, n_cells: int, n_pieces: int) -> bool:
        """Whether a strict cut whose count grid has ``n_cells`` cells, of ``n_pieces`` pieces,
        is read off the grid (:meth:`_strict_by_counts`) rather than by sorting."""
        per_piece, floor = self.COUNT_GRID
        return self.mode == "strict" and n_cells <= max(per_piece * n_pieces, floor)

    def _cut_ordered(self, segs: np.ndarray, attribute: np.ndarray, chosen: np.ndarray,
                     local: np.ndarray, sizes: np.ndarray, low: np.ndarray, high: np.ndarray,
                     attempt: np.ndarray | None = None) -> _Cuts:
        """Median cuts of ordered attributes (segment i on ``attribute[i]``, whose ranks run
        from ``low[i]`` to ``high[i]``; ``attempt[i]``: see :meth:`_relaxed`)."""
        n_segs = len(segs)
        span = int((high - low).max()) + 1 if n_segs else 1
        if self._strict_by_grid(n_segs * span, len(chosen)):
            return self._strict_by_counts(segs, attribute, chosen, local, sizes, low, span)
        lengths = np.bincount(local, minlength=n_segs)
        cell = self.piece_cell[chosen]
        chosen = chosen[np.argsort(local * self.m + self.orders[attribute[local], cell])]
        local = np.repeat(np.arange(n_segs), lengths)
        cell = self.piece_cell[chosen]
        count = self.piece_count[chosen]
        cum = np.cumsum(count)
        seg_start = np.cumsum(lengths) - lengths
        before = cum[seg_start] - count[seg_start]
        if self.mode == "strict":
            return self._strict_by_sort(segs, attribute, chosen, local, cell, count, cum, before, sizes)
        return self._relaxed(segs, chosen, local, cell, count, cum, before, sizes, attempt)

    def _strict_by_sort(self, segs, attribute, chosen, local, cell, count, cum, before, sizes):
        """Strict median cuts from the pieces sorted by (segment, rank): ``cum`` their running
        row counts, ``before`` the rows before each segment (the reference twin of
        :meth:`_strict_by_counts`)."""
        n_segs = len(segs)
        rank = self.ranks[attribute[local], cell]
        seg_end = np.searchsorted(local, np.arange(n_segs), side="right")
        median = rank[np.searchsorted(cum, before + (sizes + 1) // 2, side="left")]
        top = rank[seg_end - 1]
        keyed = local * self.n_ranks + rank
        first_top = np.searchsorted(keyed, np.arange(n_segs) * self.n_ranks + top, side="left")
        split = np.where(median == top, rank[np.maximum(first_top - 1, 0)], median)
        last_left = np.searchsorted(keyed, np.arange(n_segs) * self.n_ranks + split, side="right") - 1
        left = cum[last_left] - before
        return self._cut_at(segs, chosen, local, cell, count, rank, split, left, sizes)

    def _strict_by_counts(self, segs: np.ndarray, attribute: np.ndarray, chosen: np.ndarray,
                          local: np.ndarray, sizes: np.ndarray, low: np.ndarray, n_ranks: int
                          ) -> _Cuts:
        """The strict cut from a (segment x rank) count grid: the same cut as :meth:`_strict_by_sort`,
        without sorting, when the grid is small. Ranks are counted from each segment's lowest
        (``low``), so the grid is as wide as the widest segment's range (``n_ranks``)."""
        n_segs = len(segs)
        cell = self.piece_cell[chosen]
        count = self.piece_count[chosen]
        rank = self.ranks_by_cell.reshape(-1)[cell * self.ranks_by_cell.shape[1] + attribute[local]] - low[local]
        grid = np.bincount(local * n_ranks + rank, weights=count, minlength=n_segs * n_ranks)
        cum = grid.reshape(n_segs, n_ranks).cumsum(axis=1)
        median = (2 * cum >= sizes[:, None]).argmax(axis=1)  # the ceil(N/2)-th smallest value
        present = (grid > 0).reshape(n_segs, n_ranks)
        top = n_ranks - 1 - present[:, ::-1].argmax(axis=1)
        below_top = present & (np.arange(n_ranks) < top[:, None])
        largest_below_top = n_ranks - 1 - below_top[:, ::-1].argmax(axis=1)
        split = np.where(median == top, largest_below_top, median)
        left = cum[np.arange(n_segs), split]
        return self._cut_at(segs, chosen, local, cell, count, rank, split, left, sizes)

    def _cut_at(self, segs: np.ndarray, chosen: np.ndarray, local: np.ndarray, cell: np.ndarray,
                count: np.ndarray, rank: np.ndarray, split: np.ndarray, left: np.ndarray, sizes: np.ndarray
                ) -> _Cuts:
        """Strict cut of each segment at rank ``split`` (``left`` rows at or below it): allowed when
        both sides hold ≥ k rows (and satisfy the constraints)."""
        allowed = (left >= self.k) & (sizes - left >= self.k)
        side = (rank > split[local]).astype(np.int64)
        if self.constraints.active:
            ok = self._groups_ok(local * 2 + side, cell, count, 2 * len(segs))
            allowed &= ok[0::2] & ok[1::2]
        return _Cuts(segs, allowed, chosen, local, side, 2)

    def _relaxed(self, segs, chosen, local, cell, count, cum, before, sizes, attempt):
        """Relaxed cuts. Pieces a cut adds are numbered segment by segment, or in the stable
        order of the segments' ``attempt`` when given (as if cut attempt by attempt)."""
        n_segs = len(segs)
        half = sizes // 2
        left_amount = np.clip((before + half)[local] - (cum - count), 0, count)
        right_amount = count - left_amount
        allowed = half >= self.k
        if self.constraints.active:
            sensitive = self.sensitive[cell]  # type: ignore[index]  # not None when constraints are active
            width = len(self.constraints.reference)
            hist = (np.bincount((2 * local) * width + sensitive, weights=left_amount,
                                minlength=2 * n_segs * width)
                    + np.bincount((2 * local + 1) * width + sensitive, weights=right_amount,
                                  minlength=2 * n_segs * width))
            ok = self.constraints.satisfied(hist.reshape(2 * n_segs, width))
            allowed &= ok[0::2] & ok[1::2]
        # a piece straddling the cut keeps its left rows; a new piece takes the rest
        straddle = allowed[local] & (left_amount > 0) & (right_amount > 0)
        self.piece_count[chosen[straddle]] = left_amount[straddle]
        start = len(self.piece_cell)
        added = np.arange(start, start + int(straddle.sum()))
        made = np.flatnonzero(straddle)
        if attempt is not None:
            numbering = np.argsort(attempt[local[made]], kind="stable")
            added[numbering] = added.copy()
            made = made[numbering]
        self.piece_cell = np.concatenate([self.piece_cell, cell[made]])
        self.piece_count = np.concatenate([self.piece_count, right_amount[made]])
        self.piece_part = np.concatenate([self.piece_part, np.zeros(len(added), dtype=np.int64)])
        side = np.concatenate([(left_amount == 0).astype(np.int64), np.ones(len(added), dtype=np.int64)])
        chosen = np.concatenate([chosen, added])
        local = np.concatenate([local, local[straddle]])
        return _Cuts(segs, allowed, chosen, local, side, 2)

    def _cut_hierarchy(self, segs: np.ndarray, attribute: np.ndarray, chosen: np.ndarray,
                       local: np.ndarray, _sizes: np.ndarray, levels: np.ndarray) -> _Cuts:
        """Cuts into the children of each segment's lowest common hierarchy node."""
        n_segs = len(segs)
        cell = self.piece_cell[chosen]
        piece_attribute = attribute[local]
        d, n_levels, span = self.maps_by_rank.shape
        rank = self.ranks_by_cell.reshape(-1)[cell * d + piece_attribute]
        child = self.maps_by_rank.reshape(-1)[(piece_attribute * n_levels + levels[local] - 1) * span + rank]
        count = self.piece_count[chosen]
        group, group_size, first_group, n_children = _groups(local, child, count, n_segs, self.n_nodes)
        allowed = np.minimum.reduceat(group_size, first_group) >= self.k
        if self.constraints.active:
            ok = self._groups_ok(group, cell, count, len(group_size))
            allowed &= np.minimum.reduceat(ok.astype(np.int8), first_group).astype(bool)
        return _Cuts(segs, allowed, chosen, local, group - first_group[local], n_children)

    def _groups_ok(self, group: np.ndarray, cell: np.ndarray, count: np.ndarray, n_groups: int) -> np.ndarray:
        return classes_satisfying(self.constraints, group, self.sensitive[cell], n_groups,  # type: ignore[index]  # not None: constraints
                                  count.astype(float))


def partition(cells: EncodedCells, attributes: Sequence[LocalAttribute], k: int, *, mode: Mode = "strict",
              constraints: SensitiveConstraints = NO_CONSTRAINTS) -> Partitioning:
    """Run Mondrian on ``cells``; every partition holds ≥ k rows and satisfies ``constraints``."""
    if mode not in ("strict", "relaxed"):
        raise ParameterError(f"Mondrian partitioning is 'strict' or 'relaxed', not {mode!r}")
    total = int(cells.counts.sum())
    if total < k:
        raise ParameterError(f"the table has {quantity(total, 'row')}, fewer than k = {k}: no class can hold k rows")
    if constraints.active:
        assert cells.sensitive is not None
        whole = classes_satisfying(constraints, np.zeros(cells.n_cells, dtype=np.int64),
                                   cells.sensitive, 1, cells.counts.astype(float))
        if not whole[0]:
            raise ParameterError(
                f"the whole table does not satisfy {constraints.statement()}, so no partition "
                "of it can; relax ℓ or t, or choose another sensitive attribute"
            )
    return _Partitioner(cells, attributes, k, mode, constraints).run()


# -- publishing ------------------------------------------------------------------------------
