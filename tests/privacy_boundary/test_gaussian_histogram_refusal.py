"""A Gaussian histogram over values the data holds (no public domain) is refused, never answered
with another mechanism: the thresholded histogram that releases such cells has its threshold and
δ proven for discrete Laplace noise only. The refusal says why and how to get the Gaussian (declare
the column's values), in one line, before anything is charged, and it is fixed by the query, the
schema and the parameters: the same on a table and on it plus one row (same seed)."""

from __future__ import annotations

import json

import polars as pl
import pytest
from boundary_data import base_table

from cli_helpers import run_command

SCHEMA = '[attributes.education]\ntype = "categorical"\n[attributes.age]\ntype = "integer"\n'


@pytest.fixture(scope="module")
def tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    table = base_table().select("age", "education")
    return table, pl.concat([table, pl.DataFrame({"age": [37], "education": ["Only-in-the-neighbour"]})])


def _gaussian(directory, frame: pl.DataFrame, capsys, query: str) -> tuple[int, str, str]:
    directory.mkdir(exist_ok=True)
    frame.write_csv(directory / "data.csv")
    (directory / "schema.toml").write_text(SCHEMA, encoding="utf-8")
    capsys.readouterr()
    return run_command(capsys, "query", str(directory / "data.csv"), query, "--schema", str(directory / "schema.toml"),
                       "--mechanism", "gaussian", "--epsilon", "0.5", "--delta", "1e-6", "--budget", "10,1e-5",
                       "--ledger", str(directory / "ledger.sqlite3"), "--seed", "1", "--json")


def _entries(directory, capsys) -> list:
    code, shown, err = run_command(capsys, "ledger", "show", "--ledger", str(directory / "ledger.sqlite3"), "--json")
    assert code == 0, err
    return [entry for dataset in json.loads(shown).get("datasets", []) for entry in dataset.get("entries", [])]


def test_refused_alike_on_neighbouring_tables_saying_why_and_how(tables, tmp_path, capsys):
    refusals = []
    for name, frame in zip(("d", "neighbour"), tables):
        code, out, err = _gaussian(tmp_path / name, frame, capsys, "histogram education")
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert not _entries(tmp_path / name, capsys)  # nothing charged
        refusals.append(err)
    assert refusals[0] == refusals[1]  # fixed before the data is read: the same on D and D + one row
    said = refusals[0]
    assert "the values of 'education' are not public" in said
    assert "proven for discrete Laplace noise only" in said  # why: the threshold's proof
    assert "to use the Gaussian give its values (education in ('a', 'b'))" in said  # how
    assert "Traceback" not in said


def test_with_the_values_declared_the_gaussian_runs(tables, tmp_path, capsys):
    values = ", ".join(f"'{v}'" for v in sorted(set(tables[0].get_column("education").to_list())))
    code, out, err = _gaussian(tmp_path / "declared", tables[0], capsys, f"histogram education in ({values})")
    assert code == 0, err
    assert "Gaussian" in json.loads(out)["mechanism"]
    assert len(_entries(tmp_path / "declared", capsys)) == 1
