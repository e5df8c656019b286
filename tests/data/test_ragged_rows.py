"""Ragged CSV rows: a row with fewer fields than the header is refused like one with more (one
line naming the file and the line), whole or batch by batch, compressed or not; quoted separators
and line breaks, empty fields, a trailing newline and a one-column file's empty lines still read."""

from __future__ import annotations

import gzip

import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.data import row_widths, streaming
from crowdsafe.data.io import read_table
from crowdsafe.data.row_widths import Ragged, first_ragged
from crowdsafe.data.streamed_table import load_or_stream
from crowdsafe.data.streaming import frequency_table
from crowdsafe.errors import CUSTODIAN_REFUSAL, InputError

HEADER = "age,zip,sex,disease"
ROWS = [f"{20 + i % 50},{2130 + i % 9:05d},{'FM'[i % 2]},{('flu', 'cold')[i % 2]}" for i in range(300)]


def _file(tmp_path, lines, name="t.csv", end="\n"):
    path = tmp_path / name
    data = ("\n".join(lines) + end).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
    return path


def _every_reader(path, monkeypatch):
    """The table at ``path`` read whole, streamed, and counted both ways (a refusal propagates)."""
    frame = read_table(path)
    assert frequency_table(path, ["sex"]).height >= 1
    with monkeypatch.context() as patched:
        patched.setattr(streaming, "EAGER_BYTES", 0)
        streamed = load_or_stream(path)
        assert frequency_table(path, ["sex"]).height >= 1
    return frame, streamed


# --- the scan of the bytes --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("a,b,c\n1,2,3\n", None),
    ("a,b,c\n1,2,3", None),  # no line break at the end
    ("a,b,c\n1,2,3\n3\n", Ragged(3, 1, 3)),
    ("a,b,c\n1,2,3\n3", Ragged(3, 1, 3)),
    ("a,b,c\n1,2\n", Ragged(2, 2, 3)),
    ("a,b,c\n1,2,3,4\n", Ragged(2, 4, 3)),
    ("a,b,c\n1,,\n,,\n", None),  # empty fields are fields
    ('a,b,c\n1,"x,y","p\nq"\n2,3\n', Ragged(4, 2, 3)),  # the quoted line break is a physical line
    ('a,b,c\n1,"x,y","p\nq"\n2,3,4\n', None),
    ('a,b,c\n1,"say ""hi, you""",3\n', None),  # doubled quotes keep the parity
    ('a,b,c\n1,"a\n\nb",3\n', None),  # an empty line inside quotes is a value
    ("a,b,c\n1,2,3\n\n", Ragged(3, 1, 3, empty=True)),  # an empty last line is a row of one empty field
    ("a,b,c\n1,2,3\n\n4,5,6\n", Ragged(3, 1, 3, empty=True)),
    ("a,b,c\r\n1,2,3\r\n\r\n", Ragged(3, 1, 3, empty=True)),
    ("a,b,c\n1,2,3\n \n", Ragged(3, 1, 3)),  # a blank is a value
    ("\n\na,b,c\n1,2,3\n", None),  # empty lines before the header are skipped (as Polars does)
    ("\n\na,b,c\n1,2\n", Ragged(4, 2, 3)),
    ("a\n1\n\n2\n\n", None),  # one column: an empty line is a missing value
    ("a,b,c\r\n1,2,3\r\n4\r\n", Ragged(3, 1, 3)),
    ("\r\na,b\r\n1,2\r\n", None),
])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 20])
def test_the_first_ragged_record_and_its_line(text, expected, size):
    data = text.encode()
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    assert first_ragged(chunks, separator=",", eol="\n") == expected


def test_lone_cr_lines_and_another_separator():
    assert first_ragged([b'a;b\r1;"x\r;y"\r2\r'], separator=";", eol="\r") == Ragged(4, 1, 2)
    assert first_ragged([b'a;b\r1;"x\r;y"\r2;3\r'], separator=";", eol="\r") is None


def test_a_long_file_in_many_chunks():
    lines = [HEADER, *ROWS * 40, "1,2", *ROWS]
    data = ("\n".join(lines) + "\n").encode()
    chunks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    assert first_ragged(chunks, separator=",", eol="\n") == Ragged(12_002, 2, 4)


# --- every reader -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz"])
@pytest.mark.parametrize(("row", "fields"), [("31,02139", 2), ("31", 1), ("", 1), ("32,02139,M,flu,extra", 5)])
def test_a_ragged_row_is_refused_by_every_reader(tmp_path, monkeypatch, name, row, fields):
    path = _file(tmp_path, [HEADER, *ROWS[:150], row, *ROWS[150:]], name)
    # the line named is a fact about the table: labelled custodian-only, as the sibling refusals
    message = (f"cannot parse {path} as CSV: line 152 is empty where the header has 4 fields (a blank line is no "
               "row: remove it)") if not row else (
        f"cannot parse {path} as CSV: line 152 has {fields} field{'s' if fields > 1 else ''} where the header has 4 "
        "(a ragged row)")
    message += CUSTODIAN_REFUSAL
    with pytest.raises(InputError) as whole:
        read_table(path)
    assert str(whole.value) == message
    with pytest.raises(InputError, match="line 152"):
        frequency_table(path, ["age", "disease"])
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    with pytest.raises(InputError) as streamed:
        load_or_stream(path)
    assert str(streamed.value) == message
    if fields < 4:  # Polars reads only the counted columns of a longer row (as before)
        with pytest.raises(InputError, match="line 152"):
            frequency_table(path, ["sex"])


