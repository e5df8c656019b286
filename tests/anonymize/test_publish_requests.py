"""The publish family's typed requests: frozen, and built once by the api from every keyword."""

from __future__ import annotations

import dataclasses

import pytest

import crowdsafe
import crowdsafe.anonymize.plan as plan_module
import crowdsafe.drivers.publish as driver
from crowdsafe import api
from crowdsafe.anonymize.plan import PlanRequest
from crowdsafe.anonymize.publish import DEFAULT_MAX_SUPPRESSION, DEFAULT_RUN_OPTIONS, RunOptions

#: a non-default value for every field of each request
PLAN_FIELDS = dict(epsilon=2.0, delta=1e-5, k=7, beta=0.4, epsilon1=0.2, scheme="coarse", releases=3,
                   objective="loss", target="age", columns=("age", "sex"), candidates=99, declared_domains=True,
                   table_counts=True)
RUN_FIELDS = dict(name="people", budget=(5.0, 1e-4), out="release/r.csv",
                  custodian_report="facts/r.json", escape_formulas=False, report=False)


@pytest.mark.parametrize("request_", [PlanRequest(1.0, 1e-6), RunOptions()])
def test_requests_are_frozen_and_slotted(request_):
    field = dataclasses.fields(request_)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(request_, field, None)
    assert not hasattr(request_, "__dict__")


def test_every_field_has_a_non_default_value_here():
    assert {f.name for f in dataclasses.fields(PlanRequest)} == set(PLAN_FIELDS)
    assert {f.name for f in dataclasses.fields(RunOptions)} == set(RUN_FIELDS) | {"max_suppression"}


def test_the_default_run_writes_nothing_and_warns_at_the_default_suppression():
    assert DEFAULT_RUN_OPTIONS == RunOptions()
    assert DEFAULT_RUN_OPTIONS.out is None and DEFAULT_RUN_OPTIONS.max_suppression == DEFAULT_MAX_SUPPRESSION


def test_the_requests_are_exported_by_the_package():
    assert crowdsafe.PlanRequest is PlanRequest and crowdsafe.RunOptions is RunOptions


def test_plan_publish_passes_every_keyword(monkeypatch):
    seen = []
    monkeypatch.setattr(plan_module, "plan_publication", lambda request: seen.append(request) or "plan")
    assert api.plan_publish(**PLAN_FIELDS) == "plan"
    assert seen == [PlanRequest(**PLAN_FIELDS)]


def test_publish_builds_each_request_once_from_every_keyword(monkeypatch):
    checked, ran = [], []
    monkeypatch.setattr(plan_module, "check_publication", lambda request, **how: checked.append(request))
    monkeypatch.setattr(driver, "publish", lambda *args, **kwargs: ran.append((args, kwargs)) or "publication")
    # the planner counts the candidates and reads the schema's hierarchies
    plan_fields = {k: v for k, v in PLAN_FIELDS.items() if k not in ("candidates", "declared_domains", "table_counts")}
    reading = dict(qi=["age"], sensitive="sex", schema="schema.json", missing="drop", seed=5, ledger="ledger.sqlite3")
    result = api.publish("data.csv", **{**plan_fields, "columns": ["age", "sex"]}, **RUN_FIELDS, **reading)
    assert result == "publication"
    (engine, data, request, options), keywords = ran[0]
    assert engine.name == "polars" and data == "data.csv"
    assert request == PlanRequest(**plan_fields) and checked == [request]
    assert checked[0] is request  # checked, then passed down: the same object
    assert options == RunOptions(**RUN_FIELDS)
    assert keywords == {**reading, "qi": ("age",), "sensitive": ("sex",)}  # names as tuples (crowdsafe.arguments)


def test_a_run_option_reaches_the_publication(tmp_path):
    from crowdsafe.anonymize.publish import plan_publication, publish_dataset
    from crowdsafe.csv_safety import RAW_CSV_NOTE
    from crowdsafe.datasets import adult
    from crowdsafe.randomness import Randomness

    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    options = RunOptions(out=tmp_path / "r.csv", escape_formulas=False, max_suppression=1.0)
    publication = publish_dataset(adult(), plan, options, randomness=Randomness(3))
    assert publication.written["tables"] == [str(tmp_path / "r.csv")]
    assert RAW_CSV_NOTE in publication.certificate.format_notes
