"""Timestamps with a time zone (a CSV's UTC offsets, a Parquet column's zone).

Polars reads ``2024-03-01T00:30:00+01:00`` in a CSV file as a UTC instant. Such a column reached
the classic algorithms as a zoned Datetime, whose ranges ('[... +00:00, ...]') and centroids no
reader took back: ``anonymize`` refused its own release, blaming it. Every reader now gives a
zoned column its zone's wall-clock times without the zone (column_types.usable, zone_free), with
a note, so every step meets the zone-less timestamps it handles; a value keeps its date, and so
the table keeps its identity (a datetime counts by its date in the fingerprint).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from cli_helpers import run_for_error
from crowdsafe.data import load
from crowdsafe.data.fingerprint import multiset_digest
from crowdsafe.data.streaming import scan_table

TIMES = ["2024-03-01T00:30:00+01:00", "2024-02-29T23:30:00-01:00", "2024-01-10T10:00:00Z",
         "2024-01-11T09:15:00+02:00"]


def _csv(path: Path, n: int = 60) -> Path:
    rows = [f"{TIMES[i % len(TIMES)]},{20 + i % 7},{'ABC'[i % 3]}" for i in range(n)]
    path.write_text("when,age,dx\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_csv_of_offsets_is_read_as_utc_wall_clock_times_with_a_note(tmp_path, capsys):
    data = load(_csv(tmp_path / "t.csv"))
    when = data.frame.get_column("when")
    assert isinstance(when.dtype, pl.Datetime) and when.dtype.time_zone is None
    assert when[0] == dt.datetime(2024, 2, 29, 23, 30) and when[1] == dt.datetime(2024, 3, 1, 0, 30)
    err = capsys.readouterr().err
    assert "'when' (UTC)" in err and "read as times of day in that zone" in err


def test_the_scan_reads_them_as_the_eager_reader_does(tmp_path):
    path = _csv(tmp_path / "t.csv")
    scanned = scan_table(path).lazy.collect()
    assert scanned.schema["when"] == load(path).frame.schema["when"]
    assert scanned.get_column("when").equals(load(path).frame.get_column("when"))


def test_a_parquet_zone_keeps_its_local_times_and_the_identity(tmp_path):
    local = [dt.datetime(2024, 3, 1, 0, 30), dt.datetime(2024, 6, 30, 23, 45)]
    zoned = pl.DataFrame({"when": local, "dx": ["A", "B"]}).with_columns(
        pl.col("when").dt.replace_time_zone("Europe/Berlin"))
    zoned.write_parquet(tmp_path / "t.parquet")
    data = load(tmp_path / "t.parquet")
    assert data.frame.get_column("when").to_list() == local
    # the identity the zoned table had (each datetime counts by its date, here its date in Berlin)
    assert data.fingerprint() == multiset_digest(zoned)


def test_the_csv_identity_is_the_zoned_tables(tmp_path):
    path = _csv(tmp_path / "t.csv")
    as_polars_reads_it = pl.read_csv(path, try_parse_dates=True)
    assert as_polars_reads_it.schema["when"] == pl.Datetime("us", "UTC")
    assert load(path).fingerprint() == multiset_digest(as_polars_reads_it)


@pytest.mark.parametrize("algorithm", ["mondrian", "mdav", "lattice"])
def test_anonymize_publishes_and_reads_back_a_zoned_column(capsys, tmp_path, algorithm):
    data = _csv(tmp_path / "t.csv")
    out = tmp_path / "r.csv"
    code, err = run_for_error(capsys, "anonymize", data, "--qi", "when,age", "--sensitive", "dx",
                              "--algorithm", algorithm, "--k", "5", "--out", out, "--no-report")
    assert code == 0, err
    published = pl.read_csv(out, infer_schema=False).get_column("when")
    assert not published.str.contains(r"\+\d\d:\d\d").any()  # zone-less timestamps, no offset
