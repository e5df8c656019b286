"""Real-valued answers are rounded to a grid before integer noise: the noise must cover the
*rounded* sensitivity, whatever the dimension (issue 16, point 2).

Privacy losses are computed exactly from the pmfs of the noise actually used (its exact rational
parameters), at an adversarial pair of neighbouring vectors built so that rounding adds (almost)
a whole step per coordinate; nothing is sampled.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from crowdsafe.mechanisms.calibration import discrete_gaussian_sigma2, zcdp_delta
from crowdsafe.mechanisms.gaussian import gaussian_mechanism
from crowdsafe.mechanisms.laplace import laplace_mechanism

D = 20_000


def _pow2_floor(x: float) -> float:
    return math.ldexp(1.0, math.floor(math.log2(x)))


def _l1_worst_pair(d: int, sensitivity: float, g: float) -> tuple[np.ndarray, np.ndarray]:
    """x_i = (½ − η)·g rounds to 0; x'_i = (½ + η)·g (i ≥ 2) rounds to 1 for a 2η·g share of the
    budget; coordinate 1 takes the rest of Δ₁. Rounded L1 distance: Δ₁/g + d − 1."""
    eta = 2.0**-20
    x = np.full(d, (0.5 - eta) * g)
    x_prime = np.full(d, (0.5 + eta) * g)
    x_prime[0] = x[0] + (sensitivity - (d - 1) * 2 * eta * g)
    distance = sum(abs(Fraction(a) - Fraction(b)) for a, b in zip(x.tolist(), x_prime.tolist()))
    assert distance <= Fraction(sensitivity)  # a genuine neighbouring pair, checked exactly
    return x, x_prime


def _rounded_l1(x: np.ndarray, x_prime: np.ndarray, g: float) -> int:
    return int(np.abs(np.rint(x / g) - np.rint(x_prime / g)).sum())


def _laplace_worst_loss(s: int, t: int, l1_steps: int) -> Fraction:
    """max over outputs z of log p(z − k)/p(z − k') for i.i.d. Pr[z] ∝ exp(−|z|·s/t): attained at
    z = k, equal to (s/t)·‖k − k'‖₁ (triangle inequality), as an exact rational."""
    return Fraction(s, t) * l1_steps


def test_vector_laplace_at_d_20000_is_calibrated_to_the_rounded_sensitivity():
    result = laplace_mechanism(np.zeros(D), epsilon=1.0, sensitivity=1.0, randomness=1)
    g = result.grid_step
    assert result.noise_scale * 1.0 >= 1.0 + D * g
    # and not much more noise than the continuous Laplace's b = Δ₁/ε (the grid shrank with d)
    assert result.noise_scale <= (1.0 + 1.0 / 4096) * 1.0000001
    assert D * g <= 1.0 / 4096


def test_vector_laplace_worst_pair_loses_at_most_epsilon_and_the_old_grid_did_not():
    epsilon, sensitivity = 1.0, 1.0
    result = laplace_mechanism(np.zeros(D), epsilon=epsilon, sensitivity=sensitivity, randomness=1)
    g = result.grid_step
    x, x_prime = _l1_worst_pair(D, sensitivity, g)
    steps = _rounded_l1(x, x_prime, g)
    assert steps >= math.floor(sensitivity / g) + D - 1  # the pair hits the worst case (to one step)
    loss = _laplace_worst_loss(result.noise["s"], result.noise["t"], steps)
    assert loss <= Fraction(epsilon)
    assert loss > Fraction(epsilon) * (1 - Fraction(1, 4096))  # and little is wasted

    # The calibration before the fix: the scalar grid and ⌊Δ₁/g⌋ + 1 steps whatever d. The same
    # construction on that grid shows its true ε (this is what the test above guards against).
    g_old = _pow2_floor(sensitivity / 4096)
    old_steps = math.floor(sensitivity / g_old) + 1
    old_ratio = Fraction(epsilon) / old_steps  # even without rounding ε/Δ down
    x, x_prime = _l1_worst_pair(D, sensitivity, g_old)
    old_loss = old_ratio * _rounded_l1(x, x_prime, g_old)
    assert old_loss > 4 * epsilon


def test_vector_laplace_pmf_log_ratio_at_the_worst_output_matches():
    """The same bound from the pmfs themselves on a small vector: log p(k − k)/p(k − k'),
    coordinate by coordinate, with Pr[z] ∝ α^|z| (the normalisers cancel)."""
    d, epsilon, sensitivity = 50, 0.5, 3.0
    result = laplace_mechanism(np.zeros(d), epsilon=epsilon, sensitivity=sensitivity, randomness=1)
    g, s, t = result.grid_step, result.noise["s"], result.noise["t"]
    x, x_prime = _l1_worst_pair(d, sensitivity, g)
    k, k_prime = np.rint(x / g).astype(np.int64), np.rint(x_prime / g).astype(np.int64)
    z = k  # the output most favourable to x
    log_ratio = sum(Fraction(s, t) * (abs(int(zi - kpi)) - abs(int(zi - ki)))
                    for zi, ki, kpi in zip(z, k, k_prime))
    assert log_ratio == Fraction(s, t) * int(np.abs(k - k_prime).sum())
    assert log_ratio <= Fraction(epsilon)
    assert int(np.abs(k - k_prime).sum()) >= math.floor(sensitivity / g) + d - 1


def test_scalar_laplace_is_unchanged():
    """d = 1: grid 2^⌊log₂(Δ/4096)⌋ and ⌊Δ/g⌋ + 1 steps, s/t = ε/K rounded down to 30 bits."""
    for sensitivity, epsilon in ((1.0, 1.0), (3.0, 0.1), (250.0, 2.0)):
        result = laplace_mechanism(1.25, epsilon=epsilon, sensitivity=sensitivity, randomness=1)
        g = _pow2_floor(sensitivity / 4096)
        steps = math.floor(sensitivity / g) + 1
        target = Fraction(epsilon) / steps
        shift = 30 - math.floor(math.log2(target))
        expected = Fraction(math.floor(target * 2**shift), 2**shift)
        assert result.grid_step == g
        assert Fraction(result.noise["s"], result.noise["t"]) == expected


def test_vector_gaussian_at_d_20000_covers_the_rounded_l2_sensitivity():
    epsilon, delta, sensitivity = 1.0, 1e-6, 1.0
    result = gaussian_mechanism(np.zeros(D), epsilon=epsilon, delta=delta, sensitivity=sensitivity, randomness=1)
    g = result.grid_step
    sigma2 = Fraction(result.noise["sigma2"])
    # Adversarial pair: every coordinate gets the same share a of the budget and rounding adds a
    # step to each: x_i = (½ − η)·g → 0, x'_i = (a + ½ + η)·g → a + 1.
    eta = 2.0**-20
    a = math.floor(sensitivity / g / math.sqrt(D) - 2 * eta)
    x = np.full(D, (0.5 - eta) * g)
    x_prime = np.full(D, (a + 0.5 + eta) * g)
    assert sum((Fraction(p) - Fraction(q)) ** 2 for p, q in zip(x[:1].tolist(), x_prime[:1].tolist())) * D \
        <= Fraction(sensitivity) ** 2
    k_diff = np.rint(x_prime / g) - np.rint(x / g)
    rounded_l2 = float(np.sqrt((k_diff**2).sum()))
    assert rounded_l2 > sensitivity / g + 0.3 * math.sqrt(D)  # far beyond Δ₂/g: rounding matters
    # the certificate of the noise actually used (CKS 2020: independent discrete Gaussians are
    # ½(R/σ)²-zCDP for an L2 distance R; Corollary 13 converts) holds at this pair
    assert zcdp_delta(rounded_l2**2 / (2.0 * float(sigma2)), epsilon) <= delta
    # ... and noise calibrated to Δ₂/g alone (rounding forgotten) fails at the same pair
    unrounded = discrete_gaussian_sigma2(epsilon, delta, int(sensitivity / g), l2_sensitivity=sensitivity / g)
    assert zcdp_delta(rounded_l2**2 / (2.0 * float(unrounded)), epsilon) > delta
    assert result.noise_scale >= math.sqrt(float(sigma2)) * g * (1 - 1e-12)
    assert math.sqrt(D) * g <= sensitivity / 4096


def test_scalar_gaussian_grid_is_unchanged():
    result = gaussian_mechanism(0.3, epsilon=1.0, delta=1e-6, sensitivity=2.0, randomness=1)
    assert result.grid_step == _pow2_floor(2.0 / 4096)


@pytest.mark.parametrize("d", [1, 7, 1000])
def test_laplace_grid_shrinks_with_the_dimension(d):
    result = laplace_mechanism(np.zeros(d), epsilon=1.0, sensitivity=1.0, randomness=2)
    assert result.grid_step == _pow2_floor(1.0 / (4096 * d))
    steps = math.floor(1.0 / result.grid_step) + d
    assert Fraction(result.noise["s"], result.noise["t"]) * steps <= 1
