"""No message names a table by its identity in the ledger (found by a neighbouring-table sweep).

The ledger's refusal for a table without a budget printed the first 16 characters of the
table's keyed identity, a digest of the data: ``report --before`` without ``--name`` showed it
on standard error, different for D and for D plus one row. A table is now named by its label,
and an identity never ("this table"). Each rule also runs against a broken variant.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl

from crowdsafe import cli
from crowdsafe.data import load
from crowdsafe.errors import BudgetExceeded, ParameterError
from crowdsafe.privacy import ledger as ledger_module
from crowdsafe.privacy import ledger_budget
from crowdsafe.privacy.ledger import Ledger

HEX = re.compile(r"[0-9a-f]{12,}")


def _frame(extra: bool = False) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"age": rng.integers(20, 70, 300), "sex": rng.choice(["F", "M"], 300)})
    return pl.concat([frame, pl.DataFrame({"age": [33], "sex": ["F"]})]) if extra else frame


def _refusals(tmp_path: Path) -> list[str]:
    out = []
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        identity = load(_frame()).fingerprint(key=book.identity_key)
        for refuse in (lambda: book.check(identity, epsilon=1.0, delta=0.0, description="q", mechanism="m"),
                       lambda: book.change_budget(identity, 1.0, 0.0)):
            try:
                refuse()
            except (BudgetExceeded, ParameterError) as error:
                out.append(str(error))
    return out


def test_a_ledger_refusal_never_prints_an_identity(tmp_path):
    messages = _refusals(tmp_path)
    assert len(messages) == 2
    for message in messages:
        assert "this table" in message and not HEX.search(message), message


def test_the_identity_rule_can_fail(tmp_path, monkeypatch):
    """Broken variant: named by the first 16 characters of its identity, as before."""
    monkeypatch.setattr(ledger_module, "dataset_named", lambda dataset: f"dataset {dataset[:16]!r}")
    monkeypatch.setattr(ledger_budget, "dataset_named", lambda dataset: f"dataset {dataset[:16]!r}")
    assert all(HEX.search(message) for message in _refusals(tmp_path))


def _report_before(capsys, tmp_path: Path, extra: bool) -> tuple[int, str]:
    folder = tmp_path / ("d1" if extra else "d0")
    folder.mkdir()
    data = folder / "data.csv"
    _frame(extra).write_csv(data)
    ledger = tmp_path / "ledger.sqlite3"
    code = cli.main(["publish", str(data), "--epsilon", "1", "--delta", "1e-6", "--seed", "1", "--no-ledger",
                     "--qi", "age,sex", "--out", str(folder / "r.csv")])
    assert code == 0
    with Ledger(ledger) as book:  # the same ledger (one key), with a budget for other data
        book.set_budget("0" * 64, "other", 5.0, 1e-5)
    capsys.readouterr()
    code = cli.main(["report", str(folder / "r.csv"), "--before", str(data), "--before-epsilon", "1",
                     "--before-delta", "1e-6", "--ledger", str(ledger), "--out", str(folder / "r.html")])
    return code, capsys.readouterr().err


def test_report_before_names_the_table_by_its_file(capsys, tmp_path):
    first, second = _report_before(capsys, tmp_path, False), _report_before(capsys, tmp_path, True)
    assert first[0] == second[0] == 3  # refused by the ledger
    assert "no privacy budget is set for 'data.csv'" in first[1]
    assert first[1].replace("/d0/", "/d1/") == second[1]  # the same refusal for D and D plus one row
    assert not HEX.search(first[1])


def test_an_empty_table_is_the_one_data_refusal_and_says_whose_fact_it_is(capsys, tmp_path):
    """An empty table is refused by every command before anything is charged, in one labelled
    message (docs/privacy-boundary.md: the one refusal that depends on the data)."""
    data = tmp_path / "empty.csv"
    data.write_text("age,sex\n")
    for argv in (["query", data, "count", "--epsilon", "1", "--no-ledger"],
                 ["publish", data, "--epsilon", "1", "--delta", "1e-6", "--no-ledger", "--out", tmp_path / "r.csv"],
                 ["perturb", "--no-ledger", data, "--d", "0.1", "--gamma", "0.9", "--exploratory",
                  "--out", tmp_path / "v.csv"]):
        capsys.readouterr()
        assert cli.main([str(a) for a in argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "has a header but no rows (a custodian-only fact about the data" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.csv"]


def _query_other_data(capsys, tmp_path: Path, extra: bool, budget: bool = True) -> tuple[int, str]:
    """A query without --budget on a table whose file name the ledger holds for other data."""
    folder = tmp_path / ("b1" if extra else "b0")
    folder.mkdir()
    data = folder / "data.csv"
    _frame(extra).write_csv(data)
    ledger = tmp_path / "ledger.sqlite3"
    if budget:
        with Ledger(ledger) as book:
            book.set_budget("0" * 64, "data.csv", 5.0, 1e-5)  # the name, for other data
    capsys.readouterr()
    code = cli.main(["query", str(data), "count", "--epsilon", "0.5", "--ledger", str(ledger)])
    return code, capsys.readouterr().err


def test_a_name_of_other_data_says_so_and_the_same_for_neighbours(capsys, tmp_path):
    """It said "no privacy budget is set for 'data.csv' ... set one with crowdsafe ledger init
    data.csv", which then failed with "already belongs to other data". Now that refusal, in one
    line naming --name, the same for D and D plus one row (no identity, no count)."""
    first, second = _query_other_data(capsys, tmp_path, False), _query_other_data(capsys, tmp_path, True, False)
    assert first[0] == second[0] == 2
    for _, err in (first, second):
        assert err.count("\n") == 1, err
        assert "the name 'data.csv' already belongs to other data" in err and "--name NAME" in err, err
        assert "ledger init" not in err and not HEX.search(err), err
        assert err.rstrip().endswith("(a custodian-only fact about the data: these rows differ from those registered "
                                     "under the name; keep this message to the custodian)"), err
    assert first[1].replace("/b0/", "/b1/") == second[1]
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        assert [b.name for b in book.budgets()] == ["data.csv"] and not book.budget("0" * 64).entries
