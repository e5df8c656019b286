"""help() of every public function names each of its parameters (an API sweep found help(query)
silent on domain, partition, max_rows_per_person, calibration, neighbours and randomness, and
perturb's max_view_rows undocumented), and what the docstrings promise holds: every function that
reads a table takes decimal_comma (change_budget did not), compare reads a Release object as attack
does (it refused one: "cannot load a Release")."""

from __future__ import annotations

import inspect
import re

import polars as pl
import pytest

from crowdsafe import api

PUBLIC_MODULES = {"crowdsafe.api", "crowdsafe.measures", "crowdsafe.budgets"}


def public_functions() -> list[str]:
    return sorted(name for name, value in vars(api).items()
                  if not name.startswith("_") and inspect.isfunction(value) and value.__module__ in PUBLIC_MODULES)


def test_the_public_functions_are_found():
    assert {"query", "publish", "perturb", "check", "compare", "attack", "change_budget"} <= set(public_functions())


@pytest.mark.parametrize("name", public_functions())
def test_the_docstring_names_every_parameter(name):
    function = getattr(api, name)
    doc = inspect.getdoc(function) or ""
    unnamed = [p for p in inspect.signature(function).parameters if not re.search(rf"``{p}(``|=)", doc)]
    assert unnamed == [], f"{name}'s docstring does not name {unnamed}"


def test_every_function_that_reads_a_table_takes_decimal_comma():
    """The module docstring's promise: each function with a ``schema`` parameter reads a table."""
    assert "Every function that reads a table takes ``decimal_comma``" in " ".join((api.__doc__ or "").split())
    for name in public_functions():
        parameters = inspect.signature(getattr(api, name)).parameters
        if "schema" in parameters:
            assert "decimal_comma" in parameters, name


def test_change_budget_reads_a_decimal_comma_file_as_set_budget_did(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("age;income\n30;1,5\n40;2,5\n50;3,5\n", encoding="utf-8")
    ledger = tmp_path / "ledger.sqlite3"
    registered = api.set_budget(data, epsilon=2.0, delta=0.0, ledger=ledger, decimal_comma=True)
    changed = api.change_budget(data, epsilon=1.0, delta=0.0, ledger=ledger, decimal_comma=True)
    assert changed.fingerprint == registered.fingerprint and changed.budget.epsilon == 1.0


def test_compare_reads_a_release_object():
    frame = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42] * 4, "sex": ["F", "M"] * 12})
    release = api.anonymize(frame, k=3, report=False)
    by_object = api.compare(frame, release, seed=1).information_loss.to_dict()
    assert by_object == api.compare(frame, release.frame, seed=1).information_loss.to_dict()


def test_the_reports_of_check_and_compare_have_as_dict_as_every_other_result():
    """CheckReport and UtilityReport had only to_dict, where every other result has as_dict."""
    frame = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42] * 4, "sex": ["F", "M"] * 12})
    checked = api.check(frame, qi=["age"])
    assert checked.as_dict() == checked.to_dict() and checked.as_dict()["quasi_identifiers"] == ["age"]
    compared = api.compare(frame, frame, qi=["age"])
    assert compared.as_dict() == compared.to_dict() and compared.as_dict()["quasi_identifiers"] == ["age"]
