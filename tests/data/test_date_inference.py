"""Polars' date inference is asked for only when a column could be dates (crowdsafe.data.date_inference).

Two claims make the fast read exact, and each is tested against its reference:
- every value Polars' ``try_parse_dates`` infers as a date, a time or a timestamp matches
  ``DATE_START`` (tested against Polars itself, value by value, on a battery and on generated
  values; the battery shows a stricter pattern would be caught);
- so the readers give the frame and the scan that the old single read with ``try_parse_dates``
  gives (tested against that read, forced by making every file look as if it could hold dates).
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from crowdsafe.data import io as table_io
from crowdsafe.data import streaming
from crowdsafe.data.date_inference import DATE_START, dated_types, with_dates
from crowdsafe.errors import InputError

BATTERY = [
    "2020-01-01", "01/02/2020", "31.12.2021", "2020.01.01", "2020/01/31", "1.1.2020", "12:30", "12:30:00",
    "+2020-01-01", "-2020-01-01", " 2020-01-01", "\t2020-01-01", "\u00a02020-01-01", "2020-01-01T00:00:00Z",
    "2020-01-01 10:00", "2020-01-01T10:00:00.123+02:00", "31-12-2021 23:58", "8-Jul-2001", "Jan 1 2020",
    "January 1, 2020", "Mon, 1 Jan 2020", "T12:00", "'2020-01-01'", "２０２０-01-01", "Tue 2020-01-01",
    "20200101", "Jul-08-2001", "1 Jan 2020", "[18, 35]", "30-39", "*", "<=50K", "17",
]
TEMPORAL = (pl.Date, pl.Datetime, pl.Time)


def _inferred(value: str) -> pl.DataType:
    """The type Polars' own inference gives a one-value column holding ``value``."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([["x"], [value]])
    return pl.read_csv(io.BytesIO(text.getvalue().encode()), try_parse_dates=True).dtypes[0]


def _misses(pattern: str, values: list[str]) -> list[str]:
    """The values Polars reads as temporal that ``pattern`` would not ask about."""
    return [v for v in values if isinstance(_inferred(v), TEMPORAL) and not re.match(pattern, v)]


def test_every_value_polars_reads_as_a_date_matches_the_pattern():
    assert sum(isinstance(_inferred(v), TEMPORAL) for v in BATTERY) >= 12  # the battery does hold dates
    assert _misses(DATE_START, BATTERY) == []


def test_a_stricter_pattern_would_be_caught():
    """The check above can fail: a pattern without the sign or the blanks misses dates Polars reads."""
    assert set(_misses(r"^\d", BATTERY)) >= {"+2020-01-01", " 2020-01-01", "\u00a02020-01-01"}


_DATEISH = st.text(st.sampled_from("0123456789-/.: TZ+'\"\u00a0\tJanMo,"), min_size=1, max_size=22)


@settings(max_examples=300, deadline=None)
@given(_DATEISH.filter(lambda v: v.strip() and "\n" not in v))
def test_generated_values_polars_reads_as_dates_match_the_pattern(value):
    assert _misses(DATE_START, [value]) == []


# -- the readers against the single read with try_parse_dates ------------------------------------

FILES = {
    "generalized release": "age,sex,income\n" + "17,Male,<=50K\n" * 3 + "\"[18, 35]\",*,>50K\n",
    "dates": "day,n\n2020-01-01,1\n2021-02-03,2\n,3\n",
    "timestamps and times": "at,t,w\n2020-01-01 10:00,12:30,a\n2020-01-02T11:00:00Z,13:00,b\n",
    "day-first dates": "day,w\n31.12.2021,x\n01.02.2022,y\n",
    "a date column with a word": "day,w\n2020-01-01,x\nsoon,y\n",
    "numbers and words": "a,b,c,d\n-1.5,true,x,+3\n2.0,false,y,4\n",
    "ranges that start with a digit": "age,w\n30-39,x\n40-49,y\n",
}


def _forced(monkeypatch):
    """The old reading: every file looks as if it could hold dates, so it is read with them."""
    monkeypatch.setattr(table_io, "with_dates", lambda *args, **options: None)
    monkeypatch.setattr(streaming, "dated_types", lambda *args, **options: None)


