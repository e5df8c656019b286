"""(d, γ)-privacy of the α-β algorithm: conditions, posteriors (against brute-force Bayes),
equivalent ε, the planner, the utility bounds and the d-gamma certificate."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.errors import InputError, ParameterError
from crowdsafe.privacy import Certificate
from crowdsafe.privacy.dgamma import (
    AlphaBetaPlanRequest,
    bernstein_error_bound,
    check_alpha_beta,
    equivalent_epsilon,
    exclusive_correlation_beta,
    failure_of,
    max_alpha,
    min_beta,
    plan_alpha_beta,
    posterior_absent,
    posterior_present,
    theorem_error_bound,
)

# -- brute force: enumerate every instance of a tiny domain ------------------------------------


def view_likelihood(instance: frozenset, view: frozenset, domain, alpha, beta) -> Fraction:
    """Pr[V | I] when each tuple of I is kept w.p. α and each other tuple inserted w.p. β."""
    p = Fraction(1)
    for t in domain:
        if t in instance:
            p *= alpha if t in view else 1 - alpha
        else:
            p *= beta if t in view else 1 - beta
    return p


def brute_force_posteriors(priors: dict, alpha: Fraction, beta: Fraction) -> dict:
    """Pr[t ∈ I | V] for every view V and tuple t, by summing over all 2^|D| instances."""
    domain = sorted(priors)
    subsets = [frozenset(s) for r in range(len(domain) + 1) for s in itertools.combinations(domain, r)]
    out = {}
    for view in subsets:
        joint = {}
        for instance in subsets:
            prior = Fraction(1)
            for t in domain:
                prior *= priors[t] if t in instance else 1 - priors[t]
            joint[instance] = prior * view_likelihood(instance, view, domain, alpha, beta)
        evidence = sum(joint.values())
        for t in domain:
            out[view, t] = sum(p for inst, p in joint.items() if t in inst) / evidence
    return out


def test_posterior_formulas_match_brute_force_bayes_over_all_instances():
    priors = {"a": Fraction(1, 10), "b": Fraction(3, 10), "c": Fraction(1, 2), "d": Fraction(1, 50)}
    alpha, beta = Fraction(1, 2), Fraction(1, 7)
    exact = brute_force_posteriors(priors, alpha, beta)
    for (view, t), value in exact.items():
        p = float(priors[t])
        formula = (posterior_present(p, float(alpha), float(beta)) if t in view
                   else posterior_absent(p, float(alpha), float(beta)))
        assert formula == pytest.approx(float(value), rel=1e-12)


def test_planned_release_is_d_gamma_private_by_brute_force():
    d, gamma = 0.05, 0.3
    plan = plan_alpha_beta(100, 10_000, AlphaBetaPlanRequest(d=d, gamma=gamma))
    alpha, beta = Fraction(plan.alpha), Fraction(plan.beta)
    priors = {"a": Fraction(d), "b": Fraction(d) / 3, "c": Fraction(1, 100)}
    exact = brute_force_posteriors(priors, alpha, beta)
    for (_view, t), value in exact.items():
        assert value <= gamma  # no positive leakage beyond gamma
        assert value / priors[t] >= Fraction(d) / Fraction(gamma)  # no negative leakage below d/gamma


@settings(max_examples=200, deadline=None)
@given(
    d=st.floats(1e-9, 0.9),
    ratio=st.floats(1.001, 50.0),
    alpha_share=st.floats(0.01, 1.0),
    p_share=st.floats(1e-6, 1.0),
)
def test_conditions_bound_the_posterior_for_every_prior_up_to_d(d, ratio, alpha_share, p_share):
    gamma = d * ratio
    if gamma >= 1.0:
        return
    alpha = alpha_share * max_alpha(d, gamma)
    beta = min_beta(d, gamma, alpha) * (1 + 1e-12)
    check_alpha_beta(d, gamma, alpha, beta)
    p = p_share * d
    assert posterior_present(p, alpha, beta) <= gamma * (1 + 1e-9)
    assert posterior_absent(p, alpha, beta) / p >= (d / gamma) * (1 - 1e-9)


def test_conditions_are_tight():
    d, gamma = 0.01, 0.2
    alpha = max_alpha(d, gamma)
    beta = min_beta(d, gamma, alpha)
    assert posterior_present(d, alpha, beta) == pytest.approx(gamma, rel=1e-12)
    # the absent ratio falls towards (1 - alpha)/(1 - beta) as the prior shrinks: d/gamma when beta -> 0
    assert posterior_absent(1e-12, alpha, beta) / 1e-12 == pytest.approx((1 - alpha) / (1 - beta), rel=1e-9)
    assert posterior_absent(1e-12, alpha, 1e-15) / 1e-12 == pytest.approx(d / gamma, rel=1e-9)


@pytest.mark.parametrize("d, gamma, alpha, beta, fragment", [
    (0.01, 0.2, 0.96, 0.01, "1 - d/gamma"),
    (0.01, 0.2, 0.5, 0.001, "(d/gamma)((1-gamma)/(1-d)) alpha"),
    (0.01, 0.2, 0.5, 0.5, "below alpha"),
    (0.2, 0.2, 0.5, 0.3, "below gamma"),
    (0.3, 0.2, 0.5, 0.3, "below gamma"),
    (0.0, 0.2, 0.5, 0.3, "d must lie in (0, 1)"),
    (0.01, 1.0, 0.5, 0.3, "gamma must lie in (0, 1)"),
    (0.01, 0.2, 0.0, 0.3, "alpha must lie in (0, 1]"),
    (0.01, 0.2, float("nan"), 0.3, "alpha must be a number"),
    (0.01, 0.2, True, 0.3, "alpha must be a number"),
])
def test_parameters_outside_the_theorem_are_clear_errors(d, gamma, alpha, beta, fragment):
    with pytest.raises(ParameterError) as info:
        check_alpha_beta(d, gamma, alpha, beta)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_equivalent_epsilon_is_the_largest_log_likelihood_ratio_of_neighbours():
    alpha, beta = Fraction(1, 2), Fraction(1, 20)
    domain = ("a", "b", "c")
    worst = 0.0
    for r in range(len(domain)):
        for instance in itertools.combinations(domain, r):
            instance = frozenset(instance)
            for extra in set(domain) - instance:  # unbounded neighbours: one tuple added
                bigger = instance | {extra}
                for k in range(len(domain) + 1):
                    for view in itertools.combinations(domain, k):
                        view = frozenset(view)
                        ratio = (view_likelihood(instance, view, domain, alpha, beta)
                                 / view_likelihood(bigger, view, domain, alpha, beta))
                        worst = max(worst, abs(math.log(ratio)))
    assert equivalent_epsilon(0.5, 0.05) == pytest.approx(worst, rel=1e-12)
    assert equivalent_epsilon(0.5, 0.05) == pytest.approx(max(math.log(10), math.log(0.95 / 0.5)))
    assert equivalent_epsilon(0.3, 0.3) == 0.0
    assert equivalent_epsilon(0.5, 0.0) == math.inf


def test_planner_defaults_to_half_and_the_smallest_beta():
    plan = plan_alpha_beta(1000, 10**8, AlphaBetaPlanRequest(c=10, gamma=0.2))
    d = 10 * 1000 / 10**8
    assert plan.d == pytest.approx(d)
    assert plan.alpha == 0.5
    floor = (d / 0.2) * (0.8 / (1 - d)) * 0.5
    assert floor <= plan.beta <= floor * (1 + 1e-11)
    assert plan.expected_view == pytest.approx(0.5 * 1000 + plan.beta * (10**8 - 1000))
    assert plan.ratio == pytest.approx(plan.expected_view / 1000)
    assert plan.epsilon == pytest.approx(equivalent_epsilon(0.5, plan.beta))
    assert plan.posterior_present_max <= 0.2 * (1 + 1e-9)
    assert not plan.warnings and not plan.notes
    given_d = plan_alpha_beta(1000, 10**8, AlphaBetaPlanRequest(d=d, gamma=0.2))
    assert given_d.beta == pytest.approx(plan.beta) and given_d.c is None


def test_planner_lowers_alpha_when_one_half_is_not_admissible():
    plan = plan_alpha_beta(100, 10**6, AlphaBetaPlanRequest(d=0.15, gamma=0.2))
    assert plan.alpha == pytest.approx(0.25)
    assert plan.notes and "not admissible" in plan.notes[0]
    assert not plan.utility.applies and "alpha" in plan.utility.reason


def test_planner_warns_about_impractically_large_views():
    plan = plan_alpha_beta(1000, 10**12, AlphaBetaPlanRequest(c=50_000, gamma=0.2))
    assert any("impractically large" in w for w in plan.warnings)
    assert any("times the data" in w for w in plan.warnings)


def test_planner_covers_exclusive_correlations_on_request():
    plan = plan_alpha_beta(1000, 10**8, AlphaBetaPlanRequest(c=10, gamma=0.2, exclusive_correlations=True))
    assert plan.alpha == 0.5 and plan.beta >= exclusive_correlation_beta(plan.d, 0.2)
    plain = plan_alpha_beta(1000, 10**8, AlphaBetaPlanRequest(c=10, gamma=0.2))
    assert plan.beta == pytest.approx(2 * plain.beta, rel=1e-9)
    with pytest.raises(ParameterError, match="alpha = 1/2"):
        plan_alpha_beta(1000, 10**8, AlphaBetaPlanRequest(c=10, gamma=0.2, alpha=0.4, exclusive_correlations=True))


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(gamma=0.2), "exactly one of d"),
    (dict(gamma=0.2, d=0.01, c=3), "exactly one of d"),
    (dict(gamma=0.2, c=-1), "c must be a positive number"),
    (dict(gamma=0.2, c=1e9), "not below 1"),
    (dict(gamma=0.2, c=300), "must be below gamma"),
    (dict(gamma=0.2, c=10, beta=0.9), "below alpha"),
])
def test_planner_errors(kwargs, fragment):
    with pytest.raises(ParameterError) as info:
        plan_alpha_beta(1000, 10**6, AlphaBetaPlanRequest(**kwargs))
    assert fragment in str(info.value)


def test_planner_refuses_bad_sizes():
    with pytest.raises(ParameterError, match="at least one tuple"):
        plan_alpha_beta(0, 10, AlphaBetaPlanRequest(c=1, gamma=0.5))
    with pytest.raises(ParameterError, match=">= n"):
        plan_alpha_beta(10, 5, AlphaBetaPlanRequest(c=1, gamma=0.5))


def test_theorem_bound_formula_and_conditions():
    n, m, alpha, beta = 20_000, 6 * 10**8, 0.5, 6e-4
    bound = theorem_error_bound(alpha, beta, n, m, 0.05)
    r = 4 * beta * m / n
    assert bound.applies and bound.r == pytest.approx(r)
    assert bound.rho == pytest.approx(2 * math.sqrt(3 * r * math.log(2 / 0.05)))
    assert bound.error == pytest.approx(bound.rho * math.sqrt(n))
    # r is raised to what the Chernoff step needs when 4 beta m / n is small
    small = theorem_error_bound(0.5, 1e-9, n, m, 0.05)
    assert small.r == pytest.approx(0.5 / (4 * (0.5 - 1e-9) ** 2 - 0.25))
    assert not theorem_error_bound(0.4, 0.01, n, m).applies
    assert "1/4" in theorem_error_bound(0.5, 0.3, n, m).reason
    assert not theorem_error_bound(0.5, 1e-6, 3, 10**6, 0.05).applies  # too little data


def test_bernstein_bound_grows_with_the_domain_part_and_confidence():
    small = bernstein_error_bound(0.5, 0.01, 1000, 100.0, 0.05)
    large = bernstein_error_bound(0.5, 0.01, 1000, 10**6, 0.05)
    assert 0 < small < large
    assert bernstein_error_bound(0.5, 0.01, 1000, 10**6, 0.01) > large
    with pytest.raises(ParameterError):
        bernstein_error_bound(0.2, 0.3, 10, 10)


def test_failure_of_confidence():
    assert failure_of(0.95) == 0.05
    for bad in (0, 1, 1.5, True, "x"):
        with pytest.raises(ParameterError):
            failure_of(bad)


def certificate(**parameters) -> Certificate:
    return Certificate(
        guarantee="d-gamma", epsilon=2.0, delta=0.0, theorem="alpha-beta", mechanisms=(),
        parameters=parameters, assumptions=("tuple-independent",), randomness={"seeded": False,
                                                                               "fit_for_release": True},
    )


def test_d_gamma_certificate_round_trips_and_validates():
    cert = certificate(d=0.001, gamma=0.2, alpha=0.5, beta=0.01)
    again = Certificate.from_json(cert.to_json())
    assert again == cert and again.guarantee == "d-gamma"
    assert "(0.001, 0.2)-private" in cert.summary() and "epsilon = 2" in cert.summary()
    for bad in (dict(gamma=0.2), dict(d=0.3, gamma=0.2), dict(d=0.1, gamma=1.0)):
        with pytest.raises(ParameterError, match="d, gamma"):
            certificate(**bad)
    with pytest.raises(InputError):
        Certificate.from_json("{}")
