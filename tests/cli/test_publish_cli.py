"""`crowdsafe publish`: the README's main command, plan-only, JSON, errors."""

from __future__ import annotations

import json
import math
import re

import pytest

from cli_helpers import run_command
from crowdsafe import cli
from crowdsafe.privacy import Certificate


def test_main_command_prints_plan_utility_and_where_it_wrote(capsys, tmp_path):
    out_path = tmp_path / "release" / "adult.csv"
    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", "1", "--delta", "1e-6", "--budget", "10,1e-5",
                                 "--out", str(out_path))
    assert code == 0, err
    from crowdsafe.anonymize.publish import PlanRequest, plan_for_dataset
    from crowdsafe.datasets import adult

    plan = plan_for_dataset(adult("train"), PlanRequest(1.0, 1e-6))  # what the command should have run
    # the rate to 4 digits, rounded down (the largest rate k covers: typed back with --k, it is taken)
    printed = float(re.search(r"sampling +beta = ([0-9.e-]+) ", out).group(1))
    assert printed <= plan.beta < printed + 10.0 ** (math.floor(math.log10(plan.beta)) - 3)
    for text in ("plan", f"k             {plan.k}", "NCP", "suppressed", "DP under sampling",
                 "fit for release", str(out_path), "adult.certificate.json", "spent epsilon 1 of 10"):
        assert text in out
    certificate = Certificate.read(tmp_path / "release" / "adult.certificate.json")
    assert certificate.fit_for_release and certificate.guarantee == "dps"
    # the exact facts are printed only after the custodian-only heading; nothing else is written
    public, _, custodian = out.partition("custodian only (exact facts about the data: NOT covered by the guarantee")
    assert custodian and "NCP" not in public and "suppressed" not in public and "spent epsilon" not in public
    assert "32,561 rows" in custodian and "NCP" in custodian
    assert sorted(p.name for p in (tmp_path / "release").iterdir()) == ["adult.certificate.json", "adult.csv",
                                                                     "adult.report.html"]


def test_custodian_report_goes_only_where_named_and_never_beside_the_release(capsys, tmp_path):
    out_path = tmp_path / "release" / "adult.csv"
    code, _, err = run_command(capsys, "publish", "adult", "--scheme", "coarse", "--budget", "10,1e-5", "--out",
                               str(out_path), "--custodian-report", str(tmp_path / "release" / "facts.json"))
    assert code == 2 and "in the release's folder" in err and not (tmp_path / "release").exists()
    code, _, err = run_command(capsys, "publish", "adult", "--scheme", "coarse", "--budget", "10,1e-5", "--out",
                               str(out_path), "--custodian-report", str(tmp_path / "release" / "sub" / "facts.json"))
    assert code == 2 and "in the release's folder" in err and not (tmp_path / "release").exists()  # below it too
    report = tmp_path / "private" / "facts.json"
    code, out, err = run_command(capsys, "publish", "adult", "--scheme", "coarse", "--budget", "10,1e-5", "--out",
                                 str(out_path), "--custodian-report", str(report), "--json")
    assert code == 0, err
    payload = json.loads(out)
    facts = json.loads(report.read_text())
    assert facts["notice"].startswith("CUSTODIAN ONLY") and facts["input_rows"] == 32561
    assert payload["custodian_only"]["releases"] == facts["releases"]
    public = {k: v for k, v in payload.items() if k != "custodian_only"}
    assert "32561" not in json.dumps(public) and "sample_rows" not in json.dumps(public)
    assert payload["releases"][0]["dp_output"]["rows_published"] == facts["releases"][0]["sample_rows"] - \
        facts["releases"][0]["suppressed_rows"]


