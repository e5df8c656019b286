"""DP queries with the aggregation on Spark: the same exact aggregates as the Polars engine, so
the same seeded answers; the contribution bound; the CLI and the ledger."""

import json
import math

import numpy as np
import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.data import Schema, load
from crowdsafe.engines.spark.queries import SparkAggregate, answer_query_spark
from crowdsafe.engines.spark.typed_table import load_table
from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import queries
from crowdsafe.mechanisms.query_plan import QueryRequest
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def table_path(tmp_path_factory):
    rng = np.random.default_rng(5)
    n = 4000
    income = rng.normal(30_000, 20_000, n)
    income[rng.random(n) < 0.03] = np.nan
    frame = pl.DataFrame({
        "age": pl.Series(rng.integers(10, 95, n)).set(pl.Series(rng.random(n) < 0.02), None),
        "sex": rng.choice(["Female", "Male"], n),
        "race": pl.Series(rng.choice(["White", "Black", "Other"], n)).set(pl.Series(rng.random(n) < 0.02), None),
        "income": income,
        "hours": rng.integers(1, 99, n),
    })
    path = tmp_path_factory.mktemp("q") / "people.parquet"
    frame.write_parquet(path)
    return path


QUERIES = [
    ("count", {}),
    ("count where age >= 30 and sex = 'Female'", {}),
    ("count where not (race = 'White' or age < 40)", {}),
    ("count where race in ('Black', 'Other') and age between 20 and 50.5", {}),
    ("count where race is null or age not in (30, 31)", {}),
    ("sum(hours) clamp 0..60 where sex = 'Male'", {}),
    ("sum(income) clamp -1000..80000.5", {}),
    ("mean(age) clamp 18..90 where race != 'White'", {}),
    ("histogram age[0..100 by 10], sex in ('Female', 'Male')", {}),
    ("histogram race, sex where hours > 40", {"domain": {"race": ["White", "Black", "Other", "Asian"],
                                                          "sex": ["Female", "Male"]}}),
    ("histogram race where age > 20", {"delta": 1e-6}),
]


def _plan(dataset, text, options):
    return queries._plan(dataset, QueryRequest(text, epsilon=1.0, **options))


def _same(a, b):
    if isinstance(a, pl.DataFrame):
        key = [c for c in a.columns if c != "count"]
        return a.sort(key, nulls_last=True).equals(b.sort(key, nulls_last=True))
    return a == b


def test_spark_and_polars_compute_the_same_exact_aggregates(spark, table_path):
    dataset = load(table_path)
    table = load_table(spark, table_path)
    assert dict(table.dataset.frame.schema) == dict(dataset.frame.schema)
    for text, options in QUERIES:
        plan = _plan(dataset, text, options)
        on_polars, _ = queries.polars_aggregate(dataset, plan, Randomness(1))
        on_spark, dropped = SparkAggregate(table)(table.dataset, plan, Randomness(1))
        assert dropped == 0
        assert on_polars.values.keys() == on_spark.values.keys(), text
        for key, value in on_polars.values.items():
            assert _same(value, on_spark.values[key]), (text, key)
        assert on_polars.diagnostics == on_spark.diagnostics, text


def test_same_seed_gives_the_same_answers_on_both_engines(spark, table_path):
    dataset = load(table_path)
    table = load_table(spark, table_path)
    for text, options in QUERIES:  # cells without a public domain are sorted before the noise
        on_polars = queries.answer_query(dataset, QueryRequest(text, epsilon=0.5, **options), randomness=11)
        on_spark = answer_query_spark(table, QueryRequest(text, epsilon=0.5, **options), randomness=11)
        if isinstance(on_polars.value, pl.DataFrame):
            assert on_polars.value.equals(on_spark.value), text  # same cells, same order, same noise
        else:
            assert on_polars.value == on_spark.value, text
        assert on_polars.noise_scale == on_spark.noise_scale
        assert on_polars.custodian_only == on_spark.custodian_only


def test_a_change_sum_on_spark_covers_a_row_leaving_the_filter(spark, table_path):
    """Audit math1, defect 1, on the Spark engine (the units sensitivity is shared): under change a
    row (Male, 100) can become (Female, 100) and move the filtered sum by 100, not U − L = 50."""
    table = load_table(spark, table_path)
    text = "sum(hours) clamp 50..100 where sex = 'Female'"
    answer = answer_query_spark(table, QueryRequest(text, epsilon=1.0, neighbours="change"), randomness=3)
    assert answer.sensitivity.l1 == 100 and answer.noise_scale == pytest.approx(100.0, rel=1e-8)
    mean = answer_query_spark(table, QueryRequest(text.replace("sum", "mean"), epsilon=1.0, neighbours="change"),
                              randomness=3)
    assert mean.components["sum"].noise_scale == pytest.approx(200.0, rel=1e-8)  # half of ε on the sum


