"""check --original summarised the release's missing values as "keep (no missing values)" beside
an attribute table counting hundreds: the release read against its original lost its
missing-value report. The summary now counts what the table shows, in the text and the JSON."""

from __future__ import annotations

import json

import polars as pl

from crowdsafe import api
from crowdsafe.cli import main
from crowdsafe.data import load
from crowdsafe.data.release_roles import release_dataset


def _table(path, rows: int = 400):
    values = ["" if i % 4 == 3 else "x" for i in range(rows)]
    path.write_text("v,s\n" + "".join(f"{v},F\n" for v in values), encoding="utf-8")
    return path


def test_the_summary_counts_the_missing_values_the_attributes_show(tmp_path, capsys):
    original, release = _table(tmp_path / "m.csv", 400), _table(tmp_path / "r.csv", 200)
    report = api.check(release, original=original)
    shown = {a["name"]: a["missing"] for a in report.attributes}
    assert shown == {"v": 50, "s": 0}
    assert report.missing["rows_with_missing"] == 50 and report.missing["missing_per_column"] == {"v": 50}
    assert "no missing values" not in report.missing["description"]
    assert main(["check", str(release), "--original", str(original), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["missing"]["missing_per_column"] == {"v": 50}
    assert main(["check", str(release), "--original", str(original)]) == 0
    out = capsys.readouterr().out
    assert "no missing values" not in out and "50 rows have one (v 50)" in out


def test_a_release_given_as_a_frame_is_counted_too(tmp_path):
    original = load(_table(tmp_path / "m.csv"))
    frame = pl.DataFrame({"v": ["x", None, None], "s": ["F", "F", None]})
    report = release_dataset(frame, original).missing
    assert report.rows_with_missing == 2 and report.missing_per_column == {"v": 2, "s": 1}
