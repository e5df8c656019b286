"""PerturbRequest, AlphaBetaPlanRequest and ViewOutput: frozen, and api.perturb /
api.plan_perturbation pass every keyword into them (and the rest beside them)."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.drivers import perturb as perturb_driver
from crowdsafe.errors import ParameterError
from crowdsafe.perturb.alpha_beta import PerturbRequest
from crowdsafe.perturb.view import ViewOutput
from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest

DATA = pl.DataFrame({"a": [1, 2], "b": ["x", "y"]})
DOMAINS = {"a": [1, 2, 3], "b": ["x", "y"]}
TARGET = dict(gamma=0.4, d=0.01, alpha=0.45, beta=0.2, exclusive_correlations=True)
EXPECTED = PerturbRequest(AlphaBetaPlanRequest(failure=0.1, **TARGET), attributes=("a", "b"), domains=DOMAINS,
                          max_rows=500, exploratory=True, duplicates="error")


@pytest.mark.parametrize("request_", [AlphaBetaPlanRequest(gamma=0.5, c=1.0), EXPECTED, ViewOutput(out="v.csv")])
def test_the_requests_are_frozen(request_):
    field = dataclasses.fields(request_)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(request_, field, None)


def _capture(monkeypatch, name):
    seen = {}

    def fake(engine, data, *requests, **rest):
        seen.update(engine=engine.name, data=data, requests=requests, rest=rest)
        return "done"

    monkeypatch.setattr(perturb_driver, name, fake)
    return seen


def test_api_perturb_builds_each_request_once_with_every_keyword(monkeypatch):
    seen = _capture(monkeypatch, "perturb")
    result = api.perturb(DATA, attributes=["a", "b"], domains=DOMAINS, max_rows=500, exploratory=True,
                         duplicates="error", confidence=0.9, seed=7, schema=None, missing="drop", out="view.csv",
                         certificate="view.json", ledger="ledger.sqlite3", name="t", budget=(2.0, 0.0),
                         escape_formulas=False,
                         **TARGET)
    assert result == "done" and seen["engine"] == "polars" and seen["data"] is DATA
    assert seen["requests"] == (EXPECTED, ViewOutput(out="view.csv", certificate="view.json", escape_formulas=False))
    assert seen["rest"] == {"schema": None, "missing": "drop", "randomness": 7, "ledger": "ledger.sqlite3",
                            "name": "t", "budget": (2.0, 0.0)}


def test_api_plan_perturbation_builds_the_request_once_with_every_keyword(monkeypatch):
    seen = _capture(monkeypatch, "plan_perturbation")
    result = api.plan_perturbation(DATA, attributes=["a", "b"], domains=DOMAINS, max_rows=500, exploratory=True,
                                   duplicates="error", confidence=0.9, schema=None, missing="drop", **TARGET)
    assert result == "done" and seen["requests"] == (EXPECTED,)
    assert seen["rest"] == {"schema": None, "missing": "drop"}


def test_a_target_without_gamma_or_with_an_unknown_key_is_refused_naming_it_before_anything_runs(monkeypatch):
    """(A TypeError naming AlphaBetaPlanRequest.__init__ before: now a ParameterError naming the keyword.)"""
    seen = _capture(monkeypatch, "perturb")
    with pytest.raises(ParameterError, match=r"^perturb\(\) needs the keyword 'gamma'$"):
        api.perturb(DATA, c=1.0)
    with pytest.raises(ParameterError, match=r"^perturb\(\) got an unknown keyword 'colour'; beside its named "):
        api.perturb(DATA, gamma=0.5, c=1.0, colour="red")
    assert seen == {}
