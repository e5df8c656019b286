"""Utility metrics: how much a release loses against its original.

Information loss (:mod:`crowdsafe.metrics.information_loss`): NCP/GCP, discernibility, C_avg,
suppression rate, generalization height and precision, non-uniform entropy, both for a release
table (:func:`information_loss`) and, cheaply, for a full-domain recoding scored on the frequency
table (:class:`FullDomainScorer`, what a lattice search uses).
"""

from crowdsafe.metrics.information_loss import (
    LOSS_METRICS,
    FullDomainScorer,
    InformationLoss,
    information_loss,
)

__all__ = ["LOSS_METRICS", "FullDomainScorer", "InformationLoss", "information_loss"]
