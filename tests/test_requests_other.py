"""The typed requests of check, compare, anonymize, attack and audit (issue 17): each is frozen,
and each api function (or keyword entry point) passes every keyword into the one request it
builds."""

from __future__ import annotations

import dataclasses
import importlib

import polars as pl
import pytest

import crowdsafe.classic
import crowdsafe.drivers.attack
import crowdsafe.metrics
from crowdsafe import api
from crowdsafe.attacks import AttackRequest
from crowdsafe.classic import AnonymizeRequest
from crowdsafe.mechanisms.audit import AuditRequest, audit
from crowdsafe.metrics import UtilityRequest
from crowdsafe.models import AssessRequest
from crowdsafe.models import check_report as check_report_module

FRAME = pl.DataFrame({
    "age": [30, 31, 32, 40, 41, 42, 50, 51],
    "zip": ["a", "a", "b", "b", "c", "c", "d", "d"],
    "job": ["x", "y", "x", "y", "x", "y", "x", "y"],
})


class Stop(Exception):
    """Raised by a captured worker: the test needs the request, not the run."""


def capture(monkeypatch, owner, name):
    seen = []

    def worker(*args, **kwargs):
        seen.extend(a for a in args if type(a).__name__.endswith("Request"))
        raise Stop

    monkeypatch.setattr(owner, name, worker)
    return seen


@pytest.mark.parametrize("request_", [
    AssessRequest(), UtilityRequest(), AnonymizeRequest("mondrian", 5), AttackRequest("linkage", ("age",)),
    AuditRequest(claimed_epsilon=1.0),
])
def test_requests_are_frozen(request_):
    field = dataclasses.fields(request_)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(request_, field, None)
    assert not hasattr(request_, "__dict__")  # slots


def test_check_passes_every_option(monkeypatch):
    seen = capture(monkeypatch, check_report_module, "run_assessment")
    with pytest.raises(Stop):
        api.check(FRAME, qi=["age", "zip"], sensitive="job", target_k=3, l=3, ground="equal", threshold=0.3,
                  population_size=1000)
    assert seen == [AssessRequest(target_k=3, l=3, ground="equal", threshold=0.3, population_size=1000)]
    seen.clear()
    with pytest.raises(Stop):
        api.check_dataset(api.load(FRAME, qi=["age"]), target_k=2, l=4, ground="ordered", threshold=0.7,
                          population_size=99)
    assert seen == [AssessRequest(target_k=2, l=4, ground="ordered", threshold=0.7, population_size=99)]


def test_check_request_reaches_the_report():
    report = api.check(FRAME, qi=["age", "zip"], sensitive="job", target_k=3, l=1, population_size=1000)
    assert report.privacy is not None and report.privacy.target_k == 3
    assert report.privacy.sensitive[0].recursive_l == 1


def test_compare_passes_every_option(monkeypatch):
    seen = capture(monkeypatch, crowdsafe.metrics, "measure_utility")  # api.compare imports it when called
    with pytest.raises(Stop):
        api.compare(FRAME, FRAME, qi=["age", "zip"], k=2, input_rows=8, queries=17, max_attributes=2, seed=5,
                    scale=2.0, target="job", model="majority")
    assert seen == [UtilityRequest(qi=("age", "zip"), k=2, input_rows=8, queries=17, max_attributes=2, seed=5,
                                   scale=2.0, target="job", model="majority")]


def test_anonymize_passes_every_option(monkeypatch):
    seen = capture(monkeypatch, crowdsafe.classic, "run_anonymization")
    options = dict(distance="equal", loss="entropy", suppression_limit=0.1, search="greedy", time_budget=3.0)
    with pytest.raises(Stop):
        api.anonymize(FRAME, algorithm="lattice", k=3, qi=["age", "zip"], sensitive="job", l=2.0, t=0.5, **options)
    assert seen == [AnonymizeRequest("lattice", 3, sensitive="job", l=2.0, t=0.5, **options)]


def test_anonymize_dataset_is_the_request_run():
    data = api.load(FRAME, qi=["age", "zip"])
    by_keywords = crowdsafe.classic.anonymize_dataset(data, "mondrian", 2, mode="relaxed", categorical="set")
    by_request = crowdsafe.classic.run_anonymization(data, AnonymizeRequest("mondrian", 2, mode="relaxed",
                                                                            categorical="set"))
    assert by_keywords.frame.equals(by_request.frame)
    assert by_keywords.certificate.to_dict() == by_request.certificate.to_dict()


def test_attack_passes_every_option(monkeypatch):
    seen = capture(monkeypatch, crowdsafe.drivers.attack, "attack")
    with pytest.raises(Stop):
        api.attack([FRAME], FRAME, qi=["age", "zip"], sensitive="job", kind="intersection", location="exact",
                   levels=[0.5], truth_id="age", schema="schema.json")
    assert seen == [AttackRequest("intersection", ("age", "zip"), "job", location="exact", levels=(0.5,),
                                  truth_id="age", schema="schema.json")]


def test_audit_passes_every_option(monkeypatch):
    seen = []

    def run_audit(run, neighbours, request, randomness=None):
        seen.append((request, randomness))
        raise Stop

    monkeypatch.setattr(importlib.import_module("crowdsafe.mechanisms.audit"), "run_audit", run_audit)

    def statistic(outputs):
        return outputs

    events = [("one", statistic)]
    with pytest.raises(Stop):
        audit(lambda d, r, n: [d] * n, (0, 1), claimed_epsilon=2.0, claimed_delta=0.1, trials=500,
              selection_trials=300, statistic=statistic, events=events, thresholds=8, keep_events=2,
              confidence=0.9, randomness=7)
    assert seen == [(AuditRequest(claimed_epsilon=2.0, claimed_delta=0.1, trials=500, selection_trials=300,
                                  statistic=statistic, events=tuple(events), thresholds=8, keep_events=2,
                                  confidence=0.9), 7)]
