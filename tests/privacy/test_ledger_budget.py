"""Changing a dataset's budget on the record: lowered freely, raised only when asked, every change
a line of the budget history, no charge erased, one transaction."""

from __future__ import annotations

import sqlite3

import pytest

from crowdsafe.errors import BudgetExceeded, ParameterError
from crowdsafe.privacy import ledger_storage
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.privacy.loss import PrivacyLoss


@pytest.fixture
def ledger(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as opened:
        opened.set_budget("fp-adult", "adult", 1.0, 1e-6)
        yield opened


def _spend(ledger: Ledger, epsilon: float, delta: float = 0.0) -> None:
    with ledger.charge("adult", epsilon=epsilon, delta=delta, description="count", mechanism="m"):
        pass


def _rows(ledger: Ledger) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(f"file:{ledger.path}?mode=ro", uri=True)
    try:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in ("datasets", "entries", "totals", "budget_changes")}
    finally:
        conn.close()


def test_setting_a_budget_is_the_first_line_of_its_history(ledger):
    (line,) = ledger.budget_changes("adult")
    assert (line.change, line.before, line.after, line.spent) == ("set", None, PrivacyLoss(1.0, 1e-6),
                                                                  PrivacyLoss(0.0, 0.0))
    assert line.changed_by == ledger_storage.custodian() and line.reason == "" and line.created_at


def test_a_budget_is_lowered_freely_and_what_was_spent_keeps_counting(ledger):
    _spend(ledger, 0.4)
    budget = ledger.change_budget("adult", 0.5, 1e-7, reason="a  second\\nthought")
    assert budget.budget == PrivacyLoss(0.5, 1e-7) and budget.spent.epsilon == pytest.approx(0.4)
    _spend(ledger, 0.1)
    with pytest.raises(BudgetExceeded, match="refused"):
        _spend(ledger, 0.01)
    lowered = ledger.budget_changes("fp-adult")[-1]
    assert (lowered.change, lowered.before, lowered.after) == ("lowered", PrivacyLoss(1.0, 1e-6),
                                                               PrivacyLoss(0.5, 1e-7))
    assert lowered.spent.epsilon == pytest.approx(0.4) and lowered.reason == "a second\\nthought"


def test_lowering_below_what_was_spent_closes_the_dataset(ledger):
    _spend(ledger, 0.6)
    budget = ledger.change_budget("adult", 0.2, 1e-6)
    assert budget.remaining.epsilon == 0.0 and budget.spent.epsilon == pytest.approx(0.6)
    with pytest.raises(BudgetExceeded):
        _spend(ledger, 1e-9)


@pytest.mark.parametrize(("epsilon", "delta"), [(2.0, 1e-6), (1.0, 1e-5), (0.5, 1e-5)],
                         ids=["epsilon", "delta", "delta-up-epsilon-down"])
def test_a_raise_without_allow_raise_is_refused_and_changes_nothing(ledger, epsilon, delta):
    _spend(ledger, 0.3)
    before = _rows(ledger)
    with pytest.raises(ParameterError, match=r"would raise the budget of 'adult' .*allow_raise=True") as refused:
        ledger.change_budget("adult", epsilon, delta)
    assert refused.value.parameters == ("allow_raise",)
    assert _rows(ledger) == before


