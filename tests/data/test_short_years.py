"""Dates written with a two-digit year (``13.03.23``) are never read as the years 23 and 24
(intlsweep #1): an inferred column stays text with a note, a declared date column is refused
naming the column and the accepted forms, before any charge."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data import Schema, load
from crowdsafe.data.io import read_table
from crowdsafe.data.streaming import scan_table
from crowdsafe.errors import SchemaError

ROWS = 40
SHORT = [f"{1 + i % 28:02d}.{1 + i % 12:02d}.{23 + i % 2}" for i in range(ROWS)]
LONG = [f"{1 + i % 28:02d}.{1 + i % 12:02d}.{2023 + i % 2}" for i in range(ROWS)]
DECLARED = Schema.of({"Alter": "numeric", "Datum": "date"}, qi=["Datum"], sensitive="Alter")


def _csv(tmp_path, dates, name="kurz.csv"):
    path = tmp_path / name
    lines = ["Alter;Datum"] + [f"{20 + i};{d}" for i, d in enumerate(dates)]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return path


def test_an_inferred_column_of_two_digit_years_stays_text_with_a_note(tmp_path, capsys):
    frame = read_table(_csv(tmp_path, SHORT))
    assert frame.schema["Datum"] == pl.String
    assert frame["Datum"].to_list() == SHORT  # as written, never 0023-...
    err = capsys.readouterr().err
    assert "'Datum' read as text, not as dates" in err and "two-digit year" in err and "custodian-only" in err


def test_one_two_digit_year_among_four_digit_ones_keeps_the_column_text(tmp_path):
    dates = [*LONG[:-1], "13.03.24"]
    frame = read_table(_csv(tmp_path, dates))
    assert frame.schema["Datum"] == pl.String and frame["Datum"].to_list() == dates


def test_a_lazy_scan_reads_them_as_text_too(tmp_path, capsys):
    scan = scan_table(_csv(tmp_path, SHORT))
    assert scan.lazy.collect_schema()["Datum"] == pl.String
    assert scan.lazy.collect()["Datum"].to_list() == SHORT
    assert "two-digit year" in capsys.readouterr().err


def test_four_digit_years_are_still_dates(tmp_path, capsys):
    frame = read_table(_csv(tmp_path, LONG))
    assert frame.schema["Datum"] == pl.Date
    assert frame["Datum"][0] == date(2023, 1, 1)
    assert "two-digit" not in capsys.readouterr().err


@pytest.mark.parametrize("written", ["13.03.23", "23-03-13", "0023-03-13"])
def test_a_declared_date_with_a_year_before_100_is_refused(written):
    frame = pl.DataFrame({"Alter": list(range(ROWS)), "Datum": [*LONG[:-1], written]})
    with pytest.raises(SchemaError) as raised:
        load(frame, schema=DECLARED)
    message = str(raised.value)
    assert "column 'Datum' is declared a date" in message and repr(written) in message
    assert "four-digit year" in message and "DD.MM.YYYY" in message and "custodian-only" in message
    assert "\n" not in message


def test_a_declared_date_that_is_no_date_names_the_accepted_forms():
    frame = pl.DataFrame({"Alter": [1, 2], "Datum": ["2023-01-01", "soon"]})
    with pytest.raises(SchemaError, match=r"'soon', which is not a date \(expected YYYY-MM-DD, .*four-digit year\)"):
        load(frame, schema=DECLARED)


def test_a_query_on_a_declared_date_column_is_refused_before_the_charge(tmp_path):
    path = _csv(tmp_path, SHORT)
    ledger = tmp_path / "ledger.sqlite3"
    api.set_budget(path, epsilon=5.0, delta=1e-4, ledger=ledger)  # the column read as text: no refusal
    before = api.ledger_report(ledger)
    with pytest.raises(SchemaError, match="two-digit year"):
        api.query(path, "count where Datum >= '2023-01-01'", epsilon=0.5, ledger=ledger, budget=(5.0, 1e-4),
                  schema=DECLARED)
    assert api.ledger_report(ledger) == before


# -- the rows past the first 10,000 (those a lazy scan infers its types from), read batch by batch


def _late_csv(tmp_path, late=("13.03.23", "01.02.24")):
    """10,000 rows with four-digit years, then rows with two-digit years, in one column."""
    head = [f"{1 + i % 28:02d}.{1 + i % 12:02d}.{2023 + i % 2}" for i in range(10_000)]
    return _csv(tmp_path, [*head, *late], name="spaet.csv"), [*head, *late]


@pytest.fixture
def streamed(monkeypatch):
    """Every file is read batch by batch (as one larger than EAGER_BYTES is); returns the tries."""
    from crowdsafe.data import streamed_table, streaming

    tries: list[bool] = []
    read = streamed_table.read_streamed
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    monkeypatch.setattr(streamed_table, "read_streamed", lambda *a, **k: tries.append(
        (table := read(*a, **k)) is not None) or table)
    return tries


def test_a_two_digit_year_past_the_scanned_head_is_read_as_text_batch_by_batch(tmp_path, capsys, streamed):
    from crowdsafe.data.streamed_table import StreamedTable, load_or_stream

    path, written = _late_csv(tmp_path)
    table = load_or_stream(path)
    assert streamed == [True] and isinstance(table, StreamedTable)
    assert table.rows.collect_schema()["Datum"] == pl.String
    assert table.rows.collect()["Datum"].to_list() == written  # never 0023-03-13
    assert "'Datum' read as text, not as dates" in capsys.readouterr().err
    assert table.domain.frame.schema["Datum"] == load(path).frame.schema["Datum"] == pl.String  # as read whole


def test_a_declared_date_with_a_late_two_digit_year_is_refused_batch_by_batch_before_the_charge(tmp_path, streamed):
    path, _ = _late_csv(tmp_path)
    ledger = tmp_path / "ledger.sqlite3"
    api.set_budget(path, epsilon=5.0, delta=1e-4, ledger=ledger)
    before = api.ledger_report(ledger)
    with pytest.raises(SchemaError) as raised:
        api.query(path, "count where Datum >= '2023-01-01'", epsilon=0.5, ledger=ledger, budget=(5.0, 1e-4),
                  schema=DECLARED)
    message = str(raised.value)
    assert "column 'Datum' is declared a date" in message and "two-digit year (read as the year 23)" in message
    assert "DD.MM.YYYY" in message and "custodian-only" in message and "nothing was charged" in message
    assert "\n" not in message
    assert "past its first 10,000 rows" in message  # refused batch by batch, without a read whole
    assert api.ledger_report(ledger) == before


def test_a_streamed_frequency_table_counts_late_two_digit_years_as_text(tmp_path, monkeypatch, capsys):
    from crowdsafe.data import streaming

    path, written = _late_csv(tmp_path)
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    counted = streaming.frequency_table(path, ["Datum"])
    assert counted.schema["Datum"] == pl.String
    assert set(counted["Datum"].to_list()) == set(written) and counted["count"].sum() == len(written)
    assert "'Datum' read as text" in capsys.readouterr().err
