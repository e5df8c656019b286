"""With no schema (inferred), a column whose name looks like a direct identifier is warned about.

The warning comes from the column's name alone (:func:`crowdsafe.data.identifiers.name_warnings`):
it depends on no row, so it is public and identical on a table and on the table minus one row.
The library returns it in the notes of what it hands back (Publication, CheckReport, Release,
QueryAnswer); the command line prints one ``crowdsafe: warning:`` line per column on stderr. Such a column
is still used as the inferred roles say (today's behaviour): the warning asks the custodian to
declare it, and only columns that are published or read are warned about.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api
from crowdsafe.data import Schema
from crowdsafe.data.identifiers import is_name_warning, name_warning, name_warnings

ROWS = 400


def warning_line(column: str, what: str) -> str:
    return (f"crowdsafe: warning: column '{column}' looks like {what} (a direct identifier); declare it role = "
            "\"identifier\" in a schema (crowdsafe schema draft DATA --out schema.toml writes one) or drop it")


EMAIL = warning_line("email", "an email address")
NAME = warning_line("name", "a person's name")
PATIENT = warning_line("PatientID", "an identifier column")


def people_frame(rows: int = ROWS) -> pl.DataFrame:
    rng = np.random.default_rng(5)
    return pl.DataFrame({
        "PatientID": [f"P{i:05d}" for i in range(rows)],
        "name": [f"Someone {i}" for i in range(rows)],
        "email": [f"p{i}@example.org" for i in range(rows)],
        "age": rng.integers(20, 80, rows),
        "sex": rng.choice(["F", "M"], rows),
        "county_name": rng.choice(["Ulster", "Tompkins"], rows),  # an attribute, not a person
    })


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    people_frame().write_csv(path)
    return path


def notes_warnings(notes) -> list[str]:
    return [f"crowdsafe: warning: {n}" for n in notes if is_name_warning(n)]


# -- the library ---------------------------------------------------------------------------------


def test_name_warnings_only_for_an_inferred_schema_and_the_columns_used():
    frame = people_frame(5)
    inferred = Schema.infer(frame)
    assert [f"crowdsafe: warning: {w}" for w in name_warnings(inferred, frame.columns)] == [PATIENT, NAME, EMAIL]
    assert name_warnings(inferred, ["age", "sex", "county_name"]) == []
    assert name_warnings(inferred, ["email", "email"]) == [name_warning("email", "an email address")]
    declared = Schema.of({c: "categorical" for c in frame.columns})
    assert name_warnings(declared, frame.columns) == []  # a declared schema is the custodian's decision
    assert all(is_name_warning(w) for w in name_warnings(inferred, frame.columns))
    assert not is_name_warning("schema inferred from the data: every attribute is a quasi-identifier")


def test_publish_warns_about_published_columns_only(table):
    everything = api.publish(str(table), epsilon=1.0, delta=1e-3, scheme="coarse", ledger=None, seed=1)
    assert notes_warnings(everything.notes) == [PATIENT, NAME, EMAIL]
    assert notes_warnings(everything.summary()["notes"]) == [PATIENT, NAME, EMAIL]
    # kept as quasi-identifiers (today's behaviour): generalized like any other column
    assert "email" in everything.release.frame.columns
    chosen = api.publish(str(table), qi=["age", "sex", "email"], epsilon=1.0, delta=1e-3, scheme="coarse",
                         ledger=None, seed=1)
    assert notes_warnings(chosen.notes) == [EMAIL]
    none = api.publish(str(table), qi=["age", "sex"], epsilon=1.0, delta=1e-3, scheme="coarse", ledger=None,
                       seed=1)
    assert notes_warnings(none.notes) == []
    columns = api.publish(str(table), columns=["age", "name"], epsilon=1.0, delta=1e-3, scheme="coarse",
                          ledger=None, seed=1)
    assert notes_warnings(columns.notes) == [NAME]


def test_check_warns_about_the_roles_it_measures(table):
    assert notes_warnings(api.check(str(table)).notes) == [PATIENT, NAME, EMAIL]
    assert notes_warnings(api.check(str(table), qi=["age", "sex"]).notes) == []
    assert notes_warnings(api.check(str(table), qi=["age"], sensitive=["name"]).notes) == [NAME]


def test_anonymize_warns_about_every_published_column(table):
    # a classic release publishes the columns that are not quasi-identifiers as they are
    release = api.anonymize(str(table), qi=["age", "sex"], k=5)
    assert notes_warnings(release.notes) == [PATIENT, NAME, EMAIL]
    assert notes_warnings(release.summary()["notes"]) == [PATIENT, NAME, EMAIL]


def test_query_warns_about_the_columns_it_reads(table):
    answer = api.query(str(table), "count where email is not null and age >= 30", epsilon=1.0, ledger=None,
                       randomness=1)
    assert notes_warnings(answer.notes) == [EMAIL]
    assert notes_warnings(answer.as_dict()["notes"]) == [EMAIL]
    plain = api.query(str(table), "count where age >= 30", epsilon=1.0, ledger=None, randomness=1)
    assert notes_warnings(plain.notes) == []


def test_a_partial_schema_warns_about_the_columns_it_left_out(table, tmp_path):
    """A schema that declares some columns: the ones it does not mention are inferred, so a name
    that looks like an identifier among them is warned about; the declared ones are not."""
    from crowdsafe.data.schema import complete_schema

    frame = people_frame(5)
    partial = complete_schema(Schema.of({"age": "numeric", "name": "categorical", "sex": "categorical"}), frame)
    assert partial.undeclared == {"PatientID", "email", "county_name"}
    assert [partial.was_inferred(c) for c in ("age", "name", "email")] == [False, False, True]
    assert [f"crowdsafe: warning: {w}" for w in name_warnings(partial, frame.columns)] == [PATIENT, EMAIL]
    assert name_warnings(partial.select(["age", "name"]), ["age", "name"]) == []
    schema_file = tmp_path / "partial.toml"
    schema_file.write_text('[attributes.age]\ntype = "numeric"\n\n[attributes.name]\ntype = "categorical"\n')
    report = api.check(str(table), schema=str(schema_file))
    assert notes_warnings(report.notes) == [PATIENT, EMAIL]
    published = api.publish(str(table), schema=str(schema_file), qi=["age", "sex", "email", "name"], epsilon=1.0,
                            delta=1e-3, scheme="coarse", ledger=None, seed=1)
    assert notes_warnings(published.notes) == [EMAIL]


# -- the command line ----------------------------------------------------------------------------


def cli_commands(out: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each command on people.csv (no schema), and the warning lines it must print."""
    return {
        "publish": (["publish", "people.csv", "--qi", "age,sex,email", "--scheme", "coarse", "--no-ledger",
                     "--seed", "1", "--out", f"{out}/r.csv"], [EMAIL]),
        "publish-plan-only": (["publish", "people.csv", "--qi", "age,name", "--plan-only"], [NAME]),
        "check": (["check", "people.csv"], [PATIENT, NAME, EMAIL]),
        "check-qi": (["check", "people.csv", "--qi", "age,sex"], []),
        "anonymize": (["anonymize", "people.csv", "--qi", "age,sex", "--k", "5"], [PATIENT, NAME, EMAIL]),
        "query": (["query", "people.csv", "count where name is not null", "--epsilon", "1", "--no-ledger",
                   "--seed", "1"], [NAME]),
    }