def test_a_raise_is_recorded_and_never_erases_a_charge(ledger):
    _spend(ledger, 0.9)
    entries = ledger.entries("adult")
    ledger.change_budget("adult", 0.5, 1e-6)  # lowered below what was spent
    budget = ledger.change_budget("adult", 3.0, 1e-5, allow_raise=True, reason="approved by the board")
    assert budget.budget == PrivacyLoss(3.0, 1e-5) and budget.spent.epsilon == pytest.approx(0.9)
    assert ledger.entries("adult") == entries  # the raise adds budget, it takes no charge away
    assert ledger.integrity_check() == "ok"
    history = [(c.change, c.before, c.after, round(c.spent.epsilon, 9), c.reason)
               for c in ledger.budget_changes("adult")]
    assert history == [
        ("set", None, PrivacyLoss(1.0, 1e-6), 0.0, ""),
        ("lowered", PrivacyLoss(1.0, 1e-6), PrivacyLoss(0.5, 1e-6), 0.9, ""),  # spent > budget, on record
        ("raised", PrivacyLoss(0.5, 1e-6), PrivacyLoss(3.0, 1e-5), 0.9, "approved by the board"),
    ]
    exported = ledger.export()["datasets"][0]["budget_changes"]
    assert [c["change"] for c in exported] == ["set", "lowered", "raised"]
    assert exported[2]["before"] == {"epsilon": 0.5, "delta": 1e-6} and exported[2]["spent"]["epsilon"] == 0.9


def test_the_same_budget_again_records_nothing(ledger):
    ledger.change_budget("adult", 1.0, 1e-6)
    assert [c.change for c in ledger.budget_changes("adult")] == ["set"]


def test_a_dataset_stuck_with_delta_0_is_unstuck_on_the_record(tmp_path):
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget("fp", "people", 3.0, 0.0)  # `--budget 3` of an earlier crowdsafe
        with pytest.raises(BudgetExceeded, match=r"δ = 0 admits nothing that costs δ > 0.*allow_raise=True") as no:
            ledger.check("people", epsilon=1.0, delta=1e-6, kind="dps-release", sample_ids=["s"],
                         description="publish", mechanism="m")
        assert set(no.value.parameters) == {"budget", "allow_raise"}
        ledger.change_budget("people", 3.0, 1e-5, allow_raise=True, reason="delta was left out")
        with ledger.charge("people", epsilon=1.0, delta=1e-6, kind="dps-release", sample_ids=["s"],
                           description="publish", mechanism="m"):
            pass
        assert ledger.budget("people").spent == PrivacyLoss(1.0, 1e-6)


def test_unknown_datasets_and_bad_values_are_refused(ledger):
    with pytest.raises(ParameterError, match="has no budget in the ledger"):
        ledger.change_budget("nope", 1.0, 0.0)
    for epsilon, delta in ((0.0, 0.0), (-1.0, 0.0), (float("nan"), 0.0), (float("inf"), 0.0), (1.0, 1.0)):
        with pytest.raises(ParameterError):
            ledger.change_budget("adult", epsilon, delta, allow_raise=True)
    assert [c.change for c in ledger.budget_changes("adult")] == ["set"]


def test_the_change_and_its_history_line_are_one_transaction(ledger, monkeypatch):
    before = _rows(ledger)
    monkeypatch.setattr("crowdsafe.privacy.ledger_budget.custodian", lambda: None)  # the history line cannot be written
    with pytest.raises(sqlite3.IntegrityError):
        ledger.change_budget("adult", 0.5, 1e-6)
    assert _rows(ledger) == before  # the budget was not changed without its line


def test_a_change_by_another_process_holds_at_once_for_an_open_ledger(ledger):
    with Ledger(ledger.path) as other:
        other.change_budget("adult", 0.2, 1e-6)
    with pytest.raises(BudgetExceeded):
        _spend(ledger, 0.3)  # the open ledger reads the budget inside the charge's transaction
    _spend(ledger, 0.2)


def test_a_refused_budget_names_the_registered_one_so_that_they_differ(tmp_path):
    """A publish without --budget registers exactly its cost (here δ a hair below 1e-6); a later
    --budget 1,1e-6 is refused, and the message must not say the budget is (1, 1e-06) already
    (the README's Spark commands hit this: shown as 1e-06, the two read as equal)."""
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        book.set_budget("fp", "people", 1.0, 9.99999997980912e-07)
        with pytest.raises(ParameterError) as refused:
            book.set_budget("fp", "people", 1.0, 1e-6)
        book.set_budget("fp", "people", 1.0, 9.99999997980912e-07)  # the same again: a no-op
    assert "already has the budget (ε=1, δ=9.99999997980912e-07)" in str(refused.value)
