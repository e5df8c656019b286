"""Noise calibration against independent high-precision computations (mpmath, brute force)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import calibration
from crowdsafe.mechanisms.noise import DiscreteGaussianNoise, DiscreteLaplaceNoise

mpmath.mp.dps = 50


def _mp_gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> mpmath.mpf:
    """Balle & Wang 2018 Theorem 8, evaluated with 50 digits."""
    eps, s, d = mpmath.mpf(epsilon), mpmath.mpf(sigma), mpmath.mpf(sensitivity)
    return mpmath.ncdf(d / (2 * s) - eps * s / d) - mpmath.e**eps * mpmath.ncdf(-d / (2 * s) - eps * s / d)


@pytest.mark.parametrize(
    ("epsilon", "delta", "sensitivity"),
    [(1.0, 1e-5, 1.0), (0.1, 1e-6, 1.0), (5.0, 1e-10, 3.0), (0.01, 1e-3, 0.5), (20.0, 1e-12, 1.0)],
)
def test_analytic_gaussian_sigma_is_the_smallest_valid_sigma(epsilon, delta, sensitivity):
    sigma = calibration.analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert _mp_gaussian_delta(epsilon, sigma, sensitivity) <= delta * (1 + 1e-9)
    assert _mp_gaussian_delta(epsilon, sigma * (1 - 1e-6), sensitivity) > delta


def test_gaussian_delta_matches_mpmath_in_the_far_tail():
    for epsilon, sigma in [(1.0, 3.0), (3.0, 8.0), (0.5, 20.0)]:
        ours = calibration.gaussian_delta(epsilon, sigma, 1.0)
        reference = float(_mp_gaussian_delta(epsilon, sigma, 1.0))
        assert ours == pytest.approx(reference, rel=1e-9)


def test_analytic_beats_classic_for_small_epsilon():
    for epsilon in (0.1, 0.5, 0.9):
        classic = calibration.classic_gaussian_sigma(epsilon, 1e-5, 1.0)
        analytic = calibration.analytic_gaussian_sigma(epsilon, 1e-5, 1.0)
        assert analytic < classic
        # The classic σ is valid for ε < 1 (Dwork & Roth 2014, Theorem A.1).
        assert _mp_gaussian_delta(epsilon, classic, 1.0) <= 1e-5
    assert calibration.classic_gaussian_sigma(0.5, 1e-5, 2.0) == pytest.approx(
        2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    )


@pytest.mark.parametrize("epsilon", [1.0, 2.5])
def test_classic_gaussian_refuses_epsilon_at_least_one_and_says_why(epsilon):
    with pytest.raises(ParameterError, match="only for ε < 1.*analytic"):
        calibration.classic_gaussian_sigma(epsilon, 1e-5, 1.0)


def test_classic_gaussian_is_really_unsafe_for_large_epsilon():
    # Why the refusal matters: at ε = 10 the classic σ gives more than twice the target δ.
    epsilon, delta = 10.0, 1e-5
    sigma = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert _mp_gaussian_delta(epsilon, sigma, 1.0) > 2 * delta


def _hockey_stick(epsilon: float, sigma2: float, shift: int) -> float:
    """max over both directions of Σ_y max(0, P(y) − e^ε·P(y − shift)), P = N_Z(0, σ²)."""
    span = int(60 * math.sqrt(sigma2)) + 60 + shift
    ys = np.arange(-span, span + 1)
    weights = np.array([mpmath.exp(-mpmath.mpf(int(y)) ** 2 / (2 * mpmath.mpf(sigma2))) for y in ys])
    total = sum(weights)
    p = [w / total for w in weights]
    e = mpmath.e ** mpmath.mpf(epsilon)
    out = mpmath.mpf(0)
    for i in range(shift, len(p)):
        out += max(mpmath.mpf(0), p[i] - e * p[i - shift])
    return float(out)


@pytest.mark.parametrize(
    ("epsilon", "sigma2", "shift"),
    [(0.5, 0.5, 1), (1.0, 2.0, 1), (1.0, 30.25, 3), (3.0, 4.0, 2), (0.2, 100.0, 1)],
)
def test_discrete_gaussian_delta_matches_brute_force_hockey_stick(epsilon, sigma2, shift):
    ours = calibration.discrete_gaussian_delta(epsilon, sigma2, shift)
    truth = _hockey_stick(epsilon, sigma2, shift)
    assert ours >= truth * (1 - 1e-12)
    assert ours == pytest.approx(truth, rel=1e-6, abs=1e-15)


def test_euler_maclaurin_tails_agree_with_direct_sums(monkeypatch):
    sigma2 = float(1 << 24) * 1.5
    fast = [calibration._log_sum_from(x0, sigma2) for x0 in (0, 3000, 20000, 60000)]
    monkeypatch.setattr(calibration, "_DIRECT_SUM_LIMIT", 1e30)
    slow = [calibration._log_sum_from(x0, sigma2) for x0 in (0, 3000, 20000, 60000)]
    for (fast_value, fast_error), (slow_value, _) in zip(fast, slow):
        assert abs(fast_value - slow_value) < 1e-12
        assert fast_error < fast_value - 25  # the remainder bound is below e^-25 of the sum


@pytest.mark.parametrize(("epsilon", "delta", "sensitivity"), [(1.0, 1e-5, 1), (0.1, 1e-8, 2), (4.0, 1e-6, 5000)])
def test_discrete_gaussian_sigma_is_certified_and_nearly_minimal(epsilon, delta, sensitivity):
    sigma2 = calibration.discrete_gaussian_sigma2(epsilon, delta, sensitivity)
    assert calibration.discrete_gaussian_delta(epsilon, sigma2, sensitivity) <= delta
    assert calibration.discrete_gaussian_delta(epsilon, float(sigma2) * 0.999, sensitivity) > delta
    # Essentially the same noise as the continuous analytic Gaussian (CKS 2020).
    continuous = calibration.analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert math.sqrt(sigma2) == pytest.approx(continuous, rel=0.01)


def test_zcdp_conversion_is_the_infimum_over_alpha():
    rho, epsilon = 0.05, 1.0
    ours = calibration.zcdp_delta(rho, epsilon)
    grid = np.exp(np.linspace(math.log(1.001), math.log(100), 20000))
    values = [
        math.exp((a - 1) * (a * rho - epsilon)) / (a - 1) * (1 - 1 / a) ** a for a in grid
    ]
    assert ours <= min(values) * (1 + 1e-6)
    assert ours >= min(values) * (1 - 1e-3)
    # And it improves on the simpler bound exp(−(ε − ρ)²/(4ρ)) (Bun & Steinke 2016).
    assert ours < math.exp(-((epsilon - rho) ** 2) / (4 * rho))


def test_discrete_laplace_half_width_is_the_exact_95_percent_quantile():
    for epsilon, sensitivity in [(1.0, 1), (0.1, 1), (0.5, 3), (5.0, 1)]:
        noise = DiscreteLaplaceNoise.for_privacy(epsilon, sensitivity)
        alpha = math.exp(-noise.s / noise.t)
        m = noise.half_width(0.95)

        def coverage(k: int, alpha: float = alpha) -> float:
            return 1 - 2 * alpha ** (k + 1) / (1 + alpha)

        assert coverage(m) >= 0.95
        assert m == 0 or coverage(m - 1) < 0.95
        assert noise.epsilon_at(sensitivity) <= epsilon
        assert noise.epsilon_at(sensitivity) == pytest.approx(epsilon, rel=1e-8)


def test_discrete_gaussian_half_width_covers_95_percent():
    noise = DiscreteGaussianNoise(calibration.discrete_gaussian_sigma2(1.0, 1e-6, 1))
    m = noise.half_width(0.95)
    sigma2 = float(noise.sigma2)
    xs = np.arange(-400, 401)
    pmf = np.exp(-(xs**2) / (2 * sigma2))
    pmf /= pmf.sum()
    inside = pmf[np.abs(xs) <= m].sum()
    assert inside >= 0.95 and pmf[np.abs(xs) <= m - 1].sum() < 0.95


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "x", True])
def test_bad_epsilon_is_refused(bad):
    with pytest.raises(ParameterError):
        calibration.check_epsilon(bad)


@pytest.mark.parametrize("bad", [1.0, 1.5, -0.1, float("nan")])
def test_bad_delta_is_refused(bad):
    with pytest.raises(ParameterError):
        calibration.check_delta(bad)
    with pytest.raises(ParameterError):
        calibration.analytic_gaussian_sigma(1.0, bad, 1.0)


def test_gaussian_needs_positive_delta():
    with pytest.raises(ParameterError, match="0 < delta"):
        calibration.analytic_gaussian_sigma(1.0, 0.0, 1.0)
