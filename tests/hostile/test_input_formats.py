"""Input is read by what it is, not by its name: compressed CSV and Parquet are read, other
formats are named in one line."""

from __future__ import annotations

import gzip

import polars as pl
import pyarrow as pa
import pytest

from crowdsafe.data import load, read_table
from crowdsafe.data.io import sniff_format
from crowdsafe.errors import InputError

TEXT = "age;zip;sex\n30;02139;F\n41;02138;M\n30;02139;M\n"
EXPECTED = {"age": [30, 41, 30], "zip": ["02139", "02138", "02139"], "sex": ["F", "M", "M"]}  # a postal code is text


def _zstd(data: bytes) -> bytes:
    return pa.Codec("zstd").compress(data, asbytes=True)


@pytest.mark.parametrize("name", ["data.csv", "data.csv.gz", "data.gz", "noext"])
def test_gzip_csv_is_read_whatever_its_name(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(gzip.compress(TEXT.encode(), mtime=0))
    assert sniff_format(path)[0] == "gzip"
    assert read_table(path).to_dict(as_series=False) == EXPECTED  # ';' found in the decompressed text


@pytest.mark.parametrize("name", ["data.csv", "data.csv.zst", "data.zst"])
def test_zstd_csv_is_read_whatever_its_name(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(_zstd(TEXT.encode()))
    assert sniff_format(path)[0] == "zstd"
    assert read_table(path).to_dict(as_series=False) == EXPECTED


def test_parquet_named_csv_and_csv_named_parquet(tmp_path):
    frame = pl.DataFrame({"age": [30, 41], "sex": ["F", "M"]})
    frame.write_parquet(tmp_path / "p.csv")
    assert read_table(tmp_path / "p.csv").equals(frame)
    (tmp_path / "c.parquet").write_text("age,sex\n30,F\n41,M\n")
    assert read_table(tmp_path / "c.parquet").equals(frame)


def test_a_compressed_table_loads_as_the_plain_one(tmp_path):
    (tmp_path / "plain.csv").write_text(TEXT)
    (tmp_path / "packed.csv").write_bytes(gzip.compress(TEXT.encode(), mtime=0))
    plain, packed = load(tmp_path / "plain.csv"), load(tmp_path / "packed.csv")
    assert plain.frame.equals(packed.frame) and plain.schema == packed.schema


def test_utf8_with_a_byte_order_mark_is_read(tmp_path):
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbfage,sex\n30,F\n")
    assert read_table(tmp_path / "bom.csv").columns == ["age", "sex"]


@pytest.mark.parametrize(("content", "fragment"), [
    (b"PK\x03\x04\x14\x00xl/workbook.xml", "Excel workbook (.xlsx)"),
    (b"PK\x03\x04\x14\x00mimetypeapplication/vnd.oasis.opendocument.spreadsheet", "OpenDocument"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 8, "Excel 97-2003"),
    (b"\xfd7zXZ\x00\x00", "xz-compressed"),
    (b"%PDF-1.7\n", "PDF"),
    (b"ARROW1\x00\x00", "Arrow IPC"),
    ("age,sex\n30,F\n".encode("utf-16-le").join([b"\xff\xfe", b""]), "UTF-16"),
    (gzip.compress("age\n30\n".encode("utf-16"), mtime=0), "gzip-compressed and UTF-16"),
    (_zstd(b"\x00\x01\x02" * 10), "zstd-compressed and a binary file"),
    (b"\x1f\x8b\x08\x00garbage", "cannot be decompressed"),
    (b"\x28\xb5\x2f\xfdgarbage", "cannot be decompressed"),
])
def test_other_formats_are_named_in_one_line(tmp_path, content, fragment):
    path = tmp_path / "input.csv"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_table(path)
    message = str(caught.value)
    assert fragment in message and "\n" not in message and str(path) in message


@pytest.mark.parametrize(("encoding", "named"), [("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE")])
def test_utf16_without_a_byte_order_mark_is_named(tmp_path, encoding, named):
    # it was "a binary file, not CSV text" (SQL Server's bcp -w writes no byte-order mark)
    path = tmp_path / "export.csv"
    text = "年齢,sex,city\n" + "".join(f"{20 + i},M,Lyon\n" for i in range(50))
    path.write_bytes(text.encode(encoding))
    with pytest.raises(InputError, match=f"is {named} text \\(without a byte-order mark\\); re-save it as UTF-8"):
        load(path)
    path.write_bytes(b"\x00\x01\x02\x03" * 40)
    with pytest.raises(InputError, match="a binary file, not CSV text"):
        load(path)
