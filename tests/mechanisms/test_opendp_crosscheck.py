"""Calibration cross-checked against OpenDP (and Google's dp-accounting for the analytic Gaussian).

For the same (ε, δ, Δ), crowdsafe's noise must be at least what the other library needs, and no
more than a hair above it (the grid step of the floating-point-safe mechanisms, or the rational
rounding of ε).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import opendp.prelude as dp
import pytest
from dp_accounting.pld import pld_privacy_accountant

from crowdsafe.mechanisms import calibration, gaussian_mechanism, laplace_mechanism

dp.enable_features("contrib")

FLOAT_SPACE = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
INT_SPACE = (dp.atom_domain(T=int), dp.absolute_distance(T=int))


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(0.1, 1.0), (1.0, 2.5), (3.0, 90.0)])
def test_real_valued_laplace_scale_agrees_with_opendp(epsilon, sensitivity):
    ours = laplace_mechanism(0.0, epsilon=epsilon, sensitivity=sensitivity, randomness=1)
    opendp_epsilon = dp.m.make_laplace(*FLOAT_SPACE, scale=ours.noise_scale).map(sensitivity)
    assert opendp_epsilon <= epsilon * (1 + 1e-9)
    assert opendp_epsilon >= epsilon * (1 - 5e-4)  # at most one grid step (≤ 1/4096 of Δ) more noise


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(0.1, 1), (0.5, 3), (2.0, 1)])
def test_integer_laplace_scale_agrees_with_opendp(epsilon, sensitivity):
    ours = laplace_mechanism(7, epsilon=epsilon, sensitivity=sensitivity, randomness=1)
    opendp_epsilon = dp.m.make_laplace(*INT_SPACE, scale=ours.noise_scale).map(sensitivity)
    assert opendp_epsilon == pytest.approx(epsilon, rel=1e-8)
    assert opendp_epsilon <= epsilon * (1 + 1e-12)


@pytest.mark.parametrize(("rho", "epsilon"), [(0.05, 1.0), (0.5, 3.0), (0.01, 0.3), (2.0, 5.0)])
def test_zcdp_to_approximate_dp_conversion_agrees_with_opendp(rho, epsilon):
    sigma = math.sqrt(1.0 / (2.0 * rho))
    profile = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*FLOAT_SPACE, scale=sigma)).map(1.0)
    assert calibration.zcdp_delta(rho, epsilon) == pytest.approx(profile.delta(epsilon), rel=1e-6)


def test_vector_discrete_gaussian_is_certified_by_opendp_accounting():
    # crowdsafe's multi-coordinate Gaussian (e.g. a histogram under change-one neighbours, L2 = √2)
    # goes through zCDP; OpenDP's accounting of the same σ must reach the same (ε, δ).
    epsilon, delta, l2 = 1.0, 1e-6, math.sqrt(2.0)
    ours = gaussian_mechanism(np.zeros(10, dtype=np.int64), epsilon=epsilon, delta=delta, sensitivity=l2, randomness=1)
    measurement = dp.m.make_gaussian(
        dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=float), scale=ours.noise_scale
    )
    opendp_delta = dp.c.make_zCDP_to_approxDP(measurement).map(l2).delta(epsilon)
    assert opendp_delta <= delta * (1 + 1e-9)
    assert opendp_delta >= delta * 0.99


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-6), (1.0, 1e-5), (4.0, 1e-8)])
def test_analytic_gaussian_needs_less_noise_than_opendp_zcdp_route_but_is_valid(epsilon, delta):
    ours = calibration.analytic_gaussian_sigma(epsilon, delta, 1.0)
    # OpenDP certifies Gaussian noise through zCDP, which is looser: at our σ it reports a
    # larger δ, and it needs a larger σ for the target.
    profile = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*FLOAT_SPACE, scale=ours)).map(1.0)
    assert profile.delta(epsilon) > delta
    # The exact privacy curve (dp-accounting's privacy-loss distribution) confirms our σ.
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.GaussianDpEvent(noise_multiplier=ours))
    assert accountant.get_epsilon(delta) == pytest.approx(epsilon, rel=1e-3)
