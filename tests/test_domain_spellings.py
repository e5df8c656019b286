"""``query(domain=)`` and ``perturb(domains=)`` spell one idea (the public value lists of the
columns) two ways: each takes the other's spelling with the same meaning, and refuses both at
once in one line, before anything is read or charged."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.drivers import perturb as perturb_driver
from crowdsafe.errors import ParameterError
from crowdsafe.privacy.ledger import Ledger

TABLE = pl.DataFrame({"sex": ["F", "M", "F", "F"], "age": [30, 40, 50, 60]})
VALUES = {"sex": ["F", "M", "X"]}
TARGET = dict(gamma=0.4, c=1.0)


def test_query_takes_domains_as_domain():
    given = api.query(TABLE, "histogram sex", epsilon=1.0, domain=VALUES, ledger=None, seed=3)
    spelled = api.query(TABLE, "histogram sex", epsilon=1.0, domains=VALUES, ledger=None, seed=3)
    assert spelled.value.equals(given.value) and sorted(spelled.value["sex"].to_list()) == VALUES["sex"]


@pytest.mark.parametrize("function", ["perturb", "plan_perturbation"])
def test_perturb_takes_domain_as_domains(monkeypatch, function):
    seen = []
    monkeypatch.setattr(perturb_driver, function, lambda engine, data, request, *rest, **options: seen.append(request))
    getattr(api, function)(TABLE, attributes=["sex"], domain=VALUES, max_rows=10, **TARGET)
    getattr(api, function)(TABLE, attributes=["sex"], domains=VALUES, max_rows=10, **TARGET)
    assert seen[0] == seen[1] and seen[0].domains == VALUES


def test_both_spellings_at_once_are_refused_before_any_charge(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    with pytest.raises(ParameterError, match=r"^domain and domains are two spellings of one parameter: give domain "
                                             r"only$"):
        api.query(TABLE, "histogram sex", epsilon=1.0, domain=VALUES, domains=VALUES, ledger=ledger)
    assert ledger.entries() == []
    for function in (api.perturb, api.plan_perturbation):
        with pytest.raises(ParameterError, match=r"^domains and domain are two spellings of one parameter: give "
                                                 r"domains only$"):
            function(TABLE, domains=VALUES, domain=VALUES, max_rows=10, **TARGET)


# ``publish(columns=)`` and ``perturb(attributes=)`` spell one idea (the columns published) two ways too

def test_plan_publish_and_publish_take_attributes_as_columns(monkeypatch):
    from crowdsafe.drivers import publish as publish_driver

    assert api.plan_publish(1.0, attributes="age").columns == api.plan_publish(1.0, columns="age").columns == ("age",)
    seen = []
    monkeypatch.setattr(publish_driver, "publish", lambda engine, data, request, *rest, **options: seen.append(request))
    api.publish(TABLE, epsilon=1.0, attributes=["age"], ledger=None)
    api.publish(TABLE, epsilon=1.0, columns=["age"], ledger=None)
    assert seen[0] == seen[1] and seen[0].columns == ("age",)


@pytest.mark.parametrize("function", ["perturb", "plan_perturbation"])
def test_perturb_takes_columns_as_attributes(monkeypatch, function):
    seen = []
    monkeypatch.setattr(perturb_driver, function, lambda engine, data, request, *rest, **options: seen.append(request))
    getattr(api, function)(TABLE, columns=["sex"], domains=VALUES, max_rows=10, **TARGET)
    getattr(api, function)(TABLE, attributes=["sex"], domains=VALUES, max_rows=10, **TARGET)
    assert seen[0] == seen[1] and seen[0].attributes == ("sex",)


def test_both_column_spellings_at_once_are_refused_before_anything_is_read():
    absent = "no-such-table.csv"  # refused before it is read
    for call in (lambda: api.plan_publish(1.0, columns="age", attributes="age"),
                 lambda: api.publish(absent, epsilon=1.0, columns="age", attributes="age", ledger=None)):
        with pytest.raises(ParameterError, match=r"^columns and attributes are two spellings of one parameter: give "
                                                 r"columns only$"):
            call()
    for function in (api.perturb, api.plan_perturbation):
        with pytest.raises(ParameterError, match=r"^attributes and columns are two spellings of one parameter: give "
                                                 r"attributes only$"):
            function(absent, attributes="sex", columns="sex", domains=VALUES, max_rows=10, **TARGET)
