"""Solvers: smallest k, largest β, smallest ε, the planner, and the sampling floor."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.errors import ParameterError
from crowdsafe.privacy import (
    dps_delta,
    dps_delta_at_most,
    largest_beta,
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