def test_contribution_bound_on_spark(spark, tmp_path):
    # 3000 people with two rows each (one 'x', one 'y'), 500 with one row, and 40 rows without an id
    people = np.repeat(np.arange(3000), 2)
    frame = pl.DataFrame({
        "person": np.concatenate([people, np.arange(3000, 3500)]).astype(np.int64),
        "kind": ["x", "y"] * 3000 + ["x"] * 500,
    })
    frame = pl.concat([frame, pl.DataFrame({"person": [None] * 40, "kind": ["y"] * 40},
                                           schema=frame.schema)])
    path = tmp_path / "rows.parquet"
    frame.write_parquet(path)
    schema = Schema.of({"person": "numeric", "kind": "categorical"})
    schema = Schema(schema.attributes, person_id="person")
    table = load_table(spark, path, schema=schema)
    dataset = load(path, schema=schema)

    plan = queries._plan(dataset, QueryRequest("histogram kind in ('x', 'y')", epsilon=1.0, max_rows_per_person=1))
    exact, dropped = SparkAggregate(table)(table.dataset, plan, Randomness(3))
    assert dropped == 3000  # one of each pair; rows without an id are their own person
    counts = dict(exact.values["table"].iter_rows())
    assert counts["x"] + counts["y"] == 3000 + 500 + 40
    # which of a person's two rows is kept is a fair coin: 'x' kept ~ 500 + Binomial(3000, 1/2)
    assert abs(counts["x"] - 500 - 1500) < 4 * math.sqrt(3000 / 4)

    request = QueryRequest("count where kind = 'x'", epsilon=1.0, max_rows_per_person=1)
    polars_count = queries.answer_query(dataset, request, randomness=4)
    spark_count = answer_query_spark(table, request, randomness=4)
    # every person with an 'x' row keeps exactly one row: the exact count and the drops agree
    assert spark_count.custodian_only == polars_count.custodian_only == {"rows_dropped_by_contribution_bound": 0}
    assert spark_count.noise_scale == polars_count.noise_scale


