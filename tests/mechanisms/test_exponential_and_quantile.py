"""The exponential mechanism (Gumbel-max) and DP quantiles built on it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import (
    exponential_mechanism,
    exponential_mechanism_chunks,
    exponential_probabilities,
    quantile_mechanism,
    quantile_sensitivity,
)
from crowdsafe.mechanisms.quantile import quantile_candidates, quantile_scores
from crowdsafe.randomness import Randomness


def _frequencies(draw, runs: int, size: int) -> np.ndarray:
    counts = np.zeros(size)
    for index in draw(runs):
        counts[index] += 1
    return counts


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_selection_frequencies_follow_exp_of_epsilon_q_over_two_delta():
    scores = np.array([0.0, 1.0, 2.0, 3.0, -np.inf])
    expected = np.exp(2.0 * scores[:4] / 2.0)
    expected /= expected.sum()
    assert np.allclose(exponential_probabilities(scores, epsilon=2.0, sensitivity=1.0)[:4], expected)
    stream = Randomness(11)
    counts = _frequencies(
        lambda runs: (exponential_mechanism(scores, epsilon=2.0, sensitivity=1.0, randomness=stream).index
                      for _ in range(runs)),
        5000,
        5,
    )
    assert counts[4] == 0  # −inf is never chosen
    assert stats.chisquare(counts[:4], expected * counts.sum()).pvalue > 1e-3


def test_monotone_quality_drops_the_factor_two():
    scores = np.array([0.0, 1.0])
    p = exponential_probabilities(scores, epsilon=1.0, sensitivity=1.0, monotonic=True)
    assert p[1] / p[0] == pytest.approx(math.e)


@pytest.mark.slow
def test_huge_scores_and_huge_candidate_sets_do_not_overflow():
    scores = np.array([1e300, -1e300, 0.0, 1e300 - 1e285])
    choice = exponential_mechanism(scores, epsilon=1.0, sensitivity=1.0, randomness=1)
    assert choice.index in (0, 3)
    many = np.random.default_rng(0).normal(size=2_000_000) * 1e6
    choice = exponential_mechanism(many, epsilon=1.0, sensitivity=1.0, randomness=2)
    assert choice.index == int(np.argmax(many))  # gaps of ~1e5 in ε·q/2: the best wins
    assert choice.candidates == 2_000_000


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_chunked_selection_has_the_same_distribution():
    scores = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    expected = exponential_probabilities(scores, epsilon=1.0, sensitivity=0.5) * 3000
    stream = Randomness(12)
    counts = _frequencies(
        lambda runs: (
            exponential_mechanism_chunks([scores[:2], scores[2:5], np.array([]), scores[5:]], epsilon=1.0,
                                         sensitivity=0.5, randomness=stream).index
            for _ in range(runs)
        ),
        3000,
        6,
    )
    assert stats.chisquare(counts, expected).pvalue > 1e-3


@pytest.mark.parametrize(
    "scores", [np.array([]), np.array([np.nan, 1.0]), np.array([np.inf, 1.0]), np.array([-np.inf, -np.inf])]
)
def test_bad_scores_are_refused(scores):
    with pytest.raises(ParameterError):
        exponential_mechanism(scores, epsilon=1.0, sensitivity=1.0)


@pytest.mark.slow
def test_utility_bound_holds_at_the_stated_rate():
    scores = -np.arange(1000, dtype=float)
    stream = Randomness(13)
    choices = [exponential_mechanism(scores, epsilon=0.5, sensitivity=1.0, randomness=stream) for _ in range(2000)]
    bound = choices[0].utility_loss_bound(0.95)
    within = np.mean([-scores[c.index] <= bound for c in choices])
    assert within >= 0.95


def test_quantile_scores_are_zero_at_the_true_quantile():
    x = np.sort(np.arange(1, 102, dtype=float))  # 1..101, median 51
    candidates = np.array([50.0, 51.0, 52.0])
    assert list(quantile_scores(x, candidates, 0.5)) == [-1.0, 0.0, -1.0]


def test_dp_median_is_close_and_on_the_public_grid():
    values = np.random.default_rng(5).normal(40, 10, 20_000).round()
    sensitivity = quantile_sensitivity(0.5)
    stream = Randomness(14)
    answers = [
        quantile_mechanism(values, 0.5, lower=0, upper=100, epsilon=1.0, sensitivity=sensitivity,
                           randomness=stream, integer=True)
        for _ in range(50)
    ]
    true_median = float(np.median(values))
    assert all(a.value == round(a.value) and 0 <= a.value <= 100 for a in answers)
    rank_bound = answers[0].error_half_width
    x = np.sort(values)
    for a in answers:
        rank = np.searchsorted(x, a.value)
        assert abs(rank - 0.5 * x.size) <= rank_bound + np.count_nonzero(x == a.value)
    assert abs(np.median([a.value for a in answers]) - true_median) <= 1
    assert answers[0].error_unit == "rank"


def test_quantile_grid_is_data_independent():
    grid = quantile_candidates(0.0, 1.0, steps=4)
    assert list(grid) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert list(quantile_candidates(17, 20, integer=True)) == [17, 18, 19, 20]


def test_quantile_needs_bounds_and_a_valid_q():
    with pytest.raises(ParameterError, match="clamping bounds"):
        quantile_mechanism(np.ones(5), 0.5, lower=None, upper=1, epsilon=1.0, sensitivity=quantile_sensitivity(0.5))
    with pytest.raises(ParameterError):
        quantile_sensitivity(1.5)


_REAL_EDGE = 2.0 * (2**20 + 1) * 2.0**63  # where the rate of real scores of sensitivity 1 reaches 2^63


@pytest.mark.parametrize("epsilon", [2.0**64 * 0.999, 2.0**64, 2.0**66, _REAL_EDGE * 0.999, _REAL_EDGE * 1.001,
                                     1e50, 1.7e308])
@pytest.mark.parametrize("scores", [np.array([3, 1, 0, 2]), np.array([3.0, 1.0, 0.0, 2.5]),
                                    np.array([3e20, 1.0, 0.0, -3e20])])
def test_a_huge_epsilon_picks_the_best_without_overflow(epsilon, scores):
    # The rate s = ε/(2K) used to overflow from 2^63 on, after the charge (F13): for integer scores
    # of sensitivity 1 (K = 1) from ε = 2^64, for real ones (K = 2^20 + 1) from ε ≈ 1.9e25.
    choice = exponential_mechanism(scores, epsilon=epsilon, sensitivity=1.0, randomness=3)
    assert choice.index == int(np.argmax(scores))
    assert exponential_probabilities(scores, epsilon=epsilon, sensitivity=1.0)[int(np.argmax(scores))] == 1.0


def test_a_median_at_a_huge_epsilon_is_the_median():
    values = np.array([20, 30, 40, 50, 60, 70, 80], dtype=np.float64)
    for epsilon in (1e20, 1e50):
        answer = quantile_mechanism(values, 0.5, lower=0, upper=120, epsilon=epsilon,
                                    sensitivity=quantile_sensitivity(0.5), randomness=4, integer=True)
        assert 40 <= answer.value <= 60
