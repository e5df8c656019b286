"""What the ε1-DP selection optimises: the objectives a user picks, each with a proved sensitivity.

The selection (:mod:`crowdsafe.selection.mechanism`) scores every candidate node g of the
generalization lattice on the sample S with an objective q(S, g) and samples a node with the
exponential mechanism, probability ∝ exp(ε1 · q(S, g) / (m · Δq)) with m = 1 for a *monotone* q
(adding a row never lowers any node's score, or never raises any) and m = 2 otherwise (McSherry
and Talwar 2007; Dwork and Roth 2014, Theorem 3.10 and the remark after it). The whole tuple
(quasi-identifiers and published sensitive columns) is recoded by g, and classes E of g(S) with
fewer than k rows are suppressed by Apply.

Every objective but ``entropy`` is an exact integer q_int(S, g) = D · q(S, g) (no rounding that
depends on the data), with Δ_int = D · Δq and m known before the data is read, so the mechanism's
keys are exact (docs/publish.md, "Objectives"). ``entropy`` involves logarithms: its q_int = D · q
is real, given to the mechanism as a float with a rigorous error bound and, for the few nodes
whose keys come close, as an interval enclosure, so the keys are compared exactly all the same.

The ramp. Suppression makes a class worth nothing below k rows and everything at k: a score that
counts surviving rows jumps by k when one row takes a class across the threshold (Δ = k, which
drowns the choice in noise). Each objective below replaces the step by a ramp whose slope is
bounded, with c = |E|:

- e(c) = c · min(c, k) / k ("survivors by the square ramp"): e(c) = c for c ≥ k, c²/k below;
  e(c + 1) − e(c) = (2c + 1)/k ≤ (2k − 1)/k for c < k, and 1 above: between 0 and (2k − 1)/k.
  e is superadditive (e(a) + e(b) ≤ e(a + b)), which makes projections upper bounds.
- t(c) = max(0, c − (k − 1)) and s(c) = min(c, k − 1), with t(c) + s(c) = c: one more row raises
  exactly one of them by 1 (t when c ≥ k − 1, s otherwise), never both.

The objectives (``OBJECTIVES``; one row added to S changes exactly one class E of every node by
one row, so a per-class bound is a bound on q):

``retained`` (default) — retained information: q = Σ_E (1 − NCP(E)) · e(|E|), NCP(E) the mean
over columns of the share of the domain the class's generalized value covers (range width for
numbers, leaves for categories), from the hierarchies alone, quantised down to 2^-20. Per class
the change is (1 − NCP) · (e(c + 1) − e(c)) ∈ [0, (2k − 1)/k]: Δq = (2k − 1)/k, monotone.
q_int = Σ_E w(E) · c · min(c, k), w(E) ∈ {0 … 2^20}, D = 2^20 · k, Δ_int = 2^20 · (2k − 1).

``loss`` — precision (generalization height): as ``retained`` but each column costs level/height
of its hierarchy (Sweeney's Prec), the same for every class of g: Δq = (2k − 1)/k, monotone.

``discernibility`` — q = −Σ_E f(|E|) with f(c) = c · min(c, C) for c ≥ k (each published row
costs the size of its class, capped at C = 10k) and a suppressed row costing C, joined by the
ramp: f(c) = C · (c − e(c)) + e(c) · min(c, C). For c ≥ k, f(c + 1) − f(c) ≤ 2c + 1 < 2C (and
= C above C); for c < k, f(c + 1) − f(c) = C − Δg/k with g(c) = c²(C − c) and
Δg = (2c + 1)C − (3c² + 3c + 1), which lies in [−C, C + 3k] ⊂ [−2C, 2C] since C ≥ 3k; at
c = k − 1 the step is k² − (k − 1)(C + (k − 1)²)/k ∈ [−C, 0]. So Δq = 2C; not monotone (m = 2).
q_int = −Σ_E k · f(c), D = k, Δ_int = 2Ck.

``classification`` (needs ``target``) — rows a majority-per-class classifier gets right, with
the target kept at level 0 (never generalized: only nodes with the target at level 0 are
candidates). With G the classes of the quasi-identifiers and c_Gy the rows of G with target
value y, q = max_{y0} Σ_G [max_y t(c_Gy) + s(c_Gy0)]: the rows of G's best target value that
survive beyond the first k − 1, plus up to k − 1 rows of the value y0 a release falls back to.
One row changes one c_Gy by one: max_y t(c_Gy) moves by at most 1 and only when c_Gy ≥ k − 1,
s(c_Gy0) by at most 1 and only when c_Gy0 < k − 1 (y = y0); never both, and both only upward.
So every inner sum moves by 0 or 1 in the same direction, and so does their maximum over the
public set of target values: Δq = 1, monotone. q_int = q, D = 1.

``entropy`` — minus the non-uniform entropy of the recoded sample (Gionis and Tassa 2009: the
information a row loses is −log2 of the sample's frequency of its value among the values its
published node covers), with a public cap and the ramp. Column j's hierarchy has L_j leaves
(public): B_j = log2 L_j, B = Σ_j B_j, and d is the number of columns with L_j ≥ 2. For a leaf v
of column j and the node N = g_j(v) it is published as, c_j(v) and c_j(N) count the rows of S
with that value, resp. under that node. A row r loses ℓ(r) = Σ_j h_j(r) with
h_j(r) = min(B_j, log2(c_j(N)/c_j(v))) ∈ [0, B_j] (0 at level 0), and keeps a(r) = B − ℓ(r) ∈ [0, B]
bits. A class E of c rows costs (c − e(c))·B + (e(c)/c)·L(E)
with L(E) = Σ_{r∈E} ℓ(r): a suppressed row loses all B bits, a published one its entropy, joined
by the ramp. With ρ(c) = e(c)/c = min(c, k)/k this is c·B − ρ(c)·A(E), A(E) = Σ_{r∈E} a(r), so

    q = −Σ_E cost(E) = −n·B + Σ_E ρ(|E|)·A(E).

Add a row x to S; its class E_x had c rows (c = 0 for a new class). The change of q is the sum of
(i) −B from −n·B; (ii) E_x's own term, (ρ(c + 1) − ρ(c))·A(E_x) + ρ(c + 1)·a'(x) (old rows at their
old a): ρ(c + 1) − ρ(c) is 1/k for c < k and 0 above, A(E_x) ≤ c·B and a'(x) ≤ B, so this lies in
[0, (2c + 1)·B/k] ⊂ [0, (2k − 1)·B/k] for c < k and in [0, B] for c ≥ k; (iii) the old rows' a
moving with the marginal counts, weighted by their new ρ ∈ (0, 1]. In column j only rows under
N = g_j(v_x) move; with C = c_j(N) and c' = c_j(v_x) before x, the C − c' rows with another leaf v
under N see log2(C/c_j(v)) rise to log2((C + 1)/c_j(v)), so their h_j rises by at most
log2(1 + 1/C) each (min(B_j, ·) is non-decreasing and 1-Lipschitz), at most
(C − c')·log2(1 + 1/C) ≤ C·log2(1 + 1/C) ≤ 1/ln 2 in all; the c' rows with leaf v_x see
log2(C/c') fall to log2((C + 1)/(c' + 1)), by log2((c' + 1)·C/(c'·(C + 1))) ≤ log2(1 + 1/c') each,
at most c'·log2(1 + 1/c') ≤ 1/ln 2 in all (ln(1 + t) ≤ t). A column at level 0, or with one leaf
(B_j = 0), moves nothing. So (iii) lies in [−d/ln 2, d/ln 2], and the change of q in
[−B − d/ln 2, (k − 1)·B/k + d/ln 2]; removing a row is the reverse. Δq = B + d/ln 2, and q is not
monotone (a row alone in its class lowers q by about B, the k-th row of a class raises it by up to
(k − 1)·B/k): m = 2. The mechanism uses the public rational Δ = ⌈2^20·(B + d/ln 2)⌉/2^20 ≥ Δq
(an upper bound keeps ε1-DP), computed in interval arithmetic from the leaf counts.

Scores in units of 1/D bits, D = 2^20·k: q_D = D·q = −2^20·(S0·B + Σ_E min(|E|, k)·L(E)) with the
integer S0 = Σ_E |E|·(k − min(|E|, k)), Δ_int = k·⌈2^20·(B + d/ln 2)⌉. q_D is real (logarithms),
so the selection takes it in two forms (``Objective.exact`` is false): a float64 value with a
rigorous absolute error bound (:func:`entropy_error_bound`), which only decides which nodes can
still win, and, for those few, an enclosure in ``mpmath`` interval arithmetic at the refinement's
precision (:func:`entropy_interval_score`, from the integer weights W_j(v) = Σ_{r: v_j(r) = v}
min(|E(r)|, k), so that Σ_E min(|E|, k)·L(E) = Σ_j Σ_v W_j(v)·h_j(v)). The argmax is that of the
exact keys, so the choice is exactly the exponential mechanism's.

``marginals`` — minus the error of every 1- and 2-way marginal of the published columns: per
marginal, the L1 distance in rows between the sample's marginal and the release's (each cell spread
uniformly over its leaves), and one row per suppressed row (by the ramp). Δq = P·(3k − 1)/k
over P = d(d + 1)/2 marginals, not monotone (m = 2); q_int exact, D = 2^20·k. Definition and proof in
:mod:`.marginal_score`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from crowdsafe.data import Hierarchy
from crowdsafe.errors import CrowdsafeError, ParameterError
from crowdsafe.selection.sums import exact_sums
from crowdsafe.selection.sums import largest_target_total as _largest_target_total

#: Weights (1 − penalty) are whole numbers of 2^-20.
WEIGHT_BITS = 20
WEIGHT_UNIT = 1 << WEIGHT_BITS
#: The discernibility cap C, in multiples of k (C ≥ 3k is what the proof needs).
DISCERNIBILITY_CAP = 10

OBJECTIVES: dict[str, str] = {
    "retained": "retained information: rows kept (square ramp at k) weighted by 1 - NCP of their class",
    "loss": "precision: rows kept (square ramp at k) weighted by 1 - mean(level / height)",
    "discernibility": "minus the discernibility metric: each row costs its class size (capped at 10k), "
                      "a suppressed row 10k",
    "classification": "rows a per-class majority classifier of the target gets right (target kept as is)",
    "entropy": "minus the non-uniform entropy: the bits each row loses (log2 of its node's count over its value's, "
               "capped at log2 of the leaves), a suppressed row all of them",
    "marginals": "minus the error of every 1- and 2-way marginal: L1 distance in rows of the release's marginals "
                 "(each cell spread uniformly over its leaves) to the sample's, a suppressed row one row in each",
}
DEFAULT_OBJECTIVE = "retained"


@dataclass(frozen=True)
class Objective:
    """One objective, fixed before the data is read: its name, the target column (classification
    only), the columns whose level it fixes and, for ``entropy``, the number of leaves of each
    published column's hierarchy (public; :meth:`for_columns`), on which its sensitivity depends.
    The selection scores it (:mod:`.mechanism`)."""

    name: str
    target: str | None = None
    fixed_levels: Mapping[str, int] = field(default_factory=dict)
    leaves: tuple[int, ...] = ()

    @property
    def monotone(self) -> bool:
        return self.name not in ("discernibility", "entropy", "marginals")

    @property
    def exact(self) -> bool:
        """Whether q_int is an exact integer; otherwise (``entropy``) a float with an error bound
        and an interval enclosure for the exact comparison (module docstring)."""
        return self.name != "entropy"

    def for_columns(self, columns: Sequence[str], hierarchies: Mapping[str, Hierarchy]) -> Objective:
        """The objective for these published columns: ``entropy`` and ``marginals`` record their
        hierarchies' leaf counts (public: ``entropy``'s sensitivity depends on them, ``marginals``'
        on their number); the others do not depend on them."""
        if self.name not in ("entropy", "marginals"):
            return self
        observed = [c for c in columns if hierarchies[c].observed]
        if observed:  # its leaf count is the data's number of values: the sensitivity would leak it
            reason = "sensitivity counts the leaves" if self.name == "entropy" else \
                "score spreads a generalized value over its leaves"
            raise ParameterError(f"the {self.name} objective needs a declared hierarchy for '{observed[0]}' (its "
                                 f"{reason}); this one was built over the data's values")
        return replace(self, leaves=tuple(int(hierarchies[c].size(0)) for c in columns))

    def _entropy_bits(self) -> int:
        if not self.leaves:
            raise ParameterError("the entropy objective's sensitivity depends on the published columns' "
                                 "hierarchies: bind it with Objective.for_columns first")
        return entropy_sensitivity_bits(self.leaves)

    @property
    def bounded(self) -> bool:
        """Whether the score of every node that agrees on some columns has a bound computed from the
        sample at those columns (the selection's branch and bound applies): the projection's score
        for weighted objectives, :func:`classification_block_bound` for ``classification``."""
        return self.weighted or self.name == "classification"

    @property
    def weighted(self) -> bool:
        """Scores of the form Σ_E w(E) · e(|E|) with data-independent w: a projection on some
        columns bounds every node that agrees on them (the branch and bound applies)."""
        return self.name in ("retained", "loss")

    def denominator(self, k: int) -> int:
        """D: q = q_int / D."""
        if self.name in ("retained", "loss"):
            return WEIGHT_UNIT * k
        if self.name == "discernibility":
            return k
        if self.name == "entropy":
            return WEIGHT_UNIT * k
        if self.name == "marginals":
            return WEIGHT_UNIT * k  # W = 2^20 (.marginal_score)
        return 1

    def sensitivity_units(self, k: int) -> int:
        """Δ_int = D · Δq (module docstring)."""
        if self.name in ("retained", "loss"):
            return WEIGHT_UNIT * (2 * k - 1)
        if self.name == "discernibility":
            return 2 * DISCERNIBILITY_CAP * k * k
        if self.name == "entropy":
            return k * self._entropy_bits()
        if self.name == "marginals":
            from crowdsafe.selection.marginal_score import marginal_sensitivity_units

            return marginal_sensitivity_units(self.leaves, k)
        return 1

    def sensitivity(self, k: int) -> float:
        """Δq in the score's own units."""
        return self.sensitivity_units(k) / self.denominator(k)

    def key_denominator(self, k: int) -> int:
        """The key is ε1 · q_int / (m · Δ_int): this integer is m · Δ_int."""
        return self.sensitivity_units(k) * (1 if self.monotone else 2)

    def describe(self, k: int) -> dict[str, Any]:
        return {
            "objective": self.name,
            "score": OBJECTIVES[self.name],
            "target": self.target,
            "score_sensitivity": self.sensitivity(k),
            "score_monotone": self.monotone,
        }

    def candidate_heights(self, columns: Sequence[str], hierarchies: Mapping[str, Hierarchy]) -> tuple[int, ...]:
        """Heights of the candidate lattice: a fixed column has height 0 (its level is fixed)."""
        return tuple(0 if c in self.fixed_levels else hierarchies[c].height for c in columns)


def make_objective(name: str | None, target: str | None = None) -> Objective:
    """The objective ``name`` (default ``retained``); ``target`` for ``classification`` only.
    Raises ParameterError naming the problem."""
    name = DEFAULT_OBJECTIVE if name is None else str(name).strip().lower()
    if name not in OBJECTIVES:
        raise ParameterError(f"unknown objective {name!r}; use one of: {', '.join(OBJECTIVES)}")
    if name == "classification":
        if not target:
            raise ParameterError("the classification objective needs the target column: target=COLUMN",
                                 parameter="target")
        return Objective(name, str(target), {str(target): 0})
    if target:
        raise ParameterError(f"the target parameter is for objective='classification', not {name}",
                             parameter=("target", "objective"))
    return Objective(name)


def check_objective_columns(objective: Objective, columns: Sequence[str]) -> None:
    """Refuse (before any charge) a target that is not among the published columns."""
    if objective.target is not None and objective.target not in columns:
        raise ParameterError(
            f"the target '{objective.target}' is not a published column ({', '.join(columns)}); "
            "declare it a quasi-identifier or sensitive attribute, or include it in the columns parameter",
            parameter="columns",
        )


def level_units(objective: Objective, hierarchy: Hierarchy, d: int) -> list[np.ndarray]:
    """Per level, each node's share of a class's penalty in 2^-20 units, ⌈2^20 · p / d⌉ (int64),
    from the hierarchy alone: p = NCP of the node (``retained``) or level/height (``loss``)."""
    if objective.name == "loss":
        height = max(hierarchy.height, 1)
        return [np.full(hierarchy.size(level), int(np.ceil(WEIGHT_UNIT * (level / height) / d)), dtype=np.int64)
                for level in range(hierarchy.height + 1)]
    return [np.ceil(p * WEIGHT_UNIT / d).astype(np.int64) for p in node_penalties(hierarchy)]


def node_penalties(hierarchy: Hierarchy) -> list[np.ndarray]:
    """NCP of every node at every level, from what is public about the hierarchy (never from
    the data): a mechanism input of the ``retained`` objective, so the same on neighbouring tables.

    A declared hierarchy: numbers and dates, the width of the node's leaf range over the width of
    all leaves; other values (and leaves all one number), (leaves under the node − 1) over (all
    leaves − 1). An :class:`~crowdsafe.data.hierarchy.ObservedHierarchy` (leaves read from the
    data): every node of level ``l`` costs l / height, so a new value or a constant column moves no
    penalty (counting its leaves would make ``*`` cost 0 for a constant column, 1 otherwise).
    Level 0 costs 0, the root 1.
    """
    if hierarchy.observed:
        height = max(hierarchy.height, 1)
        return [np.full(hierarchy.size(level), level / height, dtype=np.float64)
                for level in range(hierarchy.height + 1)]
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


# -- per-class scores (vectorised; exact integers) -------------------------------------------------

def square_ramp(counts: np.ndarray, k: int) -> np.ndarray:
    """k · e(c) = c · min(c, k) (int64)."""
    counts = np.asarray(counts, dtype=np.int64)
    return counts * np.minimum(counts, k)


def weighted_score(units: np.ndarray | None, counts: np.ndarray, k: int, wide: bool) -> int:
    """q_int = Σ_E w(E) · c · min(c, k) with w = 2^20 − min(units, 2^20) (``retained``, ``loss``)."""
    ramp = square_ramp(counts, k)
    if units is None:
        return int(ramp.astype(object).sum() if wide else ramp.sum()) * WEIGHT_UNIT
    weight = WEIGHT_UNIT - np.minimum(units, WEIGHT_UNIT)
    if wide:
        return int(np.dot(weight.astype(object), ramp.astype(object)))
    return int(np.dot(weight, ramp))


def discernibility_score(counts: np.ndarray, k: int, wide: bool = False) -> int:
    """q_int = −Σ_E k · f(|E|) (module docstring), exact: |q_int| ≤ 10k² · rows, in int64 unless
    ``wide`` (then Python integers)."""
    c = np.asarray(counts, dtype=object if wide else np.int64)
    cap = DISCERNIBILITY_CAP * k
    ramp = c * np.minimum(c, k)  # k · e(c)
    f_k = cap * (c * k - ramp) + ramp * np.minimum(c, cap)  # k · f(c)
    return -int(f_k.sum())


def classification_score(qi_keys: np.ndarray, target_codes: np.ndarray, counts: np.ndarray, k: int) -> int:
    """q_int = max_{y0} Σ_G [max_y t(c_Gy) + s(c_Gy0)] of a class table: one row per class (G, y),
    ``qi_keys`` naming G, ``target_codes`` y. Only classes with t > 0 (at least k rows) need
    grouping by G, so the sort is over the survivors alone."""
    counts = np.asarray(counts, dtype=np.int64)
    if len(counts) == 0:
        return 0
    survivors = counts - (k - 1)
    alive = np.flatnonzero(survivors > 0)
    best = 0
    if len(alive):
        groups = np.asarray(qi_keys)[alive]
        order = np.argsort(groups, kind="stable")
        groups, gains = groups[order], survivors[alive][order]
        starts = np.concatenate(([0], np.flatnonzero(groups[1:] != groups[:-1]) + 1))
        best = int(np.maximum.reduceat(gains, starts).sum())
    return best + _largest_target_total(target_codes, np.minimum(counts, k - 1))


def classification_score_sorted(counts: np.ndarray, target_codes: np.ndarray, group_starts: np.ndarray,
                                k: int) -> int:
    """:func:`classification_score` of a class table sorted by class: the rows of each G are
    contiguous, starting at ``group_starts`` (one row per (G, y)). One pass, no sort."""
    counts = np.asarray(counts, dtype=np.int64)
    if len(counts) == 0:
        return 0
    best = int(np.maximum.reduceat(np.maximum(counts - (k - 1), 0), group_starts).sum())
    return best + _largest_target_total(target_codes, np.minimum(counts, k - 1))


#: The block bound adds up c_G'y in a dense (G', y) array (:func:`_block_bound_dense`) while it has
#: at most this many cells per table row (binary and other small targets); beyond, over the
#: (G', y) that occur (:func:`_block_bound_sparse`).
DENSE_CELLS_PER_ROW = 4


def classification_block_bound(counts: np.ndarray, target_codes: np.ndarray, fine_starts: np.ndarray,
                               coarse_of_row: np.ndarray, coarse_count: int, target_values: int, k: int) -> int:
    """An upper bound on q_int of every node whose classes G lie between two partitions of the
    sample: each G is a union of classes F of a finer node and lies in one class G' of a coarser
    node (in the branch and bound: F the block's finest node, its free columns at level 0; G' the
    projection on its fixed columns).

    The table has one row per (F, y), the rows of one F contiguous from ``fine_starts``;
    ``coarse_of_row`` numbers each row's G' (0 .. ``coarse_count`` − 1); target codes are below
    ``target_values``. With t + s = c, q = max_{y0} Σ_G [c_Gy0 + gain_G],
    gain_G = max_y (t(c_Gy) − t(c_Gy0))⁺. For each G' and y0:

    - t is non-decreasing and 1-Lipschitz, so gain_G ≤ max_y (c_Gy − c_Gy0)⁺
      ≤ Σ_{F ⊂ G} (max_y c_Fy − c_Fy0), hence Σ_{G ⊂ G'} (c_Gy0 + gain_G) ≤ R_G' = Σ_{F ⊂ G'} max_y c_Fy;
    - gain_G ≤ Σ_{y ≠ y0} t(c_Gy) and t is superadditive, so the same sum is at most
      c_G'y0 + Σ_{y ≠ y0} t(c_G'y).

    The bound is max_{y0} Σ_G' min(R_G', c_G'y0 + Σ_{y ≠ y0} t(c_G'y)): the majority classifier of
    the finest node (which suppresses nothing) or the coarse count of survivors, whichever is
    smaller. Exact integers."""
    counts = np.asarray(counts, dtype=np.int64)
    if len(counts) == 0:
        return 0
    majority = exact_sums(coarse_of_row[fine_starts], np.maximum.reduceat(counts, fine_starts), coarse_count)
    pair = coarse_of_row * target_values + target_codes
    if coarse_count * target_values <= DENSE_CELLS_PER_ROW * len(counts):
        return _block_bound_dense(pair, counts, majority, coarse_count, target_values, k)
    return _block_bound_sparse(pair, counts, majority, coarse_count, target_values, k)


def _block_bound_dense(pair: np.ndarray, counts: np.ndarray, majority: np.ndarray, coarse_count: int,
                       target_values: int, k: int) -> int:
    """:func:`classification_block_bound` from the dense (G', y) array of counts (``pair``:
    each row's G' * target_values + y; ``majority``: R_G')."""
    by_target = exact_sums(pair, counts, coarse_count * target_values).reshape(coarse_count, target_values)
    return classification_matrix_bound(by_target, majority, k)


def _block_bound_sparse(pair: np.ndarray, counts: np.ndarray, majority: np.ndarray, coarse_count: int,
                        target_values: int, k: int) -> int:
    """:func:`classification_block_bound` over the (G', y) that occur (the reference twin of
    :func:`_block_bound_dense`, memory bounded by the rows): a G' without y0 has c_G'y0 = 0 and
    contributes min(R_G', T_G')."""
    pairs, inverse = np.unique(pair, return_inverse=True)
    by_pair = exact_sums(inverse, counts, len(pairs))
    coarse_of_pair, target_of_pair = pairs // target_values, pairs % target_values
    survivors = np.maximum(by_pair - (k - 1), 0)
    total_survivors = exact_sums(coarse_of_pair, survivors, coarse_count)
    base = np.minimum(majority, total_survivors)
    extra = np.minimum(majority[coarse_of_pair], by_pair + total_survivors[coarse_of_pair] - survivors) \
        - base[coarse_of_pair]  # ≥ 0, since c ≥ t(c)
    return int(base.sum()) + int(exact_sums(target_of_pair, extra, target_values).max())


def classification_matrix_bound(by_target: np.ndarray, majority: np.ndarray, k: int) -> int:
    """:func:`classification_block_bound` from c_G'y (``by_target``, one row per G', one column
    per target value, int64) and R_G' (``majority``)."""
    survivors = np.maximum(by_target - (k - 1), 0)
    coarse = by_target + (survivors.sum(axis=1, keepdims=True) - survivors)
    return int(np.minimum(majority[:, None], coarse).sum(axis=0).max())


def classification_matrix_score(by_target: np.ndarray, k: int) -> int:
    """:func:`classification_score` from c_Gy (``by_target``, one row per class G, one column per
    target value, int64; absent pairs 0)."""
    best = int(np.maximum(by_target - (k - 1), 0).max(axis=1).sum())
    return best + int(np.minimum(by_target, k - 1).sum(axis=0).max())


# -- entropy (real scores: float with an error bound, interval enclosure) -------------------------

#: Unit roundoff of float64.
_UNIT_ROUNDOFF = 2.0**-53


def _interval_context(prec: int):
    """A private ``mpmath`` interval context at ``prec`` bits (outward rounding)."""
    from mpmath.ctx_iv import MPIntervalContext

    iv = MPIntervalContext()
    iv.prec = int(prec)
    return iv


def entropy_cap_interval(iv, leaves: int):
    """B_j = log2(leaves) enclosed in ``iv``."""
    if leaves <= 1:
        return iv.mpf(0)
    return iv.log(iv.mpf(int(leaves))) / iv.log(iv.mpf(2))


def entropy_bits_interval(iv, node_count: int, leaf_count: int, leaves: int):
    """h = min(log2 leaves, log2(node_count / leaf_count)) enclosed in ``iv`` (integers,
    node_count ≥ leaf_count ≥ 1)."""
    if node_count == leaf_count or leaves <= 1:
        return iv.mpf(0)
    ratio = iv.log(iv.mpf(int(node_count)) / int(leaf_count)) / iv.log(iv.mpf(2))
    cap = entropy_cap_interval(iv, leaves)
    if ratio.b <= cap.a:
        return ratio
    if cap.b <= ratio.a:
        return cap
    return iv.mpf([min(ratio.a, cap.a), min(ratio.b, cap.b)])


@functools.lru_cache(maxsize=256)
def entropy_sensitivity_bits(leaves: tuple[int, ...]) -> int:
    """⌈2^20 · (B + d/ln 2)⌉ for hierarchies with these leaf counts: B = Σ_j log2 L_j, d the
    columns with L_j ≥ 2 (module docstring); computed in interval arithmetic, so the integer is
    at least 2^20 · Δq (the smallest integer that the enclosure proves to be)."""
    iv = _interval_context(160)
    total = iv.mpf(0)
    for count in leaves:
        if count >= 2:
            total = total + entropy_cap_interval(iv, count) + 1 / iv.log(iv.mpf(2))
    scaled = total * WEIGHT_UNIT
    units = math.ceil(float(scaled.b))
    while not scaled.b <= units:
        units += 1
    while scaled.b <= units - 1:
        units -= 1
    return units


def entropy_bit_tables(marginals: Sequence[np.ndarray], ancestors: Sequence[Sequence[np.ndarray]],
                       leaves: Sequence[int], rows: int) -> tuple[list[list[np.ndarray]], list[float]]:
    """Per column j and level l, h_j(v) of every leaf v (float64, 0 for a leaf no row has), and
    the float caps B_j. ``marginals[j][v]`` = c_j(v) (int64), ``ancestors[j][l][v]`` the code of v's
    node at level l, ``rows`` the sample's size.

    Each value is the float nearest the midpoint of an ``mpmath`` interval whose relative width is
    checked below 2^-60, so it is within a relative 2^-53 + 2^-60 ≤ 2·2^-53 of the exact value (a
    leaf and its node with equal counts give exactly 0). From the sample's marginals: custodian-only.
    """
    iv = _interval_context(72 + 2 * max(int(rows).bit_length(), 1))
    caps = [float(entropy_cap_interval(iv, count).mid) for count in leaves]
    tables = []
    for marginal, maps, count in zip(marginals, ancestors, leaves):
        marginal = np.asarray(marginal, dtype=np.int64)
        per_level = [np.zeros(len(marginal), dtype=np.float64)]
        for level in range(1, len(maps)):
            node_of_leaf = node_counts(marginal, maps[level])
            values = np.zeros(len(marginal), dtype=np.float64)
            cache: dict[tuple[int, int], float] = {}
            for v in np.flatnonzero(marginal > 0):  # a loop over the leaves of one hierarchy
                pair = (int(node_of_leaf[v]), int(marginal[v]))
                if pair not in cache:
                    enclosure = entropy_bits_interval(iv, pair[0], pair[1], count)
                    tight = enclosure.b == 0 or (
                        enclosure.a > 0 and enclosure.b - enclosure.a <= enclosure.a * 2.0**-60)
                    if tight is not True:
                        raise CrowdsafeError("an entropy term was not enclosed tightly enough (internal error)")
                    cache[pair] = float(enclosure.mid)
                values[v] = cache[pair]
            per_level.append(values)
        tables.append(per_level)
    return tables, caps


def node_counts(marginal: np.ndarray, ancestor: np.ndarray) -> np.ndarray:
    """c_j(N) of each leaf's node N (int64, exact): the leaves' counts ``marginal`` summed over
    the nodes ``ancestor[v]``, read back per leaf."""
    ancestor = np.asarray(ancestor, dtype=np.int64)
    nodes = np.zeros(int(ancestor.max(initial=-1)) + 1, dtype=np.int64)
    np.add.at(nodes, ancestor, np.asarray(marginal, dtype=np.int64))
    return nodes[ancestor]


def entropy_float_score(counts: np.ndarray, lost: np.ndarray, k: int, cap: float) -> float:
    """q_D = −2^20·(S0·B + Σ_E min(|E|, k)·L(E)) in float64 from a node's class sizes ``counts``
    (int64) and bits lost ``lost`` = L(E) (float64); ``cap`` = B (float). Every term is
    non-negative, so the float's relative error is at most γ_T (:func:`entropy_error_bound`)."""
    counts = np.asarray(counts, dtype=np.int64)
    kept = np.minimum(counts, k)
    suppressed = int((counts * (k - kept)).sum())  # S0, exact: at most k · rows
    return -float(WEIGHT_UNIT) * (float(suppressed) * cap + float((kept * lost).sum()))


def entropy_error_bound(cells: int, d: int, rows: int, k: int, cap: float) -> float:
    """A bound on |float q_D − exact q_D| for :func:`entropy_float_score` fed by sums of
    ``cells`` distinct tuples' terms over ``d`` columns (:mod:`.mechanism`).

    All quantities are sums and products of non-negative terms, so the float result is the exact
    one times (1 + θ) with |θ| ≤ γ_T = T·u/(1 − T·u), T the most roundings on any path from a term
    to the result (Higham, Accuracy and Stability of Numerical Algorithms, Lemma 3.1): 2 for each
    h (:func:`entropy_bit_tables`), 1 for each product, at most cells·(d + 1) − 1 additions
    building a class's L(E) (a binary tree over at most one zero and d terms per tuple), at most
    cells more summing the classes, d + 4 for B and S0·B and the last sum, so
    T ≤ cells·(d + 2) + d + 8 ≤ cells·(d + 2) + 2d + 16 (the value used; ``d`` every column).
    The exact total is Σ_E k·cost(E) ≤ k·rows·B; the bound below doubles γ_T and adds 1 to B for
    the float cap's error."""
    steps = int(cells) * (int(d) + 2) + 2 * int(d) + 16
    gamma = steps * _UNIT_ROUNDOFF / (1.0 - steps * _UNIT_ROUNDOFF)
    return 2.0 * gamma * WEIGHT_UNIT * float(k) * float(max(rows, 1)) * (cap + 1.0)


def entropy_interval_score(iv, suppressed: int, weights: Sequence[np.ndarray | None],
                           node_counts: Sequence[np.ndarray | None], marginals: Sequence[np.ndarray],
                           leaves: Sequence[int]):
    """q_D = −2^20·(S0·B + Σ_j Σ_v W_j(v)·h_j(v)) enclosed in ``iv`` (its precision): ``suppressed``
    = S0, ``weights[j][v]`` = W_j(v) (exact integers; None for a column at level 0),
    ``node_counts[j][v]`` = c_j(N) of v's node, ``marginals[j][v]`` = c_j(v). A loop over the
    leaves with W_j(v) > 0 (at most the leaves of the hierarchies)."""
    cap = iv.mpf(0)
    for count in leaves:
        cap = cap + entropy_cap_interval(iv, count)
    total = cap * int(suppressed)
    for weight, nodes, marginal, count in zip(weights, node_counts, marginals, leaves):
        if weight is None:
            continue
        assert nodes is not None  # a column above level 0 has its node counts
        for v in np.flatnonzero(np.asarray(weight) != 0):
            total = total + entropy_bits_interval(iv, int(nodes[v]), int(marginal[v]), count) * int(weight[v])
    return -total * WEIGHT_UNIT