def test_plan_only_writes_nothing_and_charges_nothing(capsys, tmp_path, private_ledger):
    code, out, _ = run_command(capsys, "publish", "adult", "--plan-only", "--json", "--out", str(tmp_path / "x.csv"))
    assert code == 0
    payload = json.loads(out)
    plan, facts = payload["plan"], payload["custodian_only"]
    from crowdsafe.privacy import dps_delta

    # k is the least k reaching delta at the printed beta and epsilon1, checked with d itself
    k, beta, epsilon1 = plan["k"], plan["beta"], plan["epsilon1"]
    assert dps_delta(k, beta, 1.0, epsilon1) <= 1e-6 < dps_delta(k - 1, beta, 1.0, epsilon1)
    assert 0 < epsilon1 < 0.5 and plan["candidates"] == 6 * 3 * 4 * 4 * 4 * 2 * 2 * 4 * 2
    assert "rows" not in plan and "expected_sample_rows" not in plan
    assert facts["input_rows"] == 32561 and facts["notice"].startswith("CUSTODIAN ONLY")
    assert facts["expected_sample_rows"] == pytest.approx(32561 * plan["beta"])
    assert not (tmp_path / "x.csv").exists() and not private_ledger.exists()


def test_json_release_with_a_fixed_scheme_and_a_seed(capsys, tmp_path):
    code, out, _ = run_command(capsys, "publish", "adult", "--scheme", "coarse,age=2", "--seed", "1", "--no-ledger",
                               "--json", "--out", str(tmp_path / "r.parquet"))
    assert code == 0
    payload = json.loads(out)
    assert payload["plan"]["epsilon1"] == 0.0 and payload["releases"][0]["dp_output"]["scheme"]["age"] == 2
    assert payload["fit_for_release"] is False and "Theorem 5" in payload["guarantee"]
    assert any("NOT fit for release" in n for n in payload["notes"])
    assert any("no ledger" in n for n in payload["notes"])
    assert payload["accounting"] == {"ledger": False} and len(payload["unfit_reasons"]) == 2
    assert payload["custodian_only"]["ledger"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "1"], "k must be a whole number >= 2"),
        (["--beta", "0.9", "--epsilon", "1"], "epsilon"),
        (["--beta", "0.001", "--delta", "0.01"], "beta > delta"),
        (["--scheme", "age=7"], "levels 0..5"),
        (["--scheme", "medium", "--epsilon1", "0.1"], "spends no epsilon1"),
        (["--no-ledger", "--budget", "1"], "cannot be combined"),
        (["--epsilon", "5e-324", "--delta", "1e-6"],
         "epsilon = 4.94066e-324 is too small: the sampling rate beta must exceed delta"),
        (["--epsilon", "1", "--delta", "0"], "delta must satisfy 0 < delta < 1"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(capsys, tmp_path, private_ledger, args, message):
    out_path = tmp_path / "r.csv"
    code, _, err = run_command(capsys, "publish", "adult", *args, "--out", str(out_path))
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out_path.exists()
    if private_ledger.exists():
        from crowdsafe.privacy.ledger import Ledger

        assert Ledger(private_ledger).entries() == []


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        cli.app(["publish", "--help"], prog_name="crowdsafe")
    assert "Example: crowdsafe publish adult" in capsys.readouterr().out


def test_classification_objective_keeps_the_target_and_says_what_it_optimised(capsys, tmp_path):
    out_path = tmp_path / "release" / "adult.csv"
    code, out, err = run_command(capsys, "publish", "adult", "--objective", "classification", "--target", "income",
                                 "--no-ledger", "--seed", "3", "--json", "--out", str(out_path))
    assert code == 0, err
    payload = json.loads(out)
    assert payload["plan"]["objective"] == "classification" and payload["plan"]["target"] == "income"
    # candidates: every node with income at level 0 (heights 5, 2, 3, 3, 3, 1, 1, 3 of the eight QIs)
    assert payload["plan"]["candidates"] == 6 * 3 * 4 * 4 * 4 * 2 * 2 * 4
    chooser = payload["releases"][0]["chooser"]
    assert chooser["objective"] == "classification" and chooser["score_sensitivity"] == 1.0
    assert chooser["score_monotone"]
    assert payload["releases"][0]["dp_output"]["scheme"]["income"] == 0
    certificate = Certificate.read(tmp_path / "release" / "adult.certificate.json")
    assert certificate.parameters["selection"]["objective"] == "classification"


def test_columns_publish_exactly_those_columns(capsys, tmp_path):
    out_path = tmp_path / "adult.csv"
    code, _, err = run_command(capsys, "publish", "adult", "--columns", "age,sex,income", "--no-ledger", "--seed", "1",
                               "--out", str(out_path))
    assert code == 0, err
    header = out_path.read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",") == ["age", "sex", "income"]


