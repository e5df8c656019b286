"""``crowdsafe experiment alpha-beta``: the Adult case study, checked against independent counts."""

from __future__ import annotations

import csv
import itertools
import math

import polars as pl
import pytest

from crowdsafe.datasets import adult
from crowdsafe.datasets.uci_adult import hierarchies
from crowdsafe.experiments import available, run
from crowdsafe.experiments.alpha_beta import ATTRIBUTES


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_alpha_beta_case_study(tmp_path):
    assert "alpha-beta" in {e.name for e in available()}
    result = run("alpha-beta", tmp_path, seed=2007)
    facts = result.summary
    # independent computation of n, m and the smallest admissible beta. The public domain is
    # Adult's fixed value lists (age 17..90: 74 values; 8 work classes, of which 'Never-worked'
    # is absent from the complete rows), not the values present; N = 30,162 bounds n.
    frame = adult("train", drop_missing=True).frame.select(ATTRIBUTES)
    n = frame.unique().height
    public_sizes = {"age": 74, "workclass": 8, "education": 16, "marital-status": 7, "occupation": 14,
                    "race": 5, "sex": 2, "native-country": 41, "income": 2}
    assert all(set(frame.get_column(c).unique().to_list()) <= set(hierarchies()[c].leaves.to_list())
               and len(hierarchies()[c].leaves) == public_sizes[c] for c in ATTRIBUTES)
    m = math.prod(public_sizes[c] for c in ATTRIBUTES)
    d = 10 * 30_162 / m
    beta = (d / 0.2) * ((1 - 0.2) / (1 - d)) * 0.5
    assert (facts["rows"], facts["n"], facts["max_rows"], facts["m"]) == (30_162, n, 30_162, m)
    assert facts["guarantee"] == "d-gamma" and facts["domain_sources"] == ["hierarchy leaves", "schema order"]
    assert facts["d"] == pytest.approx(d, rel=1e-12)
    assert facts["beta"] == pytest.approx(beta, rel=1e-10)
    expected = 0.5 * n + beta * (m - n)
    assert abs(facts["view_rows"] - expected) < 5 * math.sqrt(expected)
    # the published shape: large counts within about ±1000 of y = x, small ones far off, some negative
    assert facts["share_of_those_within_1000"] >= 0.95
    assert facts["negative_estimates"] > 0
    assert facts["share_within_theorem_bound"] >= 0.95
    estimates = pl.read_csv(tmp_path / "alpha-beta" / "alpha-beta-estimates.csv")
    sizes = [public_sizes[c] for c in ATTRIBUTES]
    assert estimates.height == sum(math.prod(s) for k in (1, 2, 3) for s in itertools.combinations(sizes, k))
    one = estimates.filter((pl.col("attributes") == "sex") & (pl.col("sex") == "Female")).row(0, named=True)
    assert one["true"] == frame.unique().filter(pl.col("sex") == "Female").height
    ratios = read_csv(tmp_path / "alpha-beta" / "alpha-beta-view-ratio.csv")
    for row in ratios:
        assert float(row["measured_ratio"]) == pytest.approx(float(row["expected_ratio"]), rel=0.05)
    assert [float(r["expected_ratio"]) for r in ratios] == sorted((float(r["expected_ratio"]) for r in ratios),
                                                                  reverse=True)
    for name in ("alpha-beta-scatter.png", "alpha-beta-view-ratio.png"):
        data = (tmp_path / "alpha-beta" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
