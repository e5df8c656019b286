"""``crowdsafe schema draft``: the file, the summary, overwrite refusal, one-line errors."""

from __future__ import annotations

import json
import tomllib

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
    assert code == 2 and stderr.strip().count("\n") == 0 and "exists; give --force" in stderr
    assert out.read_text(encoding="utf-8") == "keep me"
    code, _, stderr = run_command(capsys, "schema", "draft", "people", "--out", str(out), "--force")
    assert code == 0, stderr
    assert "[attributes.age]" in out.read_text(encoding="utf-8")


def test_draft_json_and_errors(capsys, tmp_path):
    code, stdout, _ = run_command(capsys, "schema", "draft", "adult", "--out", str(tmp_path / "a.toml"), "--json")
    payload = json.loads(stdout)
    assert code == 0 and payload["custodian_only"] and payload["identifiers"] == {}
    assert payload["quasi_identifiers"]["age"] == {"hierarchy": "intervals", "from_data": False}
    missing = str(tmp_path / "none.csv")
    code, _, stderr = run_command(capsys, "schema", "draft", missing, "--out", str(tmp_path / "b.toml"))
    assert code == 2 and stderr.startswith("crowdsafe: error: file not found") and stderr.count("\n") == 1
    code, _, stderr = run_command(capsys, "schema", "draft", "adult", "--out", str(tmp_path / "b.txt"))
    assert code == 2 and ".toml" in stderr
