"""What a DP query answer reveals (issue 16, point 3, query half): its public form holds the DP
output and public parameters only; exact facts about the data are custodian-only; the ledger
names the dataset by a keyed digest that never appears in the answer; data-dependent failures
happen after the charge."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import Attribute, AttributeType, Dataset, Role, Schema, load
from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.queries import answer_query, polars_aggregate
from crowdsafe.mechanisms.query_plan import QueryRequest
from crowdsafe.privacy.ledger import Ledger

RNG = np.random.default_rng(5)
N = 3000
FRAME = pl.DataFrame({
    "age": RNG.integers(10, 95, N),
    "hours": RNG.normal(40.0, 15.0, N),
    "sex": RNG.choice(["Female", "Male"], N),
})
DATA = load(FRAME, name="people")
NEIGHBOUR = load(FRAME.slice(1), name="people")  # the table minus its first row

QUERIES = [
    ("count where age >= 30", {}),
    ("sum(age) clamp 20..80", {}),
    ("sum(hours) clamp 0..60 where sex = 'Female'", {}),
    ("mean(hours) clamp 0..60", {}),
    ("median(age) clamp 0..100", {}),
    ("histogram sex in ('Female', 'Male')", {}),
    ("histogram age[0..100 by 10]", {"mechanism": "gaussian", "delta": 1e-6}),
]


def _strip_dp_outputs(payload: dict) -> dict:
    """The public answer without its DP outputs (the noisy values)."""
    payload = json.loads(json.dumps(payload, default=str))
    payload.pop("value")
    if payload["kind"] == "mean":  # the mean's interval is computed from the noisy sum and count
        payload.pop("error_interval_95")
    for component in payload["components"].values():
        component.pop("value")
    payload["ledger"] = None if payload["ledger"] is None else {
        k: v for k, v in payload["ledger"].items() if k != "path"}
    return payload


@pytest.mark.parametrize(("text", "options"), QUERIES)
def test_neighbouring_tables_give_identical_public_fields_apart_from_dp_outputs(text, options, tmp_path):
    answers = []
    for index, data in enumerate((DATA, NEIGHBOUR)):
        with Ledger(tmp_path / f"ledger{index}.sqlite3") as book:
            book.set_budget(data.fingerprint(key=book.identity_key), "people", 10.0, 1e-3)
            answer = answer_query(data, QueryRequest(text, epsilon=0.5, **options), randomness=3, ledger=book)
            answers.append(answer.as_dict())
    first, second = (_strip_dp_outputs(a) for a in answers)
    assert first == second
    assert "custodian_only_not_dp" not in answers[0] and "diagnostics_not_dp" not in answers[0]


def test_the_public_answer_carries_no_fingerprint_and_the_ledger_a_keyed_one(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        keyed = DATA.fingerprint(key=book.identity_key)
        book.set_budget(keyed, "people", 1.0)
        answer = answer_query(DATA, QueryRequest("count", epsilon=0.1), randomness=1, ledger=book)
        text = json.dumps(answer.as_dict(custodian=True), default=str)
        assert answer.dataset == {"name": "people"}
        assert DATA.fingerprint() not in text and keyed not in text
        assert book.budget("people").fingerprint == keyed != DATA.fingerprint()


def test_clamp_counts_are_custodian_only():
    answer = answer_query(DATA, QueryRequest("sum(age) clamp 20..80", epsilon=1.0), randomness=1)
    public = answer.as_dict()
    assert "values_clamped_up" not in json.dumps(public)
    assert answer.custodian_only["values_clamped_up"] == int((FRAME["age"] < 20).sum())
    shown = answer.as_dict(custodian=True)["custodian_only_not_dp"]
    assert shown == answer.custodian_only


def test_a_failure_after_reading_the_data_is_charged_and_says_so(tmp_path):
    def failing(dataset, plan, randomness):
        exact, dropped = polars_aggregate(dataset, plan, randomness)
        raise ParameterError("something about these rows")

    with Ledger(tmp_path / "ledger.sqlite3") as book:
        book.set_budget(DATA.fingerprint(key=book.identity_key), "people", 1.0)
        with pytest.raises(ParameterError, match="charged to the ledger and stays spent"):
            answer_query(DATA, QueryRequest("count", epsilon=0.25), ledger=book, aggregate=failing, randomness=1)
        assert book.budget("people").spent.epsilon == pytest.approx(0.25)


def test_refusals_from_public_things_cost_nothing(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        book.set_budget(DATA.fingerprint(key=book.identity_key), "people", 1.0)
        with pytest.raises(ParameterError, match="cells"):
            answer_query(DATA, QueryRequest("histogram age[0..100 by 0.001], hours[0..100 by 0.01]", epsilon=0.25),
                         ledger=book)
        assert book.budget("people").spent.epsilon == 0.0


@pytest.mark.parametrize("text", ["count", "sum(age) clamp 0..100", "mean(age) clamp 0..100",
                                  "histogram sex in ('F', 'M')"])
def test_noise_too_fine_to_sample_is_refused_before_the_charge(tmp_path, text):
    """ε / Δ below what the exact discrete Laplace sampler takes: refused while planning (it failed
    after the charge), at any larger ε the query runs."""
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        book.set_budget(DATA.fingerprint(key=book.identity_key), "people", 1.0)
        with pytest.raises(ParameterError, match="too small for this query's noise .*nothing was charged"):
            answer_query(DATA, QueryRequest(text, epsilon=1e-12), ledger=book, randomness=1)
        assert book.budget("people").spent.epsilon == 0.0
        answer_query(DATA, QueryRequest(text, epsilon=1e-5), ledger=book, randomness=1)


def test_nan_values_are_missing_in_a_quantile_not_an_abort():
    frame = pl.DataFrame({"x": [1.0, 2.0, float("nan"), 3.0]})
    answer = answer_query(load(frame, name="t"), QueryRequest("median(x) clamp 0..4", epsilon=1.0), randomness=1)
    assert 0.0 <= answer.value <= 4.0


def test_rows_dropped_by_the_contribution_bound_are_custodian_only():
    frame = pl.DataFrame({"person": [1, 1, 1, 2, 3], "v": [1, 2, 3, 4, 5]})
    schema = Schema((Attribute("person", Role.IDENTIFIER, AttributeType.CATEGORICAL),
                     Attribute("v", Role.SENSITIVE, AttributeType.NUMERIC)), person_id="person")
    data = Dataset(frame, schema, name="p")
    answer = answer_query(data, QueryRequest("count", epsilon=1.0, max_rows_per_person=1), randomness=1)
    assert answer.custodian_only == {"rows_dropped_by_contribution_bound": 2}
    assert "rows_dropped" not in json.dumps(answer.as_dict(), default=str)
