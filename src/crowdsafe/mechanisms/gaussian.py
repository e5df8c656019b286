"""The Gaussian mechanism ((ε, δ)-DP), with classic and analytic calibration.

f(X) + N(0, σ²) for a query of L2 sensitivity Δ₂. Two calibrations of σ:

- ``"analytic"`` (default): the smallest σ for which the mechanism is (ε, δ)-DP, from the exact
  privacy profile of the Gaussian (Balle & Wang 2018, "Improving the Gaussian mechanism for
  differential privacy: analytical calibration and optimal denoising"); valid for every ε > 0.
- ``"classic"``: σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Theorem A.1). Proven only for
  ε < 1; larger ε is refused (the formula can then under-noise), with a pointer to the analytic one.

As for Laplace, the noise is integer-valued and sampled exactly: the **discrete Gaussian** of
Canonne, Kamath & Steinke (2020) on the integers for integer answers, on a power-of-two grid for
real answers. Its guarantee is certified by the discrete Gaussian's own exact privacy profile
(CKS 2020, Theorem 7) when neighbouring answers differ in one coordinate, and through
zero-concentrated DP (CKS 2020, Theorem 14 and Corollary 13) when they may differ in several.
The analytic calibration solves that certificate for the smallest σ; the classic one takes the
formula's σ and checks it against the certificate.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Literal

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import calibration, discretization, exact
from crowdsafe.mechanisms.additive import (
    NoisyValue,
    check_values,
    describe_grid,
    is_integer_query,
    noisy_value,
)
from crowdsafe.mechanisms.noise import DiscreteGaussianNoise
from crowdsafe.randomness import Randomness, as_randomness

Calibration = Literal["analytic", "classic"]


def gaussian_sigma2(
    epsilon: float,
    delta: float,
    sensitivity: float,
    *,
    calibration_name: Calibration = "analytic",
    one_coordinate: bool = True,
) -> Fraction:
    """σ² (exact rational, in integer units) of discrete Gaussian noise for (ε, δ)-DP.

    ``sensitivity``: the integer sensitivity when ``one_coordinate`` (neighbouring answers differ
    in one coordinate), else the L2 sensitivity of the vector.
    """
    if calibration_name not in ("analytic", "classic"):
        raise ParameterError(f"unknown Gaussian calibration {calibration_name!r}: use 'analytic' or 'classic'")
    l2 = None if one_coordinate else sensitivity
    if calibration_name == "analytic":
        return calibration.discrete_gaussian_sigma2(epsilon, delta, int(sensitivity), l2_sensitivity=l2)
    sigma = calibration.classic_gaussian_sigma(epsilon, delta, sensitivity)
    sigma2 = exact.rational_at_least(sigma * sigma)
    certified = (
        calibration.discrete_gaussian_delta(epsilon, sigma2, int(sensitivity))
        if one_coordinate
        else calibration.zcdp_delta(sensitivity**2 / (2.0 * float(sigma2)), epsilon)
    )
    if certified > delta:
        raise ParameterError(
            "the classic Gaussian σ does not certify (ε, δ) for the discrete Gaussian here; "
            "use the analytic calibration (the default)"
        )
    return sigma2


def gaussian_mechanism(
    value: Any,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    randomness: Randomness | int | None = None,
    calibration_name: Calibration = "analytic",
    integer: bool | None = None,
    one_coordinate: bool | None = None,
) -> NoisyValue:
    """Answer ``value`` with (ε, δ)-DP Gaussian noise for L2 sensitivity Δ₂.

    ``one_coordinate``: neighbouring datasets change at most one coordinate of the answer (always
    true for a scalar; the default for arrays is the conservative False). ``integer``: as for
    :func:`~crowdsafe.mechanisms.laplace.laplace_mechanism`.
    """
    epsilon = calibration.check_epsilon(epsilon)
    delta = calibration.check_delta(delta, positive=True)
    sensitivity = calibration.check_sensitivity(sensitivity, "L2 sensitivity")
    if calibration_name == "classic":
        calibration.classic_gaussian_sigma(epsilon, delta, sensitivity)  # refuses ε ≥ 1, says why
    values = check_values(value)
    single = values.shape[0] == 1 if one_coordinate is None else one_coordinate
    use_integers = is_integer_query(value, sensitivity) if integer is None else integer
    randomness = as_randomness(randomness)
    label = "analytic (Balle & Wang 2018)" if calibration_name == "analytic" else "classic (ε < 1)"
    certificate = "CKS 2020 Thm 7" if single else "zCDP, CKS 2020 Cor 13"
    if use_integers:
        if not float(sensitivity).is_integer() and single:
            raise ParameterError(f"integer noise needs a whole-number sensitivity, got {sensitivity}")
        step: float | None = None
        noise_sensitivity: float = sensitivity
        mechanism, rounded = "discrete Gaussian", ""
    else:
        # Rounded sensitivity (proofs in crowdsafe.mechanisms.discretization): one coordinate
        # changes by at most ⌊Δ/g⌋ + 1 steps; d coordinates by at most Δ₂/g + √d in L2 (each
        # coordinate moves by at most one step between neighbours), with √d·g ≤ Δ₂/4096.
        dimension = 1 if single else int(values.shape[0])
        step = discretization.grid_step(sensitivity, extra_steps=math.sqrt(dimension))
        if single:
            noise_sensitivity = discretization.grid_sensitivity(sensitivity, step)
        else:
            noise_sensitivity = discretization.grid_l2_sensitivity(sensitivity, step, dimension)
        mechanism = f"Gaussian on a {describe_grid(step)} grid (exact discrete Gaussian noise)"
        rounded = " at the rounded sensitivity"
    sigma2 = gaussian_sigma2(
        epsilon, delta, noise_sensitivity, calibration_name=calibration_name, one_coordinate=single
    )
    return noisy_value(
        value,
        noise=DiscreteGaussianNoise(sigma2),
        randomness=randomness,
        grid_step=step,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        sensitivity=sensitivity,
        calibration=f"{label}; certified by {certificate}{rounded}",
    )


def gaussian_noise_sigma(
    epsilon: float, delta: float, sensitivity: float, calibration_name: Calibration = "analytic"
) -> float:
    """σ of continuous N(0, σ²) noise for (ε, δ)-DP under the named calibration (no sampling)."""
    if calibration_name == "classic":
        return calibration.classic_gaussian_sigma(epsilon, delta, sensitivity)
    if calibration_name == "analytic":
        return calibration.analytic_gaussian_sigma(epsilon, delta, sensitivity)
    raise ParameterError(f"unknown Gaussian calibration {calibration_name!r}: use 'analytic' or 'classic'")

