"""A histogram's cells come from a hierarchy only when it is a bundled dataset's declared one,
and that provenance cannot be spoofed by a file name.

A sweep (pb6, item 1) found ``histogram_domain`` deciding "bundled" from the schema's ``source``
ending in ``(bundled)``: ``source`` is the schema file's path, so a file named ``x (bundled)``
turned a ``flat`` hierarchy (built from the values present) into a public domain. A histogram of
D and of D plus one row with a new category then had 5 and 6 cells with δ = 0, certified fit for
release. Now the schema carries a ``bundled`` flag that only :mod:`crowdsafe.datasets` sets, and
the hierarchy must not be observed. Both tables are refused before the charge, in the words
``schema.toml`` gets, by ``query`` and by ``report --before`` (the same function).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from boundary_data import base_table

from crowdsafe import api, cli
from crowdsafe.data.hierarchy import ObservedHierarchy
from crowdsafe.data.schema import Schema
from crowdsafe.datasets import adult
from crowdsafe.mechanisms.query_aggregates import histogram_domain
from crowdsafe.mechanisms.query_language import parse
from crowdsafe.privacy.ledger import Ledger

SCHEMA = """[attributes.age]
role = "quasi-identifier"
type = "integer"
[attributes.race]
role = "quasi-identifier"
type = "categorical"
hierarchy = { flat = true }
[attributes.sex]
role = "quasi-identifier"
type = "categorical"
"""
NEW = "Zz-new-race"
SCHEMA_NAMES = ("x (bundled)", "schema.toml", "adult (bundled)")


def _tables() -> dict[str, pl.DataFrame]:
    table = base_table().select("age", "race", "sex").head(1500)
    return {"D": table, "D1": pl.concat([table, pl.DataFrame({"age": [37], "race": [NEW], "sex": ["Male"]})])}


def _write(folder: Path, frame: pl.DataFrame) -> Path:
    folder.mkdir(parents=True)
    frame.write_csv(folder / "data.csv")
    for name in SCHEMA_NAMES:
        (folder / name).write_text(SCHEMA, encoding="utf-8")
    return folder / "data.csv"


def _spent(ledger: Path) -> float:
    with Ledger(ledger) as book:
        return sum(entry.loss.epsilon for entry in book.entries())


def _query(capsys, data: Path, schema: str) -> tuple[int, str, str, float]:
    ledger = data.parent / f"{schema}.sqlite3"
    capsys.readouterr()
    code = cli.main(["query", str(data), "histogram race", "--schema", str(data.parent / schema), "--epsilon", "1",
                     "--budget", "10,0", "--ledger", str(ledger), "--seed", "1", "--json"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, _spent(ledger)


@pytest.mark.slow  # half a second or more (the quick loop: README)
@pytest.mark.parametrize("schema", SCHEMA_NAMES)
def test_a_schema_file_named_bundled_gives_no_public_domain(capsys, tmp_path, schema):
    runs = {side: _query(capsys, _write(tmp_path / side, frame), schema) for side, frame in _tables().items()}
    for code, out, err, spent in runs.values():
        assert code == 2 and out == "" and spent == 0.0  # refused before the charge
        assert "the values of 'race' are not public" in err
        assert NEW not in err
    assert runs["D"] == runs["D1"]  # one refusal, whatever the rows


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_refusal_is_the_one_schema_toml_gets(capsys, tmp_path):
    data = _write(tmp_path / "D1", _tables()["D1"])
    assert _query(capsys, data, "x (bundled)")[1:3] == _query(capsys, data, "schema.toml")[1:3]


def _report_before(capsys, folder: Path, frame: pl.DataFrame, schema: str) -> tuple[int, str, float]:
    data = _write(folder, frame)
    release = folder / "out" / "r.csv"
    assert cli.main(["publish", str(data), "--schema", str(folder / schema), "--epsilon", "1", "--delta", "1e-6",
                     "--seed", "1", "--no-ledger", "--qi", "race", "--scheme", "none", "--out", str(release)]) == 0
    ledger = folder / "ledger.sqlite3"
    assert cli.main(["query", str(data), "count", "--schema", str(folder / schema), "--epsilon", "0.5",
                     "--budget", "10,0", "--ledger", str(ledger)]) == 0  # (a budget for the table)
    capsys.readouterr()
    code = cli.main(["report", str(release), "--before", str(data), "--schema", str(folder / schema),
                     "--before-epsilon", "1", "--ledger", str(ledger), "--out", str(folder / "r.html")])
    return code, capsys.readouterr().err.replace(str(folder), "FOLDER"), _spent(ledger)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_report_before_is_refused_alike_on_neighbours(capsys, tmp_path):
    runs = [_report_before(capsys, tmp_path / side, frame, "x (bundled)") for side, frame in _tables().items()]
    assert runs[0] == runs[1]
    code, err, spent = runs[0]
    assert code == 2 and spent == 0.5 and "the before-distribution of 'race' needs the column's public values" in err


def test_the_bundled_dataset_keeps_its_hierarchies_as_domains():
    answer = api.query("adult", "histogram race", epsilon=1.0, ledger=None)
    assert any("hierarchy of the bundled dataset" in note for note in answer.notes)
    assert len(answer.value) == 5


def test_only_the_loader_marks_a_schema_bundled_and_an_observed_hierarchy_is_never_a_domain(tmp_path):
    dataset = adult()
    assert dataset.schema.bundled
    (tmp_path / "adult (bundled)").write_text(SCHEMA, encoding="utf-8")
    assert not Schema.from_toml(tmp_path / "adult (bundled)").bundled
    dimension = parse("histogram race").dimensions[0]
    assert histogram_domain(dataset, dimension)[0] is not None
    observed = replace(dataset, hierarchies={**dataset.hierarchies,
                                             "race": ObservedHierarchy.of(dataset.hierarchies["race"])})
    assert histogram_domain(observed, dimension) == (None, "values present in the data (private)")
    json.dumps(dataset.schema.to_dict())  # (the flag adds nothing to what a schema prints)


def test_a_schema_file_named_inferred_is_a_declared_schema(tmp_path, monkeypatch):
    """``source`` is compared with the words "inferred" and "declared" (was_inferred, summaries):
    a file of that name is labelled as a path, so it cannot pass for an inferred schema either."""
    monkeypatch.chdir(tmp_path)
    Path("inferred").write_text(SCHEMA, encoding="utf-8")
    schema = Schema.from_toml("inferred")
    assert schema.source != "inferred" and not schema.was_inferred("race")