@pytest.mark.parametrize("name", FILES)
def test_the_reader_reads_as_the_read_with_dates(name, tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_text(FILES[name])
    fast = table_io.read_file(path).frame
    fast_scan = streaming.scan_table(path).lazy.collect()
    _forced(monkeypatch)
    assert_frame_equal(fast, table_io.read_file(path).frame)
    assert_frame_equal(fast_scan, streaming.scan_table(path).lazy.collect())


# (file bytes, read_file's options): the reading rules around the read (renamed headers, no header,
# compression, a BOM, Excel's sep line, CRLF, quoted line breaks, own missing tokens, text columns)
EDGES = {
    "repeated header": (b"day,day,w\n2020-01-01,2021-01-01,x\n", {}),
    "no header": (b"2020-01-01,x\n2021-01-01,y\n", {"has_header": False}),
    "BOM": (b"\xef\xbb\xbfday,w\n2020-01-01,x\n", {}),
    "sep line": (b"sep=;\nday;w\n2020-01-01;x\n", {}),
    "CRLF": (b"day,w\r\n2020-01-01,x\r\n2021-02-03,y\r\n", {}),
    "quoted line break": (b'day,w\n2020-01-01,"a\nb"\n"2021-01-01",c\n', {}),
    "own missing tokens": (b"day,w\nNA,x\n2021-01-01,-\n", {"missing_tokens": ["NA", "-"]}),
    "a date column read as text": (b"day,w\n2020-01-01,x\n", {"text_columns": ["day"]}),
    "postal code named": (b"zip,day\n01067,2020-01-01\n", {}),
}


@pytest.mark.parametrize("name", EDGES)
def test_the_reading_rules_around_the_read_give_the_same_frame(name, tmp_path, monkeypatch):
    data, options = EDGES[name]
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    gzipped = tmp_path / "t.csv.gz"
    gzipped.write_bytes(gzip.compress(data))
    readers = [lambda: table_io.read_file(path, **options).frame, lambda: table_io.read_file(gzipped, **options).frame,
               lambda: streaming.scan_table(path, **options).lazy.collect()]  # (a compressed file is not scanned)
    fast = [_outcome(read) for read in readers]
    _forced(monkeypatch)
    for got, read in zip(fast, readers):
        expected = _outcome(read)
        assert isinstance(expected, pl.DataFrame) and isinstance(got, pl.DataFrame), (got, expected)
        assert_frame_equal(got, expected)


@pytest.mark.parametrize("decimal_comma", [True, None])
def test_decimal_commas_read_as_with_dates(decimal_comma, tmp_path, monkeypatch):
    """Polars' decimal comma makes ``1.25`` text (a thousands point), which then starts like a date."""
    path = tmp_path / "comma.csv"
    path.write_text("a;b;c\n1.25;2020-01-01;1,5\n3,5;2021-12-31;2\n")
    fast = table_io.read_file(path, decimal_comma=decimal_comma).frame
    _forced(monkeypatch)
    assert_frame_equal(fast, table_io.read_file(path, decimal_comma=decimal_comma).frame)


def test_dates_of_two_orders_are_refused_as_by_the_read_with_dates(tmp_path, monkeypatch):
    path = tmp_path / "orders.csv"
    path.write_text("day,w\n2020-01-01,x\n31.12.2021,y\n")
    with pytest.raises(InputError) as fast:
        table_io.read_file(path)
    _forced(monkeypatch)
    with pytest.raises(InputError) as forced:
        table_io.read_file(path)
    assert str(fast.value) == str(forced.value) and "31.12.2021" in str(fast.value)


@pytest.mark.parametrize("days", [["2020-01-01", "2021-02-03"], ["2020-01-01", "2021-02-03 10:00"],
                                  ["12:30", "13:45"], ["2020-01-01", "17"], ["31.12.2021", "01.02.2022"]])
def test_a_scan_typed_from_every_row_types_dates_as_with_dates(days, tmp_path, monkeypatch):
    """The second try of a streamed read (types from every row): the dates' types come from their
    distinct values; repeated, in file order, after 10,000 rows of one kind."""
    path = tmp_path / "every-row.csv"
    path.write_text("age,day\n" + f"17,{days[0]}\n" * 10_000 + "".join(
        f"\"[18, 35]\",{day}\n" for day in days * 3))
    fast = _outcome(lambda: streaming.scan_table(path, infer_all=True).lazy.collect())
    _forced(monkeypatch)
    _assert_same(fast, _outcome(lambda: streaming.scan_table(path, infer_all=True).lazy.collect()))


def test_late_values_that_do_not_fit_read_as_with_dates(tmp_path, monkeypatch):
    """Past the first 10,000 rows (the second try, types from every row), in both readers."""
    path = tmp_path / "late.csv"
    path.write_text("age,day,w\n" + "17,2020-01-01,x\n" * 10_001 + "\"[18, 35]\",2020-01-02,y\n" + "20,later,z\n")
    fast = table_io.read_file(path).frame
    fast_scan = streaming.scan_table(path, infer_all=True).lazy.collect()
    _forced(monkeypatch)
    assert_frame_equal(fast, table_io.read_file(path).frame)
    assert_frame_equal(fast_scan, streaming.scan_table(path, infer_all=True).lazy.collect())


_CELLS = st.sampled_from(["2020-01-01", "31.12.2021", "12:30", "+2020-01-01", "17", "-3", "2.5", "true",
                          "30-39", "[18, 35]", "x", "*", "", "2020-01-01 10:00", "Jan 1 2020"])


def _outcome(read):
    """What ``read()`` gives: its frame, or the kind of error it raises (and the refusal's words)."""
    try:
        return read()
    except InputError as exc:
        return f"InputError: {exc}"
    except pl.exceptions.PolarsError as exc:  # a scan's rows are read at collect: the kind is compared
        return type(exc).__name__


def _assert_same(got, expected) -> None:
    """Two outcomes (:func:`_outcome`) agree: equal frames, or the same refusal."""
    if isinstance(expected, pl.DataFrame):
        assert isinstance(got, pl.DataFrame), got
        assert_frame_equal(got, expected)
    else:
        assert got == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(_CELLS, min_size=3, max_size=3), min_size=1, max_size=6))
