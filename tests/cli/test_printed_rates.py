"""A rate the planner prints, typed back as input, is taken (an auditor's sweep, 2026-11-30).

Until then the sampling rates the planner and its refusals print were rounded to nearest, so
half of them were printed above the bound they state, and a user who typed the printed value
back was refused: ``publish --plan-only`` at epsilon = 0.5 printed beta = 0.2453 for the
largest rate k = 35 covers (0.245299...), and ``--beta 0.2453 --k 35`` was refused ("give delta =
1e-06 > 1e-06"); "lower beta to at most ..." and the α-β floor "use beta >= ..." had the same
flaw. An upper bound on beta is now rounded down and a lower bound up
(``crowdsafe.number_text.rounded_down`` / ``rounded_up``).
"""

from __future__ import annotations

import json
import math
import re

import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api
from crowdsafe.anonymize.rate import check_beta_leaves_epsilon1
from crowdsafe.errors import ParameterError
from crowdsafe.privacy.dgamma import check_alpha_beta, max_alpha, min_beta

NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)"
EPSILONS = (0.1, 0.2, 0.3, 0.5, 1.0)
DATA = pl.DataFrame({"a": list(range(40)) * 3, "b": ["x", "y", "z"] * 40})
DOMAINS = {"a": list(range(2000)), "b": ["x", "y", "z", "w"]}


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_planned_beta_typed_back_with_its_k_is_taken(capsys, epsilon):
    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", str(epsilon), "--plan-only")
    assert code == 0, err
    beta = re.search(rf"sampling +beta = {NUMBER} ", out).group(1)
    k = re.search(r"\n  k +([0-9]+) ", out).group(1)
    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", str(epsilon), "--beta", beta, "--k", k,
                                 "--plan-only")
    assert code == 0, err


def _refusal(**options) -> str:
    with pytest.raises(ParameterError) as refused:
        api.plan_publish(**options)
    return str(refused.value)


@pytest.mark.parametrize("epsilon", [0.05 * i for i in range(2, 41)])
def test_lower_beta_to_at_most_the_printed_rate_is_taken(epsilon):
    # above 1 - e^-(epsilon - epsilon1): the sampling floor
    epsilon1 = 0.1 * epsilon
    said = _refusal(epsilon=epsilon, epsilon1=epsilon1, beta=-math.expm1(-epsilon) + 1e-3)
    at_most = float(re.search(rf"lower beta to at most 1 - e\^-\(epsilon - epsilon1\) = {NUMBER}", said).group(1))
    api.plan_publish(epsilon=epsilon, epsilon1=epsilon1, beta=at_most)
    # between 1 - e^-(0.99 epsilon) and 1 - e^-epsilon: no room for the least epsilon1 the planner gives
    said = _refusal(epsilon=epsilon, beta=-math.expm1(-0.995 * epsilon))
    at_most = float(re.search(rf"lower beta to at most 1 - e\^-\(epsilon - [^)]*\) = {NUMBER}", said).group(1))
    check_beta_leaves_epsilon1(epsilon, at_most)


@pytest.mark.parametrize(("d", "gamma"), [(1e-4, 0.1), (3e-3, 0.2), (0.01, 0.3), (0.07, 0.45), (2.5e-5, 0.05)])
def test_the_alpha_beta_bounds_typed_back_are_taken(d, gamma):
    for alpha in (0.2, 0.37, max_alpha(d, gamma) * 0.999):
        floor = min_beta(d, gamma, alpha)
        with pytest.raises(ParameterError) as refused:
            check_alpha_beta(d, gamma, alpha, floor * 0.9)
        least = float(re.search(rf"use beta >= {NUMBER}", str(refused.value)).group(1))
        check_alpha_beta(d, gamma, alpha, least)
    with pytest.raises(ParameterError) as refused:
        check_alpha_beta(d, gamma, 1.0, 1e-9)
    most = float(re.search(rf"use alpha <= {NUMBER}", str(refused.value)).group(1))
    check_alpha_beta(d, gamma, most, min(min_beta(d, gamma, most) * 1.01, most / 2))


@pytest.mark.parametrize(("epsilon", "target"), [(1.0, 0.3), (2.0, 0.5), (3.0, 0.25), (0.7, 0.1), (5.0, 1.2)])
def test_the_largest_sampling_rate_typed_back_meets_the_target(capsys, epsilon, target):
    code, out, err = run_command(capsys, "calc", "amplify", "--epsilon", str(epsilon), "--target-epsilon", str(target))
    assert code == 0, err
    rate = float(re.search(rf"largest sampling rate: {NUMBER} ", out).group(1))
    assert math.log1p(rate * math.expm1(epsilon)) <= target  # ln(1 + beta(e^eps - 1)), the amplified epsilon


@pytest.mark.parametrize(("c", "gamma", "alpha"),
                         [(0.5, 0.1, 0.5), (1.0, 0.3, 0.5), (2.0, 0.4, 0.3), (3.0, 0.4, 0.5), (2.0, 0.3, 0.5)])
def test_the_planned_insert_rate_typed_back_is_taken(c, gamma, alpha):
    from crowdsafe.cli.perturb import _plan_rows

    plan = api.plan_perturbation(DATA, domains=DOMAINS, max_rows=500, c=c, gamma=gamma, alpha=alpha)
    beta = float(dict(_plan_rows(plan))["beta (insert)"])
    again = api.plan_perturbation(DATA, domains=DOMAINS, max_rows=500, c=c, gamma=gamma, alpha=alpha, beta=beta)
    assert again.beta == beta


