"""Choosing a full-domain generalization scheme safely: the first step ``Am`` of the safe pipeline.

Two choosers, each with the safety class that Li, Qardaji and Su (2012) need for their theorems:

- **strongly safe** (:func:`fixed_scheme`): the levels are fixed without looking at the data,
  either given per attribute (``"age=2,education=1"``) or a named preset (:data:`PRESETS`) that
  depends only on the hierarchies' heights. Theorem 5 applies.
- **ε1-safe** (:func:`choose_scheme`): the exponential mechanism (McSherry and Talwar 2007)
  selects one node of the generalization lattice, scored on the *sample*. Theorem 6 applies, with
  the selection's ε1 added to the ε of the k-anonymization.

The score. The chooser optimises an objective from :mod:`.objectives` (``retained`` by default,
``loss``, ``discernibility``, ``classification`` with a target, ``entropy``); each but
``entropy`` is an exact integer q_int(S, g) = D · q(S, g) (``entropy``: *Real scores* below),
computed from the sample's frequency table alone, with a proved
sensitivity Δq and a known monotonicity (docs/objectives.md). The mechanism's key for node g is
ε1 · q_int / (m · Δ_int) + G_g, m = 1 for a monotone score and 2 otherwise; its integer
denominator is :meth:`~.objectives.Objective.key_denominator`. The candidates are every lattice
node, fixed by the hierarchies alone, less the nodes the objective excludes publicly (a
classification target stays at level 0).

*Exact sampling.* Node g wins with probability exp(ε1·q(S, g)/(m Δq))/Z, sampled as the argmax of
ε1·q(S, g)/(m Δq) + G_g with exact standard Gumbels G_g = −log(−log U_g), U_g uniform on (0, 1) given by
infinitely many random bits, of which only as many are drawn as the comparison needs: 53 per
node (so G_g is known to an interval, :func:`crowdsafe.randomness.gumbel_enclosure`), and 64 more
at a time for the few nodes whose key intervals still overlap the best one, compared in
``mpmath`` interval arithmetic with ε1 as the exact value of its float and the scores and
denominators exact integers (:func:`_refine_argmax`). The returned node is the argmax of the exact keys, so the distribution
is exactly the exponential mechanism's (no floating-point Gumbel error, no score rounding). The
branch and bound (:func:`gumbel_max_over_lattice`) skips a block of nodes only when an upper bound
of every key in it is below a lower bound of a scored key. No argmax over scores is ever taken
outside the mechanism, and nothing else about the sample is read before Apply; only the running
time and the number of random bits drawn depend on the data.

*Real scores.* An objective whose score involves logarithms (``entropy``,
:attr:`.objectives.Objective.exact` false) cannot be an exact integer. Every node is scored in
float64 with a rigorous bound on the absolute error (:func:`.objectives.entropy_error_bound`),
each key interval is widened by ε1 times that bound over the key's denominator, and the nodes
that still reach the best lower key are compared in :func:`_refine_argmax` with their scores
enclosed in ``mpmath`` interval arithmetic at each round's precision
(:meth:`_EntropyScorer.interval`, from exact integer weights). The float only decides which
nodes are compared exactly; the choice is still the argmax of the exact keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crowdsafe.anonymize.counted import CountedSample, counted
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.anonymize.objectives import (
    DENSE_CELLS_PER_ROW,
    Objective,
    classification_block_bound,
    classification_matrix_bound,
    classification_matrix_score,
    classification_score,
    classification_score_sorted,
    discernibility_score,
    entropy_bit_tables,
    entropy_error_bound,
    entropy_float_score,
    entropy_interval_score,
    exact_sums,
    level_units,
    make_objective,
    node_counts,
    weighted_score,
)
from crowdsafe.anonymize.recoding import GeneralizationScheme
from crowdsafe.data import Dataset, Hierarchy
from crowdsafe.errors import CrowdsafeError, HierarchyError, ParameterError
from crowdsafe.randomness import (
    CELL_BITS,
    ENCLOSURE_MARGIN,
    Randomness,
    gumbel_cells,
    gumbel_enclosure,
)

#: Weights are whole numbers of these units (see :mod:`.objectives`).
SCORE_UNIT_BITS = 20
SCORE_UNIT = 1 << SCORE_UNIT_BITS
#: A callable (node indices, round) -> one uint64 of fresh random bits per node: the next 64 bits
#: of those nodes' uniforms (see :func:`_refine_argmax`).
MoreBits = Callable[[np.ndarray, int], np.ndarray]
#: A callable (node index, interval context) -> an enclosure of the node's score q_D in that
#: context's interval arithmetic, at its precision (objectives whose scores are not integers).
ExactScore = Callable[[int, Any], Any]

#: Named data-independent schemes: level of each attribute from its hierarchy's height h.
PRESETS: dict[str, str] = {
    "none": "every attribute kept as it is (level 0)",
    "fine": "one level up from the leaves (level min(1, h))",
    "medium": "half-way up each hierarchy (level ceil(h / 2))",
    "coarse": "one level below the root (level max(h - 1, 0))",
}


def _preset_level(name: str, height: int) -> int:
    if name == "none":
        return 0
    if name == "fine":
        return min(1, height)
    if name == "medium":
        return (height + 1) // 2
    return max(height - 1, 0)


def fixed_scheme(dataset: Dataset, columns: Sequence[str], spec: str | Mapping[str, int]) -> GeneralizationScheme:
    """The strongly safe scheme ``spec``: a preset name, ``"col=level,..."`` text (optionally
    starting with a preset: ``"medium,age=1"``), or a mapping. Columns not named keep the
    preset's level (``none``, i.e. level 0, without a preset). The data is not read: only the
    hierarchies' heights and names.
    """
    hierarchies = {c: dataset.hierarchies[c] for c in columns if c in dataset.hierarchies}
    preset = "none"
    explicit: dict[str, int] = {}
    if isinstance(spec, Mapping):
        explicit = {str(c): level for c, level in spec.items()}
    else:
        for item in (part.strip() for part in str(spec).split(",")):
            if not item:
                continue
            if "=" not in item:
                if item not in PRESETS:
                    raise ParameterError(
                        f"unknown scheme preset {item!r}; use one of {', '.join(PRESETS)} or col=level pairs"
                    )
                preset = item
                continue
            column, _, level = item.partition("=")
            column, level = column.strip(), level.strip()
            try:
                explicit[column] = int(level)
            except ValueError:
                raise ParameterError(f"the level of '{column}' in the scheme must be a whole number, got {level!r}") from None
    for column, level in explicit.items():
        if column not in columns:
            raise ParameterError(
                f"the scheme names '{column}', which is not a quasi-identifier ({', '.join(columns)})"
            )
        hierarchy = hierarchies.get(column)
        height = hierarchy.height if hierarchy is not None else 0
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= height:
            raise HierarchyError(
                f"the scheme asks level {level!r} of '{column}', whose hierarchy has levels 0..{height}"
            )
    levels = {c: explicit.get(c, _preset_level(preset, hierarchies[c].height if c in hierarchies else 0))
              for c in columns}
    return GeneralizationScheme(levels, hierarchies, name=f"fixed scheme ({_scheme_text(levels)})")


def _scheme_text(levels: Mapping[str, int]) -> str:
    return ", ".join(f"{c}={level}" for c, level in levels.items())


def node_penalties(hierarchy: Hierarchy) -> list[np.ndarray]:
    """NCP of every node at every level, from the hierarchy alone (never from the data).

    Numbers and dates: the width of the node's leaf range over the width of all leaves; other
    values (and a hierarchy whose leaves are all one number): (leaves under the node − 1) over
    (all leaves − 1). Level 0 costs 0, the root 1.
    """
    total_leaves = hierarchy.size(0)
    penalties = []
    numeric = hierarchy.is_numeric
    width = 0.0
    if numeric:
        bottom = hierarchy.ranges(0)
        width = float(np.nanmax(bottom[:, 1]) - np.nanmin(bottom[:, 0])) if np.isfinite(bottom).any() else 0.0
    for level in range(hierarchy.height + 1):
        if level == 0:
            penalties.append(np.zeros(hierarchy.size(0)))
            continue
        by_leaves = (hierarchy.leaf_counts(level) - 1) / max(total_leaves - 1, 1)
        if numeric and width > 0:
            spans = hierarchy.ranges(level)
            by_range = (spans[:, 1] - spans[:, 0]) / width
            cost = np.where(np.isfinite(by_range), by_range, by_leaves)
        else:
            cost = by_leaves
        penalties.append(np.clip(cost.astype(np.float64), 0.0, 1.0))
    return penalties


@dataclass(frozen=True)
class SchemeChoice:
    """The outcome of the ε1-DP selection: the scheme and what the mechanism was."""

    scheme: GeneralizationScheme
    epsilon1: float
    candidates: int
    sensitivity: float
    utility_loss_bound: float  # with probability 0.95 the chosen score is within this of the best
    scored: int | None = 0  # nodes scored exactly (a data-dependent diagnostic: custodian-only, not in describe())
    objective: Objective = field(default_factory=lambda: Objective("retained"))
    k: int = 2

    def describe(self) -> dict[str, Any]:
        return {
            "chooser": ("exponential mechanism over the generalization lattice, sampled exactly "
                        "(Gumbel-max with exact Gumbels by interval refinement; "
                        + ("exact integer scores)" if self.objective.exact else
                           "real scores bounded in float and enclosed in interval arithmetic)")),
            "epsilon1": self.epsilon1,
            "candidates": self.candidates,
            **self.objective.describe(self.k),
            "utility_loss_bound_95": self.utility_loss_bound,
            "levels": dict(self.scheme.levels),
        }


def lattice_scores(sample: Dataset | CountedSample, columns: Sequence[str], k: int,
                   objective: Objective | None = None) -> tuple[Lattice, np.ndarray]:
    """q_int(S, g) (:mod:`.objectives`), exact, of every candidate node g of the lattice of
    ``columns`` on ``sample`` (a column the objective fixes has height 0 in the lattice).

    Depth-first over the columns, each node's frequency table rolled up from the node one level
    below it. Node i of the returned lattice has ``scores[i]`` (an object array of Python ints
    when q_int could pass 2^63; float64 for an objective with real scores, ``entropy``, within
    :func:`~.objectives.entropy_error_bound` of the exact value). The mechanism uses it for
    objectives without a branch and bound (:func:`gumbel_max_over_lattice` returns the same
    choice for the others).
    """
    objective = (objective or Objective("retained")).for_columns(columns, sample.hierarchies)
    if not objective.exact:
        scorer = _EntropyScorer(sample, columns, k, objective)
        return scorer.lattice, scorer.scores()
    heights = objective.candidate_heights(columns, sample.hierarchies)
    lattice = Lattice(tuple(columns), heights)
    tables = _KeyedTables(sample, columns, objective, k)
    scores = np.zeros(lattice.size, dtype=object if tables.wide else np.int64)
    strides = lattice.strides
    levels = [0] * tables.d

    def visit(attribute: int, keys: np.ndarray, counts: np.ndarray, index: int) -> None:
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


def _tree_order(hierarchy: Hierarchy) -> list[np.ndarray]:
    """Per level, a renumbering of the hierarchy's nodes in the order of a depth-first walk of the
    tree (siblings in their code order). In these codes every map from a level to a higher one is
    non-decreasing, so raising the last column of a sorted table leaves it sorted."""
    ranks = [np.arange(hierarchy.size(hierarchy.height), dtype=np.int64)]
    for level in range(hierarchy.height - 1, -1, -1):
        parent_rank = ranks[0][np.asarray(hierarchy.parents[level], dtype=np.int64)]
        rank = np.empty(len(parent_rank), dtype=np.int64)
        rank[np.argsort(parent_rank, kind="stable")] = np.arange(len(parent_rank), dtype=np.int64)
        ranks.insert(0, rank)
    return ranks


def _merge_sorted(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum the counts of equal neighbours in sorted ``keys``: the frequency table, in one pass."""
    if len(keys) == 0:
        return keys, counts
    first = np.empty(len(keys), dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if len(starts) == len(keys):
        return keys, counts
    running = np.cumsum(counts)
    before = running[starts[1:] - 1]  # the running total before each group after the first
    sums = np.empty(len(starts), dtype=running.dtype)
    sums[:-1] = before
    sums[-1] = running[-1]
    sums[1:] -= before
    return keys[starts], sums


def _key_bits(hierarchies: Sequence[Hierarchy]) -> list[int]:
    return [max(int(h.size(0) - 1).bit_length(), 1) for h in hierarchies]


def lattice_fits(hierarchies: Sequence[Hierarchy]) -> bool:
    """Whether the selection can score the lattice of these hierarchies (their leaf codes fit one
    64-bit key): decided from the hierarchies alone, so a caller can refuse before any charge."""
    return sum(_key_bits(hierarchies)) <= 62


class _KeyedTables:
    """Frequency tables of a sample as one int64 key per distinct tuple (the columns' codes in bit
    fields, first column most significant), sorted by key; level-0 sizes bound the codes at every
    level.

    Node codes are renumbered in tree order (:func:`_tree_order`), so a table stays sorted when its
    last column is raised (a linear merge of neighbours, :meth:`raise_last`) and a projection on
    the first columns is also a linear merge (:meth:`project`); raising an inner column
    (:meth:`raise_level`) needs one stable sort, which merges already sorted runs.
    """

    def __init__(self, sample: Dataset | CountedSample, columns: Sequence[str], objective: Objective | None = None,
                 k: int = 2) -> None:
        self.objective = objective or Objective("retained")
        self.k = int(k)
        self.hierarchies = [sample.hierarchies[c] for c in columns]
        self.d = len(columns)
        #: candidate heights: a column the objective fixes (the target) has height 0
        self.heights = self.objective.candidate_heights(columns, sample.hierarchies)
        # bit fields: column j's code is (key >> shift[j]) & mask[j], the first column highest
        self.bits = _key_bits(self.hierarchies)
        if sum(self.bits) > 62:
            raise ParameterError("too many quasi-identifier values to score the lattice; use fewer quasi-identifiers")
        self.shifts = np.r_[np.cumsum(self.bits[::-1])[::-1][1:], 0].astype(np.int64)
        self.masks = [np.int64((1 << b) - 1) for b in self.bits]
        self.steps: list[list[np.ndarray]] = []  # steps[j][l]: tree code at level l -> its parent's at l + 1
        self.penalties: list[list[np.ndarray]] = []  # penalties[j][l][tree code]: the node's units
        leaf_ranks = []
        for hierarchy in self.hierarchies:
            ranks = _tree_order(hierarchy)
            leaf_ranks.append(ranks[0])
            steps = []
            for level in range(hierarchy.height):
                step = np.empty(hierarchy.size(level), dtype=np.int64)
                step[ranks[level]] = ranks[level + 1][np.asarray(hierarchy.parents[level], dtype=np.int64)]
                steps.append(step)
            self.steps.append(steps)
            penalties = []
            units = level_units(self.objective, hierarchy, self.d) if self.objective.weighted else \
                [np.zeros(hierarchy.size(level), dtype=np.int64) for level in range(hierarchy.height + 1)]
            for rank, penalty in zip(ranks, units):
                in_tree_order = np.empty(len(penalty), dtype=np.int64)
                in_tree_order[rank] = penalty
                penalties.append(in_tree_order)
            self.penalties.append(penalties)
        self._maps: dict[tuple[int, int, int], np.ndarray] = {}
        cells = counted(sample, columns)  # a Dataset is counted here; the Spark engine passes its counts
        # |q_int| ≤ 2^20 · k · rows (the weighted objectives; 10k² · rows for discernibility): past
        # 2^63 the sums are taken in Python integers (exact, slow; never refused, so the sample's
        # size cannot show in an error)
        self.wide = SCORE_UNIT * 10 * self.k * self.k * max(cells.n_rows, 1) >= 2**63
        # classification: the target's key field, lowest bits when the target is the last column
        self.target = columns.index(self.objective.target) if self.objective.target is not None else None
        keys = np.zeros(cells.n_cells, dtype=np.int64)
        for j in range(self.d):
            keys |= leaf_ranks[j][cells.codes[:, j]] << self.shifts[j]
        order = np.argsort(keys)
        self.base_keys = keys[order]
        self.base_counts = cells.counts[order].astype(np.int64)
        # a count is at most the sample's size: when it fits beside the key bits, raise_level
        # sorts (key, count) packed in one int64 (equal keys' counts are summed, so their order
        # among themselves does not matter)
        count_bits = max(int(cells.n_rows).bit_length(), 1)
        self.count_bits = count_bits if sum(self.bits) + count_bits <= 63 else 0

    def _map(self, attribute: int, low: int, high: int) -> np.ndarray:
        """Tree codes at level ``low`` of ``attribute`` -> their ancestors' at ``high`` (cached)."""
        cached = self._maps.get((attribute, low, high))
        if cached is None:
            cached = np.arange(self.hierarchies[attribute].size(low), dtype=np.int64)
            for level in range(low, high):
                cached = self.steps[attribute][level][cached]
            self._maps[(attribute, low, high)] = cached
        return cached

    def code(self, keys: np.ndarray, attribute: int) -> np.ndarray:
        """The code of ``attribute`` in each key."""
        code = keys >> self.shifts[attribute]
        code &= self.masks[attribute]
        return code

    def _raised_keys(self, keys: np.ndarray, attribute: int, low: int, high: int) -> np.ndarray:
        shift = self.shifts[attribute]
        raised = self._map(attribute, low, high)[self.code(keys, attribute)]
        raised <<= shift
        raised |= keys & ~(self.masks[attribute] << shift)
        return raised

    def raise_level(self, keys: np.ndarray, counts: np.ndarray, attribute: int, low: int,
                    high: int) -> tuple[np.ndarray, np.ndarray]:
        """The table with ``attribute`` raised from level ``low`` to level ``high``."""
        raised = self._raised_keys(keys, attribute, low, high)
        if self.count_bits:  # the counts ride in the low bits: one plain sort, no gathers
            raised <<= self.count_bits
            raised |= counts
            raised.sort()
            counts = raised & np.int64((1 << self.count_bits) - 1)
            raised >>= self.count_bits
            return _merge_sorted(raised, counts)
        order = np.argsort(raised, kind="stable")  # sorted runs, one per old code: a merge
        return _merge_sorted(raised[order], counts[order])

    def raise_last(self, keys: np.ndarray, counts: np.ndarray, attribute: int, low: int,
                   high: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`raise_level` for a table whose columns after ``attribute`` are all code 0 (a
        projection on columns 0..attribute): the raised keys are still sorted."""
        return _merge_sorted(self._raised_keys(keys, attribute, low, high), counts)

    def level_bounds(self, keys: np.ndarray, counts: np.ndarray, attribute: int, levels: Sequence[int],
                     k: int) -> np.ndarray:
        """:meth:`score` (with ``prefix = attribute + 1``) of a projection on columns 0..attribute,
        with ``attribute`` (at level 0 in the table) raised to each of its levels. Each level's
        table is rolled up from the one below it (``attribute`` is the last column of the
        projection, so every roll-up is a linear merge), and the tables shrink as they rise."""
        height = self.heights[attribute]
        bounds = np.empty(height + 1, dtype=object if self.wide else np.int64)
        at = [*levels[:attribute], 0]
        for level in range(height + 1):
            if level:
                keys, counts = self.raise_last(keys, counts, attribute, level - 1, level)
            at[attribute] = level
            bounds[level] = self.score(keys, counts, at, k, prefix=attribute + 1)
        return bounds

    def project(self, keys: np.ndarray, counts: np.ndarray, prefix: int) -> tuple[np.ndarray, np.ndarray]:
        """The table projected on its first ``prefix`` columns (the others set to code 0)."""
        if prefix == self.d:
            return keys, counts
        return _merge_sorted(keys & ~((np.int64(1) << self.shifts[prefix - 1]) - 1), counts)

    def score(self, keys: np.ndarray, counts: np.ndarray, levels: Sequence[int], k: int | None = None,
              prefix: int | None = None) -> int:
        """q_int (exact, :mod:`.objectives`) of the table at ``levels``.

        With ``prefix`` (weighted objectives only), of a table projected on its first ``prefix``
        columns, the other columns' penalty units taken as 0: an upper bound on q_int of every
        node that agrees with ``levels`` on those columns (each class of such a node lies in one
        class F of the projection, its weight is at most F's, and c · min(c, k) is superadditive).
        Integer arithmetic only: the classes' units summed over the columns first (one gather per
        column), then one dot product.
        """
        k = self.k if k is None else int(k)
        name = self.objective.name
        if name == "discernibility":
            return discernibility_score(counts, k, self.wide)
        if name == "classification":
            target = self.target
            assert target is not None
            assert prefix is None  # its bounds are block_bound's
            if target == self.d - 1:  # classes G contiguous: one pass
                return self.block_bound(keys, counts, self.d - 1, k)
            qi_keys = keys & ~(self.masks[target] << self.shifts[target])
            return classification_score(qi_keys, self.code(keys, target), counts, k)
        if name not in ("retained", "loss"):
            raise ParameterError(f"the selection cannot score the objective {name!r}")
        d = self.d if prefix is None else prefix
        units: np.ndarray | None = None
        for j in range(d):
            if levels[j]:
                penalty = self.penalties[j][levels[j]][self.code(keys, j)]
                if units is None:
                    units = penalty
                else:
                    units += penalty
        return weighted_score(units, counts, k, self.wide)

    def block_bound(self, keys: np.ndarray, counts: np.ndarray, fixed: int, k: int) -> int:
        """``classification`` with the target as the last column: an upper bound on q_int of every
        node that agrees with this table on its first ``fixed`` columns and has the others at any
        level (the table has them at level 0), :func:`~.objectives.classification_block_bound`;
        with every quasi-identifier fixed (``fixed`` ≥ d − 1), the node's q_int itself. One pass
        over the sorted table: the rows of a class are contiguous, and so are those of a projection
        on leading columns."""
        target = self.d - 1
        assert self.target == target
        if len(keys) == 0:
            return 0
        target_codes = keys & self.masks[target]
        fine_starts = _run_starts(keys >> self.bits[target])
        if fixed >= target:
            return classification_score_sorted(counts, target_codes, fine_starts, k)
        if fixed == 0:
            coarse_of_row = np.zeros(len(keys), dtype=np.int64)
        else:
            first = np.zeros(len(keys), dtype=bool)
            first[_run_starts(keys >> self.shifts[fixed - 1])] = True
            coarse_of_row = np.cumsum(first) - 1
        return classification_block_bound(counts, target_codes, fine_starts, coarse_of_row,
                                          int(coarse_of_row[-1]) + 1, self.hierarchies[target].size(0), k)

    def children(self, keys: np.ndarray, counts: np.ndarray, attribute: int, levels: Sequence[int],
                 k: int) -> tuple[np.ndarray, bool, dict[int, tuple[np.ndarray, np.ndarray]]]:
        """The branch and bound's step at ``attribute`` (a table with the earlier columns at
        ``levels`` and the others at level 0): for each level of ``attribute``, an upper bound on
        q_int of the nodes below it; whether those bounds are the nodes' own q_int (each child is
        a single node, scored); and the child tables made on the way, by level (the others are
        made only for the children visited).

        Both kinds of bound come from the projection on columns 0..attribute, rolled up through
        the levels of ``attribute`` (its last column, so each roll-up is a linear merge, and the
        projections are small): weighted objectives score it (:meth:`level_bounds`);
        ``classification`` (target last) carries c_G'y and R_G' of
        :func:`~.objectives.classification_block_bound` through the roll-ups, both sums over the
        classes merged. A target with many values falls back to the bound of each child's own
        table (:meth:`block_bound`)."""
        if self.objective.name != "classification":
            bounds = self.level_bounds(*self.project(keys, counts, attribute + 1), attribute, levels, k)
            return bounds, attribute + 1 == self.d, {0: (keys, counts)}
        target = self.d - 1
        exact = attribute + 1 >= target
        made = {0: (keys, counts)}
        values = self.hierarchies[target].size(0)
        coarse_keys = keys >> self.shifts[attribute]  # columns 0..attribute, ``attribute`` lowest
        coarse_starts = _run_starts(coarse_keys)
        if len(coarse_starts) * values > DENSE_CELLS_PER_ROW * len(keys):
            for level in range(1, self.heights[attribute] + 1):
                made[level] = self.raise_level(*made[level - 1], attribute, level - 1, level)
            return np.array([self.block_bound(*made[level], attribute + 1, k) for level in sorted(made)],
                            dtype=np.int64), exact, made
        first = np.zeros(len(keys), dtype=bool)
        first[coarse_starts] = True
        coarse_of_row = np.cumsum(first) - 1
        fine_starts = _run_starts(keys >> self.bits[target])
        majority = exact_sums(coarse_of_row[fine_starts], np.maximum.reduceat(counts, fine_starts),
                              len(coarse_starts))
        by_target = exact_sums(coarse_of_row * values + (keys & self.masks[target]), counts,
                               len(coarse_starts) * values).reshape(-1, values)
        group_keys = coarse_keys[coarse_starts]
        mask = self.masks[attribute]
        bounds = np.empty(self.heights[attribute] + 1, dtype=np.int64)
        for level in range(self.heights[attribute] + 1):
            if level:  # tree-ordered codes: the raised keys stay sorted
                group_keys = (group_keys & ~mask) | self._map(attribute, level - 1, level)[group_keys & mask]
                starts = _run_starts(group_keys)
                group_keys = group_keys[starts]
                by_target = np.add.reduceat(by_target, starts, axis=0)
                majority = np.add.reduceat(majority, starts)
            bounds[level] = classification_matrix_score(by_target, k) if exact else \
                classification_matrix_bound(by_target, majority, k)
        return bounds, exact, made


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal neighbours starts in ``values`` (non-empty)."""
    first = np.empty(len(values), dtype=bool)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return np.flatnonzero(first)


