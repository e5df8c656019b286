"""Composition: sequential, parallel and k-fold homogeneous bounds."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.errors import ParameterError
from crowdsafe.privacy import (
    PrivacyLoss,
    compose_homogeneous,
    drv_epsilon,
    kov_epsilon,
    parallel,
    sequential,
)


@pytest.mark.parametrize(
    "eps, delta",
    [(-0.1, 0.0), (math.inf, 0.0), (math.nan, 0.0), (1.0, -1e-9), (1.0, 1.0), ("a", 0.0), (True, 0)],
)
def test_privacy_loss_rejects_bad_values(eps, delta):
    with pytest.raises(ParameterError):
        PrivacyLoss(eps, delta)


def test_privacy_loss_is_frozen_and_defaults_delta_to_zero():
    loss = PrivacyLoss(1)
    assert loss.delta == 0.0 and isinstance(loss.epsilon, float)
    with pytest.raises(AttributeError):
        loss.epsilon = 2.0  # type: ignore[misc]


def test_sequential_sums_and_accepts_generators():
    losses = (PrivacyLoss(e, d) for e, d in [(0.1, 1e-6), (0.2, 0.0), (0.3, 2e-6)])
    total = sequential(losses)
    assert total.epsilon == pytest.approx(0.6, abs=1e-15)
    assert total.delta == pytest.approx(3e-6, rel=1e-12)
    assert sequential([]) == PrivacyLoss(0.0, 0.0)


def test_sequential_refuses_vacuous_delta():
    with pytest.raises(ParameterError, match="guarantees nothing"):
        sequential([PrivacyLoss(1.0, 0.6), PrivacyLoss(1.0, 0.6)])


def test_parallel_takes_max_or_two_largest_under_change_neighbours():
    losses = [PrivacyLoss(0.1, 1e-6), PrivacyLoss(0.5, 0.0), PrivacyLoss(0.3, 2e-6)]
    assert parallel(losses) == PrivacyLoss(0.5, 2e-6)
    changed = parallel(losses, neighbours="change")
    assert changed.epsilon == pytest.approx(0.8)
    assert changed.delta == pytest.approx(3e-6)
    assert parallel([]) == PrivacyLoss(0.0)
    with pytest.raises(ParameterError):
        parallel(losses, neighbours="bounded")  # type: ignore[arg-type]


def test_drv_example_from_the_issue_is_worse_than_summation():
    result = compose_homogeneous(0.5, 0.0, 50, 1e-6)
    by_bound = {c.bound: c for c in result.candidates}
    assert by_bound["drv"].epsilon == pytest.approx(34.8, abs=0.05)
    assert by_bound["summation"].epsilon == 25.0
    assert result.bound == "kov" and result.epsilon < 25.0


def test_drv_formula_matches_hand_computation():
    eps, k, slack = 0.1, 200, 1e-8
    expected = eps * math.sqrt(2 * k * math.log(1 / slack)) + k * eps * (math.exp(eps) - 1)
    assert drv_epsilon(eps, k, slack) == pytest.approx(expected, rel=1e-14)


def test_zero_slack_skips_drv_and_certifies_with_summation():
    result = compose_homogeneous(0.2, 0.0, 10, 0.0)
    assert result.bound == "summation"
    assert result.epsilon == pytest.approx(2.0) and result.delta == 0.0
    drv = next(c for c in result.candidates if c.bound == "drv")
    assert drv.epsilon is None and "delta_slack" in drv.note


def test_kov_grid_matches_dp_accounting():
    from dp_accounting.pld.accountant import advanced_composition
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    for eps, delta, k, total in [
        (0.5, 0.0, 50, 1e-6),
        (0.1, 1e-7, 100, 1e-5 + 1e-6),
        (1.0, 0.0, 7, 1e-3),
        (0.05, 1e-9, 300, 1e-6),
        (2.0, 1e-4, 5, 0.01),
        (0.3, 0.0, 1, 0.1),
    ]:
        theirs = advanced_composition(DifferentialPrivacyParameters(eps, delta), k, total)
        ours = kov_epsilon(eps, delta, k, total, grid_only=True)
        assert ours == pytest.approx(theirs, rel=1e-12), (eps, delta, k, total)
        exact = kov_epsilon(eps, delta, k, total)
        assert exact <= ours + 1e-12
        assert exact >= ours - 2 * eps  # never below the next lower grid point


def test_kov_returns_none_when_total_delta_is_unreachable():
    assert kov_epsilon(0.5, 1e-3, 10, 1e-3) is None


def _mp_total_delta(eps: float, delta: float, k: int, eps_g: float) -> mpmath.mpf:
    """Independent high-precision evaluation of KOV's tight δ at total ε_g."""
    mpmath.mp.dps = 40
    e, g = mpmath.mpf(eps), mpmath.mpf(eps_g)
    total = mpmath.mpf(0)
    for l in range(k + 1):
        term = mpmath.e ** ((k - l) * e) - mpmath.e ** (g + l * e)
        if term > 0:
            total += mpmath.binomial(k, l) * term
    rr = total / (1 + mpmath.e**e) ** k
    return 1 - (1 - mpmath.mpf(delta)) ** k * (1 - rr)


