"""`crowdsafe query` and `crowdsafe ledger`: the issue's example, JSON, errors, and the ledger."""

from __future__ import annotations

import json
import sys

import pytest

from cli_helpers import run_command


def test_the_issue_example_needs_a_budget_then_answers(capsys):
    code, _, err = run_command(capsys, "query", "adult", "count where age >= 30 and sex = 'Female'", "--epsilon", "0.1")
    assert code == 3 and "no privacy budget is set for 'adult'" in err and err.count("\n") == 1
    assert run_command(capsys, "ledger", "init", "adult", "--epsilon", "1", "--delta", "1e-6")[0] == 0
    code, out, _ = run_command(capsys, "query", "adult", "count where age >= 30 and sex = 'Female'", "--epsilon", "0.1")
    assert code == 0
    assert "95% interval" in out and "(ε = 0.1, δ = 0)" in out and "discrete Laplace" in out
    assert "spent ε 0.1 of 1" in out


def test_json_answer_and_ledger_show(capsys, tmp_path):
    code, out, _ = run_command(capsys, "query", "adult", "histogram sex, race, income", "--epsilon", "0.5",
                               "--budget", "1,1e-6", "--seed", "3", "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["kind"] == "histogram" and len(answer["value"]) == 20
    assert answer["epsilon"] == 0.5 and answer["error_interval_95"] == [-6.0, 6.0]
    assert answer["randomness"]["fit_for_release"] is False
    code, out, _ = run_command(capsys, "ledger", "show", "--json")
    report = json.loads(out)
    (dataset,) = report["datasets"]
    assert dataset["name"] == "adult" and dataset["spent"]["epsilon"] == 0.5
    assert dataset["entries"][0]["seeded"] is True
    written = tmp_path / "export.json"
    assert run_command(capsys, "ledger", "show", "adult", "--out", str(written))[0] == 0
    assert json.loads(written.read_text())["datasets"][0]["name"] == "adult"
    # the export is JSON: a .csv name is refused in one line, nothing written (it once wrote JSON there)
    code, _, err = run_command(capsys, "ledger", "show", "--out", str(tmp_path / "export.csv"))
    assert code == 2 and "name it with .json" in err and err.count("\n") == 1
    assert not (tmp_path / "export.csv").exists()
    code, out, _ = run_command(capsys, "ledger", "show")
    assert code == 0 and "histogram" in out and "completed" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["query", "adult", "count where agee > 3", "--epsilon", "1", "--budget", "1,0"], "did you mean 'age'"),
        (["query", "adult", "count where age >", "--epsilon", "1", "--budget", "1,0"], "does not parse"),
        (["query", "adult", "sum(age)", "--epsilon", "1", "--budget", "1,0"], "clamping bounds"),
        # one message for every ε no mechanism can use (-1 once said ">= 0", 0 said "> 0")
        (["query", "adult", "count", "--epsilon", "-1", "--budget", "1,0"], "epsilon must be a finite number > 0"),
        (["query", "adult", "count", "--epsilon", "0", "--budget", "1,0"], "epsilon must be a finite number > 0"),
        (["query", "adult", "count", "--epsilon", "1", "--delta", "1", "--mechanism", "gaussian", "--budget", "1,0"],
         "delta"),
        (["query", "adult", "count", "--epsilon", "1", "--budget", "x"], "--budget"),
        (["query", "adult", "count", "--epsilon", "1", "--no-ledger", "--budget", "1,0"], "--no-ledger"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_registers_nothing(capsys, private_ledger, argv, fragment):
    code, out, err = run_command(capsys, *argv)
    assert code == 2 and fragment in err and err.count("\n") == 1
    code, out, _ = run_command(capsys, "ledger", "show", "--json")
    assert json.loads(out)["datasets"] == []


def test_over_budget_is_refused(capsys):
    assert run_command(capsys, "ledger", "init", "adult", "--epsilon", "0.15", "--delta", "0")[0] == 0
    assert run_command(capsys, "query", "adult", "count", "--epsilon", "0.1")[0] == 0
    code, _, err = run_command(capsys, "query", "adult", "count", "--epsilon", "0.1")
    assert code == 3 and "refused" in err and "nothing was computed" in err


def test_no_ledger_runs_without_one(capsys, private_ledger):
    code, out, _ = run_command(capsys, "query", "adult", "median(age) clamp 17..90", "--epsilon", "1", "--no-ledger",
                               "--json")
    assert code == 0 and json.loads(out)["ledger"] is None
    assert not private_ledger.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604], ids=oct)
def test_a_ledger_others_can_read_is_refused_in_one_line(capsys, private_ledger, mode):
    assert run_command(capsys, "ledger", "init", "adult", "--epsilon", "1", "--delta", "0")[0] == 0
    assert private_ledger.stat().st_mode & 0o777 == 0o600  # made private
    private_ledger.chmod(mode)
    before = private_ledger.read_bytes()
    expected = (f"crowdsafe: error: the ledger {private_ledger} is open to other users ({private_ledger} is "
                f"{mode:o}): it holds the secret identity key and custodian-only reports; make it private with "
                f"`chmod 600 {private_ledger}`\n")
    for argv in (["query", "adult", "count", "--epsilon", "0.1"], ["ledger", "show"],
                 ["ledger", "init", "adult", "--epsilon", "1", "--delta", "0"]):
        assert run_command(capsys, *argv) == (2, "", expected)
    assert private_ledger.read_bytes() == before
    private_ledger.chmod(0o600)
    code, out, _ = run_command(capsys, "query", "adult", "count", "--epsilon", "0.1")
    assert code == 0 and "spent ε 0.1 of 1" in out


