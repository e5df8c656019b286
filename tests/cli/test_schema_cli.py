"""``crowdsafe schema draft``: the file, the summary, overwrite refusal, one-line errors."""

from __future__ import annotations

import json
import tomllib

import pytest

from cli_helpers import run_command
from crowdsafe.data import Schema
from crowdsafe.datasets.people import write_people_csv


def test_draft_writes_a_schema_and_a_custodian_only_summary(capsys, tmp_path):
    data = write_people_csv(tmp_path / "people.csv", 1_000, seed=4)
    out = tmp_path / "people.toml"
    code, stdout, stderr = run_command(capsys, "schema", "draft", str(data), "--out", str(out))
    assert code == 0, stderr
    assert "custodian-only" in stdout
    assert "identifiers (dropped before release): id (name), first_name (name)" in stdout
    assert "age [intervals]" in stdout and f"wrote {out}" in stdout
    assert Schema.from_toml(out).identifiers == ["id", "first_name", "last_name", "email", "phone",
                                                 "date_of_birth", "case_number"]
    assert tomllib.loads(out.read_text(encoding="utf-8"))["attributes"]["age"]["hierarchy"]["top"] == 120


def test_draft_refuses_to_overwrite_without_force(capsys, tmp_path):
    out = tmp_path / "s.toml"
    out.write_text("keep me", encoding="utf-8")
    code, _, stderr = run_command(capsys, "schema", "draft", "people", "--out", str(out))
    assert code == 2 and stderr.strip().count("\n") == 0 and "s.toml exists: give --force to replace it" in stderr
    assert out.read_text(encoding="utf-8") == "keep me"
    code, _, stderr = run_command(capsys, "schema", "draft", "people", "--out", str(out), "--force")
    assert code == 0, stderr
    assert "[attributes.age]" in out.read_text(encoding="utf-8")


def test_draft_json_and_errors(capsys, tmp_path):
    code, stdout, _ = run_command(capsys, "schema", "draft", "adult", "--out", str(tmp_path / "a.toml"), "--json")
    payload = json.loads(stdout)
    assert code == 0 and payload["custodian_only"] and payload["identifiers"] == {}
    assert payload["quasi_identifiers"]["age"] == {"hierarchy": "intervals", "from_data": []}
    missing = str(tmp_path / "none.csv")
    code, _, stderr = run_command(capsys, "schema", "draft", missing, "--out", str(tmp_path / "b.toml"))
    assert code == 2 and stderr.startswith("crowdsafe: error: file not found") and stderr.count("\n") == 1
    code, _, stderr = run_command(capsys, "schema", "draft", "adult", "--out", str(tmp_path / "b.txt"))
    assert code == 2 and ".toml" in stderr


