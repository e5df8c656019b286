"""Laplace and Gaussian mechanisms: distribution, calibration, floating-point safety, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import calibration, gaussian_mechanism, geometric_mechanism, laplace_mechanism
from crowdsafe.randomness import Randomness

N = 200_000


def _binomial_ok(hits: int, n: int, p: float) -> bool:
    """The count of hits is at least what probability p gives, minus 5 standard errors."""
    return hits >= n * p - 5 * math.sqrt(n * p * (1 - p))


def test_discrete_laplace_count_mean_scale_and_interval():
    result = laplace_mechanism(np.full(N, 1234, dtype=np.int64), epsilon=0.5, sensitivity=1, randomness=1)
    noise = result.value - 1234
    alpha = math.exp(-0.5)
    assert result.mechanism.startswith("discrete Laplace")
    assert result.noise_std == pytest.approx(math.sqrt(2 * alpha) / (1 - alpha))
    assert abs(noise.mean()) < 5 * result.noise_std / math.sqrt(N)
    assert noise.std() == pytest.approx(result.noise_std, rel=0.02)
    inside = np.count_nonzero(np.abs(noise) <= result.error_half_width)
    assert _binomial_ok(inside, N, 0.95)
    assert result.value.dtype == np.int64 and result.delta == 0.0


def test_scalar_count_stays_an_int_and_is_labelled_not_fit_for_release_when_seeded():
    result = geometric_mechanism(10, epsilon=1.0, randomness=3)
    assert isinstance(result.value, int)
    assert result.randomness["fit_for_release"] is False
    assert laplace_mechanism(10, epsilon=1.0, sensitivity=1).randomness["fit_for_release"] is True


def test_real_valued_laplace_lives_on_a_power_of_two_grid_and_has_laplace_spread():
    result = laplace_mechanism(np.full(N, 3.3), epsilon=0.5, sensitivity=2.5, randomness=2)
    step = result.grid_step
    assert step is not None and math.log2(step).is_integer() and step <= 2.5 / 4096
    multiples = result.value / step
    assert np.all(multiples == np.rint(multiples))
    noise = result.value - 3.3
    continuous_std = math.sqrt(2) * 2.5 / 0.5
    assert result.noise_std == pytest.approx(continuous_std, rel=5e-4)  # one extra grid step
    assert noise.std() == pytest.approx(continuous_std, rel=0.02)
    assert _binomial_ok(np.count_nonzero(np.abs(noise) <= result.error_half_width + step), N, 0.95)


def test_textbook_floating_point_laplace_leaks_and_ours_does_not():
    """Mironov 2012: outputs of x + Lap(b) in doubles reveal x through their low-order bits.

    With x = 0 the output is the noise itself and can take values in (0, 0.25) finer than
    2^-53; with x = 1 every output in (0, 0.25) is 1 + n computed exactly, a multiple of 2^-53.
    So an output in (0, 0.25) off the 2^-53 lattice proves x = 0: an infinite privacy loss.
    """
    rng = np.random.default_rng(0)
    naive_0 = 0.0 + rng.laplace(0.0, 1.0, N)
    naive_1 = 1.0 + rng.laplace(0.0, 1.0, N)

    def impossible_under_one(y: np.ndarray) -> np.ndarray:
        window = (y > 0) & (y < 0.25)
        return window & (y * 2.0**53 != np.rint(y * 2.0**53))

    assert np.count_nonzero(impossible_under_one(naive_1)) == 0
    assert np.count_nonzero(impossible_under_one(naive_0)) > 1000  # a distinguishing event

    # crowdsafe: both inputs produce outputs on the same grid, which every input can reach.
    ours_0 = laplace_mechanism(np.zeros(N), epsilon=1.0, sensitivity=1.0, randomness=1)
    ours_1 = laplace_mechanism(np.ones(N), epsilon=1.0, sensitivity=1.0, randomness=2)
    step = ours_0.grid_step
    assert step == ours_1.grid_step
    for out in (ours_0.value, ours_1.value):
        assert np.all(out / step == np.rint(out / step))


def test_gaussian_on_integers_matches_sigma_and_certifies_its_delta():
    result = gaussian_mechanism(
        np.zeros(N, dtype=np.int64), epsilon=1.0, delta=1e-6, sensitivity=1, randomness=4, one_coordinate=True
    )
    sigma2 = calibration.discrete_gaussian_sigma2(1.0, 1e-6, 1)
    assert result.noise_scale == pytest.approx(math.sqrt(sigma2))
    assert calibration.discrete_gaussian_delta(1.0, sigma2, 1) <= 1e-6
    assert result.value.std() == pytest.approx(result.noise_std, rel=0.02)
    assert _binomial_ok(np.count_nonzero(np.abs(result.value) <= result.error_half_width), N, 0.95)


def test_real_valued_gaussian_is_within_a_grid_step_of_the_analytic_sigma():
    for epsilon in (0.5, 3.0):
        result = gaussian_mechanism(7.25, epsilon=epsilon, delta=1e-6, sensitivity=2.0, randomness=5)
        analytic = calibration.analytic_gaussian_sigma(epsilon, 1e-6, 2.0)
        assert result.noise_scale == pytest.approx(analytic, rel=2e-3)
        assert result.value / result.grid_step == pytest.approx(round(result.value / result.grid_step))
        assert "analytic" in result.calibration


def test_classic_gaussian_enforces_epsilon_below_one():
    with pytest.raises(ParameterError, match="ε < 1"):
        gaussian_mechanism(1, epsilon=1.5, delta=1e-6, sensitivity=1, calibration_name="classic")
    result = gaussian_mechanism(1, epsilon=0.5, delta=1e-6, sensitivity=1, calibration_name="classic", randomness=1)
    classic = calibration.classic_gaussian_sigma(0.5, 1e-6, 1.0)
    assert result.noise_scale == pytest.approx(classic, rel=1e-9)
    assert "classic" in result.calibration


def test_vector_gaussian_without_one_coordinate_uses_the_conservative_zcdp_path():
    values = np.zeros(50_000, dtype=np.int64)
    tight = gaussian_mechanism(values, epsilon=1.0, delta=1e-6, sensitivity=1, randomness=6, one_coordinate=True)
    vector = gaussian_mechanism(values, epsilon=1.0, delta=1e-6, sensitivity=1, randomness=6)
    assert vector.noise_scale > tight.noise_scale
    assert "zCDP" in vector.calibration
    rho = 1.0 / (2 * vector.noise_scale**2)
    assert calibration.zcdp_delta(rho, 1.0) <= 1e-6


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": 0.0, "sensitivity": 1},
        {"epsilon": -1.0, "sensitivity": 1},
        {"epsilon": float("nan"), "sensitivity": 1},
        {"epsilon": 1.0, "sensitivity": 0},
        {"epsilon": 1.0, "sensitivity": -2.0},
    ],
)
def test_laplace_bad_parameters(kwargs):
    with pytest.raises(ParameterError):
        laplace_mechanism(5, **kwargs)


@pytest.mark.parametrize("delta", [0.0, 1.0, 2.0, -1e-9])
def test_gaussian_bad_delta(delta):
    with pytest.raises(ParameterError, match="delta"):
        gaussian_mechanism(5, epsilon=1.0, delta=delta, sensitivity=1)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), True, np.array([[1, 2]]), "text"])
def test_bad_values_are_refused(value):
    with pytest.raises(ParameterError):
        laplace_mechanism(value, epsilon=1.0, sensitivity=1.0)


def test_forcing_integer_noise_on_fractional_values_is_refused():
    with pytest.raises(ParameterError, match="whole-number"):
        laplace_mechanism(2.5, epsilon=1.0, sensitivity=1, integer=True)


def test_same_seed_same_answer_and_os_stream_differs():
    a = laplace_mechanism(np.arange(10), epsilon=1.0, sensitivity=1, randomness=Randomness(9)).value
    b = laplace_mechanism(np.arange(10), epsilon=1.0, sensitivity=1, randomness=9).value
    assert np.array_equal(a, b)
    c = laplace_mechanism(np.arange(1000), epsilon=1.0, sensitivity=1).value
    d = laplace_mechanism(np.arange(1000), epsilon=1.0, sensitivity=1).value
    assert not np.array_equal(c, d)
