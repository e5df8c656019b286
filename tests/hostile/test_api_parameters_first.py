"""Parameters of the Python API that are decided from themselves alone are refused first: before
the table is read, before a ledger file is made and before any charge (docs/mechanisms.md, "Order
of work"; docs/hostile-input.md, "Options at and beyond their limits"). Found by a sweep of the
Python API:

- ``query(domain={"sex": []})`` was charged, its entry marked failed, then ended in a Polars
  SchemaError about internal join keys;
- a ``domain`` / ``domains`` of the wrong shape was taken: a text split into its characters
  (``{"sex": "Male"}`` gave the cells M, a, l, e), a list or a misspelled key ignored, None a
  TypeError;
- ``budget="5,1e-5"``, ``(1,)`` or out-of-range values gave a TypeError from inside the ledger, or
  were refused only after the data was read and a ledger file made;
- ``query`` took ``epsilon="0.1"`` and ``decimal_comma="yes"`` where ``publish`` refused
  ``epsilon="1"``;
- a histogram by a column named ``count`` (the name of the answer's count column) was charged,
  its entry marked failed, then ended in a Polars DuplicateError.

Each refusal is one line, a ParameterError naming the parameter, leaves no ledger file where
there was none and no entry in one that exists, and is the same on a table and on its neighbour
(one row more, holding a missing value that ``missing="error"`` would refuse: a refusal of the
data there would mean the table was read first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

ROWS = 200
BUDGET = (5.0, 1e-6)


def _tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    """D and its neighbour D' = D plus a row with a missing ``sex`` and a new ``ville``."""
    rng = np.random.default_rng(5)
    table = pl.DataFrame({"age": rng.integers(20, 70, ROWS), "sex": rng.choice(["F", "M"], ROWS),
                          "ville": rng.choice(["Genève", "Zürich", "Bern"], ROWS)})
    extra = pl.DataFrame({"age": [33], "sex": [None], "ville": ["Lugano"]},
                         schema={"age": table["age"].dtype, "sex": pl.String, "ville": pl.String})
    return table, pl.concat([table, extra])


TABLE, NEIGHBOUR = _tables()


def _query(data: Any, ledger: Path, **given: Any) -> Any:
    options: dict[str, Any] = {"epsilon": 0.1, "ledger": ledger, "budget": BUDGET, "missing": "error", **given}
    return api.query(data, options.pop("text", "histogram sex"), **options)


def _perturb(data: Any, ledger: Path | None, **given: Any) -> Any:
    options: dict[str, Any] = {"c": 0.001, "gamma": 0.5, "max_rows": 1000, "seed": 1, "attributes": ["sex", "ville"],
                               "domains": {"sex": ["F", "M"], "ville": ["Genève", "Zürich", "Bern", "Lugano"]},
                               "ledger": ledger, "budget": BUDGET, "missing": "error", **given}
    return api.perturb(data, **options)


def _publish(data: Any, ledger: Path, **given: Any) -> Any:
    options: dict[str, Any] = {"epsilon": 1.0, "scheme": {"age": 0, "sex": 0, "ville": 0}, "ledger": ledger,
                               "budget": BUDGET, "seed": 1, "missing": "error", **given}
    return api.publish(data, **options)


RUNS = {"query": _query, "perturb": _perturb, "publish": _publish}


@pytest.fixture
def used_ledger(tmp_path: Path) -> Path:
    """A ledger holding the table's budget and one charged query."""
    ledger = tmp_path / "used.sqlite3"
    api.query(TABLE, "count", epsilon=0.1, ledger=ledger, budget=BUDGET, randomness=1)
    return ledger


def _refused_alike(run: Any, tmp_path: Path, used_ledger: Path, match: str, parameter: str, **given: Any) -> str:
    """The refusal of ``run(**given)`` on D and on D': one line, a ParameterError on
    ``parameter`` matching ``match``, the same words on both tables, no ledger file made and the
    used ledger unchanged."""
    before = api.ledger_report(used_ledger)
    messages = []
    for data in (TABLE, NEIGHBOUR):
        fresh = tmp_path / "fresh.sqlite3"
        for ledger in (fresh, used_ledger):
            with pytest.raises(ParameterError, match=match) as raised:
                run(data, ledger, **given)
            messages.append(str(raised.value))
            assert parameter in raised.value.parameters, raised.value.parameters
        assert not fresh.exists()  # no ledger made for a refused parameter
    assert api.ledger_report(used_ledger) == before  # no entry, no budget change
    assert len(set(messages)) == 1 and "\n" not in messages[0], messages
    return messages[0]