def test_generated_tables_read_as_with_dates(rows, tmp_path_factory):
    """Frames equal, or the same refusal (dates of two orders in one column are refused by both)."""
    path = Path(tmp_path_factory.mktemp("gen")) / "t.csv"
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([["a", "b", "c"], *rows])
    path.write_text(text.getvalue())
    readers = (lambda: table_io.read_file(path).frame, lambda: streaming.scan_table(path).lazy.collect(),
               lambda: streaming.scan_table(path, infer_all=True).lazy.collect())
    fast = [_outcome(read) for read in readers]
    with pytest.MonkeyPatch.context() as patch:
        _forced(patch)
        for got, read in zip(fast, readers):
            _assert_same(got, _outcome(read))


def test_a_late_value_in_a_date_column_reads_every_column_from_every_row(tmp_path, monkeypatch):
    """The date column needs the second try, the others did not: Polars' second try also infers
    ``n`` (empty in the first 10,000 rows) from every row, as a number; the reader does the same."""
    path = tmp_path / "late-date.csv"
    path.write_text("n,day\n" + ",2020-01-01\n" * 10_000 + "5,2020-01-02\n" + "6,later\n")
    fast = table_io.read_file(path).frame
    assert fast.schema["n"] == pl.Int64
    _forced(monkeypatch)
    assert_frame_equal(fast, table_io.read_file(path).frame)


def test_a_table_without_date_like_text_is_read_once_without_dates(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_text("age,sex\n\"[18, 35]\",Male\n\"[36, 50]\",*\n")
    asked: list[bool] = []
    read = pl.read_csv
    monkeypatch.setattr(table_io.pl, "read_csv", lambda p, **kw: asked.append(kw["try_parse_dates"]) or read(p, **kw))
    table_io.read_file(path)
    assert asked == [False]


def test_only_the_columns_that_could_be_dates_are_read_with_dates(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_text("day,w,n\n2020-01-01,x,1\n2020-01-02,y,2\n")
    reads: list[tuple[bool, list[str]]] = []  # (with date inference, the columns read)
    read = pl.read_csv

    def spy(source, **options):
        frame = read(source, **options)
        reads.append((options["try_parse_dates"], frame.columns))
        return frame

    monkeypatch.setattr(pl, "read_csv", spy)
    assert table_io.read_file(path).frame.schema["day"] == pl.Date
    assert reads == [(False, ["day", "w", "n"]), (True, ["row", "day"])]


def test_only_text_columns_not_read_as_text_anyway_are_read_with_dates():
    frame = pl.DataFrame({"zip": ["01067", "10115"], "n": [1, 2], "w": ["x", "y"], "day": ["2020-01-01", None]})
    assert with_dates(frame, 10_000, text={"zip", "day"}) is frame  # nothing could be dates: as read
    assert with_dates(frame, 10_000, text={"zip"}).schema == {"zip": pl.String, "n": pl.Int64, "w": pl.String,
                                                             "day": pl.Date}
    assert dated_types(frame.lazy(), 10_000, text={"zip"}) == {"day": pl.Date}
    assert dated_types(frame.lazy(), None, text={"zip"}) == {"day": pl.Date}  # every row: distinct values
    dated_first = pl.DataFrame({"w": ["2020-01-01", "x"]})  # only the window is looked at
    assert dated_types(dated_first.lazy(), 1) == {"w": pl.Date}
    assert dated_types(dated_first.lazy(), 2) == {}
