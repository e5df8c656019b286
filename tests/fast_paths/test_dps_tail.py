"""The δ calculus's scalar tail (privacy/dps._log_tail_one) against its NumPy twin (_log_tails).

Every search for d(k, β, ε) starts with the tail at n_m; it is summed in plain floats, the rest of
the search in NumPy. The two must agree to a few units in the last place (d carries a 1e-9 margin),
including where γn is within a hair of an integer (the exact side decides the first term) and
where the kept terms run past n.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.privacy import dps


def _both(n: int, beta: float, epsilon: float, epsilon1: float = 0.0) -> tuple[float, float]:
    eps_anon = max(epsilon - epsilon1, -math.log1p(-beta))
    gamma = -math.expm1(math.log1p(-beta) - eps_anon)
    exact = dps._ExactGamma(beta, epsilon, epsilon1)
    one = dps._log_tail_one(n, gamma, beta, eps_anon, exact)
    many = float(dps._log_tails(np.array([float(n)]), gamma, beta, eps_anon, exact)[0])
    return one, many


def _agree(one: float, many: float) -> bool:
    if math.isinf(one) or math.isinf(many):
        return one == many
    return abs(one - many) <= 4 * math.ulp(max(1.0, abs(many)))


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=400, deadline=None)
@given(n=st.integers(1, 200_000), beta=st.floats(1e-4, 0.95), epsilon=st.floats(0.01, 6.0))
def test_the_scalar_tail_is_the_vector_tail(n, beta, epsilon):
    epsilon = max(epsilon, -math.log1p(-beta) * (1 + 1e-9))
    assert _agree(*_both(n, beta, epsilon))


def test_near_ties_small_n_and_the_floor():
    cases = [(n, beta, epsilon) for n in (1, 2, 3, 7, 55, 1000) for beta in (0.05, 0.3, 0.5, 0.9)
             for epsilon in (-math.log1p(-beta), 0.5, 1.0, 3.0) if epsilon >= -math.log1p(-beta)]
    # at the sampling floor γ = 1 − (1 − β)² is rational: γn lands on integers, decided exactly
    cases += [(4, 0.5, -math.log1p(-0.5)), (100, 0.5, -math.log1p(-0.5)), (16, 0.75, -math.log1p(-0.75))]
    checked = 0
    for n, beta, epsilon in cases:
        one, many = _both(n, beta, epsilon)
        assert _agree(one, many), (n, beta, epsilon, one, many)
        checked += 1
    assert checked == len(cases)


def test_a_wrong_scalar_tail_is_caught(monkeypatch):
    real = dps._log_tail_one
    monkeypatch.setattr(dps, "_log_tail_one", lambda *a: real(*a) + 1e-12)
    assert not _agree(*_both(55, 0.2994, 1.0, 0.4157))
