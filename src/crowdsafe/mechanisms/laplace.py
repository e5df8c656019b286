"""The Laplace mechanism (ε-DP), safe against floating-point attacks.

f(X) + Lap(Δ₁/ε) is ε-DP for a query f of L1 sensitivity Δ₁ (Dwork, McSherry, Nissim & Smith
2006). crowdsafe never adds floating-point Laplace noise (Mironov 2012):

- integer answers with integer sensitivity (counts, histograms) get the **discrete Laplace**
  (two-sided geometric) noise with Pr[z] ∝ exp(−ε|z|/Δ₁), sampled exactly (the geometric mechanism
  of Ghosh, Roughgarden & Sundararajan 2009): ε-DP exactly;
- real answers (d coordinates) are rounded to a power-of-two grid g = 2^⌊log₂(Δ₁/(4096·d))⌋ and
  receive discrete Laplace noise in grid units, calibrated to the rounded L1 sensitivity
  ⌊Δ₁/g⌋ + d steps (rounding moves each coordinate by at most one step between neighbours; proof
  in :mod:`crowdsafe.mechanisms.discretization`): ε-DP exactly, and the noise scale b satisfies
  Δ₁ + d·g ≥ b·ε ≥ (⌊Δ₁/g⌋ + d)·g with d·g ≤ Δ₁/4096, i.e. within 0.025% of the continuous
  Laplace's. For d = 1 this is the scalar grid and calibration ⌊Δ₁/g⌋ + 1.
"""

from __future__ import annotations

from typing import Any

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import calibration, discretization
from crowdsafe.mechanisms.additive import NoisyValue, check_values, describe_grid, is_integer_query, noisy_value
from crowdsafe.mechanisms.noise import DiscreteLaplaceNoise
from crowdsafe.randomness import Randomness, as_randomness


def laplace_mechanism(
    value: Any,
    *,
    epsilon: float,
    sensitivity: float,
    randomness: Randomness | int | None = None,
    integer: bool | None = None,
) -> NoisyValue:
    """Answer ``value`` (a number or 1-d array) with ε-DP Laplace noise for L1 sensitivity Δ₁.

    ``integer`` picks integer (discrete Laplace) noise; by default it is used when the answer is
    integer-typed and the sensitivity a whole number. ``randomness``: a Randomness, a seed (not fit
    for release), or None for the OS-keyed secure stream.
    """
    epsilon = calibration.check_epsilon(epsilon)
    sensitivity = calibration.check_sensitivity(sensitivity)
    use_integers = is_integer_query(value, sensitivity) if integer is None else integer
    randomness = as_randomness(randomness)
    if use_integers:
        if not float(sensitivity).is_integer():
            raise ParameterError(f"integer noise needs a whole-number sensitivity, got {sensitivity}")
        noise = DiscreteLaplaceNoise.for_privacy(epsilon, int(sensitivity))
        return noisy_value(
            value,
            noise=noise,
            randomness=randomness,
            grid_step=None,
            epsilon=epsilon,
            delta=0.0,
            mechanism="discrete Laplace (geometric)",
            sensitivity=sensitivity,
            calibration="b = Δ₁/ε on the integers",
        )
    dimension = int(check_values(value).shape[0])
    step = discretization.grid_step(sensitivity, extra_steps=dimension)
    grid_sensitivity = discretization.grid_sensitivity(sensitivity, step, dimension)
    noise = DiscreteLaplaceNoise.for_privacy(epsilon, grid_sensitivity)
    return noisy_value(
        value,
        noise=noise,
        randomness=randomness,
        grid_step=step,
        epsilon=epsilon,
        delta=0.0,
        mechanism=f"Laplace on a {describe_grid(step)} grid (exact discrete Laplace noise)",
        sensitivity=sensitivity,
        calibration=(
            "b = (⌊Δ₁/g⌋ + 1)·g/ε (rounding to the grid adds one step g)" if dimension == 1 else
            f"b = (⌊Δ₁/g⌋ + d)·g/ε, d = {dimension} (rounding adds up to one step g per coordinate)"
        ),
    )


def geometric_mechanism(
    value: Any,
    *,
    epsilon: float,
    sensitivity: int = 1,
    randomness: Randomness | int | None = None,
) -> NoisyValue:
    """The geometric mechanism: integer answers plus discrete Laplace noise (ε-DP)."""
    return laplace_mechanism(
        value, epsilon=epsilon, sensitivity=sensitivity, randomness=randomness, integer=True
    )
