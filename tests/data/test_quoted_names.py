"""A column name holding a double quote (``quo"te``, written ``"quo""te"`` in CSV) is read as
written by every reader, whole or batch by batch, and survives a write and a read unchanged."""

from __future__ import annotations

import gzip
import json

import pytest

from crowdsafe import cli
from crowdsafe.data import load, streaming, write
from crowdsafe.data.io import read_table
from crowdsafe.data.streamed_table import load_or_stream
from crowdsafe.data.streaming import frequency_table, scan_table
from crowdsafe.errors import InputError

NAMES = ['quo"te', "sex", 'say "hi"', '"']
HEADER = '"quo""te",sex,"say ""hi""",""""'
ROWS = [f"{20 + i % 7},{'FM'[i % 2]},{i % 3},x" for i in range(60)]


def _file(tmp_path, name="t.csv"):
    path = tmp_path / name
    data = ("\n".join([HEADER, *ROWS]) + "\n").encode()
    path.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
    return path


@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz"])
def test_every_reader_reads_the_names_as_written(tmp_path, monkeypatch, name):
    path = _file(tmp_path, name)
    assert read_table(path).columns == NAMES
    assert load(path).frame.columns == NAMES
    assert frequency_table(path, ['quo"te']).columns == ['quo"te', "count"]
    if name == "t.csv":
        assert scan_table(path).lazy.collect_schema().names() == NAMES
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    table = load_or_stream(path, qi=['quo"te', "sex"])
    frame = table.rows.collect() if name == "t.csv" else table.frame  # a compressed file is read whole
    assert frame.columns == NAMES and frame.height == 60
    assert frequency_table(path, ['quo"te']).get_column("count").sum() == 60


def test_no_note_is_printed_and_a_header_only_file_has_no_rows(tmp_path, capsys):
    read_table(_file(tmp_path))
    assert capsys.readouterr().err == ""
    path = tmp_path / "header.csv"
    path.write_text(HEADER + "\n")
    with pytest.raises(InputError, match="has a header but no rows"):
        read_table(path)


def test_a_quoted_name_with_a_duplicate_keeps_both_rules(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('"a""b",x,x\n1,2,3\n')
    assert read_table(path).columns == ['a"b', "x", "x_2"]


def test_a_round_trip_keeps_the_names(tmp_path):
    frame = read_table(_file(tmp_path))
    for step in range(3):
        target = tmp_path / f"round{step}.csv"
        write(frame, target)
        frame = read_table(target)
        assert frame.columns == NAMES


def test_the_command_line_takes_the_name(tmp_path, capsys):
    path = _file(tmp_path)
    assert cli.main(["check", str(path), "--qi", 'quo"te', "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in report["attributes"]] == NAMES


def test_a_view_and_a_release_with_a_quoted_name_read_back_as_written(tmp_path, monkeypatch, capsys):
    """The readers of what crowdsafe wrote (a view's report and estimate, an attacked release)
    read a header name holding a quote as written, as the data's reader does."""
    from crowdsafe import cli
    from crowdsafe.attacks.releases import read_release
    from crowdsafe.perturb.view import _read_text

    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text('"quo""te",b\n1,x\n2,y\n1,y\n2,x\n', encoding="utf-8")
    assert cli.main(["perturb", "--no-ledger", "d.csv", "--gamma", "0.2", "--d", "0.1", "--exploratory", "--seed", "1",
                     "--out", "v/view.csv"]) == 0
    assert "could not be" not in capsys.readouterr().err  # the report was written beside the view
    assert _read_text(tmp_path / "v" / "view.csv").columns == ['quo"te', "b"]
    assert cli.main(["report", "v/view.csv"]) == 0
    assert cli.main(["publish", "d.csv", "--epsilon", "1", "--delta", "1e-6", "--scheme", "none", "--seed", "1",
                     "--budget", "5,1e-5", "--ledger", "l.sqlite3", "--out", "r/r.csv"]) == 0
    assert 'quo"te' in read_release(tmp_path / "r" / "r.csv").frame.columns