def test_plan_only_compares_column_sets(capsys):
    code, out, err = run_command(capsys, "publish", "adult", "--plan-only", "--json", "--objective", "classification",
                                 "--target", "income", "--columns", "age,education,income",
                                 "--columns", "age,workclass,education,sex,income")
    assert code == 0, err
    plans = json.loads(out)["plans"]
    assert [p["columns"] for p in plans] == [["age", "education", "income"],
                                             ["age", "workclass", "education", "sex", "income"]]
    assert [p["plan"]["candidates"] for p in plans] == [6 * 4, 6 * 3 * 4 * 2]
    for plan in plans:  # the table's size appears only under the custodian-only key
        assert plan["custodian_only"]["input_rows"] == 32561
        assert "input_rows" not in plan["plan"]
        assert plan["custodian_only"]["resolution"]["classes_fillable"] > 0
    code, out, err = run_command(capsys, "publish", "adult", "--plan-only", "--columns", "age,education,income",
                                 "--columns", "age,sex,income")
    assert code == 0, err
    assert out.count("columns       ") == 2 and out.count("custodian only") == 2


def test_plan_only_says_its_custodian_facts_read_the_values_too(capsys, tmp_path):
    """``--plan-only``'s custodian-only facts: the notice said "computed from the table's exact
    size", but two tables of one size whose column holds another number of values (an observed
    hierarchy: no schema) get other possible tuples. The notice now says so."""
    possible = []
    for name, values in (("d", 20), ("d1", 21)):
        data = tmp_path / f"{name}.csv"
        data.write_text("x\n" + "".join(f"v{i % values}\n" for i in range(4000)))
        code, out, err = run_command(capsys, "publish", str(data), "--qi", "x", "--plan-only", "--json",
                                     "--epsilon", "1", "--delta", "1e-5", "--k", "41", "--beta", "0.5")
        assert code == 0, err
        facts = json.loads(out)["custodian_only"]
        assert facts["input_rows"] == 4000
        possible.append(facts["resolution"]["possible_tuples"])
        assert "exact size" in facts["notice"] and "the values its column holds" in facts["notice"]
    assert possible[0] != possible[1]  # the premise: the same size, other facts


def test_heavy_suppression_is_written_exit_0_and_warned_under_the_custodian_heading(capsys, tmp_path):
    data = tmp_path / "unique.csv"
    data.write_text("x\n" + "".join(f"v{i}\n" for i in range(200)))
    base = ["publish", str(data), "--qi", "x", "--epsilon", "1", "--delta", "1e-3", "--k", "20", "--beta", "0.5",
            "--scheme", "none", "--seed", "1"]
    code, out, err = run_command(capsys, *base, "--out", str(tmp_path / "text" / "r.csv"))
    assert code == 0 and err == ""
    public, heading, custodian = out.partition("custodian only (exact facts about the data")
    assert heading and "  warning       the release suppressed 100.0% of its sample" in custodian
    assert "warning" not in public and "100.0%" not in public
    assert sorted(p.name for p in (tmp_path / "text").iterdir()) == ["r.certificate.json", "r.csv", "r.report.html"]
    code, out, err = run_command(capsys, *base, "--json", "--no-ledger", "--out", str(tmp_path / "json" / "r.csv"))
    payload = json.loads(out)
    assert code == 0 and err == "" and payload["releases"][0]["dp_output"]["rows_published"] == 0
    (warning,) = payload["custodian_only"]["warnings"]
    assert warning.startswith("the release suppressed 100.0% of its sample")
    assert warning not in json.dumps({k: v for k, v in payload.items() if k != "custodian_only"})


