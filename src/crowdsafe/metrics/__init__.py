"""Utility metrics: how much a release loses against its original.

- Information loss (:mod:`~crowdsafe.metrics.information_loss`): NCP/GCP, discernibility,
  C_avg, suppression rate, generalization height and precision, non-uniform entropy, both for
  a release table (:func:`information_loss`) and, cheaply, for a full-domain recoding scored on
  the frequency table (:class:`FullDomainScorer`, what a lattice search uses).
- Marginal distances (:mod:`~crowdsafe.metrics.marginals`): total variation and KL of one- and
  two-way marginals.
- Workload error (:mod:`~crowdsafe.metrics.workload`): random counting queries, answered from
  the release with values spread uniformly within generalized cells.
- Classifier utility (:mod:`~crowdsafe.metrics.classifier`): scikit-learn, or the majority
  lookup (each generalized tuple predicts its majority target), trained on the release, tested
  on held-out original rows, against training on the original.
- :func:`utility` (keywords) or :func:`measure_utility` (a :class:`UtilityRequest`): all of
  them, as printed by ``crowdsafe compare``.
"""

from crowdsafe.metrics.classifier import ClassifierReport, classifier_utility, majority_lookup, release_accuracy
from crowdsafe.metrics.information_loss import (
    LOSS_METRICS,
    FullDomainScorer,
    InformationLoss,
    information_loss,
)
from crowdsafe.metrics.marginals import MarginalDistance, MarginalReport, marginal_distances
from crowdsafe.metrics.report import UtilityReport, UtilityRequest, measure_utility, utility
from crowdsafe.metrics.workload import Workload, WorkloadReport, answer, make_workload, workload_error

__all__ = [
    "LOSS_METRICS",
    "ClassifierReport",
    "FullDomainScorer",
    "InformationLoss",
    "MarginalDistance",
    "MarginalReport",
    "UtilityReport",
    "UtilityRequest",
    "Workload",
    "WorkloadReport",
    "answer",
    "classifier_utility",
    "information_loss",
    "majority_lookup",
    "make_workload",
    "marginal_distances",
    "measure_utility",
    "release_accuracy",
    "utility",
    "workload_error",
]
