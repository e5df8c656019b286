"""How to read a histogram released above a threshold τ (no public domain, δ > 0).

A cell left out is not an empty cell, and a cell listed near τ reads high: the answer must say
both, with the count above which a left-out cell is unlikely (τ + h, h the 95% half-width: a cell
of that count is left out only when its noise falls below −h, probability ≤ 2.5%). The test
measures both facts over seeded runs and checks that the note states them.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from scipy import stats

import crowdsafe

EPSILON, DELTA, RUNS, CELLS = 0.5, 1e-6, 200, 20


def _threshold() -> int:
    """τ = 1 + m for the smallest m with e^ε·δ_S/(1 − δ_S) ≤ δ, δ_S = a^m/(1 + a), a = e^−ε
    (docs/mechanisms.md, one row per person), computed here from the formula."""
    a = math.exp(-EPSILON)
    m = 1
    while math.exp(EPSILON) * (a**m / (1 + a)) / (1 - a**m / (1 + a)) > DELTA:
        m += 1
    return 1 + m


def test_a_thresholded_histogram_says_what_missing_and_listed_cells_mean() -> None:
    tau = _threshold()
    first = crowdsafe.query(pl.DataFrame({"c": ["a"] * 50}), "histogram c", epsilon=EPSILON, delta=DELTA,
                            seed=0, ledger=None)
    half = first.error_interval[1]
    reach, low = int(tau + half), tau - 4
    counts = {f"hi{i}": reach for i in range(CELLS)} | {f"lo{i}": low for i in range(CELLS)}
    table = pl.DataFrame({"c": [cell for cell, n in counts.items() for _ in range(n)]})
    left_out = listed_low = covered_low = 0
    for seed in range(RUNS):
        answer = crowdsafe.query(table, "histogram c", epsilon=EPSILON, delta=DELTA, seed=seed, ledger=None)
        listed = dict(zip(answer.value.get_column("c").to_list(), answer.value.get_column("count").to_list()))
        left_out += sum(f"hi{i}" not in listed for i in range(CELLS))
        for i in range(CELLS):
            if f"lo{i}" in listed:
                listed_low += 1
                covered_low += abs(listed[f"lo{i}"] - low) <= half
    # a cell of count τ + h is left out with probability ≤ 2.5%: misses ~ Binomial(RUNS·CELLS, ≤ 0.025)
    assert left_out <= stats.binom.ppf(0.999, RUNS * CELLS, 0.025)
    # listed cells of count τ − 4 read high: their interval covers far less than 95% (about 81%; the
    # one-sided 99.9% bound of a 95% coverage over this many listings is well above 0.9)
    assert listed_low >= 100 and covered_low / listed_low < 0.9
    note = next(n for n in answer.notes if "not known to be empty" in n)
    assert f"count {tau + half:g} or more" in note and "2.5%" in note and f"near {tau}" in note


def test_a_histogram_over_a_public_domain_has_no_threshold_note() -> None:
    table = pl.DataFrame({"c": ["a"] * 50})
    answer = crowdsafe.query(table, "histogram c", epsilon=EPSILON, domain={"c": ["a", "b"]}, seed=0, ledger=None)
    assert not any("not known to be empty" in n for n in answer.notes)
    assert np.asarray(answer.value.get_column("count")).shape == (2,)
