"""Classic full-domain generalization: the searches over the lattice (no formal guarantee).

A node of the lattice (:class:`crowdsafe.anonymize.lattice.Lattice`) is one hierarchy level per
quasi-identifier; node B generalizes node A (A ≤ B) when every level of B is at least A's. A node
is *feasible* when, after its recoding, the rows in classes smaller than k — or failing
ℓ-diversity / t-closeness, when asked — are at most the suppression limit. Among feasible nodes
we want the one of least loss (a metric of :mod:`crowdsafe.metrics`; suppressed rows count as
fully generalized).

:func:`optimal_search` finds it exactly, in the spirit of Incognito (LeFevre et al. 2005) and
Flash (Kohlmayer et al. 2012):

- *monotonicity*: generalizing merges classes, so the rows in classes smaller than k can only
  shrink. A node meeting the k part of the limit has every generalization meeting it too, and
  a node missing it has every specialization missing it (ℓ and t with suppression are not
  monotone, so they are checked on each candidate and never predicted);
- *predictive tagging*: each evaluated node tags its whole up-set (feasible) or down-set
  (infeasible). An unknown node is resolved by a binary search along a chain of
  generalizations above it, so one evaluation near the top can settle thousands of nodes;
- *bounds*: the loss of a node is at least its loss without suppression (a suppressed row costs
  at least as much as any generalization of it), which for GCP, non-uniform entropy, precision
  and height is a sum of per-attribute terms that grows with every level. Nodes are visited in
  increasing order of that bound, and the search stops as soon as the bound reaches the best
  loss found. For discernibility, an evaluated node's Σ|E|² bounds all its generalizations.
- *roll-ups*: a node's class sizes are computed from the cached frequency table of its
  smallest evaluated specialization, not from the input: a few hundred rows instead of tens of
  thousands once the search is past the bottom of the lattice.

It returns the same optimum as brute force (tested on small lattices). :func:`greedy_search`
is the heuristic for lattices too big to search: bottom-up, one level at a time on the
attribute whose generalization loses least, until feasible; then, while the time budget lasts,
it tries to lower levels again.

Whichever search chose it, the scheme was chosen by looking at the data, so a release made
with it carries **no formal guarantee** (the safe pipeline chooses schemes differently).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from crowdsafe.anonymize.cells import EncodedCells, cell_table
from crowdsafe.anonymize.constraints import NO_CONSTRAINTS, SensitiveConstraints, classes_satisfying
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.anonymize.recoding import GeneralizationScheme
from crowdsafe.data import COUNT, Dataset, Hierarchy, packing
from crowdsafe.data.column_names import spare_name
from crowdsafe.errors import HierarchyError, ParameterError
from crowdsafe.number_text import quantity

Search = Literal["optimal", "greedy", "auto"]
SEPARABLE_METRICS = ("gcp", "entropy", "precision", "height")
SEARCH_METRICS = (*SEPARABLE_METRICS, "discernibility")
AUTO_OPTIMAL_NODES = 1_000_000  # above this many nodes, "auto" searches greedily
#: The largest lattice the optimal search is run on: it holds the level vector and tags of every
#: node (about 420 bytes a node: 0.44 GB at 2^20 nodes, two-valued columns without a schema), and
#: its running time grows with the lattice (over 5 minutes at 2^20 on 200 rows). Above it
#: ``search="optimal"`` is refused in one line; ``"auto"`` searches greedily from AUTO_OPTIMAL_NODES.
MAX_OPTIMAL_NODES = 1 << 22
DEFAULT_TIME_BUDGET = 30.0


# -- evaluating nodes ---------------------------------------------------------------------


def _group(codes: Sequence[np.ndarray], radices: Sequence[int], counts: np.ndarray
           ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Group rows by their codes: (codes of each group, rows per group, group of each row)."""
    n = len(counts)
    span = packing.span(radices)
    if span < 2.0**62:
        key = packing.pack(codes, radices)
        if span <= 4 * n + 1024:
            present = np.zeros(int(span), dtype=bool)
            present[key] = True
            distinct = np.flatnonzero(present)
            rank = np.cumsum(present) - 1
            ids = rank[key]
        else:
            distinct, ids = np.unique(key, return_inverse=True)
            ids = ids.ravel()
        grouped = packing.unpack(distinct, radices)
    else:
        stacked, ids = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
        ids = ids.ravel()
        grouped = [stacked[:, j] for j in range(stacked.shape[1])]
    sizes = np.bincount(ids, weights=counts, minlength=len(grouped[0]) if grouped else 0).astype(np.int64)
    return grouped, sizes, ids


