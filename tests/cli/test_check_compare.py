"""``crowdsafe check`` (the full privacy report) and ``crowdsafe compare`` on the command line."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import models
from crowdsafe.datasets import adult

QI = ["age", "sex", "race", "education"]


def test_check_json_has_every_model_and_risk(capsys):
    code, out, err = run_command(capsys, "check", "adult", "--qi", ",".join(QI), "--sensitive", "occupation,income",
                                 "--k", "5", "--l", "3", "--population-size", "100000", "--json")
    assert code == 0, err
    report = json.loads(out)
    privacy = report["privacy"]
    data = adult()
    assert privacy["k"] == report["k"] == models.k_anonymity(data, QI)
    occupation = privacy["sensitive"][0]
    assert occupation["attribute"] == "occupation"
    assert occupation["l_distinct"] == models.l_diversity(data, "occupation", QI)
    assert occupation["l_entropy"] == pytest.approx(models.entropy_l_diversity(data, "occupation", QI))
    assert occupation["t"] == pytest.approx(models.t_closeness(data, "occupation", QI))
    assert occupation["recursive_l"] == 3
    sizes = data.frame.group_by(QI).len().get_column("len")
    assert privacy["classes_below_target_k"] == int((sizes < 5).sum())
    assert privacy["risk"]["prosecutor"]["highest"] == 1 / sizes.min()
    assert privacy["risk"]["population_uniques"]["population_size"] == 100_000


def test_check_human_report(capsys):
    code, out, _ = run_command(capsys, "check", "adult", "--qi", "sex,race", "--sensitive", "income")
    assert code == 0
    for text in ("ℓ-diversity, entropy", "t-closeness", "δ-disclosure", "β-likeness, enhanced",
                 "effective anonymity", "Re-identification risk", "prosecutor", "marketer"):
        assert text in out


@pytest.mark.slow
def test_check_a_release_against_its_original(capsys, tmp_path):
    data = adult()
    levels = {"age": 2, "workclass": 1, "education": 1, "marital-status": 2, "occupation": 1, "race": 0, "sex": 0,
              "native-country": 2}
    release = data.recode(levels).filter(pl.len().over(data.quasi_identifiers) >= 10)
    path = tmp_path / "release.csv"
    release.write_csv(path)
    code, out, err = run_command(capsys, "check", str(path), "--original", "adult", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["k"] >= 10
    assert report["quasi_identifiers"] == data.quasi_identifiers  # roles come from the original
    assert report["privacy"]["sensitive"][0]["attribute"] == "income"


@pytest.mark.slow
def test_compare_json_and_human(capsys, tmp_path):
    data = adult()
    release = data.recode({"age": 2, "native-country": 3}).filter(pl.len().over(data.quasi_identifiers) >= 2)
    path = tmp_path / "release.parquet"
    release.write_parquet(path)
    code, out, err = run_command(capsys, "compare", "adult", str(path), "--queries", "200", "--model", "tree", "--json")
    assert code == 0, err
    report = json.loads(out)
    loss = report["information_loss"]
    assert loss["suppressed_rows"] == data.n_rows - release.height
    assert report["classifier"]["target"] == "income" and report["classifier"]["test_rows"] == 16_281
    assert report["workload"]["queries"] == 200
    small = tmp_path / "small.csv"
    data.frame.head(3000).write_csv(small)
    small_release = tmp_path / "small_release.csv"
    data.with_frame(data.frame.head(3000)).recode({"age": 2}).head(2500).write_csv(small_release)
    code, out, err = run_command(capsys, "compare", str(small), str(small_release), "--queries", "50")
    assert code == 0, err
    for text in ("Information loss", "GCP", "Marginal distributions", "Counting-query workload",
                 "classifier utility skipped"):
        assert text in out


def test_compare_and_check_errors(capsys, tmp_path):
    path = tmp_path / "bad.csv"
    pl.DataFrame({"age": ["[20, 30)", "Old"], "sex": ["Male", "Female"]}).write_csv(path)
    code, _, err = run_command(capsys, "compare", "adult", str(path), "--qi", "age,sex")
    assert code == 2 and "'Old'" in err and "\n" == err[-1] and err.count("\n") == 1
    code, _, err = run_command(capsys, "check", "adult", "--qi", "sex", "--sensitive", "income", "--ground",
                               "manhattan")
    assert code == 2 and "ground distance" in err
    code, _, err = run_command(capsys, "check", "adult", "--qi", "sex", "--risk-threshold", "2")
    assert code == 2 and "threshold" in err


def test_compare_on_a_sampled_release_says_the_unsampled_rows_count_as_suppressed(tmp_path, capsys):
    """Found by a new user's walk-through: ``publish`` said 224 rows suppressed (13.9% of its
    sample), ``compare`` on the same release 3,611 (72.2%), with no word that it counted the rows
    the sample left out. It now says so, with the β of the certificate and the options that
    measure the sample (``--input-rows``, ``--scale``); given ``--input-rows``, no note."""
    from report_tables import publish_small, small_table

    result = publish_small(tmp_path, small_table())
    beta = result.certificate.sample["rate"]
    args = ["compare", str(tmp_path / "data.parquet"), str(tmp_path / "out" / "r.csv"), "--schema",
            str(tmp_path / "schema.toml"), "--queries", "20", "--json"]
    code, out, err = run_command(capsys, *args)
    assert code == 0, err
    notes = [n for n in json.loads(out)["notes"] if n.startswith("the release is a Bernoulli sample")]
    assert len(notes) == 1 and f"beta = {beta:.4g}" in notes[0] and f"--scale {1 / beta:.4g}" in notes[0]
    assert "--input-rows N" in notes[0]
    code, out, err = run_command(capsys, *args, "--input-rows", "900")
    assert code == 0, err
    assert not any(n.startswith("the release is a Bernoulli sample") for n in json.loads(out)["notes"])
