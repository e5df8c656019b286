"""The exponential mechanism samples exactly (issue 16, "exact selection").

Expected probabilities are computed here from the definition, exp(ε·q/(cΔ)) normalised, never
from the code under test. Chi-square tests use fixed seeds and reject at p < 1e-4 (a false alarm
once in 10,000 seeds; these seeds pass, and a wrong distribution fails by far)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from crowdsafe.mechanisms import exact
from crowdsafe.mechanisms.exponential import (
    _FAST,
    _sample,
    _Weights,
    exponential_mechanism,
    exponential_probabilities,
)
from crowdsafe.randomness import Randomness

P_MIN = 1e-4


def _counts(scores, runs, seed, **options) -> np.ndarray:
    stream = Randomness(seed)
    counts = np.zeros(len(scores))
    for _ in range(runs):
        counts[exponential_mechanism(np.asarray(scores), randomness=stream, **options).index] += 1
    return counts


def _ideal(scores, epsilon, sensitivity, monotonic=False) -> np.ndarray:
    c = 1.0 if monotonic else 2.0
    logits = np.array([epsilon * q / (c * sensitivity) for q in scores], dtype=np.float64)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


@pytest.mark.parametrize(
    ("scores", "epsilon", "sensitivity", "monotonic", "seed"),
    [
        ([0.0, 1.0, 2.0, 3.0], 2.0, 1.0, False, 1),  # real scores (rounded to the grid)
        ([0, 3, 5, 6, 6], 1.0, 2.0, False, 2),  # integer scores: used as they are
        ([0.3, 0.1, 0.7], 3.0, 0.25, True, 3),  # monotone: no factor 2
        ([-40.0, -1.5, 0.0, 2.25], 0.5, 1.0, False, 4),
    ],
)
@pytest.mark.slow
def test_selection_frequencies_match_the_exponential_weights(scores, epsilon, sensitivity, monotonic, seed):
    runs = 6000
    counts = _counts(scores, runs, seed, epsilon=epsilon, sensitivity=sensitivity, monotonic=monotonic)
    expected = _ideal(scores, epsilon, sensitivity, monotonic)
    keep = expected * runs >= 5  # chi-square needs expected counts ≥ 5; the rest must be rare
    assert stats.chisquare(counts[keep], expected[keep] / expected[keep].sum() * counts[keep].sum()).pvalue > P_MIN
    assert counts[~keep].sum() <= 5 * max(1.0, expected[~keep].sum() * runs)


def test_the_probabilities_of_the_sampler_are_the_ideal_ones_to_2_to_the_minus_19():
    scores = np.array([0.0, 1.0, 2.5, 7.0, -3.0])
    ours = exponential_probabilities(scores, epsilon=1.3, sensitivity=0.7)
    ideal = _ideal(scores, 1.3, 0.7)
    # the rate is ε/(2Δ) to within a relative 2^-19, and scores are on a 2^-21·Δ grid
    assert np.allclose(ours, ideal, rtol=1e-4, atol=0)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_equal_scores_give_a_uniform_choice():
    counts = _counts(np.full(7, 3.25), 7000, 5, epsilon=1.0, sensitivity=1.0)
    assert stats.chisquare(counts).pvalue > P_MIN
    counts = _counts(np.array([5, 5, 5, 5], dtype=np.int64), 4000, 6, epsilon=0.1, sensitivity=1.0)
    assert stats.chisquare(counts).pvalue > P_MIN


def test_minus_infinity_is_never_chosen_and_the_best_wins_when_far_ahead():
    counts = _counts([0.0, -np.inf, 1.0], 500, 7, epsilon=1.0, sensitivity=1.0)
    assert counts[1] == 0
    far = np.array([0.0, 1e6, 3.0])
    assert exponential_mechanism(far, epsilon=1.0, sensitivity=1.0, randomness=8).index == 1


def test_the_two_stage_acceptance_is_exact():
    """A candidate whose γ numerator exceeds 2^60 is accepted by exp(−2^60/t)·exp(−(N − 2^60)/t):
    with t = 2^60 and N = 2^60 + t/2 its weight is exp(−1.5) against exp(0) for the other."""
    t = 1 << 60
    weights = _Weights(
        index=np.arange(2), capped=np.array([_FAST, 0], dtype=np.int64),
        exact_numerator=lambda j: [_FAST + t // 2, 0][j], t=t, estimate=np.array([1.5 * t, 0.0]),
    )
    generator = Randomness(9).generator
    runs = 4000
    first = sum(_sample(weights, generator) == 0 for _ in range(runs))
    p = math.exp(-1.5) / (1 + math.exp(-1.5))
    assert stats.binomtest(first, runs, p).pvalue > P_MIN


def test_numerators_between_2_to_the_60_and_2_to_the_62_are_exact():
    """ε = 2^-19 makes the rate λ ≈ 2^-40 per step (t ≈ 2^60) while the scores are 2^40 steps
    apart: γ = 1.5 with a numerator of about 1.5·2^60, which takes the two-stage path."""
    scores = np.array([0.0, 1.5 * 2**20])
    epsilon = 2.0**-19
    runs = 3000
    counts = _counts(scores, runs, 12, epsilon=epsilon, sensitivity=1.0)
    p = _ideal(scores, epsilon, 1.0)
    assert p[0] == pytest.approx(math.exp(-1.5) / (1 + math.exp(-1.5)))
    assert stats.binomtest(int(counts[0]), runs, p[0]).pvalue > P_MIN


@pytest.mark.parametrize(("numerator", "denominator"), [(0, 1), (1, 3), (2, 3), (1, 1), (7, 2), (9, 4)])
def test_batched_bernoulli_exp_matches_exp_minus_gamma(numerator, denominator):
    generator = Randomness(10 + numerator).generator
    n = 20_000
    draws = exact.bernoulli_exp_neg_batched(generator, np.full(n, numerator, dtype=np.int64), denominator)
    p = math.exp(-numerator / denominator)
    if numerator == 0:
        assert draws.all()
    else:
        assert stats.binomtest(int(draws.sum()), n, p).pvalue > P_MIN


def test_time_on_a_30720_candidate_lattice_is_modest():
    """The publish lattice size: one selection stays well under a second even when peaked."""
    import time

    scores = np.random.default_rng(0).uniform(0, 30_000, 30_720)
    start = time.perf_counter()
    exponential_mechanism(scores, epsilon=1.0, sensitivity=1.0, monotonic=True, randomness=11)
    assert time.perf_counter() - start < 2.0


def test_bernoulli_exp_with_a_denominator_above_2_to_the_63():
    """σ² = 4605275223/2^31 (the analytic σ² for ε = 2, δ = 1e-3) gives the discrete Gaussian's
    acceptance test a denominator of about 7.9e19 > 2^63; int64 numerators must not overflow.
    The draws follow Pr[x] ∝ exp(−x²/(2σ²)) (chi-square on −4..4, the rest pooled)."""
    from fractions import Fraction

    sigma2 = Fraction(4605275223, 2**31)
    draws = exact.discrete_gaussian(Randomness(13).generator, sigma2, 20_000)
    support = np.arange(-40, 41)
    pmf = np.exp(-support.astype(float) ** 2 / (2 * float(sigma2)))
    pmf /= pmf.sum()
    inner = np.abs(support) <= 4
    expected = np.append(pmf[inner], pmf[~inner].sum()) * draws.size
    observed = np.append([np.count_nonzero(draws == x) for x in support[inner]], np.count_nonzero(np.abs(draws) > 4))
    assert stats.chisquare(observed, expected).pvalue > P_MIN
