"""The sampling floor's numbers in d(k, beta, epsilon)'s refusal and in the planner's 'the sampling
floor binds' note, typed back, are taken (review, 2026-11-30: the sweep that rounds printed rates
toward acceptance missed these two).

They were printed to nearest: at epsilon = 1 the largest rate 1 - e^-1 = 0.63212055... came out as
0.632121, above it, so ``calc dps --beta 0.632121 --epsilon 1`` was refused; and the floor
-ln(1 - beta), the least epsilon, came out below itself (-ln 0.3 = 1.2039728... as 1.20397), in
that refusal and in smallest_epsilon's plan ('the sampling floor binds: epsilon = ... is the least
epsilon', a privacy loss stated below the one proven).
"""

from __future__ import annotations

import math
import re

import pytest

from cli_helpers import run_command, run_for_error
from crowdsafe.errors import ParameterError
from crowdsafe.privacy import dps_delta
from crowdsafe.privacy.amplification import admits
from crowdsafe.privacy.planning import largest_beta, smallest_epsilon

NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)"
EPSILONS = (0.3, 0.5, 0.7, 1.0, 1.3, 2.0)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("epsilon1", (0.0, 0.05))
def test_the_refusals_largest_rate_typed_back_is_taken(epsilon, epsilon1):
    beta = min(0.999, -math.expm1(-(epsilon - epsilon1)) + 0.05)  # above the floor
    with pytest.raises(ParameterError) as refused:
        dps_delta(10, beta, epsilon, epsilon1)
    said = str(refused.value)
    at_most = float(re.search(rf"lower beta to at most 1 - e\^-\(epsilon - epsilon1\) = {NUMBER}", said).group(1))
    assert admits(at_most, epsilon, epsilon1)
    dps_delta(10, at_most, epsilon, epsilon1)  # taken
    least = float(re.search(rf"sampling floor -ln\(1 - beta\)[^=]* = {NUMBER} for beta", said).group(1))
    assert admits(beta, least + epsilon1, epsilon1)  # the stated least epsilon is enough


def test_the_command_line_refusal_names_a_rate_it_takes(capsys):
    code, err = run_for_error(capsys, "calc", "dps", "--k", "10", "--beta", "0.7", "--epsilon", "1")
    assert code != 0
    at_most = re.search(rf"lower beta to at most 1 - e\^-\(epsilon - epsilon1\) = {NUMBER}", err).group(1)
    code, out, err = run_command(capsys, "calc", "dps", "--k", "10", "--beta", at_most, "--epsilon", "1")
    assert code == 0, err


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_binding_floors_rate_typed_back_is_taken(epsilon):
    plan = largest_beta(epsilon, 1e-3, 200)  # a loose delta: the floor binds
    said = re.search(rf"the sampling floor binds: beta = {NUMBER} ", plan.explanation)
    assert said is not None, plan.explanation
    beta = float(said.group(1))
    assert beta <= plan.beta and admits(beta, epsilon)
    dps_delta(200, beta, epsilon)  # taken


@pytest.mark.parametrize("beta", (0.7, 0.3, 0.05, 0.5))
def test_the_least_epsilon_stated_at_the_floor_is_taken(beta):
    """smallest_epsilon's 'the sampling floor binds: epsilon = ... is the least epsilon' states a
    privacy loss: rounded up, never below -ln(1 - beta) (it read 1.20397 for -ln 0.3 = 1.2039728...,
    refused typed back)."""
    plan = smallest_epsilon(200, beta, 1e-3)
    said = re.search(rf"epsilon = -ln\(1 - beta\) \+ epsilon1 = {NUMBER} is the least", plan.explanation)
    assert said is not None, plan.explanation
    epsilon = float(said.group(1))
    assert epsilon >= -math.log1p(-beta) and admits(beta, epsilon)
    dps_delta(200, beta, epsilon)  # taken


@pytest.mark.parametrize("beta", (0.5, 0.25, 0.3))
def test_the_floor_beside_the_least_epsilon_is_not_below_it(beta):
    plan = smallest_epsilon(40, beta, 1e-9)
    floor = float(re.search(rf"\(the sampling floor is {NUMBER}\)", plan.explanation).group(1))
    assert floor >= -math.log1p(-beta) and admits(beta, floor)
