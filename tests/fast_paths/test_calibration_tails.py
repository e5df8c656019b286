"""mechanisms/calibration._log_sum_from: the Gaussian tail summed term by term (σ² below
_DIRECT_SUM_LIMIT) or by Euler–Maclaurin. Both return an enclosure S ± E of the same sum; at
and around the switch (the limit moved to each σ² tested) the two enclosures overlap and the
estimates agree to 1e-12 relative."""

from __future__ import annotations

import math

import pytest

from crowdsafe.mechanisms import calibration


def enclosure(log_s: float, log_e: float) -> tuple[float, float]:
    return math.exp(log_s) - math.exp(log_e), math.exp(log_s) + math.exp(log_e)


@pytest.mark.parametrize("sigma2", [2.0e4, 3.7e5, 2.0**22])
@pytest.mark.parametrize("x0", [0, 1, 150, 900])
def test_terms_and_euler_maclaurin_enclose_the_same_sum(sigma2, x0):
    terms = calibration._log_sum_by_terms(x0, sigma2)
    formula = calibration._log_sum_by_euler_maclaurin(x0, sigma2)
    assert abs(terms[0] - formula[0]) < 1e-12 * max(1.0, abs(terms[0]))
    low, high = enclosure(*terms)
    other_low, other_high = enclosure(*formula)
    assert max(low, other_low) <= min(high, other_high)


@pytest.mark.parametrize("shift", [-1.0, 0.0, 1.0])
def test_log_sum_from_switches_at_the_limit(monkeypatch, shift):
    sigma2 = 5.0e4
    monkeypatch.setattr(calibration, "_DIRECT_SUM_LIMIT", sigma2 + shift)
    value, error = calibration._log_sum_from(300, sigma2)
    by_terms = calibration._log_sum_by_terms(300, sigma2)
    by_formula = calibration._log_sum_by_euler_maclaurin(300, sigma2)
    assert (value, error) == (by_terms if sigma2 < sigma2 + shift else by_formula)
    assert abs(value - by_terms[0]) < 1e-12 * abs(value) + 1e-12
