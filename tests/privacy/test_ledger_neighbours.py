"""One neighbour notion per budget: ε under add-remove and ε under change-one neighbours are not
added as one unit. A charge under the dataset's other notion is refused before anything is
computed; a ledger an earlier crowdsafe filled with both is counted in change-one units."""

from __future__ import annotations

import json
import math

import pytest

from cli_helpers import run_command
from crowdsafe.errors import BudgetExceeded, ParameterError
from crowdsafe.mechanisms.sensitivity import count_sensitivity, sum_sensitivity
from crowdsafe.privacy import ledger as ledger_module
from crowdsafe.privacy import ledger_totals
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.privacy.ledger_totals import as_change
from crowdsafe.privacy.loss import PrivacyLoss


def _write_table(tmp_path):
    rows = [f"{17 + i % 70},{'Female' if i % 2 else 'Male'},{1 + i % 98}.5" for i in range(300)]
    (tmp_path / "D.csv").write_text("age,sex,hours\n" + "\n".join(rows) + "\n")
    (tmp_path / "s.toml").write_text('[attributes.age]\ntype = "integer"\n[attributes.sex]\ntype = "categorical"\n'
                                     '[attributes.hours]\ntype = "real"\n')
    return str(tmp_path / "D.csv"), str(tmp_path / "s.toml")


def _show(capsys) -> dict:
    code, out, _ = run_command(capsys, "ledger", "show", "--json")
    assert code == 0
    (dataset,) = json.loads(out)["datasets"]
    return dataset


@pytest.mark.parametrize("first_notion", ["change", "add-remove"])
def test_the_reviewers_mix_is_refused_before_the_charge(capsys, tmp_path, first_notion):
    data, schema = _write_table(tmp_path)
    other = "add-remove" if first_notion == "change" else "change"
    code, _, err = run_command(capsys, "query", data, "sum(hours) clamp 50..100", "-e", "0.6", "--neighbours",
                               first_notion, "--budget", "1,0", "--schema", schema)
    assert code == 0, err
    code, out, err = run_command(capsys, "query", data, "count", "-e", "0.4", "--neighbours", other,
                                 "--schema", schema)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"accounted under {first_notion} neighbours (its first charge)" in err
    assert f"use --neighbours {first_notion}" in err and "nothing was computed" in err
    dataset = _show(capsys)
    assert [e["neighbours"] for e in dataset["entries"]] == [first_notion]
    assert dataset["spent"]["epsilon"] == 0.6 and dataset["neighbours"] == first_notion
    # the same notion is still charged as before
    assert run_command(capsys, "query", data, "count", "-e", "0.4", "--neighbours", first_notion,
                       "--schema", schema)[0] == 0
    assert _show(capsys)["spent"]["epsilon"] == pytest.approx(1.0)


def test_why_the_units_differ():
    """The reviewer's arithmetic, with the change-one sum sensitivity corrected (audit math1): a
    change can take a row out of a filter, so sum(hours) clamp 50..100 has sensitivity
    max(U − L, |L|, |U|) = 100 under change, as under add-remove; sum(hours) clamp -100..100 has
    200 under change and 100 under add-remove, so a change-calibrated ε = 0.6 is 0.3 there. Read
    the other way, an add-remove count at ε = 0.4 is 0.8 as change-one DP (group privacy, tight
    for a sum clamped to [-U, U], whose change moves it by 2U)."""
    change, add_remove = (sum_sensitivity(50, 100, neighbours=n).l1 for n in ("change", "add-remove"))
    assert (change, add_remove) == (100, 100)
    change, add_remove = (sum_sensitivity(-100, 100, neighbours=n).l1 for n in ("change", "add-remove"))
    assert (change, add_remove) == (200, 100)
    assert 0.6 * add_remove / change == pytest.approx(0.3)
    assert count_sensitivity("add-remove").l1 == 1
    assert as_change(PrivacyLoss(0.4, 0.0)) == PrivacyLoss(0.8, 0.0)
    assert as_change(PrivacyLoss(0.4, 1e-6)).delta == pytest.approx((1 + math.exp(0.4)) * 1e-6)


