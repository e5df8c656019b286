"""Floating-point safety for real-valued outputs: exact integer noise on a power-of-two grid.

Mironov (2012, "On significance of the least significant bits for differential privacy") showed
that the textbook Laplace mechanism, computed as ``value + scale * log(uniform)`` in floating point,
leaks the value: the set of doubles the sum can produce depends on the input, so a single output
can rule inputs out. His remedy, the *snapping mechanism*, rounds the noisy output to a grid Λ and
clamps it, and pays a small extra ε for the remaining rounding effects.

crowdsafe uses the discretization form of the same idea, where nothing is left to floating point:

1. the true value is rounded to the nearest multiple k·g of a power-of-two grid step g (dividing a
   double by a power of two is exact, and the rounding is a fixed function of the value);
2. *integer* noise Z (discrete Laplace or discrete Gaussian) is drawn by an exact sampler;
3. the output is (k + Z)·g.

Every output is a grid point and every grid point can be produced from every input, so the output
carries no low-order bits about the input beyond what the integer mechanism reveals. Rounding can
move two neighbouring values apart by at most one extra grid step, so the mechanism is calibrated
to the integer sensitivity ⌊Δ/g⌋ + 1 (in grid units): the guarantee is exact, not approximate.
Converting k + Z back to a double is post-processing and cannot weaken it. The grid step is at
most 2⁻¹² of the sensitivity, so the extra step costs at most 0.025% of the noise.
"""

from __future__ import annotations

import math

import numpy as np

from crowdsafe.errors import ParameterError

SENSITIVITY_STEPS = 1 << 12  # the grid step is at most sensitivity / 4096
_INT64_SAFE = 1 << 62


def grid_step(sensitivity: float) -> float:
    """The grid step for a real-valued query: 2^⌊log2(Δ/4096)⌋, so Δ spans 4096 to 8191 steps.

    The step depends only on the public sensitivity, never on the data.
    """
    return math.ldexp(1.0, math.floor(math.log2(sensitivity / SENSITIVITY_STEPS)))


def grid_sensitivity(sensitivity: float, step: float) -> int:
    """The sensitivity in grid units after rounding: ⌊Δ/g⌋ + 1 (one step for the rounding)."""
    return math.floor(sensitivity / step) + 1


def to_grid(values: float | np.ndarray, step: float) -> np.ndarray:
    """Round each value to the nearest multiple of ``step``: the integer multiples, exactly.

    Returns int64 when every multiple fits, else Python integers (object array).
    """
    array = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if not np.all(np.isfinite(array)):
        raise ParameterError("a value to perturb is not finite (NaN or infinity)")
    scaled = np.rint(array / step)  # division by a power of two is exact; rint is exact
    if not np.all(np.isfinite(scaled)):
        raise ParameterError("a value to perturb is too large for the grid of its sensitivity")
    if np.abs(scaled).max(initial=0.0) < _INT64_SAFE:
        return scaled.astype(np.int64)
    return np.array([int(v) for v in scaled], dtype=object)


def from_grid(multiples: np.ndarray, step: float) -> np.ndarray:
    """k·g as doubles (post-processing of the integer result)."""
    if multiples.dtype == object:
        return np.array([float(k) for k in multiples], dtype=np.float64) * step
    return multiples.astype(np.float64) * step
