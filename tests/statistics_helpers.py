"""Goodness-of-fit checks shared by the tests of randomized code (fixed seeds make them deterministic)."""

from __future__ import annotations

import numpy as np
from scipy import stats


def binomial_fit_pvalue(sample: np.ndarray, trials: int, p: float) -> float:
    """The chi-square p-value of ``sample`` (draws of a count) against Binomial(``trials``, ``p``),
    with the cells expected below 5 pooled into one."""
    observed = np.bincount(sample, minlength=trials + 1)
    expected = stats.binom.pmf(np.arange(trials + 1), trials, p) * len(sample)
    keep = expected >= 5
    if not keep.all():
        observed = np.append(observed[keep], observed[~keep].sum())
        expected = np.append(expected[keep], expected[~keep].sum())
    return float(stats.chisquare(observed, expected).pvalue)
