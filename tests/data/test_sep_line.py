"""Excel's 'sep=;' first line names the separator and is skipped by every CSV reader: before, it
was read as the header (columns 'sep=' and 'column_2', the real header a row)."""

from __future__ import annotations

import gzip

import polars as pl
import pytest

from crowdsafe.data import load
from crowdsafe.data.io import read_table
from crowdsafe.data.streaming import scan_table
from crowdsafe.data.text_csv import read_text_csv, scan_text_csv
from crowdsafe.engines.spark.io import csv_separator
from crowdsafe.errors import InputError

ROWS = [("age", "sex", "city"), ("30", "F", "Lyon"), ("40", "M", "Nice"), ("30", "F", "Metz")]


def table(separator: str, eol: str) -> bytes:
    return "".join(separator.join(row) + eol for row in ROWS).encode()


@pytest.mark.parametrize("line", ["sep=;", '"sep=;"', "\ufeffsep=;"])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_the_line_is_the_separator_and_no_row(tmp_path, line, eol, capsys):
    plain, excel = tmp_path / "plain.csv", tmp_path / "excel.csv"
    plain.write_bytes(table(",", eol))
    excel.write_bytes(line.encode() + eol.encode() + table(";", eol))
    read = read_table(excel)
    assert read.columns == ["age", "sex", "city"] and read.height == 3
    assert read.equals(read_table(plain))
    assert scan_table(excel).lazy.collect().equals(scan_table(plain).lazy.collect())
    assert read_text_csv(excel).equals(read_text_csv(plain))
    assert scan_text_csv(excel).collect().equals(scan_text_csv(plain).collect())
    assert "sep=;" in capsys.readouterr().err  # a note says the line was read so


def test_the_ledger_identity_is_the_tables_without_the_line(tmp_path):
    plain, excel = tmp_path / "plain.csv", tmp_path / "excel.csv"
    plain.write_bytes(table(",", "\n"))
    excel.write_bytes(b"sep=|\r\n" + table("|", "\r\n"))
    assert load(excel).fingerprint() == load(plain).fingerprint()


def test_a_tab_and_a_compressed_file(tmp_path):
    excel = tmp_path / "excel.csv.gz"
    excel.write_bytes(gzip.compress(b"sep=\t\n" + table("\t", "\n")))
    assert read_table(excel).columns == ["age", "sex", "city"]


def test_renamed_header_after_the_line(tmp_path):
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b'sep=;\n"a""b";x;x\n1;2;3\n4;5;6\n')
    read = read_table(excel)
    assert read.columns == ['a"b', "x", "x_2"]
    assert read.rows() == [(1, 2, 3), (4, 5, 6)]


def test_a_ragged_row_is_named_by_its_line_in_the_file(tmp_path):
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b"sep=;\nage;sex\n30;F\n40\n")
    with pytest.raises(InputError, match="line 4 has 1 field where the header has 2"):
        read_table(excel)


@pytest.mark.parametrize("first", [b"sep=;;", b"sep=", b"sep=;x", b"xsep=;"])
def test_other_first_lines_stay_the_header(tmp_path, first):
    path = tmp_path / "t.csv"
    path.write_bytes(first + b"\n" + b";".join([b"1"] * (first.count(b";") + 1)) + b"\n")
    read = read_table(path)
    assert read.height == 1 and read.columns[0] == first.split(b";")[0].decode()


def test_spark_refuses_the_line_it_cannot_skip(tmp_path):
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b"sep=;\n" + table(";", "\n"))
    with pytest.raises(InputError, match="Excel's separator line 'sep=;'"):
        csv_separator(None, str(excel))
    plain = tmp_path / "plain.csv"
    plain.write_bytes(table(";", "\n"))
    assert csv_separator(None, str(plain)) == ";"


def test_check_reads_the_columns(tmp_path):
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b"sep=;\r\nage;sex\r\n30;F\r\n40;M\r\n")
    assert load(excel).frame.equals(pl.DataFrame({"age": [30, 40], "sex": ["F", "M"]}))
