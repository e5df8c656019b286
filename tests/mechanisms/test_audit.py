"""The empirical privacy audit never exceeds a true claim and catches a broken mechanism.

Seeds are fixed, so each bound below is one deterministic draw of a statistical bound that
holds with probability 0.99.
"""

from __future__ import annotations

import numpy as np
import pytest

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import (
    audit,
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    quantile_mechanism,
    quantile_sensitivity,
    repeat,
)
from crowdsafe.mechanisms.audit import clopper_pearson

TRIALS = 200_000


def _count(epsilon: float):
    """A DP count of a dataset holding ``x`` matching rows, run n times at once."""

    def run(x, randomness, n):
        return laplace_mechanism(np.full(n, x, dtype=np.int64), epsilon=epsilon, sensitivity=1, randomness=randomness).value

    return run


def test_audit_of_a_correct_laplace_count_stays_below_and_near_epsilon():
    result = audit(_count(1.0), (0, 1), claimed_epsilon=1.0, trials=TRIALS, randomness=1)
    assert result.epsilon_lower_bound <= 1.0
    assert result.epsilon_lower_bound > 0.9  # the audit has power: it nearly reaches ε
    assert not result.violates_claim
    assert result.best_event is not None and result.best_event.trials == TRIALS


def test_audit_detects_a_mechanism_with_half_the_noise_scale():
    # Claims ε = 1 but adds noise of scale 1/2 (really ε = 2).
    result = audit(_count(2.0), (0, 1), claimed_epsilon=1.0, trials=TRIALS, randomness=2)
    assert result.violates_claim
    assert result.epsilon_lower_bound > 1.5


def test_audit_of_real_valued_laplace_on_its_grid():
    def run(x, randomness, n):
        return laplace_mechanism(np.full(n, x), epsilon=0.5, sensitivity=2.0, randomness=randomness).value

    result = audit(run, (10.0, 12.0), claimed_epsilon=0.5, trials=TRIALS, randomness=3)
    assert 0.35 < result.epsilon_lower_bound <= 0.5


def test_audit_of_gaussian_accounts_for_delta():
    def run(x, randomness, n):
        return gaussian_mechanism(
            np.full(n, x, dtype=np.int64), epsilon=1.0, delta=1e-3, sensitivity=1, randomness=randomness,
            one_coordinate=True,
        ).value

    result = audit(run, (0, 1), claimed_epsilon=1.0, claimed_delta=1e-3, trials=100_000, randomness=4)
    assert 0.5 < result.epsilon_lower_bound <= 1.0


def test_audit_of_the_exponential_mechanism_with_explicit_events():
    # The target's score rises by Δq while 19 others fall by Δq: the worst case, where the
    # normaliser moves against the target and the full ε is nearly reached (about 0.95 here).
    scores_0 = np.array([0.0] + [1.0] * 19)
    scores_1 = np.array([1.0] + [0.0] * 19)

    def single(scores, randomness):
        return exponential_mechanism(scores, epsilon=1.0, sensitivity=1.0, randomness=randomness).index

    events = [("chose the target", lambda out: np.asarray(out) == 0)]
    result = audit(repeat(single), (scores_0, scores_1), claimed_epsilon=1.0, events=events, trials=10_000,
                   randomness=5)
    assert 0.5 < result.epsilon_lower_bound <= 1.0


def test_audit_of_the_quantile_mechanism():
    base = np.arange(0.0, 21.0)
    sensitivity = quantile_sensitivity(0.5)

    def single(values, randomness):
        return quantile_mechanism(values, 0.5, lower=0, upper=40, epsilon=1.0, sensitivity=sensitivity,
                                  randomness=randomness, integer=True).value

    result = audit(repeat(single), (base, np.append(base, 40.0)), claimed_epsilon=1.0, trials=4000,
                   selection_trials=1000, randomness=6)
    assert result.epsilon_lower_bound <= 1.0


def test_clopper_pearson_edges():
    assert clopper_pearson(0, 100, 0.01)[0] == 0.0
    assert clopper_pearson(100, 100, 0.01)[1] == 1.0
    low, high = clopper_pearson(50, 100, 0.025)
    assert 0.39 < low < 0.5 < high < 0.61


def test_audit_refuses_bad_settings():
    with pytest.raises(ParameterError):
        audit(_count(1.0), (0, 1), claimed_epsilon=1.0, trials=10)
    with pytest.raises(ParameterError):
        audit(_count(1.0), (0, 1), claimed_epsilon=1.0, confidence=1.0)
    with pytest.raises(ParameterError):
        audit(_count(1.0), (0, 1), claimed_epsilon=1.0, events=[])
