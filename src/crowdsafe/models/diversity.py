"""ℓ-diversity (Machanavajjhala, Gehrke, Kifer and Venkitasubramaniam 2006/2007), per class.

For a class E with sensitive-value counts r_1 ≥ r_2 ≥ … ≥ r_m:

- **distinct ℓ**: m, the number of distinct sensitive values. It is also the class's
  *effective anonymity* (the candidate set an attacker who located the class is left with;
  Ganta, Kasiviswanathan and Smith 2008).
- **entropy ℓ**: exp(H(E)) with H the Shannon entropy (natural log) of the class's sensitive
  distribution; a class is entropy ℓ-diverse iff exp(H(E)) ≥ ℓ. The value is a real number and
  is never rounded: truncating it to an integer (as some tools do) understates diversity.
- **recursive (c, ℓ)**: E satisfies it iff r_1 < c · (r_ℓ + r_{ℓ+1} + … + r_m). We report, per
  class, the bound r_1 / (r_ℓ + … + r_m) (infinite when E has fewer than ℓ values): E satisfies
  (c, ℓ) exactly for the c strictly above it.

A table satisfies a model iff every class does, so its value is the minimum (ℓ) or maximum
(the c bound) over classes.
"""

from __future__ import annotations

import numpy as np

from crowdsafe.errors import ParameterError
from crowdsafe.models.classes import SensitiveCounts


def distinct_values(counts: SensitiveCounts) -> np.ndarray:
    """Distinct sensitive values per class (distinct ℓ, = effective anonymity)."""
    return counts.distinct_per_class


def entropy_values(counts: SensitiveCounts) -> np.ndarray:
    """exp(H) per class, H the natural-log entropy of the class's sensitive distribution."""
    q = counts.share_in_class
    entropy = -np.bincount(counts.cls, weights=q * np.log(q), minlength=counts.n_classes)
    return np.exp(np.maximum(entropy, 0.0))


def recursive_c_bounds(counts: SensitiveCounts, l: int) -> np.ndarray:
    """Per class, r_1 / (r_l + … + r_m): the class is recursive (c, l)-diverse iff c exceeds it."""
    if int(l) != l or l < 1:
        raise ParameterError(f"l must be a whole number >= 1 for recursive (c, l)-diversity, got {l}")
    order = np.lexsort((-counts.count, counts.cls))
    cls = counts.cls[order]
    count = counts.count[order].astype(np.float64)
    starts = np.searchsorted(cls, np.arange(counts.n_classes))
    rank = np.arange(len(cls)) - starts[cls]
    largest = count[starts]
    tail = np.bincount(cls, weights=np.where(rank >= l - 1, count, 0.0), minlength=counts.n_classes)
    with np.errstate(divide="ignore"):
        return np.where(tail > 0, largest / np.where(tail > 0, tail, 1.0), np.inf)
