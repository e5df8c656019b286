"""An estimate is no fitter for release than the view it was estimated from: estimates of a seeded
view say NOT fit for release (the project rule: a seeded result is marked wherever it is shown), in
the Python API, the printed text, the JSON and the estimates file, read from the view's
certificate; a seedless view's estimates say fit, as its certificate does."""

from __future__ import annotations

import csv
import json

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api
from crowdsafe.perturb import equality_estimates
from crowdsafe.privacy.certificate import Certificate

SCHEMA = """[attributes.age]
type = "integer"
[attributes.sex]
type = "categorical"
[attributes.band]
type = "integer"
"""
DOMAINS = {"age": list(range(18, 60)), "sex": ["Female", "Male"], "band": list(range(50))}


def people() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    return pl.DataFrame({"age": rng.integers(18, 60, 200), "sex": rng.choice(["Female", "Male"], 200),
                         "band": rng.integers(0, 50, 200)})


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("estimate-fitness")
    data, domains, schema = folder / "people.csv", folder / "domains.json", folder / "schema.toml"
    people().write_csv(data)
    domains.write_text(json.dumps(DOMAINS))
    schema.write_text(SCHEMA)
    return data, domains, schema


def perturbed(files, seed):
    return api.perturb(people(), schema=files[2], domains=DOMAINS, max_rows=300, missing="drop", c=2, gamma=0.3,
                       seed=seed, ledger=None)


def test_the_api_estimate_of_a_seeded_view_is_not_fit_for_release(files):
    seeded = perturbed(files, 4)
    reasons = seeded.view.certificate.unfit_reasons
    assert len(reasons) == 1 and reasons[0].startswith("seeded randomness")
    for found in (api.estimate(seeded, "count where sex = 'Female'"), api.estimate(seeded.view, ["count"])[0]):
        assert found.fit_for_release is False and found.unfit_reasons == reasons
        assert found.as_dict()["fit_for_release"] is False and found.as_dict()["unfit_reasons"] == list(reasons)
        assert str(found).endswith("(seeded randomness: NOT fit for release)")
    sweep = equality_estimates(seeded.view, max_attributes=1)
    assert sweep.fit_for_release is False and sweep.unfit_reasons == reasons
    fresh = api.estimate(perturbed(files, None), "count where sex = 'Female'")
    assert fresh.fit_for_release is True and fresh.unfit_reasons == ()
    assert fresh.as_dict()["fit_for_release"] is True and "fit for release" not in str(fresh)


def _view(capsys, files, folder, *seed: str):
    data, domains, schema = files
    out = folder / "view.csv"
    code, printed, err = run_command(capsys, "perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.3",
                                     "--max-rows", "300",
                                     "--domains", str(domains), "--missing", "drop", "--no-report", "--out", str(out),
                                     "--schema", str(schema), *seed)
    assert code == 0, err
    return out, " ".join(printed.split())


def test_the_estimate_command_on_a_seeded_view_says_not_fit_as_perturb_did(capsys, files, tmp_path):
    out, printed = _view(capsys, files, tmp_path, "--seed", "4")
    certificate = Certificate.read(tmp_path / "view.certificate.json")
    said = "NOT fit for release: " + "; ".join(certificate.unfit_reasons)
    assert "seeded randomness" in said and said in printed  # the line perturb printed
    code, stdout, err = run_command(capsys, "estimate", str(out), "count where sex = 'Female'")
    assert code == 0, err
    assert said in " ".join(stdout.split())
    code, stdout, err = run_command(capsys, "estimate", str(out), "count where sex = 'Female'", "count", "--json")
    assert code == 0, err
    payload = json.loads(stdout)
    assert payload["fit_for_release"] is False and payload["unfit_reasons"] == list(certificate.unfit_reasons)
    assert all(e["fit_for_release"] is False for e in payload["estimates"])
    listed = tmp_path / "estimates.csv"
    code, _, err = run_command(capsys, "estimate", str(out), "count", "--out", str(listed))
    assert code == 0, err
    with open(listed, newline="") as handle:
        (row,) = csv.DictReader(handle)
    assert row["fit_for_release"] == "false" and row["unfit_reasons"] == "; ".join(certificate.unfit_reasons)
    sweep = tmp_path / "sweep.csv"
    code, stdout, err = run_command(capsys, "estimate", str(out), "--equality", "1", "--out", str(sweep))
    assert code == 0 and said in " ".join(stdout.split()), err
    # the sweep's file says it in every row too, as the queries' file does (it had no such columns)
    with open(sweep, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(r["fit_for_release"] == "false" for r in rows)
    assert {r["unfit_reasons"] for r in rows} == {"; ".join(certificate.unfit_reasons)}


def test_the_estimate_command_on_a_seedless_view_says_nothing_new(capsys, files, tmp_path):
    out, printed = _view(capsys, files, tmp_path)
    assert Certificate.read(tmp_path / "view.certificate.json").fit_for_release
    code, stdout, err = run_command(capsys, "estimate", str(out), "count where sex = 'Female'")
    assert code == 0 and "fit for release" not in stdout, err
    code, stdout, err = run_command(capsys, "estimate", str(out), "count", "--json")
    payload = json.loads(stdout)
    assert code == 0 and payload["fit_for_release"] is True and payload["unfit_reasons"] == []
    sweep = tmp_path / "sweep.csv"
    code, _, err = run_command(capsys, "estimate", str(out), "--equality", "2", "--out", str(sweep))
    assert code == 0, err
    with open(sweep, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(r["fit_for_release"] == "true" and r["unfit_reasons"] == "" for r in rows)
