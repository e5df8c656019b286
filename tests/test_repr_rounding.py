"""What a notebook shows of a result (``repr``, ``_repr_html_``) and the plan ``crowdsafe publish``
prints round as docs/publish.md says every printed figure is rounded: a privacy loss up (never
stated below the one spent), a rate on the side a user may type back and be granted (the sampling
β and the α-β α down, the α-β β up). Found by an API sweep (2026-11-30): the report's tables had
been fixed, but these still rounded to nearest: ``PublishPlan`` printed ε1 = 0.07826096 as
``epsilon1=0.07826`` and β = 0.34785917 as ``beta=0.3479`` (a rate the plan does not cover), its
notebook view ε1 and ε − ε1 likewise, ``Publication`` its β, ``Perturbation`` α = 0.123456 as
``0.1235`` and β = 0.0151612 as ``0.01516``, and ``Budget`` a spent ε of 1/3 as ``0.333333``.

Each figure is read back from the text and compared with the exact value the object holds."""

from __future__ import annotations

import html
import re

import polars as pl

from crowdsafe import api
from crowdsafe.cli.publish import render_plan

NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)"


def figure(text: str, before: str) -> float:
    found = re.search(re.escape(before) + r"\s*" + NUMBER, text)
    assert found, (before, text)
    return float(found.group(1))


def test_a_plan_states_epsilon1_up_and_beta_down():
    plan = api.plan_publish(1.0, candidates=14)  # nearest rounding: ε1 and ε − ε1 read lower, β higher
    shown = repr(plan)
    assert figure(shown, "epsilon1=") >= plan.epsilon1
    assert figure(shown, "beta=") <= plan.beta
    view = html.unescape(re.sub(r"<[^>]+>", " ", plan._repr_html_()))
    assert figure(view, "ε1 (choosing the scheme)") >= plan.epsilon1
    assert figure(view, "ε − ε1 (the anonymization)") >= plan.epsilon_anon
    printed: list[str] = []
    render_plan(plan.as_dict(), printed.append)
    lines = "\n".join(printed)
    assert figure(lines, "epsilon1 =") >= plan.epsilon1
    assert figure(lines, "d(k, beta,") >= plan.epsilon_anon


def test_a_publication_states_its_beta_down():
    frame = pl.DataFrame({"a": list(range(40)) * 5, "b": ["x", "y"] * 100, "c": ["p", "q", "r", "s"] * 50,
                          "d": [1, 2] * 100})
    publication = api.publish(frame, epsilon=1.0, seed=1, ledger=None, report=False)
    assert figure(repr(publication), "beta=") <= publication.plan.beta


def test_a_perturbation_states_alpha_down_and_beta_up():
    frame = pl.DataFrame({"sex": ["F", "M"] * 10})
    perturbation = api.perturb(frame, gamma=0.3, d=0.05, alpha=0.123456, attributes="sex",
                               domains={"sex": ["F", "M"]}, max_rows=100, seed=1, ledger=None)
    shown = repr(perturbation)
    assert figure(shown, "alpha=") <= perturbation.plan.alpha
    assert figure(shown, "beta=") >= perturbation.plan.beta


def test_a_budget_states_what_was_spent_up(tmp_path):
    frame = pl.DataFrame({"age": [30, 40, 50] * 4})
    ledger = tmp_path / "ledger.sqlite3"
    api.query(frame, "count", epsilon=1 / 3, ledger=ledger, budget=(1.0, 0.0), seed=1)
    budget = api.set_budget(frame, epsilon=1.0, ledger=ledger)  # already set: returned as it is
    assert budget.spent.epsilon > 0
    assert figure(repr(budget), "ε") >= budget.spent.epsilon
