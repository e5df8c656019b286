"""The experiment registry and the privacy-calculus reproductions (CSV + PNG)."""

from __future__ import annotations

import csv
import json
import math

import pytest

from crowdsafe import cli
from crowdsafe.errors import ParameterError
from crowdsafe.experiments import available, run
from crowdsafe.privacy import dps_delta, sampling_floor, smallest_k

CALCULUS = {
    "amplification",
    "dps-delta-table",
    "dps-inverse-delta",
    "dps-doubling-beta",
    "dps-smallest-epsilon",
    "composition-bounds",
}


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_registry_lists_the_calculus_reproductions():
    assert CALCULUS <= {e.name for e in available()}


def test_unknown_experiment_names_the_known_ones():
    with pytest.raises(ParameterError, match="unknown experiment 'nope'; known: .*amplification"):
        run("nope")


def test_amplification_table(tmp_path):
    result = run("amplification", tmp_path)
    rows = read_csv(tmp_path / "amplification" / "amplification.csv")
    assert len(rows) == 6
    got = {(r["algorithm"], float(r["beta"])): (float(r["epsilon"]), float(r["delta"])) for r in rows}
    assert got[("(ln 11, 1e-5)-DP", 0.1)] == pytest.approx((math.log(2), 1e-6))
    assert got[("(ln 11, 1e-5)-DP", 0.01)] == pytest.approx((math.log(1.1), 1e-7))
    assert got[("(1, 0)-DP", 0.1)] == pytest.approx((math.log(1 + 0.1 * (math.e - 1)), 0.0))
    assert_png(tmp_path / "amplification" / "amplification.png")
    assert [p.suffix for p in result.files] == [".csv", ".png"]


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_delta_table_has_the_18_cells(tmp_path):
    run("dps-delta-table", tmp_path)
    rows = read_csv(tmp_path / "dps-delta-table" / "dps-delta-table.csv")
    assert len(rows) == 18
    assert {float(r["beta"]) for r in rows} == {0.05, 0.1, 0.2}
    assert {float(r["epsilon"]) for r in rows} == {0.25, 0.5, 0.75, 1.0, 1.5, 2.0}
    for r in rows:
        assert float(r["delta"]) == dps_delta(20, float(r["beta"]), float(r["epsilon"]))
    assert_png(tmp_path / "dps-delta-table" / "dps-delta-table.png")


@pytest.mark.slow
def test_inverse_delta_panels(tmp_path):
    run("dps-inverse-delta", tmp_path)
    rows = read_csv(tmp_path / "dps-inverse-delta" / "dps-inverse-delta.csv")
    curves = {(r["panel"], int(r["k"]), float(r["beta"])) for r in rows}
    assert len(curves) == 15
    for r in rows[:: max(1, len(rows) // 50)]:
        assert float(r["epsilon"]) >= sampling_floor(float(r["beta"])) - 1e-12
        assert float(r["inverse_delta"]) == pytest.approx(1 / float(r["delta"]))
    assert_png(tmp_path / "dps-inverse-delta" / "dps-inverse-delta.png")


def test_doubling_beta_keeps_delta(tmp_path):
    result = run("dps-doubling-beta", tmp_path)
    rows = read_csv(tmp_path / "dps-doubling-beta" / "dps-doubling-beta.csv")
    for r in rows:
        eps, beta, k, target = float(r["epsilon"]), float(r["beta"]), int(r["k"]), float(r["delta"])
        assert dps_delta(k, beta, eps) <= target
        if beta != 0.05:
            assert k == smallest_k(eps, target, beta).k
    at_one = result.summary["k_at_epsilon_1"]
    assert at_one["0.05"] == 15 and at_one["0.05"] < at_one["0.1"] < at_one["0.2"] < at_one["0.4"]
    assert_png(tmp_path / "dps-doubling-beta" / "dps-doubling-beta.png")


@pytest.mark.slow
def test_smallest_epsilon_curve(tmp_path):
    result = run("dps-smallest-epsilon", tmp_path)
    rows = read_csv(tmp_path / "dps-smallest-epsilon" / "dps-smallest-epsilon.csv")
    for r in rows:
        beta, eps = float(r["beta"]), float(r["epsilon"])
        assert eps >= sampling_floor(beta) - 1e-12
        assert float(r["delta"]) <= 1e-6
        assert (r["floor_binds"] == "True") == (eps == pytest.approx(sampling_floor(beta), rel=1e-12))
    # Where δ ≤ 1e-6 is out of reach (δ ≤ β^k), the experiment says so instead of failing.
    for beta, ks in result.summary["unreachable_k"].items():
        assert all(float(beta) ** k >= 1e-6 for k in ks)
    assert_png(tmp_path / "dps-smallest-epsilon" / "dps-smallest-epsilon.png")


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_composition_bounds(tmp_path):
    result = run("composition-bounds", tmp_path)
    example = result.summary["epsilon_0.5_k_50"]
    assert example["drv"] == pytest.approx(34.8, abs=0.05) and example["summation"] == 25.0
    assert example["kov"] < example["summation"]
    assert_png(tmp_path / "composition-bounds" / "composition-bounds.png")


def test_cli_list_and_run(tmp_path, capsys):
    assert cli.main(["experiment", "list", "--json"]) == 0
    names = {e["name"] for e in json.loads(capsys.readouterr().out)}
    assert CALCULUS <= names
    assert cli.main(["experiment", "amplification", "--out", str(tmp_path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["folder"] == str(tmp_path / "amplification") and len(payload["files"]) == 2
    assert cli.main(["experiment", "--help"]) == 0
    assert "Example: crowdsafe experiment" in capsys.readouterr().out
    assert cli.main(["experiment", "nope"]) == 2
    assert "unknown experiment" in capsys.readouterr().err
