"""Integer noise distributions: what is sampled, and what can be said about it in advance.

Both distributions live on the integers and are sampled exactly (:mod:`crowdsafe.mechanisms.exact`).
Their spread (standard deviation, 95% half-width) is computed from the public parameters only, so
reporting it reveals nothing about the data.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import calibration, exact


@dataclass(frozen=True)
class DiscreteLaplaceNoise:
    """The discrete Laplace (two-sided geometric) distribution: Pr[x] ∝ exp(−|x|·s/t), x ∈ Z.

    Added to an integer query of sensitivity Δ it gives (Δ·s/t)-DP (Ghosh, Roughgarden &
    Sundararajan 2009; the privacy ratio of neighbouring outputs is at most exp(Δ·s/t)).
    """

    s: int
    t: int

    @classmethod
    def for_privacy(cls, epsilon: float, sensitivity: int) -> DiscreteLaplaceNoise:
        """The noise for ε-DP at integer sensitivity Δ: s/t is ε/Δ rounded *down* to an exact
        rational, so the realised ε (:meth:`epsilon_at`) never exceeds the requested one.

        A function of (ε, Δ) alone, public parameters: the last :data:`NOISES_KEPT` are kept for
        plain numbers (by value and type, so 1 and 1.0 and True are apart)."""
        if cls is DiscreteLaplaceNoise and type(epsilon) in (int, float) and type(sensitivity) in (int, float):
            return _laplace_for_privacy(epsilon, sensitivity)
        return cls._for_privacy(epsilon, sensitivity)

    @classmethod
    def _for_privacy(cls, epsilon: float, sensitivity: int) -> DiscreteLaplaceNoise:
        """:meth:`for_privacy` without the cache."""
        epsilon = calibration.check_epsilon(epsilon)
        if int(sensitivity) != sensitivity or sensitivity < 1:
            raise ParameterError(f"integer noise needs an integer sensitivity ≥ 1, got {sensitivity}")
        target = Fraction(epsilon) / int(sensitivity)
        # 30 significant bits, fewer (at least 16) when needed to keep t < 2^56 for the sampler:
        # a relative rounding of at most 2^-16 of ε, always downwards.
        bits = min(30, 55 + math.floor(math.log2(target)))
        if bits < 16:
            raise ParameterError(
                f"epsilon / sensitivity = {epsilon / sensitivity:.3g} is too small to sample exactly"
            )
        ratio = exact.rational_at_most(target, bits)
        return cls(ratio.numerator, ratio.denominator)

    @property
    def name(self) -> str:
        return "discrete Laplace"

    @property
    def scale(self) -> float:
        """b = t/s: Pr[x] ∝ exp(−|x|/b)."""
        return self.t / self.s

    @property
    def _alpha(self) -> float:
        return math.exp(-self.s / self.t)

    @property
    def std(self) -> float:
        """√Var with Var = 2α/(1−α)², α = exp(−s/t)."""
        alpha = self._alpha
        return math.sqrt(2.0 * alpha) / -math.expm1(-self.s / self.t)

    def epsilon_at(self, sensitivity: int) -> float:
        """The ε this noise gives at integer sensitivity Δ: Δ·s/t."""
        return float(Fraction(self.s * int(sensitivity), self.t))

    def half_width(self, level: float = 0.95) -> int:
        """The smallest m with Pr[|Z| ≤ m] ≥ level, from Pr[|Z| > m] = 2α^(m+1)/(1+α)."""
        log_alpha = -self.s / self.t
        log_coefficient = math.log(2.0 / (1.0 + self._alpha))
        limit = math.log(1.0 - level)

        def covered(m: int) -> bool:
            return log_coefficient + (m + 1) * log_alpha <= limit

        m = max(0, math.ceil((limit - log_coefficient) / log_alpha) - 1)
        while not covered(m):
            m += 1
        while m > 0 and covered(m - 1):
            m -= 1
        return m

    def sample(self, generator: np.random.Generator, size: int) -> np.ndarray:
        return exact.discrete_laplace(generator, self.s, self.t, size)

    def describe(self) -> dict[str, object]:
        return {"distribution": self.name, "s": self.s, "t": self.t, "scale": self.scale}


@dataclass(frozen=True)
class DiscreteGaussianNoise:
    """The discrete Gaussian N_Z(0, σ²): Pr[x] ∝ exp(−x²/(2σ²)), x ∈ Z (Canonne, Kamath &
    Steinke 2020). σ² is an exact rational."""

    sigma2: Fraction

    @property
    def name(self) -> str:
        return "discrete Gaussian"

    @property
    def scale(self) -> float:
        """σ (the parameter, not exactly the standard deviation for σ < 2)."""
        return math.sqrt(self.sigma2)

    @property
    def std(self) -> float:
        return math.sqrt(calibration.discrete_gaussian_variance(float(self.sigma2)))

    def half_width(self, level: float = 0.95) -> int:
        return calibration.discrete_gaussian_half_width(float(self.sigma2), level)

    def sample(self, generator: np.random.Generator, size: int) -> np.ndarray:
        return exact.discrete_gaussian(generator, self.sigma2, size)

    def describe(self) -> dict[str, object]:
        return {"distribution": self.name, "sigma2": str(self.sigma2), "scale": self.scale}


IntegerNoise = DiscreteLaplaceNoise | DiscreteGaussianNoise
NOISES_KEPT = 256


@functools.lru_cache(maxsize=NOISES_KEPT, typed=True)
def _laplace_for_privacy(epsilon: float, sensitivity: int) -> DiscreteLaplaceNoise:
    return DiscreteLaplaceNoise._for_privacy(epsilon, sensitivity)
