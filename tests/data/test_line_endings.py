"""CSV line endings (issue 33, point 5): LF, CRLF and lone CR (old Mac) files read as the same
rows, whole or batch by batch; lone CRs mixed with LF or CRLF refused in one line; a CR or LF
inside a quoted field is a value, not a line break."""

from __future__ import annotations

import gzip
import json

import pytest

from crowdsafe import cli
from crowdsafe.data import load
from crowdsafe.data.io import read_table
from crowdsafe.data.line_endings import line_ending
from crowdsafe.data.streamed_table import load_or_stream
from crowdsafe.data.streaming import frequency_table, scan_table
from crowdsafe.errors import InputError

LINES = ["age,zip,sex,disease"] + [f"{20 + i % 50},{2130 + i % 9:05d},{'FM'[i % 2]},{('flu', 'cold')[i % 2]}"
                                   for i in range(300)]
# zip is read as text (a postal code keeps its leading zero)
EXPECTED = {"rows": 300, "first": (20, "02130", "F", "flu"),
            "last": (20 + 299 % 50, f"{2130 + 299 % 9:05d}", "M", "cold")}


def _check_rows(frame):
    assert frame.height == EXPECTED["rows"]
    assert frame.columns == ["age", "zip", "sex", "disease"]
    assert frame.row(0) == EXPECTED["first"] and frame.row(-1) == EXPECTED["last"]


@pytest.mark.parametrize(("head", "complete", "expected"), [
    (b"a,b\n1,2\n", True, "\n"),
    (b"a,b\r\n1,2\r\n", True, "\n"),
    (b"a,b\r\n1,2\n3,4\r\n", True, "\n"),  # LF and CRLF: Polars drops the CR of a CRLF
    (b"a,b\r1,2\r", True, "\r"),
    (b'a,b\r1,"x\r\ny"\r2,"z\n"\r', True, "\r"),  # line breaks inside quotes are values
    (b'a,b\n1,"x\ry"\n', True, "\n"),
    (b'a,b\n1,"say ""hi""\r"\n', True, "\n"),  # doubled quotes keep the parity
    (b"a,b\n1,2\r", False, "\n"),  # a CR at the end of a cut block may be half of a CRLF
    (b"", True, "\n"),
])
def test_the_convention_is_read_from_the_first_bytes(head, complete, expected):
    assert line_ending(head, "f.csv", complete=complete) == expected


@pytest.mark.parametrize(("head", "others"), [
    (b"a,b\r\n1,2\r3,4\r\n", "CRLF (Windows)"),
    (b"a,b\n1,2\r3,4\n", "LF (Unix)"),
    (b"a,b\r\n1,2\r3,4\n", "CRLF (Windows) and LF (Unix)"),
    (b"a,b\n1,2\r", "LF (Unix)"),  # the whole file: its last CR is a line break of its own
])
def test_lone_crs_mixed_with_other_line_breaks_are_refused(head, others):
    with pytest.raises(InputError) as caught:
        line_ending(head, "f.csv", complete=True)
    message = str(caught.value)
    assert message.startswith("f.csv mixes line endings: lone CR (old Mac) line breaks with " + others)
    assert "convert the line endings to LF" in message and "\n" not in message


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_every_convention_reads_the_same_rows(tmp_path, eol, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_bytes((eol.join(LINES) + eol).encode())
    _check_rows(read_table(path))
    _check_rows(load(path).frame)
    _check_rows(scan_table(path).lazy.collect())
    assert frequency_table(path, ["sex"]).get_column("count").to_list() == [150, 150]
    from crowdsafe.data import streaming

    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    streamed = load_or_stream(path)
    assert streamed.n_rows == 300
    _check_rows(streamed.rows.collect())


def test_a_large_cr_file_reads_past_the_sniffed_block(tmp_path, monkeypatch):
    lines = ["id,value"] + [f"{i},{'x' * 30}" for i in range(5000)]  # about 180 KiB: the sniff sees the first 64
    path = tmp_path / "mac.csv"
    path.write_bytes(("\r".join(lines) + "\r").encode())
    assert read_table(path).get_column("id").to_list() == list(range(5000))
    from crowdsafe.data import streaming

    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    assert load_or_stream(path).rows.collect().get_column("id").to_list() == list(range(5000))


def test_quoted_line_breaks_in_a_cr_file_stay_in_their_values(tmp_path):
    path = tmp_path / "q.csv"
    path.write_bytes(b'id,note\r1,"two\r\nlines"\r2,"lf\nhere"\r3,plain\r')
    frame = read_table(path)
    assert frame.to_dict(as_series=False) == {"id": [1, 2, 3], "note": ["two\r\nlines", "lf\nhere", "plain"]}


def test_a_compressed_mixed_file_is_refused(tmp_path):
    path = tmp_path / "m.csv.gz"
    path.write_bytes(gzip.compress(b"a,b\r\n1,2\r3,4\r\n", mtime=0))
    with pytest.raises(InputError, match="mixes line endings"):
        read_table(path)


def test_the_command_line_counts_every_row_of_a_cr_file(tmp_path, capsys):
    path = tmp_path / "mac.csv"
    path.write_bytes(("\r".join(LINES) + "\r").encode())
    assert cli.main(["check", str(path), "--k", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] == 300 and [a["name"] for a in report["attributes"]] == ["age", "zip", "sex", "disease"]
