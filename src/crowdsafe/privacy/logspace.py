"""Small log-space helpers shared by the calculus (cheaper than SciPy's general versions)."""

from __future__ import annotations

import numpy as np


def logsumexp_rows(values: np.ndarray) -> np.ndarray:
    """log Σ exp over each row of a 2-D array, shifted by the row maximum (−inf for all −inf)."""
    top = values.max(axis=1)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return shift + np.log(np.exp(values - shift[:, None]).sum(axis=1))


def logsumexp(values: np.ndarray) -> float:
    """log Σ exp of a 1-D array."""
    return float(logsumexp_rows(values[None, :])[0])