@settings(max_examples=30, deadline=None)
@given(
    eps=st.floats(0.01, 2.0),
    k=st.integers(1, 80),
    log_delta=st.floats(-12, -3),
    log_slack=st.floats(-12, -2),
)
def test_kov_is_valid_and_nearly_tight(eps, k, log_delta, log_slack):
    delta = 10.0**log_delta / k
    slack = 10.0**log_slack
    total = k * delta + slack
    eps_g = kov_epsilon(eps, delta, k, total)
    assert eps_g is not None
    assert _mp_total_delta(eps, delta, k, eps_g) <= total * (1 + 1e-9)
    if eps_g > 1e-6:
        assert _mp_total_delta(eps, delta, k, eps_g * (1 - 1e-6) - 1e-9) > total * (1 - 1e-6)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.0, 3.0), k=st.integers(1, 500), slack=st.floats(1e-12, 1e-2))
def test_certified_bound_is_the_smallest_candidate(eps, k, slack):
    result = compose_homogeneous(eps, 0.0, k, slack)
    values = [c.epsilon for c in result.candidates if c.epsilon is not None]
    assert result.epsilon == pytest.approx(min(values), rel=1e-9)
    assert result.epsilon <= k * eps + 1e-9
    kov = next(c for c in result.candidates if c.bound == "kov")
    drv = next(c for c in result.candidates if c.bound == "drv")
    assert kov.epsilon <= drv.epsilon + 1e-9


def test_large_k_stays_finite_and_below_summation():
    result = compose_homogeneous(0.01, 0.0, 100_000, 1e-9)
    assert math.isfinite(result.epsilon)
    assert result.epsilon < 100_000 * 0.01
    assert result.bound == "kov"


@pytest.mark.parametrize("k", [0, -3, 2.5, True])
def test_bad_k_is_rejected(k):
    with pytest.raises(ParameterError, match="k must be"):
        compose_homogeneous(0.1, 0.0, k, 1e-6)


def test_a_sum_beyond_the_largest_double_is_refused_not_an_overflow():
    huge = [PrivacyLoss(1e308), PrivacyLoss(1e308)]
    with pytest.raises(ParameterError, match="sequential composition gives an epsilon beyond the largest double"):
        sequential(huge)
    with pytest.raises(ParameterError, match="parallel composition gives an epsilon beyond"):
        parallel(huge, neighbours="change")
    assert parallel(huge) == PrivacyLoss(1e308)  # disjoint parts: the maximum, no sum
    assert sequential([PrivacyLoss(1e308), PrivacyLoss(7e307)]).epsilon == pytest.approx(1.7e308, rel=1e-15)
    with pytest.raises(ParameterError, match="2-fold composition gives an epsilon beyond"):
        compose_homogeneous(1e308, 0.0, 2)


def test_drv_where_e_to_the_epsilon_overflows_certifies_nothing_and_summation_stands():
    assert drv_epsilon(800.0, 2, 1e-6) == math.inf  # k·ε·(e^ε − 1) exceeds every double
    result = compose_homogeneous(800.0, 0.0, 2, 1e-6)
    drv = next(c for c in result.candidates if c.bound == "drv")
    assert drv.epsilon is None and drv.note == "exceeds the largest double"
    assert (result.epsilon, result.delta, result.bound) == (1600.0, 0.0, "summation")


def test_the_optimal_bound_stops_at_its_cap_and_the_others_certify(monkeypatch):
    """Found by a sweep: `calc compose --times 1e15` built a k-term array (petabytes). Past
    KOV_MAX_K the optimal bound is not computed; summation and DRV certify (valid, less tight)."""
    from crowdsafe.privacy import composition

    composed = composition.compose_homogeneous(0.01, 0.0, 10**15, delta_slack=1e-6)
    kov = next(c for c in composed.candidates if c.bound == "kov")
    assert kov.epsilon is None and "up to 10,000,000" in kov.note
    assert composed.bound == "drv"
    monkeypatch.setattr(composition, "KOV_MAX_K", 10)  # the cap, not the size, decides
    small = composition.compose_homogeneous(0.1, 0.0, 11, delta_slack=1e-6)
    assert next(c for c in small.candidates if c.bound == "kov").epsilon is None
    assert next(c for c in composition.compose_homogeneous(0.1, 0.0, 10, delta_slack=1e-6).candidates
                if c.bound == "kov").epsilon is not None
