"""Sample_β: the Bernoulli sample the safe pipeline starts from.

Each row of the table is kept independently with probability exactly β (the float's value), from the secure source
(:mod:`crowdsafe.randomness`). Sampling is what turns a safe k-anonymization into
(ε, δ)-differential privacy: a mechanism that is (β, ε, δ)-DPS, i.e. differentially private
when run on a Bernoulli(β) sample, is (ε, δ)-DP on the whole table (Li, Qardaji and Su 2012,
Theorems 5 and 6; :mod:`crowdsafe.privacy.amplification`). The draw is one vectorised call, and
neither the rate nor the stream depends on the data: β is fixed by the plan before the data is
read. The Spark engine draws the same sample per partition
(:mod:`crowdsafe.engines.spark.sampling`, one child stream per partition).
"""

from __future__ import annotations

from crowdsafe.data import Dataset
from crowdsafe.randomness import Randomness


def sample_of(dataset: Dataset, beta: float, randomness: Randomness) -> Dataset:
    """Sample_β(D): each row kept independently with probability β (one vectorised draw of
    ``dataset.n_rows`` Bernoulli(β) trials from ``randomness``)."""
    return dataset.filter_rows(randomness.bernoulli(dataset.n_rows, beta))


__all__ = ["sample_of"]
