"""The ``marginals`` objective's per-marginal tables (:mod:`.marginal_score`): for one marginal
(a column or a pair) and every level combination of its columns, the generalization error B_p
and the suppression deficit of the sample projected on those columns.

:func:`generalization_table` computes every level combination at once (one grouped sum over all
of them); :func:`generalization_table_by_level` is its reference twin, one combination at a time,
which also serves the tables too wide for the vectorized sums. The tests hold both to a
brute-force evaluation of the definition.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from crowdsafe.data import Hierarchy
from crowdsafe.selection.score import WEIGHT_UNIT
from crowdsafe.selection.sums import exact_sums

#: Each group's L1 error is rounded down to a whole number of 1/(k·W) rows, W = 2^20 (the unit of the
#: other objectives' weights: D = k·W is :meth:`.score.Objective.denominator`).
MARGINAL_UNIT = WEIGHT_UNIT

#: :func:`generalization_table` sums every level combination in one dense array while it holds at
#: most this many groups beyond 8 per distinct tuple (else one combination at a time).
DENSE_GROUPS = 1 << 16


def suppression_deficit(counts: np.ndarray, k: int) -> int:
    """Def = Σ_E c·(k − c)⁺ over class sizes ``counts`` (exact)."""
    counts = np.asarray(counts, dtype=np.int64)
    short = np.maximum(k - counts, 0)  # (k − c)⁺
    if len(counts) * k * k < 2**62:  # each term is below k²: the int64 sum is exact
        return int(np.dot(counts, short))
    return int((counts.astype(object) * short.astype(object)).sum())


def marginal_cells(codes: Sequence[np.ndarray], counts: np.ndarray, hierarchies: Sequence[Hierarchy],
                   weights: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """The marginal's leaf tuples that some row holds: their leaf codes per column and their row
    counts t_v (the sample's frequency table ``codes``/``counts`` summed over the other columns).
    ``weights``: the counts in float64, given when their total is below 2^53 (the sums are then
    exact, and not re-checked for each marginal)."""
    sizes = [h.size(0) for h in hierarchies]
    key = np.asarray(codes[0], dtype=np.int64)
    for code, leaves in zip(codes[1:], sizes[1:]):
        key = key * leaves + code
    counts = np.asarray(counts, dtype=np.int64)
    space = int(np.prod(sizes))
    if space <= 4 * len(key) + 4096:  # few leaf tuples: dense codes, no sort
        dense = exact_sums(key, counts, space) if weights is None else \
            np.bincount(key, weights=weights, minlength=space).astype(np.int64)
        cells = np.flatnonzero(dense)
        truth = dense[cells]
    else:
        cells, inverse = np.unique(key, return_inverse=True)
        truth = exact_sums(inverse.reshape(-1), counts, len(cells))
    leaf_codes: list[np.ndarray] = []
    rest = cells.copy()
    for leaves in reversed(sizes):
        leaf_codes.insert(0, rest % leaves)
        rest //= leaves
    return leaf_codes, truth


def _is_wide(truth: np.ndarray, k: int) -> bool:
    """Whether an entry of B_p could pass 2^62 (then Python integers)."""
    return k * MARGINAL_UNIT * 2 * max(int(truth.sum()), 1) * (len(truth) + 1) >= 2**62


def generalization_table(codes: Sequence[np.ndarray], counts: np.ndarray, hierarchies: Sequence[Hierarchy],
                         k: int, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """B_p(l) for one marginal p over the columns whose leaf codes are ``codes`` (one or two
    arrays, one code per distinct tuple, ``counts`` rows each): an int64 array with one entry per
    level combination of those columns (object when an entry could pass 2^62); and beside it
    (object, Python integers), Def of the sample projected on those columns at each combination:
    a lower bound on Def of every node that puts p's columns at those levels (a coarser node).

    For a level combination, a group G is a cell of the generalized marginal (a node per column);
    s_G = the leaves it covers (the product of the nodes' leaf counts, public), t_v the sample's
    rows with leaf tuple v, C_G = Σ_{v ∈ G} t_v. The release's estimate of a leaf tuple v in G is
    C_G / s_G (its count spread uniformly), so s_G · |t_v − C_G/s_G| = |s_G t_v − C_G| and
    u_G = Σ_{v ∈ G} |s_G t_v − C_G| (leaf tuples no row holds add C_G each). The entry is
    Σ_G ⌊k · W · u_G / s_G⌋: the L1 distance of the spread marginal to the sample's, in units of
    1/(k·W) rows, each group rounded down. The groups G are the projection's classes, of C_G rows.

    Every combination at once: each combination's groups get their own range of one dense
    numbering (its offset plus the mixed-radix code of the group's nodes), so C_G, the held
    leaf tuples and u_G of all of them are three grouped sums, and each combination's entry one
    segment sum. Too many groups, or entries that could pass 2^62: one combination at a time
    (:func:`generalization_table_by_level`, the same integers). ``weights``: as for
    :func:`marginal_cells`."""
    leaf_codes, truth = marginal_cells(codes, counts, hierarchies, weights)
    heights = [h.height for h in hierarchies]
    shape = [h + 1 for h in heights]
    # the groups of each combination (the product of the columns' node counts at its levels)
    node_counts = [np.array([h.size(level) for level in range(h.height + 1)], dtype=np.int64) for h in hierarchies]
    spans = node_counts[0]
    for counts_at in node_counts[1:]:
        spans = np.multiply.outer(spans, counts_at)
    total_groups = int(spans.sum())
    if _is_wide(truth, k) or total_groups > 8 * len(truth) * spans.size + DENSE_GROUPS:
        return generalization_table_by_level(leaf_codes, truth, hierarchies, k)
    offsets = np.zeros(spans.size, dtype=np.int64)
    np.cumsum(spans.ravel()[:-1], out=offsets[1:])
    # per column, level by level (axis 0): each cell's node and the leaves under it, broadcast so
    # that column j's level runs along axis j of (levels..., cells)
    group = np.zeros(1, dtype=np.int64)
    cover = np.ones(1, dtype=np.int64)
    for j, (hierarchy, leaf) in enumerate(zip(hierarchies, leaf_codes)):
        view = [1] * len(shape) + [len(truth)]
        view[j] = shape[j]
        nodes, leaves_under = level_maps(hierarchy)
        node, under = nodes.take(leaf, axis=1), leaves_under.take(leaf, axis=1)
        radix = [1] * (len(shape) + 1)
        radix[j] = shape[j]
        group = group * node_counts[j].reshape(radix) + node.reshape(view)
        cover = cover * under.reshape(view)
    group = (group + offsets.reshape(shape + [1])).reshape(-1)
    cover = np.broadcast_to(cover, shape + [len(truth)]).reshape(-1)
    if floats_are_exact(cover, truth):  # every sum exact in float64
        total, whole, part, size = _group_errors_in_floats(group, truth, cover, total_groups, spans.size)
    else:
        cell_truth = np.broadcast_to(truth, shape + [len(truth)]).reshape(-1)
        total, whole, part, size = _group_errors(group, cell_truth, cover, total_groups)
    scale = k * MARGINAL_UNIT
    value = whole * scale + (part * scale) // size
    table = np.add.reduceat(value, offsets).reshape(shape)
    short = np.maximum(k - total, 0)
    deficits = np.empty(spans.size, dtype=object)
    deficits[:] = [int(v) for v in np.add.reduceat(total * short, offsets)] if total_groups * k * k < 2**62 else \
        [suppression_deficit(total[start:start + span], k) for start, span in zip(offsets, spans.ravel())]
    return table, deficits.reshape(shape)


def level_maps(hierarchy: Hierarchy) -> tuple[np.ndarray, np.ndarray]:
    """Two (levels, leaves) int64 arrays of ``hierarchy``: each leaf's node at each level, and how
    many leaves that node covers (made once per hierarchy: every marginal over the column reads
    them)."""
    made = hierarchy.derived.get("marginal_level_maps")
    if made is None:
        levels = range(hierarchy.height + 1)
        nodes = np.stack([hierarchy.leaf_map(level).astype(np.int64) for level in levels])
        under = np.stack([hierarchy.leaf_counts(level)[nodes[level]] for level in levels])
        made = hierarchy.derived["marginal_level_maps"] = (nodes, under)
    return made


def _group_errors(member: np.ndarray, truth: np.ndarray, cover: np.ndarray,
                  groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For cells with rows ``truth`` in groups ``member`` (0 .. groups − 1) covering ``cover``
    leaf tuples each: (C_G, u_G // s_G, u_G % s_G, s_G) per group, exact int64 (an empty group
    has s_G = 1 and u_G = 0)."""
    total = exact_sums(member, truth, groups)  # C_G
    held = np.bincount(member, minlength=groups).astype(np.int64)  # leaf tuples held
    size = np.ones(groups, dtype=np.int64)
    size[member] = cover
    deviation = exact_sums(member, np.abs(cover * truth - total[member]), groups)
    whole, part = np.divmod(deviation + (size - held) * total, size)
    return total, whole, part, size


def floats_are_exact(cover: np.ndarray, truth: np.ndarray) -> bool:
    """Whether 2 · max(s) · N < 2^53 for groups covering ``cover`` leaf tuples and cells of
    ``truth`` rows (N = Σ truth, each combination's rows): then every value and partial sum of
    :func:`_group_errors_in_floats` is an integer below 2^53, exact in float64."""
    return 2 * int(cover.max(initial=1)) * max(int(truth.sum()), 1) < 2**53


def _group_errors_in_floats(member: np.ndarray, truth: np.ndarray, cover: np.ndarray, groups: int,
                            combinations: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_group_errors` for the cells ``truth`` repeated in each of ``combinations`` level
    combinations (``member`` and ``cover`` run over the combinations, the cells within each), when
    :func:`floats_are_exact`: every value and partial sum below is then an integer under 2^53
    (C_G ≤ N, |s·t − C_G| ≤ s·N, u_G ≤ 2·s·N), exact in float64, so the sums need neither the
    int64 copies of the cells nor a check of their total. The same integers as :func:`_group_errors`
    (``tests/fast_paths/test_marginal_float_sums.py``)."""
    cell_truth = np.tile(truth.astype(np.float64), combinations)
    totals = np.bincount(member, weights=cell_truth, minlength=groups)  # C_G
    held = np.bincount(member, minlength=groups).astype(np.int64)  # leaf tuples held
    size = np.ones(groups, dtype=np.int64)
    size[member] = cover
    spread = cover * cell_truth  # s·t_v
    spread -= totals[member]
    np.abs(spread, out=spread)
    deviation = np.bincount(member, weights=spread, minlength=groups).astype(np.int64)  # u_G over held cells
    total = totals.astype(np.int64)
    whole, part = np.divmod(deviation + (size - held) * total, size)
    return total, whole, part, size


def generalization_table_by_level(leaf_codes: Sequence[np.ndarray], truth: np.ndarray,
                                  hierarchies: Sequence[Hierarchy], k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`generalization_table` from the marginal's cells (:func:`marginal_cells`), one level
    combination at a time: its reference twin, and the path for tables too wide for int64."""
    scale = k * MARGINAL_UNIT
    heights = [h.height for h in hierarchies]
    wide = _is_wide(truth, k)
    table = np.zeros([h + 1 for h in heights], dtype=object if wide else np.int64)
    deficits = np.zeros([h + 1 for h in heights], dtype=object)
    # per column and level, once: each cell's node and the leaves under it
    nodes = [[h.leaf_map(level).astype(np.int64)[leaf] for level in range(h.height + 1)]
             for leaf, h in zip(leaf_codes, hierarchies)]
    covers = [[np.asarray(h.leaf_counts(level), dtype=np.int64)[node] for level, node in enumerate(by_level)]
              for h, by_level in zip(hierarchies, nodes)]
    for levels in itertools.product(*[range(h + 1) for h in heights]):
        group = nodes[0][levels[0]]
        cover = covers[0][levels[0]]
        for j in range(1, len(levels)):
            group = group * hierarchies[j].size(levels[j]) + nodes[j][levels[j]]
            cover = cover * covers[j][levels[j]]
        span = int(np.prod([h.size(level) for h, level in zip(hierarchies, levels)]))
        if span <= 4 * len(truth) + 4096:  # few possible groups: dense codes, no sort
            member, groups_count = group, span
        else:
            member = np.unique(group, return_inverse=True)[1].reshape(-1)
            groups_count = int(member.max(initial=-1)) + 1
        total, whole, part, size = _group_errors(member, truth, cover, groups_count)
        deficits[levels] = suppression_deficit(total, k)
        if wide:
            value = sum(int(a) * scale + (int(b) * scale) // int(s) for a, b, s in zip(whole, part, size))
        else:
            value = int((whole * scale + (part * scale) // size).sum())
        table[levels] = value
    return table, deficits