def test_a_short_last_row_without_a_line_break(tmp_path, monkeypatch):
    path = _file(tmp_path, [HEADER, *ROWS, "31,02139,F"], end="")
    with pytest.raises(InputError, match="line 302 has 3 fields where the header has 4"):
        read_table(path)
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    with pytest.raises(InputError, match="line 302 has 3 fields"):
        load_or_stream(path)


def test_a_short_first_row_under_renamed_columns(tmp_path):
    path = _file(tmp_path, ["a,a,b", "1,2", "3,4,5"])  # the stable names are given to Polars
    with pytest.raises(InputError, match="line 2 has 2 fields where the header has 3"):
        read_table(path)


def test_without_a_header_the_first_row_sets_the_width(tmp_path):
    path = _file(tmp_path, ["1,2,3", "4,5"])
    with pytest.raises(InputError, match="line 2 has 2 fields where the first row has 3"):
        read_table(path, has_header=False)


def test_the_command_line_refuses_a_short_row_in_one_line(tmp_path, capsys):
    path = tmp_path / "short.csv"
    path.write_text("a,b,c\n1,2,3\n3\n")
    assert cli.main(["check", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"crowdsafe: error: cannot parse {path} as CSV: "
                   "line 3 has 1 field where the header has 3 (a ragged row) (a custodian-only fact about the data: "
                   "keep this message to the custodian)")


def test_a_published_tables_ragged_row_is_not_labelled_custodian_only(tmp_path):
    """A release or view is public: the line of its ragged row is no fact about the custodian's data."""
    from crowdsafe.data.text_csv import read_text_csv

    path = _file(tmp_path, ["age,sex", '"[20, 29]",F', '"[30, 39]"'], name="r.csv")
    with pytest.raises(InputError) as refused:
        read_text_csv(path, "release")
    assert str(refused.value) == f"cannot parse {path} as CSV: line 3 has 1 field where the header has 2 (a ragged row)"


# --- what still reads ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz"])
@pytest.mark.parametrize("end", ["\n", ""])
def test_quoted_separators_line_breaks_and_empty_fields_still_read(tmp_path, monkeypatch, name, end):
    lines = [HEADER, '30,"02,139","F","flu, bad"', '31,02139,"M\nale",', '32,,F,""', *ROWS[:5], '33,02139,F,"a\n\nb"']
    path = _file(tmp_path, lines, name, end)
    frame, streamed = _every_reader(path, monkeypatch)
    assert frame.height == 9 and streamed.n_rows == 9
    assert frame.get_column("zip").to_list()[:3] == ["02,139", "02139", None]
    assert frame.get_column("disease").to_list()[:3] == ["flu, bad", None, None]
    assert frame.get_column("disease").to_list()[-1] == "a\n\nb"
    rows = streamed.rows.collect() if name == "t.csv" else streamed.frame  # a compressed file is read whole
    assert rows.get_column("disease").to_list() == frame.get_column("disease").to_list()


@pytest.mark.parametrize("end", ["\n", "\n\n", ""])
def test_a_one_column_file_reads_its_empty_lines_as_missing_values(tmp_path, monkeypatch, end):
    path = tmp_path / "one.csv"
    path.write_bytes(("sex\nF\n\nM" + end).encode())
    expected = ["F", None, "M"] + ([None] if end == "\n\n" else [])
    frame = read_table(path)
    assert frame.get_column("sex").to_list() == expected
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    assert load_or_stream(path).rows.collect().get_column("sex").to_list() == expected


def test_the_bytes_are_read_again_only_when_the_last_column_misses_a_value(tmp_path, monkeypatch):
    scans = []

    def counted(chunks, **options):
        scans.append(options)
        return first_ragged(chunks, **options)

    monkeypatch.setattr("crowdsafe.data.io.first_ragged", counted)
    complete = _file(tmp_path, [HEADER, *ROWS, "31,,,cold"], "complete.csv")
    _every_reader(complete, monkeypatch)
    assert scans == []
    missing = _file(tmp_path, [HEADER, *ROWS, "31,02139,F,"], "missing.csv")
    frame, _ = _every_reader(missing, monkeypatch)
    assert frame.get_column("disease").null_count() == 1 and len(scans) == 4  # both readers, both counts


def test_a_large_file_scanned_lazily_names_the_line(tmp_path, monkeypatch):
    path = _file(tmp_path, [HEADER, *ROWS * 100, "30,02139", *ROWS])
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    monkeypatch.setattr(row_widths, "CHUNK_BYTES", 1 << 12)
    with pytest.raises(InputError, match="line 30002 has 2 fields"):
        load_or_stream(path, schema=None)
    assert pl.read_csv(path, infer_schema=False).height == 30_301  # what Polars alone would read
