"""mechanisms.binomial: exact Binomial(n, 1/2) (popcount or rejection) and Binomial(n, p).

Expected distributions come from SciPy's binomial pmf and the closed-form mean n·p and variance
n·p·(1 − p), never from the code under test. Fixed seeds; a chi-square p-value below 1e-3 fails;
the z-scores of the mean and of the variance of K draws must stay within 4.5 (the variance's
standard error taken as σ²·√(2/(K − 1)), the normal case: Binomial(n, p) with n·p(1 − p) ≥ 10^5
is normal far beyond what K draws resolve).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import binomial as exact_binomial
from crowdsafe.perturb import stages
from crowdsafe.randomness import Randomness
from statistics_helpers import binomial_fit_pvalue

P_FLOOR = 1e-3
Z_LIMIT = 4.5


def _rng(seed: int) -> np.random.Generator:
    return Randomness(seed).generator


def fair_draws(seed: int, n: int, draws: int, **options) -> np.ndarray:
    rng = _rng(seed)
    return np.array([exact_binomial.fair_binomial(rng, n, **options) for _ in range(draws)])


@pytest.mark.parametrize("n", [1, 7, 64, 65, 200])
def test_popcount_fair_binomial_has_the_binomial_pmf(n):
    assert binomial_fit_pvalue(fair_draws(1, n, 4000), n, 0.5) > P_FLOOR


@pytest.mark.parametrize("n", [2, 3, 21, 200])
def test_rejection_fair_binomial_has_the_binomial_pmf(n):
    """popcount_limit = 0 forces the rejection sampler on small counts, where its float bounds
    often leave the decision to the interval enclosure: both paths run here."""
    assert binomial_fit_pvalue(fair_draws(2, n, 3000, popcount_limit=0), n, 0.5) > P_FLOOR


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_popcount_and_rejection_agree_at_the_limit(shift):
    n = 40
    assert binomial_fit_pvalue(fair_draws(3 + shift, n, 3000, popcount_limit=n + shift), n, 0.5) > P_FLOOR


def test_the_pmf_test_rejects_a_sampler_without_the_envelope_factor(monkeypatch):
    """Dropping 2^k from the acceptance a = r(j)·2^k thins the tails: the same test must fail."""
    original = exact_binomial._accepts
    monkeypatch.setattr(exact_binomial, "_accepts", lambda words, m, j, k: original(words, m, j, 0))
    assert binomial_fit_pvalue(fair_draws(2, 200, 3000, popcount_limit=0), 200, 0.5) < P_FLOOR


@pytest.mark.parametrize("n, p", [(30, 0.3), (12, 0.5), (5000, 0.001), (40, 2.0**-3 + 2.0**-60), (25, 0.999),
                                  (3, 1 / 3)])
def test_binomial_has_the_binomial_pmf(n, p):
    rng = _rng(4)
    sample = np.array([exact_binomial.binomial(rng, n, p) for _ in range(3000)])
    assert binomial_fit_pvalue(sample, n, p) > P_FLOOR


def test_binomial_through_the_rejection_branch_has_the_binomial_pmf():
    rng = _rng(5)
    sample = np.array([exact_binomial.binomial(rng, 60, 0.3, popcount_limit=0) for _ in range(2000)])
    assert binomial_fit_pvalue(sample, 60, 0.3) > P_FLOOR


def z_scores(sample: list[int], mean: float, variance: float) -> tuple[float, float]:
    """The z-scores of the sample's mean and variance (exact integers, then floats)."""
    k = len(sample)
    centred = [x - round(mean) for x in sample]  # exact: the draws can exceed float precision
    offset = sum(centred) / k
    sample_mean = round(mean) + offset
    sample_variance = sum((c - offset) ** 2 for c in centred) / (k - 1)
    return ((sample_mean - mean) / math.sqrt(variance / k),
            (sample_variance - variance) / (variance * math.sqrt(2 / (k - 1))))


@pytest.mark.parametrize("n", [2**40, 2**40 + 1, 2**70])
def test_fair_binomial_of_huge_counts_has_the_mean_and_variance(n):
    rng = _rng(6)
    sample = [exact_binomial.fair_binomial(rng, n) for _ in range(3000)]
    z_mean, z_variance = z_scores(sample, n / 2, n / 4)
    assert abs(z_mean) < Z_LIMIT and abs(z_variance) < Z_LIMIT


