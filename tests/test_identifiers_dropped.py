"""A column the schema declares ``role = "identifier"`` reaches no output of any command.

publish, anonymize, check, query and perturb read a table with a name, an email address and a
case number declared identifiers. Every output (release rows, certificates, the JSON and printed
summaries, the custodian report, a query's answer) is searched for the identifiers' values; the
release files and their certificates also for the columns' names. Naming an identifier in
``qi`` / ``sensitive`` or in a query is refused with a one-line error, before anything is charged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api
from crowdsafe.errors import CrowdsafeError, ParameterError, SchemaError

ROWS = 600
IDENTIFIERS = ("full_name", "email", "case_number")
SCHEMA = """
[attributes.full_name]
role = "identifier"
type = "categorical"

[attributes.email]
role = "identifier"
type = "categorical"

[attributes.case_number]
role = "identifier"
type = "categorical"

[attributes.age]
type = "numeric"

[attributes.sex]
type = "categorical"

[attributes.zip]
type = "categorical"

[attributes.income]
role = "sensitive"
type = "categorical"
"""


@pytest.fixture
def people(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(18)
    frame = pl.DataFrame({
        "full_name": [f"Person Nr{i:04d}" for i in range(ROWS)],
        "email": [f"someone{i:04d}@example.org" for i in range(ROWS)],
        "case_number": [f"CASE-{i:06d}" for i in range(ROWS)],
        "age": rng.integers(18, 90, ROWS),
        "sex": rng.choice(["F", "M"], ROWS),
        "zip": rng.choice(["13053", "13068", "14850", "14853"], ROWS),
        "income": rng.choice(["<=50K", ">50K"], ROWS),
    })
    data = tmp_path / "people.csv"
    frame.write_csv(data)
    schema = tmp_path / "schema.toml"
    schema.write_text(SCHEMA, encoding="utf-8")
    return {"data": data, "schema": schema, "dir": tmp_path}


def identifier_values(paths: dict[str, Path]) -> list[str]:
    frame = pl.read_csv(paths["data"])
    return [str(v) for c in IDENTIFIERS for v in frame.get_column(c).to_list()]


def assert_no_identifier(text: str, values: list[str], *, names: bool = False) -> None:
    """No identifier value in ``text`` (and, with ``names``, no identifier column name). Values
    are matched by their distinctive parts: every one is unique to its row."""
    leaked = [v for v in values if v in text]
    assert not leaked, f"identifier values reached an output: {leaked[:3]}"
    for marker in ("Person Nr", "@example.org", "CASE-"):
        assert marker not in text, f"{marker!r} reached an output"
    if names:
        found = [c for c in IDENTIFIERS if c in text]
        assert not found, f"identifier column names reached an output: {found}"


def every_file(directory: Path, skip: set[str]) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(directory.rglob("*"))
                     if p.is_file() and p.name not in skip)


def test_publish_drops_identifiers_from_every_output(people):
    values = identifier_values(people)
    out = people["dir"] / "out" / "release.csv"
    report = people["dir"] / "custodian" / "report.json"
    publication = api.publish(str(people["data"]), schema=str(people["schema"]), epsilon=1.0, delta=1e-3,
                              scheme="coarse", seed=1, ledger=None, out=str(out), custodian_report=str(report))
    for release in publication.releases:
        assert not set(IDENTIFIERS) & set(release.frame.columns)
    assert_no_identifier(out.read_text(encoding="utf-8"), values, names=True)
    assert_no_identifier(every_file(out.parent, set()), values, names=True)  # release + certificate
    assert_no_identifier(json.dumps(publication.summary(), default=str), values, names=True)
    assert_no_identifier(json.dumps(publication.custodian_report(), default=str), values, names=True)
    assert_no_identifier(report.read_text(encoding="utf-8"), values, names=True)


def test_publish_cli_drops_identifiers(people, capsys, monkeypatch):
    monkeypatch.chdir(people["dir"])
    values = identifier_values(people)
    for as_json in ([], ["--json"]):
        code, out, err = run_command(capsys, "publish", "people.csv", "--schema", "schema.toml", "--epsilon", "1",
                                     "--delta", "1e-3", "--seed", "1", "--no-ledger", "--out",
                                     f"out{len(as_json)}/r.csv", *as_json)
        assert code == 0, err
        assert_no_identifier(out + err, values, names=True)
        assert_no_identifier(every_file(people["dir"] / f"out{len(as_json)}", set()), values, names=True)
        assert "looks like" not in err  # a declared schema: no name warning


def test_anonymize_drops_identifiers_from_every_output(people, capsys, monkeypatch):
    values = identifier_values(people)
    for algorithm in ("mondrian", "mdav", "lattice"):
        out = people["dir"] / algorithm / "a.csv"
        qi = ["age"] if algorithm == "mdav" else None
        release = api.anonymize(str(people["data"]), schema=str(people["schema"]), algorithm=algorithm, k=5, qi=qi,
                                out=str(out))
        assert not set(IDENTIFIERS) & set(release.frame.columns)
        assert_no_identifier(every_file(out.parent, set()), values, names=True)
        assert_no_identifier(json.dumps(release.summary(), default=str), values, names=True)
        assert_no_identifier(json.dumps(release.custodian_report(), default=str), values, names=True)
    monkeypatch.chdir(people["dir"])
    code, out, err = run_command(capsys, "anonymize", "people.csv", "--schema", "schema.toml", "--k", "5",
                                 "--out", "cli/a.csv", "--json")
    assert code == 0, err
    assert_no_identifier(out + err + every_file(people["dir"] / "cli", set()), values, names=True)


def test_check_reads_no_identifier(people, capsys, monkeypatch):
    values = identifier_values(people)
    report = api.check(str(people["data"]), schema=str(people["schema"]))
    assert not set(IDENTIFIERS) & set(report.quasi_identifiers) and not set(IDENTIFIERS) & set(report.sensitive)
    roles = {a["name"]: a["role"] for a in report.attributes}
    assert all(roles[c] == "identifier" for c in IDENTIFIERS)  # listed as dropped, never measured
    assert_no_identifier(json.dumps(report.to_dict(), default=str), values)
    monkeypatch.chdir(people["dir"])
    code, out, err = run_command(capsys, "check", "people.csv", "--schema", "schema.toml")
    assert code == 0, err
    assert_no_identifier(out + err, values)


def test_perturb_drops_identifiers(people):
    values = identifier_values(people)
    result = api.perturb(str(people["data"]), schema=str(people["schema"]), attributes=["sex", "zip", "income"],
                         d=0.1, gamma=0.2, seed=1, exploratory=True, out=str(people["dir"] / "view" / "v.csv"),
                         ledger=None)
    assert not set(IDENTIFIERS) & set(result.view.frame.columns)
    assert_no_identifier(every_file(people["dir"] / "view", set()), values, names=True)
    with pytest.raises(ParameterError, match="'email' is an identifier"):
        api.perturb(str(people["data"]), schema=str(people["schema"]), attributes=["sex", "email"], d=0.1,
                    gamma=0.2, seed=1, exploratory=True, ledger=None)


@pytest.mark.parametrize("text", ["count where email = 'someone0001@example.org'", "histogram case_number",
                                  "count where age > 30 and full_name is not null"])
def test_a_query_reading_an_identifier_is_refused_before_the_ledger(people, text, tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    with pytest.raises(ParameterError, match="declares a direct identifier") as caught:
        delta = 1e-6 if text.startswith("histogram") else 0.0  # a count refuses a δ it does not use
        api.query(str(people["data"]), text, epsilon=1.0, delta=delta, schema=str(people["schema"]),
                  ledger=str(ledger), budget=(5.0, 1e-5), randomness=1)
    assert "\n" not in str(caught.value)
    assert not ledger.exists() or not api.ledger_report(str(ledger))["datasets"]  # nothing registered or charged


def test_a_query_partitioned_by_an_identifier_is_refused(people):
    with pytest.raises(ParameterError, match="'case_number'"):
        api.query(str(people["data"]), "count where case_number = 'CASE-000001'", epsilon=1.0,
                  schema=str(people["schema"]), ledger=None, randomness=1, partition="case_number")


def test_query_cli_refuses_an_identifier_in_one_line(people, capsys, monkeypatch):
    monkeypatch.chdir(people["dir"])
    code, out, err = run_command(capsys, "query", "people.csv", "histogram email", "--epsilon", "1", "--delta",
                                 "1e-6", "--schema", "schema.toml", "--no-ledger", "--seed", "1")
    assert code == 2
    assert out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "'email'" in lines[0] and "identifier" in lines[0], err


def test_a_query_on_other_columns_is_answered(people):
    answer = api.query(str(people["data"]), "count where age >= 30", epsilon=1.0, schema=str(people["schema"]),
                       ledger=None, randomness=1)
    assert isinstance(answer.value, int)
    assert not [n for n in answer.notes if "identifier" in n]


@pytest.mark.parametrize("call", [
    lambda p: api.publish(str(p["data"]), schema=str(p["schema"]), qi=["age", "email"], epsilon=1.0, delta=1e-3,
                          ledger=None, seed=1),
    lambda p: api.publish(str(p["data"]), schema=str(p["schema"]), sensitive="case_number", epsilon=1.0,
                          delta=1e-3, ledger=None, seed=1),
    lambda p: api.anonymize(str(p["data"]), schema=str(p["schema"]), qi=["age", "full_name"], k=5),
    lambda p: api.check(str(p["data"]), schema=str(p["schema"]), qi=["email"]),
    lambda p: api.check(str(p["data"]), schema=str(p["schema"]), sensitive=["email"]),
], ids=["publish-qi", "publish-sensitive", "anonymize-qi", "check-qi", "check-sensitive"])
def test_naming_a_declared_identifier_as_qi_or_sensitive_is_refused(people, call):
    """An explicit role option never turns a declared identifier back into a published column."""
    with pytest.raises(SchemaError, match="declares a direct identifier") as caught:
        call(people)
    assert "\n" not in str(caught.value)


def test_publish_cli_refuses_an_identifier_in_qi_before_the_ledger(people, capsys, monkeypatch):
    monkeypatch.chdir(people["dir"])
    code, out, err = run_command(capsys, "publish", "people.csv", "--schema", "schema.toml", "--qi", "age,email",
                                 "--ledger", "ledger.sqlite3", "--budget", "5,1e-3", "--out", "out/r.csv")
    assert code == 2, err
    assert "'email'" in err and not (people["dir"] / "out").exists()
    ledger = people["dir"] / "ledger.sqlite3"
    assert not ledger.exists() or not api.ledger_report(str(ledger))["datasets"]


def test_the_refusal_is_a_crowdsafe_error():
    from crowdsafe.data import Schema

    schema = Schema.of({"id": "categorical", "age": "numeric"}, identifiers=["id"])
    with pytest.raises(CrowdsafeError):
        schema.with_roles(qi=["id", "age"])
    assert schema.with_roles(qi=["age"]).identifiers == ["id"]