def test_cli_engine_spark_charges_the_ledger_with_an_order_independent_fingerprint(spark, table_path, tmp_path,
                                                                                   capsys):
    ledger = tmp_path / "ledger.sqlite3"
    code = cli.main(["query", str(table_path), "histogram sex in ('Female', 'Male')", "--epsilon", "0.5",
                     "--budget", "1,0", "--ledger", str(ledger), "--engine", "spark", "--seed", "2", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    payload = json.loads(out)
    assert [cell["sex"] for cell in payload["value"]] == ["Female", "Male"]
    assert payload["ledger"]["spent"]["epsilon"] == pytest.approx(0.5)

    table = load_table(spark, table_path)
    shuffled = tmp_path / "shuffled.parquet"
    pl.read_parquet(table_path).sample(fraction=1.0, shuffle=True, seed=1).write_parquet(shuffled)
    assert "fingerprint" not in payload["dataset"]  # the answer carries no digest of the data
    with Ledger(ledger) as book:
        (registered,) = book.export()["datasets"]
        # the ledger names the table by its order-independent digest keyed with the ledger's secret
        assert registered["fingerprint"] == book.identify(table.fingerprint()) != table.fingerprint()
        assert book.identify(load_table(spark, shuffled).fingerprint()) == registered["fingerprint"]
    assert load_table(spark, shuffled).fingerprint() == table.fingerprint()
    changed = tmp_path / "changed.parquet"
    pl.read_parquet(table_path).with_columns(pl.col("hours") + (pl.int_range(pl.len()) == 7)).write_parquet(changed)
    assert load_table(spark, changed).fingerprint() != table.fingerprint()

    code = cli.main(["query", str(table_path), "median(age) clamp 0..100", "--epsilon", "0.1", "--no-ledger",
                     "--engine", "spark"])
    assert code == 2 and "quantiles are not computed on the spark engine" in capsys.readouterr().err
    code = cli.main(["query", str(table_path), "median(age) clamp 0..100", "--epsilon", "0.1", "--ledger",
                     str(ledger), "--engine", "spark"])
    assert code == 2 and "quantiles are not computed on the spark engine" in capsys.readouterr().err
    with Ledger(ledger) as book:  # a refusal decided from the query kind costs nothing
        assert book.export()["datasets"][0]["spent"]["epsilon"] == pytest.approx(0.5)
    with pytest.raises(ParameterError, match="quantiles"):
        answer_query_spark(table, QueryRequest("quantile(age, 0.9) clamp 0..100", epsilon=1.0))


def test_csv_is_typed_like_the_polars_engine(spark, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("age, sex ,score\n30, F,1.5\n41,M,?\n,F,2\n")
    table = load_table(spark, path)
    dataset = load(path)
    assert dict(table.dataset.frame.schema) == dict(dataset.frame.schema)
    request = QueryRequest("sum(score) clamp 0..10 where sex = 'F'", epsilon=1.0)
    answer = answer_query_spark(table, request, randomness=1)
    expected = queries.answer_query(dataset, request, randomness=1)
    assert answer.value == expected.value
    late = tmp_path / "late.csv"  # a value past the first rows: the column widens to text, as on Polars
    late.write_text("age\n" + "1\n" * 10_000 + "x\n")
    assert load_table(spark, late).dataset.frame.schema["age"] == load(late).frame.schema["age"] == pl.String


def test_spark_binned_histogram_sends_no_literal_per_bin(spark, table_path, monkeypatch):
    """The bins are named on the driver: the number of Py4J literals does not grow with the
    bins (it was one per bin: 320 s for 1M bins), and the seeded answer equals the Polars one."""
    from pyspark.sql import functions as F

    dataset = load(table_path)
    table = load_table(spark, table_path)
    made = []
    real = F.lit

    def counted(value):
        made.append(value)
        return real(value)

    monkeypatch.setattr(F, "lit", counted)
    literals = {}
    for width in (10, 0.01):  # 10 bins, 10,000 bins
        text = f"histogram age[0..100 by {width}], sex in ('Female', 'Male') where hours > 20"
        made.clear()
        on_spark = answer_query_spark(table, QueryRequest(text, epsilon=0.5), randomness=7)
        literals[width] = len(made)
        on_polars = queries.answer_query(dataset, QueryRequest(text, epsilon=0.5), randomness=7)
        assert on_polars.value.equals(on_spark.value), text
        assert on_spark.value.height == (10 if width == 10 else 10_000) * 2
    assert literals[0.01] == literals[10] < 100


ORDERINGS = [  # in NFC, Î (U+00CE) sorts after P and S; in NFD, I + U+0302 sorts before them
    ("r >= 'Provence'", 4), ("r > 'Provence'", 4), ("r < 'Provence'", 1), ("r <= 'Bretagne'", 1),
    ("r between 'Provence' and 'S'", 2), ("r not between 'Provence' and 'S'", 3),
]


def test_text_orderings_compare_in_nfc_as_on_polars(spark):
    """intlsweep #3 on Spark: an ordering of text compares both sides in NFC, so an NFD table and
    its NFC twin (one dataset in the ledger) count the same rows, as on the Polars engine; each
    filter typed in NFC and in NFD (all counted in one Spark job per table)."""
    import unicodedata

    from crowdsafe.engines.spark.queries import spark_filter
    from crowdsafe.mechanisms.query_language import compile_filter, parse

    nfc = ["Île-de-France", "Bretagne", "Provence-Alpes-Côte d'Azur", "Île-de-France", None, "Rhône-Alpes"]
    cases = [(form, text, expected) for text, expected in ORDERINGS for form in ("NFC", "NFD")]
    wheres = [parse(f"count where {unicodedata.normalize(form, text)}").where for form, text, _ in cases]
    for values in (nfc, [None if v is None else unicodedata.normalize("NFD", v) for v in nfc]):
        frame = spark.createDataFrame([(v,) for v in values], "r string")
        # (projected, then counted here: Spark refuses the normaliser, a reflect call, inside an aggregate)
        rows = frame.select([spark_filter(w, {"r": pl.String}).alias(f"c{i}") for i, w in enumerate(wheres)]).collect()
        counts = {f"c{i}": sum(row[f"c{i}"] is True for row in rows) for i in range(len(wheres))}
        polars = pl.DataFrame({"r": pl.Series(values, dtype=pl.String)})
        for i, ((form, text, expected), where) in enumerate(zip(cases, wheres)):
            assert counts[f"c{i}"] == expected, (form, text, values)
            assert polars.filter(compile_filter(where, polars.schema)).height == expected, (form, text)