@pytest.mark.parametrize("command", [["query", "--help"], ["ledger", "init", "--help"], ["ledger", "show", "--help"]])
def test_help_has_an_example(capsys, command):
    code, out, _ = run_command(capsys, *command)
    assert code == 0 and "Example:" in out


def test_clamp_counts_only_with_custodian_under_a_not_covered_heading(capsys, tmp_path):
    argv = ["query", "adult", "sum(age) clamp 20..60", "--epsilon", "0.5", "--no-ledger", "--seed", "1"]
    code, out, _ = run_command(capsys, *argv)
    assert code == 0 and "values clamped" not in out and "custodian" not in out
    code, out, _ = run_command(capsys, *argv, "--json")
    assert code == 0 and "values_clamped" not in out and "fingerprint" not in out
    written = tmp_path / "answer.json"
    code, out, _ = run_command(capsys, *argv, "--custodian", "--out", str(written))
    assert code == 0 and "NOT covered by the differential-privacy guarantee" in out
    assert "values clamped down" in out
    assert "values_clamped" not in written.read_text()  # --out holds the public answer only
    code, out, _ = run_command(capsys, *argv, "--custodian", "--json")
    assert json.loads(out)["custodian_only_not_dp"]["values_clamped_down"] > 0


def test_ledger_init_needs_delta(capsys, private_ledger):
    code, out, err = run_command(capsys, "ledger", "init", "adult", "--epsilon", "3")
    assert code == 2 and err.startswith("crowdsafe: error: --delta is required") and err.count("\n") == 1
    assert not private_ledger.exists()


def test_a_budget_is_lowered_and_raised_on_the_record_and_a_stuck_dataset_unstuck(capsys, private_ledger):
    gaussian = ["query", "adult", "count", "--epsilon", "0.5", "--delta", "1e-7", "--mechanism", "gaussian"]
    assert run_command(capsys, "ledger", "init", "adult", "--epsilon", "3", "--delta", "0")[0] == 0
    code, _, err = run_command(capsys, *gaussian)  # δ was left out: nothing with δ > 0 can be charged
    assert code == 3 and err.count("\n") == 1
    assert "if δ was left out by mistake, raise it on the record: `crowdsafe ledger budget adult --epsilon E " \
           "--delta D` with --raise" in err
    code, _, err = run_command(capsys, "ledger", "budget", "adult", "--epsilon", "3", "--delta", "1e-6")
    assert code == 2 and err == ("crowdsafe: error: (ε=3, δ=1e-06) would raise the budget of 'adult' from "
                                 "(ε=3, δ=0): a raise needs --raise, and is recorded in the ledger's history\n")
    code, out, _ = run_command(capsys, "ledger", "budget", "adult", "--epsilon", "3", "--delta", "1e-6", "--raise",
                               "--reason", "delta was left out")
    assert code == 0 and out.startswith("'adult' has the budget (ε 3, δ 1e-06)")
    assert run_command(capsys, *gaussian)[0] == 0
    code, out, _ = run_command(capsys, "ledger", "budget", "adult", "--epsilon", "0.25", "--delta", "1e-6")
    assert code == 0 and "more than the budget is spent: nothing more can be charged" in " ".join(out.split())
    assert run_command(capsys, *gaussian)[0] == 3  # refused by the ledger
    code, out, _ = run_command(capsys, "ledger", "show", "--json")
    history = json.loads(out)["datasets"][0]["budget_changes"]
    assert [(c["change"], c["after"]["epsilon"], c["reason"]) for c in history] == [
        ("set", 3.0, ""), ("raised", 3.0, "delta was left out"), ("lowered", 0.25, "")]
    assert history[2]["spent"]["epsilon"] == 0.5 and history[2]["before"] == {"epsilon": 3.0, "delta": 1e-6}
    code, out, _ = run_command(capsys, "ledger", "show")
    assert "budget raised from (ε 3, δ 0) to (ε 3, δ 1e-06) by " in out
    assert "(spent then: ε 0, δ 0): delta was left out" in " ".join(out.split())
    assert "budget lowered from (ε 3, δ 1e-06) to (ε 0.25, δ 1e-06)" in " ".join(out.split())


def test_ledger_budget_finds_a_dataset_by_its_data_file(capsys, tmp_path, private_ledger):
    data = tmp_path / "people.csv"
    data.write_text("age,sex\n30,F\n40,M\n")
    assert run_command(capsys, "ledger", "init", str(data), "--epsilon", "1", "--delta", "0", "--name", "staff")[0] == 0
    code, out, err = run_command(capsys, "ledger", "budget", str(data), "--epsilon", "0.5", "--delta", "0")
    assert code == 0 and out.startswith("'staff' has the budget (ε 0.5, δ 0)"), err
    code, _, err = run_command(capsys, "ledger", "budget", "nobody", "--epsilon", "0.5", "--delta", "0")
    assert code == 2 and "dataset 'nobody' has no budget in the ledger" in err
