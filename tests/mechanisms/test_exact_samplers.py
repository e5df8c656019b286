"""Exact integer samplers: their empirical distributions match the theory.

Expected pmfs are computed here, independently of the library (direct formulas and sums).
Goodness of fit uses a chi-square test with fixed seeds; a p-value below 1e-3 fails.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import exact


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _chi_square_pvalue(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square test on the bins of ``support`` plus one bin for everything else."""
    counts = np.array([np.count_nonzero(samples == x) for x in support] + [0])
    counts[-1] = samples.size - counts[:-1].sum()
    expected = np.append(pmf, max(0.0, 1.0 - pmf.sum())) * samples.size
    keep = expected > 5
    observed, expected = counts[keep], expected[keep]
    expected = expected * observed.sum() / expected.sum()
    return float(stats.chisquare(observed, expected).pvalue)


@pytest.mark.parametrize(
    ("numerator", "denominator"),
    [(0, 1), (3, 10), (1, 1), (27, 10), (10, 3), (2**70, 2**70), (3 * 2**69, 2**70)],
)
def test_bernoulli_exp_neg_has_probability_exp_minus_gamma(numerator, denominator):
    n = 200_000
    draws = exact.bernoulli_exp_neg(_rng(1), np.array([numerator] * n, dtype=object), denominator)
    p = math.exp(-numerator / denominator)
    standard_error = math.sqrt(p * (1 - p) / n) or 1e-12
    assert abs(draws.mean() - p) <= 5 * standard_error + 1e-12


def test_bernoulli_fraction_big_denominator_is_exact_in_distribution():
    n = 200_000
    draws = exact.bernoulli_fraction(_rng(2), np.array([2**69] * n, dtype=object), 3 * 2**68)
    assert abs(draws.mean() - 2 / 3) <= 5 * math.sqrt(2 / 9 / n)
    # p = 1 and p = 0 are certain outcomes.
    assert exact.bernoulli_fraction(_rng(3), np.array([2**80], dtype=object), 2**80).all()
    assert not exact.bernoulli_fraction(_rng(3), np.array([0] * 100, dtype=object), 2**80).any()


@pytest.mark.parametrize(("s", "t"), [(1, 1), (1, 3), (3, 2), (5, 17)])
def test_discrete_laplace_pmf(s, t):
    samples = exact.discrete_laplace(_rng(4), s, t, 300_000)
    alpha = math.exp(-s / t)
    support = np.arange(-60, 61)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(support)
    assert _chi_square_pvalue(samples, support, pmf) > 1e-3
    assert samples.dtype == np.int64


def test_discrete_laplace_large_scale_matches_variance():
    # t/s = 2**40/3: variance 2α/(1−α)² with α = exp(−3/2**40).
    samples = exact.discrete_laplace(_rng(5), 3, 2**40, 100_000).astype(np.float64)
    alpha = math.exp(-3 / 2**40)
    variance = 2 * alpha / (1 - alpha) ** 2
    # The sample variance of a Laplace has relative standard error about sqrt(5/n) ~ 0.007.
    assert abs(samples.var() / variance - 1) < 0.04
    assert abs(samples.mean()) < 5 * math.sqrt(variance / samples.size)


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(9, 4), Fraction(50), Fraction(1001, 7)])
def test_discrete_gaussian_pmf(sigma2):
    samples = exact.discrete_gaussian(_rng(6), sigma2, 200_000)
    support = np.arange(-200, 201)
    weights = np.exp(-(support.astype(float) ** 2) / (2 * float(sigma2)))
    pmf = weights / weights.sum()
    assert _chi_square_pvalue(samples, support, pmf) > 1e-3


def test_discrete_gaussian_huge_sigma_uses_exact_big_integer_path():
    sigma2 = Fraction(3 * 2**40 + 1, 2**10)  # σ ≈ 55k: acceptance needs Python integers
    samples = exact.discrete_gaussian(_rng(7), sigma2, 50_000).astype(np.float64)
    assert abs(samples.var() / float(sigma2) - 1) < 0.04
    assert abs(samples.mean()) < 5 * math.sqrt(float(sigma2) / samples.size)


@given(s=st.integers(1, 1000), t=st.integers(1, 2**40), size=st.integers(0, 50), seed=st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_discrete_laplace_returns_requested_number_of_integers(s, t, size, seed):
    out = exact.discrete_laplace(_rng(seed), s, t, size)
    assert out.shape == (size,) and out.dtype == np.int64


@given(x=st.floats(1e-9, 1e9, allow_nan=False), bits=st.integers(8, 40))
@settings(max_examples=200, deadline=None)
def test_rationals_round_towards_safety(x, bits):
    low, high = exact.rational_at_most(x, bits), exact.rational_at_least(x, bits)
    assert low <= Fraction(x) <= high
    assert float(low) >= x * (1 - 2.0 ** (1 - bits))
    assert float(high) <= x * (1 + 2.0 ** (1 - bits))


def test_bad_sampler_parameters_are_refused():
    with pytest.raises(ParameterError):
        exact.discrete_laplace(_rng(0), 0, 1, 3)
    with pytest.raises(ParameterError):
        exact.discrete_gaussian(_rng(0), Fraction(0), 3)
    with pytest.raises(ParameterError):
        exact.bernoulli_exp_neg(_rng(0), np.array([-1]), 2)
    with pytest.raises(ParameterError):
        exact.rational_at_most(0.0)
