"""A histogram without a public domain releases only the cells whose noisy count reaches the
threshold (the stability-based histogram), and nothing else of the cells present in the data.

Its noise is drawn over the cells the data holds, so the number of those cells, where a new value
sorts among them and their counts below the threshold depend on one row: none of it may leave the
run. The answer's ``components`` once listed every drawn count (found by a neighbouring-table
sweep): one added row with a new value lengthened that list on every run.
"""

from __future__ import annotations

import json

import polars as pl
import pytest
from boundary_data import base_table

from crowdsafe import cli
from crowdsafe.mechanisms import query_noise

NEW_VALUE = "Zz-only-in-the-neighbour"


def _answer(directory, frame: pl.DataFrame, capsys) -> dict:
    frame.write_csv(directory / "data.csv")
    (directory / "schema.toml").write_text(
        '[attributes.education]\ntype = "categorical"\n[attributes.age]\ntype = "integer"\n', encoding="utf-8")
    capsys.readouterr()
    code = cli.main(["query", str(directory / "data.csv"), "histogram education", "--schema",
                     str(directory / "schema.toml"), "--epsilon", "0.5", "--delta", "1e-6", "--budget", "10,1e-5",
                     "--ledger", str(directory / "ledger.sqlite3"), "--seed", "1", "--json"])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def _only_released(answer: dict) -> bool:
    """Whether the public answer's components hold the released cells' counts and nothing more."""
    released = [cell["count"] for cell in answer["value"]]
    return answer["components"]["cells"]["value"] == released


@pytest.fixture(scope="module")
def tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    table = base_table().select("age", "education")
    neighbour = pl.concat([table, pl.DataFrame({"age": [37], "education": [NEW_VALUE]})])
    return table, neighbour


def test_the_components_hold_the_released_cells_only(tables, tmp_path, capsys):
    answers = []
    for name, frame in zip(("d", "neighbour"), tables):
        (tmp_path / name).mkdir()
        answers.append(_answer(tmp_path / name, frame, capsys))
    d, neighbour = answers
    assert "threshold" not in json.dumps(d["value"])  # (the value is the released table)
    assert len(d["value"]) < tables[0].get_column("education").n_unique()  # some cells were held back
    for answer in (d, neighbour):
        assert _only_released(answer)
        assert NEW_VALUE not in json.dumps(answer)  # one row: far below the threshold
    # the shape of everything public but the released cells and their counts is the same
    assert len(d["components"]["cells"]["value"]) == len(d["value"])


def test_the_check_fails_when_the_drawn_counts_leave_the_run(tables, tmp_path, capsys, monkeypatch):
    """The broken variant: every drawn count in the components, as before the fix."""
    monkeypatch.setattr(query_noise, "released_only", lambda noisy, kept: noisy)
    answer = _answer(tmp_path, tables[1], capsys)
    assert not _only_released(answer)
    assert len(answer["components"]["cells"]["value"]) == tables[1].get_column("education").n_unique()
