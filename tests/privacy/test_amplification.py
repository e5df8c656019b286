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
