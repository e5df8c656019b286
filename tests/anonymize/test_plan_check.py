"""``check_publication`` (the check a command makes before it reads anything) refuses exactly what
``plan_publication`` refuses, with the same message, whether it solves the plan or proves that
it solves (issue 34: the proof skips ``best_rate``, about 25 ms of each publish)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crowdsafe.anonymize.plan as plan_module
from crowdsafe.anonymize.plan import PlanRequest, check_publication, plan_publication
from crowdsafe.errors import ParameterError


def outcome(function, request: PlanRequest) -> str | None:
    """None when ``function(request)`` returns, else its refusal."""
    try:
        function(request)
    except ParameterError as exc:
        return f"{exc} {exc.parameters}"
    return None


def agree(request: PlanRequest) -> None:
    plan_module.best_rate.cache_clear()
    assert outcome(check_publication, request) == outcome(plan_publication, request), request


@settings(max_examples=60, deadline=None)
@given(epsilon=st.floats(0.02, 40.0), log_delta=st.floats(-40.0, -0.05),
       epsilon1=st.sampled_from([None, None, 0.0, 0.01, 0.5, 3.0]), scheme=st.sampled_from([None, None, "medium"]))
@pytest.mark.slow
def test_the_check_refuses_what_the_plan_refuses(epsilon, log_delta, epsilon1, scheme):
    agree(PlanRequest(epsilon, 10.0**log_delta, epsilon1=epsilon1, scheme=scheme))


@pytest.mark.parametrize("request_", [
    PlanRequest(1.0, 1e-6), PlanRequest(0.2, 0.5), PlanRequest(0.001, 1e-6), PlanRequest(1.0, 0.0),
    PlanRequest(1.0, 1.0), PlanRequest(1.0, -1e-6), PlanRequest(1.0, float("nan")), PlanRequest(25.0, 1e-9),
    PlanRequest(37.0, 1e-6), PlanRequest(60.0, 1e-6), PlanRequest(1.0, 1e-6, epsilon1=1.0),
    PlanRequest(1.0, 1e-6, epsilon1=0.0), PlanRequest(1.0, 1e-6, scheme="medium", epsilon1=0.1),
    PlanRequest(1.0, 1e-6, k=1), PlanRequest(1.0, 1e-6, k=20), PlanRequest(1.0, 1e-6, k=2),
    PlanRequest(1.0, 1e-6, beta=0.9), PlanRequest(1.0, 1e-6, beta=0.3), PlanRequest(1.0, 0.5, beta=0.3),
    PlanRequest(1.0, 1e-6, releases=0), PlanRequest(1.0, 1e-6, releases=3), PlanRequest(1.0, 0.4, releases=3),
    PlanRequest(1.0, 1e-6, objective="nonsense"), PlanRequest(1.0, 1e-6, candidates=1015),
    PlanRequest(-1.0, 1e-6), PlanRequest(float("inf"), 1e-6), PlanRequest(0.05, 1e-300),
])
def test_edge_cases_agree(request_):
    agree(request_)


def test_the_default_request_is_checked_without_the_rate_search(monkeypatch):
    """At the command line's defaults the check proves the solve, so it never searches the rate."""
    def no_search(*args):
        raise AssertionError("best_rate was called")

    monkeypatch.setattr(plan_module, "best_rate", no_search)
    check_publication(PlanRequest(1.0, 1e-6))
    check_publication(PlanRequest(0.5, 1e-5, epsilon1=0.05))
    check_publication(PlanRequest(2.0, 1e-6, scheme="medium"))
