"""``crowdsafe perturb`` and ``crowdsafe estimate``: outputs, JSON, help examples, one-line errors."""

from __future__ import annotations

import csv
import json

import numpy as np
import polars as pl
import pytest

from crowdsafe import cli


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("perturb-cli")
    rng = np.random.default_rng(9)
    path = folder / "people.csv"
    pl.DataFrame({
        "age": rng.integers(18, 60, 300),
        "sex": rng.choice(["Female", "Male"], 300),
        "region": rng.choice(["north", "south", "east", "west"], 300),
        "band": rng.integers(0, 50, 300),
    }).write_csv(path)
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("command", ["perturb", "estimate"])
def test_help_has_an_example(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and f"Example: crowdsafe {command}" in out


def test_perturb_writes_view_and_certificate_then_estimate_reads_them(capsys, data, tmp_path):
    out = tmp_path / "view.csv"
    code, stdout, err = run(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--out", str(out),
                            "--seed", "1", "--json")
    assert code == 0, err
    payload = json.loads(stdout)
    cert = json.loads((tmp_path / "view.certificate.json").read_text())
    assert payload["view_rows"] == pl.read_csv(out).height == cert["parameters"]["view_rows"]
    assert payload["plan"]["alpha"] == 0.5 == cert["parameters"]["alpha"]
    assert cert["guarantee"] == "d-gamma" and cert["fit_for_release"] is False
    assert "kept" not in payload and "inserted" not in payload

    code, stdout, err = run(capsys, "estimate", str(out), "count where age between 26 and 32 and sex = 'Female'",
                            "count", "--json")
    assert code == 0, err
    estimates = json.loads(stdout)["estimates"]
    assert len(estimates) == 2 and estimates[1]["n_view"] == payload["view_rows"]
    assert all(e["error"] > 0 for e in estimates)

    code, stdout, _ = run(capsys, "estimate", str(out), "count where region = 'north'")
    assert code == 0 and "count where region = 'north'" in stdout and "theorem bound" in stdout

    sweep = tmp_path / "sweep.csv"
    code, stdout, err = run(capsys, "estimate", str(out), "--equality", "2", "--out", str(sweep), "--json")
    assert code == 0, err
    with open(sweep, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == json.loads(stdout)["equality"]["queries"] > 0
    assert {"attributes", "estimate", "error", "n_view", "n_domain"} <= set(rows[0])


def test_plan_only_writes_nothing(capsys, data, tmp_path):
    code, stdout, _ = run(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--plan-only", "--json")
    assert code == 0
    plan = json.loads(stdout)["plan"]
    assert plan["expected_view"] == pytest.approx(plan["alpha"] * plan["n"] + plan["beta"] * (plan["m"] - plan["n"]))
    code, stdout, _ = run(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--plan-only")
    assert code == 0 and "expected |V| / |I|" in stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, fragment", [
    (["--c", "2", "--gamma", "0.3"], "--out"),
    (["--c", "2", "--gamma", "1.5", "--out", "v.csv"], "gamma must lie in (0, 1)"),
    (["--d", "0.5", "--gamma", "0.3", "--out", "v.csv"], "must be below gamma"),
    (["--c", "2", "--d", "0.01", "--gamma", "0.3", "--out", "v.csv"], "exactly one of d"),
    (["--c", "2", "--gamma", "0.3", "--alpha", "0.99", "--out", "v.csv"], "1 - d/gamma"),
    (["--c", "2", "--gamma", "0.3", "--beta", "1e-9", "--out", "v.csv"], "posterior above gamma"),
    (["--c", "2", "--gamma", "0.3", "--out", "v.txt"], "output format"),
    (["--c", "2", "--gamma", "0.3", "--attributes", "age,nope", "--out", "v.csv"], "no column named 'nope'"),
    (["--c", "2", "--gamma", "0.3", "--duplicates", "error", "--out", "v.csv"], "rows repeat"),
])
def test_perturb_errors_are_one_line_exit_2_and_write_nothing(capsys, data, tmp_path, monkeypatch, args, fragment):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "perturb", str(data), *args)
    assert code == 2 and err.count("\n") == 1 and fragment in err, err
    assert list(tmp_path.iterdir()) == []


def test_estimate_errors_are_one_line_exit_2(capsys, data, tmp_path):
    out = tmp_path / "view.csv"
    assert run(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--out", str(out))[0] == 0
    for args, fragment in [
        ([str(out)], "give a query"),
        ([str(out), "count where nope = 1"], "unknown attribute 'nope'"),
        ([str(out), "count where age >"], "does not parse"),
        ([str(out), "--equality", "2"], "--out"),
        ([str(tmp_path / "absent.csv"), "count"], "no certificate"),
        ([str(data), "count"], "no certificate"),
    ]:
        code, _, err = run(capsys, "estimate", *args)
        assert code == 2 and err.count("\n") == 1 and fragment in err, (args, err)
