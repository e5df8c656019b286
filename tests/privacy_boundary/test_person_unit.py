"""publish and perturb protect one row; a schema that names a person identifier says a person may
own several rows, which their theorems do not cover. Both refuse such a table before anything is
read, written or charged, from the schema alone (query bounds each person's rows instead:
``--max-rows-per-person``). The broken variant (the check removed) runs and certifies a per-row
guarantee for people with two rows each, and the same test sees it."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import polars as pl
import pytest

SCHEMA = """{person}
[attributes.pid]
type = "integer"
role = "identifier"
[attributes.age]
type = "integer"
hierarchy = {{ widths = [5, 10, 20] }}
[attributes.sex]
type = "categorical"
[attributes.income]
type = "categorical"
role = "sensitive"
"""

COMMANDS = {
    "plan-only": ["publish", "data.csv", "--schema", "schema.toml", "--epsilon", "1", "--delta", "1e-3",
                  "--plan-only"],
    "publish": ["publish", "data.csv", "--schema", "schema.toml", "--epsilon", "1", "--delta", "1e-3",
                "--ledger", "ledger.sqlite3", "--budget", "10,1e-2", "--seed", "1", "--out", "out/r.csv"],
    "perturb": ["perturb", "data.csv", "--schema", "schema.toml", "--gamma", "0.2", "--d", "0.1",
                "--attributes", "age,sex", "--domains", "domains.json", "--max-rows", "10000",
                "--ledger", "ledger.sqlite3", "--budget", "1000,1e-2", "--seed", "1", "--out", "out/v.csv"],
}


def _folder(tmp_path: Path, person: bool) -> Path:
    folder = tmp_path / ("with_person" if person else "rows")
    folder.mkdir()
    from crowdsafe.datasets import adult

    rows = adult("train", drop_missing=True).frame.head(2000).select("age", "sex", "income")
    rows.with_columns(pid=pl.int_range(pl.len()) // 2).select("pid", "age", "sex", "income").write_csv(
        folder / "data.csv")  # two rows per person
    (folder / "schema.toml").write_text(SCHEMA.format(person='person_id = "pid"' if person else ""), encoding="utf-8")
    (folder / "domains.json").write_text(json.dumps({"age": list(range(17, 91)), "sex": ["Female", "Male"]}),
                                         encoding="utf-8")
    return folder


def _run(folder: Path, argv: list[str]) -> tuple[int, str]:
    from crowdsafe.cli import main

    here = os.getcwd()
    os.chdir(folder)
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(here)
    return code, err.getvalue()


def _ledger_entries(folder: Path) -> list[dict]:
    """Every charge the folder's ledger holds (none when there is no ledger)."""
    if not (folder / "ledger.sqlite3").exists():
        return []
    from crowdsafe.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["ledger", "show", "--ledger", str(folder / "ledger.sqlite3"), "--json"])
    return [entry for dataset in json.loads(out.getvalue())["datasets"] for entry in dataset["entries"]]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_declared_person_is_refused_before_anything_is_charged(tmp_path, command):
    folder = _folder(tmp_path, person=True)
    code, err = _run(folder, COMMANDS[command])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "person identifier ('pid')" in err and "--max-rows-per-person" in err
    assert not (folder / "out").exists()
    assert _ledger_entries(folder) == []
    # the same rows with no person named run (one row is one person, as declared)
    rows = _folder(tmp_path, person=False)
    code, err = _run(rows, COMMANDS[command])
    assert code == 0, err
    assert len(_ledger_entries(rows)) == (0 if command == "plan-only" else 1)


def test_the_check_removed_is_caught(tmp_path, monkeypatch):
    """The broken variant: publish no longer looks at person_id; the refusal test's first
    assertion fails (the run succeeds and writes a release)."""
    from crowdsafe.anonymize import publish as plan
    from crowdsafe.drivers import publish

    monkeypatch.setattr(publish, "refuse_person_rows", lambda person_id, command: None)
    monkeypatch.setattr(plan, "refuse_person_rows", lambda person_id, command: None)
    folder = _folder(tmp_path, person=True)
    code, _ = _run(folder, COMMANDS["publish"])
    assert code == 0 and (folder / "out" / "r.csv").exists()
