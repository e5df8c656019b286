"""d(k, β, ε): exactness against independent evaluations, conservativeness, properties, errors."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from crowdsafe.errors import ParameterError
from crowdsafe.privacy import delta_bound, dps_delta, sampling_floor


def mp_d(k: int, beta: float, epsilon: float) -> mpmath.mpf:
    """d(k, β, ε) at 50 digits: regularized incomplete beta tails, searched past a Chernoff stop."""
    mpmath.mp.dps = 30
    b, e = mpmath.mpf(beta), mpmath.mpf(epsilon)
    gamma = (mpmath.e**e - 1 + b) / mpmath.e**e
    n_min = int(mpmath.ceil(k / gamma - 1))
    kl = gamma * mpmath.log(gamma / b) + (1 - gamma) * mpmath.log((1 - gamma) / (1 - b))
    best, n = mpmath.mpf(0), max(n_min, 1)
    while True:
        m = int(mpmath.floor(gamma * n)) + 1  # smallest j > γn
        tail = mpmath.betainc(m, n - m + 1, 0, b, regularized=True) if m <= n else mpmath.mpf(0)
        best = max(best, tail)
        n += 1
        if best > 0 and mpmath.exp(-n * kl) < best:
            return best


def exact_d(k: int, beta: Fraction, e_eps: Fraction, count_ties: bool) -> Fraction:
    """d with exact rational arithmetic when e^ε is rational; ties j = γn counted if asked."""
    gamma = (e_eps - 1 + beta) / e_eps
    n_min = math.ceil(k / gamma - 1)
    kl = float(gamma) * math.log(float(gamma / beta)) + float(1 - gamma) * math.log(
        float((1 - gamma) / (1 - beta))
    )
    best, n = Fraction(0), max(n_min, 1)
    while True:
        g = gamma * n
        first = math.floor(g) + (0 if (count_ties and g.denominator == 1) else 1)
        tail = sum(
            (math.comb(n, j) * beta**j * (1 - beta) ** (n - j) for j in range(first, n + 1)),
            Fraction(0),
        )
        best = max(best, tail)
        n += 1
        if best > 0 and math.exp(-n * kl) < float(best):
            return best


@pytest.mark.parametrize(
    "k, beta, e_eps",
    [
        (20, Fraction(1, 10), Fraction(27, 10)),
        (5, Fraction(1, 20), Fraction(3, 2)),
        (10, Fraction(3, 10), Fraction(7, 3)),
        (1, Fraction(1, 4), Fraction(13, 8)),
        (3, Fraction(1, 40), Fraction(11, 10)),
    ],
)
def test_matches_exact_rational_arithmetic(k, beta, e_eps):
    ours = dps_delta(k, float(beta), math.log(e_eps))
    exact = exact_d(k, beta, e_eps, count_ties=False)
    with_ties = exact_d(k, beta, e_eps, count_ties=True)
    # A tie γn ∈ ℤ inside the window is counted (conservative); otherwise the two agree.
    assert float(exact) <= ours <= float(with_ties) * (1 + 1e-6)
    if exact == with_ties:
        assert ours == pytest.approx(float(exact), rel=1e-6)


# β = 1/2 at the floor ε = ln 2: γ = 1 − (1 − β)² = 3/4, so γn is an integer at n = 4, 8, ... The
# double nearest ln 2 lies *below* it (0.6931471805599452862... < 0.6931471805599453094...), the
# next double above it. The floor is decided at the exact values of the doubles: the one below is
# refused (Theorem 5 needs ε ≥ −ln(1 − β); until 2026-11-30 it was admitted within 1e-12 and d
# taken as the limit from the left), the one above is the least ε admitted, where d is evaluated
# with the theorem's strict j > γn.
LN2_BELOW = math.log(2.0)
LN2_ABOVE = math.nextafter(LN2_BELOW, math.inf)


def test_the_doubles_around_ln2_straddle_it_and_the_floor_is_the_one_above():
    mpmath.mp.dps = 40
    assert mpmath.mpf(LN2_BELOW) < mpmath.log(2) < mpmath.mpf(LN2_ABOVE)
    assert sampling_floor(0.5) == LN2_ABOVE


def test_the_double_just_below_the_floor_is_refused():
    with pytest.raises(ParameterError, match="below the sampling floor"):
        dps_delta(2, 0.5, LN2_BELOW)
    with pytest.raises(ParameterError, match="below the sampling floor"):
        delta_bound(3, 0.5, LN2_BELOW)


def test_tie_just_above_the_floor_is_not_counted():
    # The strict j > γn of Theorem 5: at γn ∈ ℤ the boundary term is out. Until the exact
    # decision, any γn within 1e-9 of an integer was counted, giving the left limit here.
    ours = dps_delta(2, 0.5, LN2_ABOVE)
    exact = exact_d(2, Fraction(1, 2), Fraction(2), count_ties=False)
    left_limit = exact_d(2, Fraction(1, 2), Fraction(2), count_ties=True)
    assert ours == pytest.approx(float(exact), rel=1e-6)
    assert ours >= float(exact)
    assert ours < float(left_limit)
    assert ours == pytest.approx(float(mp_d(2, 0.5, LN2_ABOVE)), rel=1e-6)  # independent: mpmath


def test_n_min_is_exact_at_a_tie_of_k_over_gamma():
    # k = 3, γ = 3/4: k/γ − 1 = 3 exactly at the floor. Just above the floor n_m = 3 (just below,
    # refused now, it would be 4). The tails, by hand (β = 1/2): T(3) = P[Bin(3) ≥ 3] = 1/8;
    # T(4) = P[Bin(4) ≥ 4] = 1/16 (strict); T(5) = P[Bin(5) ≥ 4] = 6/32; later n are smaller
    # (checked by exact_d below).
    above = delta_bound(3, 0.5, LN2_ABOVE)
    assert above.n_min == 3
    assert above.delta == pytest.approx(6 / 32, rel=1e-6) and above.n_at_max == 5
    assert above.delta == pytest.approx(float(exact_d(3, Fraction(1, 2), Fraction(2), count_ties=False)), rel=1e-6)
    assert above.delta == pytest.approx(float(mp_d(3, 0.5, LN2_ABOVE)), rel=1e-6)


@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75, 0.125, 0.375])
@pytest.mark.parametrize("k", [2, 3, 5, 8, 13])
def test_at_dyadic_floors_matches_mpmath_on_both_sides(k, beta):
    # Dyadic β make γ = 1 − (1 − β)² a fraction with a small denominator, so near-ties γn ∈ ℤ
    # are everywhere in the search: each is decided exactly, as mpmath at 30 digits decides it.
    floor = sampling_floor(beta)
    for epsilon in (floor, math.nextafter(floor, math.inf)):
        ours = dps_delta(k, beta, epsilon)
        reference = mp_d(k, beta, epsilon)
        assert ours >= reference * (1 - mpmath.mpf("1e-12"))
        assert abs(ours / reference - 1) < 1e-6


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(1, 40),
    beta=st.floats(0.01, 0.7),
    above=st.floats(0.0, 2.5),
)
def test_exact_to_six_digits_and_never_below_mpmath(k, beta, above):
    epsilon = sampling_floor(beta) + above
    assume(above == 0.0 or above > 1e-6)
    ours = dps_delta(k, beta, epsilon)
    reference = mp_d(k, beta, epsilon)
    assume(reference > mpmath.mpf("1e-300"))
    # mp_d evaluates the formula at the exact values of the doubles, as dps_delta does, ties
    # included (at the floor too): never below it, and within the rounding margin (< 1e-6).
    assert ours >= reference * (1 - mpmath.mpf("1e-12"))
    assert abs(ours / reference - 1) < 1e-6


def test_values_far_below_1e_25_keep_precision():
    ours = delta_bound(60, 0.05, 2.0)
    reference = mp_d(60, 0.05, 2.0)
    assert ours.delta < 1e-25
    assert ours.delta == pytest.approx(float(reference), rel=1e-6)
    assert ours.delta >= float(reference)


def test_maximum_is_not_always_at_n_min():
    # The binomial tail jumps with ⌊γn⌋, so a later n can beat n_m.
    bound = delta_bound(20, 0.5, 2.4676493493599874)
    assert bound.n_at_max > bound.n_min
    assert bound.delta == pytest.approx(float(mp_d(20, 0.5, 2.4676493493599874)), rel=1e-6)


def test_search_reaches_the_chernoff_stop():
    bound = delta_bound(20, 0.1, 0.5)
    gamma, beta = bound.gamma, 0.1
    kl = gamma * math.log(gamma / beta) + (1 - gamma) * math.log((1 - gamma) / (1 - beta))
    assert math.exp(-(bound.n_searched_to + 1) * kl) <= bound.delta


# The true δ falls as k or ε grows. The returned bound adds a safety margin for rounding that
# grows with the n at the maximum (relative < 1e-6, see privacy/dps.py), so two neighbouring
# bounds may be out of order by that much: d(3, 1/3, 0.9055) exceeds d(2, ...) by 6e-14 relative.
MARGIN = 1e-6


def test_known_case_where_only_the_margin_breaks_the_order():
    epsilon = 0.9055
    assert dps_delta(3, 1 / 3, epsilon) <= dps_delta(2, 1 / 3, epsilon) * (1 + MARGIN)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 80), beta=st.floats(0.005, 0.8), above=st.floats(0.0, 3.0))
def test_delta_falls_as_k_grows(k, beta, above):
    epsilon = sampling_floor(beta) + above
    assert dps_delta(k + 1, beta, epsilon) <= dps_delta(k, beta, epsilon) * (1 + MARGIN)


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(1, 80),
    beta=st.floats(0.005, 0.8),
    above=st.floats(0.0, 3.0),
    more=st.floats(0.0, 1.0),
)
def test_delta_falls_as_epsilon_grows(k, beta, above, more):
    epsilon = sampling_floor(beta) + above
    assert dps_delta(k, beta, epsilon + more) <= dps_delta(k, beta, epsilon) * (1 + MARGIN)


@pytest.mark.parametrize("k", [5, 10, 20, 30, 50])
def test_delta_falls_as_beta_falls_on_the_reproduction_grid(k):
    # The curves of the reproductions are ordered: β ∈ {0.05, ..., 0.4}, ε from 1 to 3.
    for epsilon in [1.0, 1.5, 2.0, 2.5, 3.0]:
        values = [dps_delta(k, beta, epsilon) for beta in (0.05, 0.1, 0.2, 0.3, 0.4)]
        assert values == sorted(values)


def test_beta_sawtooth_is_a_property_of_the_formula():
    # d is not monotone in β at fine scale: at k = 1, ε = 0.5, n_m drops from 2 to 1 as γ
    # crosses 1/2 and the maximum falls from 1 − (1 − β)^2 to β. The reference agrees.
    below, above = 0.1751, 0.1761
    assert dps_delta(1, below, 0.5) > dps_delta(1, above, 0.5)
    assert float(mp_d(1, below, 0.5)) == pytest.approx(1 - (1 - below) ** 2, rel=1e-9)
    assert float(mp_d(1, above, 0.5)) == pytest.approx(above, rel=1e-9)


def test_epsilon_at_the_floor_is_admitted_and_one_double_below_is_refused():
    beta = 0.2
    floor = sampling_floor(beta)  # the least double at or above −ln(1 − β)
    mpmath.mp.dps = 50
    assert mpmath.mpf(floor) >= -mpmath.log1p(-mpmath.mpf(beta)) > mpmath.mpf(math.nextafter(floor, 0.0))
    bound = delta_bound(20, beta, floor)
    assert 0.0 < bound.delta < 1.0
    with pytest.raises(ParameterError, match="below the sampling floor"):
        delta_bound(20, beta, math.nextafter(floor, 0.0))


def test_tiny_beta_and_k_one():
    assert dps_delta(5, 1e-6, 1.0) == pytest.approx(float(mp_d(5, 1e-6, 1.0)), rel=1e-6)
    assert dps_delta(1, 0.3, 1.0) == pytest.approx(float(mp_d(1, 0.3, 1.0)), rel=1e-6)


def test_huge_k_underflows_to_the_smallest_double_not_zero():
    bound = delta_bound(100_000, 0.1, 1.0)
    assert bound.delta == math.ulp(0.0)
    assert bound.log_delta < -100_000
    assert math.isfinite(bound.log_delta)


def test_epsilon_safe_variant_shifts_epsilon():
    assert dps_delta(20, 0.1, 1.2, epsilon1=0.2) == dps_delta(20, 0.1, 1.0)


@pytest.mark.parametrize(
    "k, beta, epsilon, epsilon1, message",
    [
        (0, 0.1, 1.0, 0.0, "k must be"),
        (2.5, 0.1, 1.0, 0.0, "k must be"),
        (20, 0.0, 1.0, 0.0, "sampling rate"),
        (20, 1.0, 1.0, 0.0, "sampling rate"),
        (20, 1.5, 1.0, 0.0, "sampling rate"),
        (20, 0.1, -1.0, 0.0, "epsilon must be"),
        (20, 0.5, 0.5, 0.0, "below the sampling floor"),
        (20, 0.1, 0.2, 0.15, "below the sampling floor"),
        (20, 0.1, 1.0, -0.1, "epsilon1 must be"),
    ],
)
def test_bad_parameters_are_clear_errors(k, beta, epsilon, epsilon1, message):
    with pytest.raises(ParameterError, match=message):
        dps_delta(k, beta, epsilon, epsilon1)


def test_floor_error_names_the_fix():
    with pytest.raises(ParameterError, match=r"lower beta to at most .*0\.393"):
        dps_delta(20, 0.5, 0.5)


@pytest.mark.parametrize("k, beta", [(5, 0.5), (2, 0.025), (1, 0.3)])
def test_large_epsilon_tends_to_beta_to_the_k(k, beta):
    # γ → 1 so n_m → k and the tail at n = k → β^k; n_m stays ≥ k even where γ rounds to 1.
    assert dps_delta(k, beta, 60.0) == pytest.approx(beta**k, rel=1e-6)
    assert dps_delta(k, beta, 60.0) >= beta**k
    assert delta_bound(k, beta, 60.0).n_min == k


def test_the_18_cell_table_matches_mpmath():
    for beta in (0.05, 0.1, 0.2):
        for epsilon in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0):
            reference = mp_d(20, beta, epsilon)
            ours = dps_delta(20, beta, epsilon)
            assert ours >= reference
            assert ours == pytest.approx(float(reference), rel=1e-6)


@pytest.mark.parametrize("epsilon", [3e6, 1e7, 1e308])
def test_an_epsilon_beyond_the_decimal_range_still_decides_the_tie_at_n_equal_k(epsilon):
    # c = (1 − β)e^−ε underflows to 0 in decimal arithmetic beyond ε ≈ 2.3e6, where γ rounds to 1 and
    # γk − k = −ck is a tie to decide: it is < 0 with no arithmetic (c > 0), so d = β^k at once
    bound = delta_bound(20, 0.1, epsilon)
    assert bound.n_min == bound.n_at_max == bound.n_searched_to == 20
    assert bound.delta == pytest.approx(1e-20, rel=1e-6) and bound.delta >= 0.1**20


@pytest.mark.parametrize(("beta", "epsilon"), [(1e-300, 2e-300), (1e-323, 2e-323)])
def test_an_n_min_beyond_the_search_is_refused_at_once(beta, epsilon):
    # n_m ≈ k/γ is beyond the search's 1e9 (once beyond any double): refused, not searched from n_m
    with pytest.raises(ParameterError, match="k = 20 is too large to evaluate d"):
        dps_delta(20, beta, epsilon)
