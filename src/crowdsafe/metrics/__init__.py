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

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Imported here, not on first use: the submodule and the function share the name
# ``information_loss``, and importing the submodule would set the package's attribute to it.
from crowdsafe.metrics.information_loss import (
    LOSS_METRICS,
    FullDomainScorer,
    InformationLoss,
    information_loss,
)

if TYPE_CHECKING:
    from crowdsafe.metrics.classifier import ClassifierReport, classifier_utility, majority_lookup, release_accuracy
    from crowdsafe.metrics.marginals import MarginalDistance, MarginalReport, marginal_distances
    from crowdsafe.metrics.report import UtilityReport, UtilityRequest, measure_utility, utility
    from crowdsafe.metrics.workload import Workload, WorkloadReport, answer, make_workload, workload_error

#: Where each other public name lives: its module is imported when one of its names is first
#: read, so measuring a release's information loss does not import the classifier's measure
#: (slow to import) and the others.
_HOME = {
    "ClassifierReport": "classifier", "classifier_utility": "classifier", "majority_lookup": "classifier",
    "release_accuracy": "classifier",
    "MarginalDistance": "marginals", "MarginalReport": "marginals", "marginal_distances": "marginals",
    "UtilityReport": "report", "UtilityRequest": "report", "measure_utility": "report", "utility": "report",
    "Workload": "workload", "WorkloadReport": "workload", "answer": "workload", "make_workload": "workload",
    "workload_error": "workload",
}

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


def __getattr__(name: str) -> object:
    """A public name, its module imported on first use (:data:`_HOME`)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'crowdsafe.metrics' has no attribute {name!r}")
    return getattr(importlib.import_module(f"crowdsafe.metrics.{home}"), name)
