"""Amplification by sampling, both directions, and the sampling floor."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.errors import ParameterError
from crowdsafe.privacy import (
    PrivacyLoss,
    admits,
    amplify,
    largest_inner_loss,
    largest_rate,
    largest_rate_for_epsilon,
    sampling_floor,
)


def test_ln11_algorithm_at_rate_one_tenth_becomes_ln2():
    # (ln 11, 1e-5)-DP on a 10% sample: ln(1 + 0.1 * 10) = ln 2, delta 1e-6.
    out = amplify(PrivacyLoss(math.log(11), 1e-5), 0.1)
    assert out.epsilon == pytest.approx(math.log(2), rel=1e-14)
    assert out.delta == pytest.approx(1e-6, rel=1e-14)


def test_pure_dp_at_one_percent():
    out = amplify(PrivacyLoss(1.0), 0.01)
    assert out.epsilon == pytest.approx(math.log(1 + 0.01 * (math.e - 1)), rel=1e-14)
    assert out.delta == 0.0


@settings(max_examples=100, deadline=None)
@given(eps=st.floats(0, 20), delta=st.floats(0, 0.99), beta=st.floats(1e-6, 1.0))
def test_identity_at_the_same_rate(eps, delta, beta):
    loss = PrivacyLoss(eps, delta)
    same = amplify(loss, beta, base_rate=beta)
    assert same.epsilon == pytest.approx(eps, rel=1e-12, abs=1e-300)
    assert same.delta == pytest.approx(delta, rel=1e-12, abs=1e-300)


@settings(max_examples=100, deadline=None)
@given(eps=st.floats(0, 10), beta2=st.floats(1e-4, 1.0), beta1=st.floats(1e-4, 1.0))
def test_amplification_never_weakens_and_chains(eps, beta2, beta1):
    if beta2 > beta1:
        beta1, beta2 = beta2, beta1
    loss = PrivacyLoss(eps, 1e-6)
    direct = amplify(loss, beta2)
    via = amplify(amplify(loss, beta1), beta2, base_rate=beta1)
    assert direct.epsilon <= eps + 1e-12
    assert via.epsilon == pytest.approx(direct.epsilon, rel=1e-9, abs=1e-15)
    assert via.delta == pytest.approx(direct.delta, rel=1e-9)


@settings(max_examples=100, deadline=None)
@given(eps=st.floats(0.01, 8), beta=st.floats(1e-3, 1.0))
def test_inverse_directions_round_trip(eps, beta):
    inner = PrivacyLoss(eps, 1e-5)
    target = amplify(inner, beta)
    assert largest_rate(inner, target) == pytest.approx(beta, rel=1e-9)
    back = largest_inner_loss(target, beta)
    assert back.epsilon == pytest.approx(eps, rel=1e-9)
    assert back.delta == pytest.approx(1e-5, rel=1e-9)


def test_largest_rate_takes_the_tighter_of_epsilon_and_delta():
    inner, target = PrivacyLoss(1.0, 1e-5), PrivacyLoss(1.0, 1e-7)
    assert largest_rate(inner, target) == pytest.approx(0.01)
    with pytest.raises(ParameterError, match="no sampling rate"):
        largest_rate(PrivacyLoss(1.0), PrivacyLoss(0.0))


def test_rate_above_base_is_refused():
    with pytest.raises(ParameterError, match="only lowers"):
        amplify(PrivacyLoss(1.0), 0.5, base_rate=0.2)


@pytest.mark.parametrize("beta", [0.0, -0.1, 1.5, math.nan, "x"])
def test_bad_rates(beta):
    with pytest.raises(ParameterError):
        amplify(PrivacyLoss(1.0), beta)


def test_floor_and_its_inverse():
    assert sampling_floor(0.2) == pytest.approx(-math.log(0.8))
    assert sampling_floor(0.2, 0.1) == pytest.approx(-math.log(0.8) + 0.1)
    assert sampling_floor(1.0) == math.inf
    assert largest_rate_for_epsilon(sampling_floor(0.3)) == pytest.approx(0.3)
    assert largest_rate_for_epsilon(1.0, 0.1) == pytest.approx(1 - math.exp(-0.9))
    with pytest.raises(ParameterError, match="must exceed"):
        largest_rate_for_epsilon(0.1, 0.1)


def _mp_amplified(top: float, bottom: float, eps: float) -> float:
    """ln(1 + (top/bottom)(e^ε − 1)) in 60-digit arithmetic."""
    with mpmath.workdps(60):
        ratio = mpmath.mpf(top) / mpmath.mpf(bottom)
        return float(mpmath.log(1 + ratio * mpmath.expm1(mpmath.mpf(eps))))


@pytest.mark.parametrize(("eps", "beta"), [(1e308, 0.1), (800.0, 1e-300), (710.0, 5e-324), (701.0, 0.5), (705.0, 1.0)])
def test_an_epsilon_whose_exponential_overflows_amplifies_to_the_exact_value(eps, beta):
    # e^ε overflows beyond ε ≈ 709.78; ln(1 + β(e^ε − 1)) is then ε + ln β + ..., a finite double
    assert amplify(PrivacyLoss(eps, 1e-6), beta).epsilon == pytest.approx(_mp_amplified(beta, 1.0, eps), rel=1e-12)
    assert amplify(PrivacyLoss(1e308), 0.1).epsilon == 1e308


@pytest.mark.parametrize("eps", [0.0, 1e-300, 0.5, 5.0, 699.9, 700.0])
def test_ordinary_epsilons_amplify_by_the_plain_formula_bit_for_bit(eps):
    assert amplify(PrivacyLoss(eps), 0.3).epsilon == math.log1p(0.3 * math.expm1(eps))
    assert largest_inner_loss(PrivacyLoss(eps), 0.3).epsilon == math.log1p((1 / 0.3) * math.expm1(eps))


def test_the_inverse_directions_at_overflowing_epsilons():
    # (e^990 − 1)/(e^1000 − 1) = e^−10 to far below double precision
    assert largest_rate(PrivacyLoss(1000.0), PrivacyLoss(990.0)) == pytest.approx(math.exp(-10.0), rel=1e-12)
    assert largest_rate(PrivacyLoss(1.0), PrivacyLoss(1e308)) == 1.0
    with pytest.raises(ParameterError, match="below the smallest positive double"):
        largest_rate(PrivacyLoss(1e308), PrivacyLoss(1.0))  # the rate e^−1e308·(e − 1) underflows
    assert largest_inner_loss(PrivacyLoss(1e308), 0.5).epsilon == 1e308
    # β1/β2 = 1/5e-324 overflows a double; the answer ln(1 + (β1/β2)(e − 1)) does not
    tiny = largest_inner_loss(PrivacyLoss(1.0), 5e-324)
    assert tiny.epsilon == pytest.approx(_mp_amplified(1.0, 5e-324, 1.0), rel=1e-12)
    assert largest_inner_loss(PrivacyLoss(0.0), 5e-324) == PrivacyLoss(0.0, 0.0)


def _exactly_admitted(beta: float, epsilon: float, epsilon1: float = 0.0) -> bool:
    """ε − ε1 ≥ −ln(1 − β) at the doubles' exact values, by mpmath at 60 digits (independent)."""
    mpmath.mp.dps = 60
    return mpmath.mpf(epsilon) - mpmath.mpf(epsilon1) >= -mpmath.log1p(-mpmath.mpf(beta))