# -- item 1: an empty domain is refused before the charge ----------------------------------------


def test_an_empty_query_domain_is_refused_before_the_charge(tmp_path, used_ledger):
    message = _refused_alike(_query, tmp_path, used_ledger, r"^domain\['sex'\] lists no value", "domain",
                             domain={"sex": []})
    assert "polars" not in message.lower()


# -- item 2: a domain of the wrong shape ---------------------------------------------------------


@pytest.mark.parametrize(("domain", "match"), [
    ({"sex": "Male"}, r"domain\['sex'\] must be a list of values, not the text 'Male' .*\['Male'\]"),
    ({"sex": b"M"}, r"domain\['sex'\] must be a list of values, not the text b'M'"),
    (["Male"], r"domain must map each column to the list of its public values.*got \['Male'\]"),
    ("sex", r"domain must map each column .*got 'sex'"),
    ({"sex": None}, r"domain\['sex'\] must be a list of values, got None"),
    ({"sex": {"F": 1}}, r"domain\['sex'\] must be a list of values, got \{'F': 1\}"),
    ({"sex": 3}, r"domain\['sex'\] must be a list of values, got 3"),
    ({"sex": iter(["F", "M"])}, r"domain\['sex'\] must be a list of values, got a one-pass"),
    ({1: ["F"]}, r"domain must be keyed by column names \(text\), got the key 1"),
    ({"sexx": ["F", "M"]}, r"domain\['sexx'\]: 'sexx' is not a column the query counts by \(the histogram counts "
                           r"by 'sex'\)"),
    ({"ville": ["Bern"]}, r"domain\['ville'\]: 'ville' is not a column the query counts by"),
])
def test_a_query_domain_of_the_wrong_shape_is_refused(tmp_path, used_ledger, domain, match):
    _refused_alike(_query, tmp_path, used_ledger, match, "domain", domain=domain)


def test_a_domain_for_a_query_without_histogram_is_refused(tmp_path, used_ledger):
    _refused_alike(_query, tmp_path, used_ledger, r"a count query has no histogram column", "domain",
                   text="count", domain={"sex": ["F", "M"]})


@pytest.mark.parametrize("values", [("F", "M"), ["F", "M"], pl.Series(["F", "M"]), np.array(["F", "M"]),
                                    ["F", "M", None]])
def test_a_query_domain_in_any_collection_is_its_cells(values):
    answer = api.query(TABLE, "histogram sex", epsilon=1.0, domain={"sex": values}, ledger=None, randomness=1)
    assert sorted(answer.value["sex"].to_list(), key=str) == sorted(list(values), key=str)


@pytest.mark.parametrize(("domains", "match"), [
    ({"sex": ["F", "M"], "ville": "Zürich"}, r"domains\['ville'\] must be a list of values, not the text 'Zürich'"),
    (["F", "M"], r"domains must map each column to the list of its public values.*got \['F', 'M'\]"),
    ({"sex": None, "ville": ["Bern"]}, r"domains\['sex'\] must be a list of values, got None"),
    ({"sex": [], "ville": ["Bern"]}, r"domains\['sex'\] lists no value"),
])
def test_perturb_domains_of_the_wrong_shape_are_refused(tmp_path, used_ledger, domains, match):
    _refused_alike(_perturb, tmp_path, used_ledger, match, "domains", domains=domains)
    with pytest.raises(ParameterError, match=match):  # the plan, which never charges, alike
        api.plan_perturbation(TABLE, c=0.5, gamma=0.5, max_rows=1000, attributes=["sex", "ville"], domains=domains)


def test_perturb_domains_as_tuples_still_run():
    view = _perturb(TABLE, None, budget=None, domains={"sex": ("F", "M"), "ville": ("Genève", "Zürich", "Bern")},
                    missing="keep")
    assert view.plan.m == 3 * 4  # the declared values, each with the missing value kept


