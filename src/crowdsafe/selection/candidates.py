"""The candidates sized by a noisy count: a DP-charged first step inside Am, for small ε.

At small ε the sample is small (n·β rows) and k is large, so only nodes with few possible
tuples can fill classes of k rows; yet the exponential mechanism chooses among every lattice
node, and with a small ε1 the mass of fine nodes (which suppress most of the sample) outweighs
the few good coarse ones. Which nodes are too fine depends on the sample's size, which is not
public. So Am spends part of ε1 to learn it (:func:`noisy_count`) and then runs the exponential
mechanism only over the nodes that the noisy count says a sample of that size can fill
(:func:`candidate_mask`):

1. n̂ = |S| + Z, Z discrete Laplace with Pr[Z = z] ∝ exp(−ε_c · |z|), sampled exactly
   (:func:`crowdsafe.mechanisms.exact.discrete_laplace`, integer arithmetic on the project's
   secure randomness), ε_c the exact rational :func:`count_epsilon` ≤ ``COUNT_SHARE`` · ε1.
   |S| changes by at most 1 when one row is added to or removed from S: the count is ε_c-DP.
2. The candidates N(n̂) are the lattice nodes g with cells(g) · k ≤ ρ · n̂ (ρ =
   ``CELLS_PER_CLASS``), and always the nodes with the fewest cells: cells(g) is the number of
   tuples node g can publish, the product over the columns of the number of nodes of the
   column's hierarchy at g's level (public: from the hierarchies; an *observed* hierarchy,
   whose node counts come from the data, counts as 1 at every level, so it never narrows the
   candidates). A node with more than ρ·n̂/k possible tuples has on average fewer than k/ρ rows
   per tuple.
3. The exponential mechanism over N(n̂) with ε_m = ε1 − ε_c (rounded down to a float), the
   scores and Δq unchanged (:mod:`.score`).

Privacy: for each fixed value of n̂, N(n̂) is fixed (it depends on n̂, k, ρ and the hierarchies
alone), so step 3 is ε_m-DP in S; step 1 is ε_c-DP. By adaptive sequential composition the pair
(n̂, g) is (ε_c + ε_m)-DP, with ε_c + ε_m ≤ ε1, and Am returns g alone (post-processing). So Am is
ε1-DP with respect to the sample, and Li, Qardaji and Su's Theorem 6 applies unchanged. n̂ is
not published (it is a DP output, but nothing needs it); what is published of the step is
public: ε_c, ε_m and ρ (selection/PROOF.md, §6).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

from crowdsafe.data import Hierarchy
from crowdsafe.defaults import CELLS_PER_CLASS, COUNT_SHARE
from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.exact import discrete_laplace, rational_at_most
from crowdsafe.randomness import Randomness

__all__ = ["CELLS_PER_CLASS", "COUNT_SHARE", "candidate_mask", "count_epsilon", "noisy_count", "possible_cells",
           "selection_epsilon"]


def count_epsilon(epsilon1: float, share: float = COUNT_SHARE) -> Fraction:
    """ε_c, the noisy count's part of ε1: the exact rational p/2^j ≤ share · ε1 that the sampler
    uses (rounded towards more noise)."""
    if not (0 < share < 1) or not (np.isfinite(epsilon1) and epsilon1 > 0):
        raise ParameterError(f"the noisy count needs 0 < share < 1 and epsilon1 > 0, got {share!r}, {epsilon1!r}")
    value = rational_at_most(Fraction(epsilon1) * Fraction(share))
    if value.denominator >= 1 << 56:
        raise ParameterError(f"epsilon1 = {epsilon1:g} is too small for the noisy count of the sample")
    return value


def selection_epsilon(epsilon1: float, counted: Fraction) -> float:
    """ε_m: the largest float at most ε1 − ε_c (exact values), the exponential mechanism's part."""
    exact = Fraction(epsilon1) - counted
    if exact <= 0:
        raise ParameterError("the noisy count would spend all of epsilon1")
    value = float(exact)
    if Fraction(value) > exact:
        value = float(np.nextafter(value, 0.0))
    return value


def noisy_count(rows: int, counted: Fraction, randomness: Randomness) -> int:
    """n̂ = rows + Z, Z discrete Laplace with Pr[Z = z] ∝ exp(−ε_c · |z|), ε_c = ``counted``,
    sampled exactly from ``randomness``'s generator: ε_c-DP for a count (sensitivity 1)."""
    noise = discrete_laplace(randomness.generator, counted.numerator, counted.denominator, 1)
    return int(rows) + int(noise[0])


def possible_cells(columns: Sequence[str], heights: Sequence[int],
                   hierarchies: Mapping[str, Hierarchy]) -> np.ndarray:
    """cells(g) of every node g of the lattice with these ``heights`` (float64, in the lattice's
    node order: the last column varies fastest): the product over the columns of the number of
    nodes of the column's hierarchy at g's level. An observed hierarchy (its node counts come
    from the data) counts as 1, so the result depends on the hierarchies' declarations alone."""
    sizes = []
    for column, height in zip(columns, heights):
        hierarchy = hierarchies[column]
        if hierarchy.observed:
            sizes.append(np.ones(height + 1))
        else:  # a column the objective fixes has height 0 here: its level 0
            sizes.append(np.array([float(hierarchy.size(level)) for level in range(height + 1)]))
    cells = np.ones(1)
    for size in sizes:
        cells = np.multiply.outer(cells, size).ravel()
    return cells


def candidate_mask(cells: np.ndarray, estimate: int, k: int, per_class: int = CELLS_PER_CLASS) -> np.ndarray:
    """The candidates N(n̂): cells(g) · k ≤ ρ · n̂, and always the nodes with the fewest cells
    (so N(n̂) is never empty). A function of the noisy count and public quantities only."""
    cells = np.asarray(cells, dtype=np.float64)
    return (cells * float(k) <= float(per_class) * float(estimate)) | (cells == cells.min())
