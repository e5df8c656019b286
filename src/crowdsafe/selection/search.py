"""The exponential mechanism over the generalization lattice: every node scored, or a branch and
bound that skips only blocks no node of which can win (:func:`gumbel_max_over_lattice`).

Both return the argmax of the exact keys ``ε1 · q_int(S, g) / D + G_g`` over every candidate
node g (:mod:`.gumbel`), so the choice has exactly the mechanism's distribution; only the
running time and the random bits drawn depend on the data. The scores come from the sample's
keyed frequency tables (:mod:`.tables`) or, for ``entropy``, from :mod:`.entropy_score`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np

from crowdsafe.anonymize.counted import CountedSample
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.data import Dataset
from crowdsafe.randomness import gumbel_enclosure
from crowdsafe.selection.bound import children
from crowdsafe.selection.entropy_score import EntropyScorer
from crowdsafe.selection.gumbel import MoreBits, exact_gumbel_argmax, key_bounds, upper_key
from crowdsafe.selection.incumbent import greedy_incumbent, wants_incumbent
from crowdsafe.selection.marginal_score import MarginalScorer, gumbel_max_marginals
from crowdsafe.selection.score import Objective
from crowdsafe.selection.tables import KeyedTables
from crowdsafe.selection.words import Keys


def lattice_scores(sample: Dataset | CountedSample, columns: Sequence[str], k: int,
                   objective: Objective | None = None) -> tuple[Lattice, np.ndarray]:
    """q_int(S, g) (:mod:`.score`), exact, of every candidate node g of the lattice of
    ``columns`` on ``sample`` (a column the objective fixes has height 0 in the lattice).

    Depth-first over the columns, each node's frequency table rolled up from the node one level
    below it. Node i of the returned lattice has ``scores[i]`` (an object array of Python ints
    when q_int could pass 2^63; float64 for an objective with real scores, ``entropy``, within
    :func:`~.score.entropy_error_bound` of the exact value). The mechanism uses it for
    objectives without a branch and bound (:func:`gumbel_max_over_lattice` returns the same
    choice for the others).
    """
    objective = (objective or Objective("retained")).for_columns(columns, sample.hierarchies)
    if not objective.exact:
        scorer = EntropyScorer(sample, columns, k, objective)
        return scorer.lattice, scorer.scores()
    if objective.name == "marginals":
        marginal = MarginalScorer(sample, columns, k, objective)
        return marginal.lattice, marginal.scores()
    heights = objective.candidate_heights(columns, sample.hierarchies)
    lattice = Lattice(tuple(columns), heights)
    tables = KeyedTables(sample, columns, objective, k)
    scores = np.zeros(lattice.size, dtype=object if tables.wide else np.int64)
    strides = lattice.strides
    levels = [0] * tables.d

    def visit(attribute: int, keys: Keys, counts: np.ndarray, index: int) -> None:
        if attribute == tables.d:
            scores[index] = tables.score(keys, counts, levels)
            return
        for level in range(heights[attribute] + 1):
            if level > 0:
                keys, counts = tables.raise_level(keys, counts, attribute, level - 1, level)
            levels[attribute] = level
            visit(attribute + 1, keys, counts, index + level * int(strides[attribute]))
        levels[attribute] = 0

    visit(0, tables.base_keys, tables.base_counts, 0)
    return lattice, scores


def search_order(heights: Sequence[int], last: Sequence[int] = (), simple_first: bool = True) -> list[int]:
    """The order in which :func:`gumbel_max_over_lattice` branches on the columns. Any order gives
    the same argmax; the order only decides how early the bounds prune. ``simple_first``: the
    columns with at most one generalization step (kept or ``*``) first, then the others as given
    (weighted objectives: about a third of the work of the given order on Adult-like data);
    otherwise those columns go last (``classification``: its bound is tight when the free columns
    split few classes, about half the work on Adult). Columns in ``last`` (a classification
    target, whose level is fixed: its bound reads it in the lowest bits of every key) come after
    all others."""
    return sorted(range(len(heights)), key=lambda j: (j in last, (heights[j] > 1) == simple_first))


def gumbel_max_over_lattice(sample: Dataset | CountedSample, columns: Sequence[str], k: int, scale: float,
                            cells: np.ndarray, more_bits: MoreBits,
                            objective: Objective | None = None,
                            allowed: np.ndarray | None = None) -> tuple[Lattice, int, int]:
    """argmax over lattice nodes g of the exact key ``scale · q_int(S, g) / D + G_g`` (D the
    objective's :meth:`~.score.Objective.key_denominator`; ``scale`` = ε1 gives the
    exponential mechanism), G_g the exact Gumbel
    −log(−log U_g) with U_g's first 53 bits ``cells[g]`` and further bits from ``more_bits``,
    without scoring every node: (lattice, chosen index, nodes scored).

    Branch and bound over the attributes (in :func:`search_order`): fixing the levels of the
    first p columns fixes a block of nodes, and every node of the block has q_int at most the
    score of the projection on those p columns (:meth:`.tables.KeyedTables.score`). A block is skipped
    only when the upper end of its key interval (scale · bound + its largest G upper end, widened)
    is below the best lower key of a scored node; then no node in it can be the argmax. After the
    search, the scored nodes whose upper key reaches the best lower key are compared exactly
    (:func:`.gumbel.exact_gumbel_argmax`). The result is the argmax of the exact keys over every node, as
    in the full evaluation; only the time and the bits drawn depend on the data. For the weighted
    objectives the best lower key starts at a node found before the search (:mod:`.incumbent`; an
    exactly scored node, so the result is the same). Objectives
    without such a bound (:attr:`~.score.Objective.bounded` false) score every node
    (:func:`gumbel_max_full`).

    ``allowed`` (a boolean per node, in the lattice's order; None: every node) restricts the
    argmax to those nodes (the candidates of :mod:`.candidates`): a node outside it is never
    recorded, and a block without an allowed node is skipped; a bound over a block stays a bound
    over its allowed nodes, so the pruning is unchanged. Each node keeps its own G_g, so the
    result is the argmax of the exact keys over the allowed nodes.
    """
    objective = (objective or Objective("retained")).for_columns(columns, sample.hierarchies)
    if objective.name == "marginals":
        if allowed is None:  # its own branch and bound (.marginal_score)
            return gumbel_max_marginals(sample, columns, k, scale, cells, more_bits, objective)
        # restricted to the noisy count's candidates: every node scored (about 1.5 s on an Adult
        # sample), the argmax taken over the allowed ones
        return gumbel_max_full(sample, columns, k, scale, cells, more_bits, objective, allowed)
    if not objective.bounded:
        return gumbel_max_full(sample, columns, k, scale, cells, more_bits, objective, allowed)
    denominator = objective.key_denominator(k)
    heights = objective.candidate_heights(columns, sample.hierarchies)
    lattice = Lattice(tuple(columns), heights)
    cells = np.asarray(cells, dtype=np.int64)
    permitted = _allowed(allowed, lattice.size)
    if sample.n_rows == 0:  # every score is 0: the choice is uniform among the allowed nodes
        every = np.flatnonzero(permitted).astype(np.int64)
        return lattice, exact_gumbel_argmax(every, np.zeros(len(every), dtype=np.int64), cells[every], scale,
                                            more_bits, denominator), 0
    order = search_order(heights, last=[list(columns).index(c) for c in objective.fixed_levels],
                         simple_first=objective.name != "classification")
    searched = Lattice(tuple(columns[j] for j in order), tuple(heights[j] for j in order))
    # cells in the searched lattice's node order, so each block of nodes is contiguous
    shape = [h + 1 for h in heights]
    to_searched = np.arange(lattice.size, dtype=np.int64).reshape(shape).transpose(order).ravel()
    cells = cells[to_searched]
    permitted = permitted[to_searched]
    g_lo, g_hi = gumbel_enclosure(cells)
    tables = KeyedTables(sample, searched.columns, objective, k)
    node_strides = searched.strides
    d = tables.d
    # Python floats from here: the search does scalar arithmetic on them, one key at a time
    block_max = [g_hi.reshape(-1, int(node_strides[p])).max(axis=1).tolist() for p in range(d)]
    block_open = [cast(list[bool], np.any(permitted.reshape(-1, int(node_strides[p])), axis=1).tolist())
                  for p in range(d)]
    open_node = cast(list[bool], permitted.tolist())
    g_low, g_high = g_lo.tolist(), g_hi.tolist()
    best = [-math.inf]
    scored: list[tuple[int, int, float]] = []  # (searched index, q_int, upper key)
    levels = [0] * d
    if wants_incumbent(tables):  # a node's exact lower key to prune with from the start (.incumbent)
        found, q = greedy_incumbent(tables)
        node = sum(level * int(stride) for level, stride in zip(found, node_strides))
        if open_node[node]:
            best[0] = key_bounds(scale * (q / denominator), g_low[node], g_high[node])[0]

    def record(index: int, q: int) -> None:
        lo, hi = key_bounds(scale * (q / denominator), g_low[index], g_high[index])
        scored.append((index, q, hi))
        best[0] = max(best[0], lo)

    def visit(attribute: int, keys: Keys, counts: np.ndarray, index: int) -> None:
        block = int(node_strides[attribute])
        bounds, exact, made = children(tables, keys, counts, attribute, levels, k)
        if exact:  # each child is one node, and its bound is its score
            for level, q in enumerate(bounds):
                if open_node[index + level * block]:
                    record(index + level * block, int(q))
            return
        ranked = []
        for level, bound in enumerate(bounds):
            child = index + level * block
            if not block_open[attribute][child // block]:
                continue  # no allowed node below
            upper = upper_key(scale * (int(bound) / denominator), block_max[attribute][child // block])
            ranked.append((upper, level, child))
        for upper, level, child in sorted(ranked, key=lambda c: -c[0]):
            if upper < best[0]:
                break
            levels[attribute] = level
            below = max(made_level for made_level in made if made_level <= level)
            if below < level:
                made[level] = tables.raise_level(*made[below], attribute, below, level)
            visit(attribute + 1, *made[level], child)
        levels[attribute] = 0

    visit(0, tables.base_keys, tables.base_counts, 0)
    contenders = [(index, q) for index, q, hi in scored if hi >= best[0]]
    original_index = to_searched[[index for index, _ in contenders]]  # nodes in the caller's order
    if len(contenders) == 1:
        chosen = int(original_index[0])
    else:
        chosen = exact_gumbel_argmax(original_index, np.array([q for _, q in contenders], dtype=object),
                                     cells[[index for index, _ in contenders]], scale, more_bits, denominator)
    return lattice, chosen, len(scored)


def gumbel_max_full(sample: Dataset | CountedSample, columns: Sequence[str], k: int, scale: float,
                    cells: np.ndarray, more_bits: MoreBits, objective: Objective,
                    allowed: np.ndarray | None = None) -> tuple[Lattice, int, int]:
    """:func:`gumbel_max_over_lattice` for an objective without a branch-and-bound bound: every
    candidate node is scored exactly (:func:`lattice_scores`), then the exact argmax of the keys
    (:func:`.gumbel.exact_gumbel_argmax`) over the ``allowed`` nodes (None: every node). Real scores
    (``entropy``) are scored in float with their error bound, and the nodes still in contention are
    enclosed exactly (:class:`.entropy_score.EntropyScorer`)."""
    objective = objective.for_columns(columns, sample.hierarchies)
    cells = np.asarray(cells, dtype=np.int64)
    if not objective.exact:
        scorer = EntropyScorer(sample, columns, k, objective)
        nodes = scorer.lattice.nodes()
        every = np.flatnonzero(_allowed(allowed, scorer.lattice.size)).astype(np.int64)
        chosen = exact_gumbel_argmax(every, scorer.scores()[every], cells[every], scale, more_bits,
                                     objective.key_denominator(k), scorer.error,
                                     lambda index, iv: scorer.interval(nodes[index], iv))
        return scorer.lattice, chosen, scorer.lattice.size
    lattice, scores = lattice_scores(sample, columns, k, objective)
    every = np.flatnonzero(_allowed(allowed, lattice.size)).astype(np.int64)
    chosen = exact_gumbel_argmax(every, scores[every], cells[every], scale, more_bits,
                                 objective.key_denominator(k))
    return lattice, chosen, lattice.size


def _allowed(allowed: np.ndarray | None, size: int) -> np.ndarray:
    """The boolean mask of the nodes the argmax runs over (every node when ``allowed`` is None);
    refuses a mask of another size or one without a node."""
    if allowed is None:
        return np.ones(size, dtype=bool)
    mask = np.asarray(allowed, dtype=bool)
    if mask.shape != (size,) or not mask.any():
        raise ValueError(f"the allowed nodes must be a non-empty mask of the {size} lattice nodes")
    return mask