@pytest.mark.parametrize("command", sorted(cli_commands("out")))
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_cli_prints_one_warning_line_per_column_on_stderr(command, as_json, table, capsys, monkeypatch):
    monkeypatch.chdir(table.parent)
    argv, expected = cli_commands("out")[command]
    code, out, err = run_command(capsys, *argv, *(["--json"] if as_json else []))
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("crowdsafe: warning:")]
    # --plan-only also warns, once, that a release of this schema-less table would not be fit for release
    assert [line for line in warnings if "schema inferred from the data" not in line] == expected
    assert sum("schema inferred from the data" in line for line in warnings) == (command == "publish-plan-only")
    assert "looks like" not in "\n".join(line for line in out.splitlines() if line.startswith("note:"))
    if not as_json:
        assert "(a direct identifier)" not in out  # printed once, on stderr


@pytest.mark.parametrize("command", sorted(cli_commands("out")))
def test_the_warning_lines_are_the_same_on_the_table_minus_one_row(command, tmp_path, capsys, monkeypatch):
    """Name-based: removing a row (here the first) changes no warning line."""
    lines = []
    for side, frame in (("D", people_frame()), ("D-1", people_frame().slice(1))):
        (tmp_path / side).mkdir()
        frame.write_csv(tmp_path / side / "people.csv")
        monkeypatch.chdir(tmp_path / side)
        code, _, err = run_command(capsys, *cli_commands("out")[command][0])
        assert code == 0, err
        lines.append([line for line in err.splitlines() if line.startswith("crowdsafe: warning:")])
    assert lines[0] == lines[1]


def test_perturb_warns_with_an_identifier_warning(table, capsys, monkeypatch):
    """perturb's result has no notes list: a crowdsafe warning class, printed by the CLI as a line."""
    from crowdsafe.data.identifiers import IdentifierWarning

    with pytest.warns(IdentifierWarning) as caught:
        api.perturb(str(table), attributes=["sex", "email"], d=0.1, gamma=0.2, seed=1, exploratory=True, ledger=None)
    assert [f"crowdsafe: warning: {w.message}" for w in caught if w.category is IdentifierWarning] == [EMAIL]
    with pytest.warns(IdentifierWarning) as caught:
        api.plan_perturbation(str(table), d=0.1, gamma=0.2, exploratory=True)  # every column by default
    assert [f"crowdsafe: warning: {w.message}" for w in caught
            if w.category is IdentifierWarning] == [PATIENT, NAME, EMAIL]
    monkeypatch.chdir(table.parent)
    code, _, err = run_command(capsys, "perturb", "--no-ledger", "people.csv", "--attributes", "sex,name", "--d", "0.1",
                               "--gamma", "0.2", "--exploratory", "--seed", "1", "--out", "v.csv")
    assert code == 0, err
    assert [line for line in err.splitlines() if line.startswith("crowdsafe: warning:")] == [NAME]


def test_partial_schema_warnings_are_the_same_on_the_table_minus_one_row(tmp_path, capsys, monkeypatch):
    """The warnings for a partial schema's undeclared columns come from names alone: removing a row
    changes no warning line, and the undeclared identifier-like columns are warned about."""
    lines = []
    for side, frame in (("D", people_frame()), ("D-1", people_frame().slice(1))):
        (tmp_path / side).mkdir()
        frame.write_csv(tmp_path / side / "people.csv")
        (tmp_path / side / "partial.toml").write_text('[attributes.age]\ntype = "numeric"\n\n'
                                                      '[attributes.name]\ntype = "categorical"\n')
        monkeypatch.chdir(tmp_path / side)
        code, _, err = run_command(capsys, "check", "people.csv", "--schema", "partial.toml")
        assert code == 0, err
        lines.append([line for line in err.splitlines() if line.startswith("crowdsafe: warning:")])
    assert lines[0] == lines[1] == [PATIENT, EMAIL]
