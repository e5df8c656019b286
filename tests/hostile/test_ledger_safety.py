"""Runs that would charge a budget and then fail, or replace a ledger, are refused first.

Found by a black-box sweep of the command line:

- a folder at an output path, with ``--force``: the guard let it through, the run charged its
  budget, then failed writing ("is a folder") and wrote nothing;
- ``--force`` onto the configured ledger from a command that does not open it (anonymize,
  ``--no-ledger``): every budget and charge was lost;
- ``perturb --budget`` registered the budget, then refused the run (an exploratory run given a
  ledger, a plan out of reach): a retry with another budget was refused as a change.

Each rule is also run against a deliberately broken variant of the guard or the driver.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_for_error
from crowdsafe import output_guard
from crowdsafe.drivers import perturb as perturb_driver
from crowdsafe.drivers import query as query_driver
from crowdsafe.privacy.ledger import LEDGER_ENV

_run = run_for_error


def _table(path: Path) -> Path:
    rng = np.random.default_rng(2)
    pl.DataFrame({"age": rng.integers(20, 80, 400), "sex": rng.choice(["F", "M"], 400),
                  "zip": rng.choice(["a", "b", "c"], 400)}).write_csv(path)
    return path


def _entries(ledger: Path) -> list:
    if not ledger.exists():
        return []
    with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT * FROM entries").fetchall()


def _budgets(ledger: Path) -> list:
    if not ledger.exists():
        return []
    with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True) as conn:
        return [*conn.execute("SELECT * FROM datasets").fetchall(), *conn.execute(
            "SELECT * FROM budget_changes").fetchall()]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- a folder at an output path -----------------------------------------------------------------

@pytest.mark.parametrize("command", ["query", "publish certificate", "publish custodian report"])
def test_a_folder_at_an_output_path_is_refused_before_the_charge_even_with_force(command, capsys, tmp_path):
    data, ledger = _table(tmp_path / "t.csv"), tmp_path / "ledger.sqlite3"
    common = ["--ledger", ledger, "--budget", "10,1e-3", "--force"]
    if command == "query":
        folder = tmp_path / "out" / "q.json"
        folder.mkdir(parents=True)
        argv = ["query", data, "count", "--epsilon", "0.1", "--out", folder, *common]
    else:
        out = tmp_path / "m" / "t.csv"
        folder = tmp_path / "m" / ("t.certificate.json" if command == "publish certificate" else "cr.json")
        folder.mkdir(parents=True)
        argv = ["publish", data, "--epsilon", "1", "--delta", "1e-6", "--out", out, *common]
        if command == "publish custodian report":
            argv += ["--custodian-report", folder]
    code, err = _run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and "is a folder" in err and "--force" not in err, err
    assert _entries(ledger) == []  # nothing charged
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted(
        p.name for p in folder.parent.iterdir() if p.is_dir())  # nothing written beside it


def test_the_folder_rule_can_fail(tmp_path, monkeypatch):
    """Broken variant: every output kind may be a folder, as before (the run would go on)."""
    (tmp_path / "q.json").mkdir()
    answer = output_guard.Output(tmp_path / "q.json", "the answer", output_guard.OutputKind.JSON)
    with pytest.raises(Exception, match="is a folder"):
        output_guard.check_outputs([answer], force=True)
    monkeypatch.setattr(output_guard, "_FOLDER_KINDS", tuple(output_guard.OutputKind))
    output_guard.check_outputs([answer], force=True)  # let through: the charge would follow


# -- the configured ledger ----------------------------------------------------------------------

def _charged_ledger(capsys, tmp_path: Path, data: Path, name: str) -> Path:
    ledger = tmp_path / name
    code, err = _run(capsys, "query", data, "count", "--epsilon", "0.1", "--ledger", ledger, "--budget", "5,0")
    assert code == 0, err
    return ledger


@pytest.mark.parametrize("how", ["anonymize", "publish --no-ledger"])
def test_no_run_replaces_the_configured_ledger_even_with_force(how, capsys, tmp_path, monkeypatch):
    data = _table(tmp_path / "t.csv")
    ledger = _charged_ledger(capsys, tmp_path, data, "book.csv")  # a ledger named like a table
    monkeypatch.setenv(LEDGER_ENV, str(ledger))
    before = _digest(ledger)
    if how == "anonymize":
        argv = ["anonymize", data, "--k", "5", "--qi", "age,sex", "--out", ledger, "--force"]
    else:
        argv = ["publish", data, "--epsilon", "1", "--delta", "1e-6", "--no-ledger", "--seed", "1", "--out", ledger,
                "--force"]
    code, err = _run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and "ledger" in err, err
    assert _digest(ledger) == before


def test_a_ledger_elsewhere_is_never_replaced_either(capsys, tmp_path, monkeypatch):
    data = _table(tmp_path / "t.csv")
    ledger = _charged_ledger(capsys, tmp_path, data, "other.csv")
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "configured.sqlite3"))
    before = _digest(ledger)
    code, err = _run(capsys, "anonymize", data, "--k", "5", "--qi", "age,sex", "--out", ledger, "--force")
    assert code == 2 and "would overwrite a crowdsafe ledger" in err, err
    assert _digest(ledger) == before


def test_the_ledger_rules_can_fail(capsys, tmp_path, monkeypatch):
    """Broken variant: no configured ledger among the inputs, no ledger mark read: --force
    replaces the ledger, as before."""
    data = _table(tmp_path / "t.csv")
    ledger = _charged_ledger(capsys, tmp_path, data, "book.csv")
    monkeypatch.setenv(LEDGER_ENV, str(ledger))
    monkeypatch.setattr(output_guard, "_configured_ledger", lambda: [])
    monkeypatch.setattr(output_guard, "_is_ledger", lambda path: False)
    code, _ = _run(capsys, "anonymize", data, "--k", "5", "--qi", "age,sex", "--out", ledger, "--force")
    assert code == 0 and not ledger.read_bytes().startswith(b"SQLite format 3")


# -- perturb's budget ---------------------------------------------------------------------------

def _perturb(capsys, data: Path, ledger: Path, *extra: str) -> tuple[int, str]:
    return _run(capsys, "perturb", data, "--d", "0.1", "--gamma", "0.9", "--max-rows", "500", "--attributes",
                "sex,zip", "--out", data.parent / "v.csv", "--ledger", ledger, *extra)


def _domains(tmp_path: Path) -> Path:
    domains = tmp_path / "domains.json"
    domains.write_text(json.dumps({"sex": ["F", "M"], "zip": ["a", "b", "c"]}), encoding="utf-8")
    return domains


def test_a_refused_perturbation_leaves_no_budget_behind(capsys, tmp_path):
    data, ledger, domains = _table(tmp_path / "t.csv"), tmp_path / "ledger.sqlite3", _domains(tmp_path)
    # refused once the data is read (its rows repeat a tuple), after the ledger is opened
    code, err = _perturb(capsys, data, ledger, "--domains", domains, "--duplicates", "error", "--budget", "100,0")
    assert code == 2 and "rows repeat" in err, err
    assert _budgets(ledger) == [] and _entries(ledger) == []
    # the retry with the budget meant is not refused as a change of the first
    code, err = _perturb(capsys, data, ledger, "--domains", domains, "--budget", "10,0", "--no-report")
    assert code == 0, err
    assert len(_budgets(ledger)) >= 1 and len(_entries(ledger)) == 1


def test_the_budget_rule_can_fail(capsys, tmp_path, monkeypatch):
    """Broken variant: the budget registered before the run, as before."""
    def registered_now(book, identity, label, budget):
        query_driver.with_budget(book, identity, label, budget)
        return book

    monkeypatch.setattr(perturb_driver, "budget_at_charge", registered_now)
    data, ledger = _table(tmp_path / "t.csv"), tmp_path / "ledger.sqlite3"
    code, _ = _perturb(capsys, data, ledger, "--domains", _domains(tmp_path), "--duplicates", "error",
                       "--budget", "100,0")
    assert code == 2 and len(_budgets(ledger)) >= 1


# -- a refused run on a ledger that does not exist yet ------------------------------------------

def test_a_run_without_a_budget_does_not_make_an_empty_ledger(capsys, tmp_path):
    data, ledger = _table(tmp_path / "t.csv"), tmp_path / "new" / "ledger.sqlite3"
    for argv in (["query", data, "count", "--epsilon", "0.1", "--ledger", ledger],
                 ["perturb", data, "--d", "0.1", "--gamma", "0.9", "--max-rows", "500", "--attributes", "sex",
                  "--out", tmp_path / "v.csv", "--ledger", ledger]):
        code, err = _run(capsys, *argv)
        assert code == 3 and err.count("\n") == 1 and "no privacy budget is set" in err, err
        assert not ledger.exists() and not ledger.parent.exists()


def test_the_new_ledger_rule_can_fail(capsys, tmp_path, monkeypatch):
    """Broken variant: the ledger opened first, as before: the refusal leaves an empty ledger."""
    monkeypatch.setattr(query_driver, "refuse_a_new_ledger_without_budget", lambda *args: None)
    data, ledger = _table(tmp_path / "t.csv"), tmp_path / "ledger.sqlite3"
    code, _ = _run(capsys, "query", data, "count", "--epsilon", "0.1", "--ledger", ledger)
    assert code == 3 and ledger.exists()


_REFUSED_BEFORE_THE_LEDGER = {
    "init with epsilon 0": (["ledger", "init", "{data}", "--epsilon", "0", "--delta", "1e-6"],
                            "a privacy budget needs epsilon > 0"),
    "init with delta 2": (["ledger", "init", "{data}", "--epsilon", "1", "--delta", "2"], "delta must lie in [0, 1)"),
    "budget on no ledger": (["ledger", "budget", "t", "--epsilon", "1", "--delta", "1e-6"],
                            "there is no ledger at"),
    "budget with epsilon 0": (["ledger", "budget", "t", "--epsilon", "0", "--delta", "1e-6"],
                              "a privacy budget needs epsilon > 0"),
    "publish with an .html custodian report": (
        ["publish", "{data}", "--epsilon", "1", "--delta", "1e-6", "--budget", "10,1e-5", "--qi", "age,sex,zip",
         "--out", "{out}/r.csv", "--custodian-report", "{out}/facts.html"], "the custodian report is JSON"),
    "publish with a custodian report beside the release": (
        ["publish", "{data}", "--epsilon", "1", "--delta", "1e-6", "--budget", "10,1e-5", "--qi", "age,sex,zip",
         "--out", "{out}/r.csv", "--custodian-report", "{out}/facts.json"], "would lie in the release's folder"),
}


@pytest.mark.parametrize("case", sorted(_REFUSED_BEFORE_THE_LEDGER))
def test_a_refused_budget_or_output_name_makes_no_ledger(case, capsys, tmp_path):
    argv, message = _REFUSED_BEFORE_THE_LEDGER[case]
    data, ledger = _table(tmp_path / "t.csv"), tmp_path / "new" / "ledger.sqlite3"
    filled = [a.format(data=data, out=tmp_path / "out") for a in argv]
    code, err = _run(capsys, *filled, "--ledger", ledger)
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not ledger.exists() and not ledger.parent.exists()
    assert not (tmp_path / "out").exists()


def test_the_refusals_before_the_ledger_can_fail(capsys, tmp_path, monkeypatch):
    """Broken variant: the ledger opened before the budget is checked, as before: the refusal
    leaves an empty ledger."""
    from crowdsafe import api
    from crowdsafe.privacy.ledger import Ledger

    checked_late = api.set_budget

    def opened_first(data, **options):
        Ledger(options["ledger"]).close()
        return checked_late(data, **options)

    monkeypatch.setattr(api, "set_budget", opened_first)
    data, ledger = _table(tmp_path / "t.csv"), tmp_path / "ledger.sqlite3"
    code, _ = _run(capsys, "ledger", "init", data, "--epsilon", "0", "--delta", "1e-6", "--ledger", ledger)
    assert code == 2 and ledger.exists()


# -- a new budget smaller than the run's cost (found by a second sweep: the budget was registered,
# then the run refused; a retry with a larger --budget was then held to the first one) ---------

def _over_budget_runs(tmp_path: Path) -> list[list]:
    data = _table(tmp_path / "t.csv")
    return [["publish", data, "--epsilon", "1", "--delta", "1e-6", "--budget", "0.5,1e-5", "--qi", "age,sex,zip",
             "--out", tmp_path / "out" / "r.csv"],
            ["query", data, "count", "--epsilon", "1", "--budget", "0.1,0"]]


def test_a_run_over_its_new_budget_registers_nothing(capsys, tmp_path):
    for i, argv in enumerate(_over_budget_runs(tmp_path)):
        ledger = tmp_path / f"ledger{i}.sqlite3"
        code, err = _run(capsys, *argv, "--ledger", ledger)
        assert code == 3 and err.count("\n") == 1, err
        assert _budgets(ledger) == [] and _entries(ledger) == []
    # the retry with a budget that holds the run is not held to the refused one
    code, err = _run(capsys, *_over_budget_runs(tmp_path)[1][:-1], "5,0", "--ledger", tmp_path / "ledger1.sqlite3")
    assert code == 0, err


def test_the_over_budget_rule_can_fail(capsys, tmp_path, monkeypatch):
    """Broken variant: the budget registered first, as before: the refused query leaves it."""

    def registered_first(book, identity, label, budget, polars_identity=True):
        query_driver.with_budget(book, identity, label, budget, polars_identity)
        return book

    monkeypatch.setattr(query_driver, "budget_at_charge", registered_first)
    ledger = tmp_path / "ledger.sqlite3"
    code, _ = _run(capsys, *_over_budget_runs(tmp_path)[1], "--ledger", ledger)
    assert code == 3 and _budgets(ledger) != []
