"""A differential-privacy loss: the (ε, δ) pair every guarantee in crowdsafe is stated as.

A mechanism A is (ε, δ)-DP if Pr[A(D) ∈ O] ≤ e^ε · Pr[A(D') ∈ O] + δ for every set of outputs O
and every pair of neighbouring datasets D, D' (Dwork, McSherry, Nissim, Smith 2006; Dwork,
Kenthapadi, McSherry, Mironov, Naor 2006).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import SupportsFloat, cast

from crowdsafe.errors import ParameterError
from crowdsafe.number_text import rounded_up


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float if it is a finite number ≥ 0, else raise ParameterError."""
    value = _as_float(epsilon, name)
    if not math.isfinite(value) or value < 0.0:
        raise ParameterError(f"{name} must be a finite number >= 0, got {epsilon!r}")
    return value


def check_delta(delta: object, name: str = "delta") -> float:
    """Return ``delta`` as a float if 0 ≤ δ < 1, else raise ParameterError."""
    value = _as_float(delta, name)
    if not 0.0 <= value < 1.0:
        raise ParameterError(f"{name} must lie in [0, 1), got {delta!r}")
    return value


def _as_float(value: object, name: str) -> float:
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a number, got {value!r}")
    if isinstance(value, (str, bytes)):  # numbers as numbers: the command line reads its own text strictly
        raise ParameterError(f"{name} must be a number, not the text {value!r}", parameter=name)
    try:  # float() refuses what is not a number with TypeError/ValueError (the cast only informs mypy)
        result = float(cast(SupportsFloat, value))
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(result):
        raise ParameterError(f"{name} must be a number, got NaN")
    return result


@dataclass(frozen=True)
class PrivacyLoss:
    """An (ε, δ)-differential-privacy guarantee; validated on construction (ε ≥ 0, 0 ≤ δ < 1)."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def as_dict(self) -> dict[str, float]:
        return {"epsilon": self.epsilon, "delta": self.delta}

    def __str__(self) -> str:
        return f"({rounded_up(self.epsilon)}, {rounded_up(self.delta, 3)})-DP"  # never below the loss
