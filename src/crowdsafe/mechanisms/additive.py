"""Additive noise mechanisms: the shared machinery behind Laplace and Gaussian.

A query answer (a number or an array of numbers) receives integer noise: directly when the answer
and its sensitivity are integers (counts, histograms), or on a power-of-two grid otherwise
(:mod:`crowdsafe.mechanisms.discretization`). The result, :class:`NoisyValue`, says what ran: the
(ε, δ) it satisfies, the mechanism, its noise scale and a 95% interval for the error, all derived
from public parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import discretization
from crowdsafe.mechanisms.noise import IntegerNoise
from crowdsafe.randomness import Randomness

ERROR_LEVEL = 0.95


@dataclass(frozen=True)
class NoisyValue:
    """A differentially private answer and everything a reader needs to interpret it.

    ``error_half_width`` h: with probability at least 95% the noise lies in [−h, h] (per
    coordinate), so [value − h, value + h] covers the exact (rounded) answer with that probability.
    ``error_unit`` says what h measures: "value" (units of the answer) or "rank" (for quantiles:
    the answer's rank is within h of the target rank).
    """

    value: Any
    epsilon: float
    delta: float
    mechanism: str
    noise_scale: float
    noise_std: float
    error_half_width: float
    sensitivity: float
    calibration: str
    grid_step: float | None = None
    randomness: dict[str, object] = field(default_factory=dict)
    noise: dict[str, object] = field(default_factory=dict)
    error_unit: str = "value"
    distribution: IntegerNoise | None = field(default=None, repr=False, compare=False)

    @property
    def error_interval(self) -> tuple[float, float]:
        """The 95% interval for the error (noise) of each coordinate."""
        return (-self.error_half_width, self.error_half_width)

    def half_width_at(self, level: float) -> float:
        """The half-width of the noise at another coverage level (in the value's units)."""
        if self.distribution is None:
            raise ParameterError(f"no noise distribution recorded for {self.mechanism}")
        return self.distribution.half_width(level) * (self.grid_step or 1.0)

    def rescaled(self, factor: float, label: str) -> NoisyValue:
        """The same answer in units ``factor`` times larger (an integer total of grid steps)."""
        return replace(
            self,
            value=float(self.value) * factor,
            mechanism=f"{self.mechanism} {label}",
            noise_scale=self.noise_scale * factor,
            noise_std=self.noise_std * factor,
            error_half_width=self.error_half_width * factor,
            sensitivity=self.sensitivity * factor,
            grid_step=(self.grid_step or 1.0) * factor,
        )

    def as_dict(self) -> dict[str, object]:
        value = self.value.tolist() if isinstance(self.value, np.ndarray) else self.value
        return {
            "value": value,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mechanism": self.mechanism,
            "noise_scale": self.noise_scale,
            "noise_std": self.noise_std,
            "error_interval_95": list(self.error_interval),
            "error_unit": self.error_unit,
            "sensitivity": self.sensitivity,
            "calibration": self.calibration,
            "grid_step": self.grid_step,
            "noise": self.noise,
            "randomness": self.randomness,
        }


def is_integer_query(value: Any, sensitivity: float) -> bool:
    """True when the answer is integer-typed and the sensitivity is a whole number."""
    array = np.asarray(value)
    if array.dtype == bool:
        raise ParameterError("a query answer must be numeric, got booleans")
    return np.issubdtype(array.dtype, np.integer) and float(sensitivity).is_integer()


def check_values(value: Any) -> np.ndarray:
    """The answer as a 1-d array (a scalar becomes one entry); rejects non-numbers."""
    array = np.asarray(value)
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.number) or array.dtype == object):
        raise ParameterError(f"a query answer must be numeric, got {array.dtype}")
    if array.ndim > 1:
        raise ParameterError("a query answer must be a number or a 1-d array of numbers")
    return np.atleast_1d(array)


def add_integer_noise(
    value: Any,
    noise: IntegerNoise,
    randomness: Randomness,
    *,
    grid_step: float | None,
) -> tuple[Any, float | None]:
    """``value`` plus exact integer noise, on the integers (``grid_step`` None) or on the grid.

    Returns the noisy value with the shape of ``value`` (a scalar stays a scalar) and the grid step.
    """
    scalar = np.ndim(value) == 0
    values = check_values(value)
    if grid_step is None:
        if values.dtype.kind == "f" and not np.all(np.isfinite(values) & (values == np.rint(values))):
            raise ParameterError("integer noise needs whole-number answers")
        multiples = values.astype(np.int64) if values.dtype != object else values
    else:
        multiples = discretization.to_grid(values, grid_step)
    draws = noise.sample(randomness.generator, multiples.shape[0])
    noisy = multiples + draws if multiples.dtype != object else multiples + draws.astype(object)
    if grid_step is None:
        result: Any = noisy
        if scalar:
            return int(noisy[0]), None
        return result, None
    floats = discretization.from_grid(np.asarray(noisy), grid_step)
    return (float(floats[0]) if scalar else floats), grid_step


def noisy_value(
    value: Any,
    *,
    noise: IntegerNoise,
    randomness: Randomness,
    grid_step: float | None,
    epsilon: float,
    delta: float,
    mechanism: str,
    sensitivity: float,
    calibration: str,
) -> NoisyValue:
    """Draw the noise and package the answer with its guarantee and its error interval."""
    noisy, step = add_integer_noise(value, noise, randomness, grid_step=grid_step)
    unit = 1.0 if step is None else step
    return NoisyValue(
        value=noisy,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        noise_scale=noise.scale * unit,
        noise_std=noise.std * unit,
        error_half_width=noise.half_width(ERROR_LEVEL) * unit,
        sensitivity=sensitivity,
        calibration=calibration,
        grid_step=step,
        randomness=randomness.describe(),
        noise=noise.describe(),
        distribution=noise,
    )


def describe_grid(step: float) -> str:
    """'2^-k' style text for a power-of-two grid step."""
    return f"2^{int(math.log2(step))}"
