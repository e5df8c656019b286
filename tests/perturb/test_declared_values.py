"""A declared domain (--domains) of a date or timestamp column is written as ISO text; before,
Polars refused it in its own words ("casting from string to date is not supported ... Use
str.to_date()"). A whole number beyond the column's integer type is refused naming it (before:
"conversion from i128 to i64 failed")."""

from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.cli import main
from crowdsafe.errors import ParameterError
from crowdsafe.perturb.domain import TupleDomain

FRAME = pl.DataFrame({
    "d": [dt.date(2024, 1, 1)],
    "i": [1],
    "t": pl.Series([dt.datetime(2024, 2, 1, 0, 30)]).dt.replace_time_zone("Europe/Berlin"),
    "n": [dt.datetime(2024, 2, 1, 0, 30)],
})


def test_iso_dates_and_timestamps_are_read_in_the_columns_types():
    domain = TupleDomain.declared({
        "d": ["2024-01-01", "2024-01-02", None],
        "n": ["2024-02-01T00:30:00", "2024-02-01 00:30:00.5", "2024-02-01"],
        "t": ["2024-02-01T00:30:00", "2024-02-01T00:30:00Z"],
    }, FRAME)
    assert domain.values["d"].to_list() == [dt.date(2024, 1, 1), dt.date(2024, 1, 2), None]
    assert domain.values["n"].to_list() == [dt.datetime(2024, 2, 1, 0, 30), dt.datetime(2024, 2, 1, 0, 30, 0, 500000),
                                            dt.datetime(2024, 2, 1)]
    zoned = domain.values["t"]
    assert zoned.dtype == FRAME.get_column("t").dtype
    # a time without an offset is the column's local time (CET: UTC+1); 'Z' is UTC
    assert zoned.dt.convert_time_zone("UTC").dt.replace_time_zone(None).to_list() == [
        dt.datetime(2024, 1, 31, 23, 30), dt.datetime(2024, 2, 1, 0, 30)]


@given(st.lists(st.dates(), min_size=1, max_size=20))
@settings(max_examples=50, deadline=None)
def test_a_date_written_as_iso_reads_back_as_itself(dates):
    domain = TupleDomain.declared({"d": [d.isoformat() for d in dates]}, FRAME)
    assert domain.values["d"].to_list() == list(dict.fromkeys(dates))


@pytest.mark.parametrize(("column", "value", "says"), [
    ("d", "2024-13-01", "is not an ISO date"),
    ("d", "01/02/2024", "is not an ISO date"),
    ("d", 5, "is not an ISO date"),
    ("n", "yesterday", "is not an ISO date and time"),
    ("n", "2024-02-01T00:30+01:00", "has a UTC offset, but the column has no time zone"),
    ("i", 2 ** 70, "cannot be held by its column (Int64"),
    ("i", -(2 ** 64), "cannot be held by its column (Int64"),
    ("i", 1e30, "cannot be held by its column (Int64"),
])
def test_other_values_are_refused_naming_the_column_and_value(column, value, says):
    listed = ["2024-01-01", value] if column in "dn" else [1, value]
    with pytest.raises(ParameterError, match=f"declared domain of '{column}'") as raised:
        TupleDomain.declared({column: listed}, FRAME)
    message = str(raised.value)
    assert says in message and repr(value) in message and "\n" not in message
    assert "Polars" not in message and "i128" not in message


def test_perturb_reads_an_iso_domain_file(tmp_path, capsys):
    data = tmp_path / "dates.csv"
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=i % 30) for i in range(600)]
    pl.DataFrame({"d": days, "sex": ["F", "M"] * 300, "a": [i % 100 for i in range(600)]}).write_csv(data)
    domains = tmp_path / "dom.json"
    domains.write_text(json.dumps({"d": [(dt.date(2024, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(366)],
                                   "sex": ["F", "M"], "a": list(range(100))}))
    code = main(["perturb", "--no-ledger", str(data), "--domains", str(domains), "--max-rows", "1000", "--c", "2",
                 "--gamma", "0.5",
                 "--missing", "drop", "--seed", "1", "--out", str(tmp_path / "v.csv")])
    err = capsys.readouterr().err
    assert code == 0, err
    certificate = json.loads((tmp_path / "v.certificate.json").read_text())
    assert certificate["parameters"]["domain"]["d"]["values"][:2] == ["2024-01-01", "2024-01-02"]
