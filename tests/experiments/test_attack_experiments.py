"""``crowdsafe experiment composition`` and ``non-composition`` on a reduced grid."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.experiments import available, run
from crowdsafe.experiments import composition as composition_module
from crowdsafe.experiments import non_composition as non_composition_module


@pytest.mark.slow
def test_composition_grid_writes_tables_and_figures(tmp_path, monkeypatch):
    monkeypatch.setattr(composition_module, "KS", (5, 25))
    monkeypatch.setattr(composition_module, "SEEDS", 1)
    monkeypatch.setattr(composition_module, "WORKERS", 1)
    monkeypatch.setattr(composition_module, "OVERLAP", 1_000)
    monkeypatch.setattr(composition_module, "OWN", 1_000)
    assert "composition" in {e.name for e in available()}
    result = run("composition", tmp_path, seed=2008)
    names = {p.name for p in result.files}
    assert {"composition.csv", "contrast.csv", "breach_adult.png", "breach_synthetic.png",
            "anonymity_adult.png", "anonymity_synthetic.png", "contrast.png"} <= names
    grid = pl.read_csv(tmp_path / "composition" / "composition.csv")
    assert grid.height == 2 * 2 * len(composition_module.SCENARIOS)
    # no level above 1/2, where a partial breach would be a perfect one counted again
    assert "partial_breach_75" not in grid.columns
    assert (grid["partial_breach_50"] >= grid["perfect_breach"]).all()
    assert (grid["partial_breach_25"] >= grid["partial_breach_50"]).all()
    assert (grid["perfect_breach_true"] <= grid["perfect_breach"]).all()
    # generalization is located exactly; microaggregation only by the nearest centroid
    exact = grid.filter(pl.col("scenario").is_in(["Mondrian + Mondrian", "Mondrian t=0.2"]))
    assert (exact["correct_location"] == 100.0).all()
    assert (grid.filter(pl.col("scenario") == "MDAV + MDAV")["correct_location"] < 100.0).all()
    contrast = pl.read_csv(tmp_path / "composition" / "contrast.csv", infer_schema_length=None)
    assert contrast.height == 2 * 3


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_non_composition_experiment(tmp_path, monkeypatch):
    monkeypatch.setattr(non_composition_module, "RUNS", 20_000)
    result = run("non-composition", tmp_path, seed=2012)
    joint = result.summary["events"]["A2 >= 0.5 and A1 = false"]
    assert joint["D"] < 0.05 and abs(joint["D'"] - 0.25) < 0.02
    assert result.summary["events"]["A1 = true"]["epsilon_lower_bound"] < 0.2
    table = pl.read_csv(tmp_path / "non-composition" / "non_composition.csv")
    assert table.height == len(non_composition_module.EPSILONS) * 3 * 2
