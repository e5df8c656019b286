"""An option given where it has no effect is refused in one line naming it and what it applies
to, before anything is read: accepted and ignored, it let its user believe it had an effect
(``--aggregate`` on a Mondrian run, ``--loss`` on MDAV)."""

from __future__ import annotations

import pytest

from cli_helpers import run_for_error
from crowdsafe import api
from crowdsafe.errors import ParameterError

MISSING = "no-such-file.csv"  # a refusal before the data is read names the option, not this file


@pytest.mark.parametrize("argv, expected", [
    (["--aggregate", "median"], "--aggregate applies to --algorithm mdav only"),
    (["--algorithm", "mdav", "--mode", "relaxed"], "--mode applies to --algorithm mondrian only"),
    (["--algorithm", "lattice", "--categorical", "set"], "--categorical applies to --algorithm mondrian only"),
    (["--algorithm", "mdav", "--loss", "entropy"], "--loss applies to --algorithm lattice only"),
    (["--search", "greedy"], "--search applies to --algorithm lattice only"),
    (["--algorithm", "mdav", "--time-budget", "5"], "--time-budget applies to --algorithm lattice only"),
    (["--algorithm", "lattice", "--search", "optimal", "--time-budget", "5"],
     "--time-budget applies to --search greedy or --search auto only"),
    (["--distance", "equal"], "--distance applies to t-closeness only"),
])
def test_anonymize_refuses_an_option_its_algorithm_does_not_read(capsys, argv, expected):
    code, err = run_for_error(capsys, "anonymize", MISSING, *argv)
    assert code == 2 and err.startswith("crowdsafe: error: ") and expected in err, err
    assert len(err.strip().splitlines()) == 1 and MISSING not in err, err


@pytest.mark.parametrize("options", [dict(aggregate="median"), dict(algorithm="mdav", loss="entropy"),
                                     dict(algorithm="lattice", mode="relaxed")])
def test_the_api_refuses_it_too_before_reading(options):
    with pytest.raises(ParameterError, match="applies to algorithm=") as refused:
        api.anonymize(MISSING, **options)
    assert len(str(refused.value).splitlines()) == 1



@pytest.mark.parametrize("argv", [["count"], ["count", "--mechanism", "laplace"], ["median(age) clamp 0..100"]])
def test_query_refuses_a_calibration_without_the_gaussian(capsys, tmp_path, argv):
    ledger = tmp_path / "ledger.sqlite3"
    code, err = run_for_error(capsys, "query", MISSING, *argv, "--epsilon", "1", "--calibration", "classic",
                              "--ledger", ledger)
    assert code == 2 and "--calibration applies to --mechanism gaussian only" in err, err
    assert len(err.strip().splitlines()) == 1 and MISSING not in err and not ledger.exists(), err
    with pytest.raises(ParameterError, match="the calibration parameter applies to mechanism='gaussian' only"):
        api.query(MISSING, argv[0], epsilon=1.0, calibration="analytic", ledger=None)


def test_compare_refuses_a_model_without_a_classifier(capsys, tmp_path):
    original, release = tmp_path / "d.csv", tmp_path / "r.csv"
    original.write_text("age,sex\n" + "".join(f"{30 + i % 4},{'FM'[i % 2]}\n" for i in range(20)))
    api.anonymize(str(original), k=2, out=str(release), report=False)
    code, err = run_for_error(capsys, "compare", original, release, "--model", "tree")
    assert code == 2 and "--model applies to the classifier, which runs with both a target attribute (--target" in err
    assert len(err.strip().splitlines()) == 1, err
    with pytest.raises(ParameterError, match="the model parameter applies to the classifier"):
        api.compare(str(original), str(release), model="logistic")


@pytest.mark.parametrize("argv, option", [(["--l", "3"], "--l"), (["--distance", "equal"], "--ground"),
                                          (["--ground", "ordered"], "--ground")])
def test_check_refuses_l_and_the_ground_distance_without_a_sensitive_attribute(capsys, tmp_path, argv, option):
    data = tmp_path / "d.csv"
    data.write_text("age,sex\n" + "".join(f"{30 + i % 4},{'FM'[i % 2]}\n" for i in range(20)))
    code, err = run_for_error(capsys, "check", data, *argv)
    assert code == 2 and f"{option} applies to the sensitive attributes (--sensitive, or the schema's)" in err, err
    assert len(err.strip().splitlines()) == 1, err
    with pytest.raises(ParameterError, match="the l parameter applies to the sensitive attributes"):
        api.check(str(data), l=2)


NO_OUT = "applies to --out only (nothing is written without it)"


@pytest.mark.parametrize("argv, expected", [
    (["anonymize", MISSING, "--no-report"], f"--no-report {NO_OUT}"),
    (["anonymize", MISSING, "--force"], f"--force {NO_OUT}"),
    (["query", MISSING, "count", "--epsilon", "1", "--force"], f"--force {NO_OUT}"),
    (["attack", "intersection", MISSING, "--targets", MISSING, "--sensitive", "s", "--qi", "a", "--force"],
     f"--force {NO_OUT}"),
    (["estimate", MISSING, "count", "--max-queries", "5"], "--max-queries applies to --equality only"),
])
def test_an_output_option_without_the_output_is_refused_before_reading(capsys, tmp_path, monkeypatch, argv, expected):
    monkeypatch.chdir(tmp_path)
    code, err = run_for_error(capsys, *argv)
    assert code == 2 and expected in err, err
    assert len(err.strip().splitlines()) == 1 and not list(tmp_path.iterdir()), err
