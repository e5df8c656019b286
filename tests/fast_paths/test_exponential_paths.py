"""mechanisms/exponential: the exact sampler's fast paths.

- Proposals tested by exact.bernoulli_exp_neg_batched (≤ _MATRIX_BATCH proposals, rule
  _batches_trials) or by exact.bernoulli_exp_neg (the reference): randomized, drawing
  differently, so compared in distribution: with fixed seeds, each twin's acceptance count
  passes a binomial test against exp(−N/t), and the mechanism's choices with the switch just
  below, at and above the batch size pass a chi-square test against the exact probabilities
  (p > 1e-3);
- gaps in int64 or in Python integers (scores more than _INT64_SAFE steps apart): the same
  probabilities, exactly, with the limit moved so the small scores take the exact path.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from crowdsafe.mechanisms import exact, exponential
from crowdsafe.randomness import Randomness

P_FLOOR = 1e-3


@pytest.mark.parametrize("numerator, denominator", [(1, 3), (7, 2), (5, 5)])
def test_batched_and_single_bernoulli_accept_alike(numerator, denominator):
    n = 20_000
    p = math.exp(-numerator / denominator)
    numerators = np.full(n, numerator, dtype=np.int64)
    batched = exact.bernoulli_exp_neg_batched(Randomness(1).generator, numerators, denominator)
    single = exact.bernoulli_exp_neg(Randomness(2).generator, numerators, denominator)
    for draws in (batched, single):
        assert stats.binomtest(int(draws.sum()), n, p).pvalue > P_FLOOR
    table = np.array([[batched.sum(), n - batched.sum()], [single.sum(), n - single.sum()]])
    assert stats.chi2_contingency(table).pvalue > P_FLOOR


SCORES = np.linspace(0.0, 6.0, 70)  # 70 candidates: a batch of 70 proposals


@pytest.mark.parametrize("shift", [-1, 0, 1])
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_choices_follow_the_exact_probabilities_around_the_batch_switch(monkeypatch, shift):
    monkeypatch.setattr(exponential, "_MATRIX_BATCH", len(SCORES) + shift)
    assert exponential._batches_trials(len(SCORES), 1 << 20) == (shift >= 0)
    p = exponential.exponential_probabilities(SCORES, epsilon=1.0, sensitivity=1.0)
    randomness = Randomness(60 + shift)
    runs = 4000
    chosen = [exponential.exponential_mechanism(SCORES, epsilon=1.0, sensitivity=1.0, randomness=randomness).index
              for _ in range(runs)]
    observed = np.bincount(chosen, minlength=len(SCORES))
    expected = p * runs
    keep = expected >= 5
    if not keep.all():  # pool the thin tail
        observed = np.append(observed[keep], observed[~keep].sum())
        expected = np.append(expected[keep], expected[~keep].sum())
    assert stats.chisquare(observed, expected).pvalue > P_FLOOR


@pytest.mark.parametrize("scores", [np.array([0.0, 1.5, 2.25, -4.0]), np.array([3, 9, -2, 40], dtype=np.int64)])
def test_int64_and_exact_gaps_give_the_same_probabilities(monkeypatch, scores):
    expected = exponential.exponential_probabilities(scores, epsilon=0.7, sensitivity=1.0)
    span = int(np.ptp(scores) * (1 << exponential.SCORE_STEPS_BITS)) + 1  # the gaps' largest, in grid steps
    for limit in (1, 2, span - 1, span, span + 1):
        monkeypatch.setattr(exponential, "_INT64_SAFE", limit)
        assert np.array_equal(exponential.exponential_probabilities(scores, epsilon=0.7, sensitivity=1.0), expected)
