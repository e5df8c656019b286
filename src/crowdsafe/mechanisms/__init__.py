"""Output-perturbation mechanisms, sensitivity, the empirical privacy audit, and DP queries.

- :func:`laplace_mechanism` / :func:`geometric_mechanism`: ε-DP, discrete Laplace noise.
- :func:`gaussian_mechanism`: (ε, δ)-DP, discrete Gaussian noise, analytic (default) or classic
  calibration.
- :func:`exponential_mechanism`: ε-DP selection among candidates (Gumbel-max, log space).
- :func:`quantile_mechanism`: ε-DP quantiles over a public grid.
- :mod:`~crowdsafe.mechanisms.sensitivity`: sensitivities derived from the query and privacy unit.
- :func:`audit`: a statistical lower bound on a mechanism's real ε.

No mechanism adds floating-point noise: all noise is integer-valued and sampled exactly, on the
integers or on a power-of-two grid (see :mod:`crowdsafe.mechanisms.discretization`). All draws
come from one :class:`~crowdsafe.randomness.Randomness` (OS-keyed ChaCha20 by default).
"""

from __future__ import annotations

from crowdsafe.mechanisms.additive import NoisyValue
from crowdsafe.mechanisms.audit import AuditResult, audit, repeat
from crowdsafe.mechanisms.exponential import (
    Choice,
    exponential_mechanism,
    exponential_mechanism_chunks,
    exponential_probabilities,
)
from crowdsafe.mechanisms.gaussian import gaussian_mechanism, gaussian_noise_sigma
from crowdsafe.mechanisms.laplace import geometric_mechanism, laplace_mechanism
from crowdsafe.mechanisms.quantile import quantile_mechanism
from crowdsafe.mechanisms.sensitivity import (
    Sensitivity,
    clamp,
    count_sensitivity,
    histogram_sensitivity,
    local_sensitivity,
    quantile_sensitivity,
    sum_sensitivity,
)

__all__ = [
    "AuditResult",
    "Choice",
    "NoisyValue",
    "Sensitivity",
    "audit",
    "clamp",
    "count_sensitivity",
    "exponential_mechanism",
    "exponential_mechanism_chunks",
    "exponential_probabilities",
    "gaussian_mechanism",
    "gaussian_noise_sigma",
    "geometric_mechanism",
    "histogram_sensitivity",
    "laplace_mechanism",
    "local_sensitivity",
    "quantile_mechanism",
    "quantile_sensitivity",
    "repeat",
    "sum_sensitivity",
]
