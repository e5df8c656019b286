"""A release with a header and no rows (every row suppressed) is a valid release: compare reports
100% suppression and check reports it k-anonymous for every k (vacuously), with 0 rows. Both
refused it as "has a header but no rows (a custodian-only fact about the data ...)". The commands
that charge a budget still refuse an empty table."""

from __future__ import annotations

import json

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.cli import main
from crowdsafe.errors import InputError


@pytest.fixture
def tables(tmp_path):
    original = tmp_path / "ph.csv"
    pl.DataFrame({"ph": [f"p{i % 7}" for i in range(700)], "sex": ["F", "M"] * 350}).write_csv(original)
    release = tmp_path / "r.csv"
    release.write_text("ph,sex\n", encoding="utf-8")
    return original, release


def test_compare_reports_full_suppression(tables, capsys):
    original, release = tables
    report = api.compare(original, release).to_dict()
    loss = report["information_loss"]
    assert (loss["input_rows"], loss["released_rows"], loss["suppressed_rows"]) == (700, 0, 700)
    assert loss["suppression_rate"] == 1.0 and loss["gcp"] == 1.0
    assert report["marginals"]["marginals"] == [] and any("no rows" in n for n in report["notes"])
    assert main(["compare", str(original), str(release)]) == 0
    out = capsys.readouterr().out
    assert "100.00%" in out


def test_check_reports_any_k_and_no_rows(tables, capsys):
    original, release = tables
    for report in (api.check(release), api.check(release, original=original)):
        assert report.rows == 0 and report.k is None and report.privacy is None
        assert any("k-anonymous for every k" in n for n in report.notes)
    assert main(["check", str(release), "--original", str(original), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["rows"] == 0 and document["k"] is None and document["sample_unique_share"] == 0.0
    assert main(["check", str(release)]) == 0
    assert "k: any (no rows)" in capsys.readouterr().out


def test_a_header_renamed_and_no_rows_is_read_too(tmp_path):
    release = tmp_path / "r.csv"
    release.write_text('a,a,"q""t"\n', encoding="utf-8")
    report = api.check(release)
    assert report.rows == 0 and [a["name"] for a in report.attributes] == ["a", "a_2", 'q"t']


@pytest.mark.parametrize("command", [["query", "{data}", "count", "--epsilon", "1"],
                                     ["publish", "{data}", "--epsilon", "1", "--no-ledger", "--out", "{out}"]])
def test_commands_that_charge_still_refuse_an_empty_table(tables, tmp_path, capsys, command):
    _, release = tables
    argv = [a.format(data=release, out=tmp_path / "o.csv") for a in command]
    assert main(argv) == 2
    assert "has a header but no rows" in capsys.readouterr().err
    with pytest.raises(InputError, match="has a header but no rows"):
        api.query(release, "count", epsilon=1.0)