# -- item 4: the budget parameter ----------------------------------------------------------------


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize(("budget", "match"), [
    ("5,1e-5", r"^budget must be a pair \(epsilon, delta\) of numbers, e\.g\. \(1, 1e-6\), got '5,1e-5'$"),
    ((1,), r"^budget must be a pair .* got \(1,\)$"),
    ((1, 1e-6, 0), r"^budget must be a pair .* got \(1, 1e-06, 0\)$"),
    (5.0, r"^budget must be a pair .* got 5\.0$"),
    ((-1, 1e-6), r"^budget=\(-1, 1e-06\): epsilon must be a finite number >= 0"),
    ((0, 1e-6), r"^budget=\(0, 1e-06\): a privacy budget needs epsilon > 0"),
    ((1, 2), r"^budget=\(1, 2\): delta must lie in \[0, 1\)"),
    ((1, float("nan")), r"^budget=\(1, nan\): delta must be a number"),
    (("1", 0.0), r"^budget=\('1', 0\.0\): epsilon must be a number, not the text '1'"),
    ((True, 0.0), r"^budget=\(True, 0\.0\): epsilon must be a number"),
])
def test_a_malformed_budget_is_refused_first(tmp_path, used_ledger, run, budget, match):
    _refused_alike(RUNS[run], tmp_path, used_ledger, match, "budget", budget=budget)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_a_malformed_budget_is_refused_before_the_data_is_read(tmp_path, run):
    ledger = tmp_path / "l.sqlite3"
    with pytest.raises(ParameterError, match=r"^budget=\(-1, 1e-06\)"):  # not: the file is not found
        RUNS[run](tmp_path / "nope.csv", ledger, budget=(-1, 1e-6))
    assert not ledger.exists()


def test_a_budget_given_as_a_list_is_the_pair(tmp_path):
    ledger = tmp_path / "l.sqlite3"
    api.query(TABLE, "count", epsilon=0.1, ledger=ledger, budget=[2, 0], randomness=1)
    (dataset,) = api.ledger_report(ledger)["datasets"]
    assert (dataset["budget"]["epsilon"], dataset["budget"]["delta"]) == (2.0, 0.0)


# -- item 11: one reading of a parameter in every function -----------------------------------------


def test_a_text_epsilon_is_refused_by_query_as_by_publish(tmp_path, used_ledger):
    said = _refused_alike(_query, tmp_path, used_ledger, r"^epsilon must be a finite number > 0, got '1'$",
                          "epsilon", epsilon="1")
    with pytest.raises(ParameterError) as published:
        _publish(TABLE, tmp_path / "p.sqlite3", epsilon="1")
    assert str(published.value) == said


def test_a_text_delta_is_refused_by_query(tmp_path, used_ledger):
    _refused_alike(_query, tmp_path, used_ledger, r"^delta must be a number, not the text '1e-6'$", "delta",
                   delta="1e-6", mechanism="gaussian")


def test_a_text_budget_epsilon_is_refused_by_set_budget(tmp_path):
    ledger = tmp_path / "l.sqlite3"
    with pytest.raises(ParameterError, match=r"^epsilon must be a number, not the text '1'$"):
        api.set_budget(TABLE, epsilon="1", delta=0.0, ledger=ledger)
    assert not ledger.exists()


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("value", ["yes", 1, "False"])
def test_decimal_comma_must_be_a_boolean(tmp_path, used_ledger, run, value):
    _refused_alike(RUNS[run], tmp_path, used_ledger, rf"^decimal_comma must be True, False or None, got {value!r}$",
                   "decimal_comma", decimal_comma=value)


@pytest.mark.parametrize("call", [
    lambda data, value: api.check(data, decimal_comma=value),
    lambda data, value: api.anonymize(data, k=5, qi=["age"], decimal_comma=value),
    lambda data, value: api.plan_perturbation(data, c=0.5, gamma=0.5, max_rows=1000, attributes=["sex"],
                                              domains={"sex": ["F", "M"]}, decimal_comma=value),
])
def test_decimal_comma_must_be_a_boolean_in_the_other_readers(call):
    with pytest.raises(ParameterError, match=r"^decimal_comma must be True, False or None, got 'yes'$"):
        call(TABLE, "yes")


# -- item 12: a histogram by a column named 'count' -------------------------------------------------


def test_a_histogram_by_a_column_named_count_is_refused_before_the_charge(tmp_path, used_ledger):
    _refused_alike(_query, tmp_path, used_ledger, r"^a histogram's answer counts in a column named 'count', so it "
                   r"cannot count by a column of that name: rename the column in the data", "query",
                   text="histogram sex, `count` in (1, 2)")
    counted = TABLE.with_columns((pl.col("age") % 3).alias("count"))
    ledger = tmp_path / "counted.sqlite3"
    api.query(counted, "count where `count` = 1", epsilon=0.1, ledger=ledger, budget=BUDGET, randomness=1)
    before = api.ledger_report(ledger)
    with pytest.raises(ParameterError, match="cannot count by a column of that name"):
        _query(counted, ledger, text="histogram `count` in (0, 1, 2)")
    assert api.ledger_report(ledger) == before  # nothing charged, no failed entry
