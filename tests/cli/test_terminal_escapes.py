"""Control characters in names and paths reach the terminal escaped: a --name or file name holding
an escape sequence (ESC [31m) or a line break was printed raw by query and ledger show (and the
notes and errors), so it could colour, move or clear the terminal, or forge a line. The JSON
output stays JSON (its escapes, the name read back exactly)."""

from __future__ import annotations

import io
import json

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from crowdsafe.cli import main
from crowdsafe.cli.lazy import Console
from crowdsafe.identity import printable

NAME = "x\x1b[31mRED\nline2"


def _data(tmp_path, name: str = "ph.csv"):
    path = tmp_path / name
    pl.DataFrame({"ph": [f"p{i % 5}" for i in range(500)], "sex": ["F", "M"] * 250}).write_csv(path)
    return path


def test_query_and_ledger_show_escape_a_name(tmp_path, capsys):
    data, ledger = _data(tmp_path), tmp_path / "ledger.sqlite3"
    argv = ["query", str(data), "count", "--epsilon", "0.5", "--budget", "1,0", "--name", NAME, "--ledger", str(ledger)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "ledger        'x\\x1b[31mRED\\nline2'" in out, out
    assert main(["ledger", "show", "--ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "x\\x1b[31mRED\\nline2 (fingerprint" in out, out
    assert main(["ledger", "show", "--ledger", str(ledger), "--json"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and json.loads(out)["datasets"][0]["name"] == NAME
    assert main([*argv[:4], "5", *argv[5:]]) == 3  # over the budget: the error names it escaped
    err = capsys.readouterr().err
    assert "\x1b" not in err and "x\\x1b[31mRED" in err and err.count("\n") == 1, err


def test_a_file_name_with_an_escape_sequence_in_notes_and_reports(tmp_path, capsys):
    data = tmp_path / "p\x1b[2Jh.csv"
    data.write_text("a,a\n1,2\n3,4\n", encoding="utf-8")  # a renamed column: a note naming the file
    assert main(["check", str(data)]) == 0
    captured = capsys.readouterr()
    assert "\x1b" not in captured.out + captured.err
    assert "p\\x1b[2Jh.csv" in captured.err and "p\\x1b[2Jh.csv" in captured.out


def test_the_console_escapes_control_characters_but_its_line_breaks():
    buffer = io.StringIO()
    Console(file=buffer, width=200).print("a\x1b[31mb\x9b2Jc\u202ed\nnext")  # ESC, C1 CSI, a bidi override
    assert buffer.getvalue() == "a\\x1b[31mb\\x9b2Jc\\u202ed\nnext\n"


@given(st.text())
def test_printable_leaves_no_control_character(text):
    shown = printable(text)
    assert shown.isprintable()
    if text.isprintable():
        assert shown == text
    assert printable(text, keep="\n").replace("\n", "").isprintable()


def test_an_emoji_code_in_a_name_prints_as_written(tmp_path, capsys, monkeypatch):
    """Rich replaces ``:cat:`` by an emoji even with markup off: a column or file named so
    printed as a picture, not as its name."""
    buffer = io.StringIO()
    Console(file=buffer, width=200).print("value :cat: and :smile:")
    assert buffer.getvalue() == "value :cat: and :smile:\n"
    data = tmp_path / ":smile:.csv"
    pl.DataFrame({":cat:": [20 + i % 5 for i in range(200)], "b": [i % 3 for i in range(200)]}).write_csv(data)
    monkeypatch.chdir(tmp_path)  # a short path: a long one may wrap where the test runs narrow
    assert main(["anonymize", str(data), "--qi", ":cat:,b", "--k", "5", "--out", ":thumbs_up:.csv"]) == 0
    printed = capsys.readouterr().out
    assert "quasi-identifiers: :cat:, b" in printed and ":thumbs_up:.csv" in printed, printed
