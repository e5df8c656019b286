"""Choosing a full-domain generalization scheme safely: the first step ``Am`` of the safe pipeline.

Two choosers, each with the safety class that Li, Qardaji and Su (2012) need for their theorems:

- **strongly safe** (:func:`fixed_scheme`): the levels are fixed without looking at the data,
  either given per attribute (``"age=2,education=1"``) or a named preset (:data:`PRESETS`) that
  depends only on the hierarchies' heights. Theorem 5 applies.
- **ε1-safe** (:func:`choose_scheme`): the exponential mechanism (McSherry and Talwar 2007)
  selects one node of the generalization lattice, scored on the *sample*. Theorem 6 applies, with
  the selection's ε1 added to the ε of the k-anonymization.

The score. The chooser optimises an objective from :mod:`.score` (``retained`` by default,
``loss``, ``discernibility``, ``classification`` with a target, ``entropy``); each but
``entropy`` is an exact integer q_int(S, g) = D · q(S, g) (``entropy``: *Real scores* below),
computed from the sample's frequency table alone, with a proved
sensitivity Δq and a known monotonicity (docs/objectives.md). The mechanism's key for node g is
ε1 · q_int / (m · Δ_int) + G_g, m = 1 for a monotone score and 2 otherwise; its integer
denominator is :meth:`~.score.Objective.key_denominator`. The candidates are every lattice
node, fixed by the hierarchies alone, less the nodes the objective excludes publicly (a
classification target stays at level 0).

*Exact sampling.* Node g wins with probability exp(ε1·q(S, g)/(m Δq))/Z, sampled as the argmax of
ε1·q(S, g)/(m Δq) + G_g with exact standard Gumbels G_g = −log(−log U_g), U_g uniform on (0, 1) given by
infinitely many random bits, of which only as many are drawn as the comparison needs: 53 per
node (so G_g is known to an interval, :func:`crowdsafe.randomness.gumbel_enclosure`), and 64 more
at a time for the few nodes whose key intervals still overlap the best one, compared in
``mpmath`` interval arithmetic with ε1 as the exact value of its float and the scores and
denominators exact integers (:func:`.gumbel._refine_argmax`). The returned node is the argmax of the
exact keys, so the distribution is exactly the exponential mechanism's (no floating-point Gumbel
error, no score rounding). The branch and bound (:func:`.search.gumbel_max_over_lattice`)
skips a block of nodes only when an upper bound of every key in it is below a lower bound of a
scored key. No argmax over scores is ever taken
outside the mechanism, and nothing else about the sample is read before Apply; only the running
time and the number of random bits drawn depend on the data.

*Real scores.* An objective whose score involves logarithms (``entropy``,
:attr:`.score.Objective.exact` false) cannot be an exact integer. Every node is scored in
float64 with a rigorous bound on the absolute error (:func:`.score.entropy_error_bound`),
each key interval is widened by ε1 times that bound over the key's denominator, and the nodes
that still reach the best lower key are compared in :func:`.gumbel._refine_argmax` with their scores
enclosed in ``mpmath`` interval arithmetic at each round's precision
(:meth:`.entropy_score.EntropyScorer.interval`, from exact integer weights). The float only decides which
nodes are compared exactly; the choice is still the argmax of the exact keys.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from crowdsafe.anonymize.counted import CountedSample
from crowdsafe.anonymize.plan import check_candidates
from crowdsafe.anonymize.published import PublishedScheme
from crowdsafe.anonymize.recoding import GeneralizationScheme
from crowdsafe.data import Dataset
from crowdsafe.defaults import CELLS_PER_CLASS
from crowdsafe.errors import HierarchyError, ParameterError
from crowdsafe.number_text import parse_whole
from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection.candidates import (
    candidate_mask,
    count_epsilon,
    noisy_count,
    possible_cells,
    selection_epsilon,
)
from crowdsafe.selection.gumbel import random_bits
from crowdsafe.selection.score import Objective, make_objective, node_penalties
from crowdsafe.selection.search import gumbel_max_over_lattice

# node_penalties is offered here for the publication's utility facts
__all__ = ["PRESETS", "SchemeChoice", "choose_scheme", "fixed_scheme", "node_penalties"]

#: Named data-independent schemes: level of each attribute from its hierarchy's height h. No
#: preset takes a column to its root (level h, every value ``*``), and they are ordered per
#: column, none ≤ fine ≤ medium ≤ coarse, so each has at most the possible tuples of the one
#: before (a height-1 hierarchy, such as a flag, stays exact in every preset).
PRESETS: dict[str, str] = {
    "none": "every attribute kept as it is (level 0)",
    "fine": "one level up from the leaves, below the root (level min(1, h - 1))",
    "medium": "half-way up each hierarchy, below the root (level min(ceil(h / 2), h - 1))",
    "coarse": "one level below the root (level h - 1)",
}


def _preset_level(name: str, height: int) -> int:
    top = max(height - 1, 0)  # one level below the root: the coarsest level a preset takes
    if name == "none":
        return 0
    if name == "fine":
        return min(1, top)
    if name == "medium":
        return min((height + 1) // 2, top)
    return top


def fixed_scheme(dataset: Dataset, columns: Sequence[str], spec: str | Mapping[str, int]) -> GeneralizationScheme:
    """The strongly safe scheme ``spec``: a preset name, ``"col=level,..."`` text (optionally
    starting with a preset: ``"medium,age=1"``), or a mapping. Columns not named keep the
    preset's level (``none``, i.e. level 0, without a preset). The data is not read: only the
    hierarchies' heights and names.
    """
    hierarchies = {c: dataset.hierarchies[c] for c in columns if c in dataset.hierarchies}
    preset, explicit = scheme_levels(spec)
    for column, level in explicit.items():
        if column not in columns:
            raise ParameterError(
                f"the scheme names '{column}', which is not a quasi-identifier ({', '.join(columns)})"
            )
        hierarchy = hierarchies.get(column)
        check_level(column, level, hierarchy.height if hierarchy is not None else 0)
    levels = {c: explicit.get(c, _preset_level(preset, hierarchies[c].height if c in hierarchies else 0))
              for c in columns}
    return GeneralizationScheme(levels, hierarchies, name=f"fixed scheme ({_scheme_text(levels)})")


def scheme_levels(spec: str | Mapping[str, int]) -> tuple[str, dict[str, Any]]:
    """The preset and the levels named in a fixed scheme ``spec`` (:func:`fixed_scheme`), read
    from the parameter alone: an unknown preset or a level that is not a whole number is refused."""
    preset = "none"
    explicit: dict[str, Any] = {}
    if isinstance(spec, Mapping):
        return preset, {str(c): level for c, level in spec.items()}
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
        column, _, written = item.partition("=")
        column = column.strip()
        explicit[column] = parse_whole(written.strip(), f"the level of '{column}' in the scheme")
    return preset, explicit


def check_level(column: str, level: Any, height: int) -> None:
    """Refuse a scheme's ``level`` of ``column`` outside its hierarchy's levels 0..``height``."""
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= height:
        raise HierarchyError(f"the scheme asks level {level!r} of '{column}', whose hierarchy has levels 0..{height}")


def _scheme_text(levels: Mapping[str, int]) -> str:
    return ", ".join(f"{c}={level}" for c, level in levels.items())


@dataclass(frozen=True)
class SchemeChoice:
    """The outcome of the ε1-DP selection: the scheme and what the mechanism was."""

    scheme: GeneralizationScheme | PublishedScheme  # PublishedScheme in what leaves a run (public_choice)
    epsilon1: float
    candidates: int
    sensitivity: float
    utility_loss_bound: float  # with probability 0.95 the chosen score is within this of the best
    scored: int | None = 0  # nodes scored exactly (a data-dependent diagnostic: custodian-only, not in describe())
    objective: Objective = field(default_factory=lambda: Objective("retained"))
    k: int = 2
    count_epsilon: float = 0.0  # the noisy count's part of ε1 (0: no count, every node a candidate)
    selection_epsilon: float | None = None  # the exponential mechanism's part (None: all of ε1)

    def __repr__(self) -> str:
        return (f"SchemeChoice(levels={dict(self.scheme.levels)}, epsilon1={self.epsilon1:.4g}, "
                f"candidates={self.candidates:,}, objective={self.objective.name!r})")

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
            **self.count_step(),
        }

    def count_step(self) -> dict[str, Any]:
        """The noisy count inside Am, when it ran (:mod:`.candidates`): public parameters only."""
        if not self.count_epsilon:
            return {}
        return {
            "sample_count": (f"a noisy count of the sample (discrete Laplace, epsilon_c = {self.count_epsilon:.6g}) "
                             f"kept the candidates with at most {CELLS_PER_CLASS} * count / k possible tuples "
                             "(and the coarsest); the exponential mechanism chose among them with the rest "
                             "of epsilon1 (sequential composition: epsilon1-DP on the sample)"),
            "count_epsilon": self.count_epsilon,
            "selection_epsilon": self.selection_epsilon,
            "cells_per_class": CELLS_PER_CLASS,
        }


def choose_scheme(sample: Dataset | CountedSample, columns: Sequence[str], k: int, epsilon1: float,
                  randomness: Randomness, objective: Objective | str | None = None,
                  count_share: float = 0.0) -> SchemeChoice:
    """Select a scheme with the ε1-DP exponential mechanism over every candidate lattice node
    (Theorem 6's Am), by the Gumbel-max trick: node g wins with probability
    ∝ exp(ε1 · q(S, g) / (m · Δq)) for the ``objective`` (:mod:`.score`: its proved Δq, m = 1
    when monotone, else 2), sampled exactly (module docstring: exact integer scores, exact Gumbels
    by lazy interval refinement). The candidates are fixed by the hierarchies and the objective
    alone. Only the sample is read; the choice is ε1-DP with respect to the sample.

    ``count_share`` > 0 (the plan's, :data:`crowdsafe.defaults.COUNT_SHARE`): Am first spends
    ε_c ≤ count_share · ε1 on a noisy count n̂ of the sample (exact discrete Laplace) and keeps the
    nodes with at most ρ · n̂ / k possible tuples (:mod:`.candidates`); the exponential mechanism
    then chooses among them with ε_m = ε1 − ε_c. The pair is ε1-DP by sequential composition
    (:mod:`.candidates`, PROOF.md §6)."""
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
    size = math.prod(h + 1 for h in heights)
    check_candidates(size)  # the planner refused it already; a direct call is refused here (public: the heights)
    scale, allowed, counted = float(epsilon1), None, 0.0
    if count_share:
        charged = count_epsilon(float(epsilon1), float(count_share))
        scale, counted = selection_epsilon(float(epsilon1), charged), float(charged)
        estimate = noisy_count(sample.n_rows, charged, randomness)
        allowed = candidate_mask(possible_cells(columns, heights, sample.hierarchies), estimate, k)
    cells = gumbel_cells(randomness.generator, size)
    lattice, index, scored = gumbel_max_over_lattice(sample, columns, k, scale, cells,
                                                     random_bits(randomness), objective, allowed)
    levels = dict(zip(columns, (int(x) for x in lattice.nodes()[index])))
    scheme = GeneralizationScheme(
        levels, {c: sample.hierarchies[c] for c in columns},
        name=f"scheme chosen by the exponential mechanism ({_scheme_text(levels)})",
    )
    sensitivity = objective.sensitivity(k)
    factor = 1.0 if objective.monotone else 2.0
    bound = factor * sensitivity / scale * (np.log(size) + np.log(20.0))  # over the nodes allowed
    return SchemeChoice(scheme, float(epsilon1), size, sensitivity, float(bound), scored, objective, int(k),
                        counted, scale if count_share else None)
