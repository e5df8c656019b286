"""Output-perturbation mechanisms, sensitivity, the empirical privacy audit, and DP queries.

- :func:`laplace_mechanism` / :func:`geometric_mechanism`: ε-DP, discrete Laplace noise.
- :func:`gaussian_mechanism`: (ε, δ)-DP, discrete Gaussian noise, analytic (default) or classic
  calibration.
- :func:`exponential_mechanism`: ε-DP selection among candidates (exact sampling, no floating point).
- :func:`quantile_mechanism`: ε-DP quantiles over a public grid.
- :mod:`~crowdsafe.mechanisms.sensitivity`: sensitivities derived from the query and privacy unit.
- :func:`audit`: a statistical lower bound on a mechanism's real ε.

No mechanism adds floating-point noise: all noise is integer-valued and sampled exactly, on the
integers or on a power-of-two grid (see :mod:`crowdsafe.mechanisms.discretization`). All draws
come from one :class:`~crowdsafe.randomness.Randomness` (OS-keyed ChaCha20 by default).
"""

from __future__ import annotations

import importlib
from typing import Any

# Names are loaded on first use, so importing one submodule (say the query language) does not
# pull in SciPy and every mechanism: it keeps the command line's start-up short.
_EXPORTS = {
    "NoisyValue": "additive",
    "AuditRequest": "audit",
    "AuditResult": "audit",
    "audit": "audit",
    "repeat": "audit",
    "run_audit": "audit",
    "Choice": "exponential",
    "exponential_mechanism": "exponential",
    "exponential_mechanism_chunks": "exponential",
    "exponential_probabilities": "exponential",
    "gaussian_mechanism": "gaussian",
    "gaussian_noise_sigma": "gaussian",
    "geometric_mechanism": "laplace",
    "laplace_mechanism": "laplace",
    "quantile_mechanism": "quantile",
    "Sensitivity": "sensitivity",
    "clamp": "sensitivity",
    "count_sensitivity": "sensitivity",
    "histogram_sensitivity": "sensitivity",
    "local_sensitivity": "sensitivity",
    "quantile_sensitivity": "sensitivity",
    "sum_sensitivity": "sensitivity",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'crowdsafe.mechanisms' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"crowdsafe.mechanisms.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AuditRequest",
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
    "run_audit",
    "sum_sensitivity",
]
