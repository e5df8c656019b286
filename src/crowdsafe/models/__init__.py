"""Syntactic privacy models and re-identification risk, on any table.

Everything is computed from two group-bys (class sizes, and class x sensitive-value counts):
:class:`EquivalenceClasses` builds them once, and each model is a vectorized function of them.

- k-anonymity: :func:`k_anonymity`, :func:`classes_below`;
- ℓ-diversity: :func:`l_diversity` (distinct), :func:`entropy_l_diversity`,
  :func:`recursive_cl_diversity`;
- t-closeness with the Earth Mover's Distance (equal, ordered, hierarchical ground distance):
  :func:`t_closeness`;
- δ-disclosure privacy and β-likeness (basic, enhanced): :func:`delta_disclosure`,
  :func:`beta_likeness`;
- effective anonymity per class: :func:`effective_anonymity`;
- re-identification risk: :mod:`crowdsafe.models.risk`;
- the whole assessment behind ``crowdsafe check``: :func:`assess` (keywords) or
  :func:`run_assessment` (an :class:`AssessRequest`).
"""

from crowdsafe.models.classes import EquivalenceClasses, SensitiveCounts
from crowdsafe.models.closeness import GROUND_DISTANCES
from crowdsafe.models.report import AssessRequest, PrivacyReport, SensitiveReport, assess, run_assessment
from crowdsafe.models.risk import (
    DEFAULT_THRESHOLD,
    RiskReport,
    assess_risk,
    zayatz_population_uniques,
)
from crowdsafe.models.syntactic import (
    beta_likeness,
    classes_below,
    delta_disclosure,
    effective_anonymity,
    entropy_l_diversity,
    k_anonymity,
    l_diversity,
    recursive_cl_diversity,
    t_closeness,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "GROUND_DISTANCES",
    "AssessRequest",
    "EquivalenceClasses",
    "PrivacyReport",
    "RiskReport",
    "SensitiveCounts",
    "SensitiveReport",
    "assess",
    "assess_risk",
    "beta_likeness",
    "classes_below",
    "delta_disclosure",
    "effective_anonymity",
    "entropy_l_diversity",
    "k_anonymity",
    "l_diversity",
    "recursive_cl_diversity",
    "run_assessment",
    "t_closeness",
    "zayatz_population_uniques",
]
