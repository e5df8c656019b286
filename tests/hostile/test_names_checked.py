"""Names a command is given must name something: a record id to score an attack by, a target for
the classifier, a declared domain with values (found by a black-box sweep: each was accepted and
silently ignored, or gave an empty domain)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from cli_helpers import run_for_error

_run = run_for_error


def _table(path: Path) -> Path:
    rng = np.random.default_rng(3)
    pl.DataFrame({"id": np.arange(300), "age": rng.integers(20, 80, 300), "sex": rng.choice(["F", "M"], 300),
                  "zip": rng.choice(["a", "b", "c"], 300)}).write_csv(path)
    return path


def test_an_unknown_truth_id_is_refused(capsys, tmp_path):
    data = _table(tmp_path / "t.csv")
    release = tmp_path / "r.csv"
    assert _run(capsys, "anonymize", data, "--k", "5", "--qi", "age,sex", "--sensitive", "zip", "--out", release,
                "--no-report")[0] == 0
    base = ["attack", "intersection", release, "--targets", data, "--qi", "age,sex", "--sensitive", "zip"]
    code, err = _run(capsys, *base, "--truth-id", "nosuch")
    assert code == 2 and err.count("\n") == 1 and "no column 'nosuch'" in err, err
    assert _run(capsys, *base, "--truth-id", "id")[0] == 0  # a real column still scores


def test_an_unknown_classifier_target_is_refused(capsys, tmp_path):
    data = _table(tmp_path / "t.csv")
    release = tmp_path / "r.csv"
    assert _run(capsys, "anonymize", data, "--k", "5", "--qi", "age,sex", "--out", release, "--no-report")[0] == 0
    code, err = _run(capsys, "compare", data, release, "--qi", "age,sex", "--target", "nosuch")
    assert code == 2 and err.count("\n") == 1 and "no target column 'nosuch'" in err, err


def test_an_empty_declared_domain_is_refused(capsys, tmp_path):
    data = _table(tmp_path / "t.csv")
    domains = tmp_path / "d.json"
    domains.write_text(json.dumps({"sex": [], "zip": ["a", "b", "c"]}), encoding="utf-8")
    code, err = _run(capsys, "perturb", data, "--attributes", "sex,zip", "--domains", domains, "--max-rows", "500",
                     "--gamma", "0.9", "--d", "0.1", "--out", tmp_path / "v.csv", "--no-report")
    assert code == 2 and err.count("\n") == 1 and "'sex' in --domains FILE lists no value" in err, err
    assert not (tmp_path / "v.csv").exists()


def test_a_certificate_that_names_a_folder_is_refused_as_such(capsys, tmp_path):
    """It was named in a message about overwriting the release's certificate."""
    data = _table(tmp_path / "t.csv")
    release = tmp_path / "out" / "r.csv"
    assert _run(capsys, "anonymize", data, "--k", "5", "--qi", "age,sex", "--out", release, "--no-report")[0] == 0
    code, err = _run(capsys, "report", release, "--certificate", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1 and "is a folder: give the certificate's JSON file" in err, err
    assert not (tmp_path / "out" / "r.report.html").exists()
    assert _run(capsys, "report", release)[0] == 0  # beside the release: found


def test_a_column_named_twice_is_refused(capsys, tmp_path):
    """Found by a sweep: `--qi age,age` reached compare and the attacks as a duplicate column (an
    internal error), and `--qi x --sensitive x` gave a 100% breach."""
    data = _table(tmp_path / "t.csv")
    release = tmp_path / "r.csv"
    assert _run(capsys, "anonymize", data, "--k", "5", "--qi", "age,sex", "--sensitive", "zip", "--out", release,
                "--no-report")[0] == 0
    for argv in (["compare", data, release, "--qi", "age,age"],
                 ["attack", "linkage", release, "--external", data, "--qi", "age,age"],
                 ["attack", "intersection", release, release, "--targets", data, "--qi", "age,age", "--sensitive",
                  "zip"],
                 ["check", data, "--qi", "age,sex,age"]):
        code, err = _run(capsys, *argv)
        assert code == 2 and err.count("\n") == 1 and "names 'age' twice" in err, (argv, err)
    code, err = _run(capsys, "attack", "intersection", release, release, "--targets", data, "--qi", "age,zip",
                     "--sensitive", "zip")
    assert code == 2 and "cannot be both a quasi-identifier" in err, err
