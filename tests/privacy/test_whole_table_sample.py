"""A publish whose Bernoulli sample holds every row has not consumed a separate sample.

A sweep (pb6, item 2) found that when the sample of a DPS release happened to be the whole table
(probability β^n: routine on a small table), the ledger recorded the table's own identity as a
consumed sample, and every later query or publish of the table was refused as "a sample already
used by the DPS release #1", with its budget stranded. Whether that happened is a custodian-only
fact (the sample's size), so the refusal depended on the draw. Such a sample is the table: its
later charges compose against its budget; a genuine subsample is still refused.
"""

from __future__ import annotations

import json

import pytest

from crowdsafe import cli
from crowdsafe.errors import SampleReuseError
from crowdsafe.privacy.ledger import Ledger
from small_schemas import AGE_SEX

SCHEMA = AGE_SEX


@pytest.fixture
def ledger(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as opened:
        opened.set_budget("fp-table", "table", 10.0, 1e-3)
        opened.set_budget("fp-sub", "sub", 10.0, 1e-3)
        yield opened


def _release(ledger: Ledger, *samples: str) -> int:
    with ledger.charge("fp-table", epsilon=1.0, delta=1e-6, kind="dps-release", sample_ids=list(samples),
                       repetitions=len(samples), delta_slack=0.0, description="publish", mechanism="m") as charge:
        return charge.entry_id


def test_a_sample_that_is_the_whole_table_leaves_the_table_usable(ledger):
    _release(ledger, "fp-table")
    assert ledger.consumed_by("fp-table") is None
    ledger.check("table", epsilon=1.0, description="query on the table", mechanism="m")  # no refusal
    with ledger.charge("table", epsilon=1.0, description="query", mechanism="m"):
        pass
    assert ledger.budget("table").spent.epsilon == pytest.approx(2.0)  # composed on its budget


def test_a_genuine_subsample_is_still_refused(ledger):
    entry = _release(ledger, "fp-table", "fp-sub")  # two releases: one drew every row, one a subsample
    assert ledger.consumed_by("fp-sub") == entry and ledger.consumed_by("fp-table") is None
    with pytest.raises(SampleReuseError, match="does not compose"):
        ledger.check("sub", epsilon=0.1, description="query on the sample", mechanism="m")
    # the subsample's own whole-table release does not lift its parent's claim on it
    with ledger.charge("fp-sub", epsilon=1.0, delta=1e-6, kind="dps-release", sample_ids=["fp-sub"],
                       delta_slack=0.0, description="publish", mechanism="m"):
        pass
    assert ledger.consumed_by("fp-sub") == entry


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_publish_then_query_and_publish_a_two_row_table(tmp_path, capsys, monkeypatch):
    """The sweep's table and seed: seed 2 samples both rows (the custodian report says so)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two.csv").write_text("age,sex\n30,F\n41,M\n", encoding="utf-8")
    (tmp_path / "s.toml").write_text(SCHEMA, encoding="utf-8")
    ledger = str(tmp_path / "ledger.sqlite3")
    code, out, err = _run(capsys, ["publish", "two.csv", "--schema", "s.toml", "--epsilon", "1", "--delta", "1e-3",
                                   "--budget", "10,1e-2", "--seed", "2", "--ledger", ledger, "--out", "ot/r.csv",
                                   "--json"])
    assert code == 0, err
    assert json.loads(out)["custodian_only"]["releases"][0]["sample_rows"] == 2  # the sample is the table
    code, out, err = _run(capsys, ["query", "two.csv", "count", "--schema", "s.toml", "--epsilon", "1",
                                   "--seed", "7", "--ledger", ledger])
    assert code == 0, err
    code, out, err = _run(capsys, ["publish", "two.csv", "--schema", "s.toml", "--epsilon", "1", "--delta", "1e-3",
                                   "--seed", "3", "--ledger", ledger, "--out", "ot2/r.csv"])
    assert code == 0, err
    with Ledger(ledger) as book:
        assert book.budget("two.csv").spent.epsilon == pytest.approx(3.0)