@dataclass
class _Table:
    """A frequency table at some node: codes per column at that node's levels, and counts."""

    levels: tuple[int, ...]
    codes: list[np.ndarray]
    counts: np.ndarray


class RollUps:
    """Class sizes of lattice nodes, each computed from the smallest cached specialization.

    The cache keeps evaluated nodes' frequency tables up to ``budget`` rows in all (the input's
    table is always kept); when full, the largest tables are dropped first.
    """

    def __init__(self, base_codes: Sequence[np.ndarray], counts: np.ndarray,
                 hierarchies: Sequence[Hierarchy], budget: int | None = None) -> None:
        self.hierarchies = list(hierarchies)
        base = _Table(tuple(0 for _ in hierarchies), [c.astype(np.int64) for c in base_codes],
                      counts.astype(np.int64))
        self.tables = [base]
        self.budget = budget if budget is not None else max(50 * len(counts), 1 << 20)
        self.cached_rows = len(counts)
        self._levels = np.zeros((1, len(hierarchies)), dtype=np.int64)
        self._sizes = np.asarray([len(counts)])
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        self.evaluations = 0
        self.rows_scanned = 0

    def _map(self, column: int, low: int, high: int) -> np.ndarray:
        """Node codes at level ``low`` -> their ancestors at level ``high``."""
        key = (column, low, high)
        found = self._maps.get(key)
        if found is None:
            h = self.hierarchies[column]
            representative = np.empty(h.size(low), dtype=np.int64)
            representative[h.leaf_map(low)] = np.arange(h.size(0))
            found = h.leaf_map(high)[representative].astype(np.int64)
            self._maps[key] = found
        return found

    def table(self, levels: Sequence[int]) -> _Table:
        """The frequency table at ``levels`` (rolled up from the best cached specialization)."""
        levels = tuple(int(x) for x in levels)
        below = np.flatnonzero((self._levels <= np.asarray(levels)).all(axis=1))
        source = self.tables[int(below[np.argmin(self._sizes[below])])]
        if source.levels == levels:
            return source
        codes = [
            values if low == high else self._map(j, low, high)[values]
            for j, (values, low, high) in enumerate(zip(source.codes, source.levels, levels))
        ]
        radices = [h.size(level) for h, level in zip(self.hierarchies, levels)]
        grouped, sizes, _ = _group(codes, radices, source.counts)
        self.evaluations += 1
        self.rows_scanned += len(source.counts)
        result = _Table(levels, grouped, sizes)
        self._keep(result)
        return result

    def _keep(self, table: _Table) -> None:
        self.tables.append(table)
        self._levels = np.vstack([self._levels, np.asarray(table.levels, dtype=np.int64)])
        self._sizes = np.r_[self._sizes, len(table.counts)]
        self.cached_rows += len(table.counts)
        if self.cached_rows > self.budget:
            sizes = np.asarray([len(t.counts) for t in self.tables])
            sizes[0] = -1  # never drop the input's table
            drop = set(np.argsort(-sizes)[: max(1, len(self.tables) // 4)].tolist()) - {0}
            self.tables = [t for i, t in enumerate(self.tables) if i not in drop]
            self._levels = np.asarray([t.levels for t in self.tables], dtype=np.int64)
            self._sizes = np.asarray([len(t.counts) for t in self.tables])
            self.cached_rows = sum(len(t.counts) for t in self.tables)


@dataclass(frozen=True)
class NodeResult:
    """A fully evaluated node: feasibility, suppression and loss."""

    levels: tuple[int, ...]
    feasible: bool
    suppressed_rows: int
    loss: float


@dataclass
class LatticeResult:
    """The outcome of a lattice search."""

    columns: tuple[str, ...]
    levels: tuple[int, ...]
    loss: float
    metric: str
    search: str
    optimal: bool
    nodes: int
    evaluated: int
    scored: int
    seconds: float
    suppressed_rows: int
    notes: list[str] = field(default_factory=list)

    @property
    def scheme_levels(self) -> dict[str, int]:
        return dict(zip(self.columns, self.levels))

    def describe(self) -> dict[str, Any]:
        """What the search was (mode, metric, lattice size: fixed by the options and hierarchies),
        fit for a certificate. The chosen levels are :attr:`scheme_levels` (they show in the
        release); counts, timings and losses on the data are in :meth:`diagnostics`."""
        return {
            "search": self.search,
            "optimal": self.optimal,
            "metric": self.metric,
            "lattice_nodes": self.nodes,
        }

    def diagnostics(self) -> dict[str, Any]:
        """Exact facts about the search on the data (custodian-only: never in a certificate)."""
        return {
            "loss": self.loss,
            "nodes_evaluated": self.evaluated,
            "nodes_scored": self.scored,
            "seconds": self.seconds,
            "suppressed_rows": self.suppressed_rows,
            "notes": list(self.notes),
        }


class _Problem:
    """One search problem: the input, k, the limit, the constraints and the loss metric."""

    def __init__(self, dataset: Dataset, columns: Sequence[str], k: int, suppression_limit: float,
                 constraints: SensitiveConstraints, metric: str) -> None:
        from crowdsafe.metrics import FullDomainScorer

        if metric not in SEARCH_METRICS:
            raise ParameterError(
                f"the lattice search minimizes one of {', '.join(SEARCH_METRICS)}, not {metric!r}"
            )
        missing = [c for c in columns if c not in dataset.hierarchies]
        if missing:
            raise HierarchyError(
                f"quasi-identifier '{missing[0]}' has no hierarchy; full-domain generalization needs one "
                "per quasi-identifier"
            )
        self.columns = tuple(columns)
        self.k = k
        self.limit = suppression_limit
        self.constraints = constraints
        self.metric = metric
        self.hierarchies = [dataset.hierarchies[c] for c in columns]
        self.lattice = Lattice(self.columns, tuple(h.height for h in self.hierarchies))
        self.cells: EncodedCells = cell_table(dataset, columns)
        count = spare_name(columns, COUNT)  # a column may be named 'count'
        table = pl.DataFrame({c: self.cells.codes[:, j] for j, c in enumerate(columns)}).with_columns(
            pl.Series(count, self.cells.counts))
        self.scorer = FullDomainScorer(table, dict(zip(columns, self.hierarchies)), count=count)
        self.rows = int(self.cells.counts.sum())
        self.allowed = suppression_limit * self.rows
        self.rollups = RollUps([self.cells.codes[:, j] for j in range(len(columns))], self.cells.counts,
                               self.hierarchies)
        self.sensitive_cells: EncodedCells | None = None
        self.qi_row: np.ndarray | None = None
        if constraints.active:
            with_sensitive = cell_table(dataset, columns, constraints.attribute)
            # the QI-only cell of every (QI, sensitive) cell
            self.qi_row = self.cells.row_cell[_first_row(with_sensitive)]
            self.sensitive_cells = with_sensitive
        self.scored = 0

    def k_feasible(self, levels: Sequence[int]) -> tuple[bool, np.ndarray]:
        """Whether the k part of the suppression limit holds at ``levels``; and the class sizes."""
        sizes = self.rollups.table(levels).counts
        return int(sizes[sizes < self.k].sum()) <= self.allowed, sizes

    def evaluate(self, levels: Sequence[int], *, score_infeasible: bool = False) -> NodeResult:
        """Full evaluation: suppression (k, ℓ, t) and the loss (``inf`` for an infeasible node,
        unless ``score_infeasible``)."""
        levels = tuple(int(x) for x in levels)
        ids, sizes = self.scorer.classes(list(levels))
        failing = sizes < self.k
        if self.constraints.active:
            assert self.sensitive_cells is not None and self.qi_row is not None
            class_of = ids[self.qi_row]
            failing |= ~classes_satisfying(self.constraints, class_of, self.sensitive_cells.sensitive,  # type: ignore[arg-type]  # set with constraints
                                           len(sizes), self.sensitive_cells.counts.astype(float))
        suppressed = int(sizes[failing].sum())
        feasible = suppressed <= self.allowed
        if not feasible and not score_infeasible:
            return NodeResult(levels, False, suppressed, np.inf)
        self.scored += 1
        score = self.scorer.score(list(levels), k=self.k, suppressed=failing[ids], classes=(ids, sizes))
        loss = score.loss(self.metric)
        return NodeResult(levels, feasible, suppressed, float(loss))

    def separable_bounds(self) -> list[np.ndarray]:
        """Per column and level, that level's share of the loss without suppression.

        The loss without suppression of a node is the sum of its columns' shares (tested), and
        it is a lower bound of the node's loss with suppression.
        """
        d = len(self.columns)
        bottom = self.scorer.score([0] * d, k=1).loss(self.metric)
        shares = []
        for j, h in enumerate(self.hierarchies):
            values = np.zeros(h.height + 1)
            for level in range(1, h.height + 1):
                levels = [0] * d
                levels[j] = level
                values[level] = self.scorer.score(levels, k=1).loss(self.metric) - bottom
            shares.append(np.maximum.accumulate(values))
        shares[0] = shares[0] + bottom
        return shares


def _first_row(cells: EncodedCells) -> np.ndarray:
    where = np.empty(cells.n_cells, dtype=np.int64)
    where[cells.row_cell] = np.arange(len(cells.row_cell))
    return where


# -- the optimal search -------------------------------------------------------------------


UNKNOWN, FEASIBLE, INFEASIBLE = 0, 1, -1


class _Optimal:
    def __init__(self, problem: _Problem) -> None:
        self.p = problem
        self.lattice = problem.lattice
        self.nodes = self.lattice.nodes()
        self.status = np.zeros(len(self.nodes), dtype=np.int8)
        self.heights = np.asarray(self.lattice.heights)
        # at_least[j][l]: the nodes whose level of column j is >= l (for up-sets and down-sets)
        self.at_least = [np.stack([self.nodes[:, j] >= level for level in range(h + 2)])
                         for j, h in enumerate(self.lattice.heights)]

    def up_set(self, levels: np.ndarray) -> np.ndarray:
        region = self.at_least[0][levels[0]].copy()
        for j in range(1, len(levels)):
            region &= self.at_least[j][levels[j]]
        return region

    def down_set(self, levels: np.ndarray) -> np.ndarray:
        region = ~self.at_least[0][levels[0] + 1]
        for j in range(1, len(levels)):
            region &= ~self.at_least[j][levels[j] + 1]
        return region

    def _tag(self, index: int, feasible: bool) -> None:
        levels = self.nodes[index]
        if feasible:
            self.status[self.up_set(levels) & (self.status == UNKNOWN)] = FEASIBLE
        else:
            self.status[self.down_set(levels)] = INFEASIBLE

    def _check(self, index: int) -> bool:
        feasible, sizes = self.p.k_feasible(self.nodes[index])
        self._tag(index, feasible)
        self._on_sizes(index, sizes)
        return feasible

    def _on_sizes(self, index: int, sizes: np.ndarray) -> None:
        """Hook: discernibility bounds from class sizes."""

    def _chain(self, index: int) -> list[int]:
        """A chain of generalizations from ``index`` up to a node of known status (or the top)."""
        chain = [index]
        levels = [int(x) for x in self.nodes[index]]
        heights = self.lattice.heights
        strides = [int(x) for x in self.lattice.strides]
        position = index
        while levels != list(heights):
            # raise the column that is least generalized relative to its height
            j = min((levels[c] / max(heights[c], 1), c) for c in range(len(levels)) if levels[c] < heights[c])[1]
            levels[j] += 1
            position += strides[j]
            chain.append(position)
            if self.status[position] != UNKNOWN:
                break
        return chain

    def resolve(self, index: int) -> None:
        """Settle the k-feasibility of ``index`` by binary search along a chain above it."""
        chain = self._chain(index)
        if self.status[chain[-1]] == UNKNOWN and not self._check(chain[-1]):
            return  # the chain's top is infeasible, so is everything below it
        if self.status[chain[-1]] == INFEASIBLE:
            return
        low, high = 0, len(chain) - 1  # chain[high] is feasible
        while low < high and self.status[index] == UNKNOWN:
            middle = (low + high) // 2
            state = self.status[chain[middle]]
            feasible = self._check(chain[middle]) if state == UNKNOWN else state == FEASIBLE
            if feasible:
                high = middle
            else:
                low = middle + 1
        if self.status[index] == UNKNOWN:
            self._check(index)

    def run(self, bound: np.ndarray, separable: bool) -> NodeResult | None:
        order = np.argsort(bound, kind="stable")
        best: NodeResult | None = None
        best_loss = np.inf
        for index in order:
            index = int(index)
            if separable and bound[index] >= best_loss:
                break
            if self.bounds_at(index, bound) >= best_loss:
                continue
            if self.status[index] == UNKNOWN:
                self.resolve(index)
            if self.status[index] == INFEASIBLE:
                continue
            result = self.p.evaluate(self.nodes[index])
            if result.feasible and result.loss < best_loss:
                best, best_loss = result, result.loss
        return best

    def bounds_at(self, index: int, bound: np.ndarray) -> float:
        return float(bound[index])


class _OptimalDiscernibility(_Optimal):
    """Discernibility has no per-attribute bound; evaluated nodes bound their generalizations."""

    def __init__(self, problem: _Problem) -> None:
        super().__init__(problem)
        self.dynamic = np.zeros(len(self.nodes))

    def _on_sizes(self, index: int, sizes: np.ndarray) -> None:
        value = float((sizes.astype(np.float64) ** 2).sum())
        region = self.up_set(self.nodes[index])
        np.maximum(self.dynamic, np.where(region, value, 0.0), out=self.dynamic)

    def bounds_at(self, index: int, bound: np.ndarray) -> float:
        return float(self.dynamic[index])


def optimal_search(problem: _Problem) -> LatticeResult:
    """The feasible node of least loss (exact; see the module docstring)."""
    started = time.perf_counter()
    if problem.metric in SEPARABLE_METRICS:
        search: _Optimal = _Optimal(problem)
        shares = problem.separable_bounds()
        bound = sum(share[search.nodes[:, j]] for j, share in enumerate(shares))
        best = search.run(np.asarray(bound, dtype=float), separable=True)
    else:
        search = _OptimalDiscernibility(problem)
        height = search.nodes.sum(axis=1).astype(float)  # visit low nodes first
        best = search.run(height, separable=False)
    return _result(problem, best, "optimal", True, started)


def _result(problem: _Problem, best: NodeResult | None, search: str, optimal: bool, started: float,
            notes: list[str] | None = None) -> LatticeResult:
    if best is None:
        raise ParameterError(_no_feasible_node(problem))
    return LatticeResult(
        columns=problem.columns, levels=best.levels, loss=best.loss, metric=problem.metric, search=search,
        optimal=optimal, nodes=problem.lattice.size, evaluated=problem.rollups.evaluations,
        scored=problem.scored, seconds=time.perf_counter() - started, suppressed_rows=best.suppressed_rows,
        notes=notes or [],
    )


def _no_feasible_node(problem: _Problem) -> str:
    if problem.constraints.active:
        top = problem.evaluate(list(problem.lattice.heights), score_infeasible=True)
        if top.suppressed_rows == problem.rows:
            return (f"the whole table does not satisfy {problem.constraints.statement()}, so no "
                    "generalization can; relax ℓ or t, or choose another sensitive attribute")
    what = f"k = {problem.k}"
    if problem.constraints.active:
        c = problem.constraints
        what += "".join([f", ℓ = {c.l:g}" if c.l is not None else "", f", t = {c.t:g}" if c.t is not None else ""])
    return (
        f"no generalization of {', '.join(problem.columns)} reaches {what} within the suppression limit "
        f"of {problem.limit:.1%}; allow more suppression, lower the requirements, or use coarser hierarchies"
    )


# -- the greedy heuristic ------------------------------------------------------------------


def greedy_search(problem: _Problem, time_budget: float = DEFAULT_TIME_BUDGET) -> LatticeResult:
    """Bottom-up greedy search with a time budget (a heuristic: not necessarily optimal).

    From the bottom, repeatedly move to the direct generalization (one attribute one level up)
    of least loss, counting suppressed rows as fully generalized, until a feasible node is
    reached; then, while time remains, move to a feasible direct specialization of lower loss.
    If the budget runs out before a feasible node is found, the top node is used.
    """
    started = time.perf_counter()
    deadline = started + time_budget
    heights = np.asarray(problem.lattice.heights)
    notes: list[str] = []
    current = problem.evaluate([0] * len(heights))
    while not current.feasible:
        if time.perf_counter() > deadline:
            notes.append("time budget exhausted before a feasible node was found; the top node is used")
            current = problem.evaluate(list(heights))
            break
        candidates = []
        for j in np.flatnonzero(np.asarray(current.levels) < heights):
            levels = list(current.levels)
            levels[j] += 1
            candidates.append(problem.evaluate(levels, score_infeasible=True))
        if not candidates:
            break
        # the loss counts suppressed rows as fully generalized, except the height, which
        # ignores them: then fewer suppressed rows come first
        if problem.metric == "height":
            current = min(candidates, key=lambda r: (r.suppressed_rows, r.loss, r.levels))
        else:
            current = min(candidates, key=lambda r: (r.loss, r.levels))
    if not current.feasible:
        raise ParameterError(_no_feasible_node(problem))
    improved = True
    while improved and time.perf_counter() < deadline:
        improved = False
        for j in np.flatnonzero(np.asarray(current.levels) > 0):
            levels = list(current.levels)
            levels[j] -= 1
            candidate = problem.evaluate(levels)
            if candidate.feasible and candidate.loss < current.loss:
                current, improved = candidate, True
    if improved:
        notes.append("time budget ended the improvement phase")
    return _result(problem, current, "greedy", False, started, notes)


def _check_optimal_size(lattice: Lattice) -> None:
    """Refuse the optimal search on a lattice of more than :data:`MAX_OPTIMAL_NODES` nodes."""
    if lattice.size > MAX_OPTIMAL_NODES:
        raise ParameterError(
            f"the optimal lattice search would hold all {lattice.size:,} nodes of the lattice, more than "
            f"{MAX_OPTIMAL_NODES:,}; use the greedy search (search='greedy'), fewer quasi-identifiers (the qi "
            "parameter) or shorter hierarchies", parameter=("search", "qi"))


def lattice_search(
    dataset: Dataset,
    k: int,
    *,
    columns: Sequence[str] | None = None,
    suppression_limit: float = 0.0,
    constraints: SensitiveConstraints = NO_CONSTRAINTS,
    metric: str = "gcp",
    search: Search = "auto",
    time_budget: float = DEFAULT_TIME_BUDGET,
) -> tuple[GeneralizationScheme, LatticeResult]:
    """Choose a full-domain generalization scheme of ``dataset`` (see the module docstring)."""
    if search not in ("optimal", "greedy", "auto"):
        raise ParameterError(f"the lattice search is 'optimal', 'greedy' or 'auto', not {search!r}")
    if not (isinstance(time_budget, (int, float)) and time_budget > 0):
        raise ParameterError(f"the time budget must be a positive number of seconds, got {time_budget!r}")
    columns = list(columns) if columns is not None else dataset.quasi_identifiers
    if search == "optimal" and all(c in dataset.hierarchies for c in columns):  # from the heights alone
        _check_optimal_size(Lattice(tuple(columns), tuple(dataset.hierarchies[c].height for c in columns)))
    problem = _Problem(dataset, columns, k, suppression_limit, constraints, metric)
    if problem.rows < k:
        raise ParameterError(
            f"the table has {quantity(problem.rows, 'row')}, fewer than k = {k}: no class can hold k rows")
    if search == "auto":
        search = "optimal" if problem.lattice.size <= AUTO_OPTIMAL_NODES else "greedy"
    result = optimal_search(problem) if search == "optimal" else greedy_search(problem, time_budget)
    scheme = GeneralizationScheme({c: level for c, level in zip(columns, result.levels)},
                                  {c: dataset.hierarchies[c] for c in columns},
                                  name="optimal full-domain generalization" if result.optimal
                                  else "greedy full-domain generalization")
    return scheme, result
