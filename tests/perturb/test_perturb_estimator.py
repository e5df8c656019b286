"""The α-β estimator: unbiased over many seeded runs, error bars that hold empirically, agreement
with a brute-force count over an enumerated small domain, the ≤k-attribute sweep, query parsing."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import load
from crowdsafe.errors import ParameterError, QuerySyntaxError, SchemaError
from crowdsafe.perturb import equality_estimates, est, estimate, parse_count, prepare, run
from crowdsafe.perturb import estimator as estimator_module
from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest, plan_alpha_beta
from crowdsafe.randomness import Randomness

RUNS = 300


@pytest.fixture(scope="module")
def small():
    """60 rows over a 6 x 5 x 4 domain (m = 120), with duplicates; α = 1/2, β = 0.2."""
    rng = np.random.default_rng(0)
    frame = pl.DataFrame({
        "x": rng.integers(0, 6, 60),
        "y": rng.choice(["a", "b", "c", "d", "e"], 60),
        "z": rng.choice([1.5, 2.5, 3.5, 4.5], 60),
    })
    table = prepare(load(frame), exploratory=True)
    plan = plan_alpha_beta(table.n, table.domain.size, AlphaBetaPlanRequest(d=0.05, gamma=0.3, alpha=0.5, beta=0.2))
    return frame, table, plan


@pytest.fixture(scope="module")
def sweeps(small):
    """The ≤3-attribute sweep of RUNS independent views (seeded), with the true counts."""
    _, table, plan = small
    truth = table.domain.codes_of(table.index)
    rng = Randomness(21)
    return [equality_estimates(run(table, plan, rng), truth=truth) for _ in range(RUNS)]


def test_estimator_is_unbiased_over_many_runs(small, sweeps):
    _, table, plan = small
    estimates = np.stack([s.frame.get_column("estimate").to_numpy() for s in sweeps])
    frame = sweeps[0].frame
    true = frame.get_column("true").to_numpy()
    n_domain = frame.get_column("n_domain").to_numpy()
    # the exact standard deviation of EST for each query
    variance = (plan.alpha * (1 - plan.alpha) * true
                + plan.beta * (1 - plan.beta) * (n_domain - true)) / (plan.alpha - plan.beta) ** 2
    z = (estimates.mean(axis=0) - true) / np.sqrt(variance / RUNS)
    # tolerance: every query's mean within 4.5 standard errors, and z ~ N(0, 1) overall
    assert np.all(np.abs(z) < 4.5)
    assert abs(z.mean()) < 4.5 / math.sqrt(len(z)) * 3  # loose: queries are correlated
    assert 0.6 < z.std() < 1.4


def test_error_bars_hold_empirically(small, sweeps):
    errors = np.stack([np.abs(s.frame.get_column("estimate").to_numpy() - s.frame.get_column("true").to_numpy())
                       for s in sweeps])
    bernstein = sweeps[0].frame.get_column("error").to_numpy()
    failure = 1 - sweeps[0].confidence
    assert np.mean(errors >= bernstein) <= failure
    # the check has power: a bar four times too narrow is exceeded far more often than 5%
    assert np.mean(errors >= bernstein / 4) > 3 * failure
    theorem = sweeps[0].theorem
    assert theorem.applies
    assert np.mean(errors >= theorem.error) <= failure


def test_tail_bound_of_the_theorem_on_adult_sized_counts():
    """n = 3,000 tuples in m = 3·10^6: the theorem's bound holds for the whole-table count and
    the Bernstein bar is exceeded at most at its stated rate."""
    rng = np.random.default_rng(1)
    frame = pl.DataFrame({"a": rng.integers(0, 100, 4000), "b": rng.integers(0, 100, 4000),
                          "c": rng.integers(0, 300, 4000)})
    table = prepare(load(frame), exploratory=True)
    plan = plan_alpha_beta(table.n, table.domain.size, AlphaBetaPlanRequest(c=5, gamma=0.3))
    truth = table.domain.codes_of(table.index)
    randomness = Randomness(22)
    worst, exceed, total = 0.0, 0, 0
    for _ in range(40):
        sweep = equality_estimates(run(table, plan, randomness), truth=truth, max_attributes=1)
        error = np.abs(sweep.frame.get_column("estimate").to_numpy() - sweep.frame.get_column("true").to_numpy())
        worst = max(worst, float(error.max()))
        exceed += int(np.sum(error >= sweep.frame.get_column("error").to_numpy()))
        total += len(error)
        assert sweep.theorem.applies
    assert worst < sweep.theorem.error
    assert exceed / total <= 0.05


def test_single_query_matches_a_brute_force_count(small):
    _, table, plan = small
    view = run(table, plan, Randomness(23))
    text = "count where x between 1 and 3 and y in ('a', 'c') and z >= 2.5"
    result = estimate(view, text)
    # independent computation: filter the view's rows, and enumerate the whole domain
    n_view = view.frame.filter(
        pl.col("x").is_between(1, 3) & pl.col("y").is_in(["a", "c"]) & (pl.col("z") >= 2.5)
    ).height
    domain = [view.domain.values[a].to_list() for a in ("x", "y", "z")]
    n_domain = sum(1 for x, y, z in itertools.product(*domain) if 1 <= x <= 3 and y in ("a", "c") and z >= 2.5)
    assert (result.n_view, result.n_domain) == (n_view, n_domain)
    assert result.estimate == pytest.approx((n_view - plan.beta * n_domain) / (plan.alpha - plan.beta))
    assert result.error > 0 and result.confidence == 0.95
    whole = estimate(view, "count")
    assert whole.n_view == view.rows and whole.n_domain == table.domain.size


def test_sweep_agrees_with_single_queries_and_counts_every_combination(small):
    _, table, plan = small
    view = run(table, plan, Randomness(24))
    sweep = equality_estimates(view, max_attributes=2)
    sizes = dict(zip(table.domain.attributes, table.domain.sizes))
    expected_rows = sum(math.prod(sizes[a] for a in s) for k in (1, 2) for s in itertools.combinations(sizes, k))
    assert sweep.queries == expected_rows
    cell = (pl.col("attributes") == "x, y") & (pl.col("x") == 2) & (pl.col("y") == "d")
    row = sweep.frame.filter(cell).row(0, named=True)
    single = estimate(view, "count where x = 2 and y = 'd'")
    assert row["estimate"] == pytest.approx(single.estimate) and row["n_view"] == single.n_view
    assert row["error"] == pytest.approx(single.error)


def test_sparse_sweep_lists_the_present_combinations(small, monkeypatch):
    _, table, plan = small
    view = run(table, plan, Randomness(25))
    truth = table.domain.codes_of(table.index)
    dense = equality_estimates(view, truth=truth).frame
    monkeypatch.setattr(estimator_module, "DENSE_GRID_LIMIT", 10)
    sparse = equality_estimates(view, truth=truth).frame
    present = dense.filter((pl.col("n_view") > 0) | (pl.col("true") > 0) | (pl.col("arity") == 1))
    keys = ["attributes", "x", "y", "z"]
    assert sparse.sort(keys).equals(present.sort(keys))


def test_estimator_formula_and_errors():
    assert est(30, 100, 0.5, 0.1) == pytest.approx((30 - 10) / 0.4)
    with pytest.raises(ParameterError):
        est(1, 1, 0.1, 0.2)


@pytest.mark.parametrize("text, columns", [
    ("count", []),
    ("COUNT(*) WHERE age >= 30", ["age"]),
    ("count where age between 26 and 32 and sex = 'Female' and `odd name` != 3", ["age", "sex", "odd name"]),
    ("count where native-country not in ('Cuba', 'Iran') and x is not null", ["native-country", "x"]),
])
def test_queries_parse(text, columns):
    assert parse_count(text).columns == columns


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("sum(age) clamp 0..100", "counting queries"),
    ("count where age > 3 or sex = 'Male'", "across attributes (age, sex) is not supported"),
    ("count where not (age > 3 and sex = 'Male')", "across attributes"),
    ("count where age >", "a value"),
    ("count where age ~ 3", "'~'"),
    ("count age", "'where'"),
])
def test_bad_queries_are_one_line_errors(text, fragment):
    with pytest.raises(QuerySyntaxError) as info:
        parse_count(text)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_conditions_on_the_domain(small):
    _, table, plan = small
    view = run(table, plan, Randomness(26))
    with pytest.raises(SchemaError, match="unknown attribute 'w'"):
        estimate(view, "count where w = 1")
    with pytest.raises(SchemaError, match="holds text"):
        estimate(view, "count where y = 3")
    with pytest.raises(SchemaError, match="holds numbers"):
        estimate(view, "count where x = 'a'")
    assert estimate(view, "count where x = 99").n_domain == 0
    assert estimate(view, "count where x > 1 and x <= 3").n_domain == 2 * 5 * 4
    assert estimate(view, "count where y not in ('a') and y is not null").n_domain == 6 * 4 * 4
    # an 'or' on one attribute is one per-attribute condition: x in {1, 4} (x takes 1..6 here)
    assert estimate(view, "count where (x = 1 or x = 4) and y = 'a'").n_domain == 2 * 1 * 4
    with pytest.raises(ParameterError, match="confidence"):
        estimate(view, "count", confidence=1.0)


def test_missing_values_are_a_value_of_the_domain():
    frame = pl.DataFrame({"a": [1, 2, None, 1], "b": ["u", None, "v", "v"]})
    table = prepare(load(frame), exploratory=True)
    assert table.domain.sizes == [3, 3]
    plan = plan_alpha_beta(table.n, table.domain.size, AlphaBetaPlanRequest(d=0.05, gamma=0.5, alpha=0.5, beta=0.2))
    view = run(table, plan, Randomness(27))
    assert estimate(view, "count where a is null").n_domain == 3
    assert estimate(view, "count where a = 1").n_domain == 3  # a missing value never equals 1
