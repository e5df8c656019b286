"""Paths are literal: a file name with glob characters ([ ] * ? ** { } and spaces) is that file,
read whole or batch by batch, never a pattern matching the files beside it (issue 33, point 4).
Each test puts a different table at the name a glob would match, so reading the wrong file shows."""

from __future__ import annotations

import json

import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.data import load
from crowdsafe.data.io import read_table
from crowdsafe.data.streamed_table import load_or_stream
from crowdsafe.data.streaming import frequency_table, parquet_parts, scan_table

NAMES = ["data[1].csv", "kunden[2024].csv", "a*b.csv", "what?.csv", "x**y.csv", "with space [1].csv",
         "{a,b}.csv", "[!x].csv"]
# the names a glob of each would match, given a table of their own
DECOYS = ["data1.csv", "kunden2.csv", "aXb.csv", "whatX.csv", "xy.csv", "with space 1.csv", "a.csv", "y.csv"]
MINE = "age,sex\n30,F\n41,M\n52,F\n"  # 3 rows
DECOY = "age,sex\n99,M\n"  # 1 row


@pytest.fixture
def folder(tmp_path):
    for name, decoy in zip(NAMES, DECOYS):
        (tmp_path / name).write_text(MINE)
        (tmp_path / decoy).write_text(DECOY)
    return tmp_path


@pytest.mark.parametrize("name", NAMES)
def test_a_csv_name_with_glob_characters_is_that_file(folder, name):
    path = folder / name
    assert read_table(path).to_dict(as_series=False) == {"age": [30, 41, 52], "sex": ["F", "M", "F"]}
    assert load(path).n_rows == 3
    assert scan_table(path).lazy.collect().height == 3
    counts = frequency_table(path, ["sex"])
    assert counts.to_dict(as_series=False) == {"sex": ["F", "M"], "count": [2, 1]}


@pytest.mark.parametrize("name", NAMES[:4])
def test_the_streamed_read_takes_the_literal_file_too(folder, name, monkeypatch):
    from crowdsafe.data import streaming

    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    table = load_or_stream(folder / name)
    assert not hasattr(table, "frame")  # streamed, batch by batch
    assert table.n_rows == 3
    assert table.rows.collect().get_column("age").to_list() == [30, 41, 52]
    monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 28)
    assert frequency_table(folder / name, ["age"]).height == 3


@pytest.mark.parametrize("name", ["p[1].parquet", "p*.parquet", "p?.parquet"])
def test_a_parquet_name_with_glob_characters_is_that_file(tmp_path, name):
    pl.DataFrame({"age": [30, 41, 52]}).write_parquet(tmp_path / name)
    pl.DataFrame({"age": [99]}).write_parquet(tmp_path / "p1.parquet")
    pl.DataFrame({"age": [98]}).write_parquet(tmp_path / "pX.parquet")
    assert read_table(tmp_path / name).get_column("age").to_list() == [30, 41, 52]
    assert scan_table(tmp_path / name).lazy.collect().get_column("age").to_list() == [30, 41, 52]


def test_a_folder_of_parts_named_with_glob_characters_lists_its_own_parts(tmp_path):
    parts = tmp_path / "runs[1]**"
    parts.mkdir()
    pl.DataFrame({"age": [30, 41]}).write_parquet(parts / "part-1.parquet")
    pl.DataFrame({"age": [52]}).write_parquet(parts / "part-0.parquet")
    (parts / "notes.txt").write_text("not a part")
    other = tmp_path / "runs1"
    other.mkdir()
    pl.DataFrame({"age": [99]}).write_parquet(other / "part-0.parquet")
    assert [p.name for p in parquet_parts(parts)] == ["part-0.parquet", "part-1.parquet"]
    assert frequency_table(parts, ["age"]).to_dict(as_series=False) == {"age": [30, 41, 52], "count": [1, 1, 1]}
    assert scan_table(parts).lazy.collect().get_column("age").sort().to_list() == [30, 41, 52]


def test_the_command_line_reads_the_literal_file(folder, capsys):
    assert cli.main(["check", str(folder / "data[1].csv"), "--k", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 3


def test_a_view_folder_named_with_glob_characters(tmp_path):
    from crowdsafe.perturb.view import _read_text
    from crowdsafe.report.view_scan import _scan

    view = tmp_path / "view[1].parquet"
    view.mkdir()
    pl.DataFrame({"age": ["30", "41"]}).write_parquet(view / "part-0.parquet")
    decoy = tmp_path / "view1.parquet"
    decoy.mkdir()
    pl.DataFrame({"age": ["99"]}).write_parquet(decoy / "part-0.parquet")
    assert _read_text(view).get_column("age").to_list() == ["30", "41"]
    assert _scan(view, escaped=False).collect().get_column("age").to_list() == ["30", "41"]
