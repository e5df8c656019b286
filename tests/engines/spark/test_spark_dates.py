"""A column declared a date on Spark is read as on the Polars engine (intlsweep #1 on Spark): the
accepted forms (dd.mm.yyyy too, which Spark's cast refused), and a two-digit year (13.03.23, or
0023-03-13, which Spark's cast read as the year 23) refused in one line naming the column and the
accepted forms, before any charge. The rows checked lie past the first rows, which the Polars
engine reads and checks on the driver (``HEAD_ROWS`` made 2, so a table of four rows will do)."""

from __future__ import annotations

from datetime import date

import pytest

from crowdsafe import api
from crowdsafe.data import Schema
from crowdsafe.data.short_years import ACCEPTED
from crowdsafe.engines.spark import typed_table
from crowdsafe.errors import SchemaError

pytestmark = pytest.mark.spark

SCHEMA = Schema.of({"Alter": "numeric", "Datum": "date"}, qi=["Datum"], sensitive="Alter")


@pytest.fixture
def table(tmp_path, monkeypatch):
    monkeypatch.setattr(typed_table, "HEAD_ROWS", 2)

    def write(*dates: str):
        path = tmp_path / "daten.csv"
        path.write_text("Alter;Datum\n" + "".join(f"{30 + i};{d}\n" for i, d in enumerate(dates)), encoding="utf-8")
        return str(path)

    return write


def test_day_month_year_dates_past_the_first_rows_are_read(spark, table):
    path = table("13.03.2023", "01.02.2024", "1.3.2023", "31.12.2024")
    frame = typed_table.load_table(spark, path, schema=SCHEMA).frame
    assert [r["Datum"] for r in frame.orderBy("Alter").collect()] == [
        date(2023, 3, 13), date(2024, 2, 1), date(2023, 3, 1), date(2024, 12, 31)]


@pytest.mark.parametrize(("first", "late", "year"), [("13.03.2023", "13.03.23", 23), ("2023-03-13", "0023-03-13", 23),
                                                     ("13.03.2023", "13.03.5", 5)])
def test_a_two_digit_year_past_the_first_rows_is_refused(spark, table, first, late, year):
    with pytest.raises(SchemaError) as raised:
        typed_table.load_table(spark, table(first, first, late), schema=SCHEMA)
    message = str(raised.value)
    assert message.startswith("column 'Datum' is declared a date but ")
    assert f"holds '{late}', a date with a two-digit year (read as the year {year}); " \
           f"write dates as {ACCEPTED}" in message
    assert "custodian-only" in message and "\n" not in message


def test_a_parquet_text_column_with_blanks_is_read_as_on_polars(spark, tmp_path, monkeypatch):
    import polars as pl

    from crowdsafe.data import load

    monkeypatch.setattr(typed_table, "HEAD_ROWS", 2)
    path = tmp_path / "daten.parquet"
    pl.DataFrame({"Alter": [1, 2, 3], "Datum": [" 13.03.2023", "01.02.2024 ", " 2.1.2025 "]}).write_parquet(path)
    frame = typed_table.load_table(spark, str(path), schema=SCHEMA).frame
    read = [r["Datum"] for r in frame.orderBy("Alter").collect()]
    assert read == load(path, schema=SCHEMA).frame["Datum"].to_list() == [
        date(2023, 3, 13), date(2024, 2, 1), date(2025, 1, 2)]


def test_a_value_in_another_form_is_no_date(spark, table):
    with pytest.raises(SchemaError, match=r"holds '2023-03-13', which is not a date \(expected YYYY-MM-DD, .*custod"):
        typed_table.load_table(spark, table("13.03.2023", "01.02.2024", "2023-03-13"), schema=SCHEMA)


def test_a_query_is_refused_before_the_charge(spark, table, tmp_path):
    path = table("13.03.2023", "01.02.2024", "13.03.23", "14.03.23")
    ledger = tmp_path / "ledger.sqlite3"
    with pytest.raises(SchemaError, match="two-digit year"):
        api.query(path, "count where Datum >= '2023-01-01'", epsilon=0.5, ledger=ledger, budget=(5.0, 1e-4),
                  schema=SCHEMA, engine="spark")
    assert not ledger.exists()  # refused on loading: the ledger was not even opened
