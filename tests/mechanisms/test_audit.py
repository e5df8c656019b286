"""The empirical privacy audit never exceeds a true claim and catches a broken mechanism.

Seeds are fixed, so each bound below is one deterministic draw of a statistical bound that
holds with probability 0.99.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import (
    exponential,
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    quantile_mechanism,
    quantile_sensitivity,
)
from crowdsafe.mechanisms.audit import (
    audit,
    clopper_pearson,
    distinguisher_bound,
    epsilon_from_error_rates,
    repeat,
)

TRIALS = 200_000


def _count(epsilon: float):
    """A DP count of a dataset holding ``x`` matching rows, run n times at once."""

    def run(x, randomness, n):
        values = np.full(n, x, dtype=np.int64)
        return laplace_mechanism(values, epsilon=epsilon, sensitivity=1, randomness=randomness).value

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


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_audit_of_gaussian_accounts_for_delta():
    def run(x, randomness, n):
        return gaussian_mechanism(
            np.full(n, x, dtype=np.int64), epsilon=1.0, delta=1e-3, sensitivity=1, randomness=randomness,
            one_coordinate=True,
        ).value

    result = audit(run, (0, 1), claimed_epsilon=1.0, claimed_delta=1e-3, trials=100_000, randomness=4)
    assert 0.5 < result.epsilon_lower_bound <= 1.0


@pytest.mark.slow
def test_audit_of_the_exponential_mechanism_with_explicit_events():
    # The target's score rises by Δq while 19 others fall by Δq: the worst case, where the
    # normaliser moves against the target and the full ε is nearly reached (about 0.95 here).
    # The first draw of each batch goes through exponential_mechanism; the others through its
    # sampler with the weights it computes from the same scores (deterministic, built once per
    # batch instead of per draw, two fifths of a draw's time). The randomness is consumed as
    # the public function consumes it, so the 10,000 draws per table are those it would give.
    scores_0 = np.array([0.0] + [1.0] * 19)
    scores_1 = np.array([1.0] + [0.0] * 19)

    def run(scores, randomness, n):
        first = exponential_mechanism(scores, epsilon=1.0, sensitivity=1.0, randomness=randomness).index
        weights = exponential._weights(np.asarray(scores), *exponential._check(1.0, 1.0), False, None)
        return [first] + [int(weights.index[exponential._sample(weights, randomness.generator)])
                          for _ in range(n - 1)]

    events = [("chose the target", lambda out: np.asarray(out) == 0)]
    result = audit(run, (scores_0, scores_1), claimed_epsilon=1.0, events=events, trials=10_000, randomness=5)
    assert 0.5 < result.epsilon_lower_bound <= 1.0


@pytest.mark.slow
def test_audit_of_the_quantile_mechanism():
    base = np.arange(0.0, 21.0)
    sensitivity = quantile_sensitivity(0.5)

    def single(values, randomness):
        return quantile_mechanism(values, 0.5, lower=0, upper=40, epsilon=1.0, sensitivity=sensitivity,
                                  randomness=randomness, integer=True).value

    result = audit(repeat(single), (base, np.append(base, 40.0)), claimed_epsilon=1.0, trials=4000,
                   selection_trials=1000, randomness=6)
    assert result.epsilon_lower_bound <= 1.0


@pytest.mark.parametrize("hits, trials", [(0, 50), (3, 50), (25, 50), (50, 50), (137, 1000)])
def test_clopper_pearson_is_the_exact_binomial_inversion(hits, trials):
    # Independent definition: the upper bound u solves P[Bin(N, u) <= h] = α, the lower bound l
    # solves P[Bin(N, l) >= h] = α (Clopper & Pearson 1934).
    alpha = 0.01
    low, high = clopper_pearson(hits, trials, alpha)
    if hits < trials:
        assert stats.binom.cdf(hits, trials, high) == pytest.approx(alpha, rel=1e-6)
    else:
        assert high == 1.0
    if hits > 0:
        assert stats.binom.sf(hits - 1, trials, low) == pytest.approx(alpha, rel=1e-6)
    else:
        assert low == 0.0


@pytest.mark.parametrize("p", [0.003, 0.05, 0.4])
def test_clopper_pearson_upper_bound_covers_with_the_stated_probability(p):
    # Exact coverage over every outcome of Bin(N, p): the bound falls below p with prob ≤ α.
    trials, alpha = 400, 0.05
    miss = sum(stats.binom.pmf(h, trials, p) for h in range(trials + 1)
               if clopper_pearson(h, trials, alpha)[1] < p)
    assert miss <= alpha


def test_epsilon_from_error_rates_is_the_hypothesis_testing_bound():
    # FPR + e^ε FNR >= 1 − δ and e^ε FPR + FNR >= 1 − δ, solved for ε, larger of the two.
    assert epsilon_from_error_rates(0.1, 0.3) == pytest.approx(math.log(0.7 / 0.1))
    assert epsilon_from_error_rates(0.3, 0.1) == pytest.approx(math.log(0.7 / 0.1))
    assert epsilon_from_error_rates(0.1, 0.3, delta=0.2) == pytest.approx(math.log(0.5 / 0.1))
    assert epsilon_from_error_rates(0.5, 0.5) == 0.0  # a coin flip proves nothing
    assert epsilon_from_error_rates(0.6, 0.6) == 0.0
    assert epsilon_from_error_rates(0.0, 0.3) == math.inf  # never wrong on D₀: no ε covers it
    assert epsilon_from_error_rates(0.0, 0.95, delta=0.05) == 0.0  # ...unless δ does


def test_distinguisher_bound_uses_upper_bounds_of_both_error_rates():
    alpha = 0.005
    bound, fpr_upper, fnr_upper = distinguisher_bound(30, 1000, 400, 1000, delta=0.01, alpha=alpha)
    assert fpr_upper == clopper_pearson(30, 1000, alpha)[1] and fpr_upper > 0.03
    assert fnr_upper == clopper_pearson(400, 1000, alpha)[1] and fnr_upper > 0.4
    assert bound == pytest.approx(math.log((1 - 0.01 - fnr_upper) / fpr_upper))
    assert bound < math.log((1 - 0.01 - 0.4) / 0.03)  # below the plug-in value


def test_audit_with_no_false_positives_is_limited_by_the_number_of_runs():
    # A mechanism that always tells D₀ from D₁: ε is infinite, and N runs show ln(N/ln(1/α)).
    def run(x, randomness, n):
        return np.full(n, x)

    events = [("output is 1", lambda out: np.asarray(out) == 1)]
    result = audit(run, (0, 1), claimed_epsilon=1.0, events=events, trials=1000, randomness=0)
    alpha = 0.01 / 2  # one event, two one-sided intervals
    upper = 1 - alpha ** (1 / 1000)  # Clopper–Pearson upper bound of 0 errors in 1000 runs
    expected = math.log((1 - upper) / upper)  # both error rates are bounded by it
    assert result.epsilon_lower_bound == pytest.approx(expected, rel=1e-9)
    assert result.violates_claim


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