def test_force_replaces_only_what_crowdsafe_did_not_write_and_a_rerun_needs_none(capsys, tmp_path):
    base = ["publish", "adult", "--scheme", "coarse", "--seed", "2", "--no-ledger", "--json"]
    code, plain, err = run_command(capsys, *base, "--out", str(tmp_path / "plain" / "r.csv"))
    assert code == 0 and err == ""
    (tmp_path / "forced").mkdir()
    (tmp_path / "forced" / "r.report.html").write_text("<p>my notes</p>\n")  # not crowdsafe's: no mark
    code, _, err = run_command(capsys, *base, "--out", str(tmp_path / "forced" / "r.csv"))
    assert code == 2 and err.count("\n") == 1 and "r.report.html exists and crowdsafe did not write it: give " \
        "--force to replace it, or choose another path for --out" in err
    assert [p.name for p in (tmp_path / "forced").iterdir()] == ["r.report.html"]
    code, forced, err = run_command(capsys, *base, "--force", "--out", str(tmp_path / "forced" / "r.csv"))
    assert code == 0 and err == ""
    assert forced.replace("forced", "plain") == plain
    assert [p.read_bytes() for p in sorted((tmp_path / "forced").iterdir())] == \
        [p.read_bytes() for p in sorted((tmp_path / "plain").iterdir())]
    code, again, err = run_command(capsys, *base, "--out", str(tmp_path / "plain" / "r.csv"))  # the README's rerun
    assert code == 0 and err == "" and again == plain


def test_the_ledger_records_a_release_by_its_absolute_path(capsys, tmp_path, monkeypatch):
    """Found by a new user's walk-through: ``publish ... --out release/r.csv`` recorded
    ``release/r.csv`` in the ledger as typed, and the app (or any session started in another
    folder) read it against its own working folder: the attack page listed the release as
    missing. The ledger now holds the absolute path."""
    from pathlib import Path

    from crowdsafe.privacy.ledger import Ledger

    work = tmp_path / "work"
    work.mkdir()
    (work / "t.csv").write_text("age,sex\n" + "".join(f"{20 + i % 50},{'FM'[i % 2]}\n" for i in range(400)),
                                encoding="utf-8")
    monkeypatch.chdir(work)
    code, _, err = run_command(capsys, "publish", "t.csv", "--scheme", "coarse", "--epsilon", "1", "--delta", "1e-6",
                               "--budget", "10,1e-5", "--ledger", str(tmp_path / "ledger.sqlite3"), "--out",
                               "release/r.csv")
    assert code == 0, err
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        written = book.entries()[0].outcome["written"]
    assert written == [str(work / "release" / "r.csv")]
    monkeypatch.chdir(tmp_path)  # another session's working folder
    assert all(Path(p).is_file() for p in written)


@pytest.mark.slow  # three publishes of Adult
def test_a_rerun_with_the_same_budget_publishes_and_another_budget_is_refused(capsys, tmp_path, private_ledger):
    """A nightly script reruns `publish ... --budget E,D`: the same budget is a no-op, and another
    one (the script's budget lowered) is refused before anything is charged, as `query` refuses
    it. It was ignored: the run went on spending the budget registered first."""
    argv = ["publish", "adult", "--scheme", "coarse", "--seed", "1", "--no-report", "--out"]
    assert run_command(capsys, *argv, str(tmp_path / "a.csv"), "--budget", "10,1e-5")[0] == 0
    assert run_command(capsys, *argv, str(tmp_path / "b.csv"), "--budget", "10,1e-5")[0] == 0
    for other in ("3,1e-5", "10,1e-6", "20,1e-5"):
        code, out, err = run_command(capsys, *argv, str(tmp_path / "c.csv"), "--budget", other)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "already has the budget (ε=10, δ=1e-05); change it on the record with `crowdsafe ledger budget" in err
    assert not (tmp_path / "c.csv").exists()
    assert run_command(capsys, "query", "adult", "count", "--epsilon", "0.1", "--budget", "20,1e-5")[2] == err
    code, out, _ = run_command(capsys, "ledger", "show", "--json")
    [dataset] = json.loads(out)["datasets"]
    assert dataset["budget"] == {"epsilon": 10.0, "delta": 1e-5} and len(dataset["entries"]) == 2
