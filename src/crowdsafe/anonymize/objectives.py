"""What the ε1-DP selection optimises: the objectives a user picks, each with a proved sensitivity.

The selection (:mod:`crowdsafe.anonymize.selection`) scores every candidate node g of the
generalization lattice on the sample S with an objective q(S, g) and samples a node with the
exponential mechanism, probability ∝ exp(ε1 · q(S, g) / (m · Δq)) with m = 1 for a *monotone* q
(adding a row never lowers any node's score, or never raises any) and m = 2 otherwise (McSherry
and Talwar 2007; Dwork and Roth 2014, Theorem 3.10 and the remark after it). The whole tuple
(quasi-identifiers and published sensitive columns) is recoded by g, and classes E of g(S) with
fewer than k rows are suppressed by Apply.

Every objective is an exact integer q_int(S, g) = D · q(S, g) (no rounding that depends on the
data), with Δ_int = D · Δq and m known before the data is read, so the mechanism's keys are exact
(docs/publish.md, "Objectives").

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crowdsafe.data import Hierarchy
from crowdsafe.errors import ParameterError

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
}
DEFAULT_OBJECTIVE = "retained"


@dataclass(frozen=True)
class Objective:
    """One objective, fixed before the data is read: its name, the target column (classification
    only) and the columns whose level it fixes. The score itself is :func:`class_score`."""

    name: str
    target: str | None = None
    fixed_levels: Mapping[str, int] = field(default_factory=dict)

    @property
    def monotone(self) -> bool:
        return self.name != "discernibility"

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
        return 1

    def sensitivity_units(self, k: int) -> int:
        """Δ_int = D · Δq (module docstring)."""
        if self.name in ("retained", "loss"):
            return WEIGHT_UNIT * (2 * k - 1)
        if self.name == "discernibility":
            return 2 * DISCERNIBILITY_CAP * k * k
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
            raise ParameterError("the classification objective needs the target column: --target COLUMN")
        return Objective(name, str(target), {str(target): 0})
    if target:
        raise ParameterError(f"--target is for --objective classification, not {name}")
    return Objective(name)


def check_objective_columns(objective: Objective, columns: Sequence[str]) -> None:
    """Refuse (before any charge) a target that is not among the published columns."""
    if objective.target is not None and objective.target not in columns:
        raise ParameterError(
            f"the target '{objective.target}' is not a published column ({', '.join(columns)}); "
            "declare it a quasi-identifier or sensitive attribute, or include it in --columns"
        )


def level_units(objective: Objective, hierarchy: Hierarchy, d: int) -> list[np.ndarray]:
    """Per level, each node's share of a class's penalty in 2^-20 units, ⌈2^20 · p / d⌉ (int64),
    from the hierarchy alone: p = NCP of the node (``retained``) or level/height (``loss``)."""
    if objective.name == "loss":
        height = max(hierarchy.height, 1)
        return [np.full(hierarchy.size(level), int(np.ceil(WEIGHT_UNIT * (level / height) / d)), dtype=np.int64)
                for level in range(hierarchy.height + 1)]
    from crowdsafe.anonymize.selection import node_penalties

    return [np.ceil(p * WEIGHT_UNIT / d).astype(np.int64) for p in node_penalties(hierarchy)]


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


def classification_score(group_starts: np.ndarray, target_codes: np.ndarray, counts: np.ndarray, k: int) -> int:
    """q_int = max_{y0} Σ_G [max_y t(c_Gy) + s(c_Gy0)] for class rows sorted by quasi-identifier
    group (``group_starts``: first row of each group G), each row one (G, y) with its count."""
    counts = np.asarray(counts, dtype=np.int64)
    if len(counts) == 0:
        return 0
    survivors = np.maximum(counts - (k - 1), 0)
    best = int(np.maximum.reduceat(survivors, group_starts).sum())
    below = np.minimum(counts, k - 1)
    codes = np.asarray(target_codes, dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    return best + int(np.add.reduceat(below[order], starts).max())
