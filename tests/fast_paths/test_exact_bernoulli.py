"""mechanisms/exact.bernoulli_fraction: ``uniform{0..d-1} < numerator`` in int64 (d below
_INT64_SAFE) or a uniform real compared digit by digit (the reference). Randomized and drawing
differently: with fixed seeds each twin's successes pass a binomial test against
numerator/denominator and the two a chi-square test of homogeneity (p > 1e-3), with the limit
just below, at and above the denominator."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from crowdsafe.mechanisms import exact
from crowdsafe.randomness import Randomness

P_FLOOR = 1e-3


@pytest.mark.parametrize("numerator, denominator", [(1, 3), (5, 7), (0, 4), (4, 4), (1234567, 10**7)])
def test_int64_and_digit_bernoullis_agree_in_distribution(numerator, denominator):
    n = 20_000
    numerators = np.full(n, numerator, dtype=np.int64)
    fast = exact._bernoulli_fraction_int64(Randomness(3).generator, numerators, denominator)
    slow = exact._bernoulli_fraction_by_digits(Randomness(4).generator, numerators, denominator)
    p = numerator / denominator
    for draws in (fast, slow):
        if p in (0.0, 1.0):
            assert draws.all() == (p == 1.0) and draws.any() == (p == 1.0)
        else:
            assert stats.binomtest(int(draws.sum()), n, p).pvalue > P_FLOOR
    if 0.0 < p < 1.0:
        table = np.array([[fast.sum(), n - fast.sum()], [slow.sum(), n - slow.sum()]])
        assert stats.chi2_contingency(table).pvalue > P_FLOOR


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_bernoulli_fraction_switches_at_the_int64_limit(monkeypatch, shift):
    denominator, numerator, n = 10, 3, 20_000
    monkeypatch.setattr(exact, "_INT64_SAFE", denominator + shift)
    draws = exact.bernoulli_fraction(Randomness(7 + shift).generator, np.full(n, numerator, dtype=np.int64),
                                     denominator)
    assert stats.binomtest(int(draws.sum()), n, numerator / denominator).pvalue > P_FLOOR
