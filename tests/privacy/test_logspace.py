"""ln Γ in the calculus: Python's ``math.lgamma`` for a few values, SciPy's ``gammaln`` for many
(the δ search at small ε: 300 million values on Adult at ε = 1e-5). The two paths are twins."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crowdsafe.privacy import logspace
from crowdsafe.privacy.logspace import SCIPY_FROM, log_gamma


def test_both_paths_give_ln_gamma_alike():
    x = np.concatenate([np.geomspace(1e-6, 1e9, SCIPY_FROM * 2), np.arange(1.0, 2.0 * SCIPY_FROM + 1.0)])
    many = log_gamma(x)  # SciPy
    few = np.concatenate([log_gamma(part) for part in np.array_split(x, len(x) // 16)])  # Python
    reference = np.array([math.lgamma(v) for v in x])
    assert np.array_equal(few, reference)
    np.testing.assert_allclose(many, reference, rtol=1e-15, atol=1e-14)  # (absolute near its zeros, x = 1, 2)
    assert log_gamma(x.reshape(2, -1)).shape == (2, len(x) // 2)


def test_the_plan_at_small_epsilon_is_the_same_on_either_path(monkeypatch):
    from crowdsafe.anonymize.plan import PlanRequest, best_rate, plan_publication

    found = []
    for threshold in (SCIPY_FROM, 10**12):
        monkeypatch.setattr(logspace, "SCIPY_FROM", threshold)
        best_rate.cache_clear()
        plan = plan_publication(PlanRequest(1e-4, 1e-6))
        found.append((plan.k, plan.beta, plan.epsilon1))
    best_rate.cache_clear()
    assert found[0] == found[1]


@pytest.mark.parametrize("size", [1, SCIPY_FROM - 1])
def test_few_values_stay_off_scipy(size, monkeypatch):
    """The command line at ε = 1 calls it on a few dozen values: SciPy (half a second to import)
    is not touched."""
    import builtins

    real = builtins.__import__

    def guarded(name, *args, **kwargs):
        assert not name.startswith("scipy"), name
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)
    assert log_gamma(np.arange(1.0, size + 1.0)).shape == (size,)
