"""DP queries on Datasets: answers, intervals, the privacy unit, domains, and the ledger."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import crowdsafe
from crowdsafe import api
from crowdsafe.data import Attribute, AttributeType, Dataset, Role, Schema, load
from crowdsafe.errors import BudgetExceeded, ParameterError, QuerySyntaxError, SampleReuseError, SchemaError
from crowdsafe.mechanisms import calibration, query_aggregates
from crowdsafe.mechanisms.queries import answer_query
from crowdsafe.mechanisms.query_plan import QueryRequest
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness

RNG = np.random.default_rng(0)
N = 5000
FRAME = pl.DataFrame({
    "age": RNG.integers(17, 91, N),
    "hours": RNG.normal(40.0, 12.0, N),
    "sex": RNG.choice(["Female", "Male"], N),
    "city": RNG.choice(["Lyon", "Paris", "Nice", "Brest"], N, p=[0.5, 0.3, 0.19, 0.01]),
})
DATA = load(FRAME, name="people")


def _truth(expr: pl.Expr) -> int:
    return FRAME.filter(expr).height


def _repeat(text: str, runs: int, **options):
    stream = Randomness(21)
    return [answer_query(DATA, QueryRequest(text, **options), randomness=stream) for _ in range(runs)]


def test_count_is_unbiased_and_its_interval_covers():
    truth = _truth((pl.col("age") >= 30) & (pl.col("sex") == "Female"))
    answers = _repeat("count where age >= 30 and sex = 'Female'", 400, epsilon=0.5)
    errors = np.array([a.value - truth for a in answers])
    first = answers[0]
    assert isinstance(first.value, int) and first.mechanism.startswith("discrete Laplace")
    assert first.noise_scale == pytest.approx(2.0) and first.sensitivity.l1 == 1
    assert abs(errors.mean()) < 5 * 2.0 * np.sqrt(2) / np.sqrt(400)
    covered = np.mean([a.error_interval[0] <= -(a.value - truth) <= a.error_interval[1] for a in answers])
    assert covered >= 0.92  # 95% nominal; 400 runs: 3 standard errors ≈ 3.3%
    assert first.ledger is None and "not recorded in a budget ledger" in first.notes


def test_integer_sum_is_exact_integer_arithmetic_and_reports_clamping():
    answer = answer_query(DATA, QueryRequest("sum(age) clamp 20..80", epsilon=1.0), randomness=1)
    truth = int(FRAME.get_column("age").clip(20, 80).sum())
    assert isinstance(answer.value, int)
    assert abs(answer.value - truth) <= answer.error_interval[1] * 3
    assert answer.sensitivity.l1 == 80
    assert answer.custodian_only["values_clamped_up"] == int((FRAME["age"] < 20).sum())
    assert answer.custodian_only["values_clamped_down"] == int((FRAME["age"] > 80).sum())


def test_real_valued_sum_lives_on_a_grid():
    answer = answer_query(DATA, QueryRequest("sum(hours) clamp 0..100", epsilon=1.0), randomness=2)
    step = answer.components["sum"].grid_step
    assert step is not None and (answer.value / step) == pytest.approx(round(answer.value / step))
    truth = float(FRAME.get_column("hours").clip(0, 100).sum())
    assert abs(answer.value - truth) <= 4 * answer.noise_scale


def test_mean_interval_is_honest():
    truth = float(FRAME.filter(pl.col("sex") == "Male").get_column("hours").clip(0, 80).mean())
    answers = _repeat("mean(hours) clamp 0..80 where sex = 'Male'", 200, epsilon=0.2)
    inside = np.mean([a.error_interval[0] <= truth - a.value <= a.error_interval[1] for a in answers])
    assert inside >= 0.95  # a union-bound interval: conservative
    assert all(0 <= a.value <= 80 for a in answers)
    assert set(answers[0].components) == {"sum", "count"}
    assert answers[0].components["sum"].epsilon == pytest.approx(0.1)


def test_histogram_over_a_public_domain_has_every_cell():
    answer = answer_query(DATA, QueryRequest(
        "histogram city in ('Lyon', 'Paris', 'Nice', 'Brest', 'Lille'), sex in ('Female', 'Male')", epsilon=1.0),
        randomness=3)
    table = answer.value
    assert table.height == 10 and table.columns == ["city", "sex", "count"]
    lille = table.filter(pl.col("city") == "Lille").get_column("count")
    assert lille.abs().max() <= 10  # empty cells are released too, with noise
    assert answer.epsilon == 1.0 and answer.delta == 0.0
    assert answer.sensitivity.l1 == 1 and answer.error_interval == (-3.0, 3.0)


def test_histogram_bins_for_a_numeric_column():
    answer = answer_query(DATA, QueryRequest("histogram age[0..100 by 25]", epsilon=2.0), randomness=4)
    assert answer.value.get_column("age").to_list() == ["[0, 25)", "[25, 50)", "[50, 75)", "[75, 100]"]
    truth = FRAME.select((pl.col("age") // 25).value_counts(sort=True)).height
    assert truth >= 3


def test_histogram_over_private_values_needs_delta_and_thresholds_cells():
    with pytest.raises(ParameterError, match="not public"):
        answer_query(DATA, QueryRequest("histogram city", epsilon=1.0))
    answer = answer_query(DATA, QueryRequest("histogram city", epsilon=1.0, delta=1e-6), randomness=5)
    threshold = int(next(n for n in answer.notes if "reaches" in n).split("reaches ")[1].split(" ")[0])
    assert threshold > 10 and answer.delta == 1e-6
    assert set(answer.value.get_column("city")) <= {"Lyon", "Paris", "Nice", "Brest"}
    assert (answer.value.get_column("count") >= threshold).all()


def _threshold_by_the_formula(epsilon: float, delta: float) -> int:
    """τ = 1 + m for the least m with e^ε·δ_S/(1 − δ_S) ≤ δ, δ_S = α^m/(1 + α), α = e^-ε (one row
    per person, sensitivity 1): the docstring of query_noise.stability_threshold, in exact
    fractions (no overflow, no rounding)."""
    from fractions import Fraction
    alpha = Fraction(np.exp(-epsilon)) if epsilon < 700 else Fraction(0)
    m = 1
    while True:
        delta_s = alpha ** m / (1 + alpha)
        if delta_s < 1 and Fraction(np.exp(epsilon)) * delta_s / (1 - delta_s) <= Fraction(delta):
            return 1 + m
        m += 1


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 5.0, 800.0, 1e7])
def test_the_histogram_threshold_at_any_finite_epsilon(epsilon):
    # e^ε overflowed a float past ε ≈ 709: an internal OverflowError at ε = 1e7
    answer = answer_query(DATA, QueryRequest("histogram city", epsilon=epsilon, delta=1e-6), randomness=5)
    threshold = int(next(n for n in answer.notes if "reaches" in n).split("reaches ")[1].split(" ")[0])
    if epsilon < 700:
        assert threshold == _threshold_by_the_formula(epsilon, 1e-6)
    else:  # past e^700 the formula's factors overflow even as exact fractions of floats: m = 2 suffices
        assert threshold == 3
    assert answer.delta == 1e-6


def test_bundled_adult_uses_its_documented_domains():
    adult = load("adult")
    answer = answer_query(adult, QueryRequest("histogram sex, race, income", epsilon=1.0), randomness=6)
    assert answer.value.height == 2 * 5 * 2
    assert any("bundled dataset" in note for note in answer.notes)


def test_quantile_is_close_in_rank():
    answer = answer_query(DATA, QueryRequest("median(age) clamp 0..120", epsilon=1.0), randomness=7)
    ages = np.sort(FRAME.get_column("age").to_numpy())
    rank = np.searchsorted(ages, answer.value)
    assert abs(rank - N / 2) <= answer.error_interval[1] + np.count_nonzero(ages == answer.value)
    assert answer.error_unit == "rank" and answer.delta == 0.0


def test_gaussian_queries():
    answer = answer_query(DATA, QueryRequest("count where sex = 'Male'", epsilon=1.0, delta=1e-6, mechanism="gaussian"),
                          randomness=8)
    assert answer.mechanism == "discrete Gaussian" and answer.delta == 1e-6
    assert answer.noise_scale == pytest.approx(float(calibration.discrete_gaussian_sigma2(1.0, 1e-6, 1)) ** 0.5)
    with pytest.raises(ParameterError, match="ε < 1"):
        answer_query(DATA, QueryRequest("count", epsilon=1.5, delta=1e-6, mechanism="gaussian",
                                        calibration_name="classic"))
    with pytest.raises(ParameterError, match="delta"):
        answer_query(DATA, QueryRequest("count", epsilon=1.0, mechanism="gaussian"))


# -- the privacy unit --------------------------------------------------------------------------


def _households() -> Dataset:
    frame = pl.DataFrame({"household": [1] * 10 + [2, 3, 4], "income": [100] * 13})
    schema = Schema((Attribute("household", Role.IDENTIFIER, AttributeType.CATEGORICAL),
                     Attribute("income", Role.SENSITIVE, AttributeType.NUMERIC)), person_id="household")
    return Dataset(frame, schema, name="households")


def test_person_identifier_bounds_contributions_and_scales_sensitivity():
    households = _households()
    with pytest.raises(ParameterError, match="max_rows_per_person"):
        answer_query(households, QueryRequest("count", epsilon=1.0))
    answer = answer_query(households, QueryRequest("count", epsilon=1.0, max_rows_per_person=2), randomness=9)
    assert answer.custodian_only["rows_dropped_by_contribution_bound"] == 8
    assert answer.sensitivity.l1 == 2 and answer.noise_scale == pytest.approx(2.0)
    assert "at most 2 row(s)" in answer.privacy_unit
    total = answer_query(households, QueryRequest("sum(income) clamp 0..200", epsilon=1.0, max_rows_per_person=2),
                         randomness=9)
    assert total.sensitivity.l1 == 400
    with pytest.raises(ParameterError, match="person identifier"):
        answer_query(DATA, QueryRequest("count", epsilon=1.0, max_rows_per_person=3))


def test_contribution_bound_keeps_a_random_subset():
    households = _households()
    from crowdsafe.mechanisms.contribution import bound_contributions

    kept = [bound_contributions(households.frame.with_row_index("i"), "household", 3, Randomness(s)).frame
            for s in range(20)]
    assert all(k.filter(pl.col("household") == 1).height == 3 for k in kept)
    assert len({tuple(k.get_column("i").to_list()) for k in kept}) > 10


# -- bad input and the ledger ------------------------------------------------------------------


@pytest.fixture
def ledger(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        book.set_budget(DATA.fingerprint(key=book.identity_key), "people", 1.0, 1e-6)
        yield book


@pytest.mark.parametrize(
    ("text", "options", "error"),
    [
        ("count", {"epsilon": 0.0}, ParameterError),
        ("count", {"epsilon": -1.0}, ParameterError),
        ("count", {"epsilon": 0.1, "delta": 1.0, "mechanism": "gaussian"}, ParameterError),
        ("sum(age)", {"epsilon": 0.1}, ParameterError),
        ("mean(age) clamp 5..5", {"epsilon": 0.1}, ParameterError),
        ("count where agee > 3", {"epsilon": 0.1}, SchemaError),
        ("count where sex > 3", {"epsilon": 0.1}, SchemaError),
        ("mean(sex) clamp 0..1", {"epsilon": 0.1}, SchemaError),
        ("count where age >", {"epsilon": 0.1}, QuerySyntaxError),
        ("count", {"epsilon": 0.1, "mechanism": "cauchy"}, ParameterError),
        ("count", {"epsilon": 0.1, "neighbours": "swap"}, ParameterError),
    ],
)
def test_bad_input_leaves_the_ledger_untouched(ledger, text, options, error):
    with pytest.raises(error):
        answer_query(DATA, QueryRequest(text, **options), ledger=ledger)
    assert ledger.entries() == []


def test_over_budget_is_refused_before_anything_is_computed(ledger, monkeypatch):
    answer = answer_query(DATA, QueryRequest("count", epsilon=0.9), ledger=ledger, randomness=10)
    assert answer.ledger["spent"]["epsilon"] == pytest.approx(0.9)

    def must_not_run(*args, **kwargs):
        raise AssertionError("the data was read for a refused query")

    monkeypatch.setattr(query_aggregates, "_rows", must_not_run)
    with pytest.raises(BudgetExceeded, match="nothing was computed"):
        answer_query(DATA, QueryRequest("count", epsilon=0.2), ledger=ledger)
    assert len(ledger.entries()) == 1


def test_partition_queries_compose_in_parallel(ledger):
    for sex in ("Female", "Male"):
        answer_query(DATA, QueryRequest(f"count where sex = '{sex}' and age > 40", epsilon=0.6, partition="sex"),
                     ledger=ledger, randomness=11)
    assert ledger.budget("people").spent.epsilon == pytest.approx(0.6)
    with pytest.raises(ParameterError, match="must filter on sex = VALUE"):
        answer_query(DATA, QueryRequest("count where age > 40", epsilon=0.1, partition="sex"), ledger=ledger)


def test_a_sample_consumed_by_dps_cannot_be_queried(ledger):
    sample_fingerprint = DATA.fingerprint(key=ledger.identity_key)  # the ledger's identity of the sample
    parent = "parent-fingerprint"
    ledger.set_budget(parent, "parent", 5.0, 1e-5)
    with ledger.charge(parent, epsilon=1.0, delta=1e-7, kind="dps-release", sample_ids=[sample_fingerprint],
                       description="publish", mechanism="sample + k-anonymity"):
        pass
    with pytest.raises(SampleReuseError):
        answer_query(DATA, QueryRequest("count", epsilon=0.1), ledger=ledger)


def test_api_query_registers_a_budget_and_charges_it(tmp_path):
    path = tmp_path / "api.sqlite3"
    with pytest.raises(BudgetExceeded, match="no privacy budget is set for 'people'"):
        api.query(FRAME, "count", epsilon=0.1, ledger=path, name="people")
    answer = crowdsafe.query(FRAME, "count where city = 'Lyon'", epsilon=0.1, ledger=path, name="people",
                             budget=(1.0, 0.0), randomness=12)
    assert answer.ledger is not None and answer.ledger["dataset"] == "people"
    assert api.ledger_report(path)["datasets"][0]["spent"]["epsilon"] == pytest.approx(0.1)
    with pytest.raises(ParameterError, match="already has the budget"):
        api.query(FRAME, "count", epsilon=0.1, ledger=path, name="people", budget=(2.0, 0.0))
    # Bad input never registers anything.
    with pytest.raises(SchemaError):
        api.query(FRAME, "count where nope = 1", epsilon=0.1, ledger=tmp_path / "other.sqlite3", budget=(1.0, 0.0))
    assert api.ledger_report(tmp_path / "other.sqlite3")["datasets"] == []
