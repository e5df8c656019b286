"""A clamped sum's or mean's interval is about the clamped values: the answer must say so.

The interval holds the noise (tested elsewhere); clamping moves every value outside [L, U] to the
nearer bound, a bias the interval cannot include. Without a note, "the error lies there with
probability ≥ 0.95" read as a confidence interval for the raw mean is wrong every time once the
noise is small next to the bias, which the first test measures.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import stats

import crowdsafe

RUNS = 200


def _table() -> pl.DataFrame:
    return pl.DataFrame({"x": np.random.default_rng(7).integers(0, 100, 5_000)})


def test_a_clamped_mean_interval_covers_the_clamped_mean_not_the_raw_one_and_says_so() -> None:
    table = _table()
    x = table.get_column("x").to_numpy().astype(float)
    raw, clamped = x.mean(), np.clip(x, 0, 50).mean()  # about 49.5 and 37.6
    covered_clamped = covered_raw = 0
    for seed in range(RUNS):
        answer = crowdsafe.query(table, "mean(x) clamp 0..50", epsilon=1.0, seed=seed, ledger=None)
        low, high = (answer.value + e for e in answer.error_interval)
        covered_clamped += low <= clamped <= high
        covered_raw += low <= raw <= high
    # misses of the clamped mean ~ Binomial(RUNS, ≤ 0.05); more than 20 has probability < 0.002
    assert RUNS - covered_clamped <= stats.binom.ppf(0.998, RUNS, 0.05)
    # the bias (about 12) is some 200 times the interval's half-width (about 0.06): never covered
    assert covered_raw == 0
    assert any("after clamping to [0, 50]" in note and "bias" in note for note in answer.notes)


def test_a_clamped_sum_says_its_interval_is_about_the_clamped_values() -> None:
    answer = crowdsafe.query(_table(), "sum(x) clamp 10..60", epsilon=1.0, seed=1, ledger=None)
    assert any("after clamping to [10, 60]" in note and "bias" in note for note in answer.notes)


def test_a_count_has_no_clamping_note() -> None:
    answer = crowdsafe.query(_table(), "count where x > 3", epsilon=1.0, seed=1, ledger=None)
    assert not any("clamp" in note for note in answer.notes)