@pytest.mark.slow  # half a second or more (the quick loop: README)
@pytest.mark.parametrize("n", [2**40, 2**70])
def test_binomial_of_huge_counts_has_the_mean_and_variance(n):
    rng, p = _rng(7), 0.001
    sample = [exact_binomial.binomial(rng, n, p) for _ in range(800)]
    z_mean, z_variance = z_scores(sample, n * p, n * p * (1 - p))
    assert abs(z_mean) < Z_LIMIT and abs(z_variance) < Z_LIMIT


def test_certain_outcomes_draw_nothing_and_bad_arguments_are_refused():
    rng = _rng(8)
    assert exact_binomial.binomial(rng, 2**70, 0.0) == 0
    assert exact_binomial.binomial(rng, 2**70, 1.0) == 2**70
    assert exact_binomial.binomial(rng, 0, 0.3) == 0
    assert rng.random() == _rng(8).random()  # nothing was drawn
    for bad in (-1, 2.5, True):
        with pytest.raises(ParameterError):
            exact_binomial.binomial(rng, bad, 0.5)
        with pytest.raises(ParameterError):
            exact_binomial.fair_binomial(rng, bad)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ParameterError):
            exact_binomial.binomial(rng, 10, bad)


def test_block_width_satisfies_the_envelope_condition():
    """w² > 2·ln 2·m, the condition of the envelope a ≤ 1 (module docstring)."""
    for m in [1, 2, 3, 10, 1000, 2**40, 2**64 - 1, 2**64, 3**60]:
        w = exact_binomial.block_width(m)
        assert w * w > 2 * math.log(2) * m * (1 + 1e-12) and (w - 2) ** 2 <= 2 * 0.6932 * m


def test_the_acceptance_never_exceeds_one_on_small_counts():
    """a(j) = C(2m, m + j)/C(2m, m)·2^⌊j/w⌋ ≤ 1 for every j, in exact integers."""
    for m in range(1, 300):
        w = exact_binomial.block_width(m)
        centre = math.comb(2 * m, m)
        assert all(math.comb(2 * m, m + j) * 2 ** (j // w) <= centre for j in range(m + 1))


def test_stages_binomial_is_the_exact_sampler():
    a, b = Randomness(9), Randomness(9)
    assert [stages.binomial(10**6, 0.3, a) for _ in range(5)] == [exact_binomial.binomial(b.generator, 10**6, 0.3)
                                                                   for _ in range(5)]


def test_interval_enclosure_contains_the_exact_acceptance():
    """Against the exact fraction: low ≤ a ≤ high, and high − low < 2^(20 − bits) (2^16 ulps of
    slack on each of three loggammas, then exp with a ≤ 1), k = ⌊j/w⌋ as the sampler has it."""
    for m, j in [(1, 1), (10, 3), (10, 9), (100, 37), (2**20, 700), (2**20, 2000), (3**40, 1500), (2**70, 3000)]:
        k = j // exact_binomial.block_width(m)
        exact = exact_binomial.acceptance(m, j, k)
        for bits in (64, 128, 300):
            low, high = exact_binomial.acceptance_enclosure(m, j, k, bits)
            assert low <= exact <= high and high - low < Fraction(1, 2 ** (bits - 20))
    assert exact_binomial.acceptance(10, 3, 0) == Fraction(math.comb(20, 13), math.comb(20, 10))


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_rejection_through_the_interval_enclosure_has_the_binomial_pmf(monkeypatch):
    """PRODUCT_LIMIT = 0 sends every undecided acceptance to the mpmath enclosure."""
    monkeypatch.setattr(exact_binomial, "PRODUCT_LIMIT", 0)
    assert binomial_fit_pvalue(fair_draws(10, 30, 1500, popcount_limit=0), 30, 0.5) > P_FLOOR


def test_counts_beyond_the_floats_are_drawn_exactly():
    """n beyond 2^500: the float bounds are skipped, every acceptance is decided by the enclosure."""
    n, rng = 2**600 + 1, _rng(11)
    halves = [exact_binomial.fair_binomial(rng, n) for _ in range(3)]
    assert all(abs(x - n / 2) < 5 * math.sqrt(n / 4) for x in halves) and len(set(halves)) == 3
