"""Solvers: smallest k, largest β, smallest ε, the planner, and the sampling floor."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from crowdsafe.errors import ParameterError
from crowdsafe.privacy import (
    dps_delta,
    dps_delta_at_most,
    largest_beta,
    largest_rate_for_epsilon,
    plan,
    sampling_floor,
    smallest_epsilon,
    smallest_k,
)
from crowdsafe.privacy.planning import least_k


@settings(max_examples=40, deadline=None)
@given(beta=st.floats(0.01, 0.5), above=st.floats(0.01, 2.0), log_delta=st.floats(-12, -3))
def test_smallest_k_is_feasible_and_minimal(beta, above, log_delta):
    epsilon = sampling_floor(beta) + above
    delta = 10.0**log_delta
    if delta >= beta:
        return
    result = smallest_k(epsilon, delta, beta)
    assert dps_delta(result.k, beta, epsilon) <= delta
    assert result.k == 1 or dps_delta(result.k - 1, beta, epsilon) > delta
    assert result.delta == dps_delta(result.k, beta, epsilon)


@settings(max_examples=30, deadline=None)
@given(beta=st.floats(0.01, 0.9), above=st.floats(0.01, 2.0), log_delta=st.floats(-12, -3),
       guess=st.sampled_from([1, 2, -1, 0, 1.0, 2.0, 0.5, 10.0, 10_000_000]))
def test_smallest_k_does_not_depend_on_the_guess(beta, above, log_delta, guess):
    """A guess near the answer (offset by -1, 0, +1 or scaled) or far from it gives the same k."""
    epsilon = sampling_floor(beta) + above
    delta = 10.0**log_delta
    if delta >= beta:
        return
    expected = smallest_k(epsilon, delta, beta)
    near = expected.k + guess if isinstance(guess, int) and guess < 10 else max(1, int(expected.k * guess))
    assert smallest_k(epsilon, delta, beta, near=max(near, 1)) == expected


def _outcome(solve):
    """What ``solve()`` gives, or the message it refuses with."""
    try:
        return solve()
    except ParameterError as exc:
        return f"refused: {exc}"


@settings(max_examples=40, deadline=None)
@given(beta=st.floats(0.001, 0.99), above=st.floats(-0.01, 3.0), log_delta=st.floats(-20, -0.5),
       epsilon1=st.sampled_from([0.0, 0.05, 0.3]), near=st.sampled_from([None, 1, 7, 40, 10_000]))
def test_least_k_is_the_k_of_smallest_k(beta, above, log_delta, epsilon1, near):
    """least_k (what the planner's rate grid asks for) is smallest_k's search without the last
    evaluation of d: the same k, and the same refusals (δ ≥ β, ε below the floor, no k)."""
    epsilon = max(sampling_floor(beta, epsilon1) + above, epsilon1)
    delta = 10.0**log_delta
    assert _outcome(lambda: least_k(epsilon, delta, beta, epsilon1, near=near)) == \
        _outcome(lambda: smallest_k(epsilon, delta, beta, epsilon1, near=near).k)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 400), beta=st.floats(0.01, 0.95), above=st.floats(0.0, 3.0),
       epsilon1=st.sampled_from([0.0, 0.05, 0.3]), log_delta=st.floats(-30, -1))
def test_the_early_stopping_delta_check_agrees_with_the_full_delta(k, beta, above, epsilon1, log_delta):
    """dps_delta_at_most (which stops once a tail found exceeds δ) answers exactly as
    dps_delta(...) <= δ: at a random δ, at δ = d itself (yes), and just below it (no)."""
    epsilon = sampling_floor(beta, epsilon1) + above
    d = dps_delta(k, beta, epsilon, epsilon1)
    for delta in (10.0**log_delta, d, math.nextafter(d, 0.0), d * (1 - 1e-9), d * (1 + 1e-9)):
        assert dps_delta_at_most(k, beta, epsilon, delta, epsilon1) == (d <= delta)


@settings(max_examples=30, deadline=None)
@given(k=st.integers(2, 80), beta=st.floats(0.01, 0.5), log_delta=st.floats(-12, -3))
def test_smallest_epsilon_is_feasible_and_tight(k, beta, log_delta):
    delta = 10.0**log_delta
    if delta >= beta:
        return
    if delta <= beta**k:
        with pytest.raises(ParameterError, match="only falls towards"):
            smallest_epsilon(k, beta, delta)
        return
    result = smallest_epsilon(k, beta, delta)
    assert result.epsilon >= sampling_floor(beta)
    assert dps_delta(k, beta, result.epsilon) <= delta
    if result.floor_binds:
        assert result.epsilon == sampling_floor(beta)
        assert "floor binds" in result.explanation
    else:
        assert dps_delta(k, beta, result.epsilon * (1 - 1e-6)) > delta


@settings(max_examples=30, deadline=None)
@given(k=st.integers(2, 80), epsilon=st.floats(0.2, 3.0), log_delta=st.floats(-12, -3))
def test_largest_beta_is_feasible_and_respects_the_floor(k, epsilon, log_delta):
    delta = 10.0**log_delta
    try:
        result = largest_beta(epsilon, delta, k)
    except ParameterError as exc:
        assert "raise k or epsilon" in str(exc)
        return
    assert result.beta <= 1 - math.exp(-epsilon) + 1e-15
    assert dps_delta(k, result.beta, epsilon) <= delta
    assert result.beta > delta
    if not result.floor_binds:
        assert dps_delta(k, min(result.beta * (1 + 1e-6), 1 - math.exp(-epsilon)), epsilon) > delta


def _mp_d(k: int, beta: float, epsilon: float) -> mpmath.mpf:
    """d(k, β, ε) (Li, Qardaji, Su 2012) computed here at 40 digits from the floats' exact values:
    max over n ≥ n_m = ⌈k/γ − 1⌉ of Pr[Binomial(n, β) > γn], γ = 1 − (1 − β)e^−ε, the tails as
    regularized incomplete beta functions, searched until the Chernoff bound e^−nD falls below the
    best tail found."""
    with mpmath.workdps(40):
        b = mpmath.mpf(Fraction(beta).numerator) / Fraction(beta).denominator
        e = mpmath.mpf(Fraction(epsilon).numerator) / Fraction(epsilon).denominator
        gamma = 1 - (1 - b) * mpmath.exp(-e)
        divergence = gamma * mpmath.log(gamma / b) + (1 - gamma) * mpmath.log((1 - gamma) / (1 - b))
        best, n = mpmath.mpf(0), int(mpmath.ceil(k / gamma - 1))
        while True:
            j = int(mpmath.floor(gamma * n)) + 1  # the smallest j > γn
            best = max(best, mpmath.betainc(j, n - j + 1, 0, b, regularized=True) if j <= n else 0)
            n += 1
            if best > 0 and mpmath.exp(-n * divergence) < best:
                return best


def test_largest_beta_finds_a_feasible_range_narrower_than_a_halving():
    """Audit math1, defect 3: at ε = 0.5, δ = 0.05, k = 2 the feasible rates above δ are
    (0.05, 0.0976...]; halving from 1 − e^−0.5 = 0.3935 tried 0.0984 (infeasible), then 0.0492
    ≤ δ, and refused."""
    assert _mp_d(2, 0.0976, 0.5) <= 0.05 < _mp_d(2, 0.0984, 0.5)
    result = largest_beta(0.5, 0.05, 2)
    assert 0.0976 <= result.beta < 0.0984 and not result.floor_binds
    assert _mp_d(2, result.beta, 0.5) <= 0.05 < _mp_d(2, result.beta * (1 + 1e-6), 0.5)
    # the sawtooth: k = 20, ε = 1, δ = 1e-6 is feasible up to 0.2818, infeasible above, feasible
    # again just above 0.29526 (where n_m falls from 27 to 26) up to 0.29734 (docs/privacy-calculus.md)
    result = largest_beta(1.0, 1e-6, 20)
    assert _mp_d(20, 0.29, 1.0) > 1e-6 >= _mp_d(20, 0.2960, 1.0)
    assert result.beta == pytest.approx(0.297342, abs=1e-6)
    assert _mp_d(20, result.beta, 1.0) <= 1e-6 < _mp_d(20, result.beta * (1 + 1e-6), 1.0)


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 6), epsilon=st.floats(0.1, 2.0), log_delta=st.floats(-4, -0.5))
# cases the halving search refused although rates above δ were feasible (found by a scan)
@example(k=2, epsilon=0.5, log_delta=-1.0)
@example(k=3, epsilon=0.2, log_delta=-1.25)
@example(k=4, epsilon=0.1, log_delta=-1.5)
@example(k=6, epsilon=0.1, log_delta=-1.25)
def test_largest_beta_refuses_only_when_no_rate_above_delta_is_feasible(k, epsilon, log_delta):
    """Large δ, small k, where feasible ranges above δ narrower than a factor of 2 occur. A
    refusal must mean that no rate of a fine grid over (δ, 1 − e^−ε] is feasible; an answer is
    feasible and never below the top of the first feasible stretch above δ (on that grid)."""
    delta = 10.0**log_delta
    top = largest_rate_for_epsilon(epsilon)  # the largest rate whose floor admits ε, exactly
    if not delta < top:
        return
    grid = [float(b) for b in np.geomspace(delta * (1 + 1e-6), top, 400)]
    feasible = [b for b in grid if dps_delta(k, b, epsilon) <= delta]
    try:
        result = largest_beta(epsilon, delta, k)
    except ParameterError:
        assert feasible == []
        return
    assert delta < result.beta and dps_delta(k, result.beta, epsilon) <= delta
    if feasible:
        # the first feasible stretch from δ up is never jumped over
        first_gap = next((b for b in grid if b > feasible[0] and dps_delta(k, b, epsilon) > delta), top)
        assert result.beta >= max(b for b in feasible if b < first_gap) * (1 - 1e-8)


def test_floor_binds_for_beta_and_is_explained():
    result = largest_beta(1.0, 1e-6, 200)
    assert result.floor_binds
    assert result.beta == pytest.approx(1 - math.exp(-1.0))
    assert "sampling floor binds" in result.explanation


def test_floor_binds_for_epsilon_and_is_explained():
    result = smallest_epsilon(100, 0.1, 1e-6)
    assert result.floor_binds and result.epsilon == pytest.approx(-math.log(0.9))
    assert "delta alone would allow less" in result.explanation


def test_epsilon1_raises_the_floor():
    result = smallest_epsilon(100, 0.1, 1e-6, epsilon1=0.1)
    assert result.epsilon == pytest.approx(-math.log(0.9) + 0.1)
    assert smallest_k(1.0, 1e-6, 0.2, epsilon1=0.1).k >= smallest_k(1.0, 1e-6, 0.2).k


def test_smallest_k_below_the_floor_names_the_fix():
    with pytest.raises(ParameterError, match=r"below the sampling floor.*lower beta to at most .*0\.393"):
        smallest_k(0.5, 1e-6, 0.5)


def test_delta_must_be_below_beta_and_positive():
    with pytest.raises(ParameterError, match="beta > delta"):
        smallest_k(1.0, 0.3, 0.2)
    with pytest.raises(ParameterError, match="delta must be > 0"):
        smallest_k(1.0, 0.0, 0.2)


def test_plan_fills_in_the_largest_beta_then_the_smallest_k():
    result = plan(1.0, 1e-6)
    assert result.beta == pytest.approx(1 - math.exp(-1.0))
    assert result.k == smallest_k(1.0, 1e-6, result.beta).k
    assert result.floor_binds


def test_plan_dispatches_on_what_is_given():
    assert plan(1.0, 1e-6, beta=0.2).solved_for == "k"
    assert plan(1.0, 1e-6, k=20).solved_for == "beta"
    checked = plan(1.0, 1e-6, beta=0.2, k=20)
    assert checked.solved_for == "check" and checked.delta <= 1e-6
    with pytest.raises(ParameterError, match="use k >= 14"):
        plan(1.0, 1e-6, beta=0.2, k=5)


@pytest.mark.parametrize("epsilon", [15.0, 20.0, 40.0])
def test_a_large_epsilon_with_the_default_rate_says_to_give_beta(epsilon):
    """Past ε ≈ 13 the largest admitted rate keeps almost every row and no k up to the search
    limit reaches δ (and near ε ≈ 20, 1 − β is at the float resolution): the refusal names the
    cause and the fix, instead of a sampling-floor message computed from a rounded β."""
    with pytest.raises(ParameterError, match=r"give the sampling rate yourself \(beta"):
        plan(epsilon, 1e-6, epsilon1=0.1 * epsilon)
    fixed = plan(epsilon, 1e-6, beta=0.5, epsilon1=0.1 * epsilon)
    assert fixed.k <= 30 and dps_delta(fixed.k, 0.5, epsilon, 0.1 * epsilon) <= 1e-6


def test_a_huge_epsilon_plans_at_the_limit_beta_to_the_k():
    # d falls to β^k as ε grows: 0.2^8 = 2.56e-6 > 1e-6 >= 0.2^9 = 5.12e-7
    assert smallest_k(1e7, 1e-6, 0.2).k == 9
    assert smallest_k(1e308, 1e-6, 0.2).k == 9
    assert dps_delta_at_most(9, 0.2, 1e7, 1e-6) and not dps_delta_at_most(8, 0.2, 1e7, 1e-6)


def test_the_refusal_of_a_given_k_names_the_epsilon_its_delta_is_evaluated_at():
    """d is evaluated at epsilon - epsilon1 (0.6 here; the report's independent value is 3.23e-06,
    while d(30, 0.3, 1) = 5.7e-09 would pass): the message names 0.6, not epsilon = 1."""
    at_anon = f"{dps_delta(30, 0.3, 0.6):.3g}"
    assert at_anon == "3.23e-06" and dps_delta(30, 0.3, 1.0) < 1e-6
    with pytest.raises(ParameterError) as refused:
        plan(1.0, 1e-6, beta=0.3, k=30, epsilon1=0.4)
    assert (f"k = 30, beta = 0.3, epsilon - epsilon1 = 1 - 0.4 = 0.6 give delta = {at_anon} > 1e-06; use k >= 35"
            in str(refused.value))
    with pytest.raises(ParameterError, match=r"k = 10, beta = 0.3, epsilon = 1 give delta = "):
        plan(1.0, 1e-6, beta=0.3, k=10)
