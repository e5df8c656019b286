"""Choosing a full-domain generalization scheme safely: the first step ``Am`` of the safe pipeline.

Two choosers, each with the safety class that Li, Qardaji and Su (2012) need for their theorems:

- **strongly safe** (:func:`fixed_scheme`): the levels are fixed without looking at the data,
  either given per attribute (``"age=2,education=1"``) or a named preset (:data:`PRESETS`) that
  depends only on the hierarchies' heights. Theorem 5 applies.
- **ε1-safe** (:func:`choose_scheme`): the exponential mechanism (McSherry and Talwar 2007)
  selects one node of the generalization lattice, scored on the *sample*. Theorem 6 applies, with
  the selection's ε1 added to the ε of the k-anonymization.

The utility score (docs/publish.md, proof sketch). For a node g and sample S, with classes E of
g(S) and a data-independent normalized certainty penalty NCP_g(E) ∈ [0, 1] of the class's
generalized tuple (the mean over attributes of the share of the attribute's domain the
hierarchy node covers: leaves for categories, range width for numbers),

    q(S, g) = Σ_E (1 − NCP_g(E)) · max(0, |E| − (k − 1)).

It rewards rows that survive suppression and keep detail, and discounts each class by k − 1
rows (a mild preference for fewer, larger classes). Adding one row to S changes exactly one class
size by one, so q changes by (1 − NCP) · [0 or 1] ∈ [0, 1]: the sensitivity is **1**, and q
never decreases when a row is added (removing one never increases it), so q is *monotone* and
the exponential mechanism may use the scale ε1/Δq instead of ε1/(2Δq). The candidate set is
every lattice node, fixed by the hierarchies alone. The score of every node is computed exactly
on the sample and the choice is Gumbel-max over all of them: no argmax over exact scores is ever
taken outside the mechanism, and nothing else about the sample is read before Apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from crowdsafe.anonymize.counted import CountedSample, counted
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.anonymize.recoding import GeneralizationScheme
from crowdsafe.data import Dataset, Hierarchy
from crowdsafe.errors import HierarchyError, ParameterError
from crowdsafe.randomness import Randomness, gumbel

SCORE_SENSITIVITY = 1.0
SCORE_NAME = "retained information: sum over classes of (1 - NCP) * max(0, |E| - (k - 1))"

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
    scored: int = 0  # nodes scored exactly (the rest were bounded out)

    def describe(self) -> dict[str, Any]:
        return {
            "chooser": "exponential mechanism over the generalization lattice (Gumbel-max)",
            "epsilon1": self.epsilon1,
            "candidates": self.candidates,
            "score": SCORE_NAME,
            "score_sensitivity": self.sensitivity,
            "score_monotone": True,
            "utility_loss_bound_95": self.utility_loss_bound,
            "nodes_scored": self.scored,
            "levels": dict(self.scheme.levels),
        }


def lattice_scores(sample: Dataset, columns: Sequence[str], k: int) -> tuple[Lattice, np.ndarray]:
    """q(S, g) (module docstring) of every node g of the lattice of ``columns``, on ``sample``.

    The reference full evaluation (the mechanism itself uses :func:`gumbel_max_over_lattice`,
    which returns the same choice): depth-first over the columns, each node's frequency table
    rolled up from the node one level below it. Node i of the returned lattice has ``scores[i]``.
    """
    hierarchies = [sample.hierarchies[c] for c in columns]
    lattice = Lattice(tuple(columns), tuple(h.height for h in hierarchies))
    scores = np.zeros(lattice.size)
    if sample.n_rows == 0:
        return lattice, scores
    tables = _KeyedTables(sample, columns)
    strides = lattice.strides
    levels = [0] * tables.d

    def visit(attribute: int, keys: np.ndarray, counts: np.ndarray, index: int) -> None:
        if attribute == tables.d:
            scores[index] = tables.score(keys, counts, levels, k)
            return
        for level in range(hierarchies[attribute].height + 1):
            if level > 0:
                keys, counts = tables.up(keys, counts, attribute, level)
            levels[attribute] = level
            visit(attribute + 1, keys, counts, index + level * int(strides[attribute]))
        levels[attribute] = 0

    visit(0, tables.base_keys, tables.base_counts, 0)
    return lattice, scores


def _level_step(hierarchy: Hierarchy, level: int) -> np.ndarray:
    """Node codes at ``level`` -> their parents at ``level + 1``."""
    return np.asarray(hierarchy.parents[level], dtype=np.int64)


class _KeyedTables:
    """Frequency tables of a sample as one mixed-radix int64 key per distinct tuple (first column
    most significant); level-0 sizes bound the codes at every level."""

    def __init__(self, sample: Dataset, columns: Sequence[str]) -> None:
        self.hierarchies = [sample.hierarchies[c] for c in columns]
        self.d = len(columns)
        self.penalties = [node_penalties(h) for h in self.hierarchies]
        self.steps = [[_level_step(h, level) for level in range(h.height)] for h in self.hierarchies]
        self.radix = np.asarray([h.size(0) for h in self.hierarchies], dtype=np.int64)
        if float(np.prod(self.radix.astype(float))) >= 2.0**62:
            raise ParameterError("too many quasi-identifier values to score the lattice; use fewer quasi-identifiers")
        self.strides = np.r_[np.cumprod(self.radix[::-1])[::-1][1:], 1].astype(np.int64)
        cells = counted(sample, columns)  # a Dataset is counted here; the Spark engine passes its counts
        self.base_keys = cells.codes.astype(np.int64) @ self.strides
        self.base_counts = cells.counts.astype(np.float64)

    def up(self, keys: np.ndarray, counts: np.ndarray, attribute: int, level: int,
           from_level: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The table with ``attribute`` raised to ``level`` from ``from_level`` (default: the
        level just below)."""
        stride = self.strides[attribute]
        old = (keys // stride) % self.radix[attribute]
        step = self.steps[attribute][level - 1] if from_level is None else self._map(attribute, from_level, level)
        keys = keys + (step[old] - old) * stride
        keys, inverse = np.unique(keys, return_inverse=True)
        return keys, np.bincount(inverse.ravel(), weights=counts, minlength=len(keys))

    def _map(self, attribute: int, low: int, high: int) -> np.ndarray:
        mapped = np.arange(self.hierarchies[attribute].size(low), dtype=np.int64)
        for level in range(low, high):
            mapped = self.steps[attribute][level][mapped]
        return mapped

    def project(self, keys: np.ndarray, counts: np.ndarray, prefix: int) -> tuple[np.ndarray, np.ndarray]:
        """The table projected on its first ``prefix`` columns (the others set to code 0)."""
        if prefix == self.d:
            return keys, counts
        stride = self.strides[prefix - 1]
        keys, inverse = np.unique(keys // stride, return_inverse=True)
        return keys * stride, np.bincount(inverse.ravel(), weights=counts, minlength=len(keys))

    def score(self, keys: np.ndarray, counts: np.ndarray, levels: Sequence[int], k: int,
              prefix: int | None = None) -> float:
        """q of the table at ``levels``; with ``prefix``, of a table projected on its first
        ``prefix`` columns, with the other columns' penalties taken as 0: an upper bound on q of
        every node that agrees with ``levels`` on those columns."""
        d = self.d if prefix is None else prefix
        weight = np.maximum(counts - (k - 1), 0)
        alive = np.flatnonzero(weight)
        if len(alive) == 0:
            return 0.0
        alive_keys = keys[alive]
        ncp = np.zeros(len(alive))
        for j in range(d):
            if levels[j]:
                ncp += self.penalties[j][levels[j]][(alive_keys // self.strides[j]) % self.radix[j]]
        return float(np.dot(1.0 - ncp / self.d, weight[alive]))


def gumbel_max_over_lattice(sample: Dataset, columns: Sequence[str], k: int, scale: float,
                            noise: np.ndarray) -> tuple[Lattice, int, int]:
    """argmax over lattice nodes g of ``scale · q(S, g) + noise[g]``, exactly, without scoring
    every node: (lattice, chosen index, nodes scored).

    Branch and bound over the attributes: fixing the levels of the first p columns fixes a
    contiguous block of node indices, and every node of the block has q at most the score of
    the projection on those p columns (its classes are unions of the node's classes, and
    max(0, |E| − (k − 1)) is superadditive). A block whose bound plus its largest noise cannot
    beat the best exact key found is skipped. The result is the argmax of the full evaluation,
    so the exponential mechanism's distribution is unchanged; only time depends on the data.
    """
    if sample.n_rows == 0:  # every score is 0: the choice is uniform
        lattice = Lattice(tuple(columns), tuple(sample.hierarchies[c].height for c in columns))
        return lattice, int(np.argmax(noise)), 0
    tables = _KeyedTables(sample, columns)
    lattice = Lattice(tuple(columns), tuple(h.height for h in tables.hierarchies))
    node_strides = lattice.strides
    d = tables.d
    block_max = [noise.reshape(-1, int(node_strides[p])).max(axis=1) for p in range(d)]
    best = [-np.inf, 0]
    scored = [0]
    levels = [0] * d

    def visit(attribute: int, keys: np.ndarray, counts: np.ndarray, index: int) -> None:
        if attribute == d:
            scored[0] += 1
            key = scale * tables.score(keys, counts, levels, k) + noise[index]
            if key > best[0]:
                best[0], best[1] = key, index
            return
        # the parent's table projected on columns 0..attribute (one pass over the parent's
        # table); each child's bound is a roll-up of this small table
        projected_keys, projected_counts = tables.project(keys, counts, attribute + 1)
        children = []
        for level in range(tables.hierarchies[attribute].height + 1):
            levels[attribute] = level
            child = index + level * int(node_strides[attribute])
            if level:
                projected_keys, projected_counts = tables.up(projected_keys, projected_counts, attribute, level)
            bound = scale * tables.score(projected_keys, projected_counts, levels, k, prefix=attribute + 1)
            children.append((bound + block_max[attribute][child // int(node_strides[attribute])], level, child))
        for bound, level, child in sorted(children, key=lambda c: -c[0]):
            if bound <= best[0]:
                break
            levels[attribute] = level
            child_keys, child_counts = tables.up(keys, counts, attribute, level, from_level=0) if level else (keys, counts)
            visit(attribute + 1, child_keys, child_counts, child)
        levels[attribute] = 0

    visit(0, tables.base_keys, tables.base_counts, 0)
    return lattice, int(best[1]), scored[0]


def choose_scheme(sample: Dataset | CountedSample, columns: Sequence[str], k: int, epsilon1: float,
                  randomness: Randomness) -> SchemeChoice:
    """Select a scheme with the ε1-DP exponential mechanism over every lattice node (Theorem 6's
    Am), by the Gumbel-max trick: node g wins with probability ∝ exp(ε1·q(S, g)/Δq) (monotone
    q, Δq = 1). Only the sample is read; the choice is ε1-DP with respect to the sample."""
    missing = [c for c in columns if c not in sample.hierarchies]
    if missing:
        raise HierarchyError(f"quasi-identifier '{missing[0]}' has no hierarchy to choose a level from")
    if not (isinstance(epsilon1, (int, float)) and np.isfinite(epsilon1) and epsilon1 > 0):
        raise ParameterError(f"epsilon1 must be a finite number > 0, got {epsilon1!r}")
    size = int(np.prod([sample.hierarchies[c].height + 1 for c in columns]))
    noise = gumbel(randomness.generator, size)
    scale = float(epsilon1) / SCORE_SENSITIVITY
    lattice, index, scored = gumbel_max_over_lattice(sample, columns, k, scale, noise)
    levels = dict(zip(columns, (int(x) for x in lattice.nodes()[index])))
    scheme = GeneralizationScheme(
        levels, {c: sample.hierarchies[c] for c in columns},
        name=f"scheme chosen by the exponential mechanism ({_scheme_text(levels)})",
    )
    bound = SCORE_SENSITIVITY / float(epsilon1) * (np.log(size) + np.log(20.0))
    return SchemeChoice(scheme, float(epsilon1), size, SCORE_SENSITIVITY, float(bound), scored)
