"""``report --before`` on a custodian's own table (found by a new user's walk-through with a German
hospital table, 2026-11-30): a column named ``Größe`` (or ``table``, a word of the query
language) made every before-report fail, since the histogram query the report writes itself put
the name bare and the query refused it (``unexpected 'ö'``); and the refusal of a column with no
public values at δ = 0 told the user to "give bins (age[0..100 by 10])", which ``report`` takes
no query to give, instead of its own fix, ``--before-delta``."""

from __future__ import annotations

import polars as pl

from report_tables import publish_small, small_table


def test_before_distributions_quote_names_the_query_language_does_not_read_bare(tmp_path):
    from crowdsafe.report.before import before_distributions

    frame = pl.DataFrame({"Größe": [150 + i % 40 for i in range(400)],
                          "table": [["a", "b", "c"][i % 3] for i in range(400)]})
    frame.write_parquet(tmp_path / "data.parquet")
    found = before_distributions(str(tmp_path / "data.parquet"), ["Größe", "table"], 10.0, delta=1e-7, ledger=None,
                                 seed=1)
    assert [d.name for d in found] == ["Größe", "table"]
    assert all(d.values for d in found)


def test_a_before_report_without_public_values_says_to_give_a_before_delta(tmp_path, capsys):
    from crowdsafe.cli import main
    from crowdsafe.privacy.ledger import Ledger

    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path, small_table(), ledger=str(ledger), budget=(10.0, 1e-5))
    capsys.readouterr()
    code = main(["report", str(tmp_path / "out" / "r.csv"), "--before", str(tmp_path / "data.parquet"), "--schema",
                 str(tmp_path / "schema.toml"), "--ledger", str(ledger), "--before-epsilon", "0.6",
                 "--out", str(tmp_path / "b.html")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "the before-distribution of 'age' needs the column's public values" in err
    assert "before-delta above 0" in err and "give bins" not in err
    with Ledger(ledger) as book:
        assert len(book.entries()) == 1  # the publication only: nothing charged
    assert not (tmp_path / "b.html").exists()


def test_a_before_report_reads_the_table_once(tmp_path, capsys):
    """Each before-histogram read the table again, so a note about reading it (a decimal comma
    found in a ';'-separated export, renamed columns) was printed once per column (nine times for
    a German hospital table of eight columns); the histograms now run on the table read once."""
    from cli_helpers import run_command

    rows = "".join(f"{'mw'[i % 2]};{50 + i % 40},{i % 10}\n" for i in range(400))
    (tmp_path / "t.csv").write_text("Geschlecht;Gewicht\n" + rows, encoding="utf-8")
    ledger = str(tmp_path / "ledger.sqlite3")
    code, _, err = run_command(capsys, "publish", str(tmp_path / "t.csv"), "--scheme", "coarse", "--epsilon", "1",
                               "--delta", "1e-6", "--budget", "10,1e-5", "--ledger", ledger, "--seed", "1", "--out",
                               str(tmp_path / "rel" / "t.csv"))
    assert code == 0, err
    code, _, err = run_command(capsys, "report", str(tmp_path / "rel" / "t.csv"), "--before", str(tmp_path / "t.csv"),
                               "--before-epsilon", "0.5", "--before-delta", "1e-7", "--ledger", ledger, "--seed", "1",
                               "--out", str(tmp_path / "b.html"))
    assert code == 0, err
    assert err.count("column 'Gewicht' read with a decimal comma") == 1, err
