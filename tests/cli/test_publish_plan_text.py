"""What `crowdsafe publish` prints about its plan and its releases says what ran: how k was set,
the totals of several releases (never rounded down), and each release's scheme and rows."""

from __future__ import annotations

import pytest

from cli_helpers import run_command
from crowdsafe.anonymize.publish import PlanRequest, plan_publication
from crowdsafe.cli.publish import render_plan
from crowdsafe.privacy import dps_delta


def _plan_text(request: PlanRequest) -> str:
    lines: list[str] = []
    render_plan(plan_publication(request).as_dict(), lines.append)
    return "\n".join(lines)


@pytest.mark.parametrize(("beta", "k"), [(0.3, 30), (None, 100)])
def test_a_given_k_is_not_called_the_smallest(beta, k):
    text = _plan_text(PlanRequest(1.0, 1e-6, beta=beta, k=k, scheme="coarse"))
    assert f"  k             {k} (k given: d(k, beta, 1) = " in text
    assert "smallest k" not in text


def test_a_planned_k_is_the_smallest_and_is_said_so():
    plan = plan_publication(PlanRequest(1.0, 1e-6, beta=0.3, scheme="coarse"))
    assert plan.k_rule == "smallest" and plan.as_dict()["k_rule"] == "smallest"
    assert dps_delta(plan.k - 1, 0.3, 1.0) > 1e-6 >= dps_delta(plan.k, 0.3, 1.0)  # it is the smallest
    assert f"  k             {plan.k} (smallest k with d(k, beta, 1) = " in _plan_text(
        PlanRequest(1.0, 1e-6, beta=0.3, scheme="coarse"))


def test_plan_only_with_a_given_k_says_it_was_given(capsys):
    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", "1", "--beta", "0.3", "--k", "30",
                                 "--plan-only")
    assert code == 0, err
    assert "  k             30 (k given: d(k, beta, " in out and "smallest k" not in out