def _merge_sorted_sums(keys: np.ndarray, counts: np.ndarray, lost: np.ndarray,
                       float_counts: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_merge_sorted` carrying a float column ``lost`` summed with the counts (bincount
    over the group numbers: sums of non-negative terms in order). ``float_counts``: the counts
    are summed in float64 too, exact because every sum is below 2^53."""
    if len(keys) == 0:
        return keys, counts, lost
    first = np.empty(len(keys), dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if len(starts) == len(keys):
        return keys, counts, lost
    group = np.cumsum(first) - 1
    lost = np.bincount(group, weights=lost, minlength=len(starts))
    if float_counts:
        counts = np.bincount(group, weights=counts, minlength=len(starts)).astype(np.int64)
    else:
        counts = np.add.reduceat(counts, starts)
    return keys[starts], counts, lost


class _EntropyScorer:
    """The ``entropy`` objective (:mod:`.objectives`) on every node of the lattice of ``columns``:
    float64 scores q_D with a rigorous error bound (:attr:`error`), and an interval enclosure of
    any one node's exact q_D (:meth:`interval`).

    Float path: depth-first over the columns as :func:`lattice_scores`, each table carrying per
    tuple its bits lost so far, L = Σ over its rows of h_j for the columns already raised. A
    column's h_j depends on each row's leaf, so at depth j (column j still at level 0 in the
    table) every level l of j adds counts · h_j(leaf, l) and rolls the table up from level 0 (one
    stable sort, counts and L summed). At a node, L per class gives q_D
    (:func:`~.objectives.entropy_float_score`). NumPy throughout; no loop over rows or tuples.
    """

    def __init__(self, sample: Dataset | CountedSample, columns: Sequence[str], k: int, objective: Objective) -> None:
        self.objective = objective.for_columns(columns, sample.hierarchies)
        self.k = int(k)
        self.columns = tuple(columns)
        heights = self.objective.candidate_heights(columns, sample.hierarchies)
        self.lattice = Lattice(self.columns, heights)
        self.tables = tables = _KeyedTables(sample, columns, self.objective, k)
        self.leaves = [h.size(0) for h in tables.hierarchies]
        self.rows = int(tables.base_counts.sum())
        # per column: c_j(v) for every leaf (tree codes), and each leaf's node at every level
        self.leaf_codes = [tables.code(tables.base_keys, j) for j in range(tables.d)]
        self.marginals = []
        for j in range(tables.d):
            marginal = np.zeros(self.leaves[j], dtype=np.int64)
            np.add.at(marginal, self.leaf_codes[j], tables.base_counts)
            self.marginals.append(marginal)
        self.ancestors = [[tables._map(j, 0, level) for level in range(h.height + 1)]
                          for j, h in enumerate(tables.hierarchies)]
        self.bits, caps = entropy_bit_tables(self.marginals, self.ancestors, self.leaves, self.rows)
        self.cap = float(sum(caps))
        self.error = entropy_error_bound(len(tables.base_keys), tables.d, self.rows, self.k, self.cap)
        self._weights: dict[tuple[int, ...], tuple[int, list]] = {}

    def _raise(self, keys: np.ndarray, counts: np.ndarray, lost: np.ndarray, attribute: int,
               level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The table with ``attribute`` (at level 0) raised to ``level``, its h added to ``lost``.
        The last column is in the keys' lowest bits and tree codes keep order, so raising it
        leaves a sorted table sorted (a linear merge); any other column needs one stable sort."""
        tables = self.tables
        lost = lost + counts * self.bits[attribute][level][tables.code(keys, attribute)]
        raised = tables._raised_keys(keys, attribute, 0, level)
        small = self.rows < 2**53
        if attribute == tables.d - 1:
            return _merge_sorted_sums(raised, counts, lost, small)
        order = np.argsort(raised, kind="stable")
        return _merge_sorted_sums(raised[order], counts[order], lost[order], small)

    def scores(self) -> np.ndarray:
        """Float q_D of every node, in the lattice's order (within :attr:`error` of the exact)."""
        tables, k, cap = self.tables, self.k, self.cap
        heights = self.lattice.heights
        strides = self.lattice.strides
        scores = np.zeros(self.lattice.size, dtype=np.float64)

        def visit(attribute: int, keys: np.ndarray, counts: np.ndarray, lost: np.ndarray, index: int) -> None:
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
        keys = np.zeros(len(tables.base_keys), dtype=np.int64)
        for j, level in enumerate(levels):
            keys |= self.ancestors[j][level][self.leaf_codes[j]] << tables.shifts[j]
        _, classes = np.unique(keys, return_inverse=True)
        # every sum below is at most k · rows: int64 when that fits, else Python integers
        exact_type = np.int64 if self.k * max(self.rows, 1) < 2**62 else object
        counts = tables.base_counts.astype(exact_type)
        sizes = np.zeros(int(classes.max(initial=-1)) + 1, dtype=exact_type)
        np.add.at(sizes, classes, counts)
        kept = np.minimum(sizes, k)
        suppressed = int((sizes * (k - kept)).sum())
        per_row = kept[classes] * counts  # min(|E|, k) times the tuple's count
        weights = []
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


def _key_bounds(x: np.ndarray | float, g_lo: np.ndarray | float, g_hi: np.ndarray | float):
    """Float (lo, hi) enclosing x_exact + G for x = the float product scale · q (a few ulp off the
    exact product) and G in [g_lo, g_hi]: the sums widened outward by 1e-9·(1 + |x| + |G|)."""
    lo = x + g_lo
    hi = x + g_hi
    lo = lo - ENCLOSURE_MARGIN * (1.0 + np.abs(x) + np.abs(g_lo))
    hi = hi + ENCLOSURE_MARGIN * (1.0 + np.abs(x) + np.abs(g_hi))
    return lo, hi


def exact_gumbel_argmax(indices: np.ndarray, scores: np.ndarray, cells: np.ndarray, scale: float,
                        more_bits: MoreBits, denominator: int = SCORE_UNIT, score_error: float = 0.0,
                        exact_score: ExactScore | None = None) -> int:
    """argmax over ``indices`` of the exact keys scale · scores/denominator + G, G = −log(−log U) with U
    in [cell/2^53, (cell + 1)/2^53) refined by ``more_bits``: the nodes whose float key interval
    cannot reach the best lower key are dropped, the rest go to :func:`_refine_argmax`.

    Scores are exact integers, unless ``exact_score`` is given: then ``scores`` are floats within
    ``score_error`` of the exact ones (each key interval is widened by scale · score_error /
    denominator, with a relative margin), and ``exact_score(index, iv)`` encloses the exact score
    of a remaining node for the refinement."""
    indices = np.asarray(indices, dtype=np.int64)
    scores = np.asarray(scores)  # int64, or Python ints (object) past 2^63, or float64 (real scores)
    cells = np.asarray(cells, dtype=np.int64)
    g_lo, g_hi = gumbel_enclosure(cells)
    lo, hi = _key_bounds(scale * (scores.astype(np.float64) / denominator), g_lo, g_hi)
    if exact_score is not None:
        spread = (1.0 + 1e-6) * float(scale) * float(score_error) / float(denominator)
        lo, hi = lo - spread, hi + spread
    keep = hi >= lo.max()
    if keep.sum() == 1:
        return int(indices[keep][0])
    return _refine_argmax(indices[keep], scores[keep], cells[keep], scale, more_bits, denominator, exact_score)


#: Refinement rounds before giving up: each round narrows every contender's key interval about
#: 2^64-fold, so keys still overlapping after r rounds have probability of order 2^(-64 r).
_MAX_ROUNDS = 64


def _refine_argmax(indices: np.ndarray, scores: np.ndarray, cells: np.ndarray, scale: float,
                   more_bits: MoreBits, denominator: int = SCORE_UNIT, exact_score: ExactScore | None = None) -> int:
    """The exact argmax of scale · scores/denominator + G among contenders whose float intervals overlap.

    Each round appends 64 fresh bits (``more_bits(indices, round)``) to each contender's uniform,
    U ∈ [c/2^b, (c + 1)/2^b) with b = 53 + 64·round, and encloses G = −log(−log U) and the key in
    ``mpmath`` interval arithmetic at more than b bits (outward rounding; ``scale`` is its float's
    exact value, the score an exact integer). It stops when one lower key exceeds every other
    upper key; contenders whose upper key is below the best lower key are dropped. The bits drawn
    are those of U itself, so the result is argmax of the exact keys: exactly exp(scale·q)/Z.
    A real score (``exact_score`` given; ``scores`` then only size the precision) is enclosed anew
    each round at that round's precision, so its interval narrows with the Gumbels' and ties in
    the score are still decided by the bits.
    """
    from mpmath.ctx_iv import MPIntervalContext  # imported only on this rare path

    iv = MPIntervalContext()  # a private context: its precision is not mpmath's global one
    alive = [(int(i), int(q) if exact_score is None else int(abs(float(q))) + 1, int(c))
             for i, q, c in sorted(zip(indices, scores, cells))]
    bits = CELL_BITS
    for round_ in range(_MAX_ROUNDS):
        extra = np.asarray(more_bits(np.array([i for i, _, _ in alive], dtype=np.int64), round_), dtype=np.uint64)
        alive = [(i, q, (c << 64) | int(e)) for (i, q, c), e in zip(alive, extra)]
        bits += 64
        # the cell ends, the score, the denominator and the scale (53 bits) are exact at this precision
        iv.prec = bits + 128 + max(int(abs(q)).bit_length() for _, q, _ in alive) + int(denominator).bit_length()
        exact_scale = iv.mpf(float(scale))
        keys = []
        for i, q, c in alive:
            u = iv.mpf([c, c + 1]) / 2**bits  # [c/2^b, (c + 1)/2^b], exact ends
            score = q if exact_score is None else exact_score(i, iv)
            keys.append(exact_scale * score / denominator - iv.log(-iv.log(u)))
        best = max(range(len(alive)), key=lambda n: keys[n].a)
        floor = keys[best].a
        if all(keys[n].b < floor for n in range(len(alive)) if n != best):
            return alive[best][0]
        alive = [a for a, key in zip(alive, keys) if key.b >= floor]
    raise CrowdsafeError("the exponential mechanism's exact comparison did not separate two keys "
                         f"after {_MAX_ROUNDS} rounds of 64 bits (probability of order 2^-4096)")


def gumbel_max_over_lattice(sample: Dataset | CountedSample, columns: Sequence[str], k: int, scale: float,
                            cells: np.ndarray, more_bits: MoreBits,
                            objective: Objective | None = None) -> tuple[Lattice, int, int]:
    """argmax over lattice nodes g of the exact key ``scale · q_int(S, g) / D + G_g`` (D the
    objective's :meth:`~.objectives.Objective.key_denominator`; ``scale`` = ε1 gives the
    exponential mechanism), G_g the exact Gumbel
    −log(−log U_g) with U_g's first 53 bits ``cells[g]`` and further bits from ``more_bits``,
    without scoring every node: (lattice, chosen index, nodes scored).

    Branch and bound over the attributes (in :func:`search_order`): fixing the levels of the
    first p columns fixes a block of nodes, and every node of the block has q_int at most the
    score of the projection on those p columns (:meth:`_KeyedTables.score`). A block is skipped
    only when the upper end of its key interval (scale · bound + its largest G upper end, widened)
    is below the best lower key of a scored node; then no node in it can be the argmax. After the
    search, the scored nodes whose upper key reaches the best lower key are compared exactly
    (:func:`exact_gumbel_argmax`). The result is the argmax of the exact keys over every node, as
    in the full evaluation; only the time and the bits drawn depend on the data. Objectives
    without such a bound (:attr:`~.objectives.Objective.bounded` false) score every node
    (:func:`gumbel_max_full`).
    """
    objective = (objective or Objective("retained")).for_columns(columns, sample.hierarchies)
    if not objective.bounded:
        return gumbel_max_full(sample, columns, k, scale, cells, more_bits, objective)
    denominator = objective.key_denominator(k)
    heights = objective.candidate_heights(columns, sample.hierarchies)
    lattice = Lattice(tuple(columns), heights)
    cells = np.asarray(cells, dtype=np.int64)
    if sample.n_rows == 0:  # every score is 0: the choice is uniform
        every = np.arange(lattice.size, dtype=np.int64)
        return lattice, exact_gumbel_argmax(every, np.zeros(lattice.size, dtype=np.int64), cells, scale,
                                            more_bits, denominator), 0
    order = search_order(heights, last=[list(columns).index(c) for c in objective.fixed_levels],
                         simple_first=objective.name != "classification")
    searched = Lattice(tuple(columns[j] for j in order), tuple(heights[j] for j in order))
    # cells in the searched lattice's node order, so each block of nodes is contiguous
    shape = [h + 1 for h in heights]
    to_searched = np.arange(lattice.size, dtype=np.int64).reshape(shape).transpose(order).ravel()
    cells = cells[to_searched]
    g_lo, g_hi = gumbel_enclosure(cells)
    tables = _KeyedTables(sample, searched.columns, objective, k)
    node_strides = searched.strides
    d = tables.d
    block_max = [g_hi.reshape(-1, int(node_strides[p])).max(axis=1) for p in range(d)]
    best = [-np.inf]
    scored: list[tuple[int, int, float]] = []  # (searched index, q_int, upper key)
    levels = [0] * d

    def record(index: int, q: int) -> None:
        lo, hi = _key_bounds(scale * (q / denominator), g_lo[index], g_hi[index])
        scored.append((index, q, hi))
        best[0] = max(best[0], lo)

    def visit(attribute: int, keys: np.ndarray, counts: np.ndarray, index: int) -> None:
        block = int(node_strides[attribute])
        bounds, exact, made = tables.children(keys, counts, attribute, levels, k)
        if exact:  # each child is one node, and its bound is its score
            for level, q in enumerate(bounds):
                record(index + level * block, int(q))
            return
        children = []
        for level, bound in enumerate(bounds):
            child = index + level * block
            _, upper = _key_bounds(scale * (int(bound) / denominator), 0.0, block_max[attribute][child // block])
            children.append((upper, level, child))
        for upper, level, child in sorted(children, key=lambda c: -c[0]):
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
                    cells: np.ndarray, more_bits: MoreBits, objective: Objective) -> tuple[Lattice, int, int]:
    """:func:`gumbel_max_over_lattice` for an objective without a branch-and-bound bound: every
    candidate node is scored exactly (:func:`lattice_scores`), then the exact argmax of the keys
    (:func:`exact_gumbel_argmax`). Real scores (``entropy``) are scored in float with their error
    bound, and the nodes still in contention are enclosed exactly (:class:`_EntropyScorer`)."""
    objective = objective.for_columns(columns, sample.hierarchies)
    if not objective.exact:
        scorer = _EntropyScorer(sample, columns, k, objective)
        nodes = scorer.lattice.nodes()
        chosen = exact_gumbel_argmax(np.arange(scorer.lattice.size, dtype=np.int64), scorer.scores(),
                                     np.asarray(cells, dtype=np.int64), scale, more_bits,
                                     objective.key_denominator(k), scorer.error,
                                     lambda index, iv: scorer.interval(nodes[index], iv))
        return scorer.lattice, chosen, scorer.lattice.size
    lattice, scores = lattice_scores(sample, columns, k, objective)
    every = np.arange(lattice.size, dtype=np.int64)
    chosen = exact_gumbel_argmax(every, scores, np.asarray(cells, dtype=np.int64), scale, more_bits,
                                 objective.key_denominator(k))
    return lattice, chosen, lattice.size


def random_bits(randomness: Randomness) -> MoreBits:
    """:data:`MoreBits` drawing 64 fresh uniform bits per node from ``randomness``."""
    def more_bits(indices: np.ndarray, round_: int) -> np.ndarray:
        return randomness.generator.integers(0, 2**64, size=len(indices), dtype=np.uint64)
    return more_bits


def choose_scheme(sample: Dataset | CountedSample, columns: Sequence[str], k: int, epsilon1: float,
                  randomness: Randomness, objective: Objective | str | None = None) -> SchemeChoice:
    """Select a scheme with the ε1-DP exponential mechanism over every candidate lattice node
    (Theorem 6's Am), by the Gumbel-max trick: node g wins with probability
    ∝ exp(ε1 · q(S, g) / (m · Δq)) for the ``objective`` (:mod:`.objectives`: its proved Δq, m = 1
    when monotone, else 2), sampled exactly (module docstring: exact integer scores, exact Gumbels
    by lazy interval refinement). The candidates are fixed by the hierarchies and the objective
    alone. Only the sample is read; the choice is ε1-DP with respect to the sample."""
    if not isinstance(objective, Objective):
        objective = make_objective(objective)
    missing = [c for c in columns if c not in sample.hierarchies]
    if missing:
        raise HierarchyError(f"quasi-identifier '{missing[0]}' has no hierarchy to choose a level from")
    objective = objective.for_columns(columns, sample.hierarchies)
    if objective.target is not None and objective.target not in columns:
        raise ParameterError(f"the target '{objective.target}' is not a published column")
    if not (isinstance(epsilon1, (int, float)) and np.isfinite(epsilon1) and epsilon1 > 0):
        raise ParameterError(f"epsilon1 must be a finite number > 0, got {epsilon1!r}")
    heights = objective.candidate_heights(columns, sample.hierarchies)
    size = int(np.prod([h + 1 for h in heights]))
    cells = gumbel_cells(randomness.generator, size)
    lattice, index, scored = gumbel_max_over_lattice(sample, columns, k, float(epsilon1), cells,
                                                     random_bits(randomness), objective)
    levels = dict(zip(columns, (int(x) for x in lattice.nodes()[index])))
    scheme = GeneralizationScheme(
        levels, {c: sample.hierarchies[c] for c in columns},
        name=f"scheme chosen by the exponential mechanism ({_scheme_text(levels)})",
    )
    sensitivity = objective.sensitivity(k)
    factor = 1.0 if objective.monotone else 2.0
    bound = factor * sensitivity / float(epsilon1) * (np.log(size) + np.log(20.0))
    return SchemeChoice(scheme, float(epsilon1), size, sensitivity, float(bound), scored, objective, int(k))
