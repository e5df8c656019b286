"""An α-β estimate counts distinct tuples, not rows, and `crowdsafe estimate` says so.

Duplicate rows are collapsed before perturbing (docs/alpha-beta.md, "Duplicate rows"), so EST
estimates the number of distinct tuples matching Q. On a table whose rows repeat, that is far
below the rows matching Q: measured here over seeded views, and the command line must say which
one its numbers are.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from tests.cli_helpers import run_command

import crowdsafe.api as cs

# One view's estimate has a standard deviation of about 66 here (alpha 0.5, beta 0.0102): 20 views
# put the mean within 4 standard errors (59) of the 200 distinct tuples, and the 2,000 rows are
# 1,800 away, 120 standard errors (60 views gave no more power to the claim tested: rows or tuples).
M, DISTINCT, REPEATS, VIEWS = 100_000, 200, 10, 20


def _table() -> pl.DataFrame:
    values = np.random.default_rng(11).choice(M, DISTINCT, replace=False)
    return pl.DataFrame({"x": np.repeat(values, REPEATS)})  # 2,000 rows, 200 distinct tuples


def _perturb(table: pl.DataFrame, seed: int, **options) -> cs.Perturbation:
    return cs.perturb(table, c=1, gamma=0.5, max_rows=DISTINCT * REPEATS, domains={"x": list(range(M))},
                      missing="drop", seed=seed, ledger=None, **options)


@pytest.mark.slow  # about 4 s: 20 views over a domain of 100,000 values
def test_the_estimate_of_count_is_the_distinct_tuples_and_the_command_line_says_so(capsys, tmp_path) -> None:
    table = _table()
    estimates = []
    for seed in range(VIEWS):
        result = _perturb(table, seed, report=False)
        estimates.append(cs.estimate(result, "count").estimate)
    alpha, beta = result.plan.alpha, result.plan.beta
    # EST's standard deviation at q = 200 distinct tuples over n_D = M domain tuples
    sd = math.sqrt(alpha * (1 - alpha) * DISTINCT + beta * (1 - beta) * (M - DISTINCT)) / (alpha - beta)
    standard_error = sd / math.sqrt(VIEWS)
    mean = float(np.mean(estimates))
    assert abs(mean - DISTINCT) < 4 * standard_error  # unbiased for the distinct tuples
    assert DISTINCT * REPEATS - mean > 20 * standard_error  # nowhere near the 2,000 rows

    view = tmp_path / "view.csv"
    _perturb(table, 1, out=view, report=False)
    code, printed, err = run_command(capsys, "estimate", str(view), "count")
    assert code == 0, err
    assert "counts distinct tuples" in " ".join(printed.split()) and "not rows" in printed
    code, printed, err = run_command(capsys, "estimate", str(view), "count", "--json")
    assert code == 0, err
    assert "distinct tuples" in json.loads(printed)["counts"]