@settings(max_examples=300, deadline=None)
@given(beta=st.floats(1e-9, 0.999), epsilon1=st.sampled_from([0.0, 0.1, 1.9170479807848726]),
       ulps=st.integers(-3, 3))
def test_the_floor_is_decided_exactly_next_to_it(beta, epsilon1, ulps):
    epsilon = -math.log1p(-beta) + epsilon1
    for _ in range(abs(ulps)):
        epsilon = math.nextafter(epsilon, math.inf if ulps > 0 else 0.0)
    assert admits(beta, epsilon, epsilon1) == _exactly_admitted(beta, epsilon, epsilon1)
    floor = sampling_floor(beta, epsilon1)
    assert _exactly_admitted(beta, floor, epsilon1) and not _exactly_admitted(beta, math.nextafter(floor, 0.0),
                                                                             epsilon1)


@settings(max_examples=300, deadline=None)
@given(epsilon=st.floats(0.01, 30.0), epsilon1=st.sampled_from([0.0, 0.005, 0.3]))
def test_the_largest_rate_for_epsilon_is_the_largest_double_the_floor_admits(epsilon, epsilon1):
    if epsilon <= epsilon1:
        return
    rate = largest_rate_for_epsilon(epsilon, epsilon1)
    assert _exactly_admitted(rate, epsilon, epsilon1)
    above = math.nextafter(rate, 1.0)
    assert above == 1.0 or not _exactly_admitted(above, epsilon, epsilon1)


def test_the_planners_case_one_ulp_past_the_floor():
    # found by a sweep: 1 − e^−(ε − ε1) rounded to a β whose exact floor was 1.1e-16 above ε − ε1
    epsilon, epsilon1 = 2.8177863147139255, 1.9170479807848726
    rate = largest_rate_for_epsilon(epsilon, epsilon1)
    assert _exactly_admitted(rate, epsilon, epsilon1)
    assert not _exactly_admitted(-math.expm1(-(epsilon - epsilon1)), epsilon, epsilon1)  # the old answer


@settings(max_examples=300, deadline=None)
@given(inner=st.floats(0.05, 5.0), share=st.floats(0.01, 0.99))
def test_the_largest_rate_meets_its_target(inner, share):
    target = PrivacyLoss(inner * share, 0.0)
    rate = largest_rate(PrivacyLoss(inner, 0.0), target)
    assert amplify(PrivacyLoss(inner, 0.0), rate).epsilon <= target.epsilon


def test_the_calculators_case_one_ulp_past_the_target():
    inner, target = PrivacyLoss(2.38788965012681, 0.0), PrivacyLoss(0.2154008380670148, 0.0)
    rate = largest_rate(inner, target)
    assert amplify(inner, rate).epsilon <= target.epsilon
    assert rate >= 0.024302037093920124 * (1 - 1e-15)  # one ulp below the formula's value at most
