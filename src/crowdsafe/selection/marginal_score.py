"""The ``marginals`` objective: the error of every 1- and 2-way marginal of the release, its
definition and sensitivity, and its scores on every lattice node by a branch and bound (``PROOF.md``
§7 proves the search; docs/objectives.md has the worked example).

``marginals`` — minus the error of every 1- and 2-way marginal of the published columns (issue
#36: a release judged on the analyses nobody planned). The d published columns give P = d(d + 1)/2
marginals p (each column, each pair). For a node g and a marginal p, a group G is a cell of the
generalized marginal (one node per column of p), s_G the number of leaf tuples it covers (the
product of the nodes' leaf counts in the declared hierarchies: public), t_v the rows of S with
leaf tuple v and C_G = Σ_{v ∈ G} t_v. Spread uniformly, the release estimates t_v by C_G/s_G,
with L1 error Σ_{v ∈ G} |t_v − C_G/s_G| = u_G/s_G, u_G = Σ_{v ∈ G} |s_G·t_v − C_G| (an integer).
Suppression is charged apart, by the ramp: each class E costs λ·(c − e(c)) = λ·c·(k − c)⁺/k rows
in each marginal, λ = 1: a suppressed row costs what a row missing from the release costs. (λ is a
public constant, chosen on Adult, public data: at the plan of ε = 1, λ = 3/4 picks nodes that
suppress 57% of the sample, λ = 1 nodes that suppress 30–42% at a mean 2-way TVD within 10% of
the lattice's best; docs/objectives.md.) So

    q = −Σ_p Σ_G u_G/s_G − λ·P·Def/k,  Def = Σ_E c·(k − c)⁺,

and q_int = −Σ_p Σ_G ⌊k·W·u_G/s_G⌋ − λ·P·W·Def, W = 2^20, D = k·W (each group's error rounded
down to 1/(k·W) rows; every term is an exact integer).

Add a row x to S. In each marginal p only x's group G changes (t_v of x's leaf tuple and C_G, by
one each; a new group has u = 0 before). The cell of x moves by |s·(t + 1) − (C + 1)| −
|s·t − C| ∈ [−(s − 1), s − 1], each of the other s − 1 cells by at most 1, so |Δu_G| ≤ 2(s − 1)
and |Δ⌊k·W·u_G/s_G⌋| ≤ ⌈2kW(s − 1)/s⌉ ≤ 2kW (⌊a + b⌋ − ⌊a⌋ ≤ ⌈b⌉; 2kW is an integer). Def moves
in x's class only, from f(c) = c(k − c)⁺ to f(c + 1): by k − 2c − 1 ∈ [−(k − 1), k − 1] for c < k,
by 0 above. So |Δq_int| ≤ P·(2kW + λW(k − 1)) = Δ_int, Δq = P·(2k + λ(k − 1))/k < 3·P. The
score is not monotone (a row can raise or lower the error): m = 2. Removing a row is the reverse.
The search below uses that Def never increases when classes merge
(f(a) + f(b) ≥ f(a + b)), so a coarser node's Def bounds a block's from below (PROOF.md §7).

How the search scores it.

For a node g the score splits in two parts:

- the *generalization error* B(g) = Σ_p B_p(l_p), a sum over the marginals p (one column or a
  pair) of a term that depends only on the levels l_p of p's columns. Each B_p is a small table
  (one entry per level combination), computed once from the sample's 1- and 2-way tables
  (:mod:`.marginal_tables`; each marginal's cells read from the smallest projection of the
  sample that holds its columns, the search's own); B of every node is then a sum of broadcast tables
  (:meth:`MarginalScorer.generalization`);
- the *suppression* term P · λ · W · Def(g), Def(g) = Σ_E |E|·(k − |E|)⁺ over the classes of g,
  which needs g's class sizes.

Def never increases when classes merge (a(k − a) + b(k − b) ≥ (a + b)(k − a − b) when a + b < k,
and Def is 0 for a class of k rows or more), so the classes of any coarser node give a lower
bound on it. Two such coarser nodes are used:

- every 2-column projection of g (the other columns at their roots): the Def of the sample
  projected on each pair at each level combination comes with the pair's B_p table, and their
  largest is a floor under Def(g) for every node at once (:attr:`MarginalScorer.deficit_floor`);
- the projection of a block on its first p columns (the other columns at their roots), which is
  coarser than every node of the block, and of every node at or below the block's levels on
  those columns.

The search (:func:`gumbel_max_marginals`, :class:`MarginalSearch`) walks the columns depth-first
as the other objectives' branch and bound. Each node g carries a floor F(g) ≤ Def(g): first the
pairs' floor, then raised by every projection the search tabulates, which is coarser than every
node at or below the block's levels on its columns (PROOF.md §7). A block's bound is the largest
over its nodes of −B(g)·scale/D + G_g − the cut of F(g) (one vectorized maximum per block's
children), checked before the block's table is made, again once its projection has raised F, and
before each child is opened. The projections are made lazily, each from the
parent block's by raising one column (:class:`ProjectedTables`), and each level's Def of the
projection's last column comes from one pass over the rows' run heights
(:func:`deficits_by_level`). Only the blocks whose bound reaches the best lower key are opened;
the nodes scored exactly go to :func:`.gumbel.exact_gumbel_argmax`, so the choice is the argmax
of the exact keys over every node, as a full evaluation would return.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from crowdsafe.anonymize.counted import CountedSample, counted
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.data import Dataset, Hierarchy
from crowdsafe.errors import ParameterError
from crowdsafe.randomness import gumbel_enclosure
from crowdsafe.selection.gumbel import ENCLOSURE_MARGIN, MoreBits, exact_gumbel_argmax, key_bounds
from crowdsafe.selection.marginal_tables import MARGINAL_UNIT, generalization_table, suppression_deficit
from crowdsafe.selection.score import Objective
from crowdsafe.selection.sums import exact_sums
from crowdsafe.selection.tables import KeyedTables, run_sums
from crowdsafe.selection.words import Keys

#: What a suppressed row costs in each marginal: λ = 1 row, as a missing row (module docstring).
MARGINAL_SUPPRESSION = (1, 1)


def marginal_count(d: int) -> int:
    """P = d(d + 1)/2: the 1- and 2-way marginals of d columns."""
    return d * (d + 1) // 2


def marginal_suppression_units(d: int) -> int:
    """P · λ · 2^20: the units a unit of Def(g) costs under ``marginals`` (module docstring)."""
    numerator, denominator = MARGINAL_SUPPRESSION
    return marginal_count(d) * MARGINAL_UNIT * numerator // denominator


def marginal_sensitivity_units(leaves: tuple[int, ...], k: int) -> int:
    """Δ_int = P · 2^20 · (2k + λ(k − 1)) of ``marginals`` on published columns with these leaf
    counts (d = their number; module docstring). Refused before the objective is bound to its
    columns (:meth:`.score.Objective.for_columns`)."""
    if not leaves:
        raise ParameterError("the marginals objective's sensitivity depends on the number of published "
                             "columns: bind it with Objective.for_columns first")
    d = len(leaves)
    return marginal_count(d) * 2 * k * MARGINAL_UNIT + marginal_suppression_units(d) * (k - 1)


def marginal_sets(d: int) -> list[tuple[int, ...]]:
    """The marginals the objective scores: every column alone, then every pair (i < j)."""
    return [(i,) for i in range(d)] + list(itertools.combinations(range(d), 2))


def deficits_by_level(heights: np.ndarray, counts: np.ndarray, k: int, last: int | None = None) -> list[int]:
    """Def at each level l = 0..last (default h) of a table's last column, from the table's class sizes
    ``counts`` at level 0 and each row's run height (:meth:`.tables.KeyedTables.run_heights`):
    level l's classes are the runs that begin at the rows of height above l, so their sizes are the
    differences of the running total of ``counts`` at those rows (and at the end). Once a level's
    Def is 0, so is every higher level's (classes only merge). The reference twin raises the
    column level by level (:func:`deficits_by_raising`)."""
    n = len(counts)
    if n == 0:
        return []
    top = int(heights[0]) if last is None else last + 1  # h + 1: the first row starts a class at every level
    running = np.empty(n + 1, dtype=np.int64)  # running[i]: the rows before row i
    running[0] = 0
    np.cumsum(counts, out=running[1:])
    # Def = Σ c·(k − c)⁺ = k·N − Σ c·min(c, k) (a class of c ≥ k rows adds c·k − c·k = 0), N the
    # rows at every level: one product per level, each term at most c·k, the sums exact in int64
    whole = k * int(running[-1])
    if whole >= 2**62:  # the int64 dot products below could overflow: Python integers
        return _deficits_of_levels(heights, np.asarray(counts, dtype=np.int64), k, top)
    ends = np.empty(n + 1, dtype=heights.dtype)  # the heights and, past the last row, an end above every level
    ends[:n] = heights
    ends[n] = top
    sizes = np.asarray(counts, dtype=np.int64)
    found = [whole - int(sizes @ np.minimum(sizes, k))]
    for level in range(1, top):
        if found[-1] == 0:
            return found + [0] * (top - level)
        bounds = running[(ends > level).nonzero()[0]]  # the rows before each class, and all of them
        sizes = bounds[1:] - bounds[:-1]
        found.append(whole - int(sizes @ np.minimum(sizes, k)))
    return found


def _deficits_of_levels(heights: np.ndarray, sizes: np.ndarray, k: int, top: int) -> list[int]:
    """:func:`deficits_by_level` for tables whose Def could pass 2^62 (exact Python integers)."""
    found = [suppression_deficit(sizes, k)]
    for level in range(1, top):
        starts = np.flatnonzero(heights > level)
        if len(starts) < len(sizes):
            sizes = run_sums(sizes, starts)
            heights = heights[starts]
        found.append(suppression_deficit(sizes, k))
    return found


def deficits_by_raising(tables: KeyedTables, keys: Keys, counts: np.ndarray, attribute: int,
                        k: int) -> list[int]:
    """:func:`deficits_by_level`'s reference twin: the table's last column ``attribute`` raised
    one level at a time (:meth:`.tables.KeyedTables.raise_last`), Def of each table."""
    found = [suppression_deficit(counts, k)]
    for level in range(1, tables.heights[attribute] + 1):
        keys, counts = tables.raise_last(keys, counts, attribute, level - 1, level)
        found.append(suppression_deficit(counts, k))
    return found


class MarginalScorer:
    """The ``marginals`` objective on the lattice of ``columns`` over ``sample``: B(g) of every
    node at once (:attr:`generalization`, in the lattice's node order), the exact score of one
    node (:meth:`score`) and of every node (:meth:`scores`)."""

    def __init__(self, sample: Dataset | CountedSample, columns: Sequence[str], k: int, objective: Objective) -> None:
        self.objective = objective.for_columns(columns, sample.hierarchies)
        self.k = int(k)
        self.columns = tuple(columns)
        self.cells = counted(sample, self.columns)
        self.hierarchies = [sample.hierarchies[c] for c in self.columns]
        heights = self.objective.candidate_heights(self.columns, sample.hierarchies)
        self.lattice = Lattice(self.columns, heights)
        d = len(self.columns)
        self.sets = marginal_sets(d)
        self.suppression_weight = marginal_suppression_units(d)  # P · λ · W
        #: the sample's keyed tables in this column order, and their projections (shared with the search)
        self.tables = KeyedTables(self.cells, self.columns, self.objective, self.k)
        self.projections = ProjectedTables(self.tables)
        shape = [h + 1 for h in heights]
        wide = False
        tables: dict[tuple[int, ...], np.ndarray] = {}
        floors: dict[tuple[int, ...], np.ndarray] = {}  # each pair's Def at each of its level combinations
        decoded: dict[tuple[int, int], np.ndarray] = {}  # (projection, column) -> leaf codes, once each
        weighted: dict[int, np.ndarray | None] = {}  # projection -> its counts in float64, once each
        for marginal in self.sets:
            # the marginal's cells from the smallest projection that holds its columns
            last = max(marginal)
            keys, counts = self.projections.on(last)
            for j in marginal:
                if (last, j) not in decoded:
                    decoded[last, j] = self.tables.leaf_codes(keys, j)
            # float weights for the grouped sums, exact while the total is below 2^53
            if last not in weighted:
                weighted[last] = counts.astype(np.float64) if self.cells.n_rows < 2**53 else None
            weights = weighted[last]
            table, deficits = generalization_table([decoded[last, j] for j in marginal], counts,
                                                   [self.hierarchies[j] for j in marginal], self.k, weights)
            # a fixed column (height 0 in the lattice) keeps level 0
            kept = tuple(slice(0, shape[j]) for j in marginal)
            tables[marginal] = table[kept]
            wide = wide or table.dtype == object
            if (len(marginal) == 2 or d == 1) and self.cells.n_rows * self.k < 2**62:  # Def ≤ rows · k
                floors[marginal] = deficits[kept].astype(np.int64)
        bound = (self.suppression_weight * self.k + self.k * MARGINAL_UNIT * 2 * marginal_count(d)) \
            * max(self.cells.n_rows, 1)
        self.wide = wide or bound >= 2**62
        #: B(g) of every node, in the lattice's order
        self.generalization = over_the_lattice(shape, tables, np.add, object if self.wide else np.int64).ravel()
        #: a lower bound on Def(g) of every node, in the lattice's order: the largest Def of its 2-column
        #: projections (coarser nodes; :func:`.marginal_tables.generalization_table`)
        self.deficit_floor = over_the_lattice(shape, floors, np.maximum, np.int64).ravel()

    def score(self, levels: Sequence[int]) -> int:
        """q_int of the node ``levels`` (exact)."""
        keys = np.zeros(self.cells.n_cells, dtype=np.int64)
        for j, (hierarchy, level) in enumerate(zip(self.hierarchies, levels)):
            keys = keys * hierarchy.size(level) + hierarchy.leaf_map(level).astype(np.int64)[self.cells.codes[:, j]]
        _, inverse = np.unique(keys, return_inverse=True)
        sizes = exact_sums(inverse.reshape(-1), self.cells.counts.astype(np.int64), int(inverse.max(initial=-1)) + 1)
        index = self.lattice.index(levels)
        return -int(self.generalization[index]) - self.suppression_weight * suppression_deficit(sizes, self.k)

    def scores(self) -> np.ndarray:
        """q_int of every node (int64, or Python ints in an object array when they could pass
        2^62), depth-first roll-up of the class tables."""
        tables = self.tables
        heights = self.lattice.heights
        strides = self.lattice.strides
        scores = np.zeros(self.lattice.size, dtype=object if self.wide else np.int64)

        def visit(attribute: int, keys: Keys, counts: np.ndarray, index: int) -> None:
            if attribute == tables.d:
                scores[index] = -self.generalization[index] - self.suppression_weight * suppression_deficit(counts,
                                                                                                         self.k)
                return
            for level in range(heights[attribute] + 1):
                if level > 0:
                    keys, counts = tables.raise_level(keys, counts, attribute, level - 1, level)
                visit(attribute + 1, keys, counts, index + level * int(strides[attribute]))

        visit(0, tables.base_keys, tables.base_counts, 0)
        return scores


def over_the_lattice(shape: Sequence[int], parts: dict[tuple[int, ...], np.ndarray], combine: np.ufunc,
                     dtype: type) -> np.ndarray:
    """Every part (over the axes its key names, at most two) broadcast to the lattice of ``shape``
    and combined (``np.add``: the sum; ``np.maximum``: the largest; 0 where no part reaches), one
    axis at a time: the parts whose last axis is j are combined on axes 0..j only, so only the
    parts on the last axis touch every node. The same array as broadcasting each part to the whole
    lattice in turn (``tests/fast_paths/test_marginal_paths.py``)."""
    combined: np.ndarray = np.zeros((), dtype=dtype)
    for axis in range(len(shape)):
        combined = np.broadcast_to(combined[..., None], tuple(shape[:axis + 1])).copy()
        for marginal, part in parts.items():
            if max(marginal) == axis:
                view = [1] * (axis + 1)
                for j in marginal:
                    view[j] = shape[j]
                combine(combined, part.reshape(view), out=combined)
    return combined


def gumbel_max_marginals(sample: Dataset | CountedSample, columns: Sequence[str], k: int, scale: float,
                         cells: np.ndarray, more_bits: MoreBits, objective: Objective) -> tuple[Lattice, int, int]:
    """argmax over every lattice node g of the exact key ``scale · q_int(S, g) / (m·Δ_int) + G_g``
    for the ``marginals`` objective, by branch and bound (module docstring, :class:`MarginalSearch`):
    (lattice, chosen index, nodes scored exactly).

    The columns are searched in :func:`marginal_search_order` (any order gives the same argmax:
    each node keeps its own Gumbel cell, the lattice is only walked another way)."""
    objective = objective.for_columns(columns, sample.hierarchies)
    lattice = Lattice(tuple(columns), objective.candidate_heights(columns, sample.hierarchies))
    cells_of_sample = counted(sample, columns)  # counted once: the scorer reorders its columns
    order = marginal_search_order([sample.hierarchies[c] for c in columns], cells_of_sample)
    # the scorer's lattice is the searched one; to_searched[i]: the caller's index of searched node i
    scorer = MarginalScorer(cells_of_sample, [columns[j] for j in order], k, objective)
    to_searched = np.arange(lattice.size, dtype=np.int64).reshape([h + 1 for h in lattice.heights]) \
        .transpose(order).ravel()
    cells = np.asarray(cells, dtype=np.int64)[to_searched]
    search = MarginalSearch(scorer, scale, cells)
    search.run()
    denominator = scorer.objective.key_denominator(k)
    indices = np.array([index for index, _ in search.scored], dtype=np.int64)
    values = np.array([q for _, q in search.scored], dtype=object)
    chosen = exact_gumbel_argmax(to_searched[indices], values, cells[indices], scale, more_bits, denominator)
    return lattice, int(chosen), len(search.scored)


class MarginalSearch:
    """The branch and bound of :func:`gumbel_max_marginals` over the scorer's (searched) lattice,
    ``cells`` the Gumbel cells in that lattice's order (PROOF.md §7).

    Each node g has a floor F(g) ≤ Def(g) (:attr:`floor`), first the largest Def of its 2-column
    projections, then raised as the search learns: every table a visit makes (the sample projected
    on the block's columns, its last column at each level) is a node coarser than every node whose
    levels are at most the block's on those columns, whatever their other levels, and Def only
    grows as classes split. A block's bound is the largest over its nodes of the key with F(g) in
    place of Def(g), so it tightens as F rises; a block is opened only when that bound reaches the
    best lower key of a node scored exactly (:attr:`scored`, (index, q_int) pairs)."""

    def __init__(self, scorer: MarginalScorer, scale: float, cells: np.ndarray) -> None:
        self.scorer = scorer
        self.k = scorer.k
        self.scale = float(scale)
        self.denominator = scorer.objective.key_denominator(scorer.k)
        self.g_lo, self.g_hi = gumbel_enclosure(cells)
        # each node's key without its suppression term, in float: within a relative 2^-50 of the exact value
        partial = self.scale * (-scorer.generalization.astype(np.float64) / float(self.denominator))
        self.top = partial + self.g_hi
        #: w·Def in key units: ε1 · P · λ · W / D per unit of Def
        self.weight = self.scale * scorer.suppression_weight / float(self.denominator)
        #: a lower bound on Def(g) of every node, in the searched lattice's order (raised during the search)
        self.floor = scorer.deficit_floor.copy()
        self.heights = scorer.lattice.heights
        self.strides = [int(s) for s in scorer.lattice.strides]
        self._grid = self.floor.reshape([h + 1 for h in self.heights])
        # every float below is within this of its exact value: sums of two or three terms, each a few
        # ulp off, of at most the largest partial key, Gumbel end and cut (Def ≤ rows · k: each class
        # adds c·(k − c)⁺ ≤ c·k); the bounds are widened by it
        finite = np.isfinite(self.g_hi)
        magnitude = float(np.abs(partial).max(initial=0.0)) + float(np.abs(self.g_hi[finite]).max(initial=0.0))
        magnitude += self.weight * float(max(scorer.cells.n_rows, 1) * self.k)
        self.margin = ENCLOSURE_MARGIN * (1.0 + 2.0 * magnitude) + 1e-12 * magnitude
        self.best = -math.inf
        self.scored: list[tuple[int, int]] = []
        self._levels = [0] * scorer.tables.d

    def run(self) -> None:
        """Search the whole lattice (once)."""
        self._visit(0, self.scorer.projections, 0)

    def bounds(self, attribute: int, index: int, children: int, keys: np.ndarray | None = None) -> np.ndarray:
        """The upper keys of the first ``children`` child blocks (``attribute`` at levels 0, 1, …)
        of the block at ``index``: each the largest of its nodes' keys with F in place of Def, widened.
        ``keys``: those nodes' :meth:`keys`, when the caller has them with the floors as they are now."""
        block = self.strides[attribute]
        if keys is None:
            keys = self.keys(index, children * block)
        return keys.reshape(children, block).max(axis=1) + self.margin

    def keys(self, index: int, size: int) -> np.ndarray:
        """The keys of the nodes ``index`` .. ``index + size − 1`` with F in place of Def (not widened)."""
        return self.top[index:index + size] - self.weight * self.floor[index:index + size]

    def _raise_floor(self, attribute: int, found: list[int]) -> None:
        """``found[l]``: Def of the block's projection with ``attribute`` at level l, which is
        coarser than every node with columns 0..attribute − 1 at most the block's levels,
        ``attribute`` at most l, and any levels after: F of each such node is raised to it (Def
        falls as l rises, so the node at level l takes found[l])."""
        if not any(found):
            return
        box = tuple(slice(0, level + 1) for level in self._levels[:attribute]) + (slice(0, len(found)),)
        view = self._grid[box]
        after = len(self.heights) - attribute - 1
        np.maximum(view, np.asarray(found, dtype=np.int64).reshape((-1,) + (1,) * after), out=view)

    def _record(self, index: int, deficit: int) -> None:
        scorer = self.scorer
        q = -int(scorer.generalization[index]) - scorer.suppression_weight * deficit
        lo, _ = key_bounds(self.scale * (q / self.denominator), self.g_lo[index], self.g_hi[index])
        self.scored.append((index, q))
        self.best = max(self.best, float(lo))

    def _visit(self, attribute: int, source: ProjectedTables, index: int, node_keys: np.ndarray | None = None) -> None:
        """Search the block at ``index`` (columns 0..attribute − 1 fixed); ``node_keys``: its nodes'
        :meth:`keys`, when the parent made them with the floors as they still are."""
        block = self.strides[attribute]
        tables = self.scorer.tables
        # the children (blocks, or nodes at the last column) the floors cannot rule out; the
        # projection's table is made only for them
        reaching = np.flatnonzero(self.bounds(attribute, index, self.heights[attribute] + 1, node_keys) >= self.best)
        if not len(reaching):
            return
        last = int(reaching[-1])
        keys, counts = source.on(attribute)
        found = deficits_by_level(tables.run_heights(keys, attribute), counts, self.k, last) or [0] * (last + 1)
        self._raise_floor(attribute, found)
        if attribute == tables.d - 1:  # the children are nodes, their Def now known
            for level in reaching.tolist():
                self._record(index + level * block, found[level])
            return
        nodes = self.keys(index, (last + 1) * block)  # with the projection's Def in the floors
        upper = self.bounds(attribute, index, last + 1, nodes).tolist()
        ranked = sorted(reaching.tolist(), key=lambda level: -upper[level])
        for rank, level in enumerate(ranked):
            if upper[level] < self.best:
                break
            child = index + level * block
            if rank:  # the floors may have risen in the siblings searched before
                nodes = self.keys(child, block)
                if self.bounds(attribute, child, 1, nodes)[0] < self.best:
                    continue
            else:  # the first child's keys as just made: no floor has risen since
                nodes = nodes[level * block:(level + 1) * block]
            self._levels[attribute] = level
            self._visit(attribute + 1, source.raised(attribute, level), child, nodes)
        self._levels[attribute] = 0


class ProjectedTables:
    """The sample's tables for one block of the search (columns 0..p − 1 at fixed levels): for each
    m ≥ p, the sample projected on columns 0..m (the others at code 0), columns p..m at level 0.
    Each is made on first use from the parent block's by raising one column (a merge of sorted runs,
    :meth:`.tables.KeyedTables.raise_level`), so a block that is bounded and pruned never touches
    the tables of the columns after its own, which are the largest."""

    def __init__(self, tables: KeyedTables, parent: ProjectedTables | None = None, attribute: int = 0,
                 level: int = 0) -> None:
        self.tables = tables
        self.parent = parent
        self.attribute = attribute
        self.level = level
        self.made: dict[int, tuple[Keys, np.ndarray]] = {}

    def on(self, last: int) -> tuple[Keys, np.ndarray]:
        """The table projected on columns 0..last (sorted, merged)."""
        made = self.made.get(last)
        if made is None:
            if self.parent is None:
                made = self.tables.project(self.tables.base_keys, self.tables.base_counts, last + 1)
            else:
                made = self.parent.on(last)
                if self.level:
                    made = self.tables.raise_level(*made, self.attribute, 0, self.level)
            self.made[last] = made
        return made

    def raised(self, attribute: int, level: int) -> ProjectedTables:
        """The child block with ``attribute`` (this block's first free column) at ``level``."""
        return ProjectedTables(self.tables, self, attribute, level)


def marginal_search_order(hierarchies: Sequence[Hierarchy], sample: CountedSample | None = None) -> list[int]:
    """The order in which :func:`gumbel_max_marginals` branches on the columns: with the counted
    ``sample`` (its columns in the order of ``hierarchies``), the lowest entropy of the sample's
    values first, then fewest leaves, then as given; without it, fewest leaves first.

    Only the time depends on the order (each node keeps its own Gumbel cell). A column whose rows
    mostly share a value splits few classes, so the blocks that fix it early keep projections
    whose Def bounds stay close to their nodes', and the columns that split most (age) come last,
    where the projection is the node's own table. With the search's raised floors, at the
    default plan of ε = 1: Adult's sample 47–48 ms against 60–63 ms fewest leaves first, 1M rows
    121–123 ms against 146–152 ms (docs/performance.md). Read from the sample, the order is part
    of the running time only, which depends on the data anyway (docs/publish.md)."""
    leaves = [h.size(0) for h in hierarchies]
    if sample is None or sample.n_rows == 0:
        return sorted(range(len(hierarchies)), key=lambda j: leaves[j])
    entropy = []
    for j in range(len(hierarchies)):
        shares = np.bincount(sample.codes[:, j], weights=sample.counts.astype(np.float64))
        shares = shares[shares > 0] / shares.sum()
        entropy.append(float(-(shares * np.log(shares)).sum()))
    return sorted(range(len(hierarchies)), key=lambda j: (entropy[j], leaves[j]))