def test_the_api_refuses_the_other_notion_and_records_nothing(tmp_path):
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget("fp", "d", 5.0, 1e-5)
        assert ledger.budget("d").neighbours is None
        ledger.check("d", epsilon=0.1, description="q", mechanism="m", neighbours="change")  # no charge yet
        with ledger.charge("d", epsilon=0.1, description="q", mechanism="m"):
            pass
        assert ledger.budget("d").neighbours == "add-remove"
        for call in (ledger.check, ledger.charge):
            with pytest.raises(ParameterError, match="accounted under add-remove") as refused:
                with call("d", epsilon=0.1, description="q", mechanism="m", neighbours="change",
                          partition=("sex", "F")):
                    pass
            assert refused.value.parameters == ("neighbours",)
        assert len(ledger.entries("d")) == 1 and ledger.integrity_check() == "ok"


def _old_mixed_ledger(tmp_path, monkeypatch) -> Ledger:
    """A ledger as an earlier crowdsafe left it: change and add-remove entries on one dataset."""
    ledger = Ledger(tmp_path / "old.sqlite3")
    ledger.set_budget("fp", "d", 3.0, 1e-4)
    with monkeypatch.context() as old_version:
        old_version.setattr(ledger_module, "check_notion", lambda *args: None)
        for epsilon, delta, notion, part in ((0.6, 0.0, "change", None), (0.4, 1e-6, "add-remove", None),
                                             (0.3, 0.0, "add-remove", ("sex", "F")),
                                             (0.2, 0.0, "add-remove", ("sex", "M"))):
            with ledger.charge("d", epsilon=epsilon, delta=delta, description="q", mechanism="m",
                               neighbours=notion, partition=part):
                pass
    return ledger


def test_an_old_mixed_ledger_is_counted_in_change_units(tmp_path, monkeypatch):
    ledger = _old_mixed_ledger(tmp_path, monkeypatch)
    budget = ledger.budget("d")
    # add-remove total: 0.4 + max(0.3, 0.2) = 0.7 with δ 1e-6; as change: (1.4, (1 + e^0.7)·1e-6); plus 0.6
    assert budget.spent.epsilon == pytest.approx(0.6 + 1.4)
    assert budget.spent.delta == pytest.approx((1 + math.exp(0.7)) * 1e-6)
    assert (budget.neighbours, budget.mixed_neighbours) == ("change", True)
    assert budget.as_dict()["mixed_neighbours"] is True
    with pytest.raises(ParameterError, match="both neighbour notions"):
        ledger.check("d", epsilon=0.1, description="q", mechanism="m")
    with ledger.charge("d", epsilon=0.5, description="q", mechanism="m", neighbours="change"):
        pass
    assert ledger.budget("d").spent.epsilon == pytest.approx(2.5)
    with pytest.raises(BudgetExceeded):
        ledger.check("d", epsilon=0.6, description="q", mechanism="m", neighbours="change")
    assert ledger.integrity_check() == "ok"
    ledger.close()


def test_ledger_show_says_a_ledger_is_mixed(capsys, tmp_path, monkeypatch):
    _old_mixed_ledger(tmp_path, monkeypatch).close()
    code, out, _ = run_command(capsys, "ledger", "show", "--ledger", str(tmp_path / "old.sqlite3"))
    text = " ".join(out.split())
    assert code == 0 and "neighbours change" in text
    assert "charged under both neighbour notions by an earlier crowdsafe" in text and "[add-remove]" in text


def test_the_notion_lookup_does_not_scan_the_entries(tmp_path):
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget("fp", "d", 5.0, 0.0)
        plan = " ".join(row[-1] for row in ledger._conn.execute(
            "EXPLAIN QUERY PLAN SELECT EXISTS (SELECT 1 FROM entries WHERE fingerprint = ? AND neighbours = ?)",
            ("fp", "change")))
        assert "entries_by_notion" in plan
        assert ledger_totals.notions(ledger._conn, "fp") == ()


def test_a_release_on_a_change_dataset_is_refused_and_says_why(tmp_path):
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget("fp", "d", 5.0, 1e-5)
        with ledger.charge("d", epsilon=0.1, description="q", mechanism="m", neighbours="change"):
            pass
        with pytest.raises(ParameterError, match="a release protects add-remove neighbours only"):
            ledger.check("d", epsilon=0.5, delta=1e-7, kind="release", description="publish", mechanism="m")
