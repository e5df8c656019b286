"""QueryRequest: frozen, and api.query passes every keyword into it (and the rest beside it)."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.drivers import query as query_driver
from crowdsafe.mechanisms.query_plan import QueryRequest


def test_the_request_is_frozen():
    request = QueryRequest("count", epsilon=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.epsilon = 2.0  # type: ignore[misc]


def test_api_query_builds_the_request_once_with_every_keyword(monkeypatch):
    seen = {}

    def fake(engine, data, request, **rest):
        seen.update(engine=engine.name, data=data, request=request, rest=rest)
        return "answer"

    monkeypatch.setattr(query_driver, "query", fake)
    data = pl.DataFrame({"age": [30, 40], "sex": ["F", "M"]})
    domain = {"sex": ["F", "M"]}
    answer = api.query(data, "histogram sex", epsilon=0.7, delta=1e-7, mechanism="gaussian", calibration="classic",
                       neighbours="change", max_rows_per_person=2, domain=domain, partition="sex", schema=None,
                       missing="drop", randomness=5, ledger="ledger.sqlite3", name="people",
                       budget=(3.0, 1e-6))
    assert answer == "answer" and seen["engine"] == "polars" and seen["data"] is data
    assert seen["request"] == QueryRequest("histogram sex", epsilon=0.7, delta=1e-7, mechanism="gaussian",
                                           calibration_name="classic", neighbours="change", max_rows_per_person=2,
                                           domain=domain, partition="sex")
    assert seen["rest"] == {"schema": None, "missing": "drop", "randomness": 5, "ledger": "ledger.sqlite3",
                            "name": "people", "budget": (3.0, 1e-6)}
