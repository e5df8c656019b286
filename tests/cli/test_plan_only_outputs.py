"""``--plan-only`` writes nothing, and says so when output options were given: a run that prints
its plan beside ``--out release.csv`` could be taken for one that wrote the release."""

from __future__ import annotations

from tests.cli_helpers import run_command

PERTURB = ["--c", "5", "--gamma", "0.2", "--max-rows", "50000", "--attributes",
           "age,education,occupation,native-country,sex,income"]


def test_publish_names_the_outputs_it_does_not_write(capsys, tmp_path):
    out, report = tmp_path / "release.csv", tmp_path / "custodian.json"
    code, _, err = run_command(capsys, "publish", "adult", "--plan-only", "--out", str(out),
                               "--custodian-report", str(report))
    assert code == 0, err
    assert f"crowdsafe: note: --plan-only writes nothing: --out {out}, --custodian-report {report} not written" in err
    assert list(tmp_path.iterdir()) == []


def test_perturb_names_the_outputs_it_does_not_write(capsys, tmp_path):
    out, certificate = tmp_path / "view.csv", tmp_path / "view.json"
    code, _, err = run_command(capsys, "perturb", "adult", *PERTURB, "--plan-only", "--out", str(out),
                               "--certificate", str(certificate))
    assert code == 0, err
    assert f"--plan-only writes nothing: --out {out}, --certificate {certificate} not written" in err
    assert list(tmp_path.iterdir()) == []


def test_no_note_without_output_options(capsys):
    for argv in (["publish", "adult", "--plan-only"], ["perturb", "adult", *PERTURB, "--plan-only"]):
        code, _, err = run_command(capsys, *argv)
        assert code == 0 and "writes nothing" not in err, err