@pytest.mark.parametrize(("c", "gamma"), [(4.0, 0.3), (3.0, 0.25), (4.0, 0.37), (5.0, 0.41), (5.0, 0.45)])
def test_the_planned_keep_rate_typed_back_is_taken(c, gamma):
    """Where alpha = 1/2 is not admissible the plan keeps alpha = 1 - d/gamma, the largest: its
    printed value (and the plan's note) is rounded down, so typed back as alpha it is taken."""
    from crowdsafe.cli.perturb import _plan_rows

    plan = api.plan_perturbation(DATA, domains=DOMAINS, max_rows=500, c=c, gamma=gamma)
    assert plan.alpha < 0.5 and any("using alpha" in note for note in plan.notes)
    noted = float(re.search(rf"using alpha = {NUMBER}", " ".join(plan.notes)).group(1))
    for alpha in (float(dict(_plan_rows(plan))["alpha (keep)"]), noted):
        again = api.plan_perturbation(DATA, domains=DOMAINS, max_rows=500, c=c, gamma=gamma, alpha=alpha)
        assert again.alpha == alpha


@pytest.mark.parametrize(("c", "gamma"), [(0.5, 0.1), (1.0, 0.3), (2.0, 0.4), (3.0, 0.4), (2.0, 0.3), (1.0, 0.2)])
def test_the_correlation_robust_floor_typed_back_is_taken(c, gamma):
    from crowdsafe.privacy.dgamma import exclusive_correlation_beta

    plan = api.plan_perturbation(DATA, domains=DOMAINS, max_rows=500, c=c, gamma=gamma, exclusive_correlations=True)
    options = dict(domains=DOMAINS, max_rows=500, c=c, gamma=gamma, exclusive_correlations=True)
    with pytest.raises(ParameterError) as refused:
        api.plan_perturbation(DATA, beta=exclusive_correlation_beta(plan.d, gamma) * 0.99, **options)
    least = float(re.search(rf"\(d/gamma\)\(1-gamma\)/\(1-d\) = {NUMBER}", str(refused.value)).group(1))
    assert api.plan_perturbation(DATA, beta=least, **options).beta == least


def test_a_smaller_c_than_the_printed_bound_is_below_it():
    with pytest.raises(ParameterError) as refused:
        api.plan_perturbation(DATA, domains={"a": [1, 2, 3, 4]}, attributes=["a"], max_rows=3, c=7.0, gamma=0.3)
    bound = float(re.search(rf"c < m/n = {NUMBER}", str(refused.value)).group(1))
    assert bound <= 5 / 3  # m = 5 (null kept), n = 3: 1.66667 to nearest, above it


@pytest.mark.parametrize(("beta", "target", "target_delta"),
                         [(0.1, 0.5, 0.0), (0.1, 0.3, 1e-6), (0.37, 1.0, 0.0), (0.03, 0.25, 0.0), (0.5, 0.7, 3e-7)])
def test_the_largest_inner_loss_typed_back_meets_the_target(capsys, beta, target, target_delta):
    """calc amplify --beta --target-epsilon states the largest inner loss an algorithm may have: an
    upper bound, rounded down (it was printed as a loss, rounded up: (2.0132, 0)-DP for 2.0131965...,
    which amplifies to 0.5000015 > 0.5)."""
    code, out, err = run_command(capsys, "calc", "amplify", "--beta", str(beta), "--target-epsilon", str(target),
                                 "--target-delta", str(target_delta))
    assert code == 0, err
    said = re.search(rf"an algorithm up to \({NUMBER}, {NUMBER}\)-DP", out)
    epsilon, delta = float(said.group(1)), float(said.group(2))
    assert math.log1p(beta * math.expm1(epsilon)) <= target  # ln(1 + beta(e^eps - 1)), the amplified epsilon
    assert beta * delta <= target_delta


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_plan_views_beta_typed_back_with_its_k_is_taken(epsilon):
    """The plan's notebook and app view (PublishPlan._repr_html_: its subtitle and its table) print
    beta as the command does, rounded down: at epsilon = 0.5 it read 0.2453 for k = 35's 0.245299...,
    refused typed back."""
    from html import unescape

    plan = api.plan_publish(epsilon=epsilon)
    page = unescape(plan._repr_html_())
    shown = {float(b) for b in re.findall(rf"β = {NUMBER}", page)}
    shown |= {float(b) for b in re.findall(rf"β \(sampling rate\)</td><td>{NUMBER}", page)}
    assert len(shown) >= 1 and len(re.findall(r"β \(sampling rate\)</td><td>", page)) == 1
    for beta in shown:
        assert api.plan_publish(epsilon=epsilon, beta=beta, k=plan.k).k == plan.k


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_planned_epsilon1_is_printed_never_below_the_one_spent(capsys, epsilon):
    """A privacy loss is printed rounded up, as the report states it (at epsilon = 1 on Adult the
    plan printed epsilon1 = 0.4157 for 0.41571, the report beside the release 0.4158; found by the
    app tour)."""
    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", str(epsilon), "--plan-only", "--json")
    assert code == 0, err
    plan = json.loads(out)["plan"]
    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", str(epsilon), "--plan-only")
    assert code == 0, err
    assert float(re.search(rf"epsilon1 = {NUMBER} ", out).group(1)) >= plan["epsilon1"]
    assert float(re.search(rf"d\(k, beta, {NUMBER}\)", out).group(1)) >= plan["epsilon_anon"]