@pytest.mark.slow
def test_an_unedited_draft_publishes_not_fit_until_its_markers_are_deleted(capsys, tmp_path):
    """The walk-through of docs/own-data.md: draft, publish (NOT fit, naming each marked column),
    delete the from_data lines, publish again (fit: a ledger and no seed)."""
    data = write_people_csv(tmp_path / "people.csv", 6_000, seed=5)
    toml = tmp_path / "people.toml"
    code, stdout, stderr = run_command(capsys, "schema", "draft", str(data), "--out", str(toml))
    assert code == 0, stderr
    assert ("marked from_data: age (type integer), sex (type categorical, hierarchy flat), zip (hierarchy mask "
            "depth), arrest_date (type date), charge (type categorical, hierarchy groups), disposition (type "
            "categorical, hierarchy groups); the identifiers' types are marked too") in stdout
    code, _, stderr = run_command(capsys, "publish", str(data), "--schema", str(toml), "--plan-only")
    assert code == 0 and ("crowdsafe: warning: a release would be NOT fit for release: unreviewed schema draft: "
                          "column 'zip'") in stderr
    common = ["publish", str(data), "--schema", str(toml), "--epsilon", "1", "--delta", "1e-6",
              "--ledger", str(tmp_path / "ledger.db"), "--budget", "5,1e-5", "--no-report"]
    code, stdout, stderr = run_command(capsys, *common, "--out", str(tmp_path / "a" / "r.csv"))
    assert code == 0, stderr
    assert "(unreviewed schema draft: NOT fit for release)" in stdout
    assert ("  NOT fit for release:\n    unreviewed schema draft: column 'age': type integer read from the data"
            in stdout)
    assert "unreviewed schema draft: column 'charge': type categorical and hierarchy groups read from the data" \
        in stdout
    code, stdout, stderr = run_command(capsys, *common, "--out", str(tmp_path / "b" / "r.csv"), "--json")
    payload = json.loads(stdout)
    assert code == 0 and not payload["fit_for_release"]
    assert [r.split(":")[1].strip() for r in payload["unfit_reasons"]] == [
        "column 'age'", "column 'arrest_date'", "column 'charge'", "column 'disposition'", "column 'sex'",
        "column 'zip'"]
    certificate = json.loads((tmp_path / "b" / "r.certificate.json").read_text(encoding="utf-8"))
    assert certificate["unreviewed_schema"]["zip"] == ["hierarchy mask depth"]

    text = toml.read_text(encoding="utf-8")
    toml.write_text("\n".join(line for line in text.splitlines() if not line.startswith("from_data =")) + "\n",
                    encoding="utf-8")
    code, stdout, stderr = run_command(capsys, *common, "--out", str(tmp_path / "c" / "r.csv"))
    assert code == 0, stderr
    assert "\n  fit for release\n" in stdout and "unreviewed" not in stdout + stderr


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_an_alpha_beta_view_on_a_drafted_order_prints_why_it_is_not_fit(capsys, tmp_path):
    data = write_people_csv(tmp_path / "people.csv", 2_000, seed=5)
    toml = tmp_path / "people.toml"
    assert run_command(capsys, "schema", "draft", str(data), "--out", str(toml))[0] == 0
    (tmp_path / "domains.json").write_text('{"sex": ["F", "M"]}', encoding="utf-8")
    code, stdout, stderr = run_command(
        capsys, "perturb", "--no-ledger", str(data), "--schema", str(toml), "--attributes", "disposition,sex",
        "--domains", str(tmp_path / "domains.json"), "--max-rows", "10000", "--gamma", "0.5", "--d", "0.1",
        "--out", str(tmp_path / "view.csv"), "--no-report")
    assert code == 0, stderr
    assert ("NOT fit for release: unreviewed schema draft: column 'disposition': type categorical and hierarchy "
            "groups read") in stdout


def test_a_query_over_an_unreviewed_order_prints_why_it_is_not_fit(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("size\n" + "S\nM\nL\n" * 20, encoding="utf-8")
    toml = tmp_path / "s.toml"
    toml.write_text('[attributes.size]\ntype = "ordinal"\norder = ["S", "M", "L"]\nfrom_data = ["order"]\n',
                    encoding="utf-8")
    code, stdout, stderr = run_command(capsys, "query", str(path), "histogram size", "--epsilon", "1", "--schema",
                                       str(toml), "--no-ledger")
    assert code == 0, stderr
    assert "NOT fit for release: unreviewed schema draft: column 'size': order read from the data" in stdout
    code, stdout, _ = run_command(capsys, "query", str(path), "histogram size", "--epsilon", "1", "--schema",
                                  str(toml), "--no-ledger", "--json")
    assert json.loads(stdout)["unreviewed_schema"] == {"size": ["order"]}


def test_draft_of_a_column_with_inf_and_a_huge_number_is_written(capsys, tmp_path):
    """1e308, inf, -inf and 5 in one numeric column: the draft is written (it was an internal
    error: the widest interval and the top bound were inf) and loads."""
    data = tmp_path / "inf4.csv"
    data.write_text("income\n" + "".join(f"{v}\n" for v in ("1e308", "inf", "-inf", "5") * 20))
    out = tmp_path / "s4.toml"
    code, _, stderr = run_command(capsys, "schema", "draft", str(data), "--out", str(out))
    assert code == 0, stderr
    assert "inf" not in tomllib.loads(out.read_text(encoding="utf-8"))["attributes"]["income"]["hierarchy"].values()
    assert Schema.from_toml(out)["income"].from_data == ("type real", "hierarchy bounds")


@pytest.mark.parametrize("separator", [";;", "", '"', "§"])
def test_a_separator_that_is_not_one_character_is_one_line(capsys, tmp_path, separator):
    out = tmp_path / "x.toml"
    code, _, stderr = run_command(capsys, "schema", "draft", str(write_people_csv(tmp_path / "p.csv", 50, seed=1)),
                                  "--out", str(out), "--separator", separator)
    assert code == 2 and stderr.count("\n") == 1, stderr
    assert stderr.startswith("crowdsafe: error: --separator must be one ASCII character") and repr(separator) in stderr
    assert not out.exists()
